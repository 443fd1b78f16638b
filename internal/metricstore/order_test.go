package metricstore

import (
	"cmp"
	"context"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/wirehouse/wirehouse/internal/syncbuf"
)

// sample is one stored sample: its time in ms and its float value (for a
// native histogram, its count).
type sample struct {
	t int64
	v float64
}

// samplesOf returns the samples of every series the matchers select, by
// the series' labels.
func samplesOf(t testing.TB, s *Store, ms ...*labels.Matcher) map[string][]sample {
	t.Helper()
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, ms...)
	out := map[string][]sample{}
	for ss.Next() {
		k := ss.At().Labels().String()
		it := ss.At().Iterator(nil)
		for typ := it.Next(); typ != chunkenc.ValNone; typ = it.Next() {
			switch typ {
			case chunkenc.ValFloat:
				ts, v := it.At()
				out[k] = append(out[k], sample{ts, v})
			case chunkenc.ValHistogram:
				ts, h := it.AtHistogram(nil)
				out[k] = append(out[k], sample{ts, float64(h.Count)})
			case chunkenc.ValFloatHistogram:
				ts, h := it.AtFloatHistogram(nil)
				out[k] = append(out[k], sample{ts, h.Count})
			}
		}
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func nameIsRe(re string) *labels.Matcher {
	return labels.MustNewMatcher(labels.MatchRegexp, "__name__", re)
}

// marshal encodes md as a protobuf request.
func marshal(t testing.TB, md pmetric.Metrics) []byte {
	t.Helper()
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// svcMetric is a request of one metric, name, of service svc, to fill.
func svcMetric(name string) (pmetric.Metrics, pmetric.Metric) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "svc")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(name)
	return md, m
}

// gaugePoints is a request of one gauge series, temp, with a point of
// each value at the matching time.
func gaugePoints(t testing.TB, times []time.Time, values []float64) []byte {
	md, m := svcMetric("temp")
	g := m.SetEmptyGauge()
	for i, at := range times {
		p := g.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetDoubleValue(values[i])
	}
	return marshal(t, md)
}

// TestOneRequestOutOfOrder is the request: four points of one
// gauge series, at T, 100 ns later (the same millisecond, another
// value), a millisecond before T and a millisecond after. Three
// milliseconds, three samples: the point 100 ns after T is the second
// of its millisecond, rejected as a duplicate timestamp, and every point
// is accounted for.
func TestOneRequestOutOfOrder(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	T := t0.Add(500 * time.Microsecond)
	req := gaugePoints(t, []time.Time{T, T.Add(100), T.Add(-time.Millisecond), T.Add(time.Millisecond)}, []float64{1, 2, 3, 4})
	res, err := s.AppendOTLP(context.Background(), "", req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 3 || res.Rejected != 1 || res.Reasons[ReasonDuplicate] != 1 || res.Duplicates != 0 {
		t.Errorf("result %+v, want 3 accepted, 1 rejected as %s", res, ReasonDuplicate)
	}
	ms := T.UnixMilli()
	want := []sample{{ms - 1, 3}, {ms, 1}, {ms + 1, 4}}
	got := samplesOf(t, s, nameIs("temp"))
	if len(got) != 1 {
		t.Fatalf("series %v", got)
	}
	for _, v := range got {
		if !equalSamples(v, want) {
			t.Errorf("stored %v, want %v", v, want)
		}
	}
}

func equalSamples(a, b []sample) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].t != b[i].t || math.Float64bits(a[i].v) != math.Float64bits(b[i].v) {
			return false
		}
	}
	return true
}

