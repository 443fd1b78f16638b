package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// TestMetrics: each metrics function over ten traces 10 s apart (trace n:
// web, 100+n ms, calling db, 10 ms), steps of 30 s over 100 s; the
// expected series worked out by hand.
func TestMetrics(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	src := &memSource{}
	for n := range 10 {
		td := ptrace.NewTraces()
		for i, svc := range []string{"web", "db"} {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", svc)
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(n), 7})
			sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if i == 1 {
				sp.SetParentSpanID(pcommon.SpanID{1})
			}
			start := base.Add(time.Duration(n) * 10 * time.Second)
			d := 10 * time.Millisecond
			if i == 0 {
				d = time.Duration(100+n) * time.Millisecond
			}
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(d)))
		}
		src.traces = append(src.traces, td)
	}
	rng := Range{Start: base, End: base.Add(100 * time.Second), Step: 30 * time.Second}
	ms := func(step int) int64 { return base.Add(time.Duration(step) * 30 * time.Second).UnixMilli() }
	show := func(ss []Series) string {
		out := ""
		for _, s := range ss {
			out += "{"
			for _, l := range s.Labels {
				out += l.Name + "=" + l.Value.String() + " "
			}
			out += "}"
			for _, p := range s.Samples {
				out += fmt.Sprintf(" %d:%.6g", (p.TimestampMs-ms(0))/30000, p.Value)
			}
			out += ";"
		}
		return out
	}
	for _, c := range []struct{ q, want string }{
		{`{ resource.service.name = "db" } | count_over_time()`, "{} 0:3 1:3 2:3 3:1;"},
		{`{ } | rate() by (resource.service.name)`, `{resource.service.name="db" } 0:0.1 1:0.1 2:0.1 3:0.0333333;{resource.service.name="web" } 0:0.1 1:0.1 2:0.1 3:0.0333333;`},
		{`{ resource.service.name = "web" } | max_over_time(duration)`, "{} 0:0.102 1:0.105 2:0.108 3:0.109;"},
		{`{ resource.service.name = "web" } | min_over_time(duration)`, "{} 0:0.1 1:0.103 2:0.106 3:0.109;"},
		{`{ resource.service.name = "web" } | avg_over_time(duration)`, "{} 0:0.101 1:0.104 2:0.107 3:0.109;"},
		{`{ resource.service.name = "web" } | sum_over_time(duration)`, "{} 0:0.303 1:0.312 2:0.321 3:0.109;"},
		{`{ resource.service.name = "web" } | quantile_over_time(duration, 0.5, 1)`, "{p=0.5 } 0:0.101 1:0.104 2:0.107 3:0.109;{p=1.0 } 0:0.102 1:0.105 2:0.108 3:0.109;"},
		{`{ resource.service.name = "db" } | histogram_over_time(duration)`, "{__bucket=0.015625 } 0:3 1:3 2:3 3:1;"},
		{`{ resource.service.name = "web" } > { } | count_over_time() by (resource.service.name)`, `{resource.service.name="db" } 0:3 1:3 2:3 3:1;`},
		{`{ name = "nothing" } | rate()`, ""},
	} {
		parsed, err := traceql.Parse(c.q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 100})
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if s := show(got); s != c.want {
			t.Errorf("%s\n got  %s\n want %s", c.q, s, c.want)
		}
	}
	parsed, _ := traceql.Parse(`{ } | rate()`)
	var tm *TooManyTracesError
	if _, err := Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 5}); !errors.As(err, &tm) || !tm.TooLarge() {
		t.Errorf("over the trace limit: %v", err)
	}
	parsed, _ = traceql.Parse(`{ } | rate()`)
	if _, err := Metrics(context.Background(), src, "t", parsed, Range{Start: base, End: base, Step: time.Second}, MetricsLimits{MaxTraces: 100}); err == nil {
		t.Error("an empty range answered")
	}
	if q := quantile([]float64{1, 2, 3, 4}, 0.5); math.Abs(q-2.5) > 1e-12 {
		t.Errorf("quantile = %v", q)
	}
}

// spanMem is memSource as a SpanSource: SpanPoints walks its spans with
// a filter of its own.
type spanMem struct {
	*memSource
	calls int
}

