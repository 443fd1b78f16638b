package serve

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testConfig(t *testing.T) Config {
	c := DefaultConfig()
	c.DataDir = filepath.Join(t.TempDir(), "data")
	c.OTLP.GRPC.Listen = "127.0.0.1:0"
	c.OTLP.HTTP.Listen = "127.0.0.1:0"
	c.Admin.Listen = "127.0.0.1:0"
	c.Jaeger.StorageListen = "127.0.0.1:0"
	c.Jaeger.StorageListen = "127.0.0.1:0"
	c.Log.Level = "error"
	return c
}

// startServer runs a server with cfg and shuts it down at the end of the
// test.
func startServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// post sends body with the content type and returns the status and body.
func post(t *testing.T, url, contentType string, body []byte) (int, string) {
	t.Helper()
	resp, err := client.Post(url, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServe runs the whole server: an OTLP/HTTP request is counted per
// service on /metrics, health and readiness answer, and shutdown is clean.
func TestServe(t *testing.T) {
	s := startServer(t, testConfig(t))
	a := s.Addrs()
	if _, err := os.Stat(s.cfg.DataDir); err != nil {
		t.Errorf("data dir not created: %v", err)
	}
	admin := "http://" + a.Admin.String()
	if code, body := get(t, admin+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, _ := get(t, admin+"/readyz"); code != 200 {
		t.Errorf("/readyz: %d", code)
	}
	// Prometheus' names for the same probes.
	if code, body := get(t, admin+"/-/healthy"); code != 200 || body != "ok\n" {
		t.Errorf("/-/healthy: %d %q", code, body)
	}
	if code, _ := get(t, admin+"/-/ready"); code != 200 {
		t.Errorf("/-/ready: %d", code)
	}

	body := synth.Generate(otlpwire.SignalTraces, synth.Config{Seed: 5, Resources: 1, ScopesPerResource: 1, TotalRecords: 37})
	if code, resp := post(t, "http://"+a.HTTP.String()+"/v1/traces", "application/x-protobuf", body); code != 200 {
		t.Fatalf("export: status %d %s", code, resp)
	}
	_, metrics := get(t, admin+"/metrics")
	for _, want := range []string{
		`wirehouse_receiver_accepted_records_total{signal="traces",transport="http"} 37`,
		`wirehouse_receiver_requests_total{outcome="accepted",reason="",signal="traces",transport="http"} 1`,
		`wirehouse_receiver_inflight_bytes 0`,
		`wirehouse_receiver_request_duration_seconds_count{signal="traces",transport="http"} 1`,
		`wirehouse_receiver_request_size_bytes_sum{signal="traces",transport="http"} ` + itoa(len(body)),
		`go_goroutines`, `process_cpu_seconds_total`,
		// The spool and the lake loader register their own.
		`wirehouse_spool_appends_total 1`, `wirehouse_lake_lag_records`, `wirehouse_lake_files_total`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if !strings.Contains(metrics, `wirehouse_sink_records_total{service="`) || !strings.Contains(metrics, `signal="traces"} 37`) {
		t.Errorf("/metrics lacks the per-service count of 37 spans:\n%s", grep(metrics, "wirehouse_sink"))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRunStopsOnCancel: Run returns nil once its context ends.
func TestRunStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Run(ctx, testConfig(t), io.Discard) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestStartFailsOnBusyPort(t *testing.T) {
	a, err := New(testConfig(t), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer a.Shutdown()
	cfg := testConfig(t)
	cfg.OTLP.GRPC.Listen = a.Addrs().GRPC.String()
	b, err := New(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err == nil || !strings.Contains(err.Error(), "listen OTLP/gRPC") {
		t.Fatalf("second server on the same port: %v", err)
	}
}

// TestServeExemplars: the exemplar of an OTLP counter point is stored and
// served by /api/v1/query_exemplars with its trace and span ids, and not
// when exemplars are switched off.
func TestServeExemplars(t *testing.T) {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "shop")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("orders")
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	now := time.Now().Truncate(time.Millisecond)
	p := sum.DataPoints().AppendEmpty()
	p.SetTimestamp(pcommon.NewTimestampFromTime(now))
	p.SetIntValue(42)
	ex := p.Exemplars().AppendEmpty()
	ex.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	ex.SetIntValue(1)
	ex.SetTraceID(pcommon.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36})
	ex.SetSpanID(pcommon.SpanID{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7})
	ex.FilteredAttributes().PutStr("http.route", "/checkout")
	body, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{100, 0} {
		t.Run("max_exemplars="+strconv.FormatInt(n, 10), func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Metrics.MaxExemplars = n
			a := startServer(t, cfg).Addrs()
			if code, resp := post(t, "http://"+a.HTTP.String()+"/v1/metrics", "application/x-protobuf", body); code != 200 {
				t.Fatalf("export: status %d %s", code, resp)
			}
			code, got := get(t, "http://"+a.Admin.String()+"/api/v1/query_exemplars?query=orders_total")
			if n > 0 {
				for _, want := range []string{`"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`, `"span_id":"00f067aa0ba902b7"`,
					`"http.route":"/checkout"`, `"value":"1"`, `"job":"shop"`} {
					if code != 200 || !strings.Contains(got, want) {
						t.Errorf("query_exemplars: %d %s; lacks %s", code, got, want)
					}
				}
			} else if code != 200 || got != `{"status":"success","data":[]}` {
				t.Errorf("exemplars off: %d %s", code, got)
			}
		})
	}
}

// TestServeMalformedMetrics: the metric store validates as it stores, in
// place of the receiver; a request malformed deep inside a point, after a
// valid metric, is still answered 400 with the path of the fault, stores
// nothing of either (no samples, series or metadata), is counted as bad
// data, and the server goes on serving.
func TestServeMalformedMetrics(t *testing.T) {
	a := startServer(t, testConfig(t)).Addrs()
	url := "http://" + a.HTTP.String() + "/v1/metrics"
	// A valid gauge "leaked", then a gauge whose point's attribute value
	// holds string_value as a varint.
	field := func(num protowire.Number, b ...[]byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), bytes.Join(b, nil))
	}
	gauge := func(name string, attr []byte) []byte {
		now := protowire.AppendFixed64(protowire.AppendTag(nil, 3, protowire.Fixed64Type), uint64(time.Now().UnixNano()))
		return field(2, field(1, []byte(name)), field(5, field(1, now, field(7, field(1, []byte("k")), field(2, attr)))))
	}
	bad := field(1, field(2, gauge("leaked", field(1, []byte("v"))), gauge("m", []byte{0x08, 0x01})))
	code, body := post(t, url, "application/x-protobuf", bad)
	if code != http.StatusBadRequest || !strings.Contains(body, "invalid ExportMetricsServiceRequest: resource_metrics[0].scope_metrics[0].metrics[1]") {
		t.Fatalf("malformed metrics: status %d, body %q", code, body)
	}
	good := `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"up_after_bad","gauge":{"dataPoints":[{"timeUnixNano":"` +
		strconv.FormatInt(time.Now().UnixNano(), 10) + `","asDouble":1}]}}]}]}]}`
	if code, body := post(t, url, "application/json", []byte(good)); code != http.StatusOK {
		t.Fatalf("valid metrics after the malformed request: %d %s", code, body)
	}
	admin := "http://" + a.Admin.String()
	_, metrics := get(t, admin+"/metrics")
	for _, want := range []string{
		`wirehouse_receiver_requests_total{outcome="refused",reason="bad_data",signal="metrics",transport="http"} 1`,
		`wirehouse_receiver_accepted_records_total{signal="metrics",transport="http"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Nothing of the refused request: no series (which a rolled-back
	// appender would leave in the head), no metadata.
	for _, q := range []string{"/api/v1/label/__name__/values", "/api/v1/series?match[]=%7B__name__%3D~%22.%2B%22%7D", "/api/v1/metadata"} {
		if code, body := get(t, admin+q); code != 200 || !strings.Contains(body, "up_after_bad") || strings.Contains(body, "leaked") {
			t.Errorf("%s: %d %s (want up_after_bad only)", q, code, body)
		}
	}
}

// TestServeMetadata: /api/v1/metadata lists the metric families received
// over OTLP with Prometheus' type, unit and help; /api/v1/status/tsdb
// counts their series.
func TestServeMetadata(t *testing.T) {
	a := startServer(t, testConfig(t)).Addrs()
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	req := `{"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"shop"}},{"key":"region","value":{"stringValue":"eu"}}]},` +
		`"scopeMetrics":[{"metrics":[{"name":"queue.wait","unit":"ms","description":"Time in the queue.",` +
		`"histogram":{"aggregationTemporality":2,"dataPoints":[{"timeUnixNano":"` + now + `","count":"1","sum":3,"bucketCounts":["1","0"],"explicitBounds":[5]}]}},` +
		`{"name":"orders","description":"Orders placed.","sum":{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[{"timeUnixNano":"` + now + `","asInt":"7"}]}}]}]}]}`
	if code, body := post(t, "http://"+a.HTTP.String()+"/v1/metrics", "application/json", []byte(req)); code != http.StatusOK {
		t.Fatalf("export: %d %s", code, body)
	}
	code, body := get(t, "http://"+a.Admin.String()+"/api/v1/metadata")
	want := `{"status":"success","data":{"orders_total":[{"type":"counter","unit":"","help":"Orders placed."}],` +
		`"queue_wait_milliseconds":[{"type":"histogram","unit":"milliseconds","help":"Time in the queue."}],` +
		`"target_info":[{"type":"gauge","unit":"","help":"Target metadata"}]}}`
	if code != 200 || body != want {
		t.Errorf("metadata: %d %s\nwant %s", code, body, want)
	}
	// The same series in the TSDB status: 2 buckets, sum and count, the
	// counter and target_info.
	if code, body := get(t, "http://"+a.Admin.String()+"/api/v1/status/tsdb"); code != 200 ||
		!strings.Contains(body, `"numSeries":6,`) || !strings.Contains(body, `{"name":"queue_wait_milliseconds_bucket","value":2}`) {
		t.Errorf("status/tsdb: %d %s", code, body)
	}
}

// TestServeRemoteWriteV2: a remote-write 2.0 request (symbols table,
// start timestamp) is stored and answered with the written counts, as by
// Prometheus' receiver.
func TestServeRemoteWriteV2(t *testing.T) {
	a := startServer(t, testConfig(t)).Addrs()
	at := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	wr := writev2.Request{
		Symbols: []string{"", "__name__", "rw2_requests_total", "job", "api", "Requests.", ""},
		Timeseries: []writev2.TimeSeries{{
			LabelsRefs: []uint32{1, 2, 3, 4},
			Samples:    []writev2.Sample{{Value: 42, Timestamp: at.UnixMilli()}},
			Metadata:   writev2.Metadata{Type: writev2.Metadata_METRIC_TYPE_COUNTER, HelpRef: 5},
		}},
	}
	pb, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+a.Admin.String()+"/api/v1/write", bytes.NewReader(snappy.Encode(nil, pb)))
	req.Header.Set("Content-Type", "application/x-protobuf;proto=io.prometheus.write.v2.Request")
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "2.0.0")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("X-Prometheus-Remote-Write-Samples-Written") != "1" {
		t.Fatalf("write: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	q := "http://" + a.Admin.String() + "/api/v1/query?query=rw2_requests_total&time=" + strconv.FormatInt(at.Unix()+1, 10)
	if code, body := get(t, q); code != 200 || !strings.Contains(body, `"job":"api"`) || !strings.Contains(body, `"42"]`) {
		t.Errorf("query: %d %s", code, body)
	}
}

// TestServeAdminAPI: the TSDB admin endpoints answer 503 unless
// metrics.admin_api is set; then a snapshot lands under
// <data_dir>/metrics/snapshots.
func TestServeAdminAPI(t *testing.T) {
	off := startServer(t, testConfig(t)).Addrs()
	if code, body := post(t, "http://"+off.Admin.String()+"/api/v1/admin/tsdb/snapshot", "", nil); code != http.StatusServiceUnavailable {
		t.Errorf("admin API off: %d %s", code, body)
	}
	cfg := testConfig(t)
	cfg.Metrics.AdminAPI = true
	on := startServer(t, cfg).Addrs()
	code, body := post(t, "http://"+on.Admin.String()+"/api/v1/admin/tsdb/snapshot", "", nil)
	if code != 200 || !strings.Contains(body, `"name":"`) {
		t.Fatalf("snapshot: %d %s", code, body)
	}
	if entries, err := os.ReadDir(filepath.Join(cfg.DataDir, "metrics", "snapshots")); err != nil || len(entries) != 1 {
		t.Errorf("snapshots: %v, %v", entries, err)
	}
}

// TestBadSecurityFiles: TLS or bearer token files that do not load stop
// New with the setting named, before the data directory is locked.
func TestBadSecurityFiles(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"otlp.grpc.tls": func(c *Config) { c.OTLP.GRPC.TLS.CertFile = "/nonexistent/cert.pem" },
		"otlp.http.tls": func(c *Config) { c.OTLP.HTTP.TLS.ClientCAFile = "/nonexistent/ca.pem" },
		"admin.tls": func(c *Config) {
			c.Admin.TLS.CertFile, c.Admin.TLS.KeyFile = "/nonexistent/cert.pem", "/nonexistent/key.pem"
		},
		"otlp.auth":  func(c *Config) { c.OTLP.Auth.BearerTokensFile = "/nonexistent/tokens" },
		"admin.auth": func(c *Config) { c.Admin.Auth.BearerTokensFile = "/nonexistent/admin-tokens" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(t)
			mod(&cfg)
			s, err := New(cfg, io.Discard)
			if err == nil {
				s.Start()
				s.Shutdown()
				t.Error("New accepted unloadable files")
				return
			}
			if !strings.HasPrefix(err.Error(), name+": ") {
				t.Errorf("error %q does not name the setting", err)
			}
			if _, err := os.Stat(cfg.DataDir); !os.IsNotExist(err) {
				t.Errorf("data directory created before the files were checked: %v", err)
			}
		})
	}
}

// TestAdminBearerTokens: with admin bearer tokens, every admin path but
// the probes needs one, and OTLP stays open (it has its own setting).
func TestAdminBearerTokens(t *testing.T) {
	const token = "grafana-reader-0123456789"
	cfg := testConfig(t)
	cfg.Admin.Auth.BearerTokensFile = filepath.Join(t.TempDir(), "admin-tokens")
	if err := os.WriteFile(cfg.Admin.Auth.BearerTokensFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Admin.Pprof = true
	s := startServer(t, cfg)
	base := "http://" + s.Addrs().Admin.String()
	do := func(t *testing.T, method, path, auth string, body []byte) (int, http.Header) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	for _, path := range []string{"/healthz", "/readyz", "/-/healthy", "/-/ready"} {
		if code, _ := do(t, http.MethodGet, path, "", nil); code != http.StatusOK {
			t.Errorf("GET %s without a token: %d, want 200 (probes stay open)", path, code)
		}
	}
	// The web pages' code is open (a browser navigating sends no token);
	// their data, from the APIs, is not.
	for _, path := range []string{"/", "/graph", "/traces", "/trace/0af7651916cd43dd8448eb211c80319c", "/logs", "/static/js/app.js"} {
		if code, _ := do(t, http.MethodGet, path, "", nil); code != http.StatusOK {
			t.Errorf("GET %s without a token: %d, want 200 (the pages' code is public)", path, code)
		}
	}
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/query?query=1"},
		{http.MethodPost, "/api/v1/query"},
		{http.MethodGet, "/api/v1/labels"},
		{http.MethodGet, "/metrics"},
		{http.MethodGet, "/debug/pprof/cmdline"},
		{http.MethodGet, "/api/wirehouse/status"},
		{http.MethodGet, "/static/../metrics"},
		{http.MethodPost, "/api/v1/write"},
		{http.MethodPost, "/api/v1/read"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			for _, auth := range []string{"", "Bearer wrong-token-0123456789", "Basic Z3JhZmFuYTp4"} {
				code, h := do(t, c.method, c.path, auth, []byte("query=1"))
				if code != http.StatusUnauthorized || h.Get("WWW-Authenticate") != `Bearer realm="wirehouse"` {
					t.Errorf("with %q: %d %v, want 401", auth, code, h)
				}
			}
			want := http.StatusOK
			if c.path == "/api/v1/write" || c.path == "/api/v1/read" {
				want = http.StatusBadRequest // past the token: the handler refuses the body
			}
			if code, _ := do(t, c.method, c.path, "Bearer "+token, []byte("query=1")); code != want {
				t.Errorf("with the token: %d, want %d", code, want)
			}
		})
	}
	// OTLP has no tokens configured: still open.
	if code, _ := post(t, "http://"+s.Addrs().HTTP.String()+"/v1/logs", "application/x-protobuf", nil); code != http.StatusOK {
		t.Errorf("OTLP without a token: %d", code)
	}
}
