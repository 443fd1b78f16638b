package lokiapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/querybudget"
)

// Query is a LogQL query to evaluate.
type Query struct {
	Expr       logql.Expr
	Tenant     string
	Start, End time.Time // a range query's; an instant query's: both its time
	Step       time.Duration
	Instant    bool
	Limit      int  // lines of a log query
	Forward    bool // oldest lines first (else newest first)
}

// Entry is a log line of a stream.
type Entry struct {
	Time int64 // ns
	Line string
}

// Stream is a label set and its lines.
type Stream struct {
	Labels  Labels
	Entries []Entry
}

// Point is a sample: time in ms since the epoch.
type Point struct {
	T int64
	V float64
}

// Series is a label set and its samples.
type Series struct {
	Labels Labels
	Points []Point
}

// Result is what a query gives: streams (a log query), a matrix (a
// range query's metric), a vector (an instant one's), or a scalar.
type Result struct {
	Type    string // "streams", "matrix", "vector", "scalar"
	Streams []Stream
	Series  []Series
	Scalar  Point
	Stats   Stats
}

// Stats are what a query read.
type Stats struct {
	Lines    int64 // log records read
	Bytes    int64 // of their lines
	Returned int64 // lines or samples returned
}

// ErrLimit wraps the errors of queries past a limit.
var ErrLimit = errors.New("query past a limit")

// Engine evaluates LogQL over a lakeread.Reader.
type Engine struct {
	r         *lakeread.Reader
	maxSeries int
	maxPoints int
}

// NewEngine returns an engine over r; maxSeries bounds the series of a
// metric query's steps, maxPoints the samples of a result.
func NewEngine(r *lakeread.Reader, maxSeries, maxPoints int) *Engine {
	return &Engine{r: r, maxSeries: maxSeries, maxPoints: maxPoints}
}

// Exec evaluates q.
func (e *Engine) Exec(ctx context.Context, q Query) (Result, error) {
	ev := &evaluator{e: e, q: q, tk: querybudget.FromContext(ctx)}
	if lq, ok := q.Expr.(*logql.LogQuery); ok {
		streams, err := ev.logs(ctx, lq)
		return Result{Type: "streams", Streams: streams, Stats: ev.stats}, err
	}
	if q.Instant {
		ev.steps = []int64{q.Start.UnixNano()}
	} else {
		if q.Step <= 0 {
			return Result{}, fmt.Errorf("the step must be positive")
		}
		n := int64(q.End.Sub(q.Start)/q.Step) + 1
		if n > int64(e.maxPoints) {
			return Result{}, fmt.Errorf("%w: %d steps, more than %d: raise the step", ErrLimit, n, e.maxPoints)
		}
		for t := q.Start; !t.After(q.End); t = t.Add(q.Step) {
			ev.steps = append(ev.steps, t.UnixNano())
		}
	}
	v, err := ev.eval(ctx, q.Expr, nil)
	if err != nil {
		return Result{}, err
	}
	res := Result{Stats: ev.stats}
	if v.scalar != nil {
		if q.Instant {
			return Result{Type: "scalar", Scalar: Point{q.Start.UnixMilli(), v.scalar[0]}, Stats: ev.stats}, nil
		}
		// A scalar over a range is a series without labels.
		s := Series{}
		for i, t := range ev.steps {
			s.Points = append(s.Points, Point{t / 1e6, v.scalar[i]})
		}
		return Result{Type: "matrix", Series: []Series{s}, Stats: ev.stats}, nil
	}
	res.Type = "matrix"
	if q.Instant {
		res.Type = "vector"
	}
	for _, s := range v.series {
		out := Series{Labels: s.labels}
		for i, t := range ev.steps {
			if s.has[i] {
				out.Points = append(out.Points, Point{t / 1e6, s.vals[i]})
			}
		}
		if len(out.Points) > 0 {
			res.Series = append(res.Series, out)
		}
	}
	if q.Instant {
		if vagg, ok := q.Expr.(*logql.VectorAggregation); ok && (vagg.Op == "sort" || vagg.Op == "sort_desc") {
			slices.SortStableFunc(res.Series, func(a, b Series) int {
				c := cmp.Compare(a.Points[0].V, b.Points[0].V)
				if vagg.Op == "sort_desc" {
					return -c
				}
				return c
			})
			return res, nil
		}
	}
	slices.SortFunc(res.Series, func(a, b Series) int { return strings.Compare(a.Labels.key(), b.Labels.key()) })
	return res, nil
}