func (m *spanMem) SpanPoints(_ context.Context, _ string, f SpanFilter, fn func([]SpanPoint) error) error {
	m.calls++
	var pts []SpanPoint
	for _, td := range m.traces {
		for _, rs := range td.ResourceSpans().All() {
			svc := ""
			if v, ok := rs.Resource().Attributes().Get("service.name"); ok && v.Type() == pcommon.ValueTypeStr {
				svc = v.Str()
			}
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					st, d := int64(sp.StartTimestamp()), int64(sp.EndTimestamp())-int64(sp.StartTimestamp())
					if st < f.Start.UnixNano() || st >= f.End.UnixNano() || f.Service != "" && svc != f.Service || f.Name != "" && sp.Name() != f.Name ||
						f.Kind >= 0 && int32(sp.Kind()) != f.Kind || f.Status >= 0 && int32(sp.Status().Code()) != f.Status ||
						d < f.MinDur || f.MaxDur > 0 && d > f.MaxDur || !intsHold(sp.Attributes(), f.Ints) {
						continue
					}
					pts = append(pts, SpanPoint{Service: []byte(svc), Name: []byte(sp.Name()), Kind: int32(sp.Kind()), Status: int32(sp.Status().Code()),
						Start: st, Duration: d, End: st + d, TraceID: [16]byte(sp.TraceID())})
				}
			}
		}
	}
	return fn(pts)
}

// TestMetricsSpanwise: span-local metrics queries (a filter of service,
// name, kind, status and duration bounds; by() of those) read spans one
// at a time from a SpanSource, with no bound on the traces, and answer
// what the same queries answer over whole traces; other queries do not
// use it.
func TestMetricsSpanwise(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	rnd := rand.New(rand.NewPCG(3, 4))
	src := &memSource{}
	services := []string{"web", "db", "cache", ""}
	names := []string{"a", "b", "c"}
	for n := range 300 {
		td := ptrace.NewTraces()
		for i := range 1 + rnd.IntN(4) {
			rs := td.ResourceSpans().AppendEmpty()
			if s := services[rnd.IntN(len(services))]; s != "" {
				rs.Resource().Attributes().PutStr("service.name", s)
			}
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(n), byte(n >> 8), 9})
			sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if i > 0 {
				sp.SetParentSpanID(pcommon.SpanID{1})
			}
			sp.SetName(names[rnd.IntN(len(names))])
			sp.SetKind(ptrace.SpanKind(rnd.IntN(6)))
			sp.Status().SetCode(ptrace.StatusCode(rnd.IntN(3)))
			start := base.Add(time.Duration(rnd.Int64N(int64(100 * time.Second))))
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(rnd.Int64N(int64(200 * time.Millisecond))))))
		}
		src.traces = append(src.traces, td)
	}
	rng := Range{Start: base.Add(10 * time.Second), End: base.Add(95 * time.Second), Step: 20 * time.Second}
	show := func(ss []Series) string {
		out := ""
		for _, s := range ss {
			out += fmt.Sprintf("%v", s.Labels)
			for _, p := range s.Samples {
				out += fmt.Sprintf(" %d:%.9g", p.TimestampMs, p.Value)
			}
			out += ";"
		}
		return out
	}
	spans := &spanMem{memSource: src}
	for _, c := range []struct {
		q     string
		local bool
	}{
		{`{ } | rate() by (resource.service.name)`, true},
		{`{ status = error } | count_over_time() by (kind)`, true},
		{`{ kind = server && duration > 50ms } | avg_over_time(duration) by (name)`, true},
		{`{ resource.service.name = "web" && name = "a" } | quantile_over_time(duration, 0.5, 0.99)`, true},
		{`{ duration <= 30ms && status = ok } | histogram_over_time(duration) by (status)`, true},
		{`{ true } | sum_over_time(duration) by (kind, resource.service.name)`, true},
		{`{ duration < 20ms } | max_over_time(duration)`, true},
		{`{ kind = unspecified && duration >= 10ms } | min_over_time(duration) by (name)`, true},
		{`{ resource.service.name = "db" } > { } | count_over_time()`, false},
		{`{ name != "a" } | rate()`, false},
		{`{ } | rate() by (rootName)`, false},
		{`{ } | count() > 1 | rate()`, false},
	} {
		parsed, err := traceql.Parse(c.q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 1000})
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		before := spans.calls
		limit := 1000
		if c.local {
			limit = 1 // whole traces would be past it
		}
		got, err := Metrics(context.Background(), spans, "t", parsed, rng, MetricsLimits{MaxTraces: limit})
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if used := spans.calls > before; used != c.local {
			t.Errorf("%s: span points used %v, want %v", c.q, used, c.local)
		}
		if len(want) == 0 {
			t.Errorf("%s: no series: the test compares nothing", c.q)
		}
		if g, w := show(got), show(want); g != w {
			t.Errorf("%s\n spans  %s\n traces %s", c.q, g, w)
		}
	}
}

