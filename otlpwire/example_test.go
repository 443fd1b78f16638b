package otlpwire_test

import (
	"errors"
	"fmt"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func ExampleLogsRequest_LogRecordCount() {
	body := synth.Fixture(otlpwire.SignalLogs, synth.Ascending)
	n, err := otlpwire.LogsRequest(body).LogRecordCount()
	fmt.Println(n, err)
	// Output: 500 <nil>
}

func ExampleLogsRequest_ResourceLogs() {
	body := synth.Fixture(otlpwire.SignalLogs, synth.Descending)
	for rl, err := range otlpwire.LogsRequest(body).ResourceLogs() {
		if err != nil {
			fmt.Println(err)
			return
		}
		res, _ := rl.Resource()
		attrs, _ := res.Attributes()
		svc, _, _ := attrs.Get("service.name")
		n, _ := rl.LogRecordCount()
		fmt.Printf("%s: %d records\n", svc.Str(), n)
	}
	// Output:
	// service-A: 100 records
	// service-B: 100 records
	// service-C: 100 records
	// service-D: 100 records
	// service-E: 100 records
}

func ExampleLogRecord_Read() {
	body := synth.Fixture(otlpwire.SignalLogs, synth.Ascending)
	var f otlpwire.LogRecordFields
	for rl := range otlpwire.LogsRequest(body).ResourceLogs() {
		for sl := range rl.ScopeLogs() {
			for lr, err := range sl.LogRecords() {
				if err != nil {
					fmt.Println(err)
					return
				}
				if err := lr.Read(&f); err != nil {
					fmt.Println(err)
					return
				}
				fmt.Printf("t=%d %s %q\n", f.Time, f.SeverityText, f.Body.Str())
				for kv := range f.Attributes.All() {
					fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Str())
				}
				return
			}
		}
	}
	// Output:
	// t=1000000000 INFO "Test log message with some content"
	//   log.level=info
	//   logger.name=test.logger
}

func ExampleSplitter() {
	body := synth.Fixture(otlpwire.SignalTraces, synth.Ascending)
	sp, err := otlpwire.NewSplitter(otlpwire.WithMaxRecords(120), otlpwire.WithMaxBytes(16<<10))
	if err != nil {
		fmt.Println(err)
		return
	}
	for chunk, err := range sp.SplitTraces(body) {
		if err != nil {
			fmt.Println(err)
			return
		}
		// chunk is valid until the loop continues; send or copy it here.
		n, _ := chunk.SpanCount()
		fmt.Println(n, "spans,", len(chunk) <= 16<<10)
	}
	// Output:
	// 120 spans, true
	// 120 spans, true
	// 120 spans, true
	// 120 spans, true
	// 20 spans, true
}

func ExampleResource_Hash() {
	body := synth.Fixture(otlpwire.SignalMetrics, synth.Ascending)
	asc := map[string]uint64{}
	for rm := range otlpwire.MetricsRequest(body).ResourceMetrics() {
		res, _ := rm.Resource()
		h, _ := res.Hash()
		attrs, _ := res.Attributes()
		svc, _, _ := attrs.Get("service.name")
		asc[string(svc.Str())] = h
	}
	// The same resources written in pdata's field order hash the same.
	same := true
	for rm := range otlpwire.MetricsRequest(synth.Fixture(otlpwire.SignalMetrics, synth.Descending)).ResourceMetrics() {
		res, _ := rm.Resource()
		h, _ := res.Hash()
		attrs, _ := res.Attributes()
		svc, _, _ := attrs.Get("service.name")
		same = same && asc[string(svc.Str())] == h
	}
	fmt.Println(len(asc), "distinct resources, order-independent:", same)
	// Output: 5 distinct resources, order-independent: true
}

func ExampleError() {
	// A request whose first resource claims 127 bytes but holds 1.
	err := otlpwire.LogsRequest([]byte{0x0a, 0x7f, 0x01}).Validate()
	var e *otlpwire.Error
	fmt.Println(errors.Is(err, otlpwire.ErrTruncated), errors.As(err, &e), e.Path(), e.Offset)
	fmt.Println(err)
	// Output:
	// true true resource_logs[0] 1
	// resource_logs[0]: truncated length-delimited field at offset 1
}

func ExampleTracesRequest_Walk() {
	body := synth.Fixture(otlpwire.SignalTraces, synth.Ascending)
	var service []byte
	var f otlpwire.SpanFields
	spans := map[string]int{}
	err := otlpwire.TracesRequest(body).Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(rs otlpwire.ResourceSpans) error {
			res, err := rs.Resource()
			if err == nil {
				service, err = res.ServiceName()
			}
			if string(service) == "service-B" {
				return otlpwire.Skip // none of its spans
			}
			return err
		},
		Span: func(sp otlpwire.Span) error {
			if err := sp.Read(&f); err != nil {
				return err
			}
			spans[string(service)]++
			return nil
		},
	})
	fmt.Println(spans, err)
	// Output: map[service-A:100 service-C:100 service-D:100 service-E:100] <nil>
}
