package lokiapi

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// volumeParams are a volume request's parameters.
type volumeParams struct {
	q        Query           // the range, the tenant
	sel      *logql.LogQuery // a stream selector
	limit    int             // series kept, the largest
	targets  []string        // targetLabels
	byLabels bool            // aggregateBy=labels
}

// labelNameRE is a Loki label name.
var labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// parseVolume reads the parameters of /index/volume and /volume_range:
// query (a stream selector), start, end, step (the range's), limit (100),
// targetLabels (comma-separated) and aggregateBy (series or labels).
func (h *Handler) parseVolume(r *http.Request, ranged bool) (volumeParams, error) {
	p := volumeParams{q: Query{Tenant: tenant.FromContext(r.Context())}, limit: 100}
	text := r.FormValue("query")
	if text == "" {
		return p, fmt.Errorf("%w: the query parameter is missing", errBad)
	}
	e, err := logql.Parse(text)
	if err != nil {
		return p, err
	}
	lq, ok := e.(*logql.LogQuery)
	if !ok || len(lq.Pipeline) > 0 {
		return p, fmt.Errorf("%w: volume takes a stream selector, not %s", errBad, text)
	}
	p.sel = lq
	if p.q.Start, p.q.End, err = h.rangeParams(r); err != nil {
		return p, err
	}
	if s := r.FormValue("limit"); s != "" {
		if p.limit, err = strconv.Atoi(s); err != nil || p.limit <= 0 {
			return p, fmt.Errorf("%w: invalid limit %q", errBad, s)
		}
	}
	if s := r.FormValue("targetLabels"); s != "" {
		for _, name := range strings.Split(s, ",") {
			if name = strings.TrimSpace(name); !labelNameRE.MatchString(name) {
				return p, fmt.Errorf("%w: invalid target label %q", errBad, name)
			}
			p.targets = append(p.targets, name)
		}
	}
	switch a := r.FormValue("aggregateBy"); a {
	case "", "series":
	case "labels":
		p.byLabels = true
	default:
		return p, fmt.Errorf("%w: invalid aggregateBy %q: series or labels", errBad, a)
	}
	if !ranged {
		return p, nil // volumeOf evaluates at the end, over the range
	}
	if s := r.FormValue("step"); s != "" {
		if p.q.Step, err = parseStep(s); err != nil {
			return p, err
		}
	} else {
		p.q.Step = max(time.Duration(p.q.End.Sub(p.q.Start).Seconds()/250)*time.Second, time.Second)
	}
	if p.q.Step <= 0 {
		return p, fmt.Errorf("%w: the step must be positive", errBad)
	}
	return p, nil
}

// volume answers /index/volume: the bytes of the lines of the streams a
// selector selects over the range, as a vector at its end.
func (h *Handler) volume(r *http.Request) (any, error) { return h.volumeOf(r, false) }

// volumeRange answers /index/volume_range: the same a step, as a matrix.
func (h *Handler) volumeRange(r *http.Request) (any, error) { return h.volumeOf(r, true) }

