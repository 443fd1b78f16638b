package metricstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/storage/remote/otlptranslator/prometheusremotewrite"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// counter counts the samples appended through it.
type counter struct {
	storage.AppenderV2
	n int64
}

func (c *counter) Append(ref storage.SeriesRef, ls labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, o storage.AOptions) (storage.SeriesRef, error) {
	r, err := c.AppenderV2.Append(ref, ls, st, t, v, h, fh, o)
	if err == nil {
		c.n++
	}
	return r, err
}

// BenchmarkMetricsIngest measures OTLP request bytes → TSDB append and
// commit: the Store (otlpwire, series cache) against pdata unmarshal plus
// Prometheus' OTLP translator into the same TSDB. Requests hold batch data
// points drawn from the whole of synth's Kubernetes metric set (40 names
// of every kind: gauges, sums, histograms, exponential histograms and
// summaries; 40 attributes per point) in turn (mixedRequests), so every
// batch size sees the full mix; each series comes back 15 s later once
// the cycle of 120 points is through, so after the first cycle every
// sample goes to a known series: the steady state of a metrics pipeline.
//
// Each iteration starts by copying its request into one reused buffer, on
// both sides, as both receivers start from a buffer the transport just
// filled (gRPC frames materialized into a pooled buffer, an HTTP body read
// into one). The k requests (over 400 MB at batch 100) are needed for their
// timestamps; read where they lie, every request would come from DRAM, and
// the walk would wait on a miss at every data point header, which no
// server pays.
func BenchmarkMetricsIngest(b *testing.B) {
	const k = 3000 // distinct requests, in time order
	for _, impl := range []string{"wirehouse", "pdata"} {
		for _, batch := range []int{1, 8, 64, 100} {
			b.Run(fmt.Sprintf("impl=%s/batch=%d", impl, batch), func(b *testing.B) {
				reqs := mixedRequests(b, batch, k)
				var s *Store
				reopen := func() {
					if s != nil {
						s.Close()
					}
					var err error
					if s, err = Open(testConfig(b.TempDir())); err != nil {
						b.Fatal(err)
					}
				}
				reopen()
				defer func() { s.Close() }()
				conv := prometheusremotewrite.NewPrometheusConverter(nil)
				settings := oracleSettings(promconfig.OTLPConfig{})
				var samples, bytes int64
				var buf []byte
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if i > 0 && i%k == 0 {
						b.StopTimer()
						reopen()
						b.StartTimer()
					}
					req := append(buf[:0], reqs[i%k]...) // see above
					buf = req
					bytes += int64(len(req))
					if impl == "wirehouse" {
						res, err := s.AppendOTLP(context.Background(), "", req)
						if err != nil {
							b.Fatal(err)
						}
						samples += res.Samples
						continue
					}
					md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(req)
					if err != nil {
						b.Fatal(err)
					}
					app := &counter{AppenderV2: s.DB().AppenderV2(context.Background())}
					conv.Reset(app)
					if _, err := conv.FromMetrics(context.Background(), md, settings); err != nil {
						b.Fatal(err)
					}
					if err := app.Commit(); err != nil {
						b.Fatal(err)
					}
					samples += app.n
				}
				b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
				b.ReportMetric(float64(samples)/float64(b.N), "samples/op")
				b.SetBytes(bytes / int64(b.N))
			})
		}
	}
}

