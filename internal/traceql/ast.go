package traceql

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scope is where an attribute lives.
type Scope uint8

const (
	ScopeNone            Scope = iota // .name: span, then resource
	ScopeSpan                         // span.name
	ScopeResource                     // resource.name
	ScopeEvent                        // event.name
	ScopeLink                         // link.name
	ScopeInstrumentation              // instrumentation.name: the scope's attributes
)

var scopeWords = [...]string{ScopeNone: "", ScopeSpan: "span", ScopeResource: "resource", ScopeEvent: "event",
	ScopeLink: "link", ScopeInstrumentation: "instrumentation"}

func (s Scope) String() string { return scopeWords[s] }

// Intrinsic is a field every span has, not an attribute.
type Intrinsic uint8

const (
	IntrinsicNone Intrinsic = iota
	IntrinsicDuration
	IntrinsicName
	IntrinsicStatus
	IntrinsicStatusMessage
	IntrinsicKind
	IntrinsicChildCount
	IntrinsicSpanID
	IntrinsicParentID
	IntrinsicTraceDuration
	IntrinsicRootName
	IntrinsicRootServiceName
	IntrinsicTraceID
	IntrinsicNestedSetLeft
	IntrinsicNestedSetRight
	IntrinsicNestedSetParent
	IntrinsicEventName
	IntrinsicEventTimeSinceStart
	IntrinsicLinkTraceID
	IntrinsicLinkSpanID
	IntrinsicInstrumentationName
	IntrinsicInstrumentationVersion
	intrinsicCount
)

// intrinsicNames is each intrinsic's canonical spelling, which String
// writes.
var intrinsicNames = [intrinsicCount]string{
	IntrinsicDuration: "duration", IntrinsicName: "name", IntrinsicStatus: "status",
	IntrinsicStatusMessage: "statusMessage", IntrinsicKind: "kind", IntrinsicChildCount: "childCount",
	IntrinsicSpanID: "span:id", IntrinsicParentID: "span:parentID", IntrinsicTraceDuration: "traceDuration",
	IntrinsicRootName: "rootName", IntrinsicRootServiceName: "rootServiceName", IntrinsicTraceID: "trace:id",
	IntrinsicNestedSetLeft: "nestedSetLeft", IntrinsicNestedSetRight: "nestedSetRight",
	IntrinsicNestedSetParent: "nestedSetParent", IntrinsicEventName: "event:name",
	IntrinsicEventTimeSinceStart: "event:timeSinceStart", IntrinsicLinkTraceID: "link:traceID",
	IntrinsicLinkSpanID: "link:spanID", IntrinsicInstrumentationName: "instrumentation:name",
	IntrinsicInstrumentationVersion: "instrumentation:version",
}

// intrinsicWords are every spelling of the intrinsics, bare and scoped.
var intrinsicWords = map[string]Intrinsic{
	"duration": IntrinsicDuration, "name": IntrinsicName, "status": IntrinsicStatus,
	"statusMessage": IntrinsicStatusMessage, "kind": IntrinsicKind, "childCount": IntrinsicChildCount,
	"traceDuration": IntrinsicTraceDuration, "rootName": IntrinsicRootName, "rootServiceName": IntrinsicRootServiceName,
	"nestedSetLeft": IntrinsicNestedSetLeft, "nestedSetRight": IntrinsicNestedSetRight, "nestedSetParent": IntrinsicNestedSetParent,
	"span:duration": IntrinsicDuration, "span:name": IntrinsicName, "span:status": IntrinsicStatus,
	"span:statusMessage": IntrinsicStatusMessage, "span:kind": IntrinsicKind, "span:childCount": IntrinsicChildCount,
	"span:id": IntrinsicSpanID, "span:parentID": IntrinsicParentID,
	"trace:duration": IntrinsicTraceDuration, "trace:rootName": IntrinsicRootName, "trace:rootService": IntrinsicRootServiceName,
	"trace:id": IntrinsicTraceID, "event:name": IntrinsicEventName, "event:timeSinceStart": IntrinsicEventTimeSinceStart,
	"link:traceID": IntrinsicLinkTraceID, "link:spanID": IntrinsicLinkSpanID,
	"instrumentation:name": IntrinsicInstrumentationName, "instrumentation:version": IntrinsicInstrumentationVersion,
}

func (i Intrinsic) String() string { return intrinsicNames[i] }

// IntrinsicWords returns every spelling of the intrinsics, bare and
// scoped, sorted: what Tempo's tags API lists as the intrinsic scope.
func IntrinsicWords() []string { return slices.Sorted(maps.Keys(intrinsicWords)) }

// LookupIntrinsic returns the intrinsic a word spells, if any.
func LookupIntrinsic(word string) (Intrinsic, bool) {
	in, ok := intrinsicWords[word]
	return in, ok
}

