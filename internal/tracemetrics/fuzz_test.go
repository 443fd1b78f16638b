package tracemetrics

import (
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// FuzzConsume: any bytes given as a traces request are counted or
// refused with an error, never a panic, and every flush after them is an
// OTLP metrics request pdata reads (exemplars included), within the
// bounds.
func FuzzConsume(f *testing.F) {
	f.Add(synth.Traces(synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 20}))
	for i := range 4 {
		f.Add(synth.Random(rand.New(rand.NewPCG(uint64(i), 9)), otlpwire.SignalTraces, synth.Ascending))
	}
	f.Fuzz(func(t *testing.T, req []byte) {
		cfg := DefaultConfig()
		cfg.MaxSeries, cfg.MaxGraphSeries, cfg.MaxEdges = 5, 5, 5
		cfg.Dimensions = []string{"http.route"}
		cfg.Exemplars, cfg.MaxExemplarsPerPoint = true, 3
		g, err := New(cfg, t0)
		if err != nil {
			t.Fatal(err)
		}
		g.Consume("t", req, t0) //nolint:errcheck // refused or counted
		g.Consume("t", req, t0) //nolint:errcheck
		g.Expire(t0.Add(time.Minute))
		err = g.Flush(t0.Add(time.Minute), true, func(_ string, out []byte) error {
			r := pmetricotlp.NewExportRequest()
			if err := r.UnmarshalProto(out); err != nil {
				t.Fatalf("a flush pdata cannot read: %v", err)
			}
			if n := r.Metrics().DataPointCount(); n > 2*2*(5+1)+4*2*5 {
				t.Fatalf("%d points past the bounds", n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