// mixedRequests returns k requests of batch data points each, drawn in
// turn from the whole Kubernetes metric set: the first 3 points of each
// of its 40 names (synth.Metrics seed 0 at 3,000 points, one target), in
// a cycle that takes point 0 of every name, then point 1, then point 2, so
// that consecutive points belong to different names and kinds. Request i
// holds the batch points that follow request i-1's in the cycle
// (wrapping), every point and exemplar moved i×15 s later. A batch of 40
// or more holds every name; smaller ones go through them in turn. It uses
// pdata, before the clock starts.
func mixedRequests(b testing.TB, batch, k int) [][]byte {
	key := [2]int{batch, k}
	if reqs, ok := mixedCache[key]; ok { // the benchmark runs again for each b.N
		return reqs
	}
	base := synth.Metrics(synth.Config{Seed: 0, Resources: 1, ScopesPerResource: 1, TotalRecords: 3000})
	md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(base)
	if err != nil {
		b.Fatal(err)
	}
	rm := md.ResourceMetrics().At(0)
	sm := rm.ScopeMetrics().At(0)
	type pick struct {
		m pmetric.Metric
		j int
	}
	var cycle []pick
	kinds := map[pmetric.MetricType]bool{}
	for j := range 3 {
		for _, m := range sm.Metrics().All() {
			if pointCount(m) > j {
				cycle = append(cycle, pick{m, j})
				kinds[m.Type()] = true
			}
		}
	}
	if batch > len(cycle) || len(kinds) < 5 {
		b.Fatalf("mixed requests: a cycle of %d points of %d kinds for batches of %d", len(cycle), len(kinds), batch)
	}
	reqs := make([][]byte, k)
	pos := 0
	for i := range reqs {
		out := pmetric.NewMetrics()
		orm := out.ResourceMetrics().AppendEmpty()
		rm.Resource().CopyTo(orm.Resource())
		orm.SetSchemaUrl(rm.SchemaUrl())
		osm := orm.ScopeMetrics().AppendEmpty()
		sm.Scope().CopyTo(osm.Scope())
		osm.SetSchemaUrl(sm.SchemaUrl())
		for range batch {
			p := cycle[pos]
			pos = (pos + 1) % len(cycle)
			onePoint(p.m, p.j, osm.Metrics().AppendEmpty())
		}
		shift := func(t pcommon.Timestamp) pcommon.Timestamp { return t + pcommon.Timestamp(i)*15e9 }
		eachPdataPoint(out, func(p pdataPoint, ex pmetric.ExemplarSlice) {
			p.SetTimestamp(shift(p.Timestamp()))
			for _, e := range ex.All() {
				e.SetTimestamp(shift(e.Timestamp()))
			}
		})
		if reqs[i], err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(out); err != nil {
			b.Fatal(err)
		}
	}
	mixedCache[key] = reqs
	return reqs
}

// mixedCache keeps mixedRequests' requests by batch and count.
var mixedCache = map[[2]int][][]byte{}

// pointCount is the number of data points of m.
func pointCount(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

// onePoint copies m into dst with only its data point j.
func onePoint(m pmetric.Metric, j int, dst pmetric.Metric) {
	m.CopyTo(dst)
	idx := 0
	drop := func() bool { idx++; return idx-1 != j } // every point but j
	switch dst.Type() {
	case pmetric.MetricTypeGauge:
		dst.Gauge().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { return drop() })
	case pmetric.MetricTypeSum:
		dst.Sum().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { return drop() })
	case pmetric.MetricTypeHistogram:
		dst.Histogram().DataPoints().RemoveIf(func(pmetric.HistogramDataPoint) bool { return drop() })
	case pmetric.MetricTypeExponentialHistogram:
		dst.ExponentialHistogram().DataPoints().RemoveIf(func(pmetric.ExponentialHistogramDataPoint) bool { return drop() })
	case pmetric.MetricTypeSummary:
		dst.Summary().DataPoints().RemoveIf(func(pmetric.SummaryDataPoint) bool { return drop() })
	}
}

// steadyRequests returns k requests of the same batch data points (those
// of synth.Metrics seed 0), request i with every point's and exemplar's
// time moved i×15 s later (the next scrape). It uses pdata to rewrite the
// timestamps, before the clock starts.
func steadyRequests(b testing.TB, batch, k int) [][]byte {
	base := synth.Metrics(synth.Config{Seed: 0, Resources: 1, ScopesPerResource: 1, TotalRecords: batch})
	md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(base)
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([][]byte, k)
	shift := func(t pcommon.Timestamp) pcommon.Timestamp { return t + 15e9 }
	shiftEx := func(exs pmetric.ExemplarSlice) {
		for _, e := range exs.All() {
			e.SetTimestamp(shift(e.Timestamp()))
		}
	}
	for i := range reqs {
		if reqs[i], err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md); err != nil {
			b.Fatal(err)
		}
		eachPdataPoint(md, func(p pdataPoint, ex pmetric.ExemplarSlice) {
			p.SetTimestamp(shift(p.Timestamp()))
			shiftEx(ex)
		})
	}
	return reqs
}

