package metricstore

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// deltaPoint is a point of a delta stream: its start, time and value.
type deltaPoint struct {
	start, at time.Time
	v         int64
}

// deltaSums is a request of one delta monotonic sum series, reqs.
func deltaSums(t testing.TB, ps ...deltaPoint) []byte {
	md, m := svcMetric("reqs")
	sum := m.SetEmptySum()
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	sum.SetIsMonotonic(true)
	for _, p := range ps {
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pcommon.NewTimestampFromTime(p.start))
		dp.SetTimestamp(pcommon.NewTimestampFromTime(p.at))
		dp.SetIntValue(p.v)
	}
	return marshal(t, md)
}

func appendOK(t testing.TB, s *Store, req []byte) Result {
	t.Helper()
	res, err := s.AppendOTLP(context.Background(), "", req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func wantSamples(t testing.TB, got []sample, want ...sample) {
	t.Helper()
	if !equalSamples(got, want) {
		t.Fatalf("samples %v, want %v", got, want)
	}
}

// TestDeltaSum: delta points become the cumulative series a Collector's
// deltatocumulative processor makes: each the last plus the point, in
// one request or across requests; a point at or before the last refused
// as out of order (a retried request adds nothing); a point more than
// DeltaMaxStale after the last starts the series again; after a reopen
// the series goes on from what the TSDB holds.
func TestDeltaSum(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	ms := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	if res := appendOK(t, s, deltaSums(t, deltaPoint{at(-10 * time.Second), at(0), 5})); res.Accepted != 1 {
		t.Fatalf("first: %+v", res)
	}
	second := deltaSums(t, deltaPoint{at(0), at(10 * time.Second), 3})
	appendOK(t, s, second)
	if res := appendOK(t, s, second); res.Accepted != 0 || res.Reasons[ReasonOutOfOrder] != 1 {
		t.Fatalf("retried: %+v", res)
	}
	appendOK(t, s, deltaSums(t,
		deltaPoint{at(10 * time.Second), at(20 * time.Second), 1},
		deltaPoint{at(20 * time.Second), at(30 * time.Second), 2}))
	// Older than the last: refused, and the one after it still adds.
	if res := appendOK(t, s, deltaSums(t,
		deltaPoint{at(0), at(25 * time.Second), 100},
		deltaPoint{at(30 * time.Second), at(40 * time.Second), 4})); res.Accepted != 1 || res.Reasons[ReasonOutOfOrder] != 1 {
		t.Fatalf("out of order: %+v", res)
	}
	// 6 minutes later: the series starts again.
	appendOK(t, s, deltaSums(t, deltaPoint{at(6 * time.Minute), at(6*time.Minute + 40*time.Second), 7}))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	appendOK(t, s, deltaSums(t, deltaPoint{at(6*time.Minute + 40*time.Second), at(7 * time.Minute), 10}))
	got := samplesOf(t, s, nameIsRe("reqs_total"))[`{__name__="reqs_total", job="svc"}`]
	wantSamples(t, got,
		sample{ms(0), 5}, sample{ms(10 * time.Second), 8}, sample{ms(20 * time.Second), 9},
		sample{ms(30 * time.Second), 11}, sample{ms(40 * time.Second), 15},
		sample{ms(6*time.Minute + 40*time.Second), 7}, sample{ms(7 * time.Minute), 17})
}

// TestDeltaRefused: with RefuseDelta, every delta point is refused as
// Prometheus' OTLP endpoint refuses it.
func TestDeltaRefused(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.RefuseDelta = true })
	defer s.Close()
	res := appendOK(t, s, deltaSums(t, deltaPoint{t0.Add(-time.Second), t0, 5}))
	if res.Accepted != 0 || res.Reasons[ReasonTemporality] != 1 {
		t.Fatalf("%+v", res)
	}
}

// deltaHistogram is a request of one delta histogram series, lat.
func deltaHistogram(t testing.TB, start, at time.Time, bounds []float64, counts []uint64, sum float64) []byte {
	md, m := svcMetric("lat")
	h := m.SetEmptyHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	p := h.DataPoints().AppendEmpty()
	p.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	p.SetTimestamp(pcommon.NewTimestampFromTime(at))
	p.ExplicitBounds().FromRaw(bounds)
	p.BucketCounts().FromRaw(counts)
	var n uint64
	for _, c := range counts {
		n += c
	}
	p.SetCount(n)
	p.SetSum(sum)
	return marshal(t, md)
}