// intsHold is a typed integer column's reading of conditions cs: only
// integer values hold.
func intsHold(attrs pcommon.Map, cs []IntCond) bool {
	for _, c := range cs {
		v, ok := attrs.Get(c.Key)
		if !ok || v.Type() != pcommon.ValueTypeInt {
			return false
		}
		x := v.Int()
		if !map[string]bool{"=": x == c.Value, "!=": x != c.Value, ">": x > c.Value, ">=": x >= c.Value, "<": x < c.Value, "<=": x <= c.Value}[c.Op] {
			return false
		}
	}
	return true
}

// spanwiseTraces are 300 traces of 1 to 4 spans of three services, kinds,
// statuses and codes (integers, strings or none), started in 20 slots 5 s
// apart from base.
func spanwiseTraces(base time.Time) *memSource {
	rnd := rand.New(rand.NewPCG(5, 6))
	src := &memSource{}
	for n := range 300 {
		td := ptrace.NewTraces()
		// A trace's spans start within 2 s of a multiple of 5 s: each
		// trace lies wholly in or out of the range searched, whose bounds
		// are multiples of 5 s (the two searches differ only for traces
		// that straddle a bound: spanSearch).
		at := base.Add(time.Duration(rnd.IntN(20)) * 5 * time.Second)
		for i := range 1 + rnd.IntN(4) {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", []string{"web", "db", "cache"}[rnd.IntN(3)])
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(n), byte(n >> 8), 9})
			sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if i > 0 {
				sp.SetParentSpanID(pcommon.SpanID{1})
			}
			sp.SetKind(ptrace.SpanKind(rnd.IntN(6)))
			sp.Status().SetCode(ptrace.StatusCode(rnd.IntN(3)))
			switch rnd.IntN(4) {
			case 0: // no code
			case 1:
				sp.Attributes().PutStr("code", "503") // a string: compares with no integer
			default:
				sp.Attributes().PutInt("code", int64(200+rnd.IntN(400)))
			}
			start := at.Add(time.Duration(rnd.Int64N(int64(2 * time.Second))))
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(rnd.Int64N(int64(200 * time.Millisecond))))))
		}
		src.traces = append(src.traces, td)
	}
	return src
}

// TestSearchSpanwise: a search whose filter holds a span.key op integer
// condition (and spanLocal's others) reads the traces of the spans a
// SpanSource selects, and finds the traces the evaluator finds over
// every candidate; others search by candidates.
func TestSearchSpanwise(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	src := spanwiseTraces(base)
	spans := &spanMem{memSource: src}
	lim := SearchLimits{Limit: 1000, MaxCandidates: 10000}
	for _, c := range []struct {
		q     string
		local bool
	}{
		{`{ span.code >= 500 }`, true},
		{`{ span.code = 404 || span.code = 200 }`, false},
		{`{ span.code != 200 && kind = server && duration > 50ms }`, true},
		{`{ resource.service.name = "web" && span.code < 300 && status = error }`, true},
		{`{ span.code <= 250 && span.code > 210 }`, true},
		{`{ .code >= 500 }`, false},
		{`{ span.code >= 500 } >> { }`, false},
	} {
		parsed, err := traceql.Parse(c.q)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Compile(parsed)
		if err != nil {
			t.Fatal(err)
		}
		from, to := base.Add(10*time.Second), base.Add(90*time.Second)
		want, err := Search(context.Background(), src, "t", q, from, to, lim)
		if err != nil {
			t.Fatal(err)
		}
		before := spans.calls
		got, err := Search(context.Background(), spans, "t", q, from, to, lim)
		if err != nil {
			t.Fatal(err)
		}
		if used := spans.calls > before; used != c.local {
			t.Errorf("%s: span points used %v, want %v", c.q, used, c.local)
		}
		ids := func(r SearchResult) []string {
			var out []string
			for _, m := range r.Matches {
				out = append(out, fmt.Sprintf("%x %d", m.ID, len(m.Spansets)))
			}
			slices.Sort(out)
			return out
		}
		if len(want.Matches) == 0 {
			t.Errorf("%s: no match: the test compares nothing", c.q)
		}
		if g, w := ids(got), ids(want); !slices.Equal(g, w) {
			t.Errorf("%s: %d traces by spans, %d by candidates", c.q, len(g), len(w))
		}
	}
}

