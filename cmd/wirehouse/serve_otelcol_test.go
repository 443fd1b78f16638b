package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/wirehouse/wirehouse/internal/syncbuf"
)

// startOtelcol runs the Collector make test builds with ocb
// (tools/otelcol: WIREHOUSE_OTELCOL) on config, a YAML text in which
// every %[1]s is replaced by an OTLP/gRPC address and %[2]s by an
// OTLP/HTTP one, both free, and waits until its OTLP/HTTP receiver takes
// connections; it returns those two addresses. The Collector is stopped
// at the test's end; its output is logged if the test failed.
func startOtelcol(t *testing.T, config string) (grpcAddr, httpAddr string) {
	t.Helper()
	bin := peerFromEnv(t, "WIREHOUSE_OTELCOL", "builds the Collector (tools/otelcol, ocb)")
	grpcAddr, httpAddr = freeAddr(t), freeAddr(t)
	path := filepath.Join(t.TempDir(), "otelcol.yaml")
	if err := os.WriteFile(path, []byte(strings.NewReplacer("%[1]s", grpcAddr, "%[2]s", httpAddr).Replace(config)), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", path)
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("otelcol output:\n%s", out.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("otelcol exited:\n%s", out.String())
		default:
		}
		if c, err := net.Dial("tcp", httpAddr); err == nil {
			c.Close()
			return grpcAddr, httpAddr
		}
	}
	t.Fatalf("otelcol did not listen on %s:\n%s", httpAddr, out.String())
	return "", ""
}

// promVector runs an instant PromQL query at the admin address, at at
// (the server's now if zero), and returns each series' value by its
// labels as Prometheus' model.Metric writes them.
func promVector(t *testing.T, admin, query string, at time.Time) map[string]float64 {
	t.Helper()
	return promVectorAs(t, admin, "", query, at)
}

// promVectorAs is promVector with an admin bearer token, if not "".
func promVectorAs(t *testing.T, admin, token, query string, at time.Time) map[string]float64 {
	t.Helper()
	q := url.Values{"query": {query}}
	if !at.IsZero() {
		q.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+admin+"/api/v1/query?"+q.Encode(), nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric model.Metric
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || d.Status != "success" {
		t.Fatalf("%s: %v %s", query, err, d.Error)
	}
	out := make(map[string]float64, len(d.Data.Result))
	for _, r := range d.Data.Result {
		v, err := strconv.ParseFloat(fmt.Sprint(r.Value[1]), 64)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Metric.String()] = v
	}
	return out
}

// vectorDiff lists the differences of two promVector answers: series in
// one only, and values that differ (exactly, or by more than a relative
// 1e-9 for the series whose name ends in _sum: sums of float durations
// added in another order).
func vectorDiff(ours, theirs map[string]float64) []string {
	var diff []string
	for k, v := range ours {
		w, ok := theirs[k]
		switch {
		case !ok:
			diff = append(diff, "only ours: "+k)
		case strings.Contains(k, "_sum{"):
			if math.Abs(v-w) > 1e-9*math.Max(math.Abs(v), math.Abs(w)) {
				diff = append(diff, fmt.Sprintf("%s: ours %v, the Collector's %v", k, v, w))
			}
		case v != w:
			diff = append(diff, fmt.Sprintf("%s: ours %v, the Collector's %v", k, v, w))
		}
	}
	for k := range theirs {
		if _, ok := ours[k]; !ok {
			diff = append(diff, "only the Collector's: "+k)
		}
	}
	slices.Sort(diff)
	return diff
}

