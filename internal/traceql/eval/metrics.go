package eval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// Series is one series of a TraceQL metrics answer: its labels (the by()
// values, and for quantile_over_time "p", for histogram_over_time
// "__bucket") and its samples at the steps that have any.
type Series struct {
	Labels  []Label
	Samples []Sample
}

// Label is a series' label: a field and its value.
type Label struct {
	Name  string
	Value Value
}

// Sample is a value at a step's start, Unix milliseconds.
type Sample struct {
	TimestampMs int64
	Value       float64
}

// Range is a metrics query's range: steps of Step from Start, each
// [t, t+Step), up to End.
type Range struct {
	Start, End time.Time
	Step       time.Duration
}

// Steps returns the number of steps of r.
func (r Range) Steps() int {
	if r.Step <= 0 || !r.Start.Before(r.End) {
		return 0
	}
	d := r.End.Sub(r.Start) // saturates: no overflow below
	n := d / r.Step
	if d%r.Step != 0 {
		n++
	}
	return int(n)
}

// stepOf returns the step of r that time t (Unix nanoseconds) falls in;
// false if none.
func (r Range) stepOf(t int64) (int, bool) {
	start := r.Start.UnixNano()
	if t < start || t >= r.End.UnixNano() {
		return 0, false
	}
	return int((t - start) / int64(r.Step)), true
}

// metricsAcc gathers the spans of a metrics query by series and step.
type metricsAcc struct {
	m      *traceql.Metrics
	field  *compiled
	by     []*compiled
	rng    Range
	series map[string]*seriesAcc
	order  []string
	key    []byte // observePoint's, reused
	// observePoint's last series and its key: points come in runs of one
	// series (a row group is mostly one service's).
	lastKey    []byte
	lastSeries *seriesAcc
	lastPoint  SpanPoint
	// keep says the function needs every value (quantiles, histograms);
	// the others keep a step's count, sum, min and max.
	keep bool
	lim  MetricsLimits
	owed int64 // bytes held and not charged yet (lim.Charge)
	err  error // the first charge or series limit that failed
}

// grew counts n more bytes held, charging them a chunk at a time, and
// checks the series bound; false once the query must stop (a.err).
func (a *metricsAcc) grew(n int64) bool {
	a.owed += n
	if a.err == nil && a.lim.MaxSeries > 0 && len(a.series) > a.lim.MaxSeries {
		a.err = &TooManySeriesError{Limit: a.lim.MaxSeries}
	}
	if a.err == nil && a.owed >= 64<<10 && a.lim.Charge != nil {
		a.err = a.lim.Charge(a.owed)
		a.owed = 0
	}
	return a.err == nil
}

type seriesAcc struct {
	labels []Label
	steps  map[int]*stepAcc
	// The step added to last: spans come mostly in time order, so most
	// adds find it here, not in the map.
	lastStep int
	last     *stepAcc
}

// stepAcc is what a series holds of a step's spans.
type stepAcc struct {
	n             int
	sum, min, max float64
	vals          []float64 // every value, when the function needs them
}

// add adds v to a's step.
// It returns the bytes that added to what the series holds, roughly.
func (s *seriesAcc) add(step int, v float64, keep bool) int64 { return s.addN(step, v, 1, keep) }

// addN is add of n spans of value v (n > 1 only for counts: no values
// kept then).
func (s *seriesAcc) addN(step int, v float64, spans int64, keep bool) int64 {
	var n int64
	st := s.last
	if st == nil || s.lastStep != step {
		st = s.steps[step]
	}
	if st == nil {
		st = &stepAcc{min: v, max: v}
		s.steps[step] = st
		n += 96
	}
	s.last, s.lastStep = st, step
	st.n += int(spans)
	st.sum += v * float64(spans)
	st.min, st.max = min(st.min, v), max(st.max, v)
	if keep {
		st.vals = append(st.vals, v)
		n += 8
	}
	return n
}

// newMetricsAcc compiles q's metrics function over rng.
func newMetricsAcc(q *traceql.Query, rng Range) (*metricsAcc, error) {
	m := q.Metrics
	switch {
	case m == nil:
		return nil, &UnsupportedError{fmt.Sprintf("%s is not a metrics query", q)}
	case m.Compare != nil:
		return nil, &UnsupportedError{"compare() is not supported"}
	case rng.Steps() == 0:
		return nil, &UnsupportedError{"an empty range or step"}
	}
	a := &metricsAcc{m: m, rng: rng, series: map[string]*seriesAcc{}, keep: m.Fn == "quantile_over_time" || m.Fn == "histogram_over_time"}
	if m.Field != nil {
		c, err := compileField(m.Field)
		if err != nil {
			return nil, err
		}
		a.field = c
	}
	for _, f := range m.By {
		c, err := compileField(f)
		if err != nil {
			return nil, err
		}
		a.by = append(a.by, c)
	}
	return a, nil
}

