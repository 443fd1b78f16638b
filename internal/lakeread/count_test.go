package lakeread_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestCountLogsAsRecords: CountLogs' counts by service, severity and
// bucket (and by service and bucket alone) are those of the records sent
// (pdata is the oracle), on a lake where whole pages fall in one bucket
// and hold one service (requests of 20,000 records of one resource, read
// from the page index) and where they do not (three resources a
// request), with buckets of 10 s, 1 min and 1 h and a range that cuts
// requests in two.
func TestCountLogsAsRecords(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for i := range 8 {
		resources, n := 1, 20_000
		if i >= 6 {
			resources, n = 3, 6_000
		}
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(i), Resources: resources, ScopesPerResource: 1, TotalRecords: n, Start: base.Add(time.Duration(i) * 50 * time.Second)}))
	}
	writeLogsLake(t, dir, reqs...)
	r := newReader(t, dir)
	defer r.Close()
	type key struct {
		svc, text string
		num       int32
		bucket    int64
	}
	for _, step := range []time.Duration{10 * time.Second, time.Minute, time.Hour} {
		for _, severity := range []bool{true, false} {
			start, end := base.Add(20*time.Second), base.Add(6*time.Minute+30*time.Second)
			bucket := func(ts int64) int64 { return ts / int64(step) }
			want := map[key]int64{}
			for _, b := range reqs {
				req := plogotlp.NewExportRequest()
				if err := req.UnmarshalProto(b); err != nil {
					t.Fatal(err)
				}
				for _, rl := range req.Logs().ResourceLogs().All() {
					svc := "unknown_service"
					if v, ok := rl.Resource().Attributes().Get("service.name"); ok {
						svc = v.AsString()
					}
					for _, sl := range rl.ScopeLogs().All() {
						for _, lr := range sl.LogRecords().All() {
							ts := int64(lr.Timestamp())
							if ts == 0 {
								ts = int64(lr.ObservedTimestamp())
							}
							if ts < start.UnixNano() || ts >= end.UnixNano() {
								continue
							}
							k := key{svc: svc, bucket: bucket(ts)}
							if severity {
								k.text, k.num = lr.SeverityText(), int32(lr.SeverityNumber())
							}
							want[k]++
						}
					}
				}
			}
			got := map[key]int64{}
			q := lakeread.LogCountQuery{Start: start, End: end, Bucket: bucket, Severity: severity}
			err := r.CountLogs(context.Background(), "acme", q, func(c lakeread.LogCount) bool {
				got[key{c.Service, c.SeverityText, c.SeverityNumber, c.Bucket}] += c.N
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) {
				t.Errorf("step %v, severity %v: %d counts, want %d\n got  %v\n want %v", step, severity, len(got), len(want), sorted(got), sorted(want))
			}
			if len(want) < 3 {
				t.Errorf("step %v: %d counts: the test compares little", step, len(want))
			}
		}
	}
}

// BenchmarkCountLogs: a count by service and by service and severity, 1
// min buckets, over a lake of 500,000 logs (500 requests of 1,000
// records over 10 resources, a request a second).
func BenchmarkCountLogs(b *testing.B) {
	dir := b.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for i := range 500 {
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(i), Resources: 10, ScopesPerResource: 1, TotalRecords: 1000, Start: base}))
	}
	writeLogsLake(b, dir, reqs...)
	r := newReader(b, dir)
	defer r.Close()
	for _, severity := range []bool{false, true} {
		name := "by service"
		if severity {
			name += " and severity"
		}
		b.Run(name, func(b *testing.B) {
			q := lakeread.LogCountQuery{Start: base.Add(-24 * time.Hour), End: base.Add(24 * time.Hour), Severity: severity,
				Bucket: func(ts int64) int64 { return ts / int64(time.Minute) }}
			for b.Loop() {
				n := int64(0)
				err := r.CountLogs(context.Background(), "acme", q, func(c lakeread.LogCount) bool { n += c.N; return true })
				if err != nil || n != 500_000 {
					b.Fatalf("%d records counted, want 500000: %v", n, err)
				}
			}
		})
	}
}

// sorted is a map's entries as sorted text.
func sorted[K comparable, V any](m map[K]V) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprint(k, "=", v))
	}
	slices.Sort(out)
	return out
}
