package synth

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// TestSeriesRequest decodes a stream of every payload with pdata: each
// request holds Batch points; every series gets exactly one point per
// round, at the round's time; the attribute counts are the payload's; and
// histograms are consistent.
func TestSeriesRequest(t *testing.T) {
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for _, p := range []Payload{PayloadGauge, PayloadRich, PayloadHistogram} {
		for _, o := range []Order{Ascending, Descending} {
			t.Run(fmt.Sprint(p, "/", o), func(t *testing.T) {
				const series, batch, requests = 250, 60, 25 // 1,500 points: 6 rounds
				cfg := SeriesConfig{Payload: p, Series: series, Batch: batch, Start: start, Order: o}
				seen := map[string][]int64{} // series → timestamps (seconds after start)
				for n := range int64(requests) {
					req := pmetricotlp.NewExportRequest()
					if err := req.UnmarshalProto(SeriesRequest(cfg, n)); err != nil {
						t.Fatalf("request %d: %v", n, err)
					}
					md := req.Metrics()
					if got := md.DataPointCount(); got != batch {
						t.Fatalf("request %d: %d points, want %d", n, got, batch)
					}
					rms := md.ResourceMetrics()
					for i := range rms.Len() {
						res := rms.At(i).Resource().Attributes()
						wantRes := 2
						if p == PayloadRich {
							wantRes = 20
						}
						if res.Len() != wantRes {
							t.Fatalf("resource with %d attributes, want %d", res.Len(), wantRes)
						}
						inst, _ := res.Get("service.instance.id")
						m := rms.At(i).ScopeMetrics().At(0).Metrics().At(0)
						add := func(attrs map[string]any, ts int64) {
							wantPoint := map[Payload]int{PayloadGauge: 2, PayloadRich: 10, PayloadHistogram: 2}[p]
							if len(attrs) != wantPoint {
								t.Fatalf("point with %d attributes, want %d", len(attrs), wantPoint)
							}
							key := fmt.Sprint(inst.Str(), attrs)
							seen[key] = append(seen[key], (ts-start.UnixNano())/1e9)
						}
						switch p {
						case PayloadHistogram:
							dps := m.Histogram().DataPoints()
							if m.Histogram().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
								t.Fatal("histogram not cumulative")
							}
							for k := range dps.Len() {
								dp := dps.At(k)
								var total uint64
								for _, c := range dp.BucketCounts().AsRaw() {
									total += c
								}
								if dp.ExplicitBounds().Len() != 16 || dp.BucketCounts().Len() != 17 || total != dp.Count() || !dp.HasSum() {
									t.Fatalf("histogram point: %d bounds, %d counts summing to %d, count %d", dp.ExplicitBounds().Len(), dp.BucketCounts().Len(), total, dp.Count())
								}
								add(dp.Attributes().AsRaw(), int64(dp.Timestamp()))
							}
						default:
							dps := m.Gauge().DataPoints()
							for k := range dps.Len() {
								add(dps.At(k).Attributes().AsRaw(), int64(dps.At(k).Timestamp()))
							}
						}
					}
				}
				if len(seen) != series {
					t.Fatalf("%d distinct series, want %d", len(seen), series)
				}
				for k, ts := range seen {
					if len(ts) != requests*batch/series {
						t.Fatalf("series %s: %d points, want %d", k, len(ts), requests*batch/series)
					}
					for r, s := range ts {
						if s != int64(r) {
							t.Fatalf("series %s: point %d at +%ds, want +%ds", k, r, s, r)
						}
					}
				}
			})
		}
	}
	if _, err := ParsePayload("bogus"); err == nil {
		t.Error("ParsePayload accepted bogus")
	}
}
