package tracemetrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/metricstore"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/internal/tracemetrics"
)

// BenchmarkFlushToStore: a flush of every series into a metric store, as
// serve's does, per sample stored. "new" makes every series in the store
// (a new instance id each iteration: the first flush after a start);
// "known" writes series the store already holds (each later flush).
func BenchmarkFlushToStore(b *testing.B) {
	reqs := make([][]byte, 8)
	for i := range reqs {
		reqs[i] = synth.Traces(synth.Config{Seed: int64(i), Resources: 10, ScopesPerResource: 1, TotalRecords: 1000})
	}
	c := metricstore.DefaultConfig()
	c.Dir = b.TempDir()
	st, err := metricstore.Open(c)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	t0 := time.Now().Add(-time.Hour)
	gen := func(id string) *tracemetrics.Generator {
		cfg := tracemetrics.DefaultConfig()
		cfg.InstanceID = id
		cfg.MaxSeries = 100_000
		g, err := tracemetrics.New(cfg, t0)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range reqs {
			if err := g.Consume("t", r, t0); err != nil {
				b.Fatal(err)
			}
		}
		return g
	}
	now := t0 // every flush later than the last, across the runs
	gens := 0 // generators made: each with its own instance id
	for _, name := range []string{"new", "known"} {
		b.Run(name, func(b *testing.B) {
			gens++
			g := gen(fmt.Sprint("known", gens))
			var samples int64
			write := func(_ string, req []byte) error {
				res, err := st.AppendOTLP(context.Background(), "", req)
				samples += int64(res.Samples)
				if err == nil && res.Rejected > 0 {
					err = fmt.Errorf("rejected: %s", res.Message())
				}
				return err
			}
			now = now.Add(time.Second)
			if name == "known" {
				if err := g.Flush(now, true, write); err != nil {
					b.Fatal(err)
				}
			}
			samples = 0
			b.ResetTimer()
			for range b.N {
				if name == "new" {
					b.StopTimer()
					gens++
					g = gen(fmt.Sprint("new", gens))
					b.StartTimer()
				}
				now = now.Add(time.Second)
				if err := g.Flush(now, true, write); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(samples), "ns/sample")
			b.ReportMetric(float64(samples)/float64(b.N), "samples/op")
		})
	}
}
