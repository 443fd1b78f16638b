package promapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/tsdb"
	"go.uber.org/goleak"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// newServer opens a TSDB with known series and serves the API over it.
//
//	up{job="api",instance="a"} 1 and up{job="api",instance="b"} 0, every 15 s for 10 min
//	http_requests_total{job="api",code="200"} rising by 30 every 15 s (2/s)
//	latency{job="api"} a native histogram
//	one exemplar on http_requests_total, 500 ms before its 21st sample
func newServer(t testing.TB) (*httptest.Server, v1.API) {
	t.Helper()
	srv, c, _ := newServerWith(t, func(*Config, *tsdb.DB) {})
	return srv, c
}

// newServerWith is newServer with an API whose Config set changes, given
// the TSDB; it returns the TSDB too.
func newServerWith(t testing.TB, set func(*Config, *tsdb.DB)) (*httptest.Server, v1.API, *tsdb.DB) {
	t.Helper()
	opts := tsdb.DefaultOptions()
	opts.EnableExemplarStorage, opts.MaxExemplars = true, 100
	reg := prometheus.NewRegistry()
	db, err := tsdb.Open(t.TempDir(), nil, reg, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	app := db.Appender(context.Background())
	h := &histogram.Histogram{Count: 6, Sum: 12, ZeroThreshold: 0.001, Schema: 0,
		PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []int64{2, 2}}
	for i := range 41 {
		ts := t0.Add(time.Duration(i) * 15 * time.Second).UnixMilli()
		for _, s := range []struct {
			ls labels.Labels
			v  float64
		}{
			{labels.FromStrings("__name__", "up", "job", "api", "instance", "a"), 1},
			{labels.FromStrings("__name__", "up", "job", "api", "instance", "b"), 0},
			{labels.FromStrings("__name__", "http_requests_total", "job", "api", "code", "200"), float64(30 * i)},
		} {
			ref, err := app.Append(0, s.ls, ts, s.v)
			if err != nil {
				t.Fatal(err)
			}
			if i == 20 && s.ls.Get("__name__") == "http_requests_total" {
				ex := exemplar.Exemplar{Labels: labels.FromStrings("trace_id", "4bf92f3577b34da6a3ce929d0e0e4736", "span_id", "00f067aa0ba902b7"),
					Value: 0.25, Ts: ts - 500, HasTs: true}
				if _, err := app.AppendExemplar(ref, s.ls, ex); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, err := app.AppendHistogram(0, labels.FromStrings("__name__", "latency", "job", "api"), ts, h, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Revision, cfg.Exemplars, cfg.Head, cfg.Gatherer = "test", db, headStats{db.Head()}, reg
	set(&cfg, db)
	a, err := New(cfg, db)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c, err := api.NewClient(api.Config{Address: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return srv, v1.NewAPI(c), db
}

// getBody GETs url and returns the status and body.
func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestClientGolang drives every endpoint with Prometheus' own Go API
// client, the one promtool and many tools use.
func TestClientGolang(t *testing.T) {
	srv, c := newServer(t)
	defer srv.Client().CloseIdleConnections()
	ctx := context.Background()
	at := t0.Add(10 * time.Minute)

	v, _, _, err := c.Query(ctx, `sum by (job) (up)`, at)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.String(); got != `{job="api"} => 1 @[1795428600]` {
		t.Errorf("sum by (job) (up) = %s", got)
	}
	v, _, _, err = c.Query(ctx, `up`, at)
	if err != nil {
		t.Fatal(err)
	}
	if vec, ok := v.(model.Vector); !ok || len(vec) != 2 {
		t.Errorf("up = %v, want 2 samples", v)
	}

	v, _, _, err = c.QueryRange(ctx, `rate(http_requests_total[1m])`, v1.Range{Start: t0.Add(5 * time.Minute), End: at, Step: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := v.(model.Matrix)
	if !ok || len(m) != 1 || len(m[0].Values) != 6 {
		t.Fatalf("rate over 5 min at 1 min steps = %v, want one series of 6 points", v)
	}
	for _, p := range m[0].Values {
		if math.Abs(float64(p.Value)-2) > 1e-9 {
			t.Errorf("rate at %v = %v, want 2", p.Timestamp, p.Value)
		}
	}

	v, _, _, err = c.Query(ctx, `latency`, at)
	if err != nil {
		t.Fatal(err)
	}
	vec, ok := v.(model.Vector)
	if !ok || len(vec) != 1 || vec[0].Histogram == nil || vec[0].Histogram.Count != 6 || vec[0].Histogram.Sum != 12 {
		t.Errorf("latency = %v, want a native histogram with count 6, sum 12", v)
	}

	series, _, _, err := c.Series(ctx, []string{`up`, `{__name__="latency"}`}, t0, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 3 {
		t.Errorf("series = %v, want 3", series)
	}

	names, _, _, err := c.LabelNames(ctx, nil, t0, at)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toStrings(names), ","); got != "__name__,code,instance,job" {
		t.Errorf("labels = %s", got)
	}
	names, _, _, err = c.LabelNames(ctx, []string{`up`}, t0, at)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(toStrings(names), ","); got != "__name__,instance,job" {
		t.Errorf("labels of up = %s", got)
	}
	vals, _, _, err := c.LabelValues(ctx, "instance", nil, t0, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 2 || vals[0] != "a" || vals[1] != "b" {
		t.Errorf("values of instance = %v", vals)
	}
	vals, _, _, err = c.LabelValues(ctx, "__name__", nil, t0, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 3 {
		t.Errorf("metric names = %v", vals)
	}

	bi, err := c.Buildinfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bi.Version != PrometheusVersion || bi.Revision != "test" {
		t.Errorf("buildinfo = %+v", bi)
	}
}

func toStrings[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// TestErrors: each malformed request gets Prometheus' status code and
// error envelope.
func TestErrors(t *testing.T) {
	srv, _ := newServer(t)
	defer srv.Client().CloseIdleConnections()
	for _, tc := range []struct {
		path   string
		params url.Values
		status int
		typ    string
		want   string
	}{
		{"/api/v1/query", url.Values{"query": {"sum(("}}, 400, "bad_data", `invalid parameter "query": 1:6: parse error`},
		{"/api/v1/query", url.Values{"query": {"up"}, "time": {"yesterday"}}, 400, "bad_data", "invalid time value for 'time'"},
		{"/api/v1/query", url.Values{"query": {"up"}, "timeout": {"soon"}}, 400, "bad_data", `invalid parameter "timeout": cannot parse "soon"`},
		{"/api/v1/query", url.Values{"query": {"up"}, "limit": {"-1"}}, 400, "bad_data", `invalid parameter "limit": limit must be non-negative`},
		{"/api/v1/query_range", url.Values{"query": {"up"}, "start": {"1"}, "end": {"2"}, "step": {"0"}}, 400, "bad_data", "zero or negative"},
		{"/api/v1/query_range", url.Values{"query": {"up"}, "start": {"2"}, "end": {"1"}, "step": {"1"}}, 400, "bad_data", "end timestamp must not be before"},
		{"/api/v1/query_range", url.Values{"query": {"up"}, "start": {"0"}, "end": {"100000"}, "step": {"1"}}, 400, "bad_data", "11,000 points"},
		{"/api/v1/query_range", url.Values{"query": {"up"}, "end": {"2"}, "step": {"1"}}, 400, "bad_data", `invalid parameter "start": cannot parse "" to a valid timestamp`},
		{"/api/v1/series", nil, 400, "bad_data", "no match[]"},
		{"/api/v1/series", url.Values{"match[]": {`{job=~".*"}`}}, 400, "bad_data", "non-empty matcher"},
		{"/api/v1/series", url.Values{"match[]": {`up{`}}, 400, "bad_data", `invalid parameter "match[]": 1:4: parse error`},
		{"/api/v1/query", url.Values{"query": {`label_replace(up, "x", "$1", "instance", "(")`}, "time": {"1795428600"}}, 422, "execution", "invalid regular expression"},
		{"/api/v1/query", url.Values{"query": {"up"}, "timeout": {"0"}}, 400, "bad_data", `invalid parameter "timeout": timeout must be positive`},
		// PromQL evaluates in int64 nanoseconds: later than 2262 would wrap.
		{"/api/v1/query", url.Values{"query": {"vector(time())"}, "time": {"1e300"}}, 400, "bad_data", `invalid parameter "time": time 292277025`},
		{"/api/v1/query_range", url.Values{"query": {"up"}, "start": {"0"}, "end": {"1e11"}, "step": {"1e6"}}, 400, "bad_data", `invalid parameter "end": time 5138-11-16T09:46:40Z is outside the range PromQL evaluates`},
		// 1684 to 2255 at 1e6 s is 18,000 points (a time.Duration saturates at 292 years).
		{"/api/v1/query_range", url.Values{"query": {"up"}, "start": {"-9e9"}, "end": {"9e9"}, "step": {"1e6"}}, 400, "bad_data", "11,000 points"},
		{"/api/v1/query", url.Values{"query": {"up"}, "lookback_delta": {"bogus"}}, 400, "bad_data", "error parsing lookback delta duration"},
		{"/api/v1/query_range", url.Values{"query": {"up"}, "start": {"1"}, "end": {"2"}, "step": {"1"}, "lookback_delta": {"x"}}, 400, "bad_data", "lookback delta"},
	} {
		resp, err := http.PostForm(srv.URL+tc.path, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var env struct{ Status, ErrorType, Error string }
		if err := json.Unmarshal(b, &env); err != nil {
			t.Fatalf("%s %v: %v in %s", tc.path, tc.params, err, b)
		}
		if resp.StatusCode != tc.status || env.Status != "error" || env.ErrorType != tc.typ || !strings.Contains(env.Error, tc.want) {
			t.Errorf("%s %v: HTTP %d %s, want %d %s %q", tc.path, tc.params, resp.StatusCode, b, tc.status, tc.typ, tc.want)
		}
	}
}

// TestResponseShape checks the raw encoding of special values, of a scalar
// and of a string, which clients parse by position. A sample's timestamp
// carries three decimals (util/jsonutil.MarshalTimestamp), a scalar's or a
// string's as few as it needs and a scalar's value no exponent
// (promql.Scalar's MarshalJSON), as Prometheus writes them (the oracle
// module compares the rest).
func TestResponseShape(t *testing.T) {
	srv, _ := newServer(t)
	defer srv.Client().CloseIdleConnections()
	for q, want := range map[string]string{
		`1/0`:              `{"status":"success","data":{"resultType":"scalar","result":[1795428600.5,"+Inf"]}}`,
		`-1/0`:             `{"status":"success","data":{"resultType":"scalar","result":[1795428600.5,"-Inf"]}}`,
		`0/0`:              `{"status":"success","data":{"resultType":"scalar","result":[1795428600.5,"NaN"]}}`,
		`1e30`:             `{"status":"success","data":{"resultType":"scalar","result":[1795428600.5,"1000000000000000000000000000000"]}}`,
		`vector(1e30)`:     `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1795428600.500,"1e+30"]}]}}`,
		`"text"`:           `{"status":"success","data":{"resultType":"string","result":[1795428600.5,"text"]}}`,
		`up{instance="a"}`: `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","instance":"a","job":"api"},"value":[1795428600.500,"1"]}]}}`,
	} {
		if _, b := getBody(t, srv.URL+"/api/v1/query?"+url.Values{"query": {q}, "time": {"1795428600.5"}}.Encode()); b != want {
			t.Errorf("%s:\n got  %s\n want %s", q, b, want)
		}
	}
}

// TestPromtool runs promtool (the Debian prometheus package's; `make test`
// extracts it into ./bin and points WIREHOUSE_PROMTOOL at it) against the
// API: instant, range, series and label-value queries. A plain `go test`
// without it skips this test.
func TestPromtool(t *testing.T) {
	promtool := os.Getenv("WIREHOUSE_PROMTOOL")
	if promtool == "" {
		t.Skip("WIREHOUSE_PROMTOOL not set; `make test` installs promtool and sets it")
	}
	srv, _ := newServer(t)
	defer srv.Client().CloseIdleConnections()
	at := strconv.FormatInt(t0.Add(10*time.Minute).Unix(), 10)
	start := strconv.FormatInt(t0.Add(5*time.Minute).Unix(), 10)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"query", "instant", "--time", at, srv.URL, `sum by (job) (up)`}, []string{`{job="api"} => 1 @[1795428600]`}},
		{[]string{"query", "instant", "-o", "json", "--time", at, srv.URL, `up`}, []string{`"instance":"a"`, `"instance":"b"`}},
		{[]string{"query", "range", "--start", start, "--end", at, "--step", "1m", srv.URL, `http_requests_total`}, []string{`http_requests_total{code="200", job="api"} =>`, "600 @[1795428300]", "1200 @[1795428600]"}},
		{[]string{"query", "series", "--match", "up", "--start", start, "--end", at, srv.URL}, []string{`{__name__="up", instance="a", job="api"}`, `{__name__="up", instance="b", job="api"}`}},
		{[]string{"query", "labels", "--start", start, "--end", at, srv.URL, "instance"}, []string{"a", "b"}},
	} {
		out, err := exec.Command(promtool, tc.args...).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %v: %v\n%s", tc.args, err, out)
		}
		for _, want := range tc.want {
			if !strings.Contains(string(out), want) {
				t.Errorf("promtool %v: output lacks %q:\n%s", tc.args, want, out)
			}
		}
	}
}

// headStats is the HeadStatser of a whole head, whose chunks the gauge
// counts.
type headStats struct{ h *tsdb.Head }

func (s headStats) HeadStats(_ context.Context, statsByLabelName string, limit int) (*tsdb.Stats, int64, error) {
	return s.h.Stats(statsByLabelName, limit), -1, nil
}

// metaSource is a MetadataSource that keeps its last arguments.
type metaSource struct {
	metric           string
	limit, perMetric int
	tenant           string
}

func (m *metaSource) Metadata(ctx context.Context, metric string, limit, limitPerMetric int) map[string][]metadata.Metadata {
	m.metric, m.limit, m.perMetric, m.tenant = metric, limit, limitPerMetric, tenant.FromContext(ctx)
	return map[string][]metadata.Metadata{
		"http_requests_total": {{Type: model.MetricTypeCounter, Help: "Requests \"served\"."}},
		"latency_seconds":     {{Type: model.MetricTypeHistogram, Unit: "seconds", Help: "a"}, {Type: model.MetricTypeHistogram, Unit: "seconds", Help: "b"}},
	}
}

// TestMetadata reads /api/v1/metadata with client_golang and raw, and
// checks how the parameters reach the source.
func TestMetadata(t *testing.T) {
	src := &metaSource{}
	srv, c, _ := newServerWith(t, func(cfg *Config, _ *tsdb.DB) { cfg.Metadata = src })
	defer srv.Client().CloseIdleConnections()
	md, err := c.Metadata(context.Background(), "latency_seconds", "5")
	if err != nil || len(md) != 2 || len(md["latency_seconds"]) != 2 || md["latency_seconds"][1].Help != "b" ||
		md["latency_seconds"][0].Unit != "seconds" || md["http_requests_total"][0].Type != v1.MetricTypeCounter {
		t.Errorf("metadata = %+v, %v", md, err)
	}
	if src.metric != "latency_seconds" || src.limit != 5 || src.perMetric != -1 {
		t.Errorf("source asked for %+v", *src)
	}
	code, body := getBody(t, srv.URL+"/api/v1/metadata?limit_per_metric=1")
	want := `{"status":"success","data":{"http_requests_total":[{"type":"counter","unit":"","help":"Requests \"served\"."}],` +
		`"latency_seconds":[{"type":"histogram","unit":"seconds","help":"a"},{"type":"histogram","unit":"seconds","help":"b"}]}}`
	if code != 200 || body != want || src.limit != -1 || src.perMetric != 1 {
		t.Errorf("raw: %d %s (source asked %+v)", code, body, *src)
	}
	for _, q := range []string{"limit=x", "limit_per_metric=1.5"} {
		if code, body := getBody(t, srv.URL+"/api/v1/metadata?"+q); code != 400 || !strings.Contains(body, `"errorType":"bad_data"`) {
			t.Errorf("%s: %d %s", q, code, body)
		}
	}
}

// TestTSDBStatus reads /api/v1/status/tsdb raw and with client_golang:
// newServer's four series counted by metric name and by label, and the
// head chunk count from the TSDB's own gauge.
func TestTSDBStatus(t *testing.T) {
	srv, c := newServer(t)
	defer srv.Client().CloseIdleConnections()
	st, err := c.TSDB(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.HeadStats.NumSeries != 4 || st.HeadStats.ChunkCount < 4 || int64(st.HeadStats.MinTime) != t0.UnixMilli() ||
		int64(st.HeadStats.MaxTime) != t0.Add(40*15*time.Second).UnixMilli() {
		t.Errorf("head stats %+v", st.HeadStats)
	}
	byName := map[string]uint64{}
	for _, s := range st.SeriesCountByMetricName {
		byName[s.Name] = s.Value
	}
	if byName["up"] != 2 || byName["http_requests_total"] != 1 || byName["latency"] != 1 || len(byName) != 3 {
		t.Errorf("series by metric name %v", st.SeriesCountByMetricName)
	}
	if len(st.LabelValueCountByLabelName) == 0 || st.LabelValueCountByLabelName[0] != (v1.Stat{Name: "__name__", Value: 3}) {
		t.Errorf("label value counts %v", st.LabelValueCountByLabelName)
	}
	if len(st.SeriesCountByLabelValuePair) == 0 || st.SeriesCountByLabelValuePair[0] != (v1.Stat{Name: "job=api", Value: 4}) {
		t.Errorf("series by label pair %v", st.SeriesCountByLabelValuePair)
	}
	code, body := getBody(t, srv.URL+"/api/v1/status/tsdb?limit=1")
	if code != 200 || !strings.Contains(body, `"seriesCountByMetricName":[{"name":"up","value":2}],`) {
		t.Errorf("limit=1: %d %s", code, body)
	}
	for _, q := range []string{"limit=0", "limit=x", "limit=10001"} {
		if code, body := getBody(t, srv.URL+"/api/v1/status/tsdb?"+q); code != 400 || !strings.Contains(body, `"errorType":"bad_data"`) {
			t.Errorf("%s: %d %s", q, code, body)
		}
	}
}

// TestAdmin: without Config.Admin the admin endpoints answer 503; with it,
// delete_series tombstones what match[] selects in the window (204; an end
// before start deletes nothing, as in Prometheus), clean_tombstones
// answers 204 (it rewrites blocks; this data is all in the head), and
// snapshot writes a directory named in the answer, with the head as a
// block unless skip_head.
func TestAdmin(t *testing.T) {
	srv, _ := newServer(t)
	defer srv.Client().CloseIdleConnections()
	post := func(base, path string, form url.Values) (int, string) {
		t.Helper()
		resp, err := http.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post(srv.URL, "/api/v1/admin/tsdb/delete_series", url.Values{"match[]": {"up"}}); code != 503 ||
		!strings.Contains(body, `"errorType":"unavailable","error":"admin APIs disabled"`) {
		t.Errorf("disabled: %d %s", code, body)
	}

	snaps := t.TempDir()
	srv, c, _ := newServerWith(t, func(cfg *Config, db *tsdb.DB) { cfg.Admin, cfg.SnapshotDir = db, snaps })
	defer srv.Client().CloseIdleConnections()
	ctx := context.Background()
	count := func(q string) int {
		t.Helper()
		v, _, _, err := c.Query(ctx, q, t0.Add(10*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		vec, _ := v.(model.Vector)
		if len(vec) != 1 {
			t.Fatalf("%s: %v", q, v)
		}
		return int(vec[0].Value)
	}
	// up: 41 samples a series, every 15 s from t0; delete instance a's
	// between 5 and 10 minutes (21 samples).
	if n := count(`count_over_time(up{instance="a"}[20m])`); n != 41 {
		t.Fatalf("before: %d samples", n)
	}
	form := url.Values{"match[]": {`up{instance="a"}`}, "start": {strconv.FormatInt(t0.Add(5*time.Minute).Unix(), 10)},
		"end": {strconv.FormatInt(t0.Add(10*time.Minute).Unix(), 10)}}
	if code, body := post(srv.URL, "/api/v1/admin/tsdb/delete_series", form); code != 204 || body != "" {
		t.Fatalf("delete_series: %d %s", code, body)
	}
	if n := count(`count_over_time(up{instance="a"}[20m])`); n != 20 {
		t.Errorf("after delete: %d samples, want 20", n)
	}
	if n := count(`count_over_time(up{instance="b"}[20m])`); n != 41 {
		t.Errorf("instance b: %d samples, want all 41", n)
	}
	backwards := url.Values{"match[]": {"up"}, "start": {strconv.FormatInt(t0.Add(10*time.Minute).Unix(), 10)},
		"end": {strconv.FormatInt(t0.Unix(), 10)}}
	if code, body := post(srv.URL, "/api/v1/admin/tsdb/delete_series", backwards); code != 204 || count(`count_over_time(up{instance="b"}[20m])`) != 41 {
		t.Errorf("end before start: %d %s", code, body)
	}
	if code, body := post(srv.URL, "/api/v1/admin/tsdb/delete_series", nil); code != 400 || !strings.Contains(body, "no match[] parameter provided") {
		t.Errorf("no match[]: %d %s", code, body)
	}
	if code, body := post(srv.URL, "/api/v1/admin/tsdb/clean_tombstones", nil); code != 204 {
		t.Errorf("clean_tombstones: %d %s", code, body)
	}
	for _, tc := range []struct {
		skipHead string
		blocks   int
	}{{"", 1}, {"true", 0}} {
		code, body := post(srv.URL, "/api/v1/admin/tsdb/snapshot", url.Values{"skip_head": {tc.skipHead}})
		var res struct {
			Status string
			Data   struct{ Name string }
		}
		if err := json.Unmarshal([]byte(body), &res); code != 200 || err != nil || res.Data.Name == "" {
			t.Fatalf("snapshot: %d %s", code, body)
		}
		if entries, err := os.ReadDir(filepath.Join(snaps, res.Data.Name)); err != nil || len(entries) != tc.blocks {
			t.Errorf("snapshot skip_head=%q: %v, %v; want %d blocks", tc.skipHead, entries, err, tc.blocks)
		}
	}
	if code, _ := post(srv.URL, "/api/v1/admin/tsdb/snapshot", url.Values{"skip_head": {"maybe"}}); code != 400 {
		t.Errorf("skip_head=maybe: %d", code)
	}
}

// TestFormatQuery: /api/v1/format_query pretty-prints as Prometheus does,
// and refuses what does not parse.
func TestFormatQuery(t *testing.T) {
	srv, _ := newServer(t)
	defer srv.Client().CloseIdleConnections()
	code, body := getBody(t, srv.URL+"/api/v1/format_query?"+url.Values{"query": {`sum by(job)(rate(http_requests_total{code="200"}[5m]))`}}.Encode())
	if want := `{"status":"success","data":"sum by (job) (rate(http_requests_total{code=\"200\"}[5m]))"}`; code != 200 || body != want {
		t.Errorf("format_query: %d %s, want %s", code, body, want)
	}
	resp, err := http.PostForm(srv.URL+"/api/v1/format_query", url.Values{"query": {"sum(("}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), `"errorType":"bad_data"`) || !strings.Contains(string(b), `invalid parameter \"query\"`) {
		t.Errorf("bad query: %d %s", resp.StatusCode, b)
	}
}

// TestEmptyEndpoints: metadata without a source, and exemplars of a series
// that has none, answer with empty results in Prometheus' envelope.
func TestEmptyEndpoints(t *testing.T) {
	srv, c := newServer(t)
	defer srv.Client().CloseIdleConnections()
	md, err := c.Metadata(context.Background(), "", "")
	if err != nil || len(md) != 0 {
		t.Errorf("metadata = %v, %v; want empty", md, err)
	}
	ex, err := c.QueryExemplars(context.Background(), "up", t0, t0.Add(time.Hour))
	if err != nil || len(ex) != 0 {
		t.Errorf("exemplars = %v, %v; want empty", ex, err)
	}
	tg, err := c.Targets(context.Background())
	if err != nil || len(tg.Active) != 0 || len(tg.Dropped) != 0 {
		t.Errorf("targets = %+v, %v; want empty", tg, err)
	}
	tm, err := c.TargetsMetadata(context.Background(), "", "", "")
	if err != nil || len(tm) != 0 {
		t.Errorf("targets metadata = %+v, %v; want empty", tm, err)
	}
	am, err := c.AlertManagers(context.Background())
	if err != nil || len(am.Active) != 0 || len(am.Dropped) != 0 {
		t.Errorf("alertmanagers = %+v, %v; want empty", am, err)
	}
	if code, body := getBody(t, srv.URL+"/api/v1/targets"); code != http.StatusOK ||
		body != `{"status":"success","data":{"activeTargets":[],"droppedTargets":[],"droppedTargetCounts":{}}}` {
		t.Errorf("targets: HTTP %d %s", code, body)
	}
}

// TestExemplars reads the stored exemplar through the client_golang API
// and checks the raw response against Prometheus' documented shape.
func TestExemplars(t *testing.T) {
	srv, c := newServer(t)
	defer srv.Client().CloseIdleConnections()
	at := t0.Add(20*15*time.Second - 500*time.Millisecond)
	res, err := c.QueryExemplars(context.Background(), `sum(rate(http_requests_total{code="200"}[5m])) / sum(up)`, t0, t0.Add(time.Hour))
	if err != nil || len(res) != 1 || len(res[0].Exemplars) != 1 {
		t.Fatalf("exemplars = %+v, %v; want one series with one", res, err)
	}
	got := res[0]
	if got.SeriesLabels["__name__"] != "http_requests_total" || got.SeriesLabels["code"] != "200" {
		t.Errorf("series labels %v", got.SeriesLabels)
	}
	e := got.Exemplars[0]
	if e.Labels["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" || e.Labels["span_id"] != "00f067aa0ba902b7" ||
		e.Value != 0.25 || !e.Timestamp.Time().Equal(at) {
		t.Errorf("exemplar %+v, want trace/span ids, 0.25 at %v", e, at)
	}
	// Outside the window: nothing.
	if res, err := c.QueryExemplars(context.Background(), "http_requests_total", at.Add(time.Second), t0.Add(time.Hour)); err != nil || len(res) != 0 {
		t.Errorf("after the exemplar: %+v, %v", res, err)
	}

	get := func(q string) (int, string) { return getBody(t, srv.URL+"/api/v1/query_exemplars?"+q) }
	code, body := get("query=http_requests_total")
	want := `{"status":"success","data":[{"seriesLabels":{"__name__":"http_requests_total","code":"200","job":"api"},` +
		`"exemplars":[{"labels":{"span_id":"00f067aa0ba902b7","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"},"value":"0.25","timestamp":` +
		strconv.FormatFloat(float64(at.UnixMilli())/1e3, 'f', 3, 64) + `}]}]}`
	if code != 200 || body != want {
		t.Errorf("raw response %d %s\nwant %s", code, body, want)
	}
	if code, body := get("query=1%2B1"); code != http.StatusNoContent || body != "" { // as Prometheus: no data
		t.Errorf("no selectors: %d %s", code, body)
	}
	if code, body := get("query=rate("); code != 400 || !strings.Contains(body, `"errorType":"bad_data"`) {
		t.Errorf("bad query: %d %s", code, body)
	}
	if code, _ := get("query=up&start=10&end=5"); code != 400 {
		t.Errorf("end before start: %d", code)
	}
}

// TestRulesAndAlerts reads the (empty) rule and alert lists with
// client_golang, as Grafana's alerting views of a Prometheus data source
// do, and raw; a rule type Prometheus does not know is refused.
func TestRulesAndAlerts(t *testing.T) {
	srv, c := newServer(t)
	defer srv.Client().CloseIdleConnections()
	rules, err := c.Rules(context.Background(), nil)
	if err != nil || rules.Groups == nil || len(rules.Groups) != 0 {
		t.Errorf("rules = %+v, %v", rules, err)
	}
	alerts, err := c.Alerts(context.Background())
	if err != nil || alerts.Alerts == nil || len(alerts.Alerts) != 0 {
		t.Errorf("alerts = %+v, %v", alerts, err)
	}
	for path, want := range map[string]string{
		"/api/v1/rules":             `{"status":"success","data":{"groups":[]}}`,
		"/api/v1/rules?type=RECORD": `{"status":"success","data":{"groups":[]}}`,
		"/api/v1/alerts":            `{"status":"success","data":{"alerts":[]}}`,
	} {
		if code, body := getBody(t, srv.URL+path); code != 200 || body != want {
			t.Errorf("%s: %d %s, want 200 %s", path, code, body, want)
		}
	}
	for q, want := range map[string]string{
		"type=silence":                              `not supported value \"silence\"`,
		"match[]={job=~\".*\"}":                     "at least one non-empty matcher",
		"match[]=%7B":                               "1:2: parse error: unexpected end of input inside braces",
		"exclude_alerts=maybe":                      "error converting exclude_alerts",
		"group_limit=0":                             "group_limit needs to be greater than 0",
		"group_limit=ten":                           "group_limit needs to be a valid number",
		"group_next_token=abc":                      "group_limit needs to be present",
		"group_limit=5&group_next_token=abc":        "invalid group_next_token 'abc'",
		"type=alert&exclude_alerts=true&match[]=up": "",
	} {
		code, body := getBody(t, srv.URL+"/api/v1/rules?"+q)
		if want == "" {
			if code != 200 || body != `{"status":"success","data":{"groups":[]}}` {
				t.Errorf("%s: %d %s, want no groups", q, code, body)
			}
			continue
		}
		if code != 400 || !strings.Contains(body, `"errorType":"bad_data"`) || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s, want 400 bad_data naming %q", q, code, body, want)
		}
	}
}

// TestInvertedWindow: as in Prometheus, a series or label request whose end
// is before its start finds nothing rather than failing.
func TestInvertedWindow(t *testing.T) {
	srv, _ := newServer(t)
	defer srv.Client().CloseIdleConnections()
	for path, want := range map[string]string{
		"/api/v1/series?match[]=up&start=2000000000&end=1": `{"status":"success","data":[]}`,
		"/api/v1/labels?start=2000000000&end=1":            `{"status":"success","data":[]}`,
	} {
		if code, body := getBody(t, srv.URL+path); code != 200 || body != want {
			t.Errorf("%s: %d %s, want 200 %s", path, code, body, want)
		}
	}
}

// TestQueryParams: parameters Grafana and scripts send that change what a
// query returns, and subqueries without a step, each checked against
// the samples newServer stored (every 15 s from t0 to t0+10m).
func TestQueryParams(t *testing.T) {
	srv, _ := newServer(t)
	defer srv.Client().CloseIdleConnections()
	type env struct {
		Status   string
		Warnings []string
		Data     struct {
			Result []struct {
				Metric map[string]string
				Value  []any
				Values [][]any
			}
			Stats *struct {
				Timings map[string]float64
				Samples map[string]any
			}
		}
	}
	get := func(path string, params url.Values) env {
		t.Helper()
		code, body := getBody(t, srv.URL+path+"?"+params.Encode())
		var e env
		if err := json.Unmarshal([]byte(body), &e); err != nil || code != http.StatusOK || e.Status != "success" {
			t.Fatalf("%s %v: HTTP %d %s (%v)", path, params, code, body, err)
		}
		return e
	}
	at := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }
	one := func(e env) string {
		t.Helper()
		if len(e.Data.Result) != 1 || len(e.Data.Result[0].Value) != 2 {
			t.Fatalf("want one sample, got %+v", e.Data.Result)
		}
		return e.Data.Result[0].Value[1].(string)
	}

	// Subqueries without a step run at 1m, Prometheus' default
	// evaluation interval: http_requests_total rises by 30 every 15 s,
	// so over [5m:] ending at t0+10m the largest value is the last, 1200.
	if v := one(get("/api/v1/query", url.Values{"query": {`max_over_time(http_requests_total[5m:])`}, "time": {at(10 * time.Minute)}})); v != "1200" {
		t.Errorf("max_over_time(...[5m:]) = %s, want 1200", v)
	}
	e := get("/api/v1/query_range", url.Values{"query": {`count_over_time(up{instance="a"}[5m:])`},
		"start": {at(5 * time.Minute)}, "end": {at(10 * time.Minute)}, "step": {"60"}})
	if len(e.Data.Result) != 1 || len(e.Data.Result[0].Values) != 6 || e.Data.Result[0].Values[5][1] != "5" {
		t.Errorf("count_over_time(up[5m:]) over a range = %+v, want 6 points ending in 5 (one per minute)", e.Data.Result)
	}

	// lookback_delta: 7 minutes after the last sample the default 5m finds
	// nothing, 10m finds the last sample.
	q := url.Values{"query": {`up{instance="a"}`}, "time": {at(17 * time.Minute)}}
	if e := get("/api/v1/query", q); len(e.Data.Result) != 0 {
		t.Errorf("7m after the last sample with the default lookback: %+v", e.Data.Result)
	}
	q.Set("lookback_delta", "10m")
	if v := one(get("/api/v1/query", q)); v != "1" {
		t.Errorf("with lookback_delta=10m: %s, want 1", v)
	}

	// stats: any value adds them; other than true or all it also warns.
	q = url.Values{"query": {`sum(up)`}, "time": {at(10 * time.Minute)}}
	if e := get("/api/v1/query", q); e.Data.Stats != nil {
		t.Error("stats without the parameter")
	}
	for _, v := range []string{"true", "all", "yes"} {
		q.Set("stats", v)
		e := get("/api/v1/query", q)
		if e.Data.Stats == nil || e.Data.Stats.Timings["execTotalTime"] <= 0 || e.Data.Stats.Samples["totalQueryableSamples"] != float64(2) {
			t.Errorf("stats=%s: %+v", v, e.Data.Stats)
		}
		if warned := len(e.Warnings) > 0; warned != (v == "yes") {
			t.Errorf("stats=%s: warnings %q", v, e.Warnings)
		}
	}

	// Prometheus' own time bounds, as client_golang sends them, and
	// times beyond them, are the whole range.
	for _, w := range [][2]string{
		{"-292273086-05-16T16:47:06Z", "292277025-08-18T07:12:54.999999999Z"},
		{"-1e300", "1e300"},
	} {
		code, body := getBody(t, srv.URL+"/api/v1/series?"+url.Values{"match[]": {"up"}, "start": {w[0]}, "end": {w[1]}}.Encode())
		if code != http.StatusOK || strings.Count(body, `"__name__":"up"`) != 2 {
			t.Errorf("series from %s to %s: HTTP %d %s", w[0], w[1], code, body)
		}
	}

	// A limit the labels exceed is a cut, with a warning.
	code, body := getBody(t, srv.URL+"/api/v1/labels?limit=2")
	if code != http.StatusOK || !strings.Contains(body, "results truncated due to limit") {
		t.Errorf("labels?limit=2: HTTP %d %s", code, body)
	}
}

// TestGzip: clients that accept gzip (Grafana, promtool) get compressed
// responses, which decode to the same answer as uncompressed ones.
func TestGzip(t *testing.T) {
	srv, _ := newServer(t)
	defer srv.Client().CloseIdleConnections()
	u := srv.URL + "/api/v1/query_range?" + url.Values{"query": {"up"}, "start": {strconv.FormatInt(t0.Unix(), 10)},
		"end": {strconv.FormatInt(t0.Add(10*time.Minute).Unix(), 10)}, "step": {"15"}}.Encode()
	get := func(acceptGzip bool) (string, []byte) {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		if acceptGzip { // set by hand, the transport leaves the body compressed
			req.Header.Set("Accept-Encoding", "gzip")
		} else {
			req.Header.Set("Accept-Encoding", "identity")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d %v", resp.StatusCode, err)
		}
		return resp.Header.Get("Content-Encoding"), b
	}
	enc, plain := get(false)
	if enc != "" || !strings.Contains(string(plain), `"resultType":"matrix"`) {
		t.Fatalf("identity: Content-Encoding %q, body %.100s", enc, plain)
	}
	enc, zipped := get(true)
	if enc != "gzip" || len(zipped) >= len(plain) {
		t.Fatalf("gzip: Content-Encoding %q, %d bytes against %d", enc, len(zipped), len(plain))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unzipped, plain) {
		t.Fatalf("gunzipped response differs (%v)", err)
	}
}

// TestTenantContext: the request's context, with its tenant, reaches the
// storage (here the metadata source), and the admin endpoints that act on
// the whole TSDB answer 403 to a tenant other than the default, 204 or 200
// to the default one.
func TestTenantContext(t *testing.T) {
	src := &metaSource{}
	snaps := t.TempDir()
	srv, _, _ := newServerWith(t, func(cfg *Config, db *tsdb.DB) { cfg.Admin, cfg.SnapshotDir, cfg.Metadata = db, snaps, src })
	defer srv.Client().CloseIdleConnections()
	// As the admin server does: the tenant of the request's token goes
	// into its context.
	as := func(tn string) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			srv.Config.Handler.ServeHTTP(w, r.WithContext(tenant.NewContext(r.Context(), tn)))
		}))
		t.Cleanup(s.Close)
		return s
	}
	for _, tc := range []struct {
		tenant string
		code   int
	}{{"", 204}, {"a", 403}} {
		t.Run("tenant="+tc.tenant, func(t *testing.T) {
			s := as(tc.tenant)
			defer s.Client().CloseIdleConnections()
			if code, body := getBody(t, s.URL+"/api/v1/metadata"); code != 200 || src.tenant != tc.tenant {
				t.Errorf("metadata: %d %s, source saw tenant %q", code, body, src.tenant)
			}
			for _, path := range []string{"/api/v1/admin/tsdb/clean_tombstones", "/api/v1/admin/tsdb/snapshot"} {
				resp, err := http.Post(s.URL+path, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := tc.code
				if path == "/api/v1/admin/tsdb/snapshot" && want == 204 {
					want = 200
				}
				if resp.StatusCode != want || want == 403 && !strings.Contains(string(b), `"errorType":"forbidden"`) {
					t.Errorf("%s: %d %s, want %d", path, resp.StatusCode, b, want)
				}
			}
		})
	}
}