// TestSameMillisecond: of the points of a series in one millisecond, the
// first in the request is stored; a later one with the same value is a
// duplicate (accepted, counted in Duplicates, not stored again), one with
// another value is rejected as a duplicate timestamp.
func TestSameMillisecond(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	T := t0.Add(300 * time.Microsecond)
	req := gaugePoints(t,
		[]time.Time{T, T.Add(200 * time.Microsecond), T.Add(-100 * time.Microsecond), T.Add(time.Millisecond), T.Add(time.Millisecond + 1)},
		[]float64{5, 5, 6, 7, 7})
	res, err := s.AppendOTLP(context.Background(), "", req)
	if err != nil {
		t.Fatal(err)
	}
	// T-100µs is the same millisecond as T and comes later in the
	// request: rejected. T+200µs and T+1ms+1ns repeat their
	// millisecond's value: duplicates.
	if res.Accepted != 4 || res.Duplicates != 2 || res.Rejected != 1 || res.Reasons[ReasonDuplicate] != 1 || res.Samples != 2 {
		t.Errorf("result %+v", res)
	}
	for _, v := range samplesOf(t, s, nameIs("temp")) {
		if want := []sample{{T.UnixMilli(), 5}, {T.UnixMilli() + 1, 7}}; !equalSamples(v, want) {
			t.Errorf("stored %v, want %v", v, want)
		}
	}
	if want := `1 points rejected: duplicate_timestamp 1 (e.g. {__name__="temp", job="svc"})`; res.Message() != want {
		t.Errorf("message %q, want %q", res.Message(), want)
	}
}

// histogramPoints is a request of one histogram series, lat, with a point
// at each time: count n, the sum given, and all n in its one bucket below
// 10.
func histogramPoints(t testing.TB, times []time.Time, ns []uint64, sums []float64) []byte {
	md, m := svcMetric("lat")
	h := m.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i, at := range times {
		p := h.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetCount(ns[i])
		p.SetSum(sums[i])
		p.ExplicitBounds().FromRaw([]float64{10})
		p.BucketCounts().FromRaw([]uint64{ns[i], 0})
	}
	return marshal(t, md)
}

// expHistogramPoints is histogramPoints for an exponential histogram,
// elat, of one bucket holding all n.
func expHistogramPoints(t testing.TB, times []time.Time, ns []uint64, sums []float64) []byte {
	md, m := svcMetric("elat")
	h := m.SetEmptyExponentialHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i, at := range times {
		p := h.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetCount(ns[i])
		p.SetSum(sums[i])
		p.SetScale(0)
		p.Positive().BucketCounts().FromRaw([]uint64{ns[i]})
	}
	return marshal(t, md)
}

// summaryPoints is histogramPoints for a summary, sz, its median n.
func summaryPoints(t testing.TB, times []time.Time, ns []uint64, sums []float64) []byte {
	md, m := svcMetric("sz")
	sm := m.SetEmptySummary()
	for i, at := range times {
		p := sm.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetCount(ns[i])
		p.SetSum(sums[i])
		q := p.QuantileValues().AppendEmpty()
		q.SetQuantile(0.5)
		q.SetValue(float64(ns[i]))
	}
	return marshal(t, md)
}

