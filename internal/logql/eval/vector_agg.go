package eval

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Vector aggregations: sum, avg, min, max, count, stddev, stdvar by or
// without labels; topk and bottomk; sort and sort_desc (which order an
// instant query's answer, in Exec).

// vectorOps reduce a group's values at a step to one.
var vectorOps = map[string]func(vals []float64) float64{
	"sum":    sumOf,
	"avg":    func(vals []float64) float64 { return sumOf(vals) / float64(len(vals)) },
	"min":    slices.Min[[]float64],
	"max":    slices.Max[[]float64],
	"count":  func(vals []float64) float64 { return float64(len(vals)) },
	"stddev": func(vals []float64) float64 { return math.Sqrt(variance(vals)) },
	"stdvar": variance,
}

func sumOf(vals []float64) float64 {
	var v float64
	for _, f := range vals {
		v += f
	}
	return v
}

// vectorAgg evaluates a vector aggregation of in.
func (ev *evaluator) vectorAgg(x *logql.VectorAggregation, in value) (value, error) {
	if in.scalar != nil {
		return value{}, fmt.Errorf("%s of a scalar", x.Op)
	}
	if x.Op == "sort" || x.Op == "sort_desc" {
		return in, nil
	}
	keep := groupKeep(x.Grouping)
	if x.Grouping == nil {
		keep = func(Labels) Labels { return Labels{} }
	}
	groups := map[string][]*series{}
	glabels := map[string]Labels{}
	for _, s := range in.series {
		g := keep(s.labels)
		k := g.key()
		groups[k] = append(groups[k], s)
		glabels[k] = g
	}
	if x.Op == "topk" || x.Op == "bottomk" {
		return ev.topk(x, groups), nil
	}
	reduce, ok := vectorOps[x.Op]
	var out []*series
	for k, members := range groups {
		o := ev.newSeries(glabels[k])
		for i := range ev.steps {
			var vals []float64
			for _, s := range members {
				if s.has[i] {
					vals = append(vals, s.vals[i])
				}
			}
			if len(vals) == 0 {
				continue
			}
			if !ok {
				return value{}, fmt.Errorf("unsupported aggregation %s", x.Op)
			}
			o.vals[i], o.has[i] = reduce(vals), true
		}
		out = append(out, o)
	}
	return value{series: out}, nil
}

// topk evaluates topk and bottomk: at each step, the k series of each
// group with the largest (smallest) values, keeping their labels.
func (ev *evaluator) topk(x *logql.VectorAggregation, groups map[string][]*series) value {
	k := int(*x.Param)
	var out []*series
	for _, members := range groups {
		picked := map[*series]*series{}
		for i := range ev.steps {
			var at []*series
			for _, s := range members {
				if s.has[i] {
					at = append(at, s)
				}
			}
			slices.SortStableFunc(at, func(a, b *series) int {
				if x.Op == "topk" {
					return cmp.Compare(b.vals[i], a.vals[i])
				}
				return cmp.Compare(a.vals[i], b.vals[i])
			})
			for _, s := range at[:min(k, len(at))] {
				o := picked[s]
				if o == nil {
					o = ev.newSeries(s.labels)
					picked[s] = o
					out = append(out, o)
				}
				o.vals[i], o.has[i] = s.vals[i], true
			}
		}
	}
	return value{series: out}
}