// Status is a span's status code, as TraceQL names it.
type Status uint8

const (
	StatusUnset Status = iota
	StatusOk
	StatusError
)

var statusNames = [...]string{StatusUnset: "unset", StatusOk: "ok", StatusError: "error"}

func (s Status) String() string { return statusNames[s] }

// Kind is a span's kind, as TraceQL names it (OTLP's numbering).
type Kind uint8

const (
	KindUnspecified Kind = iota
	KindInternal
	KindServer
	KindClient
	KindProducer
	KindConsumer
)

var kindNames = [...]string{KindUnspecified: "unspecified", KindInternal: "internal", KindServer: "server",
	KindClient: "client", KindProducer: "producer", KindConsumer: "consumer"}

func (k Kind) String() string { return kindNames[k] }

// Type is the type of a value.
type Type uint8

const (
	TypeNil Type = iota
	TypeString
	TypeInt
	TypeFloat
	TypeBool
	TypeDuration
	TypeStatus
	TypeKind
)

// Static is a literal value. Which field holds it depends on Type: S for
// strings, I for integers, durations (nanoseconds), statuses and kinds, F
// for floats, B for booleans.
type Static struct {
	Type Type
	S    string
	I    int64
	F    float64
	B    bool
}

func (s Static) String() string {
	switch s.Type {
	case TypeNil:
		return "nil"
	case TypeString:
		return strconv.Quote(s.S)
	case TypeInt:
		return strconv.FormatInt(s.I, 10)
	case TypeFloat:
		f := strconv.FormatFloat(s.F, 'g', -1, 64)
		if !strings.ContainsAny(f, ".eEn") { // keep it a float when read again
			f += ".0"
		}
		return f
	case TypeBool:
		return strconv.FormatBool(s.B)
	case TypeDuration:
		return time.Duration(s.I).String()
	case TypeStatus:
		return Status(s.I).String()
	case TypeKind:
		return Kind(s.I).String()
	}
	return "?"
}

// Field is an expression over one span: an attribute, an intrinsic, a
// literal, or operators over them.
type Field interface {
	String() string
	field()
}

// Attribute is a scoped (or unscoped) attribute of a span.
type Attribute struct {
	Scope Scope
	Name  string
}

func (a Attribute) String() string {
	name := a.Name
	plain := name != "" && !(a.Scope == ScopeNone && name[0] >= '0' && name[0] <= '9') // .5xx would read as a number
	for i := 0; plain && i < len(name); i++ {
		plain = isAttrByte(name[i])
	}
	if !plain {
		name = strconv.Quote(name)
	}
	return a.Scope.String() + "." + name
}

// Binary is a binary operator over fields: && ||, the comparisons = !=
// > >= < <= =~ !~, and the arithmetic + - * / % ^.
type Binary struct {
	Op   string
	L, R Field
}

func (b Binary) String() string { return "(" + b.L.String() + " " + b.Op + " " + b.R.String() + ")" }

// Unary is ! or - of a field.
type Unary struct {
	Op string
	X  Field
}

func (u Unary) String() string { return u.Op + u.X.String() }

func (Attribute) field() {}
func (Intrinsic) field() {}
func (Static) field()    {}
func (Binary) field()    {}
func (Unary) field()     {}

// Spanset is an expression that selects spans of a trace: a filter, a
// spanset operator over two, or a pipeline in parentheses.
type Spanset interface {
	String() string
	spanset()
}

// Filter is { Expr }: the spans for which Expr is true (every span if
// Expr is nil).
type Filter struct{ Expr Field }

func (f Filter) String() string {
	if f.Expr == nil {
		return "{ }"
	}
	return "{ " + f.Expr.String() + " }"
}

// SpansetOp is a spanset operator: && and || (the trace has both, or
// either), the structural > >> < << ~ and their negations !> !>> !< !<<
// !~ (the right side's spans that are, or are not, children, descendants,
// parents, ancestors or siblings of the left side's), and their unions
// &> &>> &< &<< &~ (the spans of both sides that are).
type SpansetOp struct {
	Op   string
	L, R Spanset
}

func (o SpansetOp) String() string { return "(" + o.L.String() + " " + o.Op + " " + o.R.String() + ")" }

// Pipeline is a spanset expression and the stages after it, each fed the
// spansets of the one before.
type Pipeline struct {
	Stages []Stage // the first a SpansetStage
}

func (p Pipeline) String() string { return "(" + p.stages() + ")" }

// stages is the pipeline's stages joined by |, without parentheses.
func (p Pipeline) stages() string {
	parts := make([]string, len(p.Stages))
	for i, s := range p.Stages {
		parts[i] = s.String()
	}
	return strings.Join(parts, " | ")
}

func (Filter) spanset()    {}
func (SpansetOp) spanset() {}
func (Pipeline) spanset()  {}

