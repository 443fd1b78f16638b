package eval

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// Query is a TraceQL query compiled to run over traces. It is safe for
// concurrent use.
type Query struct {
	q     *traceql.Query
	first spansetFn
	// Attributes and intrinsics its conditions read, and those select()
	// adds: what the answer's spans show.
	Reads    []traceql.Attribute
	Selected []traceql.Field
	// Structure reports whether it reads the trace's structure (a
	// structural operator, nested sets, root, children): such a query
	// needs whole traces.
	Structure bool
}

// Compile compiles q.
func Compile(q *traceql.Query) (*Query, error) {
	e := &Query{q: q}
	fn, err := e.compilePipeline(q.Pipeline)
	if err != nil {
		return nil, err
	}
	e.first = fn
	return e, nil
}

// Shown returns the attributes an answer's spans show: those the
// query's conditions read, then those select() names.
func (e *Query) Shown() []traceql.Attribute {
	out := slices.Clone(e.Reads)
	for _, f := range e.Selected {
		if a, ok := f.(traceql.Attribute); ok && !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// FieldOf returns span i's value of field f (for one that reads events
// or links, with the first of them that gives a value), and whether it
// has one.
func FieldOf(t *Trace, i int32, f traceql.Field) (Value, bool) {
	c, err := compileField(f)
	if err != nil {
		return Value{}, false
	}
	r := &run{t: t}
	if c.structureRequired {
		r.tr = buildTree(t)
	}
	x := at{t: t, tr: r.tr, span: i, ev: -1, link: -1, spanValue: &t.Spans[i]}
	v := r.firstValue(c, &x)
	return v, v.Type != traceql.TypeNil
}

// note records what a compiled field reads.
func (e *Query) note(c *compiled) {
	for _, a := range c.readsAttrs {
		if !slices.Contains(e.Reads, a) {
			e.Reads = append(e.Reads, a)
		}
	}
	e.Structure = e.Structure || c.structureRequired
}

// Eval runs the query's pipeline over one trace and returns the spansets
// it selects (none if the trace does not match). The spansets' Spans
// index t.Spans; they are the caller's.
func (e *Query) Eval(t *Trace) []Spanset {
	if len(t.Spans) == 0 {
		return nil
	}
	r := &run{t: t, tr: buildTree(t)}
	all := make([]int32, len(t.Spans))
	for i := range all {
		all[i] = int32(i)
	}
	return e.first(r, []Spanset{{Spans: all}})
}

func (e *Query) compilePipeline(p traceql.Pipeline) (spansetFn, error) {
	var fns []spansetFn
	for _, st := range p.Stages {
		fn, err := e.compileStage(st)
		if err != nil {
			return nil, err
		}
		fns = append(fns, fn)
	}
	return func(r *run, in []Spanset) []Spanset {
		for _, fn := range fns {
			if in = fn(r, in); len(in) == 0 {
				return nil
			}
		}
		return in
	}, nil
}

func (e *Query) compileStage(st traceql.Stage) (spansetFn, error) {
	switch st := st.(type) {
	case traceql.SpansetStage:
		if _, ok := st.Spanset.(traceql.SpansetOp); ok {
			e.Structure = true // relations read the trace's structure
		}
		return e.compileSpanset(st.Spanset)
	case traceql.ScalarFilter:
		l, err := e.compileScalar(st.L)
		if err != nil {
			return nil, err
		}
		rt, err := e.compileScalar(st.R)
		if err != nil {
			return nil, err
		}
		op := st.Op
		report := l
		if !traceql.HasAggregate(st.L) {
			report = rt
		}
		return func(r *run, in []Spanset) []Spanset {
			var out []Spanset
			for _, ss := range in {
				if compare(op, l(r, ss), rt(r, ss)) {
					ss.Scalar, ss.HasScalar = report(r, ss), true
					out = append(out, ss)
				}
			}
			return out
		}, nil
	case traceql.By:
		fns, err := e.compileList(st.Fields)
		if err != nil {
			return nil, err
		}
		return func(r *run, in []Spanset) []Spanset {
			var out []Spanset
			for _, ss := range in {
				out = append(out, r.split(ss, st.Fields, fns)...)
			}
			return out
		}, nil
	case traceql.Select:
		if _, err := e.compileList(st.Fields); err != nil {
			return nil, err
		}
		for _, f := range st.Fields {
			if !slices.ContainsFunc(e.Selected, func(g traceql.Field) bool { return g.String() == f.String() }) {
				e.Selected = append(e.Selected, f)
			}
		}
		return func(_ *run, in []Spanset) []Spanset { return in }, nil
	case traceql.Coalesce:
		return func(_ *run, in []Spanset) []Spanset {
			if len(in) <= 1 {
				return in
			}
			return []Spanset{{Spans: union(in)}}
		}, nil
	}
	return nil, fmt.Errorf("evaluate %T: not a pipeline stage", st)
}

func (e *Query) compileList(fs []traceql.Field) ([]*compiled, error) {
	out := make([]*compiled, len(fs))
	for i, f := range fs {
		c, err := compileField(f)
		if err != nil {
			return nil, err
		}
		e.Structure = e.Structure || c.structureRequired
		out[i] = c
	}
	return out, nil
}

// split divides a spanset by the values its spans have of fields (the
// first value, over events and links, a span has of each), in the order
// each value first appears.
func (r *run) split(ss Spanset, fields []traceql.Field, fns []*compiled) []Spanset {
	var out []Spanset
	index := map[string]int{}
	for _, i := range ss.Spans {
		a := at{t: r.t, tr: r.tr, span: i, ev: -1, link: -1, spanValue: &r.t.Spans[i]}
		vals := make([]ByValue, len(fns))
		key := ""
		for k, c := range fns {
			vals[k] = ByValue{Field: fields[k], Value: r.firstValue(c, &a)}
			key += fmt.Sprintf("%d:%s\x00", vals[k].Value.Type, vals[k].Value.String())
		}
		n, ok := index[key]
		if !ok {
			n = len(out)
			index[key] = n
			out = append(out, Spanset{By: append(slices.Clip(ss.By), vals...)})
		}
		out[n].Spans = append(out[n].Spans, i)
	}
	return out
}

// firstValue evaluates c at a's span: with its first event and link that
// give a value when c reads them.
func (r *run) firstValue(c *compiled, a *at) Value {
	s := a.spanValue
	evs, lns := max(1, len(s.Events)), max(1, len(s.Links))
	if !c.events {
		evs = 1
	}
	if !c.links {
		lns = 1
	}
	for e := range evs {
		a.ev = -1
		if c.events && len(s.Events) > 0 {
			a.ev = e
		}
		for l := range lns {
			a.link = -1
			if c.links && len(s.Links) > 0 {
				a.link = l
			}
			if v := c.fn(a); v.Type != traceql.TypeNil {
				return v
			}
		}
	}
	return Value{}
}

// scalarFn evaluates a pipeline's scalar over a spanset.
type scalarFn func(r *run, ss Spanset) Value

func (e *Query) compileScalar(s traceql.Scalar) (scalarFn, error) {
	switch s := s.(type) {
	case traceql.Static:
		return func(*run, Spanset) Value { return s }, nil
	case traceql.ScalarBinary:
		l, err := e.compileScalar(s.L)
		if err != nil {
			return nil, err
		}
		rt, err := e.compileScalar(s.R)
		if err != nil {
			return nil, err
		}
		return func(r *run, ss Spanset) Value { return arith(s.Op, l(r, ss), rt(r, ss)) }, nil
	case traceql.Aggregate:
		if s.Fn == "count" {
			return func(_ *run, ss Spanset) Value { return Value{Type: traceql.TypeInt, I: int64(len(ss.Spans))} }, nil
		}
		c, err := compileField(s.Field)
		if err != nil {
			return nil, err
		}
		e.note(c)
		fn := s.Fn
		return func(r *run, ss Spanset) Value { return r.aggregate(fn, c, ss) }, nil
	}
	return nil, fmt.Errorf("evaluate %T: not a scalar", s)
}

// aggregate is avg, min, max or sum of c over the spans of ss that have
// a number or a duration for it (nil if none has). Durations stay
// durations; avg of integers is a float.
func (r *run) aggregate(fn string, c *compiled, ss Spanset) Value {
	var vals []Value
	for _, i := range ss.Spans {
		a := at{t: r.t, tr: r.tr, span: i, ev: -1, link: -1, spanValue: &r.t.Spans[i]}
		v := r.firstValue(c, &a)
		if _, ok := number(v); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return Value{}
	}
	typ := vals[0].Type
	for _, v := range vals {
		if v.Type != typ {
			typ = traceql.TypeFloat // mixed: as floats
		}
	}
	switch fn {
	case "min", "max":
		best := vals[0]
		for _, v := range vals[1:] {
			x, _ := number(v)
			y, _ := number(best)
			if fn == "min" && x < y || fn == "max" && x > y {
				best = v
			}
		}
		return asType(best, typ)
	}
	var sumI int64
	var sumF float64
	for _, v := range vals {
		f, _ := number(v)
		sumF += f
		sumI += v.I
	}
	if fn == "sum" {
		if typ == traceql.TypeInt || typ == traceql.TypeDuration {
			return Value{Type: typ, I: sumI}
		}
		return Value{Type: traceql.TypeFloat, F: sumF}
	}
	avg := sumF / float64(len(vals))
	if typ == traceql.TypeDuration {
		return Value{Type: traceql.TypeDuration, I: int64(math.Round(avg))}
	}
	return Value{Type: traceql.TypeFloat, F: avg}
}

func asType(v Value, typ traceql.Type) Value {
	if typ == traceql.TypeFloat && v.Type != traceql.TypeFloat {
		f, _ := number(v)
		return Value{Type: traceql.TypeFloat, F: f}
	}
	return v
}

// SortSpans orders spans by start time, then span id: the order answers
// list a spanset's spans in.
func SortSpans(t *Trace, spans []int32) {
	slices.SortFunc(spans, func(a, b int32) int {
		x, y := &t.Spans[a], &t.Spans[b]
		return cmp.Or(cmp.Compare(x.StartUnixNano, y.StartUnixNano), slices.Compare(x.SpanID[:], y.SpanID[:]))
	})
}
