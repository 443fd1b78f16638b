package otlpjson_test

import (
	"testing"

	"github.com/wirehouse/wirehouse/internal/otlpjson"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestRoundTrip(t *testing.T) {
	for _, sig := range otlpwire.Signals {
		t.Run(sig.String(), func(t *testing.T) {
			b := synth.Generate(sig, synth.Config{Seed: 3, Resources: 2, ScopesPerResource: 2, TotalRecords: 40})
			doc, err := otlpjson.FromProto(sig, b)
			if err != nil {
				t.Fatal(err)
			}
			back, err := otlpjson.ToProto(sig, doc)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := sig.Count(back); err != nil || n != 40 {
				t.Errorf("after a round trip: %d records, %v; want 40", n, err)
			}
			// The two encodings of the same request hash alike resource by resource.
			if a, z := resourceHashes(t, sig, b), resourceHashes(t, sig, back); len(a) != 2 || len(z) != 2 || a[0] != z[0] || a[1] != z[1] {
				t.Errorf("resource hashes %v before, %v after", a, z)
			}
			for _, other := range otlpwire.Signals {
				key := otlpjson.OtherSignalKey(other, doc)
				if (key != "") != (other != sig) {
					t.Errorf("OtherSignalKey(%v, a %v document) = %q", other, sig, key)
				}
			}
		})
	}
	if _, err := otlpjson.ToProto(otlpwire.SignalLogs, []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"x"}]}]}]}`)); err == nil {
		t.Error("ToProto accepted a bad timestamp")
	}
	if key := otlpjson.OtherSignalKey(otlpwire.SignalLogs, []byte(`[1,2]`)); key != "" {
		t.Errorf("OtherSignalKey of a non-object: %q", key)
	}
}

func resourceHashes(t *testing.T, sig otlpwire.Signal, b []byte) []uint64 {
	t.Helper()
	var out []uint64
	add := func(r otlpwire.Resource, err error) {
		if err != nil {
			t.Fatal(err)
		}
		h, err := r.Hash()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	switch sig {
	case otlpwire.SignalLogs:
		for rl, err := range otlpwire.LogsRequest(b).ResourceLogs() {
			if err != nil {
				t.Fatal(err)
			}
			add(rl.Resource())
		}
	case otlpwire.SignalTraces:
		for rs, err := range otlpwire.TracesRequest(b).ResourceSpans() {
			if err != nil {
				t.Fatal(err)
			}
			add(rs.Resource())
		}
	default:
		for rm, err := range otlpwire.MetricsRequest(b).ResourceMetrics() {
			if err != nil {
				t.Fatal(err)
			}
			add(rm.Resource())
		}
	}
	return out
}
