package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Range aggregations: count_over_time, rate, bytes_over_time,
// bytes_rate, absent_over_time over the lines of a range; sum, avg, min,
// max, first, last, stddev, stdvar and quantile _over_time, and
// rate_counter, over a label's values (| unwrap).

// acc accumulates the samples of one series and step of a range
// aggregation.
type acc struct {
	n             int64
	sum, min, max float64
	firstT, lastT int64
	first, last   float64
	vals          []float64 // quantile, stddev, stdvar
}

// rangeOp is a range aggregation: what it makes of a step's samples, and
// what it needs of them.
type rangeOp struct {
	// value is the step's value from its samples; secs is the range in
	// seconds.
	value func(a *acc, x *logql.RangeAggregation, secs float64) float64
	// lineBytes: its samples are the lines' sizes (else 1 a line, or the
	// unwrapped label's value).
	lineBytes bool
	// keepVals: it needs every sample, not their sum, min and max.
	keepVals bool
	// sumPushable: an enclosing sum may group its series at once.
	sumPushable bool
}

// rangeOps are the range aggregations by name (absent_over_time is
// rangeAgg's own; an unknown one gives 0).
var rangeOps = map[string]rangeOp{
	"count_over_time": {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return float64(a.n) }, sumPushable: true},
	"rate":            {value: func(a *acc, _ *logql.RangeAggregation, secs float64) float64 { return float64(a.n) / secs }, sumPushable: true},
	"bytes_over_time": {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return a.sum }, lineBytes: true, sumPushable: true},
	"bytes_rate":      {value: func(a *acc, _ *logql.RangeAggregation, secs float64) float64 { return a.sum / secs }, lineBytes: true, sumPushable: true},
	"sum_over_time":   {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return a.sum }, sumPushable: true},
	"rate_counter":    {value: func(a *acc, _ *logql.RangeAggregation, secs float64) float64 { return a.sum / secs }},
	"avg_over_time":   {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return a.sum / float64(a.n) }},
	"min_over_time":   {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return a.min }},
	"max_over_time":   {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return a.max }},
	"first_over_time": {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return a.first }},
	"last_over_time":  {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return a.last }},
	"stdvar_over_time": {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return variance(a.vals) },
		keepVals: true},
	"stddev_over_time": {value: func(a *acc, _ *logql.RangeAggregation, _ float64) float64 { return math.Sqrt(variance(a.vals)) },
		keepVals: true},
	"quantile_over_time": {value: func(a *acc, x *logql.RangeAggregation, _ float64) float64 { return quantile(*x.Param, a.vals) },
		keepVals: true},
	"absent_over_time": {},
}