// BenchmarkWALReplay measures reopening a store whose WAL holds 100
// requests of 3,000 Kubernetes-set data points (steadyRequests: the same
// series every 15 s), about a million samples over 10,000 series (the
// shape of the probe: histograms and summaries make several series
// per point): the time Open takes to replay them into the head, the cost
// of a restart after a crash (the WAL and the head chunks the TSDB
// memory-maps, read from a warm page cache). Each iteration opens a fresh
// copy of the directory the writes left, so every replay starts from the
// same files; the first checks that every series and sample came back.
func BenchmarkWALReplay(b *testing.B) {
	src := b.TempDir()
	s, err := Open(testConfig(src))
	if err != nil {
		b.Fatal(err)
	}
	var samples int64
	for _, req := range steadyRequests(b, 3_000, 100) {
		res, err := s.AppendOTLP(context.Background(), "", req)
		if err != nil || res.Rejected != 0 {
			b.Fatalf("append: %+v, %v", res, err)
		}
		samples += res.Samples
	}
	series, stored := seriesAndSamples(b, s)
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	checked := false
	for b.Loop() {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "copy")
		if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		s, err := Open(testConfig(dir))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if !checked { // once: reading everything back takes longer than the replay
			if n, m := seriesAndSamples(b, s); n != series || m != stored {
				b.Fatalf("replayed %d series, %d samples; want %d, %d", n, m, series, stored)
			}
			checked = true
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(samples), "samples")
	b.ReportMetric(float64(series), "series")
	b.ReportMetric(float64(samples)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkCacheSweep measures the pause seriesCache.sweep takes under the
// cache's write lock at a head truncation: entries keyed like the store's
// (kind, resource id, scope id, then the rest), half of them stale. The
// keys are 64 bytes: the sweep reads only their first nine.
func BenchmarkCacheSweep(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			var c seriesCache
			c.init(2 * n)
			fill := func() {
				for i := range n {
					k := make([]byte, 64)
					k[0] = byte(kindNumber)
					binary.LittleEndian.PutUint32(k[1:], uint32(i%1000))
					binary.LittleEndian.PutUint32(k[5:], uint32(i%100))
					binary.LittleEndian.PutUint64(k[9:], uint64(i))
					c.entries[string(k)] = &cacheEntry{key: string(k), epoch: uint64(2 + i%2)}
				}
				for i := range 1000 {
					c.resources[fmt.Sprint("r", i)] = uint32(i)
				}
			}
			for b.Loop() {
				b.StopTimer()
				fill()
				b.StartTimer()
				c.sweep(3)
			}
			if len(c.entries) != n/2 {
				b.Fatalf("%d entries left, want %d", len(c.entries), n/2)
			}
		})
	}
}

// BenchmarkRequestOrder measures a request of 10 gauge series with 10
// points each, every request 10 s after the last: in time order
// (order=in), and with each series' points in reverse order (order=reverse),
// which the Store appends twice: a first walk that finds the disorder and
// is rolled back, then a sorted one (order.go).
func BenchmarkRequestOrder(b *testing.B) {
	const k = 3000
	for _, order := range []string{"in", "reverse"} {
		b.Run("order="+order, func(b *testing.B) {
			reqs := make([][]byte, k)
			for i := range reqs {
				md := pmetric.NewMetrics()
				rm := md.ResourceMetrics().AppendEmpty()
				rm.Resource().Attributes().PutStr("service.name", "svc")
				g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
				g.SetName("temp")
				dps := g.SetEmptyGauge().DataPoints()
				for p := range 100 {
					j := p % 10
					if order == "reverse" {
						j = 9 - j
					}
					dp := dps.AppendEmpty()
					dp.Attributes().PutInt("series", int64(p/10))
					dp.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(i*10+j) * time.Second)))
					dp.SetDoubleValue(float64(p))
				}
				var err error
				if reqs[i], err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md); err != nil {
					b.Fatal(err)
				}
			}
			s, err := Open(testConfig(b.TempDir()))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == k {
					b.Fatal("more iterations than requests: use -benchtime")
				}
				res, err := s.AppendOTLP(context.Background(), "", reqs[i])
				if err != nil || res.Accepted != 100 {
					b.Fatalf("%+v, %v", res, err)
				}
				i++
			}
		})
	}
}