// TestOracleTraceMetrics: the same traces go to the OpenTelemetry
// Collector (v0.159, built with ocb: otlpreceiver -> spanmetrics and
// servicegraph connectors with their default settings but a 1 s flush ->
// prometheusremotewrite into a second wirehouse, its own trace metrics
// off) and, through the Collector's otlphttp exporter, to a wirehouse
// with its trace metrics on: every series whose name starts with traces_
// has the same name, labels and value on both (histogram buckets and
// counts exact, sums within float rounding). The traces: telemetrygen
// runs of several services with child spans and an error status, and the
// Python SDK's client/server pairs across three services with errors, a
// database span and an uninstrumented peer (testdata/pysdk_graph.py).
func TestOracleTraceMetrics(t *testing.T) {
	tgen := peerFromEnv(t, "WIREHOUSE_TELEMETRYGEN", "installs telemetrygen")
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs the Python venv")
	// The span metrics' collector_instance_id: the node's name (kept in
	// the data directory) here, the Collector's collector.instance.id
	// resource attribute there.
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node-id"), []byte("oracle\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ours, _ := startServeAt(t, dir, "--trace-metrics-flush-interval", "1s")
	theirs := startServe(t, "--trace-metrics=false")
	grpcAddr, httpAddr := startOtelcol(t, `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "%[1]s"}
      http: {endpoint: "%[2]s"}
connectors:
  spanmetrics:
    metrics_flush_interval: 1s
  servicegraph:
    metrics_flush_interval: 1s
exporters:
  otlphttp:
    endpoint: http://`+ours["OTLP/HTTP"]+`
    compression: none
  prometheusremotewrite:
    endpoint: http://`+theirs["admin HTTP"]+`/api/v1/write
service:
  telemetry:
    metrics: {level: none}
    resource: {collector.instance.id: oracle}
  pipelines:
    traces: {receivers: [otlp], exporters: [otlphttp, spanmetrics, servicegraph]}
    metrics: {receivers: [spanmetrics, servicegraph], exporters: [prometheusremotewrite]}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, run := range [][]string{
		{"--service", "tg-api", "--traces", "20", "--child-spans", "3"},
		{"--service", "tg-worker", "--traces", "15", "--child-spans", "1", "--status-code", "Error"},
		{"--service", "tg-edge", "--traces", "10", "--child-spans", "5", "--status-code", "Ok"},
	} {
		args := append([]string{"traces", "--otlp-insecure", "--otlp-endpoint", grpcAddr, "--rate", "0"}, run...)
		if out, err := exec.CommandContext(ctx, tgen, args...).CombinedOutput(); err != nil {
			t.Fatalf("telemetrygen %v: %v\n%s", args, err, out)
		}
	}
	if out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "pysdk_graph.py"), "http://"+httpAddr, "12").CombinedOutput(); err != nil {
		t.Fatalf("pysdk_graph.py: %v\n%s", err, out)
	}

	// What the traces make, counted as sent: span metrics of every
	// service (telemetrygen: 20 traces of 4 spans, 15 of 2, 10 of 6;
	// Python: 12 traces of 7 spans), the graph's pairs, the database and
	// virtual-node edges and the failed requests (a third of the Python
	// traces; telemetrygen's 15 traces of one child each).
	const sg = `otel_scope_name="traces_service_graph", `
	want := map[string]float64{
		`traces_span_metrics_calls_total{collector_instance_id="oracle", instance="front-1", job="py-frontend", otel_scope_name="spanmetricsconnector", service_name="py-frontend", span_kind="SPAN_KIND_SERVER", span_name="GET /checkout", status_code="STATUS_CODE_UNSET"}`: 12,
		`traces_span_metrics_calls_total{collector_instance_id="oracle", instance="front-1", job="py-frontend", otel_scope_name="spanmetricsconnector", service_name="py-frontend", span_kind="SPAN_KIND_CLIENT", span_name="POST /cart", status_code="STATUS_CODE_ERROR"}`:    4,
		`traces_span_metrics_calls_total{collector_instance_id="oracle", job="tg-worker", otel_scope_name="spanmetricsconnector", service_name="tg-worker", span_kind="SPAN_KIND_SERVER", span_name="okey-dokey-0", status_code="STATUS_CODE_ERROR"}`:                          15,
		`traces_service_graph_request_total{client="py-frontend", failed="false", ` + sg + `server="py-cart"}`:                                                                                                                                                                 8,
		`traces_service_graph_request_total{client="py-frontend", failed="true", ` + sg + `server="py-cart"}`:                                                                                                                                                                  4,
		`traces_service_graph_request_failed_total{client="py-frontend", failed="true", ` + sg + `server="py-cart"}`:                                                                                                                                                           4,
		`traces_service_graph_request_total{client="py-cart", failed="false", ` + sg + `server="py-inventory"}`:                                                                                                                                                                12,
		`traces_service_graph_request_total{client="py-inventory", connection_type="database", failed="false", ` + sg + `server="stockdb"}`:                                                                                                                                    12,
		`traces_service_graph_request_total{client="py-cart", connection_type="virtual_node", failed="false", ` + sg + `server="payments"}`:                                                                                                                                    12,
		`traces_service_graph_request_total{client="user", connection_type="virtual_node", failed="false", ` + sg + `server="py-frontend"}`:                                                                                                                                    12,
		`traces_service_graph_request_server_seconds_count{client="tg-worker", failed="true", ` + sg + `server="tg-worker"}`:                                                                                                                                                   15,
	}
	const spans = 20*4 + 15*2 + 10*6 + 12*7
	check := func(a map[string]float64) (wrong []string) {
		for k, n := range want {
			if got, ok := a[k]; !ok || got != n {
				wrong = append(wrong, fmt.Sprintf("%s: %v (present: %v), want %v", k, got, ok, n))
			}
		}
		total := 0.0
		for k, v := range a {
			if strings.HasPrefix(k, "traces_span_metrics_calls_total{") {
				total += v
			}
		}
		if total != spans {
			wrong = append(wrong, fmt.Sprintf("the calls add up to %v spans, want the %d sent", total, spans))
		}
		slices.Sort(wrong)
		return wrong
	}

	// Both sides flush every second; the service graph's unpaired edges
	// wait 2 s (the Collector's are expired by a loop of its own). Wait
	// until the answers agree, hold every count sent, and stay so for 3 s.
	const query = `{__name__=~"traces_.+"}`
	var a, b map[string]float64
	var diff, wrong []string
	agreed := time.Time{}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		a, b = promVector(t, ours["admin HTTP"], query, time.Time{}), promVector(t, theirs["admin HTTP"], query, time.Time{})
		diff, wrong = vectorDiff(a, b), check(a)
		if len(diff) > 0 || len(wrong) > 0 {
			agreed = time.Time{}
			continue
		}
		if agreed.IsZero() {
			agreed = time.Now()
		}
		if time.Since(agreed) >= 3*time.Second {
			break
		}
	}
	if len(diff) > 0 {
		t.Errorf("%d of our series, %d of the Collector's; differences:\n%s", len(a), len(b), strings.Join(diff, "\n"))
	}
	if len(wrong) > 0 {
		t.Errorf("our series against the counts sent:\n%s", strings.Join(wrong, "\n"))
	}
	t.Logf("%d series equal on both sides", len(a))
}
