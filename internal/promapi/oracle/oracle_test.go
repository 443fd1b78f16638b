package oracle

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/route"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/scrape"
	"github.com/prometheus/prometheus/tsdb"
	v1 "github.com/prometheus/prometheus/web/api/v1"
	"go.uber.org/goleak"

	"github.com/wirehouse/wirehouse/internal/promapi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is the first sample's time: Unix 1795428000.
var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// unix is t0+d in Unix seconds, as the API's time parameters take it.
func unix(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }

// openDB opens a TSDB in a temporary directory holding the corpus, every
// 15 s from t0 to t0+10m (41 samples a series):
//
//	up{job="api",instance="a"} 1, up{job="api",instance="b"} 0, up{job="db",instance="c"} 1
//	http_requests_total{job="api",code="200",method="GET"} a counter rising by 30 a sample
//	http_requests_total{job="api",code="500",method="POST"} a counter that resets every 25 samples
//	temperature_celsius{room="lab"} a gauge, stale (a stale marker) from t0+7m30s
//	latency_seconds{job="api"} a native histogram counter
//	{__name__="process.cpu.time","service.name"="api"} a name and a label outside the legacy charset
//	two exemplars on the 200s counter, at its 21st and 31st samples
//
// It returns the TSDB and the registry its metrics are in.
func openDB(t *testing.T) (*tsdb.DB, *prometheus.Registry) {
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
	ok200 := labels.FromStrings("__name__", "http_requests_total", "job", "api", "code", "200", "method", "GET")
	for i := range 41 {
		ts := t0.Add(time.Duration(i) * 15 * time.Second).UnixMilli()
		for _, s := range []struct {
			ls labels.Labels
			v  float64
		}{
			{labels.FromStrings("__name__", "up", "job", "api", "instance", "a"), 1},
			{labels.FromStrings("__name__", "up", "job", "api", "instance", "b"), 0},
			{labels.FromStrings("__name__", "up", "job", "db", "instance", "c"), 1},
			{ok200, float64(30 * i)},
			{labels.FromStrings("__name__", "http_requests_total", "job", "api", "code", "500", "method", "POST"), float64(i % 25)},
			{labels.FromStrings("__name__", "process.cpu.time", "service.name", "api"), 0.25 * float64(i)},
		} {
			ref, err := app.Append(0, s.ls, ts, s.v)
			if err != nil {
				t.Fatal(err)
			}
			if (i == 20 || i == 30) && labels.Equal(s.ls, ok200) {
				ex := exemplar.Exemplar{Labels: labels.FromStrings("trace_id", "4bf92f3577b34da6a3ce929d0e0e47"+strconv.Itoa(i)),
					Value: 0.125 * float64(i), Ts: ts - 500, HasTs: true}
				if _, err := app.AppendExemplar(ref, s.ls, ex); err != nil {
					t.Fatal(err)
				}
			}
		}
		switch temp := labels.FromStrings("__name__", "temperature_celsius", "room", "lab"); {
		case i < 30:
			_, err = app.Append(0, temp, ts, 20+0.5*float64(i%7))
		case i == 30:
			_, err = app.Append(0, temp, ts, math.Float64frombits(value.StaleNaN))
		}
		if err != nil {
			t.Fatal(err)
		}
		n := int64(i + 1)
		h := &histogram.Histogram{Count: uint64(4 * n), Sum: 2.5 * float64(n), ZeroThreshold: 0.001, Schema: 0,
			PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []int64{2 * n, 0}}
		if _, err := app.AppendHistogram(0, labels.FromStrings("__name__", "latency_seconds", "job", "api"), ts, h, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return db, reg
}

// buildInfo is what both APIs report at /api/v1/status/buildinfo.
var buildInfo = v1.PrometheusVersion{Version: promapi.PrometheusVersion, Revision: "oracle", BuildUser: "wirehouse", GoVersion: runtime.Version()}

// ours serves promapi over db: exemplars, TSDB status and, with
// snapDir not empty, the admin endpoints.
func ours(t *testing.T, db *tsdb.DB, reg prometheus.Gatherer, snapDir string, rr *ruleFixture) *httptest.Server {
	t.Helper()
	cfg := promapi.DefaultConfig()
	cfg.Revision, cfg.Exemplars, cfg.Head, cfg.Gatherer = buildInfo.Revision, db, headStats{db.Head()}, reg
	if snapDir != "" {
		cfg.Admin, cfg.SnapshotDir = db, snapDir
	}
	if rr != nil {
		cfg.Rules = func(string) promapi.RulesSource { return rr }
		cfg.Alertmanagers = rr
	}
	a, err := promapi.New(cfg, db)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// theirs serves Prometheus' web/api/v1 over db, as a Prometheus server
// with no scrape configs, rule files or Alertmanagers would: with an
// engine set as promapi sets its own (promapi.New), and the admin
// endpoints if admin (snapshots under dir/snapshots).
func theirs(t *testing.T, db *tsdb.DB, reg prometheus.Gatherer, admin bool, dir string, rr *ruleFixture) *httptest.Server {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	p := parser.NewParser(parser.Options{})
	engine := promql.NewEngine(promql.EngineOpts{
		Logger:                   logger,
		MaxSamples:               50_000_000,
		Timeout:                  2 * time.Minute,
		LookbackDelta:            5 * time.Minute,
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
		Parser:                   p,
		NoStepSubqueryIntervalFn: func(int64) int64 { return time.Minute.Milliseconds() },
	})
	bi := buildInfo
	var rulesR v1.RulesRetriever = noRules{}
	var ams v1.AlertmanagerRetriever = noAlertmanagers{}
	if rr != nil {
		rulesR, ams = rr, rr
	}
	api := v1.NewAPI(
		engine,
		db,  // storage.SampleAndChunkQueryable
		nil, // appendable: no remote write or OTLP receiver
		db,  // exemplar queryable
		func(context.Context) v1.ScrapePoolsRetriever { return noScrape{} },
		func(context.Context) v1.TargetRetriever { return noScrape{} },
		func(context.Context) v1.AlertmanagerRetriever { return ams },
		func() config.Config { return config.DefaultConfig },
		map[string]string{},   // flags
		v1.GlobalURLOptions{}, // only for target URLs
		func(f http.HandlerFunc) http.HandlerFunc { return f }, // always ready
		adminStats{db},
		dir,
		admin,
		false, // search API
		0,     // search limit
		logger,
		func(context.Context) v1.RulesRetriever { return rulesR },
		0, 0, 0, // remote read limits
		false, // not an agent
		nil,   // no CORS origin
		func() (v1.RuntimeInfo, error) { return v1.RuntimeInfo{}, nil },
		&bi,
		nil, nil, // notifications
		reg,
		nil,   // registerer: remote read metrics unregistered
		nil,   // stats renderer: the default
		false, // remote write receiver
		nil,
		false, false, false, // OTLP receiver
		5*time.Minute,
		false, false, // type and unit labels, metadata appending
		nil, // error code override
		nil, // feature registry
		v1.OpenAPIOptions{},
		p,
		false, // query cost
		2*time.Minute,
	)
	r := route.New()
	api.Register(r.WithPrefix("/api/v1"))
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

// headStats is promapi's HeadStatser over a whole head, whose chunks the
// prometheus_tsdb_head_chunks gauge counts (as Prometheus reads them).
type headStats struct{ h *tsdb.Head }

func (s headStats) HeadStats(_ context.Context, statsByLabelName string, limit int) (*tsdb.Stats, int64, error) {
	return s.h.Stats(statsByLabelName, limit), -1, nil
}

// adminStats is web/api/v1's TSDBAdminStats over a TSDB, as Prometheus'
// own readyStorage gives it.
type adminStats struct{ *tsdb.DB }

func (a adminStats) Stats(statsByLabelName string, limit int) (*tsdb.Stats, error) {
	return a.Head().Stats(statsByLabelName, limit), nil
}

func (a adminStats) WALReplayStatus() (tsdb.WALReplayStatus, error) {
	return tsdb.WALReplayStatus{}, nil
}

func (a adminStats) BlockMetas() ([]tsdb.BlockMeta, error) { return a.DB.BlockMetas(), nil }

// noScrape is a scrape manager with no scrape pools, the one of a
// Prometheus without scrape configs.
type noScrape struct{}

func (noScrape) ScrapePools() []string                                 { return nil }
func (noScrape) TargetsActive() map[string][]*scrape.Target            { return map[string][]*scrape.Target{} }
func (noScrape) TargetsDropped() map[string][]*scrape.Target           { return map[string][]*scrape.Target{} }
func (noScrape) TargetsDroppedCounts() map[string]int                  { return map[string]int{} }
func (noScrape) ScrapePoolConfig(string) (*config.ScrapeConfig, error) { return nil, nil }

// noAlertmanagers is a notifier with no Alertmanagers.
type noAlertmanagers struct{}

func (noAlertmanagers) Alertmanagers() []*url.URL        { return nil }
func (noAlertmanagers) DroppedAlertmanagers() []*url.URL { return nil }

// noRules is a rule manager with no rule files.
type noRules struct{}

func (noRules) RuleGroups() []*rules.Group           { return nil }
func (noRules) AlertingRules() []*rules.AlertingRule { return nil }

// call is one request of the corpus.
type call struct {
	name   string
	method string // GET if empty; POST sends params as a form
	path   string // under /api/v1
	params url.Values
	status int // the status both must answer
	// differs, if set, brings Prometheus' answer to what promapi answers
	// on purpose; its comment says why.
	differs func(status *int, body any)
}

// q builds parameters from name, value pairs.
func q(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// do sends c to srv and returns the status and the decoded body (nil for
// none).
func do(t *testing.T, srv *httptest.Server, c call) (int, any) {
	t.Helper()
	u := srv.URL + "/api/v1" + c.path
	var (
		resp *http.Response
		err  error
	)
	if c.method == http.MethodPost {
		resp, err = srv.Client().PostForm(u, c.params)
	} else {
		if len(c.params) > 0 {
			u += "?" + c.params.Encode()
		}
		resp, err = srv.Client().Get(u)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return resp.StatusCode, nil
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q (HTTP %d %s)", ct, resp.StatusCode, b)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var body any
	if err := d.Decode(&body); err != nil {
		t.Fatalf("HTTP %d, body not JSON: %v: %s", resp.StatusCode, err, b)
	}
	return resp.StatusCode, body
}

// field returns the value at path in a decoded JSON object, or nil.
func field(body any, path ...string) any {
	for _, p := range path {
		m, ok := body.(map[string]any)
		if !ok {
			return nil
		}
		body = m[p]
	}
	return body
}

// normalize replaces what differs between any two runs: the timings of
// query statistics (the keys stay, so the structure is compared) and a
// snapshot's name (the time and a random number).
func normalize(body any) {
	if timings, ok := field(body, "data", "stats", "timings").(map[string]any); ok {
		for k := range timings {
			timings[k] = "<timing>"
		}
	}
	if data, ok := field(body, "data").(map[string]any); ok {
		if _, ok := data["name"].(string); ok && len(data) == 1 {
			data["name"] = "<snapshot>"
		}
	}
}

// compare sends c to both servers and checks they answer alike, and with
// the status the case expects.
func compare(t *testing.T, ours, theirs *httptest.Server, c call) {
	t.Helper()
	gotCode, got := do(t, ours, c)
	wantCode, want := do(t, theirs, c)
	normalize(got)
	normalize(want)
	if c.differs != nil {
		c.differs(&wantCode, want)
	}
	if gotCode != wantCode || !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("%s %s %s:\n ours       HTTP %d %s\n Prometheus HTTP %d %s", c.method, c.path, c.params.Encode(), gotCode, g, wantCode, w)
		return
	}
	if gotCode != c.status {
		b, _ := json.Marshal(got)
		t.Errorf("both answer HTTP %d %s, the case expects %d", gotCode, b, c.status)
	}
	if gotCode == http.StatusNoContent {
		return
	}
	// Every answer with a body is an envelope, so that an endpoint
	// neither serves (both 404) cannot pass.
	if s := field(got, "status"); s != "success" && s != "error" {
		b, _ := json.Marshal(got)
		t.Errorf("not an API envelope: %s", b)
	}
}

// TestOracle sends the corpus to promapi and to Prometheus' web/api/v1,
// each over the same TSDB. What promapi does differently on purpose (the
// package documentation lists it) is left out of the corpus, but for the
// disabled admin endpoints' status (see unavailable); promapi's own tests
// check those answers.
func TestOracle(t *testing.T) {
	db, reg := openDB(t)
	o, p := ours(t, db, reg, "", nil), theirs(t, db, reg, false, "", nil)
	defer o.Client().CloseIdleConnections()
	defer p.Client().CloseIdleConnections()
	at := unix(10 * time.Minute)
	for _, c := range corpus(at) {
		t.Run(c.name, func(t *testing.T) { compare(t, o, p, c) })
	}
}

// corpus is the requests TestOracle sends; at is the time of the last
// samples.
func corpus(at string) []call {
	start, mid := unix(0), unix(5*time.Minute)
	var cs []call
	add := func(name, path string, params url.Values, status int) {
		cs = append(cs, call{name: name, path: path, params: params, status: status})
	}

	// Instant queries: every result type, native histograms, staleness,
	// annotations, modifiers.
	for _, c := range []struct {
		name, query, time string
		status            int
	}{
		{"scalar", "1+1", at, 200},
		{"scalar/time", "time()", "1795428600.5", 200},
		{"scalar/+Inf", "1/0", at, 200},
		{"scalar/-Inf", "-1/0", at, 200},
		{"scalar/NaN", "0/0", at, 200},
		{"scalar/large", "1e30", at, 200},
		{"scalar/small", "-1e-7", at, 200},
		{"scalar/negative-time", "time()", "-1.5", 200},
		{"scalar/epoch", "time()", "0", 200},
		{"string", `"hello"`, at, 200},
		{"string/escapes", `"a\"b<c>&\u00e9"`, at, 200},
		{"vector/large", "vector(1e30)", at, 200},
		{"vector/small", "vector(-1e-7)", at, 200},
		{"vector", "up", at, 200},
		{"vector/sum-rate", "sum by (job) (rate(http_requests_total[5m]))", at, 200},
		{"vector/counter-reset", `increase(http_requests_total{code="500"}[10m])`, at, 200},
		{"vector/topk", "topk(2, http_requests_total)", at, 200},
		{"vector/sort_desc", "sort_desc(up)", at, 200},
		{"vector/empty", "nonexistent_metric", at, 200},
		{"vector/utf8", `{"process.cpu.time"}`, at, 200},
		{"vector/utf8-label", `sum by ("service.name") ({"process.cpu.time"})`, at, 200},
		{"matrix", "up[1m]", at, 200},
		{"matrix/subquery-no-step", "max_over_time(http_requests_total[5m:])", at, 200},
		{"histogram", "latency_seconds", at, 200},
		{"histogram/quantile", "histogram_quantile(0.9, rate(latency_seconds[5m]))", at, 200},
		{"histogram/rate", "rate(latency_seconds[5m])", at, 200},
		{"histogram/matrix", "latency_seconds[1m]", at, 200},
		{"histogram/count", "histogram_count(latency_seconds)", at, 200},
		{"stale/before", "temperature_celsius", unix(7 * time.Minute), 200},
		{"stale/after", "temperature_celsius", unix(8 * time.Minute), 200},
		{"at-modifier", "up @ " + mid, at, 200},
		{"negative-offset", "up offset -1m", mid, 200},
		{"info/not-a-counter", "rate(temperature_celsius[5m])", unix(7 * time.Minute), 200},
		{"warning/no-le", "histogram_quantile(0.9, up)", at, 200},
		{"time/rfc3339", "up", "2026-11-23T10:10:00Z", 200},
		{"time/rfc3339-fraction", "time()", "2026-11-23T10:10:00.5Z", 200},
		{"time/rfc3339-offset", "time()", "2026-11-23T11:10:00+01:00", 200},
		{"time/float-fraction", "time()", "1795428600.125", 200},
		{"time/float-millis", "time()", "1795428600.123", 200},
		{"error/parse", "sum((", at, 400},
		{"error/unknown-function", "foo(up)", at, 400},
		{"error/missing-query", "", at, 400},
		{"error/bad-regexp", `label_replace(up, "x", "$1", "instance", "(")`, at, 422},
		{"error/vector-matching", `up + on(job) http_requests_total`, at, 422},
		{"error/bad-time", "up", "yesterday", 400},
	} {
		add("query/"+c.name, "/query", q("query", c.query, "time", c.time), c.status)
	}
	for _, c := range []struct {
		name   string
		params url.Values
		status int
	}{
		{"limit/cut", q("query", "up", "time", at, "limit", "1"), 200},
		{"limit/zero", q("query", "up", "time", at, "limit", "0"), 200},
		{"limit/above", q("query", "up", "time", at, "limit", "5"), 200},
		{"limit/negative", q("query", "up", "time", at, "limit", "-1"), 400},
		{"limit/not-a-number", q("query", "up", "time", at, "limit", "x"), 400},
		{"timeout/ok", q("query", "up", "time", at, "timeout", "1m"), 200},
		{"timeout/seconds", q("query", "up", "time", at, "timeout", "30.5"), 200},
		{"timeout/bad", q("query", "up", "time", at, "timeout", "soon"), 400},
		{"timeout/zero", q("query", "up", "time", at, "timeout", "0"), 400},
		{"timeout/negative", q("query", "up", "time", at, "timeout", "-1s"), 400},
		{"timeout/overflow", q("query", "up", "time", at, "timeout", "1e300"), 400},
		{"lookback/10m", q("query", `up{instance="a"}`, "time", unix(17*time.Minute), "lookback_delta", "10m"), 200},
		{"lookback/default", q("query", `up{instance="a"}`, "time", unix(17*time.Minute)), 200},
		{"lookback/bad", q("query", "up", "time", at, "lookback_delta", "bogus"), 400},
		{"stats/true", q("query", "sum(up)", "time", at, "stats", "true"), 200},
		{"stats/all", q("query", "sum(rate(http_requests_total[1m]))", "time", at, "stats", "all"), 200},
		{"stats/other", q("query", "sum(up)", "time", at, "stats", "yes"), 200},
		{"errors-in-order/limit-and-time", q("query", "up", "time", "x", "limit", "x"), 400},
		{"errors-in-order/time-and-timeout", q("query", "up", "time", "x", "timeout", "x"), 400},
		{"errors-in-order/timeout-and-lookback", q("query", "up", "timeout", "x", "lookback_delta", "x"), 400},
		{"errors-in-order/lookback-and-query", q("query", "sum((", "lookback_delta", "x"), 400},
	} {
		add("query/"+c.name, "/query", c.params, c.status)
	}
	cs = append(cs, call{name: "query/post", method: http.MethodPost, path: "/query",
		params: q("query", "sum(up)", "time", at), status: 200})

	// Range queries.
	for _, c := range []struct {
		name   string
		params url.Values
		status int
	}{
		{"vector", q("query", "up", "start", start, "end", at, "step", "60"), 200},
		{"rate", q("query", "rate(http_requests_total[1m])", "start", start, "end", at, "step", "1m"), 200},
		{"scalar", q("query", "time()", "start", start, "end", at, "step", "150"), 200},
		{"histogram", q("query", "latency_seconds", "start", start, "end", at, "step", "120"), 200},
		{"histogram/quantile", q("query", "histogram_quantile(0.5, rate(latency_seconds[2m]))", "start", mid, "end", at, "step", "60"), 200},
		{"stale", q("query", "temperature_celsius", "start", start, "end", at, "step", "60"), 200},
		{"start-is-end", q("query", "up", "start", at, "end", at, "step", "15"), 200},
		{"rfc3339", q("query", "sum(up)", "start", "2026-11-23T10:00:00Z", "end", "2026-11-23T10:10:00.5Z", "step", "2m"), 200},
		{"fractional-step", q("query", "sum(up)", "start", mid, "end", at, "step", "37.5"), 200},
		{"duration-step", q("query", "sum(up)", "start", start, "end", at, "step", "1m30s"), 200},
		{"fractional-times", q("query", "time()", "start", "1795428000.25", "end", "1795428300.75", "step", "60"), 200},
		{"empty", q("query", "nonexistent_metric", "start", start, "end", at, "step", "60"), 200},
		{"limit/cut", q("query", "up", "start", start, "end", at, "step", "60", "limit", "2"), 200},
		{"limit/bad", q("query", "up", "start", start, "end", at, "step", "60", "limit", "-2"), 400},
		{"stats/all", q("query", "sum(up)", "start", mid, "end", at, "step", "60", "stats", "all"), 200},
		{"stats/true", q("query", "sum(up)", "start", mid, "end", at, "step", "60", "stats", "true"), 200},
		{"points/11000", q("query", "1", "start", "0", "end", "11000", "step", "1"), 200},
		{"error/too-many-points", q("query", "up", "start", "0", "end", "11001", "step", "1"), 400},
		{"error/too-many-points-wide", q("query", "up", "start", "0", "end", "100000", "step", "1"), 400},
		{"error/end-before-start", q("query", "up", "start", at, "end", start, "step", "60"), 400},
		{"error/step-zero", q("query", "up", "start", start, "end", at, "step", "0"), 400},
		{"error/step-negative", q("query", "up", "start", start, "end", at, "step", "-15"), 400},
		{"error/step-bad", q("query", "up", "start", start, "end", at, "step", "often"), 400},
		{"error/step-missing", q("query", "up", "start", start, "end", at), 400},
		{"error/start-missing", q("query", "up", "end", at, "step", "60"), 400},
		{"error/end-missing", q("query", "up", "start", start, "step", "60"), 400},
		{"error/start-bad", q("query", "up", "start", "dawn", "end", at, "step", "60"), 400},
		{"error/end-bad", q("query", "up", "start", start, "end", "dusk", "step", "60"), 400},
		{"error/string", q("query", `"hello"`, "start", start, "end", at, "step", "60"), 400},
		{"error/matrix", q("query", "up[1m]", "start", start, "end", at, "step", "60"), 400},
		{"error/parse", q("query", "rate(up[5m]", "start", start, "end", at, "step", "60"), 400},
		{"error/missing-query", q("start", start, "end", at, "step", "60"), 400},
		{"error/timeout", q("query", "up", "start", start, "end", at, "step", "60", "timeout", "x"), 400},
		{"error/lookback", q("query", "up", "start", start, "end", at, "step", "60", "lookback_delta", "x"), 400},
		{"errors-in-order/limit-and-start", q("query", "up", "start", "x", "end", at, "step", "60", "limit", "x"), 400},
		{"errors-in-order/end-before-start-and-step", q("query", "up", "start", at, "end", start, "step", "x"), 400},
		{"errors-in-order/points-and-timeout", q("query", "up", "start", "0", "end", "100000", "step", "1", "timeout", "x"), 400},
	} {
		add("query_range/"+c.name, "/query_range", c.params, c.status)
	}
	cs = append(cs, call{name: "query_range/post", method: http.MethodPost, path: "/query_range",
		params: q("query", "sum(up)", "start", start, "end", at, "step", "60"), status: 200})

	// Series.
	for _, c := range []struct {
		name   string
		params url.Values
		status int
	}{
		{"one", q("match[]", "up"), 200},
		{"two", q("match[]", "up", "match[]", `http_requests_total{code="200"}`), 200},
		{"overlapping", q("match[]", "up", "match[]", `{job="api"}`), 200},
		{"utf8", q("match[]", `{"service.name"="api"}`), 200},
		{"window", q("match[]", "up", "start", start, "end", mid), 200},
		{"window/before-data", q("match[]", "up", "start", "1000", "end", "2000"), 200},
		{"window/inverted", q("match[]", "up", "start", at, "end", start), 200},
		{"window/rfc3339", q("match[]", "up", "start", "2026-11-23T10:00:00Z", "end", "2026-11-23T10:10:00Z"), 200},
		{"limit/cut", q("match[]", "up", "limit", "2"), 200},
		{"limit/exact", q("match[]", "up", "limit", "3"), 200},
		{"limit/two-sets", q("match[]", "up", "match[]", "latency_seconds", "limit", "2"), 200},
		{"limit/bad", q("match[]", "up", "limit", "-1"), 400},
		{"error/no-match", nil, 400},
		{"error/empty-matcher", q("match[]", `{job=~".*"}`), 400},
		{"error/parse", q("match[]", "up{"), 400},
		{"error/start", q("match[]", "up", "start", "x"), 400},
		{"error/end", q("match[]", "up", "end", "x"), 400},
		{"errors-in-order/parse-and-limit", q("match[]", "up{", "limit", "x"), 400},
		{"errors-in-order/parse-and-start", q("match[]", "up{", "start", "x"), 400},
		{"errors-in-order/start-and-limit", q("match[]", "up", "start", "x", "limit", "x"), 400},
	} {
		add("series/"+c.name, "/series", c.params, c.status)
	}
	cs = append(cs, call{name: "series/post", method: http.MethodPost, path: "/series",
		params: q("match[]", "up", "match[]", "latency_seconds", "start", start, "end", at), status: 200})

	// Label names and values.
	for _, c := range []struct {
		name, path string
		params     url.Values
		status     int
	}{
		{"labels/all", "/labels", nil, 200},
		{"labels/match", "/labels", q("match[]", "up"), 200},
		{"labels/two-matches", "/labels", q("match[]", "up", "match[]", "latency_seconds"), 200},
		{"labels/utf8", "/labels", q("match[]", `{"process.cpu.time"}`), 200},
		{"labels/window", "/labels", q("start", start, "end", mid), 200},
		{"labels/window/before-data", "/labels", q("start", "1000", "end", "2000"), 200},
		{"labels/window/inverted", "/labels", q("start", at, "end", start), 200},
		{"labels/limit/cut", "/labels", q("limit", "2"), 200},
		{"labels/limit/two-sets", "/labels", q("match[]", "up", "match[]", "latency_seconds", "limit", "2"), 200},
		{"labels/limit/bad", "/labels", q("limit", "x"), 400},
		{"labels/error/parse", "/labels", q("match[]", "up{"), 400},
		{"labels/error/empty-matcher", "/labels", q("match[]", `{job=""}`), 400},
		{"labels/error/start", "/labels", q("start", "x"), 400},
		{"labels/errors-in-order/parse-and-limit", "/labels", q("match[]", "up{", "limit", "x"), 400},
		{"labels/errors-in-order/parse-and-end", "/labels", q("match[]", "up{", "end", "x"), 400},
		{"values/job", "/label/job/values", nil, 200},
		{"values/name", "/label/__name__/values", nil, 200},
		{"values/match", "/label/instance/values", q("match[]", `up{job="api"}`), 200},
		{"values/two-matches", "/label/instance/values", q("match[]", `up{job="api"}`, "match[]", `up{job="db"}`), 200},
		{"values/unknown-label", "/label/nothing/values", nil, 200},
		{"values/escaped-name", "/label/U__service_2e_name/values", nil, 200},
		{"values/window", "/label/job/values", q("start", start, "end", mid), 200},
		{"values/window/before-data", "/label/job/values", q("start", "1000", "end", "2000"), 200},
		{"values/limit/cut", "/label/__name__/values", q("limit", "2"), 200},
		{"values/limit/two-sets", "/label/__name__/values", q("match[]", "up", "match[]", "latency_seconds", "limit", "1"), 200},
		{"values/limit/bad", "/label/job/values", q("limit", "-5"), 400},
		{"values/error/parse", "/label/job/values", q("match[]", "up{"), 400},
		{"values/error/bad-name", "/label/%ff/values", nil, 400},
		{"values/error/end", "/label/job/values", q("end", "x"), 400},
		{"values/errors-in-order/name-and-limit", "/label/%ff/values", q("limit", "x"), 400},
		{"values/errors-in-order/parse-and-limit", "/label/job/values", q("match[]", "up{", "limit", "x"), 400},
	} {
		add(c.name, c.path, c.params, c.status)
	}
	cs = append(cs, call{name: "labels/post", method: http.MethodPost, path: "/labels",
		params: q("match[]", "up", "start", start, "end", at), status: 200})

	// Formatting, exemplars, status, and the lists of what wirehouse does
	// not do (rules, alerts, targets, Alertmanagers).
	for _, c := range []struct {
		name, path string
		params     url.Values
		status     int
	}{
		{"format_query", "/format_query", q("query", `sum by(job)(rate(http_requests_total{code="200"}[5m]))/ignoring(x)up`), 200},
		{"format_query/error", "/format_query", q("query", "sum(("), 400},
		{"format_query/missing", "/format_query", nil, 400},
		{"query_exemplars", "/query_exemplars", q("query", "http_requests_total"), 200},
		{"query_exemplars/expression", "/query_exemplars", q("query", `sum(rate(http_requests_total{code="200"}[5m])) / sum(up)`, "start", start, "end", at), 200},
		{"query_exemplars/window", "/query_exemplars", q("query", "http_requests_total", "start", mid, "end", at), 200},
		{"query_exemplars/none", "/query_exemplars", q("query", "up"), 200},
		{"query_exemplars/no-selector", "/query_exemplars", q("query", "1+1"), 204},
		{"query_exemplars/error/parse", "/query_exemplars", q("query", "rate("), 400},
		{"query_exemplars/error/end-before-start", "/query_exemplars", q("query", "up", "start", at, "end", start), 400},
		{"query_exemplars/error/start", "/query_exemplars", q("query", "up", "start", "x"), 400},
		{"buildinfo", "/status/buildinfo", nil, 200},
		{"tsdb", "/status/tsdb", nil, 200},
		{"tsdb/limit", "/status/tsdb", q("limit", "2"), 200},
		{"tsdb/limit-zero", "/status/tsdb", q("limit", "0"), 400},
		{"tsdb/limit-bad", "/status/tsdb", q("limit", "x"), 400},
		{"tsdb/limit-too-big", "/status/tsdb", q("limit", "10001"), 400},
		{"metadata", "/metadata", nil, 200},
		{"metadata/metric", "/metadata", q("metric", "up", "limit", "1"), 200},
		{"metadata/limit-bad", "/metadata", q("limit", "x"), 400},
		{"metadata/limit-per-metric-bad", "/metadata", q("limit_per_metric", "1.5"), 400},
		{"rules", "/rules", nil, 200},
		{"rules/type", "/rules", q("type", "RECORD"), 200},
		{"rules/filters", "/rules", q("type", "alert", "exclude_alerts", "true", "match[]", "up", "rule_name[]", "x", "group_limit", "5"), 200},
		{"rules/type-bad", "/rules", q("type", "silence"), 400},
		{"rules/match-empty", "/rules", q("match[]", `{job=~".*"}`), 400},
		{"rules/match-parse", "/rules", q("match[]", "{"), 400},
		{"rules/exclude-alerts-bad", "/rules", q("exclude_alerts", "maybe"), 400},
		{"rules/group-limit-zero", "/rules", q("group_limit", "0"), 400},
		{"rules/group-limit-bad", "/rules", q("group_limit", "ten"), 400},
		{"rules/token-without-limit", "/rules", q("group_next_token", "abc"), 400},
		{"rules/token-unknown", "/rules", q("group_limit", "5", "group_next_token", "abc"), 400},
		{"alerts", "/alerts", nil, 200},
		{"targets", "/targets", nil, 200},
		{"targets/metadata", "/targets/metadata", nil, 200},
		{"targets/metadata/limit-bad", "/targets/metadata", q("limit", "x"), 400},
		{"targets/metadata/match-bad", "/targets/metadata", q("match_target", "{"), 400},
		{"alertmanagers", "/alertmanagers", nil, 200},
	} {
		add(c.name, c.path, c.params, c.status)
	}

	// Without Config.Admin the admin endpoints refuse.
	for _, path := range []string{"/admin/tsdb/delete_series", "/admin/tsdb/clean_tombstones", "/admin/tsdb/snapshot"} {
		cs = append(cs, call{name: "admin-disabled" + strings.TrimPrefix(path, "/admin/tsdb"), method: http.MethodPost, path: path,
			params: q("match[]", "up"), status: http.StatusServiceUnavailable, differs: unavailable})
	}
	return cs
}

// unavailable: Prometheus answers errorType "unavailable" (disabled admin
// endpoints) with 500, as its error-to-status table has no entry for it;
// promapi answers 503, which is what the type says, and what clients and
// internal/serve's tests expect of a disabled endpoint.
func unavailable(status *int, body any) {
	if *status == http.StatusInternalServerError && field(body, "errorType") == "unavailable" {
		*status = http.StatusServiceUnavailable
	}
}

// TestOracleAdmin runs the admin endpoints on two TSDBs with the same
// corpus, one behind each API (they change what they act on): the same
// deletions leave the same samples.
func TestOracleAdmin(t *testing.T) {
	ourDB, ourReg := openDB(t)
	theirDB, theirReg := openDB(t)
	dir := t.TempDir()
	o := ours(t, ourDB, ourReg, filepath.Join(dir, "ours"), nil)
	p := theirs(t, theirDB, theirReg, true, filepath.Join(dir, "theirs"), nil)
	defer o.Client().CloseIdleConnections()
	defer p.Client().CloseIdleConnections()
	at := unix(10 * time.Minute)
	count := call{path: "/query", params: q("query", "count_over_time({__name__=~\"up|http_requests_total\"}[20m])", "time", at), status: 200}
	for _, c := range []call{
		{name: "before", path: count.path, params: count.params, status: 200},
		{name: "delete/no-match", method: http.MethodPost, path: "/admin/tsdb/delete_series", status: 400},
		{name: "delete/parse", method: http.MethodPost, path: "/admin/tsdb/delete_series", params: q("match[]", "up{"), status: 400},
		{name: "delete/start", method: http.MethodPost, path: "/admin/tsdb/delete_series", params: q("match[]", "up", "start", "x"), status: 400},
		{name: "delete/end", method: http.MethodPost, path: "/admin/tsdb/delete_series", params: q("match[]", "up", "end", "x"), status: 400},
		{name: "delete/window", method: http.MethodPost, path: "/admin/tsdb/delete_series",
			params: q("match[]", `up{instance="a"}`, "start", unix(5*time.Minute), "end", at), status: 204},
		{name: "delete/all-time", method: http.MethodPost, path: "/admin/tsdb/delete_series",
			params: q("match[]", `http_requests_total{code="500"}`, "match[]", `up{job="db"}`), status: 204},
		{name: "after-delete", path: count.path, params: count.params, status: 200},
		{name: "clean_tombstones", method: http.MethodPost, path: "/admin/tsdb/clean_tombstones", status: 204},
		{name: "snapshot", method: http.MethodPost, path: "/admin/tsdb/snapshot", status: 200},
		{name: "snapshot/skip-head", method: http.MethodPost, path: "/admin/tsdb/snapshot", params: q("skip_head", "true"), status: 200},
		{name: "snapshot/skip-head-bad", method: http.MethodPost, path: "/admin/tsdb/snapshot", params: q("skip_head", "maybe"), status: 400},
		{name: "after-clean", path: count.path, params: count.params, status: 200},
	} {
		t.Run(c.name, func(t *testing.T) { compare(t, o, p, c) })
	}
}
