package metricstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/wirehouse/wirehouse/internal/synth"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// gaugeRequest builds a request of one gauge point per value, each its own
// series (attribute i), at time at.
func gaugeRequest(t testing.TB, at time.Time, values ...float64) []byte {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "svc")
	rm.Resource().Attributes().PutStr("host.name", "h1")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("temp")
	g := m.SetEmptyGauge()
	for i, v := range values {
		p := g.DataPoints().AppendEmpty()
		p.Attributes().PutInt("i", int64(i))
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetDoubleValue(v)
	}
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// query returns the float samples of series {__name__=name} by label i.
func query(t testing.TB, s *Store, name string) map[string][]float64 {
	t.Helper()
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", name))
	out := map[string][]float64{}
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() != 0 {
			_, v := it.At()
			out[ss.At().Labels().Get("i")] = append(out[ss.At().Labels().Get("i")], v)
		}
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// testConfig is DefaultConfig in dir, changed by set.
func testConfig(dir string, set ...func(*Config)) Config {
	c := DefaultConfig()
	c.Dir = dir
	for _, f := range set {
		f(&c)
	}
	return c
}

// open opens a store with testConfig(dir, set...).
func open(t testing.TB, dir string, set ...func(*Config)) *Store {
	t.Helper()
	return openWith(t, testConfig(dir, set...), nil)
}

// openWith opens a store with cfg, its derived config changed by set if
// not nil.
func openWith(t testing.TB, cfg Config, set func(*config)) *Store {
	t.Helper()
	s, err := openStore(cfg, set)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNaNInfStaleAndReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	res, err := s.AppendOTLP(context.Background(), "", gaugeRequest(t, t0, math.NaN(), math.Inf(1), math.Inf(-1), 1.5))
	if err != nil || res.Accepted != 4 || res.Rejected != 0 {
		t.Fatalf("res %+v err %v", res, err)
	}
	// A no-recorded-value point: a staleness marker.
	md, _ := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(gaugeRequest(t, t0.Add(time.Second), 7))
	md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().At(0).SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
	b, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if _, err := s.AppendOTLP(context.Background(), "", b); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		got := query(t, s, "temp")
		if v := got["0"]; len(v) != 2 || !math.IsNaN(v[0]) || value.IsStaleNaN(v[0]) || !value.IsStaleNaN(v[1]) {
			t.Errorf("series 0 = %v, want NaN then stale marker", v)
		}
		if v := got["1"]; len(v) != 1 || !math.IsInf(v[0], 1) {
			t.Errorf("series 1 = %v", v)
		}
		if v := got["2"]; len(v) != 1 || !math.IsInf(v[0], -1) {
			t.Errorf("series 2 = %v", v)
		}
		if v := got["3"]; len(v) != 1 || v[0] != 1.5 {
			t.Errorf("series 3 = %v", v)
		}
		if ti := query(t, s, "target_info"); len(ti[""]) != 2 {
			t.Errorf("target_info = %v", ti)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopen: the committed samples come back from the WAL.
	s = open(t, dir)
	defer s.Close()
	check(s)
}

func TestOutOfOrderPartialSuccess(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	if _, err := s.AppendOTLP(context.Background(), "", gaugeRequest(t, t0, 1)); err != nil {
		t.Fatal(err)
	}
	// Series 0 goes back in time, series 1 is new.
	res, err := s.AppendOTLP(context.Background(), "", gaugeRequest(t, t0.Add(-time.Minute), 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 1 || res.Rejected != 1 || res.Reasons[ReasonOutOfOrder] != 1 {
		t.Fatalf("res %+v", res)
	}
	got := query(t, s, "temp")
	if len(got["0"]) != 1 || got["0"][0] != 1 || len(got["1"]) != 1 || got["1"][0] != 3 {
		t.Fatalf("stored %v", got)
	}
	// Duplicate timestamp, other value.
	res, _ = s.AppendOTLP(context.Background(), "", gaugeRequest(t, t0, 9))
	if res.Reasons[ReasonDuplicate] != 1 {
		t.Fatalf("res %+v", res)
	}
}

func TestRejections(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.LabelLimit, c.RefuseDelta = 3, true })
	defer s.Close()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "svc")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	ts := pcommon.NewTimestampFromTime(t0)
	// Delta sum: refused (RefuseDelta).
	d := ms.AppendEmpty()
	d.SetName("reqs")
	sum := d.SetEmptySum()
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	sum.SetIsMonotonic(true)
	for range 2 {
		p := sum.DataPoints().AppendEmpty()
		p.SetTimestamp(ts)
		p.SetIntValue(3)
	}
	// Histogram with one bucket too few: rejected.
	h := ms.AppendEmpty()
	h.SetName("lat")
	hist := h.SetEmptyHistogram()
	hist.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	hp := hist.DataPoints().AppendEmpty()
	hp.SetTimestamp(ts)
	hp.ExplicitBounds().FromRaw([]float64{1, 2})
	hp.BucketCounts().FromRaw([]uint64{1, 1})
	// Too many labels: __name__, job, a, b.
	g := ms.AppendEmpty()
	g.SetName("wide")
	gp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	gp.SetTimestamp(ts)
	gp.Attributes().PutStr("a", "1")
	gp.Attributes().PutStr("b", "2")
	// Invalid UTF-8 in a label value.
	u := ms.AppendEmpty()
	u.SetName("utf")
	up := u.SetEmptyGauge().DataPoints().AppendEmpty()
	up.SetTimestamp(ts)
	up.Attributes().PutStr("a", "\xff")
	// An empty metric: fine.
	ms.AppendEmpty().SetName("empty")
	ms.At(ms.Len() - 1).SetEmptyGauge()
	// One good point.
	ok := ms.AppendEmpty()
	ok.SetName("good")
	op := ok.SetEmptyGauge().DataPoints().AppendEmpty()
	op.SetTimestamp(ts)
	b, _ := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	for range 2 { // second time from the cache
		res, err := s.AppendOTLP(context.Background(), "", b)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int64{ReasonTemporality: 2, ReasonHistogramBuckets: 1, ReasonLabelLimit: 1, ReasonInvalidUTF8: 1}
		if res.Accepted != 1 || res.Rejected != 5 || len(res.Reasons) != len(want) {
			t.Fatalf("res %+v", res)
		}
		for k, v := range want {
			if res.Reasons[k] != v {
				t.Errorf("reason %s: %d, want %d", k, res.Reasons[k], v)
			}
		}
	}
}

func TestMalformedCommitsNothing(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	b := gaugeRequest(t, t0, 1, 2, 3)
	if _, err := s.AppendOTLP(context.Background(), "", b[:len(b)-3]); err == nil {
		t.Fatal("truncated request accepted")
	}
	if got := query(t, s, "temp"); len(got) != 0 {
		t.Fatalf("stored %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.AppendOTLP(ctx, "", b); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestStaleRefs checks that refs the head no longer knows (as for a
// request that cached them while a truncation was dropping series) fall
// back to the cached labels: the samples land in the series they belong
// to, no series is created without labels, and the cache takes the
// head's references.
func TestStaleRefs(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	const bogus = 1 << 40 // unknown to the head
	cfg := synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, RecordsPerScope: 30, Repeat: true}
	r1, err := s.AppendOTLP(context.Background(), "", synth.Metrics(cfg))
	if err != nil || r1.Accepted != 30 {
		t.Fatalf("r1 %+v, %v", r1, err)
	}
	series := s.db.Head().NumSeries()
	// The first samples moved the head's minimum time: start the epoch the
	// next request will see, and plant the bogus references in it, so that
	// they count as current.
	epoch := s.syncCache()
	n := s.cache.len()
	s.cache.mu.Lock()
	next := storage.SeriesRef(bogus)
	for k, e := range s.cache.entries {
		c := *e
		c.series = append([]cachedSeries(nil), e.series...)
		for i := range c.series {
			c.series[i].ref = next // distinct, as the head's references are
			next++
		}
		c.epoch = epoch
		s.cache.entries[k] = &c
	}
	s.cache.mu.Unlock()
	cfg.Seed = 2 // the same series, a second later
	r2, err := s.AppendOTLP(context.Background(), "", synth.Metrics(cfg))
	if err != nil || r2.Accepted != 30 || r2.Rejected != 0 {
		t.Fatalf("r2 %+v, %v", r2, err)
	}
	if s.cacheEpoch.Load() != epoch {
		t.Fatalf("epoch %d, want %d: the references were not current", s.cacheEpoch.Load(), epoch)
	}
	if got := s.db.Head().NumSeries(); got != series {
		t.Errorf("head has %d series after the second request, want %d", got, series)
	}
	if s.cache.len() != n {
		t.Errorf("cache %d → %d entries", n, s.cache.len())
	}
	s.cache.mu.RLock()
	for _, e := range s.cache.entries {
		for _, cs := range e.series {
			if cs.ref >= bogus && !cs.lset.IsEmpty() {
				t.Errorf("%s kept the unknown reference", cs.lset)
			}
		}
	}
	s.cache.mu.RUnlock()
	q, _ := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", ""))
	if ss.Next() {
		t.Fatalf("series without labels: %v", ss.At().Labels())
	}
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
	}{
		{"no dir", func(c *Config) { c.Dir = "" }},
		{"negative retention", func(c *Config) { c.Retention = -1 }},
		{"negative retention size", func(c *Config) { c.RetentionSize = -1 }},
		{"negative out-of-order window", func(c *Config) { c.OutOfOrderWindow = -1 }},
		{"min block 1s", func(c *Config) { c.MinBlockDuration = time.Second }},
		{"max block below min", func(c *Config) { c.MinBlockDuration, c.MaxBlockDuration = 2*time.Hour, time.Hour }},
		{"min block not whole ms", func(c *Config) { c.MinBlockDuration = time.Hour + 1 }},
		{"WAL compression lz4", func(c *Config) { c.WALCompression = "lz4" }},
		{"negative label limit", func(c *Config) { c.LabelLimit = -1 }},
		{"series cache 0", func(c *Config) { c.SeriesCacheSize = 0 }},
		{"empty promoted", func(c *Config) { c.PromotedResourceAttributes = []string{""} }},
		{"empty ignored", func(c *Config) {
			c.PromoteAllResourceAttributes, c.IgnoredResourceAttributes = true, []string{""}
		}},
		{"negative max exemplars", func(c *Config) { c.MaxExemplars = -1 }},
		{"negative max time ahead", func(c *Config) { c.MaxTimeAhead = -1 }},
		{"promoted twice", func(c *Config) { c.PromotedResourceAttributes = []string{"host.name", " host.name"} }},
		{"ignored twice", func(c *Config) {
			c.PromoteAllResourceAttributes, c.IgnoredResourceAttributes = true, []string{"a", "a "}
		}},
		{"promote all and promoted", func(c *Config) {
			c.PromoteAllResourceAttributes, c.PromotedResourceAttributes = true, []string{"a"}
		}},
		{"ignored without promote all", func(c *Config) { c.IgnoredResourceAttributes = []string{"a"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Open(testConfig(t.TempDir(), tc.set)); !errors.Is(err, ErrConfig) {
				t.Errorf("err %v, want ErrConfig", err)
			}
		})
	}
	s, err := Open(testConfig(t.TempDir(), func(c *Config) {
		c.WALCompression, c.Retention, c.MinBlockDuration = "zstd", time.Hour, time.Hour
	}))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	// Attribute names are trimmed, as in Prometheus' configuration.
	s = open(t, t.TempDir(), func(c *Config) { c.PromotedResourceAttributes = []string{" host.name "} })
	defer s.Close()
	if _, err := s.AppendOTLP(context.Background(), "", gaugeRequest(t, time.Now(), 1)); err != nil {
		t.Fatal(err)
	}
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "host_name", "h1"))
	if !ss.Next() || ss.At().Labels().Get("__name__") != "temp" {
		t.Error("\" host.name \" did not promote host.name")
	}
}

// TestCachedSeriesSteadyState: the same series sent again later are
// appended through the series cache to the very same series: after n
// requests every series holds n samples and no series was added.
func TestCachedSeriesSteadyState(t *testing.T) {
	s, err := Open(testConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reqs := steadyRequests(t, 100, 5)
	var first int
	for i, req := range reqs {
		res, err := s.AppendOTLP(context.Background(), "", req)
		if err != nil || res.Rejected != 0 {
			t.Fatalf("request %d: %+v, %v", i, res, err)
		}
		series, samples := seriesAndSamples(t, s)
		if i == 0 {
			first = series
		}
		if series != first || samples != first*(i+1) {
			t.Fatalf("after %d requests: %d series, %d samples; want %d series of %d samples", i+1, series, samples, first, i+1)
		}
	}
}

// seriesAndSamples counts the series and samples s holds, through its
// Queryable.
func seriesAndSamples(t testing.TB, s *Store) (series, samples int) {
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	for ss.Next() {
		series++
		it := ss.At().Iterator(nil)
		for it.Next() != 0 {
			samples++
		}
	}
	return series, samples
}

// TestTimeAhead: a sample more than MaxTimeAhead past now is refused,
// and an exemplar that far ahead is dropped alone, so that it cannot make
// the later exemplars of its series out of order.
func TestTimeAhead(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.MaxExemplars = 100 })
	defer s.Close()
	now := t0.Add(time.Hour)
	s.cfg.now = func() time.Time { return now }

	res, err := s.AppendOTLP(context.Background(), "", gaugeRequest(t, now.Add(time.Hour), 1))
	if err != nil || res.Rejected != 1 || res.Reasons[ReasonTooFarAhead] != 1 {
		t.Fatalf("point an hour ahead: %+v, %v", res, err)
	}
	if res, _ := s.AppendOTLP(context.Background(), "", gaugeRequest(t, now.Add(9*time.Minute), 1)); res.Accepted != 1 {
		t.Fatalf("point 9 minutes ahead: %+v", res)
	}

	counter := func(at, exAt time.Time, exValue int64) []byte {
		md := pmetric.NewMetrics()
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("orders")
		sum := m.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		p := sum.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetIntValue(10)
		ex := p.Exemplars().AppendEmpty()
		ex.SetTimestamp(pcommon.NewTimestampFromTime(exAt))
		ex.SetIntValue(exValue)
		ex.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
		b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for i, req := range [][]byte{
		counter(now, now.Add(24*time.Hour), 1), // a wrong clock: dropped
		counter(now.Add(time.Second), now, 2),  // must still be kept
		counter(now.Add(2*time.Second), now.Add(time.Second), 3),
	} {
		if res, err := s.AppendOTLP(context.Background(), "", req); err != nil || res.Accepted != 1 {
			t.Fatalf("request %d: %+v, %v", i, res, err)
		}
	}
	eq, err := s.ExemplarQueryable().ExemplarQuerier(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := eq.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, "__name__", "orders_total")})
	if err != nil {
		t.Fatal(err)
	}
	var values []float64
	for _, r := range got {
		for _, e := range r.Exemplars {
			values = append(values, e.Value)
		}
	}
	if len(values) != 2 || values[0] != 2 || values[1] != 3 {
		t.Fatalf("stored exemplar values %v, want [2 3]", values)
	}
}

