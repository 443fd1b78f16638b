package synth

import (
	"fmt"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Fixture returns the seed-000 benchmark fixture of signal s in order o,
// the request shape the otlp-wire report (shared/seeds/000) measured:
//
//   - 5 resources, each with the string attributes service.name
//     ("service-A" … "service-E"), host.name ("host-1" … "host-5") and
//     deployment.environment ("production");
//   - one scope per resource, named "test-instrumentation", version "1.0.0";
//   - 100 records per scope, each with a timestamp and two string
//     attributes:
//   - logs: body "Test log message with some content", severity INFO
//     (9, "INFO"), attributes log.level=info and logger.name=test.logger;
//   - traces: name "test.operation", kind SERVER, start and end times,
//     attributes http.method=GET and http.status_code=200;
//   - metrics: one gauge "request.count" (description "Number of
//     requests", unit "1") with 100 int points 0…99, attributes method=GET
//     and status=200.
//
// It panics if s is not a valid otlpwire.Signal. The result is a new slice and is
// the same on every call. RealisticFixture is a heavier variant.
//
// Fields are written in pdata's declaration order, which the encoder turns
// into either Order; like pdata, the fixture carries empty trace, span and
// parent ids and an empty span status, so that Fixture(s, Descending) is
// byte for byte what the seed's pdata-built fixture marshals to.
func Fixture(s otlpwire.Signal, o Order) []byte {
	e := newEncoder(o)
	const ts = 1_000_000_000
	for i := range 5 {
		e.begin(requestResources)
		e.begin(resourceContainerResource)
		e.kvString(resourceAttributes, "service.name", "service-"+string(rune('A'+i)))
		e.kvString(resourceAttributes, "host.name", "host-"+string(rune('1'+i)))
		e.kvString(resourceAttributes, "deployment.environment", "production")
		e.end()
		e.begin(resourceContainerScopes)
		e.begin(scopeContainerScope)
		e.str(scopeName, "test-instrumentation")
		e.str(scopeVersion, "1.0.0")
		e.end()
		switch s {
		case otlpwire.SignalLogs:
			for range 100 {
				e.begin(scopeContainerRecords)
				e.fixed64(logTime, ts)
				e.varint(logSeverityNumber, 9)
				e.str(logSeverityText, "INFO")
				e.begin(logBody)
				e.strAlways(anyValueString, "Test log message with some content")
				e.end()
				e.kvString(logAttributes, "log.level", "info")
				e.kvString(logAttributes, "logger.name", "test.logger")
				e.bytesAlways(logTraceID, nil) // pdata writes empty ids
				e.bytesAlways(logSpanID, nil)
				e.end()
			}
		case otlpwire.SignalTraces:
			for range 100 {
				e.begin(scopeContainerRecords)
				e.bytesAlways(spanTraceID, nil) // pdata writes empty ids and status
				e.bytesAlways(spanSpanID, nil)
				e.bytesAlways(spanParentSpanID, nil)
				e.str(spanName, "test.operation")
				e.varint(spanKind, spanKindServer)
				e.fixed64(spanStartTime, ts)
				e.fixed64(spanEndTime, ts+1000)
				e.kvString(spanAttributes, "http.method", "GET")
				e.kvString(spanAttributes, "http.status_code", "200")
				e.begin(spanStatus)
				e.end()
				e.end()
			}
		case otlpwire.SignalMetrics:
			e.begin(scopeContainerRecords)
			e.str(metricName, "request.count")
			e.str(metricDescription, "Number of requests")
			e.str(metricUnit, "1")
			e.begin(metricGauge)
			for j := range 100 {
				e.begin(dataPoints)
				e.kvString(numberAttributes, "method", "GET")
				e.kvString(numberAttributes, "status", "200")
				e.fixed64(numberTime, ts)
				e.fixed64Always(numberAsInt, uint64(j))
				e.end()
			}
			e.end()
			e.end()
		default:
			panic(fmt.Sprintf("synth: invalid signal %d", int(s)))
		}
		e.end()
		e.end()
	}
	return e.finish()
}