// rangeAgg evaluates a range aggregation at each step; group, if not
// nil, is an enclosing sum's grouping, applied at once when the
// aggregation allows it (rangeOp.sumPushable) so that only the groups'
// series are kept.
func (ev *evaluator) rangeAgg(ctx context.Context, x *logql.RangeAggregation, group *logql.Grouping) (value, error) {
	op := rangeOps[x.Op]
	rng, off := x.Range.Range, x.Range.Offset
	first, last := ev.steps[0], ev.steps[len(ev.steps)-1]
	// Samples in (t-range-offset, t-offset] for each step t.
	start := time.Unix(0, first-int64(rng)-int64(off)+1)
	end := time.Unix(0, last-int64(off)+1)
	s, err := ev.compile(x.Range.Query, start, end)
	if err != nil {
		return value{}, err
	}
	var post []stage
	for _, f := range x.Range.PostFilters {
		p, err := compilePred(f.Pred)
		if err != nil {
			return value{}, err
		}
		post = append(post, p)
	}
	if !op.sumPushable {
		group = nil
	}
	keep := groupKeep(group)
	if x.Grouping != nil {
		keep = groupKeep(x.Grouping)
	}
	s.lq.Fields = fieldsFor(x, s, group)
	byKey := map[string][]*acc{}
	seriesLabels := map[string]Labels{}
	var overErr error
	// add adds n samples of value v at time ets to the series ls.
	add := func(ls Labels, ets int64, v float64, n int64) bool {
		k := ls.key()
		accs := byKey[k]
		if accs == nil {
			if len(byKey) >= ev.e.maxSeries {
				overErr = fmt.Errorf("%w: more than %d series; aggregate with sum by (...) or narrow the selector", ErrLimit, ev.e.maxSeries)
				return false
			}
			// The series' steps here and in its result (newSeries).
			if err := ev.tk.Charge(int64(len(ev.steps))*(8+9) + int64(len(k))); err != nil {
				overErr = err
				return false
			}
			accs = make([]*acc, len(ev.steps))
			byKey[k] = accs
			seriesLabels[k] = ls
		}
		ts := ets + int64(off)
		// Steps t with t-range < ts <= t.
		lo := sort.Search(len(ev.steps), func(i int) bool { return ev.steps[i] >= ts })
		for i := lo; i < len(ev.steps) && ev.steps[i]-int64(rng) < ts; i++ {
			a := accs[i]
			if a == nil {
				if err := ev.tk.Charge(int64(unsafe.Sizeof(acc{}))); err != nil {
					overErr = err
					return false
				}
				a = &acc{min: math.Inf(1), max: math.Inf(-1), firstT: math.MaxInt64, lastT: math.MinInt64}
				accs[i] = a
			}
			a.n += n
			a.sum += v * float64(n)
			a.min, a.max = min(a.min, v), max(a.max, v)
			if ets < a.firstT {
				a.firstT, a.first = ets, v
			}
			if ets >= a.lastT {
				a.lastT, a.last = ets, v
			}
			if op.keepVals {
				if err := ev.tk.Charge(8); err != nil {
					overErr = err
					return false
				}
				a.vals = append(a.vals, v)
			}
		}
		return true
	}
	counted := false
	if counter, ok := ev.e.src.(Counter); ok && countable(x, s) {
		// Counts per service, severity and bucket of the step grid,
		// from the source's columns alone: no record decoded.
		bucket := gridBucket(ev.steps, int64(rng), int64(off))
		cs := s.lq // FieldSeverity only if the grouping needs it (fieldsFor sets it as a placeholder too)
		cs.Fields &^= FieldSeverity
		cs.CountBytes = op.lineBytes
		for _, name := range group.Labels {
			if name == "severity_text" || name == "severity_number" || name == "detected_level" {
				cs.Fields |= FieldSeverity
			}
		}
		err = counter.CountLogs(ctx, ev.q.Tenant, cs, bucket, func(r *Record, b, n, bytes int64) bool {
			ev.stats.Lines += n
			ls := make([]Label, 0, len(group.Labels))
			for _, name := range group.Labels {
				if val, ok := recordLabel(r, name); ok {
					ls = append(ls, Label{name, val})
				}
			}
			if op.lineBytes {
				ev.stats.Bytes += bytes
				return add(labelsOf(ls), b, float64(bytes), 1)
			}
			return add(labelsOf(ls), b, 1, n)
		})
		counted = !errors.Is(err, ErrNotCountable)
		if !counted {
			err = nil
		}
	}
	switch {
	case counted:
	case s.lq.Fields != AllFields:
		// The few fields the grouping needs, and line filters alone: no
		// labels map per record.
		scratch := &entry{labels: map[string]string{}}
		err = ev.e.src.Logs(ctx, ev.q.Tenant, s.lq, func(r *Record) bool {
			ev.stats.Lines++
			ev.stats.Bytes += int64(len(r.Line))
			scratch.line = r.Line
			for _, st := range s.stages {
				if !st(scratch) {
					return true
				}
			}
			v := 1.0
			if op.lineBytes {
				v = float64(len(r.Line))
			}
			ls := make([]Label, 0, len(group.Labels))
			for _, name := range group.Labels {
				if val, ok := recordLabel(r, name); ok {
					ls = append(ls, Label{name, val})
				}
			}
			return add(labelsOf(ls), r.Time, v, 1)
		})
	default:
		err = ev.each(ctx, s, func(e *entry) bool {
			v := 1.0
			if u := x.Range.Unwrap; u != nil {
				raw, ok := e.labels[u.Label]
				if !ok {
					return true
				}
				var cerr error
				switch u.Conv {
				case "duration", "duration_seconds":
					v, cerr = convert(logql.ValueDuration, raw)
				case "bytes":
					v, cerr = convert(logql.ValueBytes, raw)
				default:
					v, cerr = convert(logql.ValueNumber, raw)
				}
				if cerr != nil {
					e.set("__error__", "SampleExtractionErr")
					e.set("__error_details__", cerr.Error())
				}
				e.del(u.Label)
				for _, p := range post {
					if !p(e) {
						return true
					}
				}
				if cerr != nil {
					return true // a sample that does not convert is not counted
				}
			} else {
				for _, p := range post {
					if !p(e) {
						return true
					}
				}
			}
			if op.lineBytes {
				v = float64(len(e.line))
			}
			return add(keep(e.sorted()), e.ts, v, 1)
		})
	}
	if err == nil {
		err = overErr
	}
	if err != nil {
		return value{}, err
	}
	secs := rng.Seconds()
	var out []*series
	for k, accs := range byKey {
		sr := ev.newSeries(seriesLabels[k])
		for i, a := range accs {
			if a == nil || x.Op == "absent_over_time" {
				continue
			}
			var v float64
			if op.value != nil {
				v = op.value(a, x, secs)
			}
			sr.vals[i], sr.has[i] = v, true
		}
		out = append(out, sr)
	}
	if x.Op == "absent_over_time" {
		// 1 at the steps where nothing matched, as one series.
		sr := ev.newSeries(nil)
		for i := range ev.steps {
			any := false
			for _, accs := range byKey {
				any = any || accs[i] != nil
			}
			if !any {
				sr.vals[i], sr.has[i] = 1, true
			}
		}
		out = []*series{sr}
	}
	return value{series: out}, nil
}

