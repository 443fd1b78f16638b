package otlpwire_test

import (
	"math/rand/v2"
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestServiceName compares Resource.ServiceName with pdata's
// Get("service.name") on realistic and randomized requests (the latter
// without service.name, with empty and missing resources).
func TestServiceName(t *testing.T) {
	checked := 0
	for seed := range uint64(300) {
		body := synth.Random(rand.New(rand.NewPCG(seed, 5)), otlpwire.SignalLogs, synth.Ascending)
		if seed%2 == 0 { // realistic requests carry service.name
			body = synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: int64(seed), Resources: 3, ScopesPerResource: 1, TotalRecords: 3})
		}
		var u plog.ProtoUnmarshaler
		ld, err := u.UnmarshalLogs(body)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rl, err := range otlpwire.LogsRequest(body).ResourceLogs() {
			if err != nil {
				t.Fatal(err)
			}
			res, err := rl.Resource()
			if err != nil {
				t.Fatal(err)
			}
			got, err := res.ServiceName()
			if err != nil {
				t.Fatal(err)
			}
			want := ""
			if v, ok := ld.ResourceLogs().At(i).Resource().Attributes().Get("service.name"); ok && v.Type() == pcommon.ValueTypeStr {
				want = v.Str()
				checked++
			}
			if string(got) != want {
				t.Fatalf("seed %d resource %d: ServiceName %q, pdata %q", seed, i, got, want)
			}
			i++
		}
	}
	if checked == 0 {
		t.Fatal("no resource had a string service.name; the test checked nothing")
	}
}