// observe adds the spans of a trace's selected spansets (each span once).
func (a *metricsAcc) observe(t *Trace, sets []Spanset) {
	r := &run{t: t, tr: buildTree(t)}
	for _, i := range union(sets) {
		sp := &t.Spans[i]
		step, ok := a.rng.stepOf(sp.StartUnixNano)
		if !ok {
			continue
		}
		x := at{t: t, tr: r.tr, span: i, ev: -1, link: -1, spanValue: sp}
		v := 1.0
		if a.field != nil {
			fv := r.firstValue(a.field, &x)
			n, ok := number(fv)
			if !ok {
				continue // a span without a number for the field
			}
			v = n
			if fv.Type == traceql.TypeDuration {
				v = n / 1e9 // durations in seconds, as Tempo's series are
			}
		}
		labels := make([]Label, len(a.by))
		var key strings.Builder
		for k, c := range a.by {
			lv := r.firstValue(c, &x)
			labels[k] = Label{Name: a.m.By[k].String(), Value: lv}
			fmt.Fprintf(&key, "%d:%s\x00", lv.Type, lv.String())
		}
		s := a.series[key.String()]
		if s == nil {
			s = &seriesAcc{labels: labels, steps: map[int]*stepAcc{}}
			a.series[key.String()] = s
			a.order = append(a.order, key.String())
			a.grew(int64(256 + key.Len()))
		}
		if !a.grew(s.add(step, v, a.keep)) {
			return
		}
	}
}

// result returns the series, sorted by their labels.
func (a *metricsAcc) result() []Series {
	var out []Series
	stepSec := a.rng.Step.Seconds()
	for _, k := range a.order {
		s := a.series[k]
		emit := func(extra []Label, f func(st *stepAcc) float64) {
			sr := Series{Labels: append(slices.Clip(s.labels), extra...)}
			steps := slices.Sorted(maps.Keys(s.steps))
			for _, st := range steps {
				sr.Samples = append(sr.Samples, Sample{
					TimestampMs: a.rng.Start.Add(time.Duration(st) * a.rng.Step).UnixMilli(), Value: f(s.steps[st])})
			}
			out = append(out, sr)
		}
		switch a.m.Fn {
		case "rate":
			emit(nil, func(st *stepAcc) float64 { return float64(st.n) / stepSec })
		case "count_over_time":
			emit(nil, func(st *stepAcc) float64 { return float64(st.n) })
		case "min_over_time":
			emit(nil, func(st *stepAcc) float64 { return st.min })
		case "max_over_time":
			emit(nil, func(st *stepAcc) float64 { return st.max })
		case "sum_over_time":
			emit(nil, func(st *stepAcc) float64 { return st.sum })
		case "avg_over_time":
			emit(nil, func(st *stepAcc) float64 { return st.sum / float64(st.n) })
		case "quantile_over_time":
			for _, q := range a.m.Quantiles {
				emit([]Label{{Name: "p", Value: Value{Type: traceql.TypeFloat, F: q}}}, func(st *stepAcc) float64 { return quantile(st.vals, q) })
			}
		case "histogram_over_time":
			// Buckets of powers of two (seconds for durations): each
			// value counted in the least 2^k at or above it.
			bounds := map[float64]bool{}
			for _, st := range s.steps {
				for _, v := range st.vals {
					bounds[bucketOf(v)] = true
				}
			}
			for _, b := range slices.Sorted(maps.Keys(bounds)) {
				emit([]Label{{Name: "__bucket", Value: Value{Type: traceql.TypeFloat, F: b}}}, func(st *stepAcc) float64 {
					n := 0
					for _, x := range st.vals {
						if bucketOf(x) == b {
							n++
						}
					}
					return float64(n)
				})
			}
		}
	}
	// Steps with no value of this series' bucket are dropped.
	for i := range out {
		out[i].Samples = slices.DeleteFunc(out[i].Samples, func(s Sample) bool { return s.Value == 0 && a.m.Fn == "histogram_over_time" })
	}
	out = slices.DeleteFunc(out, func(s Series) bool { return len(s.Samples) == 0 })
	slices.SortFunc(out, func(x, y Series) int { return strings.Compare(labelsKey(x.Labels), labelsKey(y.Labels)) })
	return out
}

func labelsKey(ls []Label) string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Name + "=" + l.Value.String() + ",")
	}
	return b.String()
}

// quantile is the q-quantile of v, interpolated between the two nearest
// ranks (as Prometheus' quantile over samples).
func quantile(v []float64, q float64) float64 {
	s := slices.Sorted(slices.Values(v))
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// bucketOf is the least power of two at or above v (v <= 0: 0).
func bucketOf(v float64) float64 {
	if v <= 0 {
		return 0
	}
	return math.Exp2(math.Ceil(math.Log2(v)))
}

// UnsupportedError is a metrics query or range the engine does not answer.
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return "evaluate metrics: " + e.Msg }