// volumeOf answers a volume request, as Loki's documentation gives it:
// by series (the default), one series per value set of the target
// labels (targetLabels, else the labels the selector names), the bytes
// of the lines of those streams; by labels, one series per stream label
// name ({name: ""}, of targetLabels' names if given), the bytes of the
// streams that have it. The limit series of most bytes over the range
// are kept, the largest first. It is the LogQL query sum by (labels)
// (bytes_over_time(selector[step])), run by the engine.
func (h *Handler) volumeOf(r *http.Request, ranged bool) (any, error) {
	p, err := h.parseVolume(r, ranged)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	group := p.targets
	if p.byLabels {
		// Every stream label name of the selected streams (of the
		// targets, if any).
		streams, err := h.eng.Streams(ctx, p.q.Tenant, p.q.Start, p.q.End, [][]logql.Matcher{p.sel.Matchers})
		if err != nil {
			return nil, err
		}
		names := map[string]bool{}
		for _, s := range streams {
			for _, l := range s {
				if len(p.targets) == 0 || slices.Contains(p.targets, l.Name) {
					names[l.Name] = true
				}
			}
		}
		group = slices.Sorted(maps.Keys(names))
	} else if len(group) == 0 {
		for _, m := range p.sel.Matchers {
			if !slices.Contains(group, m.Name) {
				group = append(group, m.Name)
			}
		}
	}
	// Steps (or an instant's range) of whole minutes are put on whole
	// multiples of themselves from the Unix epoch, the range widened to
	// hold them: the files' counts then answer each window, no line read
	// (a volume is an estimate in Loki too, from its index).
	q := p.q
	if !ranged {
		q.Step = time.Minute
	}
	if q.Step%time.Minute == 0 {
		step := int64(q.Step)
		q.Start = time.Unix(0, floorDiv(q.Start.UnixNano(), step)*step)
		q.End = time.Unix(0, -floorDiv(-q.End.UnixNano(), step)*step)
		if ranged && q.Start.Before(p.q.Start) {
			q.Start = q.Start.Add(q.Step) // its window holds the start
		}
	}
	rng := q.Step
	if !ranged {
		// An instant query at the end over the whole range.
		rng = max(q.End.Sub(q.Start), time.Millisecond)
		q.Start, q.Instant, q.Step = q.End, true, 0
	}
	q.Expr = &logql.VectorAggregation{Op: "sum", Grouping: &logql.Grouping{Labels: group},
		Inner: &logql.RangeAggregation{Op: "bytes_over_time", Range: &logql.LogRange{Query: p.sel, Range: rng}}}
	began := time.Now()
	res, err := h.eng.Exec(ctx, q)
	if err != nil {
		return nil, err
	}
	series := res.Series
	if p.byLabels {
		series = byLabelName(series, group)
	}
	total := func(s eval.Series) float64 {
		var n float64
		for _, pt := range s.Points {
			n += pt.V
		}
		return n
	}
	slices.SortStableFunc(series, func(a, b eval.Series) int {
		return cmp.Or(cmp.Compare(total(b), total(a)), strings.Compare(fmt.Sprint(a.Labels), fmt.Sprint(b.Labels)))
	})
	series = series[:min(len(series), p.limit)]
	data := map[string]any{"stats": stats(res.Stats, time.Since(began).Seconds())}
	out := make([]map[string]any, 0, len(series))
	for _, s := range series {
		if ranged {
			vals := make([][2]any, len(s.Points))
			for i, pt := range s.Points {
				vals[i] = [2]any{float64(pt.T) / 1e3, formatValue(pt.V)}
			}
			out = append(out, map[string]any{"metric": s.Labels.Map(), "values": vals})
		} else if len(s.Points) > 0 {
			pt := s.Points[len(s.Points)-1]
			out = append(out, map[string]any{"metric": s.Labels.Map(), "value": [2]any{float64(pt.T) / 1e3, formatValue(pt.V)}})
		}
	}
	data["resultType"], data["result"] = "vector", out
	if ranged {
		data["resultType"] = "matrix"
	}
	return success(data), nil
}

// byLabelName turns series by label values into series by label name:
// for each name of names, one series {name: ""} of the sum of the series
// that have the label, at each time.
func byLabelName(in []eval.Series, names []string) []eval.Series {
	var out []eval.Series
	for _, name := range names {
		sums := map[int64]float64{}
		for _, s := range in {
			if v, ok := s.Labels.Get(name); !ok || v == "" {
				continue
			}
			for _, pt := range s.Points {
				sums[pt.T] += pt.V
			}
		}
		if len(sums) == 0 {
			continue
		}
		s := eval.Series{Labels: eval.Labels{{Name: name}}}
		for _, t := range slices.Sorted(maps.Keys(sums)) {
			s.Points = append(s.Points, eval.Point{T: t, V: sums[t]})
		}
		out = append(out, s)
	}
	return out
}

// floorDiv is a/b rounded toward minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
