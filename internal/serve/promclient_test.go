package serve

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/wirehouse/wirehouse/internal/promapi"
)

// The data of TestPrometheusAPIClient: pcPoints samples of each metric,
// one every pcStep, and one exemplar on the counter's last point.
const (
	pcStep    = 15 * time.Second
	pcPoints  = 40
	pcToken   = "promclient-reader-0123456789"
	pcTraceID = "5b8efff798038103d269b633813fc60c"
	pcSpanID  = "eee19b7ec3c1b174"
)

// pcLabels are the labels every series of the test's resource and scope
// carries: job and instance from service.name and service.instance.id,
// the scope's name and version (metrics.promote_scope_metadata), and the
// points' attribute room.
const pcLabels = `instance="i-1", job="promclient-check", otel_scope_name="promclient", otel_scope_version="1.2.3", room="kitchen"`

// TestPrometheusAPIClient sends a gauge, a counter with an exemplar and an
// exponential histogram over OTLP (the OpenTelemetry Go SDK's exporter),
// then reads them back through the admin API with bearer tokens, as a
// Grafana Prometheus data source does, with Prometheus' own API client
// (client_golang's api/prometheus/v1): the data source's health check
// (1+1 and buildinfo), range and instant queries, rate, native histograms,
// exemplars, PromQL errors, and the query editor's label, series and
// metadata calls. Everything that can go by POST is run twice: by POST (the
// client's default, Grafana's httpMethod POST) and by GET (the client's
// fallback when POST is answered 405, Grafana's httpMethod GET).
func TestPrometheusAPIClient(t *testing.T) {
	cfg := testConfig(t)
	cfg.Metrics.MaxExemplars = 1000
	cfg.Admin.Auth.BearerTokensFile = filepath.Join(t.TempDir(), "admin-tokens")
	if err := os.WriteFile(cfg.Admin.Auth.BearerTokensFile, []byte(pcToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startServer(t, cfg).Addrs()
	base := time.Now().Add(-(pcPoints + 4) * pcStep).Truncate(pcStep)
	last := base.Add((pcPoints - 1) * pcStep)
	// OTLP has no tokens configured: the exporter's header is not looked at.
	exportOTLP(t, "http", a, "unused-0123456789", pcMetrics(base))

	admin := "http://" + a.Admin.String()
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	for _, getOnly := range []bool{false, true} {
		name := map[bool]string{false: "httpMethod=POST", true: "httpMethod=GET"}[getOnly]
		t.Run(name, func(t *testing.T) {
			rt := &methodRT{getOnly: getOnly, next: bearerRT{pcToken, transport}, sent: map[string]bool{}}
			c, err := api.NewClient(api.Config{Address: admin, RoundTripper: rt})
			if err != nil {
				t.Fatal(err)
			}
			pc := v1.NewAPI(c)
			pcHealth(t, pc, &http.Client{Transport: rt}, admin)
			pcQueries(t, pc, base, last)
			pcEditor(t, pc, base, last)
			// The methods that reached the server.
			want := map[bool]string{false: http.MethodPost, true: http.MethodGet}[getOnly]
			for _, path := range []string{"/api/v1/query", "/api/v1/query_range", "/api/v1/query_exemplars", "/api/v1/series", "/api/v1/labels", "/api/v1/format_query"} {
				if !rt.sent[want+" "+path] {
					t.Errorf("no %s %s reached the server: %v", want, path, rt.sent)
				}
			}
			for k := range rt.sent {
				if getOnly && strings.HasPrefix(k, http.MethodPost) {
					t.Errorf("%s reached the server of a GET-only data source", k)
				}
			}
		})
	}

	// Without the token, or with a wrong one, the health check's query
	// fails with the server's 401 (Grafana's "Save & test" shows it).
	for _, token := range []string{"", "wrong-token-0123456789"} {
		var rt http.RoundTripper = transport
		if token != "" {
			rt = bearerRT{token, transport}
		}
		c, err := api.NewClient(api.Config{Address: admin, RoundTripper: rt})
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = v1.NewAPI(c).Query(context.Background(), "1+1", time.Unix(4, 0))
		var apiErr *v1.Error
		if !errors.As(err, &apiErr) || apiErr.Type != v1.ErrClient || apiErr.Msg != "client error: 401" {
			t.Errorf("1+1 with token %q: %v, want client error: 401", token, err)
		}
	}
}

// pcHealth runs what Grafana's "Save & test" asks: an instant 1+1 at
// 4 s, and buildinfo, whose lack of "features" makes the data source take
// the server for Prometheus (not Mimir).
func pcHealth(t *testing.T, c v1.API, hc *http.Client, admin string) {
	t.Helper()
	ctx := context.Background()
	v, _, _, err := c.Query(ctx, "1+1", time.Unix(4, 0))
	if s, ok := v.(*model.Scalar); err != nil || !ok || s.Value != 2 || s.Timestamp != 4000 {
		t.Errorf("1+1 at 4s: %v, %v; want scalar 2 at 4000", v, err)
	}
	bi, err := c.Buildinfo(ctx)
	if err != nil || bi.Version == "" || bi.GoVersion != runtime.Version() {
		t.Errorf("buildinfo: %+v, %v; want a version and %s", bi, err, runtime.Version())
	}
	resp, err := hc.Get(admin + "/api/v1/status/buildinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Status string
		Data   map[string]any
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil || env.Status != "success" || env.Data["features"] != nil {
		t.Errorf("buildinfo envelope %+v, %v; want success without features", env, err)
	}
	// The engine's Prometheus version: as the version, or as
	// prometheusVersion where the version is wirehouse's own.
	if pv := env.Data["prometheusVersion"]; bi.Version != promapi.PrometheusVersion && pv != promapi.PrometheusVersion {
		t.Errorf("buildinfo version %q, prometheusVersion %v; want %s in one of them", bi.Version, pv, promapi.PrometheusVersion)
	}
}

// pcQueries checks the panel queries: range and instant, an aggregation, a
// counter's rate, native histograms, exemplars and a PromQL error.
func pcQueries(t *testing.T, c v1.API, base, last time.Time) {
	t.Helper()
	ctx := context.Background()
	rng := v1.Range{Start: base, End: last, Step: pcStep}
	// The whole gauge: one point per sample, at the sample's time.
	m := rangeQuery(t, c, "check_gauge", rng)
	if len(m) != 1 || labelString(m[0].Metric) != `{__name__="check_gauge", `+pcLabels+`}` {
		t.Fatalf("check_gauge: %v", m)
	}
	checkPoints(t, "check_gauge", m[0].Values, base, func(i int) float64 { return pcGauge(i) })

	// An aggregation (Grafana draws it with legend {{room}}).
	m = rangeQuery(t, c, "sum by (room) (check_gauge)", rng)
	if len(m) != 1 || labelString(m[0].Metric) != `{room="kitchen"}` {
		t.Fatalf("sum by (room): %v", m)
	}
	checkPoints(t, "sum by (room)", m[0].Values, base, func(i int) float64 { return pcGauge(i) })

	// The counter grows by 10 every 15 s: a rate from the second sample
	// on, and from the fifth on, where a 1m window holds 4 samples, 10/15
	// exactly (up to rounding).
	m = rangeQuery(t, c, "rate(check_requests_total[1m])", rng)
	if len(m) != 1 || len(m[0].Values) != pcPoints-1 {
		t.Fatalf("rate: %v", m)
	}
	for _, p := range m[0].Values {
		if p.Timestamp.Time().Sub(base) >= 4*pcStep && math.Abs(float64(p.Value)-10.0/15) > 1e-9 {
			t.Errorf("rate at %v = %v, want %v", p.Timestamp.Time(), p.Value, 10.0/15)
		}
	}

	// An instant query at the last sample.
	v, _, _, err := c.Query(ctx, "check_gauge", last)
	if vec, ok := v.(model.Vector); err != nil || !ok || len(vec) != 1 || float64(vec[0].Value) != pcGauge(pcPoints-1) ||
		!vec[0].Timestamp.Time().Equal(last) || labelString(vec[0].Metric) != `{__name__="check_gauge", `+pcLabels+`}` {
		t.Errorf("instant check_gauge: %v, %v; want %v at %v", v, err, pcGauge(pcPoints-1), last)
	}

	// The exponential histogram as native histograms, every point with its
	// count, sum and buckets; histogram_count and histogram_sum as floats.
	m = rangeQuery(t, c, "check_latency", rng)
	if len(m) != 1 || len(m[0].Histograms) != pcPoints || len(m[0].Values) != 0 {
		t.Fatalf("check_latency: %v", m)
	}
	for i, p := range m[0].Histograms {
		n := model.FloatString(i + 1)
		want := model.SampleHistogram{Count: 2 * n, Sum: 3 * n, Buckets: model.HistogramBuckets{
			{Boundaries: 0, Lower: 1, Upper: 2, Count: n}, {Boundaries: 0, Lower: 2, Upper: 4, Count: n},
		}}
		if !p.Timestamp.Time().Equal(base.Add(time.Duration(i)*pcStep)) || !p.Histogram.Equal(&want) {
			t.Errorf("check_latency point %d: %v at %v, want %v at %v", i, p.Histogram, p.Timestamp.Time(), &want, base.Add(time.Duration(i)*pcStep))
		}
	}
	for fn, want := range map[string]float64{"histogram_count": 2 * pcPoints, "histogram_sum": 3 * pcPoints} {
		t.Run(fn, func(t *testing.T) {
			v, _, _, err := c.Query(ctx, fn+"(check_latency)", last)
			if vec, ok := v.(model.Vector); err != nil || !ok || len(vec) != 1 || float64(vec[0].Value) != want {
				t.Errorf("%v, %v; want %v", v, err, want)
			}
		})
	}

	// Exemplars, which Grafana asks beside the range query.
	ex, err := c.QueryExemplars(ctx, "check_requests_total", base, last)
	wantEx := []v1.ExemplarQueryResult{{
		SeriesLabels: model.LabelSet{"__name__": "check_requests_total", "instance": "i-1", "job": "promclient-check",
			"otel_scope_name": "promclient", "otel_scope_version": "1.2.3", "room": "kitchen"},
		Exemplars: []v1.Exemplar{{Labels: model.LabelSet{"trace_id": pcTraceID, "span_id": pcSpanID}, Value: 0.25, Timestamp: model.TimeFromUnixNano(last.UnixNano())}},
	}}
	if err != nil || !reflect.DeepEqual(ex, wantEx) {
		t.Errorf("exemplars: %+v, %v\nwant %+v", ex, err, wantEx)
	}

	// A PromQL error comes back as Prometheus' bad_data with its message.
	var apiErr *v1.Error
	if _, _, _, err := c.QueryRange(ctx, "sum(check_gauge", rng); !errors.As(err, &apiErr) || apiErr.Type != v1.ErrBadData ||
		!strings.Contains(apiErr.Msg, "parse error") {
		t.Errorf("bad PromQL: %v, want bad_data with a parse error", err)
	}
}

// pcEditor makes the query editor's calls: label names and values (with
// matchers and time ranges) for its pickers and suggestions, series, and
// metadata.
func pcEditor(t *testing.T, c v1.API, base, last time.Time) {
	t.Helper()
	ctx := context.Background()
	start, end := base, last.Add(time.Second)
	names, _, _, err := c.LabelNames(ctx, nil, start, end)
	for _, want := range []model.LabelName{"__name__", "host_name", "instance", "job", "otel_scope_name", "room"} {
		if err != nil || !slices.Contains(names, want) {
			t.Errorf("label names %v, %v; want %s among them", names, err, want)
		}
	}
	names, _, _, err = c.LabelNames(ctx, []string{"check_gauge"}, start, end)
	if want := (model.LabelNames{"__name__", "instance", "job", "otel_scope_name", "otel_scope_version", "room"}); err != nil || !slices.Equal(names, want) {
		t.Errorf("label names of check_gauge %v, %v; want %v", names, err, want)
	}
	for _, lv := range []struct {
		name    string
		label   string
		matches []string
		start   time.Time
		want    []string
	}{
		{"metric names", "__name__", nil, start, []string{"check_gauge", "check_latency", "check_requests_total", "target_info"}},
		// The room picker restricted to a metric, and Grafana's label
		// suggestions for the metric of a panel's rate(…) query.
		{"room of a metric", "room", []string{"check_gauge"}, start, []string{"kitchen"}},
		{"room of a selector", "room", []string{`{__name__="check_requests_total"}`}, start, []string{"kitchen"}},
		{"room of target_info", "room", []string{"target_info"}, start, nil},
		{"host_name of a job", "host_name", []string{`{job="promclient-check"}`}, start, []string{"h-1"}},
		// A window before the first sample holds nothing.
		{"before the first sample", "__name__", nil, base.Add(-2 * time.Hour), nil},
	} {
		t.Run(lv.name, func(t *testing.T) {
			e := end
			if lv.start.Before(base) {
				e = base.Add(-time.Hour)
			}
			vals, _, _, err := c.LabelValues(ctx, lv.label, lv.matches, lv.start, e)
			if got := labelValues(vals); err != nil || !slices.Equal(got, lv.want) {
				t.Errorf("got %v, %v; want %v", got, err, lv.want)
			}
		})
	}

	sets, _, _, err := c.Series(ctx, []string{`{job="promclient-check",__name__=~"check_.*"}`}, start, end)
	var got []string
	for _, ls := range sets {
		got = append(got, labelString(model.Metric(ls)))
	}
	want := []string{`{__name__="check_gauge", ` + pcLabels + `}`, `{__name__="check_latency", ` + pcLabels + `}`,
		`{__name__="check_requests_total", ` + pcLabels + `}`}
	if slices.Sort(got); err != nil || !slices.Equal(got, want) {
		t.Errorf("series %v, %v; want %v", got, err, want)
	}

	md, err := c.Metadata(ctx, "check_requests_total", "")
	if want := map[string][]v1.Metadata{"check_requests_total": {{Type: v1.MetricTypeCounter, Help: "Requests served."}}}; err != nil || !reflect.DeepEqual(md, want) {
		t.Errorf("metadata of check_requests_total: %+v, %v; want %+v", md, err, want)
	}
	md, err = c.Metadata(ctx, "", "")
	if want := map[string][]v1.Metadata{
		"check_gauge":          {{Type: v1.MetricTypeGauge, Help: "A gauge."}},
		"check_latency":        {{Type: v1.MetricTypeHistogram, Help: "Latency."}},
		"check_requests_total": {{Type: v1.MetricTypeCounter, Help: "Requests served."}},
		"target_info":          {{Type: v1.MetricTypeGauge, Help: "Target metadata"}},
	}; err != nil || !reflect.DeepEqual(md, want) {
		t.Errorf("metadata: %+v, %v; want %+v", md, err, want)
	}

	// format_query, with which Grafana's editor formats an expression (the
	// client returns the data as it is, a JSON string).
	raw, err := c.FormatQuery(ctx, "sum by(room)(rate(check_requests_total[1m]))")
	var f string
	if err != nil || json.Unmarshal([]byte(raw), &f) != nil || f != "sum by (room) (rate(check_requests_total[1m]))" {
		t.Errorf("format_query: %s, %v", raw, err)
	}
}

func rangeQuery(t *testing.T, c v1.API, query string, r v1.Range) model.Matrix {
	t.Helper()
	v, _, _, err := c.QueryRange(context.Background(), query, r)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		t.Fatalf("%s: a %s, not a matrix", query, v.Type())
	}
	return m
}

// checkPoints checks that ps has one point a step from base for each
// sample, with value want(i).
func checkPoints(t *testing.T, what string, ps []model.SamplePair, base time.Time, want func(int) float64) {
	t.Helper()
	if len(ps) != pcPoints {
		t.Errorf("%s: %d points, want %d", what, len(ps), pcPoints)
	}
	for i, p := range ps {
		at := base.Add(time.Duration(i) * pcStep)
		if !p.Timestamp.Time().Equal(at) || float64(p.Value) != want(i) {
			t.Errorf("%s point %d: %v at %v, want %v at %v", what, i, p.Value, p.Timestamp.Time(), want(i), at)
		}
	}
}

func pcGauge(i int) float64 { return 1.5 * float64(i) }

// pcMetrics is, for one resource and scope, pcPoints samples one step
// apart from base of a gauge, a monotonic cumulative sum (with one
// exemplar on its last point) and an exponential histogram whose (1,2] and
// (2,4] buckets (scale 0) gain one observation each per step. host.name,
// not a job or instance attribute, goes to target_info.
func pcMetrics(base time.Time) *metricdata.ResourceMetrics {
	room := attribute.NewSet(attribute.String("room", "kitchen"))
	start := base.Add(-pcStep)
	var (
		gauge []metricdata.DataPoint[float64]
		sum   []metricdata.DataPoint[float64]
		hist  []metricdata.ExponentialHistogramDataPoint[float64]
	)
	for i := range pcPoints {
		at := base.Add(time.Duration(i) * pcStep)
		n := uint64(i + 1)
		gauge = append(gauge, metricdata.DataPoint[float64]{Attributes: room, Time: at, Value: pcGauge(i)})
		p := metricdata.DataPoint[float64]{Attributes: room, StartTime: start, Time: at, Value: float64(10 * n)}
		if i == pcPoints-1 {
			p.Exemplars = []metricdata.Exemplar[float64]{{Time: at, Value: 0.25, TraceID: mustHex(pcTraceID), SpanID: mustHex(pcSpanID)}}
		}
		sum = append(sum, p)
		hist = append(hist, metricdata.ExponentialHistogramDataPoint[float64]{Attributes: room, StartTime: start, Time: at,
			Count: 2 * n, Sum: float64(3 * n), PositiveBucket: metricdata.ExponentialBucket{Counts: []uint64{n, n}}})
	}
	return &metricdata.ResourceMetrics{
		Resource: resource.NewSchemaless(attribute.String("service.name", "promclient-check"),
			attribute.String("service.instance.id", "i-1"), attribute.String("host.name", "h-1")),
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: "promclient", Version: "1.2.3"},
			Metrics: []metricdata.Metrics{
				{Name: "check_gauge", Description: "A gauge.", Data: metricdata.Gauge[float64]{DataPoints: gauge}},
				{Name: "check_requests", Description: "Requests served.", Data: metricdata.Sum[float64]{
					DataPoints: sum, Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}},
				{Name: "check_latency", Description: "Latency.", Data: metricdata.ExponentialHistogram[float64]{
					DataPoints: hist, Temporality: metricdata.CumulativeTemporality}},
			},
		}},
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// methodRT records "METHOD path" of each request that reaches the
// server. With getOnly it answers every POST 405 itself, as a server that
// allows GET only would: the client then repeats the request by GET.
type methodRT struct {
	getOnly bool
	next    http.RoundTripper
	mu      sync.Mutex
	sent    map[string]bool
}

func (m *methodRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if m.getOnly && r.Method == http.MethodPost {
		if r.Body != nil {
			r.Body.Close()
		}
		return &http.Response{StatusCode: http.StatusMethodNotAllowed, Status: "405 Method Not Allowed", Proto: "HTTP/1.1",
			ProtoMajor: 1, ProtoMinor: 1, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	}
	m.mu.Lock()
	m.sent[r.Method+" "+r.URL.Path] = true
	m.mu.Unlock()
	return m.next.RoundTrip(r)
}