// TestDeltaHistogram: each series of a delta histogram (buckets, count,
// sum) adds to its last; new bounds start the histogram again, as the
// deltatocumulative processor resets a histogram whose bounds changed.
func TestDeltaHistogram(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	t1, t2, t3 := t0, t0.Add(10*time.Second), t0.Add(20*time.Second)
	appendOK(t, s, deltaHistogram(t, t0.Add(-10*time.Second), t1, []float64{1, 2}, []uint64{1, 2, 3}, 10))
	appendOK(t, s, deltaHistogram(t, t1, t2, []float64{1, 2}, []uint64{0, 1, 1}, 3))
	appendOK(t, s, deltaHistogram(t, t2, t3, []float64{1, 5}, []uint64{1, 0, 0}, 0.5))
	got := samplesOf(t, s, nameIsRe("lat_.*"))
	m1, m2, m3 := t1.UnixMilli(), t2.UnixMilli(), t3.UnixMilli()
	for k, want := range map[string][]sample{
		`{__name__="lat_bucket", job="svc", le="1"}`:    {{m1, 1}, {m2, 1}, {m3, 1}},
		`{__name__="lat_bucket", job="svc", le="2"}`:    {{m1, 3}, {m2, 4}},
		`{__name__="lat_bucket", job="svc", le="5"}`:    {{m3, 1}},
		`{__name__="lat_bucket", job="svc", le="+Inf"}`: {{m1, 6}, {m2, 8}, {m3, 1}},
		`{__name__="lat_count", job="svc"}`:             {{m1, 6}, {m2, 8}, {m3, 1}},
		`{__name__="lat_sum", job="svc"}`:               {{m1, 10}, {m2, 13}, {m3, 0.5}},
	} {
		if !equalSamples(got[k], want) {
			t.Errorf("%s: %v, want %v", k, got[k], want)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d series, want 6: %v", len(got), got)
	}
}

// deltaExp is a request of one delta exponential histogram series, dur,
// at scale 0.
func deltaExp(t testing.TB, start, at time.Time, zero uint64, posOff int32, pos []uint64, negOff int32, neg []uint64, sum float64) []byte {
	md, m := svcMetric("dur")
	h := m.SetEmptyExponentialHistogram()
	h.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	p := h.DataPoints().AppendEmpty()
	p.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	p.SetTimestamp(pcommon.NewTimestampFromTime(at))
	p.SetZeroCount(zero)
	p.Positive().SetOffset(posOff)
	p.Positive().BucketCounts().FromRaw(pos)
	p.Negative().SetOffset(negOff)
	p.Negative().BucketCounts().FromRaw(neg)
	n := zero
	for _, c := range append(append([]uint64(nil), pos...), neg...) {
		n += c
	}
	p.SetCount(n)
	p.SetSum(sum)
	return marshal(t, md)
}

// bucketCounts lists a native histogram's non-empty buckets as
// [lower, upper] → count, zero bucket included.
func bucketCounts(h *histogram.Histogram) map[[2]float64]float64 {
	out := map[[2]float64]float64{}
	for it := h.ToFloat(nil).AllBucketIterator(); it.Next(); {
		if b := it.At(); b.Count != 0 {
			out[[2]float64{b.Lower, b.Upper}] = b.Count
		}
	}
	return out
}

// lastHistogram returns the last native histogram of the series ms select.
func lastHistogram(t testing.TB, s *Store, ms ...*labels.Matcher) (int64, *histogram.Histogram) {
	t.Helper()
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var (
		ts int64
		h  *histogram.Histogram
	)
	for ss := q.Select(context.Background(), false, nil, ms...); ss.Next(); {
		for it := ss.At().Iterator(nil); it.Next() == chunkenc.ValHistogram; {
			ts, h = it.AtHistogram(nil)
		}
	}
	if h == nil {
		t.Fatal("no histogram")
	}
	return ts, h
}

// TestDeltaExpHistogram: a delta exponential histogram adds bucket by
// bucket, positive and negative, with its zero bucket, count and sum.
func TestDeltaExpHistogram(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	t1, t2 := t0, t0.Add(10*time.Second)
	// Scale 0: OTLP bucket i is (2^i, 2^(i+1)].
	appendOK(t, s, deltaExp(t, t0.Add(-10*time.Second), t1, 1, 0, []uint64{1, 2}, 0, nil, 9))
	appendOK(t, s, deltaExp(t, t1, t2, 0, 1, []uint64{3}, -1, []uint64{4}, 1))
	ts, h := lastHistogram(t, s, nameIsRe("dur"))
	if ts != t2.UnixMilli() || h.Count != 11 || h.Sum != 10 || h.ZeroCount != 1 || h.Schema != 0 {
		t.Fatalf("at %d: %v", ts, h)
	}
	want := map[[2]float64]float64{
		{-defaultZeroThreshold, defaultZeroThreshold}: 1,
		{1, 2}:     1,
		{2, 4}:     5,
		{-1, -0.5}: 4,
	}
	got := bucketCounts(h)
	if len(got) != len(want) {
		t.Fatalf("buckets %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("buckets %v, want %v", got, want)
		}
	}
}

// TestAddNativeLimit: a sum spanning more than 160 buckets is scaled down
// until it fits, as the deltatocumulative processor does: buckets 0-99
// and 100-199 at schema 3, one observation each, become buckets 0-99 at
// schema 2, two each.
func TestAddNativeLimit(t *testing.T) {
	ones := func(n int) []uint64 {
		c := make([]uint64, n)
		for i := range c {
			c[i] = 1
		}
		return c
	}
	mk := func(off int32, counts []uint64) *histogram.Histogram {
		spans, deltas := convertBucketsLayout(counts, off, 0)
		return &histogram.Histogram{Schema: 3, ZeroThreshold: defaultZeroThreshold, PositiveSpans: spans, PositiveBuckets: deltas, Count: uint64(len(counts))}
	}
	h := addNative(mk(0, ones(100)), mk(100, ones(100)))
	if h.Schema != 2 || h.Count != 200 {
		t.Fatalf("schema %d count %d", h.Schema, h.Count)
	}
	got := expand(h.PositiveSpans, h.PositiveBuckets, 2, 2)
	if got.off != 0 || len(got.counts) != 100 {
		t.Fatalf("buckets from %d, %d of them", got.off, len(got.counts))
	}
	for i, c := range got.counts {
		if c != 2 {
			t.Fatalf("bucket %d: %d", i, c)
		}
	}
	// Within the limit: the schema stays.
	if h := addNative(mk(0, ones(80)), mk(80, ones(80))); h.Schema != 3 {
		t.Fatalf("schema %d for 160 buckets", h.Schema)
	}
	// Different schemas: the finer is scaled down. Schema 3 buckets 8-15
	// are schema 2's 4-7 and schema 0's bucket 1.
	fine := mk(8, ones(8))
	coarse := mk(1, []uint64{5})
	coarse.Schema = 0
	h = addNative(fine, coarse)
	got = expand(h.PositiveSpans, h.PositiveBuckets, h.Schema, h.Schema)
	if h.Schema != 0 || got.off != 1 || len(got.counts) != 1 || got.counts[0] != 13 {
		t.Fatalf("schema %d buckets %+v", h.Schema, got)
	}
}

// TestDeltaSortedPass: a request out of time order (a gauge) is appended
// again sorted; its delta points still add up, each to the one before.
func TestDeltaSortedPass(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "svc")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	g := ms.AppendEmpty()
	g.SetName("temp")
	gauge := g.SetEmptyGauge()
	for _, at := range []time.Time{t0.Add(time.Second), t0} {
		gauge.DataPoints().AppendEmpty().SetTimestamp(pcommon.NewTimestampFromTime(at))
	}
	sum := ms.AppendEmpty()
	sum.SetName("reqs")
	ds := sum.SetEmptySum()
	ds.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	ds.SetIsMonotonic(true)
	for i, v := range []int64{1, 2, 4} {
		p := ds.DataPoints().AppendEmpty()
		p.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Second)))
		p.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(i+1) * time.Second)))
		p.SetIntValue(v)
	}
	res := appendOK(t, s, marshal(t, md))
	if res.Accepted != 5 || res.Rejected != 0 {
		t.Fatalf("%+v", res)
	}
	got := samplesOf(t, s, nameIsRe("reqs_total"))[`{__name__="reqs_total", job="svc"}`]
	m := func(i int) int64 { return t0.Add(time.Duration(i) * time.Second).UnixMilli() }
	wantSamples(t, got, sample{m(1), 1}, sample{m(2), 3}, sample{m(3), 7})
}

