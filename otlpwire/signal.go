package otlpwire

import "fmt"

// Signal is one of the three OTLP signals. It names the signal's export
// request, its OTLP/HTTP path and its gRPC service, and counts and
// validates requests of that signal. The zero Signal is not valid.
//
// The values of SignalLogs and SignalTraces are stored on disk by
// wirehouse's spool and never change.
type Signal uint8

// The signals.
const (
	SignalLogs    Signal = 1
	SignalTraces  Signal = 2
	SignalMetrics Signal = 3
)

// Signals lists every valid Signal, metrics first as the OTLP
// specification orders them.
var Signals = [...]Signal{SignalMetrics, SignalLogs, SignalTraces}

type signalInfo struct {
	name, path, service, method, request string
}

var signalInfos = [...]signalInfo{
	SignalLogs: {
		name: "logs", path: "/v1/logs",
		service: "opentelemetry.proto.collector.logs.v1.LogsService",
		method:  "/opentelemetry.proto.collector.logs.v1.LogsService/Export",
		request: "ExportLogsServiceRequest",
	},
	SignalTraces: {
		name: "traces", path: "/v1/traces",
		service: "opentelemetry.proto.collector.trace.v1.TraceService",
		method:  "/opentelemetry.proto.collector.trace.v1.TraceService/Export",
		request: "ExportTraceServiceRequest",
	},
	SignalMetrics: {
		name: "metrics", path: "/v1/metrics",
		service: "opentelemetry.proto.collector.metrics.v1.MetricsService",
		method:  "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export",
		request: "ExportMetricsServiceRequest",
	},
}

// Valid reports whether s is SignalLogs, SignalTraces or SignalMetrics.
func (s Signal) Valid() bool { return s >= SignalLogs && s <= SignalMetrics }

func (s Signal) info() *signalInfo {
	if !s.Valid() {
		return &signalInfos[0]
	}
	return &signalInfos[s]
}

// String returns "logs", "traces" or "metrics", the names ParseSignal
// accepts, or "Signal(n)" for an invalid s.
func (s Signal) String() string {
	if !s.Valid() {
		return fmt.Sprintf("Signal(%d)", uint8(s))
	}
	return s.info().name
}

// HTTPPath is the signal's OTLP/HTTP path, e.g. "/v1/logs"; "" for an
// invalid s.
func (s Signal) HTTPPath() string { return s.info().path }

// ServiceName is the signal's OTLP gRPC service, e.g.
// "opentelemetry.proto.collector.logs.v1.LogsService"; "" for an invalid s.
func (s Signal) ServiceName() string { return s.info().service }

// ExportMethod is the full gRPC method of the signal's Export call, e.g.
// "/opentelemetry.proto.collector.logs.v1.LogsService/Export"; "" for an
// invalid s.
func (s Signal) ExportMethod() string { return s.info().method }

// RequestName is the protobuf message name of the signal's export request,
// e.g. "ExportLogsServiceRequest"; "" for an invalid s.
func (s Signal) RequestName() string { return s.info().request }

// Count returns the number of records in body, an export request of
// signal s: log records, spans or metric data points. It reads no deeper
// than it must (see LogsRequest.LogRecordCount and its siblings).
func (s Signal) Count(body []byte) (int, error) {
	switch s {
	case SignalLogs:
		return LogsRequest(body).LogRecordCount()
	case SignalTraces:
		return TracesRequest(body).SpanCount()
	case SignalMetrics:
		return MetricsRequest(body).DataPointCount()
	}
	return 0, fmt.Errorf("count records: invalid %v", s)
}

// Validate checks that body is a well-formed export request of signal s,
// as LogsRequest.Validate and its siblings do.
func (s Signal) Validate(body []byte) error {
	switch s {
	case SignalLogs:
		return LogsRequest(body).Validate()
	case SignalTraces:
		return TracesRequest(body).Validate()
	case SignalMetrics:
		return MetricsRequest(body).Validate()
	}
	return fmt.Errorf("validate request: invalid %v", s)
}

// SignalOfHTTPPath returns the signal whose OTLP/HTTP path is path, and
// false if there is none.
func SignalOfHTTPPath(path string) (Signal, bool) {
	for _, s := range Signals {
		if s.info().path == path {
			return s, true
		}
	}
	return 0, false
}

// SignalOfMethod returns the signal whose gRPC Export method is method (as
// ExportMethod spells it), and false if there is none.
func SignalOfMethod(method string) (Signal, bool) {
	for _, s := range Signals {
		if s.info().method == method {
			return s, true
		}
	}
	return 0, false
}

// ParseSignal parses "logs", "traces" or "metrics"; any other text returns
// an error naming it.
func ParseSignal(name string) (Signal, error) {
	for _, s := range Signals {
		if s.info().name == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("parse signal: %q is not logs, traces or metrics", name)
}
