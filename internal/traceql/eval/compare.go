package eval

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// compare() splits the spans a query selects in two groups: the
// selection (the spans its spanset also selects, within its optional
// time window) and the baseline (the others). For every attribute the
// spans hold (resource.x, span.x, and the intrinsics name, kind and
// status) it counts each group's spans by the attribute's value, a
// count a step: the series {__meta_type="selection"|"baseline",
// attr=value}, the TopN values of most spans over the range for each
// group and attribute; {__meta_type="selection_total"|"baseline_total",
// attr=nil}, the group's spans that hold the attribute; and, for an
// attribute with more values than TopN in a group,
// {__meta_error="__too_many_values__", attr=nil}, counting the spans of
// both groups that hold it.

// compareTopN is compare()'s TopN when the query gives none.
const compareTopN = 10

// compareGroups are the two groups' __meta_type values.
var compareGroups = [2]string{"baseline", "selection"}

// compareAcc gathers a compare() query's counts.
type compareAcc struct {
	sel        *Query
	start, end int64 // the selection's window, Unix nanoseconds; 0 0: none
	topN       int
	rng        Range
	attrs      [2]map[string]*attrCounts // by group, then attribute name
	lim        MetricsLimits
	owed       int64
	err        error
}

// attrCounts is a group's counts of one attribute: by value, and all.
type attrCounts struct {
	values map[string]*valueCounts // by Value's type and text
	total  map[int]int64           // by step
}

type valueCounts struct {
	v     Value
	steps map[int]int64
	n     int64 // over the range
}

func newCompareAcc(c *traceql.Compare, rng Range, lim MetricsLimits) (*compareAcc, error) {
	sel, err := Compile(&traceql.Query{Pipeline: traceql.Pipeline{Stages: []traceql.Stage{traceql.SpansetStage{Spanset: c.Selection}}}})
	if err != nil {
		return nil, err
	}
	a := &compareAcc{sel: sel, start: c.Start, end: c.End, topN: c.TopN, rng: rng, lim: lim}
	if a.topN <= 0 {
		a.topN = compareTopN
	}
	for g := range a.attrs {
		a.attrs[g] = map[string]*attrCounts{}
	}
	return a, nil
}

// grew counts n more bytes held, charging them a chunk at a time; false
// once the query must stop (a.err).
func (a *compareAcc) grew(n int64) bool {
	a.owed += n
	if a.err == nil && a.owed >= 64<<10 && a.lim.Charge != nil {
		a.err = a.lim.Charge(a.owed)
		a.owed = 0
	}
	return a.err == nil
}

// observe counts the spans of a trace's selected spansets (each once).
func (a *compareAcc) observe(t *Trace, sets []Spanset) {
	inSel := map[int32]bool{}
	for _, i := range union(a.sel.Eval(t)) {
		st := t.Spans[i].StartUnixNano
		if a.start == 0 && a.end == 0 || st >= a.start && st < a.end {
			inSel[i] = true
		}
	}
	for _, i := range union(sets) {
		sp := &t.Spans[i]
		step, ok := a.rng.stepOf(sp.StartUnixNano)
		if !ok {
			continue
		}
		g := 0
		if inSel[i] {
			g = 1
		}
		for _, kv := range sp.Resource {
			a.count(g, "resource."+kv.Key, kv.Value, step)
		}
		for _, kv := range sp.Attrs {
			a.count(g, "span."+kv.Key, kv.Value, step)
		}
		a.count(g, "name", Value{Type: traceql.TypeString, S: sp.Name}, step)
		a.count(g, "kind", Value{Type: traceql.TypeKind, I: int64(sp.Kind)}, step)
		a.count(g, "status", Value{Type: traceql.TypeStatus, I: int64(sp.Status)}, step)
		if a.err != nil {
			return
		}
	}
}

// count adds a span of group g whose attribute name holds v at step.
func (a *compareAcc) count(g int, name string, v Value, step int) {
	if v.Type == traceql.TypeNil {
		return
	}
	ac := a.attrs[g][name]
	if ac == nil {
		ac = &attrCounts{values: map[string]*valueCounts{}, total: map[int]int64{}}
		a.attrs[g][name] = ac
		a.grew(int64(128 + len(name)))
	}
	key := valueKey(v)
	vc := ac.values[key]
	if vc == nil {
		vc = &valueCounts{v: v, steps: map[int]int64{}}
		ac.values[key] = vc
		a.grew(int64(160 + len(key)))
	}
	if _, ok := vc.steps[step]; !ok {
		a.grew(32)
	}
	vc.steps[step]++
	vc.n++
	ac.total[step]++
}

// valueKey is v's type and text: the key of its counts.
func valueKey(v Value) string {
	return string(rune('0'+v.Type)) + v.String()
}

// result returns the series, sorted by their labels.
func (a *compareAcc) result() []Series {
	var out []Series
	samples := func(steps map[int]int64) []Sample {
		var ss []Sample
		for _, st := range slices.Sorted(maps.Keys(steps)) {
			ss = append(ss, Sample{TimestampMs: a.rng.Start.Add(time.Duration(st) * a.rng.Step).UnixMilli(), Value: float64(steps[st])})
		}
		return ss
	}
	meta := func(name, value string) Label {
		return Label{Name: name, Value: Value{Type: traceql.TypeString, S: value}}
	}
	tooMany := map[string]map[int]int64{} // attributes past TopN in a group: both groups' spans that hold them
	for g, attrs := range a.attrs {
		for name, ac := range attrs {
			vals := slices.Collect(maps.Values(ac.values))
			slices.SortFunc(vals, func(x, y *valueCounts) int {
				return cmp.Or(cmp.Compare(y.n, x.n), strings.Compare(valueKey(x.v), valueKey(y.v))) // most spans first
			})
			if len(vals) > a.topN {
				vals = vals[:a.topN]
				tooMany[name] = nil
			}
			for _, vc := range vals {
				out = append(out, Series{Labels: []Label{meta("__meta_type", compareGroups[g]), {Name: name, Value: vc.v}}, Samples: samples(vc.steps)})
			}
			out = append(out, Series{Labels: []Label{meta("__meta_type", compareGroups[g]+"_total"), {Name: name}}, Samples: samples(ac.total)})
		}
	}
	for name := range tooMany {
		all := map[int]int64{}
		for _, attrs := range a.attrs {
			if ac := attrs[name]; ac != nil {
				for st, n := range ac.total {
					all[st] += n
				}
			}
		}
		out = append(out, Series{Labels: []Label{meta("__meta_error", "__too_many_values__"), {Name: name}}, Samples: samples(all)})
	}
	slices.SortFunc(out, func(x, y Series) int { return strings.Compare(labelsKey(x.Labels), labelsKey(y.Labels)) })
	return out
}
