package grafanacheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/grafana/grafana/pkg/promlib"
)

const (
	step      = 15 * time.Second
	points    = 40 // per series, one every step
	traceID   = "5b8efff798038103d269b633813fc60c"
	spanID    = "eee19b7ec3c1b174"
	scrapeInt = "15s"
)

// TestGrafanaPrometheusDataSource sends known series to a real `wirehouse
// serve` and reads them back through Grafana's Prometheus data source.
func TestGrafanaPrometheusDataSource(t *testing.T) {
	// The query API wants a bearer token, which the data source sends as
	// a custom HTTP header, as Grafana's settings page configures it.
	const token = "grafana-datasource-0123456789"
	tokens := filepath.Join(t.TempDir(), "admin-tokens")
	if err := os.WriteFile(tokens, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, buildWirehouse(t), "--metrics-max-exemplars", "1000", "--admin-bearer-tokens-file", tokens)
	base := time.Now().Add(-time.Duration(points+4) * step).Truncate(step)
	last := base.Add((points - 1) * step)
	postOTLP(t, srv.addrs["OTLP/HTTP"], metricsJSON(base))

	svc := promlib.NewService(nil, log.NewWithLevel(log.Warn), nil)
	for i, method := range []string{http.MethodPost, http.MethodGet} {
		t.Run("httpMethod="+method, func(t *testing.T) {
			pctx := backend.PluginContext{
				// As a Grafana server passes them: its configuration
				// and the data source's settings.
				GrafanaConfig: backend.NewGrafanaCfg(map[string]string{backend.ConcurrentQueryCount: "10"}),
				DataSourceInstanceSettings: &backend.DataSourceInstanceSettings{
					// Grafana's instance cache is keyed by the ID: one per data source.
					ID: int64(10 + i), UID: "wirehouse-" + method, Name: "wirehouse", Type: "prometheus",
					URL:                     "http://" + srv.addrs["admin HTTP"],
					JSONData:                fmt.Appendf(nil, `{"httpMethod":%q,"timeInterval":%q,"httpHeaderName1":"Authorization"}`, method, scrapeInt),
					DecryptedSecureJSONData: map[string]string{"httpHeaderValue1": "Bearer " + token},
				},
			}
			checkHealth(t, svc, pctx)
			checkQueries(t, svc, pctx, base, last)
			checkResources(t, svc, pctx, method, base, last)
		})
	}
	checkUnauthorized(t, svc, srv.addrs["admin HTTP"])
}

// TestGrafanaWithoutToken: a data source without the token fails "Save &
// test" with the server's answer.
func checkUnauthorized(t *testing.T, svc *promlib.Service, admin string) {
	t.Helper()
	pctx := backend.PluginContext{
		GrafanaConfig: backend.NewGrafanaCfg(map[string]string{backend.ConcurrentQueryCount: "10"}),
		DataSourceInstanceSettings: &backend.DataSourceInstanceSettings{
			ID: 2, UID: "wirehouse-no-token", Name: "wirehouse", Type: "prometheus",
			URL: "http://" + admin, JSONData: []byte(`{"httpMethod":"POST"}`),
		},
	}
	res, err := svc.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: pctx})
	if err != nil || res.Status != backend.HealthStatusError || !strings.Contains(res.Message, "401") {
		t.Errorf("health check without the token: %+v, %v; want an error naming 401", res, err)
	}
}

// checkHealth runs the data source's "Save & test": an instant 1+1 and
// the build-info heuristics, which must say Prometheus (not Mimir).
func checkHealth(t *testing.T, svc *promlib.Service, pctx backend.PluginContext) {
	t.Helper()
	res, err := svc.CheckHealth(context.Background(), &backend.CheckHealthRequest{PluginContext: pctx})
	if err != nil {
		t.Fatalf("health check: %v", err)
	}
	if res.Status != backend.HealthStatusOk {
		t.Fatalf("health check: %v %s", res.Status, res.Message)
	}
	var h promlib.Heuristics
	if err := json.Unmarshal(res.JSONDetails, &h); err != nil || h.Application != promlib.KindPrometheus {
		t.Errorf("health check heuristics = %s (%v), want application %s", res.JSONDetails, err, promlib.KindPrometheus)
	}
}