type evaluator struct {
	e     *Engine
	q     Query
	steps []int64 // ns
	stats Stats
	// tk is the query's ticket (querybudget), charged with what the
	// answer holds: lines, series and their steps. It is given back
	// whole when the query ends.
	tk *querybudget.Ticket
}

// selection is a log query compiled: what the lake reader can filter, and
// the rest.
type selection struct {
	lq       lakeread.LogQuery
	matchers []func(*entry) bool
	stages   []stage
}

func (ev *evaluator) compile(q *logql.LogQuery, start, end time.Time) (*selection, error) {
	s := &selection{lq: lakeread.LogQuery{Start: start, End: end}}
	var svc []func(string) bool
	for _, m := range q.Matchers {
		test, err := matcherTest(m)
		if err != nil {
			return nil, err
		}
		if m.Name == "service_name" {
			svc = append(svc, test)
			continue
		}
		name := m.Name
		if name == "level" {
			// level, as Grafana names it, is detected_level unless a
			// record has a label of its own called level.
			s.matchers = append(s.matchers, func(e *entry) bool {
				if v, ok := e.labels["level"]; ok {
					return test(v)
				}
				return test(e.labels["detected_level"])
			})
			continue
		}
		s.matchers = append(s.matchers, func(e *entry) bool { return test(e.labels[name]) })
	}
	if len(svc) > 0 {
		s.lq.Service = func(v string) bool {
			for _, t := range svc {
				if !t(v) {
					return false
				}
			}
			return true
		}
	}
	// |= filters before any other stage are tested on the body column.
	for _, st := range q.Pipeline {
		f, ok := st.(*logql.LineFilter)
		if !ok {
			break
		}
		if f.Op == logql.LineContains && len(f.Values) == 1 {
			s.lq.Contains = append(s.lq.Contains, []byte(f.Values[0]))
		}
	}
	var err error
	s.stages, err = compilePipeline(q.Pipeline)
	return s, err
}

// each calls fn with each entry of the selection that passes the
// pipeline; fn returns false to stop.
func (ev *evaluator) each(ctx context.Context, s *selection, fn func(*entry) bool) error {
	return ev.e.r.Logs(ctx, ev.q.Tenant, s.lq, func(r *lakeread.LogRecord) bool {
		ev.stats.Lines++
		ev.stats.Bytes += int64(len(r.Line))
		e := &entry{ts: r.Time, line: r.Line, labels: map[string]string{}, stream: streamLabels(r)}
		for _, l := range e.stream {
			e.set(l.Name, l.Value)
		}
		for _, l := range metadata(r) {
			if _, ok := e.labels[l.Name]; !ok {
				e.set(l.Name, l.Value)
			}
		}
		for _, m := range s.matchers {
			if !m(e) {
				return true
			}
		}
		for _, st := range s.stages {
			if !st(e) {
				return true
			}
		}
		return fn(e)
	})
}

// logs evaluates a log query: the newest (or oldest) Limit lines of
// [Start, End], grouped into streams by their labels.
func (ev *evaluator) logs(ctx context.Context, q *logql.LogQuery) ([]Stream, error) {
	s, err := ev.compile(q, ev.q.Start, ev.q.End.Add(1))
	if err != nil {
		return nil, err
	}
	if ev.q.Forward {
		s.lq.Oldest = true
	} else {
		s.lq.Newest = true
	}
	limit := ev.q.Limit
	byKey := map[string]*Stream{}
	var order []string
	n := 0
	var chargeErr error
	err = ev.each(ctx, s, func(e *entry) bool {
		ls := e.sorted()
		k := ls.key()
		st := byKey[k]
		if st == nil {
			st = &Stream{Labels: ls}
			byKey[k] = st
			order = append(order, k)
		}
		if cerr := ev.tk.Charge(int64(len(e.line)) + int64(unsafe.Sizeof(Entry{}))); cerr != nil {
			chargeErr = cerr
			return false
		}
		st.Entries = append(st.Entries, Entry{Time: e.ts, Line: string(e.line)})
		n++
		return limit <= 0 || n < limit
	})
	out := make([]Stream, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	ev.stats.Returned = int64(n)
	return out, cmp.Or(err, chargeErr)
}

// value is a metric expression's value: a scalar per step, or series.
type value struct {
	scalar []float64
	series []*series
}

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
		return ev.rangeAgg(ctx, x, group)
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
		return ev.vectorAgg(x, inner)
	case *logql.BinaryOp:
		l, err := ev.eval(ctx, x.L, nil)
		if err != nil {
			return value{}, err
		}
		r, err := ev.eval(ctx, x.R, nil)
		if err != nil {
			return value{}, err
		}
		return ev.binary(x, l, r)
	case *logql.LogQuery:
		return value{}, fmt.Errorf("a log query where a metric is needed: wrap it in count_over_time or rate")
	}
	return value{}, fmt.Errorf("unsupported expression %s", x)
}

