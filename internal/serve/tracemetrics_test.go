package serve

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// graphTrace is one trace: frontend's root server span calls backend
// (the client span failed), backend queries a database and calls an
// uninstrumented payments service.
func graphTrace(t *testing.T, id byte) []byte {
	t.Helper()
	now := time.Now()
	td := ptrace.NewTraces()
	add := func(svc string, attrs map[string]any, spans ...func(ptrace.Span)) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		if err := rs.Resource().Attributes().FromRaw(merged(rs.Resource().Attributes().AsRaw(), attrs)); err != nil {
			t.Fatal(err)
		}
		ss := rs.ScopeSpans().AppendEmpty()
		for _, f := range spans {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{id, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
			f(sp)
		}
	}
	span := func(name string, kind ptrace.SpanKind, sid, parent byte, ms int, attrs map[string]any) func(ptrace.Span) {
		return func(sp ptrace.Span) {
			sp.SetName(name)
			sp.SetKind(kind)
			sp.SetSpanID(pcommon.SpanID{id, 0, 0, 0, 0, 0, 0, sid})
			if parent != 0 {
				sp.SetParentSpanID(pcommon.SpanID{id, 0, 0, 0, 0, 0, 0, parent})
			}
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Duration(ms) * time.Millisecond)))
			if strings.HasPrefix(name, "call backend") {
				sp.Status().SetCode(ptrace.StatusCodeError)
			}
			if err := sp.Attributes().FromRaw(attrs); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("frontend", map[string]any{"service.instance.id": "i-1", "deployment.environment": "prod"},
		span("GET /", ptrace.SpanKindServer, 1, 0, 5, nil),
		span("call backend", ptrace.SpanKindClient, 2, 1, 12, nil))
	add("backend", nil,
		span("handle", ptrace.SpanKindServer, 3, 2, 8, nil),
		span("query", ptrace.SpanKindClient, 4, 3, 3, map[string]any{"db.system": "postgresql", "db.name": "orders"}),
		span("call payments", ptrace.SpanKindClient, 5, 3, 50, map[string]any{"peer.service": "payments"}))
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func merged(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// TestServeTraceMetrics: spans sent over OTLP come out of the metric
// store's PromQL API as the span-metric and service-graph series the
// Collector's connectors and Prometheus' translation name, with their
// labels and counts.
func TestServeTraceMetrics(t *testing.T) {
	cfg := testConfig(t)
	cfg.TraceMetrics.FlushInterval = time.Second
	s := startServer(t, cfg)
	a := s.Addrs()
	for i := range 3 {
		if code, body := post(t, "http://"+a.HTTP.String()+"/v1/traces", "application/x-protobuf", graphTrace(t, byte(i+1))); code != http.StatusOK {
			t.Fatalf("export: %d %s", code, body)
		}
	}
	c := promAPI(t, a, "")
	want := map[string]float64{
		`traces_span_metrics_calls_total{collector_instance_id="ID", instance="i-1", job="frontend", otel_scope_name="spanmetricsconnector", service_name="frontend", span_kind="SPAN_KIND_SERVER", span_name="GET /", status_code="STATUS_CODE_UNSET"}`:         3,
		`traces_span_metrics_calls_total{collector_instance_id="ID", instance="i-1", job="frontend", otel_scope_name="spanmetricsconnector", service_name="frontend", span_kind="SPAN_KIND_CLIENT", span_name="call backend", status_code="STATUS_CODE_ERROR"}`:  3,
		`traces_span_metrics_calls_total{collector_instance_id="ID", job="backend", otel_scope_name="spanmetricsconnector", service_name="backend", span_kind="SPAN_KIND_SERVER", span_name="handle", status_code="STATUS_CODE_UNSET"}`:                          3,
		`traces_span_metrics_calls_total{collector_instance_id="ID", job="backend", otel_scope_name="spanmetricsconnector", service_name="backend", span_kind="SPAN_KIND_CLIENT", span_name="query", status_code="STATUS_CODE_UNSET"}`:                           3,
		`traces_span_metrics_calls_total{collector_instance_id="ID", job="backend", otel_scope_name="spanmetricsconnector", service_name="backend", span_kind="SPAN_KIND_CLIENT", span_name="call payments", status_code="STATUS_CODE_UNSET"}`:                   3,
		`traces_service_graph_request_total{client="frontend", failed="true", otel_scope_name="traces_service_graph", server="backend"}`:                                                                                                                         3,
		`traces_service_graph_request_total{client="backend", connection_type="database", failed="false", otel_scope_name="traces_service_graph", server="orders"}`:                                                                                              3,
		`traces_service_graph_request_total{client="backend", connection_type="virtual_node", failed="false", otel_scope_name="traces_service_graph", server="payments"}`:                                                                                        3,
		`traces_service_graph_request_total{client="user", connection_type="virtual_node", failed="false", otel_scope_name="traces_service_graph", server="frontend"}`:                                                                                           3,
		`traces_service_graph_request_failed_total{client="frontend", failed="true", otel_scope_name="traces_service_graph", server="backend"}`:                                                                                                                  3,
		`traces_span_metrics_duration_milliseconds_bucket{collector_instance_id="ID", job="backend", le="8", otel_scope_name="spanmetricsconnector", service_name="backend", span_kind="SPAN_KIND_SERVER", span_name="handle", status_code="STATUS_CODE_UNSET"}`: 3,
		`traces_span_metrics_duration_milliseconds_bucket{collector_instance_id="ID", job="backend", le="6", otel_scope_name="spanmetricsconnector", service_name="backend", span_kind="SPAN_KIND_SERVER", span_name="handle", status_code="STATUS_CODE_UNSET"}`: 0,
		`traces_service_graph_request_server_seconds_bucket{client="frontend", failed="true", le="0.008", otel_scope_name="traces_service_graph", server="backend"}`:                                                                                             3,
		`traces_service_graph_request_client_seconds_sum{client="frontend", failed="true", otel_scope_name="traces_service_graph", server="backend"}`:                                                                                                            0.036,
	}
	var got map[string]float64
	waitFor(t, 15*time.Second, "the trace metrics", func() bool {
		got = map[string]float64{}
		for _, q := range []string{`{__name__=~"traces_span_metrics_calls_total|traces_service_graph_request_total|traces_service_graph_request_failed_total"}`,
			`traces_span_metrics_duration_milliseconds_bucket{span_name="handle",le=~"6|8"}`, `traces_service_graph_request_server_seconds_bucket{le="0.008"}`,
			`traces_service_graph_request_client_seconds_sum`} {
			for k, v := range instant(t, c, q, time.Now()) {
				got[k] = v
			}
		}
		n := 0
		for k, v := range want {
			for gk, gv := range got {
				if normalizeInstanceID(gk) == k && (gv == v || (v > 0 && gv/v > 0.999999 && gv/v < 1.000001)) {
					n++
				}
			}
		}
		return n == len(want)
	})
	for k, v := range gotN(got) {
		if w, ok := want[k]; !ok && strings.Contains(k, "service_graph_request_total") {
			t.Errorf("an edge not in the trace: %s", k)
		} else if ok && w != v && !(w > 0 && v/w > 0.999999 && v/w < 1.000001) {
			t.Errorf("%s = %v, want %v", k, v, w)
		}
	}
	for k := range want {
		if _, ok := gotN(got)[k]; !ok {
			t.Errorf("missing %s", k)
		}
	}
}

// normalizeInstanceID writes a series as name{labels}, the node's
// collector_instance_id as ID.
func normalizeInstanceID(series string) string {
	if rest, ok := strings.CutPrefix(series, `{__name__="`); ok {
		name, labels, _ := strings.Cut(rest, `"`)
		series = name + "{" + strings.TrimPrefix(labels, ", ")
	}
	i := strings.Index(series, `collector_instance_id="`)
	if i < 0 {
		return series
	}
	j := strings.IndexByte(series[i+len(`collector_instance_id="`):], '"')
	return series[:i] + `collector_instance_id="ID"` + series[i+len(`collector_instance_id="`)+j+1:]
}

func gotN(got map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range got {
		out[normalizeInstanceID(k)] = v
	}
	return out
}