// countable reports whether a range aggregation is a count of records
// by service and severity a Counter can give: count_over_time or rate,
// under a sum by service_name, severity or detected_level alone
// (fieldsFor narrowed to the line and severity at most), with |= filters alone, each
// tested on the line by the source (Scan.Contains).
func countable(x *logql.RangeAggregation, s *selection) bool {
	if x.Op == "bytes_over_time" || x.Op == "bytes_rate" {
		// The lines' bytes: of a selector alone (a filter would need
		// the lines read).
		return len(x.Range.Query.Pipeline) == 0 && s.lq.Fields != AllFields && s.lq.Fields&^(FieldLine|FieldSeverity) == 0
	}
	if x.Op != "count_over_time" && x.Op != "rate" || s.lq.Fields == AllFields || s.lq.Fields&^(FieldLine|FieldSeverity) != 0 {
		return false
	}
	for _, st := range x.Range.Query.Pipeline {
		if f, ok := st.(*logql.LineFilter); !ok || f.Op != logql.LineContains || len(f.Values) != 1 {
			return false
		}
	}
	return len(x.Range.Query.Pipeline) == len(s.lq.Contains)
}

// gridBucket returns the bucket of a sample's time for a Counter: the
// end of the interval, on the grid of the steps' times and range
// boundaries (their greatest common divisor apart), that holds its time
// plus off, less off. Every sample of a bucket falls in the same steps'
// windows (t-rng, t], so counting the bucket at its end counts each of
// its samples where it belongs.
func gridBucket(steps []int64, rng, off int64) func(int64) int64 {
	g := rng
	if len(steps) > 1 {
		g = gcd(rng, steps[1]-steps[0])
	}
	anchor := steps[0]
	return func(ets int64) int64 {
		d := ets + off - anchor
		k := d / g // toward zero: the ceiling when d < 0
		if d > 0 && d%g != 0 {
			k++
		}
		return anchor + k*g - off
	}
}

// gcd is the greatest common divisor of two positive numbers.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fieldsFor returns the record fields a range aggregation needs: all of
// them unless its only stages are line filters, its only matchers are on
// service_name, and an enclosing sum keeps a few labels; then those
// labels' fields (and the line for line filters and the bytes
// aggregations).
func fieldsFor(x *logql.RangeAggregation, s *selection, group *logql.Grouping) Fields {
	if group == nil || group.Without || x.Grouping != nil || x.Range.Unwrap != nil || len(x.Range.PostFilters) > 0 || len(s.matchers) > 0 {
		return AllFields
	}
	var f Fields
	for _, st := range x.Range.Query.Pipeline {
		if _, ok := st.(*logql.LineFilter); !ok {
			return AllFields
		}
		f |= FieldLine
	}
	if rangeOps[x.Op].lineBytes {
		f |= FieldLine
	}
	for _, l := range group.Labels {
		switch {
		case l == "service_name":
		case l == "severity_text" || l == "severity_number" || l == "detected_level":
			f |= FieldSeverity
		case l == "scope_name" || l == "scope_version":
			f |= FieldScope
		case l == "trace_id" || l == "span_id":
			f |= FieldIDs
		default: // a resource attribute (label or metadata) or a record's
			f |= FieldResource | FieldAttrs
		}
	}
	if f == 0 {
		f = FieldSeverity // something, or 0 would mean all
	}
	return f
}

// variance is the population variance of v; 0 of none.
func variance(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	var sum, sq float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	return sq / float64(len(v))
}

// quantile is the φ-quantile of v, interpolated as Prometheus does.
func quantile(q float64, v []float64) float64 {
	if len(v) == 0 || math.IsNaN(q) {
		return math.NaN()
	}
	if q < 0 {
		return math.Inf(-1)
	}
	if q > 1 {
		return math.Inf(1)
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := q * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(s)-1)
	w := rank - float64(lo)
	return s[lo]*(1-w) + s[hi]*w
}