// acc accumulates the samples of one series and step of a range
// aggregation.
type acc struct {
	n             int64
	sum, min, max float64
	firstT, lastT int64
	first, last   float64
	vals          []float64 // quantile, stddev, stdvar
}

// sumPushable are the range aggregations a sum may group at once.
var sumPushable = map[string]bool{"count_over_time": true, "rate": true, "bytes_over_time": true, "bytes_rate": true, "sum_over_time": true}

func (ev *evaluator) rangeAgg(ctx context.Context, x *logql.RangeAggregation, group *logql.Grouping) (value, error) {
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
	if !sumPushable[x.Op] {
		group = nil
	}
	keep := groupKeep(group)
	if x.Grouping != nil {
		keep = groupKeep(x.Grouping)
	}
	s.lq.Fields = fieldsFor(x, s, group)
	byKey := map[string][]*acc{}
	seriesLabels := map[string]Labels{}
	needVals := x.Op == "quantile_over_time" || x.Op == "stddev_over_time" || x.Op == "stdvar_over_time"
	step := int64(ev.q.Step)
	if ev.q.Instant || step <= 0 {
		step = 1
	}
	var overErr error
	// add adds a sample of value v at time ets to the series ls.
	add := func(ls Labels, ets int64, v float64) bool {
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
			a.n++
			a.sum += v
			a.min, a.max = min(a.min, v), max(a.max, v)
			if ets < a.firstT {
				a.firstT, a.first = ets, v
			}
			if ets >= a.lastT {
				a.lastT, a.last = ets, v
			}
			if needVals {
				if err := ev.tk.Charge(8); err != nil {
					overErr = err
					return false
				}
				a.vals = append(a.vals, v)
			}
		}
		return true
	}
	if s.lq.Fields != lakeread.AllLogFields {
		// The few fields the grouping needs, and line filters alone: no
		// labels map per record.
		scratch := &entry{labels: map[string]string{}}
		bytesOp := x.Op == "bytes_over_time" || x.Op == "bytes_rate"
		err = ev.e.r.Logs(ctx, ev.q.Tenant, s.lq, func(r *lakeread.LogRecord) bool {
			ev.stats.Lines++
			ev.stats.Bytes += int64(len(r.Line))
			scratch.line = r.Line
			for _, st := range s.stages {
				if !st(scratch) {
					return true
				}
			}
			v := 1.0
			if bytesOp {
				v = float64(len(r.Line))
			}
			ls := make([]Label, 0, len(group.Labels))
			for _, name := range group.Labels {
				if val, ok := recordLabel(r, name); ok {
					ls = append(ls, Label{name, val})
				}
			}
			return add(labelsOf(ls), r.Time, v)
		})
	} else {
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
			if x.Op == "bytes_over_time" || x.Op == "bytes_rate" {
				v = float64(len(e.line))
			}
			return add(keep(e.sorted()), e.ts, v)
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
			if a == nil {
				continue
			}
			var v float64
			switch x.Op {
			case "count_over_time":
				v = float64(a.n)
			case "rate":
				v = float64(a.n) / secs
			case "bytes_over_time", "sum_over_time":
				v = a.sum
			case "bytes_rate", "rate_counter":
				v = a.sum / secs
			case "absent_over_time":
				continue
			case "avg_over_time":
				v = a.sum / float64(a.n)
			case "min_over_time":
				v = a.min
			case "max_over_time":
				v = a.max
			case "first_over_time":
				v = a.first
			case "last_over_time":
				v = a.last
			case "stdvar_over_time", "stddev_over_time":
				v = variance(a.vals)
				if x.Op == "stddev_over_time" {
					v = math.Sqrt(v)
				}
			case "quantile_over_time":
				v = quantile(*x.Param, a.vals)
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
		return value{series: out}, nil
	}
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
			var v float64
			switch x.Op {
			case "sum", "avg":
				for _, f := range vals {
					v += f
				}
				if x.Op == "avg" {
					v /= float64(len(vals))
				}
			case "min":
				v = slices.Min(vals)
			case "max":
				v = slices.Max(vals)
			case "count":
				v = float64(len(vals))
			case "stddev":
				v = math.Sqrt(variance(vals))
			case "stdvar":
				v = variance(vals)
			default:
				return value{}, fmt.Errorf("unsupported aggregation %s", x.Op)
			}
			o.vals[i], o.has[i] = v, true
		}
		out = append(out, o)
	}
	return value{series: out}, nil
}

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