// TestConcurrentTruncation: exporters append concurrently, each its own
// series a second later every request, while the head is truncated under
// them, as a head compaction would (run with -race to check the cache's
// epochs and sweeps). Every request must succeed and each exporter's
// series must hold its last sample: no sample may be lost to a reference
// the head dropped.
func TestConcurrentTruncation(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	const exporters, requests = 4, 60
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	errs := make(chan error, exporters+1)
	done := make(chan struct{})
	var progress [exporters]atomic.Int64 // requests each exporter has finished
	var wg sync.WaitGroup
	for e := range exporters {
		wg.Go(func() {
			defer progress[e].Store(requests + 5) // done: no longer holds the truncation back
			for i := range requests {
				cfg := synth.Config{Seed: int64(i), Start: start, Resources: 1, ScopesPerResource: 1,
					RecordsPerScope: 20, Repeat: true, Copy: e + 1}
				res, err := s.AppendOTLP(context.Background(), "", synth.Metrics(cfg))
				if err == nil && res.Rejected != 0 {
					err = fmt.Errorf("request %d: %+v", i, res)
				}
				if err != nil {
					errs <- fmt.Errorf("exporter %d: %w", e, err)
					return
				}
				progress[e].Store(int64(i + 1))
			}
		})
	}
	go func() {
		// Truncate a few seconds behind the slowest exporter, so that no
		// sample is older than the head allows.
		defer close(done)
		truncated := int64(0)
		for truncated < requests-5 {
			runtime.Gosched()
			slowest := int64(requests)
			for e := range exporters {
				slowest = min(slowest, progress[e].Load())
			}
			if slowest-5 > truncated {
				truncated = slowest - 5
				if err := s.db.Head().Truncate(start.Add(time.Duration(truncated) * time.Second).UnixMilli()); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d cache epochs", s.cacheEpoch.Load())
	// Each exporter's newest sample must be from its last request (synth
	// jitters point times within the second).
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	newest := map[string]int64{}
	set := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	for set.Next() {
		inst := set.At().Labels().Get("instance")
		it := set.At().Iterator(nil)
		for it.Next() != chunkenc.ValNone {
			ts, _ := it.At()
			newest[inst] = max(newest[inst], ts)
		}
	}
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	want := start.Add((requests - 2) * time.Second).UnixMilli()
	for e := range exporters {
		suffix := fmt.Sprintf("/%d", e+1)
		found := false
		for inst, ts := range newest {
			if strings.HasSuffix(inst, suffix) {
				found = true
				if ts <= want {
					t.Errorf("exporter %d (%s): newest sample at %d, want after %d", e, inst, ts, want)
				}
			}
		}
		if !found {
			t.Errorf("exporter %d: no series", e)
		}
	}
}
