package eval

import (
	"fmt"
	"slices"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// Spanset is spans of one trace that a query selected together: indexes
// into Trace.Spans, ascending, and what the pipeline said of them.
type Spanset struct {
	Spans []int32
	// By is the by() values the spanset was split on, in the order of
	// the by() fields.
	By []ByValue
	// Scalar is the value of the last scalar filter's aggregate side, if
	// a scalar filter ran (Tempo reports it beside the spanset).
	Scalar    Value
	HasScalar bool
}

// ByValue is a by() field and the spanset's value of it.
type ByValue struct {
	Field traceql.Field
	Value Value
}

// run is one trace's evaluation.
type run struct {
	t  *Trace
	tr *tree
}

// spansetFn evaluates a compiled spanset expression over the spans of in
// (ascending), the spansets a pipeline stage is given.
type spansetFn func(r *run, in []Spanset) []Spanset

// compileSpanset compiles a spanset expression.
func (e *Query) compileSpanset(s traceql.Spanset) (spansetFn, error) {
	switch s := s.(type) {
	case traceql.Filter:
		if s.Expr == nil {
			return func(_ *run, in []Spanset) []Spanset { return nonEmpty(in) }, nil
		}
		c, err := compileField(s.Expr)
		if err != nil {
			return nil, err
		}
		e.note(c)
		return func(r *run, in []Spanset) []Spanset {
			out := make([]Spanset, 0, len(in))
			for _, ss := range in {
				var kept []int32
				for _, i := range ss.Spans {
					if r.matches(c, i) {
						kept = append(kept, i)
					}
				}
				if len(kept) > 0 {
					ss.Spans = kept
					out = append(out, ss)
				}
			}
			return out
		}, nil
	case traceql.SpansetOp:
		l, err := e.compileSpanset(s.L)
		if err != nil {
			return nil, err
		}
		rt, err := e.compileSpanset(s.R)
		if err != nil {
			return nil, err
		}
		op := s.Op
		if !slices.Contains([]string{"&&", "||", ">", ">>", "<", "<<", "~", "!>", "!>>", "!<", "!<<", "!~", "&>", "&>>", "&<", "&<<", "&~"}, op) {
			return nil, fmt.Errorf("evaluate spanset operator %q: unknown", op)
		}
		return func(r *run, in []Spanset) []Spanset {
			// Each side is evaluated over the same input; what they
			// selected is related within the trace.
			var out []Spanset
			for _, ss := range in {
				one := []Spanset{ss}
				spans := r.relate(op, union(l(r, one)), union(rt(r, one)))
				if len(spans) > 0 {
					ss.Spans = spans
					out = append(out, ss)
				}
			}
			return out
		}, nil
	case traceql.Pipeline:
		return e.compilePipeline(s)
	}
	return nil, fmt.Errorf("evaluate %T: not a spanset expression", s)
}

func nonEmpty(in []Spanset) []Spanset {
	out := in[:0:0]
	for _, ss := range in {
		if len(ss.Spans) > 0 {
			out = append(out, ss)
		}
	}
	return out
}

// union is the spans of every spanset of sets, ascending, once each.
func union(sets []Spanset) []int32 {
	if len(sets) == 1 {
		return sets[0].Spans
	}
	var out []int32
	for _, ss := range sets {
		out = append(out, ss.Spans...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// matches reports whether span i satisfies c: for an expression that
// reads events or links, with one of its events and one of its links
// (every pair tried; a span without any has none).
func (r *run) matches(c *compiled, i int32) bool {
	s := &r.t.Spans[i]
	a := at{t: r.t, tr: r.tr, span: i, ev: -1, link: -1, spanValue: s}
	evs, lns := 1, 1
	if c.events && len(s.Events) > 0 {
		evs = len(s.Events)
	}
	if c.links && len(s.Links) > 0 {
		lns = len(s.Links)
	}
	for e := range evs {
		if c.events && len(s.Events) > 0 {
			a.ev = e
		}
		for l := range lns {
			if c.links && len(s.Links) > 0 {
				a.link = l
			}
			if isTrue(c.fn(&a)) {
				return true
			}
		}
	}
	return false
}

// relate applies a spanset operator to the spans each side selected.
func (r *run) relate(op string, l, rt []int32) []int32 {
	switch op {
	case "&&":
		if len(l) == 0 || len(rt) == 0 {
			return nil
		}
		return union([]Spanset{{Spans: l}, {Spans: rt}})
	case "||":
		return union([]Spanset{{Spans: l}, {Spans: rt}})
	}
	if len(l) == 0 && op[0] != '!' || len(rt) == 0 {
		return nil
	}
	n := len(r.t.Spans)
	inL, inR := make([]bool, n), make([]bool, n)
	for _, i := range l {
		inL[i] = true
	}
	for _, i := range rt {
		inR[i] = true
	}
	base := op
	if op[0] == '!' || op[0] == '&' {
		base = op[1:]
	}
	// right: the right side's spans in the relation to some left span;
	// left: the left side's spans in it to some right span (for unions).
	right := r.related(base, inL, rt)
	switch op[0] {
	case '!':
		var out []int32
		for _, i := range rt {
			if !right[i] {
				out = append(out, i)
			}
		}
		return out
	case '&':
		left := r.related(mirror[base], inR, l)
		var out []int32
		for i := range n {
			if right[i] && inR[i] || left[i] && inL[i] {
				out = append(out, int32(i))
			}
		}
		return out
	}
	var out []int32
	for _, i := range rt {
		if right[i] {
			out = append(out, i)
		}
	}
	return out
}

// mirror is each relation seen from its other side: B is a child of A
// when A is the parent of B.
var mirror = map[string]string{">": "<", "<": ">", ">>": "<<", "<<": ">>", "~": "~"}

// related marks the spans of cands that stand in relation rel to some span
// marked in from: > a child of one, >> a descendant, < the parent of one,
// << an ancestor, ~ a sibling.
func (r *run) related(rel string, from []bool, cands []int32) []bool {
	tr := r.tr
	out := make([]bool, len(from))
	switch rel {
	case ">":
		for _, i := range cands {
			if p := tr.parent[i]; p >= 0 && from[p] {
				out[i] = true
			}
		}
	case ">>":
		for _, i := range cands {
			for p, steps := tr.parent[i], 0; p >= 0 && steps < len(from); p, steps = tr.parent[p], steps+1 {
				if from[p] {
					out[i] = true
					break
				}
			}
		}
	case "<", "<<":
		// The parents (or every ancestor) of the spans of from.
		up := make([]bool, len(from))
		for i, in := range from {
			if !in {
				continue
			}
			for p, steps := tr.parent[i], 0; p >= 0 && steps < len(from); p, steps = tr.parent[p], steps+1 {
				if up[p] && rel == "<<" {
					break // its ancestors are marked already
				}
				up[p] = true
				if rel == "<" {
					break
				}
			}
		}
		for _, i := range cands {
			out[i] = up[i]
		}
	case "~":
		// A sibling: another span of from with the same parent.
		withParent := map[int32]int{}
		for i, in := range from {
			if in && tr.parent[i] >= 0 {
				withParent[tr.parent[i]]++
			}
		}
		for _, i := range cands {
			p := tr.parent[i]
			if p < 0 {
				continue
			}
			n := withParent[p]
			if from[i] {
				n-- // itself is no sibling
			}
			out[i] = n > 0
		}
	}
	return out
}
