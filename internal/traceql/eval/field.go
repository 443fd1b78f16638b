package eval

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// at is where a field is evaluated: a span of a trace and, when the
// expression reads events or links, one of its events and links (-1 for
// none).
type at struct {
	t         *Trace
	tr        *tree
	span      int32
	ev, link  int
	spanValue *Span
}

// fieldFn evaluates a compiled field expression.
type fieldFn func(*at) Value

// compiled is a field expression ready to run, and what it reads.
type compiled struct {
	fn                fieldFn
	events, links     bool
	readsAttrs        []traceql.Attribute // the attributes it reads, for the answer's spans
	readsIntrinsics   []traceql.Intrinsic
	structureRequired bool // it reads the trace's structure (nested sets, root, children)
}

// compileField compiles f. Regular expressions are compiled once, here.
func compileField(f traceql.Field) (*compiled, error) {
	c := &compiled{}
	fn, err := c.compile(f)
	c.fn = fn
	return c, err
}

func (c *compiled) compile(f traceql.Field) (fieldFn, error) {
	switch f := f.(type) {
	case traceql.Static:
		return func(*at) Value { return f }, nil
	case traceql.Attribute:
		c.readsAttrs = append(c.readsAttrs, f)
		switch f.Scope {
		case traceql.ScopeEvent:
			c.events = true
		case traceql.ScopeLink:
			c.links = true
		}
		return attrFn(f), nil
	case traceql.Intrinsic:
		c.readsIntrinsics = append(c.readsIntrinsics, f)
		switch f {
		case traceql.IntrinsicEventName, traceql.IntrinsicEventTimeSinceStart:
			c.events = true
		case traceql.IntrinsicLinkTraceID, traceql.IntrinsicLinkSpanID:
			c.links = true
		case traceql.IntrinsicChildCount, traceql.IntrinsicRootName, traceql.IntrinsicRootServiceName,
			traceql.IntrinsicNestedSetLeft, traceql.IntrinsicNestedSetRight, traceql.IntrinsicNestedSetParent:
			c.structureRequired = true
		}
		return intrinsicFn(f), nil
	case traceql.Unary:
		x, err := c.compile(f.X)
		if err != nil {
			return nil, err
		}
		if f.Op == "!" {
			return func(a *at) Value {
				v := x(a)
				if v.Type != traceql.TypeBool {
					return Value{}
				}
				return Value{Type: traceql.TypeBool, B: !v.B}
			}, nil
		}
		return func(a *at) Value { return arith("-", Value{Type: traceql.TypeInt}, x(a)) }, nil
	case traceql.Binary:
		l, err := c.compile(f.L)
		if err != nil {
			return nil, err
		}
		r, err := c.compile(f.R)
		if err != nil {
			return nil, err
		}
		switch f.Op {
		case "&&":
			return func(a *at) Value {
				return Value{Type: traceql.TypeBool, B: isTrue(l(a)) && isTrue(r(a))}
			}, nil
		case "||":
			return func(a *at) Value {
				return Value{Type: traceql.TypeBool, B: isTrue(l(a)) || isTrue(r(a))}
			}, nil
		case "=~", "!~":
			s, _ := f.R.(traceql.Static) // the parser allows only a string
			re, err := regexp.Compile("^(?:" + s.S + ")$")
			if err != nil {
				return nil, fmt.Errorf("compile regular expression %q: %w", s.S, err)
			}
			want := f.Op == "=~"
			return func(a *at) Value {
				v := l(a)
				return Value{Type: traceql.TypeBool, B: v.Type == traceql.TypeString && re.MatchString(v.S) == want}
			}, nil
		case "=", "!=", ">", ">=", "<", "<=":
			op := f.Op
			if isNil(f.L) || isNil(f.R) { // = nil: absent; != nil: present
				x := l
				if isNil(f.L) {
					x = r
				}
				want := op == "="
				if op != "=" && op != "!=" {
					return func(*at) Value { return Value{Type: traceql.TypeBool} }, nil
				}
				return func(a *at) Value { return Value{Type: traceql.TypeBool, B: (x(a).Type == traceql.TypeNil) == want} }, nil
			}
			return func(a *at) Value { return Value{Type: traceql.TypeBool, B: compare(op, l(a), r(a))} }, nil
		}
		op := f.Op
		return func(a *at) Value { return arith(op, l(a), r(a)) }, nil
	}
	return nil, fmt.Errorf("evaluate %T: not a field", f)
}

