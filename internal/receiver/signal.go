package receiver

import (
	"github.com/wirehouse/wirehouse/otlpwire"
)

// signalInfo is everything that differs between the three signals.
type signalInfo struct {
	name     string // "logs"
	path     string // OTLP/HTTP path
	service  string // gRPC service
	method   string // full gRPC method, "/<service>/Export"
	request  string // protobuf message name, for error messages
	rejected string // JSON name of the partial success's rejected_* field
	validate func([]byte) error
	count    func([]byte) (int, error)
}

func init() {
	for i := range signals {
		signals[i].method = "/" + signals[i].service + "/Export"
	}
}

// ServiceName is the signal's OTLP gRPC service, e.g.
// "opentelemetry.proto.collector.logs.v1.LogsService".
func (s Signal) ServiceName() string { return signals[s].service }

// ExportMethod is the full gRPC method of the signal's Export call, e.g.
// "/opentelemetry.proto.collector.logs.v1.LogsService/Export".
func (s Signal) ExportMethod() string { return signals[s].method }

// HTTPPath is the signal's OTLP/HTTP path, e.g. "/v1/logs".
func (s Signal) HTTPPath() string { return signals[s].path }

var signals = [numSignals]signalInfo{
	SignalMetrics: {
		name: "metrics", path: "/v1/metrics",
		service:  "opentelemetry.proto.collector.metrics.v1.MetricsService",
		request:  "ExportMetricsServiceRequest",
		rejected: "rejectedDataPoints",
		validate: func(b []byte) error { return otlpwire.MetricsRequest(b).Validate() },
		count:    func(b []byte) (int, error) { return otlpwire.MetricsRequest(b).DataPointCount() },
	},
	SignalLogs: {
		name: "logs", path: "/v1/logs",
		service:  "opentelemetry.proto.collector.logs.v1.LogsService",
		request:  "ExportLogsServiceRequest",
		rejected: "rejectedLogRecords",
		validate: func(b []byte) error { return otlpwire.LogsRequest(b).Validate() },
		count:    func(b []byte) (int, error) { return otlpwire.LogsRequest(b).LogRecordCount() },
	},
	SignalTraces: {
		name: "traces", path: "/v1/traces",
		service:  "opentelemetry.proto.collector.trace.v1.TraceService",
		request:  "ExportTraceServiceRequest",
		rejected: "rejectedSpans",
		validate: func(b []byte) error { return otlpwire.TracesRequest(b).Validate() },
		count:    func(b []byte) (int, error) { return otlpwire.TracesRequest(b).SpanCount() },
	},
}