// TestOneRequestOutOfOrderKinds: points of a histogram, an exponential
// histogram and a summary, out of time order and two in one millisecond,
// in one request: every series of the point gets the samples of the same
// points, in time order, and the second point of the millisecond is
// rejected whole, so that _count, _sum and the buckets agree.
func TestOneRequestOutOfOrderKinds(t *testing.T) {
	T := t0.Add(400 * time.Microsecond)
	times := []time.Time{T, T.Add(100), T.Add(-time.Millisecond), T.Add(time.Millisecond)}
	// The second point's count equals the first's: only its sum (and
	// for the native histogram, its value as a whole) differs.
	ns := []uint64{4, 4, 3, 5}
	sums := []float64{4, 40, 3, 5}
	for _, tc := range []struct {
		name string
		req  []byte
		re   string // the series' names
		n    int    // series
	}{
		{"histogram", histogramPoints(t, times, ns, sums), "lat_.*", 4}, // _count, _sum, _bucket{le="10"}, _bucket{le="+Inf"}
		{"exponential", expHistogramPoints(t, times, ns, sums), "elat", 1},
		{"summary", summaryPoints(t, times, ns, sums), "sz.*", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, t.TempDir())
			defer s.Close()
			res, err := s.AppendOTLP(context.Background(), "", tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Accepted != 3 || res.Rejected != 1 || res.Reasons[ReasonDuplicate] != 1 {
				t.Errorf("result %+v", res)
			}
			got := samplesOf(t, s, nameIsRe(tc.re))
			if len(got) != tc.n {
				t.Fatalf("%d series, want %d: %v", len(got), tc.n, got)
			}
			ms := T.UnixMilli()
			for k, v := range got {
				if len(v) != 3 || v[0].t != ms-1 || v[1].t != ms || v[2].t != ms+1 {
					t.Errorf("%s: %v, want samples at %d, %d, %d", k, v, ms-1, ms, ms+1)
					continue
				}
				// Every series of a point stores n or 0 (a bucket above
				// them all): the points 3, 4 (the first of T's
				// millisecond) and 5.
				for i, want := range []float64{3, 4, 5} {
					if v[i].v != want && v[i].v != 0 {
						t.Errorf("%s: %v, want the values of points 3, 4, 5", k, v)
					}
				}
			}
		})
	}
}

// TestOutOfOrderAcrossEntries: two resources told apart only by an
// attribute that is not a label write the same series (two cache
// entries); their points, interleaved out of time order in one request,
// are all stored in time order, target_info included.
func TestOutOfOrderAcrossEntries(t *testing.T) {
	for _, window := range []time.Duration{0, time.Hour} {
		t.Run("window="+window.String(), func(t *testing.T) {
			s := open(t, t.TempDir(), func(c *Config) { c.OutOfOrderWindow = window })
			defer s.Close()
			md := pmetric.NewMetrics()
			for i, host := range []string{"a", "b", "a", "b"} {
				rm := md.ResourceMetrics().AppendEmpty()
				rm.Resource().Attributes().PutStr("service.name", "svc")
				rm.Resource().Attributes().PutStr("host.name", host)
				m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
				m.SetName("temp")
				p := m.SetEmptyGauge().DataPoints().AppendEmpty()
				// 10 s, 5 s, 20 s, 15 s: out of order across the entries
				// of host a and host b, and within each.
				p.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration([]int{10, 5, 20, 15}[i]) * time.Second)))
				p.SetDoubleValue(float64(i))
			}
			res, err := s.AppendOTLP(context.Background(), "", marshal(t, md))
			if err != nil || res.Accepted != 4 || res.Rejected != 0 {
				t.Fatalf("%+v, %v", res, err)
			}
			ms := t0.UnixMilli()
			want := []sample{{ms + 5000, 1}, {ms + 10000, 0}, {ms + 15000, 3}, {ms + 20000, 2}}
			for _, v := range samplesOf(t, s, nameIs("temp")) {
				if !equalSamples(v, want) {
					t.Errorf("temp: %v, want %v", v, want)
				}
			}
			ti := samplesOf(t, s, nameIs("target_info"))
			if len(ti) != 2 {
				t.Fatalf("target_info: %v", ti)
			}
			for k, v := range ti {
				if len(v) != 2 {
					t.Errorf("%s: %v, want two samples", k, v)
				}
			}
		})
	}
}