// isTrue reports whether v is the boolean true (an attribute standing as a
// whole condition is true only when it is).
func isTrue(v Value) bool { return v.Type == traceql.TypeBool && v.B }

func attrFn(a traceql.Attribute) fieldFn {
	key := a.Name
	switch a.Scope {
	case traceql.ScopeSpan:
		return func(x *at) Value { return lookup(x.spanValue.Attrs, key) }
	case traceql.ScopeResource:
		return func(x *at) Value { return lookup(x.spanValue.Resource, key) }
	case traceql.ScopeInstrumentation:
		return func(x *at) Value { return lookup(x.spanValue.ScopeAttrs, key) }
	case traceql.ScopeEvent:
		return func(x *at) Value {
			if x.ev < 0 {
				return Value{}
			}
			return lookup(x.spanValue.Events[x.ev].Attrs, key)
		}
	case traceql.ScopeLink:
		return func(x *at) Value {
			if x.link < 0 {
				return Value{}
			}
			return lookup(x.spanValue.Links[x.link].Attrs, key)
		}
	}
	return func(x *at) Value { // unscoped: the span's, else its resource's
		if v := lookup(x.spanValue.Attrs, key); v.Type != traceql.TypeNil {
			return v
		}
		return lookup(x.spanValue.Resource, key)
	}
}

func lookup(kvs []KeyValue, key string) Value {
	for i := range kvs {
		if kvs[i].Key == key {
			return kvs[i].Value
		}
	}
	return Value{}
}

func str(s string) Value { return Value{Type: traceql.TypeString, S: s} }

func hexID(b []byte) Value { return str(hex.EncodeToString(b)) }

func intrinsicFn(in traceql.Intrinsic) fieldFn {
	switch in {
	case traceql.IntrinsicDuration:
		return func(x *at) Value {
			return Value{Type: traceql.TypeDuration, I: x.spanValue.EndUnixNano - x.spanValue.StartUnixNano}
		}
	case traceql.IntrinsicName:
		return func(x *at) Value { return str(x.spanValue.Name) }
	case traceql.IntrinsicStatus:
		return func(x *at) Value { return Value{Type: traceql.TypeStatus, I: int64(x.spanValue.Status)} }
	case traceql.IntrinsicStatusMessage:
		return func(x *at) Value { return str(x.spanValue.StatusMessage) }
	case traceql.IntrinsicKind:
		return func(x *at) Value { return Value{Type: traceql.TypeKind, I: int64(x.spanValue.Kind)} }
	case traceql.IntrinsicChildCount:
		return func(x *at) Value { return Value{Type: traceql.TypeInt, I: int64(len(x.tr.children[x.span]))} }
	case traceql.IntrinsicSpanID:
		return func(x *at) Value { return hexID(x.spanValue.SpanID[:]) }
	case traceql.IntrinsicParentID:
		return func(x *at) Value {
			if x.spanValue.ParentID == ([8]byte{}) {
				return Value{}
			}
			return hexID(x.spanValue.ParentID[:])
		}
	case traceql.IntrinsicTraceID:
		return func(x *at) Value { return hexID(x.spanValue.TraceID[:]) }
	case traceql.IntrinsicTraceDuration:
		return func(x *at) Value { return Value{Type: traceql.TypeDuration, I: x.tr.end - x.tr.start} }
	case traceql.IntrinsicRootName:
		return func(x *at) Value {
			if x.tr.root < 0 {
				return Value{}
			}
			return str(x.t.Spans[x.tr.root].Name)
		}
	case traceql.IntrinsicRootServiceName:
		return func(x *at) Value {
			if x.tr.root < 0 {
				return Value{}
			}
			return lookup(x.t.Spans[x.tr.root].Resource, "service.name")
		}
	case traceql.IntrinsicNestedSetLeft:
		return func(x *at) Value { return Value{Type: traceql.TypeInt, I: int64(x.tr.left[x.span])} }
	case traceql.IntrinsicNestedSetRight:
		return func(x *at) Value { return Value{Type: traceql.TypeInt, I: int64(x.tr.right[x.span])} }
	case traceql.IntrinsicNestedSetParent:
		return func(x *at) Value {
			if p := x.tr.parent[x.span]; p >= 0 {
				return Value{Type: traceql.TypeInt, I: int64(x.tr.left[p])}
			}
			return Value{Type: traceql.TypeInt, I: -1}
		}
	case traceql.IntrinsicEventName:
		return func(x *at) Value {
			if x.ev < 0 {
				return Value{}
			}
			return str(x.spanValue.Events[x.ev].Name)
		}
	case traceql.IntrinsicEventTimeSinceStart:
		return func(x *at) Value {
			if x.ev < 0 {
				return Value{}
			}
			return Value{Type: traceql.TypeDuration, I: x.spanValue.Events[x.ev].TimeUnixNano - x.spanValue.StartUnixNano}
		}
	case traceql.IntrinsicLinkTraceID:
		return func(x *at) Value {
			if x.link < 0 {
				return Value{}
			}
			return hexID(x.spanValue.Links[x.link].TraceID[:])
		}
	case traceql.IntrinsicLinkSpanID:
		return func(x *at) Value {
			if x.link < 0 {
				return Value{}
			}
			return hexID(x.spanValue.Links[x.link].SpanID[:])
		}
	case traceql.IntrinsicInstrumentationName:
		return func(x *at) Value { return str(x.spanValue.ScopeName) }
	case traceql.IntrinsicInstrumentationVersion:
		return func(x *at) Value { return str(x.spanValue.ScopeVersion) }
	}
	return func(*at) Value { return Value{} }
}

