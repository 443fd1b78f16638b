package metricstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// FuzzAppendOTLP checks that no input panics, that a request that fails
// stores nothing (no samples, no series), and that AppendOTLP refuses as
// malformed exactly the requests otlpwire's Validate refuses. One store
// serves many inputs, so its caches of validated resources, scopes and
// attributes are exercised with mutations of bytes they already hold.
func FuzzAppendOTLP(f *testing.F) {
	for seed := range uint64(40) {
		for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
			if b := synth.Random(rand.New(rand.NewPCG(seed, 3)), otlpwire.SignalMetrics, o); len(b) < 2048 {
				f.Add(b)
			}
		}
	}
	f.Add(synth.Metrics(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, RecordsPerScope: 3}))
	// Delta points, made cumulative (delta.go).
	f.Add(deltaSums(f, deltaPoint{t0.Add(-time.Second), t0, 5}, deltaPoint{t0, t0.Add(time.Second), 3}))
	f.Add(deltaHistogram(f, t0.Add(-time.Second), t0, []float64{1, 2}, []uint64{1, 2, 3}, 10))
	f.Add(deltaExp(f, t0.Add(-time.Second), t0, 1, 0, []uint64{1, 2}, -1, []uint64{4}, 9))
	// One store for many inputs, replaced every 25 so that counting its
	// samples (a scan) stays cheap.
	var (
		s    *Store
		dir  string
		used int
	)
	base := f.TempDir()
	open := func(tb testing.TB) {
		if s != nil {
			s.Close()
			os.RemoveAll(dir)
		}
		var err error
		if dir, err = os.MkdirTemp(base, "store"); err != nil {
			tb.Fatal(err)
		}
		if s, err = Open(testConfig(dir, func(c *Config) {
			c.OutOfOrderWindow, c.MaxExemplars, c.MaxTimeAhead = 100*365*24*time.Hour, 1000, 0
		})); err != nil {
			tb.Fatal(err)
		}
		used = 0
	}
	open(f)
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, req []byte) {
		if used++; used > 25 {
			open(t)
		}
		before, series := countSamples(t, s), s.db.Head().NumSeries()
		verr := otlpwire.MetricsRequest(req).Validate()
		_, err := s.AppendOTLP(context.Background(), "", req)
		if err != nil {
			if after := countSamples(t, s); after != before {
				t.Fatalf("failed request stored %d samples: %v", after-before, err)
			}
			if n := s.db.Head().NumSeries(); n != series {
				t.Fatalf("failed request left %d series: %v", n-series, err)
			}
		}
		var we *otlpwire.Error
		switch {
		case verr == nil && errors.As(err, &we):
			t.Fatalf("AppendOTLP refused a request Validate accepts: %v", err)
		case verr != nil && !errors.As(err, &we):
			t.Fatalf("AppendOTLP did not refuse a request Validate refuses (%v): err %v", verr, err)
		}
	})
}

func countSamples(t *testing.T, s *Store) int {
	_, n := seriesAndSamples(t, s)
	return n
}
