package synth_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func ExampleGenerate() {
	cfg := synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 25}
	req := synth.Generate(otlpwire.SignalLogs, cfg)

	logs, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(req)
	if err != nil {
		panic(err)
	}
	fmt.Println(logs.ResourceLogs().Len(), "resources,", logs.LogRecordCount(), "log records")
	fmt.Println("deterministic:", bytes.Equal(req, synth.Generate(otlpwire.SignalLogs, cfg)))
	// Output:
	// 2 resources, 25 log records
	// deterministic: true
}

func ExampleFixture() {
	asc := synth.Fixture(otlpwire.SignalTraces, synth.Ascending)
	desc := synth.Fixture(otlpwire.SignalTraces, synth.Descending)

	// Both orders hold the same spans; pdata re-encodes the Descending
	// fixture byte for byte.
	traces, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(asc)
	if err != nil {
		panic(err)
	}
	again, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(traces)
	if err != nil {
		panic(err)
	}
	fmt.Println(traces.SpanCount(), "spans; pdata order:", bytes.Equal(again, desc))
	// Output:
	// 500 spans; pdata order: true
}

func ExampleRandom() {
	r := rand.New(rand.NewPCG(7, 0))
	req := synth.Random(r, otlpwire.SignalLogs, synth.Descending)
	_, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(req)
	fmt.Println("decodes:", err == nil)
	// Output:
	// decodes: true
}