// Stage is one element of a pipeline.
type Stage interface {
	String() string
	stage()
}

// SpansetStage filters each spanset by a spanset expression.
type SpansetStage struct{ Spanset Spanset }

func (s SpansetStage) String() string { return s.Spanset.String() }

// ScalarFilter keeps the spansets for which L Op R holds (Op a
// comparison).
type ScalarFilter struct {
	Op   string
	L, R Scalar
}

func (s ScalarFilter) String() string { return s.L.String() + " " + s.Op + " " + s.R.String() }

// By splits each spanset by the values of Fields.
type By struct{ Fields []Field }

func (b By) String() string { return "by(" + joinFields(b.Fields) + ")" }

// Select adds Fields to the spans of each spanset in the answer.
type Select struct{ Fields []Field }

func (s Select) String() string { return "select(" + joinFields(s.Fields) + ")" }

// Coalesce merges the spansets of a trace into one.
type Coalesce struct{}

func (Coalesce) String() string { return "coalesce()" }

func (SpansetStage) stage() {}
func (ScalarFilter) stage() {}
func (By) stage()           {}
func (Select) stage()       {}
func (Coalesce) stage()     {}

func joinFields(fs []Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, ", ")
}

// Scalar is a value of a spanset: an aggregate, a literal, or arithmetic
// over them.
type Scalar interface {
	String() string
	scalar()
}

// Aggregate is count() or avg, min, max, sum of a field over a
// spanset's spans.
type Aggregate struct {
	Fn    string
	Field Field // nil for count
}

func (a Aggregate) String() string {
	if a.Field == nil {
		return a.Fn + "()"
	}
	return a.Fn + "(" + a.Field.String() + ")"
}

// ScalarBinary is arithmetic over scalars: + - * / % ^.
type ScalarBinary struct {
	Op   string
	L, R Scalar
}

func (s ScalarBinary) String() string {
	return "(" + s.L.String() + " " + s.Op + " " + s.R.String() + ")"
}

func (Aggregate) scalar()    {}
func (Static) scalar()       {}
func (ScalarBinary) scalar() {}

// Metrics is a TraceQL metrics function over the spans a pipeline
// selects: rate, count_over_time, min/max/avg/sum_over_time (of Field),
// quantile_over_time (of Field, at Quantiles), histogram_over_time (of
// Field) or compare; By splits the series.
type Metrics struct {
	Fn        string
	Field     Field
	Quantiles []float64
	Compare   *Compare
	By        []Field
}

// Compare is compare()'s arguments: the selection to compare with the
// rest, how many values of each attribute to keep, and an optional time
// range of the selection (Unix nanoseconds; 0 for none).
type Compare struct {
	Selection  Spanset
	TopN       int
	Start, End int64
}

func (m Metrics) String() string {
	var args []string
	switch {
	case m.Compare != nil:
		args = append(args, m.Compare.Selection.String())
		if m.Compare.TopN != 0 || m.Compare.Start != 0 || m.Compare.End != 0 {
			args = append(args, strconv.Itoa(m.Compare.TopN))
		}
		if m.Compare.Start != 0 || m.Compare.End != 0 {
			args = append(args, strconv.FormatInt(m.Compare.Start, 10), strconv.FormatInt(m.Compare.End, 10))
		}
	case m.Field != nil:
		args = append(args, m.Field.String())
	}
	for _, q := range m.Quantiles {
		args = append(args, Static{Type: TypeFloat, F: q}.String())
	}
	s := m.Fn + "(" + strings.Join(args, ", ") + ")"
	if len(m.By) > 0 {
		s += " by (" + joinFields(m.By) + ")"
	}
	return s
}

// Query is a parsed TraceQL query: a pipeline of spansets and, for a
// metrics query, the function over its spans, the optional topk or
// bottomk of its series, and the hints of with(...).
type Query struct {
	Pipeline Pipeline
	Metrics  *Metrics
	// Rank is "topk" or "bottomk" (RankN series), or "".
	Rank  string
	RankN int
	Hints []Hint
}

// Hint is one key = value of with(...).
type Hint struct {
	Key   string
	Value Static
}

// String gives the query back in a canonical form that parses to the
// same tree.
func (q *Query) String() string {
	s := q.Pipeline.stages()
	if q.Metrics != nil {
		s += " | " + q.Metrics.String()
	}
	if q.Rank != "" {
		s += " | " + q.Rank + "(" + strconv.Itoa(q.RankN) + ")"
	}
	if len(q.Hints) > 0 {
		hs := make([]string, len(q.Hints))
		for i, h := range q.Hints {
			hs[i] = h.Key + "=" + h.Value.String()
		}
		s += " with(" + strings.Join(hs, ", ") + ")"
	}
	return s
}

// IsMetrics reports whether q is a metrics query.
func (q *Query) IsMetrics() bool { return q.Metrics != nil }
