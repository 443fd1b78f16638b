package tracemetrics

import (
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// BenchmarkConsume: the cost of counting a request of 1000 synthetic
// spans (10 resources), per span, into state already holding their
// series.
func BenchmarkConsume(b *testing.B) {
	reqs := make([][]byte, 64)
	for i := range reqs {
		reqs[i] = synth.Traces(synth.Config{Seed: int64(i), Resources: 10, ScopesPerResource: 1, TotalRecords: 1000})
	}
	g, err := New(DefaultConfig(), t0)
	if err != nil {
		b.Fatal(err)
	}
	now := t0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := g.Consume("t", reqs[i%len(reqs)], now); err != nil {
			b.Fatal(err)
		}
		if i%64 == 63 {
			now = now.Add(time.Second)
			g.Expire(now)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/span")
}
