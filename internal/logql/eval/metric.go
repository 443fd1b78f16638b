package eval

import (
	"context"
	"fmt"
	"slices"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// value is a metric expression's value: a scalar per step, or series.
type value struct {
	scalar []float64
	series []*series
}

// series is a label set and its value at each step, where it has one.
type series struct {
	labels Labels
	vals   []float64
	has    []bool
}

func (ev *evaluator) newSeries(ls Labels) *series {
	return &series{labels: ls, vals: make([]float64, len(ev.steps)), has: make([]bool, len(ev.steps))}
}

// eval evaluates a metric expression; group, if not nil, is an enclosing
// sum's grouping that a range aggregation may apply at once.
func (ev *evaluator) eval(ctx context.Context, x logql.Expr, group *logql.Grouping) (value, error) {
	switch x := x.(type) {
	case *logql.Literal:
		v := make([]float64, len(ev.steps))
		for i := range v {
			v[i] = x.Value
		}
		return value{scalar: v}, nil
	case *logql.VectorLiteral:
		s := ev.newSeries(nil)
		for i := range s.vals {
			s.vals[i], s.has[i] = x.Value, true
		}
		return value{series: []*series{s}}, nil
	case *logql.RangeAggregation:
		return ev.rangeAgg(ctx, x, group) // range_agg.go
	case *logql.VectorAggregation:
		var pushed *logql.Grouping
		if x.Op == "sum" {
			pushed = x.Grouping
			if pushed == nil {
				pushed = &logql.Grouping{}
			}
		}
		inner, err := ev.eval(ctx, x.Inner, pushed)
		if err != nil {
			return value{}, err
		}
		return ev.vectorAgg(x, inner) // vector_agg.go
	case *logql.BinaryOp:
		l, err := ev.eval(ctx, x.L, nil)
		if err != nil {
			return value{}, err
		}
		r, err := ev.eval(ctx, x.R, nil)
		if err != nil {
			return value{}, err
		}
		return ev.binary(x, l, r) // binary.go
	case *logql.LogQuery:
		return value{}, fmt.Errorf("a log query where a metric is needed: wrap it in count_over_time or rate")
	}
	return value{}, fmt.Errorf("unsupported expression %s", x)
}

// groupKeep returns what a grouping keeps of a label set (all of it
// without one).
func groupKeep(g *logql.Grouping) func(Labels) Labels {
	if g == nil {
		return func(ls Labels) Labels { return ls }
	}
	return func(ls Labels) Labels {
		out := Labels{}
		for _, l := range ls {
			if slices.Contains(g.Labels, l.Name) != g.Without {
				out = append(out, l)
			}
		}
		return out
	}
}