// newestMem is spanMem as a NewestSource: it leaves out a random part of
// the spans that end at or before the n-th latest end it has.
type newestMem struct {
	*spanMem
	rnd          *rand.Rand
	newest, full int // calls that left spans out, and that did not
}

func (m *newestMem) NewestSpanPoints(ctx context.Context, tenant string, f SpanFilter, n int, fn func([]SpanPoint) error) (int64, error) {
	var all []SpanPoint
	if err := m.SpanPoints(ctx, tenant, f, func(pts []SpanPoint) error { all = append(all, pts...); return nil }); err != nil {
		return 0, err
	}
	ends := make([]int64, len(all))
	for i := range all {
		ends[i] = all[i].End
	}
	slices.Sort(ends)
	if n <= 0 || n >= len(ends) {
		m.full++
		return math.MinInt64, fn(all)
	}
	m.newest++
	cutoff := ends[len(ends)-n]
	var kept []SpanPoint
	for _, p := range all {
		if p.End > cutoff || m.rnd.IntN(3) == 0 {
			kept = append(kept, p)
		}
	}
	return cutoff, fn(kept)
}

// TestSearchNewest: a span-local search over a NewestSource (which gives
// the spans that end after a cutoff and some others) finds the same
// traces, in the same order, as over every span: with limits that the
// newest spans answer and limits they do not, and a Keep that refuses
// some traces.
func TestSearchNewest(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	src := spanwiseTraces(base)
	plain := &spanMem{memSource: src}
	newest := &newestMem{spanMem: &spanMem{memSource: src}, rnd: rand.New(rand.NewPCG(7, 8))}
	from, to := base.Add(10*time.Second), base.Add(90*time.Second)
	odd := func(t *Trace) bool { return len(t.Spans)%2 == 1 }
	rare := func(t *Trace) bool { return len(t.Spans) >= 3 && t.Spans[0].TraceID[0]%3 == 0 }
	early, all := 0, 0
	for _, q := range []string{`{ span.code >= 500 }`, `{ span.code != 200 && kind = server }`, `{ span.code < 300 && status = error }`} {
		parsed, err := traceql.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		cq, err := Compile(parsed)
		if err != nil {
			t.Fatal(err)
		}
		for _, lim := range []SearchLimits{{Limit: 1, MaxCandidates: 100}, {Limit: 3, MaxCandidates: 100}, {Limit: 10, MaxCandidates: 100},
			{Limit: 5, MaxCandidates: 100, Keep: odd}, {Limit: 20, MaxCandidates: 100, Keep: odd}, {Limit: 3, MaxCandidates: 4, Keep: odd},
			{Limit: 5, MaxCandidates: 1000, Keep: rare}, {Limit: 1000, MaxCandidates: 10000}} {
			want, err := Search(context.Background(), plain, "t", cq, from, to, lim)
			if err != nil {
				t.Fatal(err)
			}
			calls, left, asked := newest.calls, newest.newest, newest.newest+newest.full
			got, err := Search(context.Background(), newest, "t", cq, from, to, lim)
			if err != nil {
				t.Fatal(err)
			}
			switch direct := newest.calls - calls - (newest.newest + newest.full - asked); {
			case direct > 0:
				all++ // every span read after the newest
			case newest.newest > left:
				early++ // answered from the newest spans alone
			}
			show := func(r SearchResult) string {
				var b []byte
				for _, m := range r.Matches {
					b = fmt.Appendf(b, "%x/%d ", m.ID[:2], len(m.Spansets))
				}
				return fmt.Sprintf("%s inspected %d truncated %v", b, r.Inspected, r.Truncated)
			}
			if len(want.Matches) == 0 {
				t.Errorf("%s %d: no match: the test compares nothing", q, lim.Limit)
			}
			if g, w := show(got), show(want); g != w {
				t.Errorf("%s limit %d candidates %d keep %v:\n got  %s\n want %s", q, lim.Limit, lim.MaxCandidates, lim.Keep != nil, g, w)
			}
		}
	}
	if early == 0 || all == 0 {
		t.Errorf("newest spans answered %d searches alone, %d read every span after them: both ways not tested", early, all)
	}
}

