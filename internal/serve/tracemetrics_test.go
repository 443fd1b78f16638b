package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/tracemetrics/graphtest"
)

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
		if code, body := post(t, "http://"+a.HTTP.String()+"/v1/traces", "application/x-protobuf", graphtest.Trace(byte(i+1), time.Now())); code != http.StatusOK {
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

// dependenciesJSON is Jaeger's /api/dependencies answer.
type dependenciesJSON struct {
	Data []struct {
		Parent, Child string
		CallCount     uint64
	}
	Errors any
}

// TestServeDependencies: Jaeger's /api/dependencies answers the service
// graph's calls over its window (endTs, lookback; a service's alone),
// and each tenant's graph names its own services alone, through Jaeger's
// API and PromQL.
func TestServeDependencies(t *testing.T) {
	cfg := testConfig(t)
	cfg.TraceMetrics.FlushInterval = time.Second
	s := startTenantServer(t, cfg)
	a := s.Addrs()
	admin := "http://" + a.Admin.String()
	before := time.Now()
	for i, tc := range []struct{ token, prefix string }{{otlpTokA, "a-"}, {otlpTokB, "b-"}, {otlpTokA, "a-"}} {
		if code, body := request(t, http.MethodPost, "http://"+a.HTTP.String()+"/v1/traces", tc.token, "application/x-protobuf",
			graphtest.Trace(byte(i+1), time.Now(), tc.prefix)); code != http.StatusOK {
			t.Fatalf("export: %d %s", code, body)
		}
	}
	deps := func(token, params string) (int, dependenciesJSON) {
		t.Helper()
		code, body := request(t, http.MethodGet, admin+"/jaeger/api/dependencies?"+params, token, "", nil)
		var d dependenciesJSON
		if code == http.StatusOK {
			if err := json.Unmarshal([]byte(body), &d); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
		}
		return code, d
	}
	edges := func(d dependenciesJSON) []string {
		var out []string
		for _, l := range d.Data {
			out = append(out, fmt.Sprintf("%s>%s:%d", l.Parent, l.Child, l.CallCount))
		}
		return out
	}
	want := map[string][]string{
		adminTokA: {"a-backend>a-orders:2", "a-backend>a-payments:2", "a-frontend>a-backend:2", "user>a-frontend:2"},
		adminTokB: {"b-backend>b-orders:1", "b-backend>b-payments:1", "b-frontend>b-backend:1", "user>b-frontend:1"},
	}
	for token, w := range want {
		waitFor(t, 15*time.Second, "the dependencies of "+token, func() bool {
			_, d := deps(token, "")
			return slices.Equal(edges(d), w)
		})
		// Prometheus' API names the tenant's services alone too.
		other := "b-"
		if token == adminTokB {
			other = "a-"
		}
		for k := range instant(t, promAPI(t, a, token), "traces_service_graph_request_total", time.Now()) {
			if strings.Contains(k, other) {
				t.Errorf("%s sees %s", token, k)
			}
		}
	}
	// A window before the spans: nothing; one service's links alone.
	if _, d := deps(adminTokA, "endTs="+strconv.FormatInt(before.Add(-time.Minute).UnixMilli(), 10)+"&lookback=60000"); len(d.Data) != 0 {
		t.Errorf("a window before the spans: %v", edges(d))
	}
	if _, d := deps(adminTokA, "service=a-payments"); !slices.Equal(edges(d), []string{"a-backend>a-payments:2"}) {
		t.Errorf("service=a-payments: %v", edges(d))
	}
	if code, _ := deps(adminTokA, "endTs=yesterday"); code != http.StatusBadRequest {
		t.Errorf("endTs=yesterday: %d", code)
	}
}

// TestServeTraceMetricsExemplars: with trace_metrics.exemplars and an
// exemplar store, /api/v1/query_exemplars gives each span-metric series
// the trace and span ids and the duration of the spans it counted. (The
// exemplars of one flush share its time, and the TSDB keeps one of a
// series at a time, as Prometheus does with the connector's: so one trace
// a flush here.)
func TestServeTraceMetricsExemplars(t *testing.T) {
	cfg := testConfig(t)
	cfg.TraceMetrics.FlushInterval = time.Second
	cfg.TraceMetrics.Exemplars = true
	cfg.Metrics.MaxExemplars = 1000
	s := startServer(t, cfg)
	a := s.Addrs()
	c := promAPI(t, a, "")
	start := time.Now().Add(-time.Minute)
	var want, got []string // metric: trace id, span id, value
	for i := range 3 {
		id := byte(i + 1)
		if code, body := post(t, "http://"+a.HTTP.String()+"/v1/traces", "application/x-protobuf", graphtest.Trace(id, time.Now())); code != http.StatusOK {
			t.Fatalf("export: %d %s", code, body)
		}
		for _, m := range []string{"traces_span_metrics_calls_total", "traces_span_metrics_duration_milliseconds_bucket"} {
			want = append(want, fmt.Sprintf("%s: %02x02030405060708090a0b0c0d0e0f10 %02x00000000000001 5", m, id, id))
		}
		slices.Sort(want)
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			res, err := c.QueryExemplars(t.Context(), `{__name__=~"traces_span_metrics_calls_total|traces_span_metrics_duration_milliseconds_bucket", span_name="GET /"}`, start, time.Now().Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			got = got[:0]
			for _, r := range res {
				for _, e := range r.Exemplars {
					got = append(got, fmt.Sprintf("%s: %s %s %v", r.SeriesLabels["__name__"], e.Labels["trace_id"], e.Labels["span_id"], e.Value))
				}
			}
			slices.Sort(got)
			if slices.Equal(got, want) {
				break
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("exemplars after trace %d:\n%s\nwant\n%s", id, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
