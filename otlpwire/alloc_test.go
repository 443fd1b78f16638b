package otlpwire

import (
	"io"
	"testing"
)

// The zero-allocation promises, checked with testing.AllocsPerRun on the
// benchmark fixture and on a large generated request.

// AllocInputs returns the requests of signal s that TestZeroAllocs walks.
// It is set by inputs_test.go (package otlpwire_test), because the
// generator, internal/synth, imports this package for its Signal and so
// cannot be imported by tests inside it.
var AllocInputs func(s Signal) [][]byte

func TestZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	for _, s := range Signals {
		for _, in := range AllocInputs(s) {
			buf := make([]byte, 0, len(in))
			sp, err := NewSplitter(WithMaxRecords(50), WithMaxBytes(16<<10))
			if err != nil {
				t.Fatal(err)
			}
			cases := map[string]func(){
				"count": func() {
					var err error
					switch s {
					case SignalLogs:
						_, err = LogsRequest(in).LogRecordCount()
					case SignalTraces:
						_, err = TracesRequest(in).SpanCount()
					default:
						_, err = MetricsRequest(in).DataPointCount()
					}
					if err != nil {
						t.Fatal(err)
					}
				},
				"deepwalk": func() {
					if _, err := DeepWalkWire(s, in); err != nil {
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
					case SignalLogs:
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
					case SignalTraces:
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
					case SignalLogs:
						for _, err := range sp.SplitLogs(in) {
							if err != nil {
								t.Fatal(err)
							}
						}
					case SignalTraces:
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