// query is one panel query as Grafana's query editor saves it.
type query struct {
	expr                   string
	instant, rng, exemplar bool
	from, to               time.Time
	legendFormat           string
}

func run(t *testing.T, svc *promlib.Service, pctx backend.PluginContext, q query) backend.DataResponse {
	t.Helper()
	model, err := json.Marshal(map[string]any{
		"refId": "A", "expr": q.expr, "range": q.rng, "instant": q.instant, "exemplar": q.exemplar,
		"interval": scrapeInt, "legendFormat": q.legendFormat,
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.QueryData(context.Background(), &backend.QueryDataRequest{
		PluginContext: pctx,
		Queries: []backend.DataQuery{{
			RefID: "A", JSON: model, MaxDataPoints: 1000, Interval: step,
			TimeRange: backend.TimeRange{From: q.from, To: q.to},
		}},
	})
	if err != nil {
		t.Fatalf("query %q: %v", q.expr, err)
	}
	return resp.Responses["A"]
}

// series is one time series of a response: its labels and its points.
type series struct {
	labels data.Labels
	times  []time.Time
	values []float64
}

// seriesOf collects the time series of a response's frames (Grafana's
// "wide" or "multi" frames: a time field and value fields with labels),
// leaving out exemplar frames.
func seriesOf(t *testing.T, dr backend.DataResponse) []series {
	t.Helper()
	var out []series
	for _, f := range dr.Frames {
		if f.Name == "exemplar" || len(f.Fields) < 2 || f.Fields[0].Type() != data.FieldTypeTime {
			continue
		}
		for _, vf := range f.Fields[1:] {
			s := series{labels: vf.Labels}
			for i := range vf.Len() {
				v, ok := vf.ConcreteAt(i)
				if !ok {
					continue
				}
				fv, isFloat := v.(float64)
				if !isFloat {
					t.Fatalf("frame %q field %q holds %T, not float64", f.Name, vf.Name, v)
				}
				s.times = append(s.times, f.Fields[0].At(i).(time.Time))
				s.values = append(s.values, fv)
			}
			out = append(out, s)
		}
	}
	return out
}

func checkQueries(t *testing.T, svc *promlib.Service, pctx backend.PluginContext, base, last time.Time) {
	t.Helper()
	// A range query over the whole series: one point per sample, at the
	// sample's time, with its value; labels as Prometheus' OTLP rules give
	// them (job from service.name, instance from service.instance.id).
	dr := run(t, svc, pctx, query{expr: "grafana_check_gauge", rng: true, from: base, to: last})
	if dr.Error != nil {
		t.Fatalf("range query: %v", dr.Error)
	}
	ss := seriesOf(t, dr)
	if len(ss) != 1 {
		t.Fatalf("range query: %d series, want 1: %+v", len(ss), ss)
	}
	s := ss[0]
	for k, v := range map[string]string{"job": "grafana-check", "instance": "i-1", "room": "kitchen"} {
		if s.labels[k] != v {
			t.Errorf("range query: label %s = %q, want %q (labels %v)", k, s.labels[k], v, s.labels)
		}
	}
	if len(s.values) != points {
		t.Errorf("range query: %d points, want %d", len(s.values), points)
	}
	for i := range s.values {
		want := gaugeValue(int(s.times[i].Sub(base) / step))
		if !s.times[i].Equal(base.Add(time.Duration(i)*step)) || s.values[i] != want {
			t.Errorf("range query point %d: %v = %v, want %v = %v", i, s.times[i], s.values[i], base.Add(time.Duration(i)*step), want)
		}
	}

	// A legend template and an aggregation.
	dr = run(t, svc, pctx, query{expr: "sum by (room) (grafana_check_gauge)", rng: true, from: base, to: last, legendFormat: "{{room}}"})
	if ss := seriesOf(t, dr); dr.Error != nil || len(ss) != 1 || ss[0].labels["room"] != "kitchen" || len(ss[0].values) != points {
		t.Errorf("sum by (room): %v, %+v", dr.Error, ss)
	} else if name := dr.Frames[0].Fields[1].Config; name == nil || name.DisplayNameFromDS != "kitchen" {
		t.Errorf("legend {{room}}: display name %+v, want kitchen", name)
	}

	// Counter rate: the counter grows by 10 each 15 s.
	dr = run(t, svc, pctx, query{expr: "rate(grafana_check_requests_total[1m])", rng: true, from: base, to: last})
	if ss := seriesOf(t, dr); dr.Error != nil || len(ss) != 1 || len(ss[0].values) == 0 {
		t.Errorf("rate: %v, %+v", dr.Error, ss)
	} else if v := ss[0].values[len(ss[0].values)-1]; math.Abs(v-10.0/15) > 1e-9 {
		t.Errorf("rate at the last point = %v, want %v", v, 10.0/15)
	}

	// An instant query at the last sample.
	dr = run(t, svc, pctx, query{expr: "grafana_check_gauge", instant: true, from: base, to: last})
	if ss := seriesOf(t, dr); dr.Error != nil || len(ss) != 1 || len(ss[0].values) != 1 ||
		ss[0].values[0] != gaugeValue(points-1) || !ss[0].times[0].Equal(last) {
		t.Errorf("instant query: %v, %+v; want %v at %v", dr.Error, ss, gaugeValue(points-1), last)
	}

	// Native histogram (from the OTLP exponential histogram): Grafana reads
	// the raw histograms, and histogram_count/histogram_sum are floats.
	dr = run(t, svc, pctx, query{expr: "grafana_check_latency", rng: true, from: base, to: last})
	if dr.Error != nil || len(dr.Frames) == 0 || dr.Frames[0].Rows() == 0 {
		t.Errorf("native histogram range query: %v, %d frames", dr.Error, len(dr.Frames))
	}
	for fn, want := range map[string]float64{"histogram_count": 2 * points, "histogram_sum": 3 * points} {
		dr = run(t, svc, pctx, query{expr: fn + "(grafana_check_latency)", instant: true, from: base, to: last})
		if ss := seriesOf(t, dr); dr.Error != nil || len(ss) != 1 || len(ss[0].values) != 1 || ss[0].values[0] != want {
			t.Errorf("%s: %v, %+v; want %v", fn, dr.Error, ss, want)
		}
	}

	// Exemplars: Grafana asks /api/v1/query_exemplars beside the range query
	// and shows them as an "exemplar" frame with the trace id.
	dr = run(t, svc, pctx, query{expr: "grafana_check_requests_total", rng: true, exemplar: true, from: base, to: last})
	if dr.Error != nil {
		t.Fatalf("exemplar query: %v", dr.Error)
	}
	if got := exemplarTraceIDs(dr); !slices.Contains(got, traceID) {
		t.Errorf("exemplar frame trace ids = %v, want %s", got, traceID)
	}

	// A PromQL error reaches the panel as Prometheus' message.
	dr = run(t, svc, pctx, query{expr: "sum(grafana_check_gauge", rng: true, from: base, to: last})
	if dr.Error == nil || !strings.Contains(dr.Error.Error(), "parse error") {
		t.Errorf("bad PromQL: error %v, want a parse error", dr.Error)
	}
}

func exemplarTraceIDs(dr backend.DataResponse) []string {
	var ids []string
	for _, f := range dr.Frames {
		if f.Name != "exemplar" {
			continue
		}
		for _, fl := range f.Fields {
			if fl.Name != "trace_id" {
				continue
			}
			for i := range fl.Len() {
				if s, ok := fl.At(i).(string); ok {
					ids = append(ids, s)
				}
			}
		}
	}
	return ids
}

// checkResources makes the calls Grafana's query editor makes through the
// data source's resource API (metric and label pickers, metadata, label
// suggestions) and checks what comes back.
func checkResources(t *testing.T, svc *promlib.Service, pctx backend.PluginContext, method string, base, last time.Time) {
	t.Helper()
	window := url.Values{"start": {fmt.Sprint(base.Unix())}, "end": {fmt.Sprint(last.Unix() + 1)}}
	with := func(extra url.Values) string {
		v := url.Values{}
		for k, vs := range window {
			v[k] = vs
		}
		for k, vs := range extra {
			v[k] = vs
		}
		return v.Encode()
	}
	var labelNames, names, rooms []string
	resource(t, svc, pctx, http.MethodGet, "api/v1/labels", with(nil), nil, &labelNames)
	for _, want := range []string{"__name__", "job", "instance", "room"} {
		if !slices.Contains(labelNames, want) {
			t.Errorf("labels = %v, missing %s", labelNames, want)
		}
	}
	resource(t, svc, pctx, http.MethodGet, "api/v1/label/__name__/values", with(nil), nil, &names)
	for _, want := range []string{"grafana_check_gauge", "grafana_check_requests_total", "grafana_check_latency", "target_info"} {
		if !slices.Contains(names, want) {
			t.Errorf("metric names = %v, missing %s", names, want)
		}
	}
	resource(t, svc, pctx, http.MethodGet, "api/v1/label/room/values", with(url.Values{"match[]": {"grafana_check_gauge"}}), nil, &rooms)
	if !slices.Equal(rooms, []string{"kitchen"}) {
		t.Errorf("room values = %v, want [kitchen]", rooms)
	}
	// The editor POSTs a form where the data source is set to POST, and
	// sends GET otherwise (Grafana refuses its own POSTs then).
	var set []map[string]string
	seriesQuery := with(url.Values{"match[]": {`{job="grafana-check",__name__=~"grafana_check_.*"}`}})
	if method == http.MethodPost {
		resource(t, svc, pctx, method, "api/v1/series", "", []byte(seriesQuery), &set)
	} else {
		resource(t, svc, pctx, method, "api/v1/series", seriesQuery, nil, &set)
	}
	if len(set) != 3 {
		t.Errorf("series = %v, want the gauge, the counter and the histogram", set)
	}
	var meta map[string][]struct{ Type, Help, Unit string }
	resource(t, svc, pctx, http.MethodGet, "api/v1/metadata", "metric=grafana_check_requests_total", nil, &meta)
	if m := meta["grafana_check_requests_total"]; len(m) == 0 || m[0].Type != "counter" || m[0].Help != "Requests served." {
		t.Errorf("metadata = %+v, want a counter with its description", meta)
	}
	// Label suggestions (Grafana's "suggestions" resource): label values
	// restricted to the metrics of the queries on the panel.
	body, _ := json.Marshal(map[string]any{"labelName": "room", "queries": []string{"rate(grafana_check_requests_total[$__rate_interval])"},
		"start": fmt.Sprint(base.Unix()), "end": fmt.Sprint(last.Unix() + 1)})
	rooms = nil
	resource(t, svc, pctx, http.MethodPost, "suggestions", "", body, &rooms)
	if !slices.Equal(rooms, []string{"kitchen"}) {
		t.Errorf("suggestions for room = %v, want [kitchen]", rooms)
	}
}

// resource makes one resource call and decodes the data of its
// Prometheus API envelope into out.
func resource(t *testing.T, svc *promlib.Service, pctx backend.PluginContext, method, path, rawQuery string, body []byte, out any) {
	t.Helper()
	req := &backend.CallResourceRequest{PluginContext: pctx, Method: method, Path: path, URL: path + "?" + rawQuery, Body: body}
	if method == http.MethodPost {
		req.Headers = map[string][]string{"Content-Type": {"application/x-www-form-urlencoded"}}
	}
	var got *backend.CallResourceResponse
	err := svc.CallResource(context.Background(), req, backend.CallResourceResponseSenderFunc(func(r *backend.CallResourceResponse) error {
		got = r
		return nil
	}))
	if err != nil {
		t.Fatalf("resource %s %s: %v", method, path, err)
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if got == nil || got.Status != http.StatusOK || json.Unmarshal(got.Body, &env) != nil || env.Status != "success" {
		t.Fatalf("resource %s %s?%s: %+v", method, path, rawQuery, got)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		t.Fatalf("resource %s %s: data %s: %v", method, path, env.Data, err)
	}
}

func gaugeValue(i int) float64 { return 1.5 * float64(i) }

// metricsJSON is an OTLP/JSON metrics request: for one resource, points
// samples one step apart from base of a gauge, a monotonic cumulative sum
// (with one exemplar) and an exponential histogram. host.name, not a job or
// instance attribute, goes to target_info.
func metricsJSON(base time.Time) []byte {
	ns := func(i int) string { return fmt.Sprint(base.Add(time.Duration(i) * step).UnixNano()) }
	start := fmt.Sprint(base.Add(-step).UnixNano())
	attrs := `[{"key":"room","value":{"stringValue":"kitchen"}}]`
	var gauge, sum, hist []string
	for i := range points {
		gauge = append(gauge, fmt.Sprintf(`{"timeUnixNano":%q,"asDouble":%v,"attributes":%s}`, ns(i), gaugeValue(i), attrs))
		ex := ""
		if i == points-1 {
			ex = fmt.Sprintf(`,"exemplars":[{"timeUnixNano":%q,"asDouble":0.25,"traceId":%q,"spanId":%q}]`, ns(i), traceID, spanID)
		}
		sum = append(sum, fmt.Sprintf(`{"startTimeUnixNano":%q,"timeUnixNano":%q,"asInt":"%d","attributes":%s%s}`, start, ns(i), 10*(i+1), attrs, ex))
		n := i + 1 // observations per bucket so far: (1,2] and (2,4] at scale 0
		hist = append(hist, fmt.Sprintf(`{"startTimeUnixNano":%q,"timeUnixNano":%q,"count":"%d","sum":%d,"scale":0,"zeroCount":"0",`+
			`"positive":{"offset":0,"bucketCounts":["%d","%d"]},"attributes":%s}`, start, ns(i), 2*n, 3*n, n, n, attrs))
	}
	return fmt.Appendf(nil, `{"resourceMetrics":[{"resource":{"attributes":[`+
		`{"key":"service.name","value":{"stringValue":"grafana-check"}},{"key":"service.instance.id","value":{"stringValue":"i-1"}},`+
		`{"key":"host.name","value":{"stringValue":"h-1"}}]},`+
		`"scopeMetrics":[{"scope":{"name":"grafanacheck"},"metrics":[`+
		`{"name":"grafana_check_gauge","description":"A gauge.","gauge":{"dataPoints":[%s]}},`+
		`{"name":"grafana_check_requests","description":"Requests served.","sum":{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[%s]}},`+
		`{"name":"grafana_check_latency","description":"Latency.","exponentialHistogram":{"aggregationTemporality":2,"dataPoints":[%s]}}`+
		`]}]}]}`, strings.Join(gauge, ","), strings.Join(sum, ","), strings.Join(hist, ","))
}

func postOTLP(t *testing.T, addr string, body []byte) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/v1/metrics", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		PartialSuccess *struct {
			RejectedDataPoints string `json:"rejectedDataPoints"`
			ErrorMessage       string `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/metrics: %s, %v", resp.Status, err)
	}
	if r.PartialSuccess != nil && (r.PartialSuccess.RejectedDataPoints != "" || r.PartialSuccess.ErrorMessage != "") {
		t.Fatalf("POST /v1/metrics: partial success %+v", *r.PartialSuccess)
	}
}

// buildWirehouse builds cmd/wirehouse of the repository this module sits in.
func buildWirehouse(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "wirehouse")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/wirehouse")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/wirehouse: %v\n%s", err, out)
	}
	return bin
}

type serveProc struct {
	addrs  map[string]string
	stderr *syncBuffer
}

// startServe starts `wirehouse serve` on loopback ports the OS picks and
// returns once it has logged all three listen addresses; it is stopped
// with SIGTERM when the test ends.
func startServe(t *testing.T, bin string, extra ...string) *serveProc {
	t.Helper()
	args := append([]string{"serve", "--data-dir", t.TempDir(), "--grpc-listen", "127.0.0.1:0",
		"--http-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	p := &serveProc{stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil {
			t.Errorf("serve exited: %v\n%s", err, p.stderr)
		}
	})
	re := regexp.MustCompile(`msg="serving (OTLP/gRPC|OTLP/HTTP|admin HTTP)" addr=(\S+)`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		addrs := map[string]string{}
		for _, m := range re.FindAllStringSubmatch(p.stderr.String(), -1) {
			addrs[m[1]] = m[2]
		}
		if len(addrs) == 3 {
			p.addrs = addrs
			return p
		}
	}
	t.Fatalf("serve did not start:\n%s", p.stderr)
	return nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