// MetricsLimits bound a metrics query's work: the traces it reads (a
// query over whole traces), the series it makes, and the memory its
// series hold, charged as they grow.
type MetricsLimits struct {
	MaxTraces int
	MaxSeries int               // 0: no bound
	Charge    func(int64) error // nil: nothing charged (querybudget.Ticket.Charge)
}

// TooManySeriesError is a metrics query whose by() makes more series
// than its limit.
type TooManySeriesError struct{ Limit int }

func (e *TooManySeriesError) Error() string {
	return "traceql metrics: more than " + strconv.Itoa(e.Limit) + " series; narrow the by() or the query"
}

// TooLarge marks it as a query past its limits (readapi.Classify).
func (e *TooManySeriesError) TooLarge() bool { return true }

// TooManyTracesError is a metrics query over more traces than its limit:
// its answer would be partial, so it has none.
type TooManyTracesError struct{ Limit int }

func (e *TooManyTracesError) Error() string {
	return "traceql metrics: more than " + strconv.Itoa(e.Limit) + " traces match in the range; narrow the query or the range"
}

// TooLarge marks it as a query past its limits (readapi.Classify).
func (e *TooManyTracesError) TooLarge() bool { return true }

// Metrics runs metrics query q (parsed) over the traces of src in rng:
// every trace with a span that holds q's hint and starts in the range
// (at most MaxTraces, else a TooManyTracesError), q's pipeline over each,
// and its metrics function over the spans selected, by step.
func Metrics(ctx context.Context, src Source, tenant string, parsed *traceql.Query, rng Range, lim MetricsLimits) ([]Series, error) {
	if parsed.Metrics != nil && parsed.Metrics.Compare != nil && rng.Steps() > 0 {
		return compareMetrics(ctx, src, tenant, parsed, rng, lim)
	}
	acc, err := newMetricsAcc(parsed, rng)
	if err != nil {
		return nil, err
	}
	acc.lim = lim
	// A query of spans one at a time reads their columns, no trace: no
	// bound on the traces then, only the source's on its reads.
	if ss, ok := src.(SpanSource); ok {
		if f, ok := spanLocal(parsed, rng); ok {
			err := ss.SpanPoints(ctx, tenant, f, func(pts []SpanPoint) error {
				for i := range pts {
					acc.observePoint(&pts[i])
				}
				if acc.err != nil {
					return acc.err
				}
				return ctx.Err()
			})
			if err == nil {
				return acc.result(), nil
			}
			if !errors.Is(err, ErrNeedTraces) {
				return nil, err
			}
			acc, _ = newMetricsAcc(parsed, rng) // what was added is dropped: the traces give it all
			acc.lim = lim
		}
	}
	err = eachMatch(ctx, src, tenant, parsed, rng, lim, func(t *Trace, sets []Spanset) bool {
		acc.observe(t, sets)
		return acc.err == nil
	})
	if err == nil {
		err = acc.err
	}
	if err != nil {
		return nil, err
	}
	return acc.result(), nil
}

// compareMetrics is Metrics of a compare() query: over whole traces.
func compareMetrics(ctx context.Context, src Source, tenant string, parsed *traceql.Query, rng Range, lim MetricsLimits) ([]Series, error) {
	acc, err := newCompareAcc(parsed.Metrics.Compare, rng, lim)
	if err != nil {
		return nil, err
	}
	err = eachMatch(ctx, src, tenant, parsed, rng, lim, func(t *Trace, sets []Spanset) bool {
		acc.observe(t, sets)
		return acc.err == nil
	})
	if err == nil {
		err = acc.err
	}
	if err != nil {
		return nil, err
	}
	series := acc.result()
	if lim.MaxSeries > 0 && len(series) > lim.MaxSeries {
		return nil, &TooManySeriesError{Limit: lim.MaxSeries}
	}
	return series, nil
}

// eachMatch calls fn with every trace with a span that holds parsed's hint
// and starts in rng (at most MaxTraces, else a TooManyTracesError) whose
// pipeline selects spansets, and those, until fn returns false.
func eachMatch(ctx context.Context, src Source, tenant string, parsed *traceql.Query, rng Range, lim MetricsLimits, fn func(*Trace, []Spanset) bool) error {
	q, err := Compile(parsed)
	if err != nil {
		return err
	}
	ids, more, err := src.Candidates(ctx, tenant, HintOf(parsed), rng.Start, rng.End, lim.MaxTraces)
	if err != nil {
		return err
	}
	if more {
		return &TooManyTracesError{Limit: lim.MaxTraces}
	}
	return eachTrace(ctx, src, tenant, ids, func(_ [16]byte, t *Trace) bool {
		if sets := q.Eval(t); len(sets) > 0 {
			return fn(t, sets)
		}
		return true
	})
}
