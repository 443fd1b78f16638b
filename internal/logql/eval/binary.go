package eval

import (
	"fmt"
	"math"
	"slices"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Binary operations: + - * / % ^ on scalars and vectors; == != > >= < <=
// filtering (or, with bool, giving 1 or 0); and, or, unless on vectors;
// vector matching with on/ignoring and group_left/group_right.

// arithOps are the operations of the operators: a value and, for
// comparisons, whether it holds (the value is then 1 or 0). and, or and
// unless have none (vectorBinary's own).
var arithOps = map[string]func(a, b float64) (float64, bool){
	"+":  func(a, b float64) (float64, bool) { return a + b, true },
	"-":  func(a, b float64) (float64, bool) { return a - b, true },
	"*":  func(a, b float64) (float64, bool) { return a * b, true },
	"/":  func(a, b float64) (float64, bool) { return a / b, true },
	"%":  func(a, b float64) (float64, bool) { return math.Mod(a, b), true },
	"^":  func(a, b float64) (float64, bool) { return math.Pow(a, b), true },
	"==": func(a, b float64) (float64, bool) { return b2f(a == b) },
	"!=": func(a, b float64) (float64, bool) { return b2f(a != b) },
	">":  func(a, b float64) (float64, bool) { return b2f(a > b) },
	">=": func(a, b float64) (float64, bool) { return b2f(a >= b) },
	"<":  func(a, b float64) (float64, bool) { return b2f(a < b) },
	"<=": func(a, b float64) (float64, bool) { return b2f(a <= b) },
}

func b2f(b bool) (float64, bool) {
	if b {
		return 1, true
	}
	return 0, false
}

// arith returns the operation of op (arithOps; and, or, unless: 0).
func arith(op string) func(a, b float64) (float64, bool) {
	if f, ok := arithOps[op]; ok {
		return f
	}
	return func(a, b float64) (float64, bool) { return 0, true } // and, or, unless: vectors only
}

// binary evaluates x of its operands' values l and r.
func (ev *evaluator) binary(x *logql.BinaryOp, l, r value) (value, error) {
	op := arith(x.Op)
	isCmp := slices.Contains([]string{"==", "!=", ">", ">=", "<", "<="}, x.Op)
	switch {
	case l.scalar != nil && r.scalar != nil:
		out := make([]float64, len(ev.steps))
		for i := range out {
			v, keep := op(l.scalar[i], r.scalar[i])
			if isCmp && !x.Bool && !keep {
				v = math.NaN()
			}
			out[i] = v
		}
		return value{scalar: out}, nil
	case l.scalar != nil || r.scalar != nil:
		vec, sc, scalarLeft := r, l.scalar, true
		if r.scalar != nil {
			vec, sc, scalarLeft = l, r.scalar, false
		}
		var out []*series
		for _, s := range vec.series {
			o := ev.newSeries(dropName(s.labels))
			if isCmp && !x.Bool {
				o.labels = s.labels
			}
			for i := range ev.steps {
				if !s.has[i] {
					continue
				}
				a, b := s.vals[i], sc[i]
				if scalarLeft {
					a, b = b, a
				}
				v, keep := op(a, b)
				switch {
				case isCmp && x.Bool:
					o.vals[i], o.has[i] = v, true
				case isCmp:
					if keep {
						o.vals[i], o.has[i] = s.vals[i], true
					}
				default:
					o.vals[i], o.has[i] = v, true
				}
			}
			out = append(out, o)
		}
		return value{series: out}, nil
	}
	return ev.vectorBinary(x, l.series, r.series, op, isCmp)
}

func dropName(ls Labels) Labels {
	return slices.DeleteFunc(slices.Clone(ls), func(l Label) bool { return l.Name == "__name__" })
}

// signature is the part of ls vector matching compares.
func signature(ls Labels, m *logql.VectorMatching) string {
	if m == nil {
		return dropName(ls).key()
	}
	return groupKeep(&logql.Grouping{Without: !m.On, Labels: m.Labels})(dropName(ls)).key()
}

// vectorBinary evaluates x between two vectors: and, or, unless by
// signature; the others one to one, or many to one with group_left or
// group_right.
func (ev *evaluator) vectorBinary(x *logql.BinaryOp, l, r []*series, op func(a, b float64) (float64, bool), isCmp bool) (value, error) {
	m := x.Matching
	switch x.Op {
	case "and", "or", "unless":
		return ev.setBinary(x, l, r), nil
	}
	one, many := r, l // group_left: many on the left
	if m != nil && m.Group == "group_right" {
		one, many = l, r
	}
	bySig := map[string]*series{}
	for _, s := range one {
		k := signature(s.labels, m)
		if bySig[k] != nil {
			return value{}, fmt.Errorf("many-to-many matching in %s: several series of one side share %s", x.Op, k)
		}
		bySig[k] = s
	}
	var out []*series
	seen := map[string]bool{}
	for _, s := range many {
		k := signature(s.labels, m)
		o2 := bySig[k]
		if o2 == nil {
			continue
		}
		if (m == nil || m.Group == "") && seen[k] {
			return value{}, fmt.Errorf("many-to-one matching in %s needs group_left or group_right", x.Op)
		}
		seen[k] = true
		ls := dropName(s.labels)
		if m != nil && m.Group == "" {
			ls = groupKeep(&logql.Grouping{Without: !m.On, Labels: m.Labels})(ls)
		}
		if isCmp && !x.Bool {
			ls = s.labels
		}
		o := ev.newSeries(ls)
		for i := range ev.steps {
			if !s.has[i] || !o2.has[i] {
				continue
			}
			a, b := s.vals[i], o2.vals[i]
			if m != nil && m.Group == "group_right" {
				a, b = b, a
			}
			v, keep := op(a, b)
			switch {
			case isCmp && x.Bool:
				o.vals[i], o.has[i] = v, true
			case isCmp:
				if keep {
					o.vals[i], o.has[i] = s.vals[i], true
				}
			default:
				o.vals[i], o.has[i] = v, true
			}
		}
		out = append(out, o)
	}
	return value{series: out}, nil
}

// setBinary evaluates and, or and unless: the left side's samples whose
// signature the right side has at the step (and), has not (unless), and
// for or also the right side's samples whose signature the left side has
// not.
func (ev *evaluator) setBinary(x *logql.BinaryOp, l, r []*series) value {
	m := x.Matching
	rsigs := map[string][]*series{}
	for _, s := range r {
		rsigs[signature(s.labels, m)] = append(rsigs[signature(s.labels, m)], s)
	}
	var out []*series
	for _, s := range l {
		o := ev.newSeries(s.labels)
		for i := range ev.steps {
			if !s.has[i] {
				continue
			}
			inR := false
			for _, rs := range rsigs[signature(s.labels, m)] {
				inR = inR || rs.has[i]
			}
			if x.Op == "and" && inR || x.Op != "and" && (x.Op == "or" || !inR) {
				o.vals[i], o.has[i] = s.vals[i], true
			}
		}
		out = append(out, o)
	}
	if x.Op == "or" {
		lsigs := map[string][]*series{}
		for _, s := range l {
			lsigs[signature(s.labels, m)] = append(lsigs[signature(s.labels, m)], s)
		}
		for _, s := range r {
			o := ev.newSeries(s.labels)
			for i := range ev.steps {
				inL := false
				for _, ls := range lsigs[signature(s.labels, m)] {
					inL = inL || ls.has[i]
				}
				if s.has[i] && !inL {
					o.vals[i], o.has[i] = s.vals[i], true
				}
			}
			out = append(out, o)
		}
	}
	return value{series: out}
}