// arith returns the operation of op: its value and, for comparisons,
// whether it holds (the value is then 1 or 0).
func arith(op string) func(a, b float64) (float64, bool) {
	b2f := func(b bool) (float64, bool) {
		if b {
			return 1, true
		}
		return 0, false
	}
	switch op {
	case "+":
		return func(a, b float64) (float64, bool) { return a + b, true }
	case "-":
		return func(a, b float64) (float64, bool) { return a - b, true }
	case "*":
		return func(a, b float64) (float64, bool) { return a * b, true }
	case "/":
		return func(a, b float64) (float64, bool) { return a / b, true }
	case "%":
		return func(a, b float64) (float64, bool) { return math.Mod(a, b), true }
	case "^":
		return func(a, b float64) (float64, bool) { return math.Pow(a, b), true }
	case "==":
		return func(a, b float64) (float64, bool) { return b2f(a == b) }
	case "!=":
		return func(a, b float64) (float64, bool) { return b2f(a != b) }
	case ">":
		return func(a, b float64) (float64, bool) { return b2f(a > b) }
	case ">=":
		return func(a, b float64) (float64, bool) { return b2f(a >= b) }
	case "<":
		return func(a, b float64) (float64, bool) { return b2f(a < b) }
	case "<=":
		return func(a, b float64) (float64, bool) { return b2f(a <= b) }
	}
	return func(a, b float64) (float64, bool) { return 0, true } // and, or, unless: vectors only
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

func (ev *evaluator) vectorBinary(x *logql.BinaryOp, l, r []*series, op func(a, b float64) (float64, bool), isCmp bool) (value, error) {
	m := x.Matching
	switch x.Op {
	case "and", "or", "unless":
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
		return value{series: out}, nil
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

// fieldsFor returns the record fields a range aggregation needs: all of
// them unless its only stages are line filters, its only matchers are on
// service_name, and an enclosing sum keeps a few labels; then those
// labels' fields (and the line for line filters and the bytes
// aggregations).
func fieldsFor(x *logql.RangeAggregation, s *selection, group *logql.Grouping) lakeread.LogFields {
	if group == nil || group.Without || x.Grouping != nil || x.Range.Unwrap != nil || len(x.Range.PostFilters) > 0 || len(s.matchers) > 0 {
		return lakeread.AllLogFields
	}
	var f lakeread.LogFields
	for _, st := range x.Range.Query.Pipeline {
		if _, ok := st.(*logql.LineFilter); !ok {
			return lakeread.AllLogFields
		}
		f |= lakeread.FieldLine
	}
	if x.Op == "bytes_over_time" || x.Op == "bytes_rate" {
		f |= lakeread.FieldLine
	}
	for _, l := range group.Labels {
		switch {
		case l == "service_name":
		case l == "severity_text" || l == "severity_number" || l == "detected_level":
			f |= lakeread.FieldSeverity
		case l == "scope_name" || l == "scope_version":
			f |= lakeread.FieldScope
		case l == "trace_id" || l == "span_id":
			f |= lakeread.FieldIDs
		default: // a resource attribute (label or metadata) or a record's
			f |= lakeread.FieldResource | lakeread.FieldAttrs
		}
	}
	if f == 0 {
		f = lakeread.FieldSeverity // something, or 0 would mean all
	}
	return f
}

// recordLabel is the value of label name of a record, as the labels of
// each would give it: index labels, then the record's attributes, then
// the other resource attributes, then scope, severity and ids.
func recordLabel(r *lakeread.LogRecord, name string) (string, bool) {
	if name == "service_name" {
		return r.Service, true
	}
	for _, kv := range r.Resource {
		if indexKeys[kv.Key] && LabelName(kv.Key) == name {
			return kv.Value, true
		}
	}
	for _, kv := range r.Attrs {
		if LabelName(kv.Key) == name {
			return kv.Value, true
		}
	}
	for _, kv := range r.Resource {
		if !indexKeys[kv.Key] && LabelName(kv.Key) == name {
			return kv.Value, true
		}
	}
	switch name {
	case "scope_name":
		return r.ScopeName, r.ScopeName != ""
	case "scope_version":
		return r.ScopeVersion, r.ScopeVersion != ""
	case "severity_text":
		return r.SeverityText, r.SeverityText != ""
	case "severity_number":
		return strconv.Itoa(int(r.SeverityNumber)), r.SeverityNumber != 0
	case "trace_id":
		return r.TraceID, r.TraceID != ""
	case "span_id":
		return r.SpanID, r.SpanID != ""
	case "detected_level":
		return detectedLevel(r), true
	}
	return "", false
}