// TestDeltaConcurrent: requests adding 1 to one delta series at once, at
// increasing times, from several goroutines: whatever order they commit
// in, every stored sample is one more than the one before (none added
// twice, none lost), and the last is the number of points accepted.
func TestDeltaConcurrent(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	var next atomic.Int64
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				i := next.Add(1)
				at := t0.Add(time.Duration(i) * time.Millisecond)
				res, err := s.AppendOTLP(context.Background(), "", deltaSums(t, deltaPoint{at.Add(-time.Millisecond), at, 1}))
				if err != nil {
					t.Error(err)
					return
				}
				accepted.Add(res.Accepted)
				if res.Accepted+res.Reasons[ReasonOutOfOrder] != 1 {
					t.Errorf("%+v", res)
				}
			}
		}()
	}
	wg.Wait()
	got := samplesOf(t, s, nameIsRe("reqs_total"))[`{__name__="reqs_total", job="svc"}`]
	if int64(len(got)) != accepted.Load() || accepted.Load() == 0 {
		t.Fatalf("%d samples, %d accepted", len(got), accepted.Load())
	}
	for i, x := range got {
		if x.v != float64(i+1) {
			t.Fatalf("sample %d: %v, want %d (from %d: %v)", i, x.v, i+1, max(0, i-2), got[max(0, i-2):i+1])
		}
	}
	t.Logf("%d of 400 accepted, the rest out of order", accepted.Load())
}