// number returns v as a float64 if it is a number or a duration
// (nanoseconds).
func number(v Value) (float64, bool) {
	switch v.Type {
	case traceql.TypeInt, traceql.TypeDuration:
		return float64(v.I), true
	case traceql.TypeFloat:
		return v.F, true
	}
	return 0, false
}

// compare applies a comparison of two values. An absent value (nil) and
// values of types that do not compare (a string and a number) satisfy no
// comparison, != included, as a span without the attribute does not
// (comparisons with the nil literal are compiled apart).
func compare(op string, a, b Value) bool {
	var c int
	switch {
	case a.Type == traceql.TypeNil || b.Type == traceql.TypeNil:
		return false
	case a.Type == traceql.TypeString && b.Type == traceql.TypeString:
		c = strings.Compare(a.S, b.S)
	case a.Type == traceql.TypeBool && b.Type == traceql.TypeBool,
		a.Type == b.Type && (a.Type == traceql.TypeStatus || a.Type == traceql.TypeKind):
		// Equal or not, never ordered.
		eq := a.B == b.B && a.I == b.I
		return op == "=" && eq || op == "!=" && !eq
	case a.Type == traceql.TypeInt && b.Type == traceql.TypeInt,
		a.Type == traceql.TypeDuration && b.Type == traceql.TypeDuration:
		c = cmp.Compare(a.I, b.I)
	default:
		x, ok1 := number(a)
		y, ok2 := number(b)
		if !ok1 || !ok2 || math.IsNaN(x) || math.IsNaN(y) {
			return false
		}
		switch {
		case x < y:
			c = -1
		case x > y:
			c = 1
		}
	}
	switch op {
	case "=":
		return c == 0
	case "!=":
		return c != 0
	case ">":
		return c > 0
	case ">=":
		return c >= 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	}
	return false
}

func isNil(f traceql.Field) bool {
	s, ok := f.(traceql.Static)
	return ok && s.Type == traceql.TypeNil
}

// arith applies an arithmetic operator: integers stay integers (but for /
// and ^, and for a division by zero, which give floats), a duration with
// a duration or an integer stays a duration, anything else numeric is a
// float; non-numbers give nil.
func arith(op string, a, b Value) Value {
	x, ok1 := number(a)
	y, ok2 := number(b)
	if !ok1 || !ok2 {
		return Value{}
	}
	ints := a.Type != traceql.TypeFloat && b.Type != traceql.TypeFloat
	typ := traceql.TypeInt
	if a.Type == traceql.TypeDuration || b.Type == traceql.TypeDuration {
		typ = traceql.TypeDuration
	}
	if ints && (op == "+" || op == "-" || op == "*" || op == "%" && b.I != 0) {
		var n int64
		switch op {
		case "+":
			n = a.I + b.I
		case "-":
			n = a.I - b.I
		case "*":
			n = a.I * b.I
		case "%":
			n = a.I % b.I
		}
		return Value{Type: typ, I: n}
	}
	var f float64
	switch op {
	case "+":
		f = x + y
	case "-":
		f = x - y
	case "*":
		f = x * y
	case "/":
		f = x / y
	case "%":
		f = math.Mod(x, y)
	case "^":
		f = math.Pow(x, y)
	}
	return Value{Type: traceql.TypeFloat, F: f}
}