// TestMetricsLimits: past MaxSeries a metrics query is a
// TooManySeriesError, and the values it holds are charged as they grow
// (a query whose charge fails stops with that error), over whole traces
// and over spans alike.
func TestMetricsLimits(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	src := &memSource{}
	for n := range 2000 {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", n%50))
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(n), byte(n >> 8), 3})
		sp.SetSpanID(pcommon.SpanID{1})
		start := base.Add(time.Duration(n) * 25 * time.Millisecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		src.traces = append(src.traces, td)
	}
	rng := Range{Start: base, End: base.Add(time.Minute), Step: time.Second}
	boom := errors.New("no memory left")
	for _, s := range []Source{src, &spanMem{memSource: src}} {
		parsed, _ := traceql.Parse(`{ } | rate() by (resource.service.name)`)
		var tm *TooManySeriesError
		if _, err := Metrics(context.Background(), s, "t", parsed, rng, MetricsLimits{MaxTraces: 5000, MaxSeries: 49}); !errors.As(err, &tm) || !tm.TooLarge() {
			t.Errorf("%T: 50 series past 49: %v", s, err)
		}
		if got, err := Metrics(context.Background(), s, "t", parsed, rng, MetricsLimits{MaxTraces: 5000, MaxSeries: 50}); err != nil || len(got) != 50 {
			t.Errorf("%T: 50 series within 50: %d, %v", s, len(got), err)
		}
		charged := int64(0)
		parsed, _ = traceql.Parse(`{ } | quantile_over_time(duration, 0.5) by (resource.service.name)`)
		_, err := Metrics(context.Background(), s, "t", parsed, rng, MetricsLimits{MaxTraces: 5000, Charge: func(n int64) error {
			charged += n
			if charged > 64<<10 {
				return boom
			}
			return nil
		}})
		if !errors.Is(err, boom) {
			t.Errorf("%T: charges past the ticket: %v (charged %d)", s, err, charged)
		}
	}
}

// TestSpanLocalCounted: a rate or count over a grid of whole minutes,
// split by fields counts hold, may be answered from counts; a value of
// the spans, a cut minute or a name may not.
func TestSpanLocalCounted(t *testing.T) {
	whole := Range{Start: time.Unix(1_700_000_040, 0), End: time.Unix(1_700_003_640, 0), Step: time.Minute}
	cut := whole
	cut.Start = cut.Start.Add(time.Second)
	odd := whole
	odd.Step = 90 * time.Second
	for _, c := range []struct {
		q    string
		rng  Range
		want bool
	}{
		{`{ } | rate() by (resource.service.name)`, whole, true},
		{`{ status = error } | count_over_time() by (kind)`, whole, true},
		{`{ resource.service.name = "a" && kind = server } | rate()`, whole, true},
		{`{ } | rate() by (resource.service.name)`, cut, false},
		{`{ } | rate()`, odd, false},
		{`{ } | avg_over_time(duration)`, whole, false},
		{`{ } | rate() by (name)`, whole, true}, // lakeread refuses counts for a name (Need)
	} {
		parsed, err := traceql.Parse(c.q)
		if err != nil {
			t.Fatal(err)
		}
		f, ok := spanLocal(parsed, c.rng)
		if !ok || f.Counted != c.want {
			t.Errorf("%s over %v: local %v, counted %v, want %v", c.q, c.rng, ok, f.Counted, c.want)
		}
	}
}

// TestSelectFirst: the k first of a quickselect are the k first of a
// full sort, ties and all.
func TestSelectFirst(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	cmp := func(a, b [2]int) int {
		if a[0] != b[0] {
			return b[0] - a[0] // greater first
		}
		return a[1] - b[1]
	}
	for range 2000 {
		n := 1 + rnd.IntN(60)
		s := make([][2]int, n)
		for i := range s {
			s[i] = [2]int{rnd.IntN(5), i}
		}
		k := 1 + rnd.IntN(n)
		want := slices.Clone(s)
		slices.SortFunc(want, cmp)
		selectFirst(s, k, cmp)
		got := slices.Clone(s[:k])
		slices.SortFunc(got, cmp)
		if !slices.Equal(got, want[:k]) {
			t.Fatalf("n %d k %d: %v, want %v", n, k, got, want[:k])
		}
	}
}
