package otlpwire_test

import (
	"io"
	"testing"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/internal/wirewalk"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// The zero-allocation promises, checked with testing.AllocsPerRun on the
// benchmark fixture and on generated requests, from the external test
// package: what a caller in another package pays.

// allocInputs returns the requests of signal s that TestZeroAllocs walks.
func allocInputs(s otlpwire.Signal) [][]byte {
	return [][]byte{
		fixture(s),
		synth.RealisticFixture(s, synth.Descending),
		synth.Generate(s, synth.Config{Seed: 7, Resources: 3, ScopesPerResource: 2, RecordsPerScope: 200}),
	}
}

func TestZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	for _, s := range otlpwire.Signals {
		for _, in := range allocInputs(s) {
			buf := make([]byte, 0, len(in))
			sp, err := otlpwire.NewSplitter(otlpwire.WithMaxRecords(50), otlpwire.WithMaxBytes(16<<10))
			if err != nil {
				t.Fatal(err)
			}
			cases := map[string]func(){
				"count": func() {
					var err error
					switch s {
					case otlpwire.SignalLogs:
						_, err = otlpwire.LogsRequest(in).LogRecordCount()
					case otlpwire.SignalTraces:
						_, err = otlpwire.TracesRequest(in).SpanCount()
					default:
						_, err = otlpwire.MetricsRequest(in).DataPointCount()
					}
					if err != nil {
						t.Fatal(err)
					}
				},
				"deepwalk": func() {
					if _, err := wirewalk.Deep(s, in); err != nil {
						t.Fatal(err)
					}
				},
				// Walk, its callbacks capturing and updating locals.
				"walk": func() {
					if _, err := walkSum(s, in); err != nil {
						t.Fatal(err)
					}
				},
				// The validating walk (metrics; on other signals it reads
				// no metrics and finds nothing wrong) covers Value.Validate.
				"validatingwalk": func() {
					if s != otlpwire.SignalMetrics {
						return
					}
					if _, err := wirewalk.ValidatingMetrics(in); err != nil {
						t.Fatal(err)
					}
				},
				"validate": func() {
					if err := s.Validate(in); err != nil {
						t.Fatal(err)
					}
				},
				"split-per-resource": func() {
					switch s {
					case otlpwire.SignalLogs:
						for rl, err := range otlpwire.LogsRequest(in).ResourceLogs() {
							if err != nil {
								t.Fatal(err)
							}
							buf = rl.AppendTo(buf[:0])
							if _, err := rl.WriteTo(io.Discard); err != nil {
								t.Fatal(err)
							}
							r, _ := rl.Resource()
							if _, err := r.Hash(); err != nil {
								t.Fatal(err)
							}
						}
					case otlpwire.SignalTraces:
						for rs, err := range otlpwire.TracesRequest(in).ResourceSpans() {
							if err != nil {
								t.Fatal(err)
							}
							buf = rs.AppendTo(buf[:0])
							if _, err := rs.WriteTo(io.Discard); err != nil {
								t.Fatal(err)
							}
						}
					default:
						for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
							if err != nil {
								t.Fatal(err)
							}
							buf = rm.AppendTo(buf[:0])
							if _, err := rm.WriteTo(io.Discard); err != nil {
								t.Fatal(err)
							}
							r, _ := rm.Resource()
							a, _ := r.Attributes()
							if _, _, err := a.Get("service.name"); err != nil {
								t.Fatal(err)
							}
							if _, err := r.ServiceName(); err != nil {
								t.Fatal(err)
							}
						}
					}
				},
				"splitter": func() {
					switch s {
					case otlpwire.SignalLogs:
						for _, err := range sp.SplitLogs(in) {
							if err != nil {
								t.Fatal(err)
							}
						}
					case otlpwire.SignalTraces:
						for _, err := range sp.SplitTraces(in) {
							if err != nil {
								t.Fatal(err)
							}
						}
					default:
						for _, err := range sp.SplitMetrics(in) {
							if err != nil {
								t.Fatal(err)
							}
						}
					}
				},
			}
			for name, fn := range cases {
				fn() // warm up reusable buffers
				if a := testing.AllocsPerRun(20, fn); a != 0 {
					t.Errorf("signal=%s %s (%d bytes): %v allocs per run, want 0", s, name, len(in), a)
				}
			}
		}
	}
}