// TestOrderModel sends random requests of a few gauge series whose points
// fall in a few milliseconds, out of order, often on one another, some
// from a second resource that writes the same series, and checks the
// result and what is stored against the rule: per series and
// millisecond, the first point in request order is stored, the later ones
// are duplicates when of the same value, else rejected; every point is
// accounted for.
func TestOrderModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		window := time.Duration(0)
		if i%2 == 1 {
			window = time.Hour
		}
		s := open(t, t.TempDir(), func(c *Config) { c.OutOfOrderWindow = window })
		md := pmetric.NewMetrics()
		type key struct {
			series string
			ms     int64
		}
		first := map[key]float64{}
		var order []key
		var points, dups, rejected int64
		type pt struct {
			series string
			at     time.Time
			v      float64
		}
		var pts []pt
		for range 1 + rng.IntN(30) {
			p := pt{string(rune('a' + rng.IntN(3))), t0.Add(time.Duration(rng.IntN(5_000_000))), float64(rng.IntN(3))}
			pts = append(pts, p)
		}
		// Sorted by millisecond, stably: the rule's order.
		sorted := slices.Clone(pts)
		slices.SortStableFunc(sorted, func(x, y pt) int { return cmp.Compare(x.at.UnixMilli(), y.at.UnixMilli()) })
		for _, p := range sorted {
			points++
			k := key{p.series, p.at.UnixMilli()}
			v, ok := first[k]
			switch {
			case !ok:
				first[k] = p.v
				order = append(order, k)
			case v == p.v:
				dups++
			default:
				rejected++
			}
		}
		for j, p := range pts {
			rm := md.ResourceMetrics().AppendEmpty()
			rm.Resource().Attributes().PutStr("service.name", "svc")
			rm.Resource().Attributes().PutStr("host.name", []string{"h1", "h2"}[j%2]) // not a label
			m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
			m.SetName("temp")
			gp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			gp.Attributes().PutStr("s", p.series)
			gp.SetTimestamp(pcommon.NewTimestampFromTime(p.at))
			gp.SetDoubleValue(p.v)
		}
		res, err := s.AppendOTLP(context.Background(), "", marshal(t, md))
		if err != nil {
			t.Fatal(err)
		}
		if res.Accepted+res.Rejected != points || res.Duplicates != dups || res.Rejected != rejected || res.Reasons[ReasonDuplicate] != rejected {
			t.Errorf("request %d: %+v; want %d points, %d duplicates, %d rejected", i, res, points, dups, rejected)
		}
		want := map[string][]sample{}
		for _, k := range order {
			want[k.series] = append(want[k.series], sample{k.ms, first[k]})
		}
		if got := samplesOf(t, s, nameIs("temp")); len(got) != len(want) {
			t.Errorf("request %d: series %v, want %v", i, got, want)
		}
		for k, v := range want {
			slices.SortFunc(v, func(x, y sample) int { return cmp.Compare(x.t, y.t) })
			var got []sample
			for _, g := range samplesOf(t, s, nameIs("temp"), labels.MustNewMatcher(labels.MatchEqual, "s", k)) {
				got = g
			}
			if !equalSamples(got, v) {
				t.Errorf("request %d, series %s: stored %v, want %v", i, k, got, v)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRejectionReport: rejected points are counted by reason and
// duplicates on their own on the Registerer, and logged at most once per
// reason every 10 s with an example series and the points not logged
// since; a tenant's example does not show the tenant label.
func TestRejectionReport(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs syncbuf.Buffer
	now := t0
	s := openWith(t, testConfig(t.TempDir(), func(c *Config) {
		c.Registerer = reg
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}), func(c *config) { c.now = func() time.Time { return now } })
	defer s.Close()
	T := t0.Add(-time.Hour)
	dupReq := gaugePoints(t, []time.Time{T, T.Add(10), T.Add(20)}, []float64{1, 2, 1})
	for i := range 3 {
		if i == 2 {
			now = now.Add(11 * time.Second)
		}
		tenantID := ""
		if i == 1 {
			tenantID = "acme"
		}
		res, err := s.AppendOTLP(context.Background(), tenantID, dupReq)
		if err != nil {
			t.Fatal(err)
		}
		// The third request is the first one again: its first point,
		// stored by the first, is a duplicate too.
		wantDups := int64(1)
		if i == 2 {
			wantDups = 2
		}
		if res.Accepted != 2 || res.Rejected != 1 || res.Duplicates != wantDups {
			t.Fatalf("request %d: %+v, want 2 accepted, 1 rejected, %d duplicates", i, res, wantDups)
		}
		if strings.Contains(res.Message(), TenantLabel) {
			t.Errorf("message shows the tenant label: %s", res.Message())
		}
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2 (the second request's is not logged):\n%s", len(lines), logs.String())
	}
	for i, want := range []string{"not_logged_since_last=0", "not_logged_since_last=1"} {
		if l := lines[i]; !strings.Contains(l, "level=WARN") || !strings.Contains(l, "reason=duplicate_timestamp") ||
			!strings.Contains(l, `example="{__name__=\"temp\", job=\"svc\"}"`) || !strings.Contains(l, want) {
			t.Errorf("log line %d: %s, want a warning with the reason, an example and %s", i, l, want)
		}
	}
	text := gatheredText(t, reg)
	for _, want := range []string{
		`wirehouse_metricstore_rejected_points_total{reason="duplicate_timestamp"} 3`,
		`wirehouse_metricstore_rejected_points_total{reason="out_of_order"} 0`,
		`wirehouse_metricstore_duplicate_points_total 4`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s:\n%s", want, text)
		}
	}
}

// gatheredText is what reg exposes, in the text format.
func gatheredText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestCollectorFixture sends the metric requests an OpenTelemetry
// Collector exported (testdata/collector, see its README), in order, and
// accounts for every point: accepted plus rejected is every point sent,
// and the accepted points but the duplicates are stored, one sample each
// in the series that has one per point (the metric itself, a histogram's
// _count), read back through the Querier. With and without an
// out-of-order window, as the issue sent them.
func TestCollectorFixture(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "collector", "request-*.pb"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixture: %v, %d files", err, len(files))
	}
	for _, window := range []time.Duration{0, 200 * time.Hour} {
		t.Run("window="+window.String(), func(t *testing.T) {
			s := open(t, t.TempDir(), func(c *Config) { c.OutOfOrderWindow, c.MaxTimeAhead = window, 0 })
			defer s.Close()
			send := func() (points, accepted, rejected, dups int64, reasons map[string]int64) {
				reasons = map[string]int64{}
				for _, f := range files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
					if err != nil {
						t.Fatal(err)
					}
					points += int64(md.DataPointCount())
					res, err := s.AppendOTLP(context.Background(), "", b)
					if err != nil {
						t.Fatal(err)
					}
					accepted, rejected, dups = accepted+res.Accepted, rejected+res.Rejected, dups+res.Duplicates
					for k, n := range res.Reasons {
						reasons[k] += n
					}
				}
				return
			}
			storedNow := func() (stored int64) {
				for _, v := range samplesOf(t, s, labels.MustNewMatcher(labels.MatchNotRegexp, "__name__", ".*_bucket|.*_sum|target_info")) {
					stored += int64(len(v))
				}
				return
			}
			points, accepted, rejected, dups, reasons := send()
			stored := storedNow()
			t.Logf("%d points: %d accepted (%d duplicates), %d stored, %d rejected %v", points, accepted, dups, stored, rejected, reasons)
			if accepted+rejected != points || accepted-dups != stored {
				t.Errorf("%d points: %d accepted (%d duplicates), %d rejected; %d stored, want %d", points, accepted, dups, rejected, stored, accepted-dups)
			}
			// Sent again, as a client retrying: nothing new is stored,
			// every accepted point is a duplicate.
			points, accepted, rejected, dups, reasons = send()
			again := storedNow()
			t.Logf("sent again: %d points: %d accepted (%d duplicates), %d stored, %d rejected %v", points, accepted, dups, again-stored, rejected, reasons)
			if accepted+rejected != points || accepted != dups || again != stored {
				t.Errorf("sent again: %d points: %d accepted (%d duplicates), %d rejected; %d stored, want %d", points, accepted, dups, rejected, again, stored)
			}
		})
	}
}
