package metricstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/storage/remote/otlptranslator/prometheusremotewrite"
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
// points of synth's Kubernetes metric set (40 names, 40 attributes per
// point); as an exporter does, each request sends the same series again,
// 15 s later (steadyRequests), so after the first request every sample
// goes to a known series: the steady state of a metrics pipeline.
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
				reqs := steadyRequests(b, batch, k)
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
