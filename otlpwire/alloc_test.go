package otlpwire

import (
	"io"
	"testing"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// The zero-allocation promises, checked with testing.AllocsPerRun on the
// benchmark fixture and on a large generated request.

func TestZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	for _, s := range benchSignals {
		for _, in := range [][]byte{fixture(s), synth.RealisticFixture(s, synth.Descending), synth.Generate(s, synth.Config{Seed: 7, Resources: 3, ScopesPerResource: 2, RecordsPerScope: 200})} {
			buf := make([]byte, 0, len(in))
			sp, err := NewSplitter(WithMaxRecords(50), WithMaxBytes(16<<10))
			if err != nil {
				t.Fatal(err)
			}
			cases := map[string]func(){
				"count": func() {
					var err error
					switch s {
					case synth.SignalLogs:
						_, err = LogsRequest(in).LogRecordCount()
					case synth.SignalTraces:
						_, err = TracesRequest(in).SpanCount()
					default:
						_, err = MetricsRequest(in).DataPointCount()
					}
					if err != nil {
						t.Fatal(err)
					}
				},
				"deepwalk": func() {
					if _, err := deepWalkWire(s, in); err != nil {
						t.Fatal(err)
					}
				},
				"validate": func() {
					if err := validate(s, in); err != nil {
						t.Fatal(err)
					}
				},
				"split-per-resource": func() {
					switch s {
					case synth.SignalLogs:
						for rl, err := range LogsRequest(in).ResourceLogs() {
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
					case synth.SignalTraces:
						for rs, err := range TracesRequest(in).ResourceSpans() {
							if err != nil {
								t.Fatal(err)
							}
							buf = rs.AppendTo(buf[:0])
							if _, err := rs.WriteTo(io.Discard); err != nil {
								t.Fatal(err)
							}
						}
					default:
						for rm, err := range MetricsRequest(in).ResourceMetrics() {
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
					case synth.SignalLogs:
						for _, err := range sp.SplitLogs(in) {
							if err != nil {
								t.Fatal(err)
							}
						}
					case synth.SignalTraces:
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

func validate(s synth.Signal, b []byte) error {
	switch s {
	case synth.SignalLogs:
		return LogsRequest(b).Validate()
	case synth.SignalTraces:
		return TracesRequest(b).Validate()
	}
	return MetricsRequest(b).Validate()
}