// BenchmarkNativeWriteSweep is seed 003's native-write sweep: single
// writes, one sample to one series each, committed on their own, cycling
// over N series (1,000, 4,096, 32,768 and 100,000), every series written
// once before the clock starts so that the sweep measures the steady
// state (the seed's ~21 µs a write held from 1K to 100K series). A
// series' samples are 10 ms apart, so that a long run stays in the past.
//
//   - impl=tsdb: Prometheus' TSDB appender directly, as a scrape loop
//     writes: each series' labels built once and its reference kept from
//     its first append (AppenderV2.Append, then Commit);
//   - impl=wirehouse: Store.AppendOTLP of an OTLP request holding that one
//     point (a gauge of synth's Kubernetes set with its 40 attributes, the
//     series told apart by one more), copied into a reused buffer first as
//     from a transport: the OTLP path a single write takes.
func BenchmarkNativeWriteSweep(b *testing.B) {
	tmpl, idOff, timeOff := singlePointRequest(b)
	for _, n := range []int{1000, 4096, 32768, 100000} {
		b.Run(fmt.Sprintf("series=%d/impl=tsdb", n), func(b *testing.B) {
			s := open(b, b.TempDir())
			defer s.Close()
			ls := singlePointLabels(b, tmpl, timeOff)
			refs := make([]storage.SeriesRef, n)
			sets := make([]labels.Labels, n)
			t0 := time.Now().Add(-time.Hour).UnixMilli()
			write := func(i, round int) {
				app := s.DB().AppenderV2(context.Background())
				ref, err := app.Append(refs[i], sets[i], 0, t0+int64(round)*10, float64(round), nil, nil, storage.AOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if err := app.Commit(); err != nil {
					b.Fatal(err)
				}
				refs[i] = ref
			}
			for i := range n {
				lb := labels.NewBuilder(ls)
				lb.Set("series_id", fmt.Sprintf("series-%08d", i))
				sets[i] = lb.Labels()
				write(i, 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				write(i%n, 1+i/n)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
		})
		b.Run(fmt.Sprintf("series=%d/impl=wirehouse", n), func(b *testing.B) {
			s := open(b, b.TempDir())
			defer s.Close()
			buf := make([]byte, len(tmpl))
			t0 := uint64(time.Now().Add(-time.Hour).UnixNano())
			write := func(i, round int) {
				copy(buf, tmpl)
				copy(buf[idOff:idOff+8], fmt.Appendf(nil, "%08d", i))
				binary.LittleEndian.PutUint64(buf[timeOff:], t0+uint64(round)*10e6)
				res, err := s.AppendOTLP(context.Background(), "", buf)
				if err != nil || res.Accepted != 1 {
					b.Fatalf("write %d: %+v, %v", i, res, err)
				}
			}
			for i := range n {
				write(i, 0)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				write(i%n, 1+i/n)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
		})
	}
}

// singlePointRequest returns an OTLP request holding one gauge point of
// synth's Kubernetes set with one more attribute, series.id =
// "series-00000000", and the offsets of that value's eight digits and of
// the point's time_unix_nano in it.
func singlePointRequest(b *testing.B) (req []byte, idOff, timeOff int) {
	base := synth.Metrics(synth.Config{Seed: 0, Resources: 1, ScopesPerResource: 1, TotalRecords: 3000})
	md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(base)
	if err != nil {
		b.Fatal(err)
	}
	rm := md.ResourceMetrics().At(0)
	sm := rm.ScopeMetrics().At(0)
	out := pmetric.NewMetrics()
	orm := out.ResourceMetrics().AppendEmpty()
	rm.Resource().CopyTo(orm.Resource())
	osm := orm.ScopeMetrics().AppendEmpty()
	sm.Scope().CopyTo(osm.Scope())
	for _, m := range sm.Metrics().All() {
		if m.Type() == pmetric.MetricTypeGauge {
			onePoint(m, 0, osm.Metrics().AppendEmpty())
			break
		}
	}
	p := osm.Metrics().At(0).Gauge().DataPoints().At(0)
	p.Attributes().PutStr("series.id", "series-00000000")
	const mark = 0x5eed5eed5eed5eed // a time to find in the bytes
	p.SetTimestamp(mark)
	if req, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(out); err != nil {
		b.Fatal(err)
	}
	idOff = bytes.Index(req, []byte("series-00000000")) + len("series-")
	var m [8]byte
	binary.LittleEndian.PutUint64(m[:], mark)
	timeOff = bytes.Index(req, m[:])
	if idOff < len("series-") || timeOff < 0 || bytes.Count(req, m[:]) != 1 {
		b.Fatal("single point request: placeholders not found")
	}
	return req, idOff, timeOff
}

// singlePointLabels is the label set the store gives the template's point
// (its series id aside), read back from a store it is written to, so that
// the tsdb side writes series of the same shape.
func singlePointLabels(b *testing.B, req []byte, timeOff int) labels.Labels {
	s := open(b, b.TempDir())
	defer s.Close()
	r := append([]byte(nil), req...)
	binary.LittleEndian.PutUint64(r[timeOff:], uint64(time.Now().Add(-time.Hour).UnixNano()))
	if res, err := s.AppendOTLP(context.Background(), "", r); err != nil || res.Accepted != 1 {
		b.Fatalf("single point labels: %+v, %v", res, err)
	}
	q, err := s.DB().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	for ss.Next() {
		if ls := ss.At().Labels(); ls.Has("series_id") {
			return ls
		}
	}
	b.Fatalf("single point labels: not found (%v)", ss.Err())
	return labels.EmptyLabels()
}

// BenchmarkPayloadFloor puts the TSDB's own share of a request beside the
// Store's, on the payloads the server comparison sends
// (scripts/compare-metric-servers.sh: 2,000 series, 100 points a request,
// synth.SeriesRequest; rich with every resource attribute promoted):
//
//   - impl=wirehouse: Store.AppendOTLP of each request, copied into a
//     reused buffer first as from a transport;
//   - impl=tsdb: the same samples (read back from a store that took the
//     requests) appended straight to the TSDB head with the references
//     kept from their series' creation, and committed every as many
//     samples as a request holds: Append and Commit only, no request to
//     read, no labels to build, no order or duplicate checks. It is the
//     floor of the Store's cost while Prometheus' TSDB stores the samples.
//
// Both start with every series created (round 0, outside the clock) and
// report ns/sample, so the difference is what the Store adds to the TSDB.
func BenchmarkPayloadFloor(b *testing.B) {
	const series, batch, rounds = 2000, 100, 30
	perRound := series / batch
	for _, p := range []synth.Payload{synth.PayloadHistogram, synth.PayloadRich, synth.PayloadGauge} {
		set := func(c *Config) { c.PromoteAllResourceAttributes = p == synth.PayloadRich }
		start := time.Now().Add(-time.Duration(rounds+10) * time.Second).Truncate(time.Second)
		reqs := make([][]byte, rounds*perRound)
		for i := range reqs {
			reqs[i] = synth.SeriesRequest(synth.SeriesConfig{Payload: p, Series: series, Batch: batch, Start: start}, int64(i))
		}
		b.Run(fmt.Sprintf("payload=%s/impl=wirehouse", p), func(b *testing.B) {
			var s *Store
			var buf []byte
			appendReq := func(r []byte) int64 {
				buf = append(buf[:0], r...)
				res, err := s.AppendOTLP(context.Background(), "", buf)
				if err != nil || res.Rejected != 0 {
					b.Fatalf("append: %+v, %v", res, err)
				}
				return res.Samples
			}
			warm := func() {
				if s != nil {
					s.Close()
				}
				s = open(b, b.TempDir(), set)
				for _, r := range reqs[:perRound] {
					appendReq(r)
				}
			}
			warm()
			defer func() { s.Close() }()
			var samples int64
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % (len(reqs) - perRound)
				if i > 0 && j == 0 {
					b.StopTimer()
					warm()
					b.StartTimer()
				}
				samples += appendReq(reqs[perRound+j])
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
			b.ReportMetric(float64(samples)/float64(b.N), "samples/op")
		})
		b.Run(fmt.Sprintf("payload=%s/impl=tsdb", p), func(b *testing.B) {
			sets, rows := storedSamples(b, reqs, set)
			per := (len(rows) * len(rows[0])) / len(reqs) // samples a request holds
			var s *Store
			refs := make([]storage.SeriesRef, len(sets))
			var app storage.AppenderV2
			n := 0
			add := func(k int, smp storedSample) {
				if app == nil {
					app = s.DB().AppenderV2(context.Background())
				}
				ref, err := app.Append(refs[k], sets[k], 0, smp.t, smp.v, nil, nil, storage.AOptions{})
				if err != nil {
					b.Fatal(err)
				}
				refs[k] = ref
				if n++; n == per {
					if err := app.Commit(); err != nil {
						b.Fatal(err)
					}
					app, n = nil, 0
				}
			}
			flush := func() {
				if app != nil {
					if err := app.Commit(); err != nil {
						b.Fatal(err)
					}
					app, n = nil, 0
				}
			}
			warm := func() {
				if s != nil {
					s.Close()
				}
				s = open(b, b.TempDir(), set)
				clear(refs)
				for k := range sets {
					add(k, rows[0][k])
				}
				flush()
			}
			warm()
			defer func() { s.Close() }()
			// One op is one request's worth of samples: per of them, in
			// series order round after round.
			total := (len(rows) - 1) * len(sets)
			next := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for range per {
					if next == total {
						b.StopTimer()
						flush()
						warm()
						next = 0
						b.StartTimer()
					}
					r, k := 1+next/len(sets), next%len(sets)
					add(k, rows[r][k])
					next++
				}
			}
			flush()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*per), "ns/sample")
			b.ReportMetric(float64(per), "samples/op")
		})
	}
}

type storedSample struct {
	t int64
	v float64
}

// storedSamples appends reqs to a new store configured by set and reads
// back what it stored: every series' labels (sorted by them) and, for each
// round, the series' sample of that round (rows[round][series]). Each
// series must hold exactly one float sample per round.
func storedSamples(b *testing.B, reqs [][]byte, set func(*Config)) ([]labels.Labels, [][]storedSample) {
	s := open(b, b.TempDir(), set)
	defer s.Close()
	for _, r := range reqs {
		if res, err := s.AppendOTLP(context.Background(), "", append([]byte(nil), r...)); err != nil || res.Rejected != 0 {
			b.Fatalf("append: %+v, %v", res, err)
		}
	}
	q, err := s.DB().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		b.Fatal(err)
	}
	defer q.Close()
	var sets []labels.Labels
	var rows [][]storedSample
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	for ss.Next() {
		k := len(sets)
		sets = append(sets, ss.At().Labels())
		it := ss.At().Iterator(nil)
		r := 0
		for typ := it.Next(); typ != chunkenc.ValNone; typ = it.Next() {
			if typ != chunkenc.ValFloat {
				b.Fatalf("series %s: a %v sample", sets[k], typ)
			}
			t, v := it.At()
			if r == len(rows) {
				rows = append(rows, nil)
			}
			rows[r] = append(rows[r], storedSample{t, v})
			r++
		}
		if err := it.Err(); err != nil {
			b.Fatal(err)
		}
	}
	if err := ss.Err(); err != nil {
		b.Fatal(err)
	}
	for r, row := range rows {
		if len(row) != len(sets) {
			b.Fatalf("round %d: %d of %d series have a sample", r, len(row), len(sets))
		}
	}
	return sets, rows
}
