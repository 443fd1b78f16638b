package lokiapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/lokiapi"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// sentLog is a log record as sent.
type sentLog struct {
	t        int64
	service  string
	line     string
	severity string
}

// lokiServer writes bodies (tenant "default") to a lake and serves the
// API over it; it returns the base URL and the records sent.
func lokiServer(t *testing.T, bodies ...[]byte) (string, []sentLog) {
	t.Helper()
	base, _, sent := lokiServerAt(t, t.TempDir(), bodies...)
	return base, sent
}

// lokiServerDir is lokiServer that also returns the lake's directory.
func lokiServerDir(t *testing.T, bodies ...[]byte) (string, string) {
	t.Helper()
	dir := t.TempDir()
	base, _, _ := lokiServerAt(t, dir, bodies...)
	return base, dir
}

func lokiServerAt(t *testing.T, dir string, bodies ...[]byte) (string, string, []sentLog) {
	t.Helper()
	w := newLakeWriter(t, dir)
	var sent []sentLog
	for _, b := range bodies {
		if _, err := w.Append(otlpwire.SignalLogs, "default", b); err != nil {
			t.Fatal(err)
		}
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		for _, rl := range req.Logs().ResourceLogs().All() {
			svc, _ := rl.Resource().Attributes().Get("service.name")
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					ts := int64(lr.Timestamp())
					if ts == 0 {
						ts = int64(lr.ObservedTimestamp())
					}
					sent = append(sent, sentLog{ts, svc.Str(), lr.Body().AsString(), lr.SeverityText()})
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := lokiapi.DefaultConfig()
	cfg.Reader, cfg.Tenant, cfg.OrgIDHeader, cfg.MaxLines = newReader(t, dir, nil), "default", true, 5000
	return serveAPI(t, cfg), dir, sent
}

// newLakeWriter returns a lake writer of the defaults into dir.
func newLakeWriter(t testing.TB, dir string) *lake.Writer {
	t.Helper()
	wcfg := lake.DefaultWriterConfig()
	wcfg.Dir = dir
	w, err := lake.NewWriter(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// newReader opens a lakeread.Reader on the lake in dir, with set (if
// not nil) changing its config; it is closed when the test ends.
func newReader(t testing.TB, dir string, set func(*lakeread.Config)) *lakeread.Reader {
	t.Helper()
	rcfg := lakeread.DefaultConfig()
	rcfg.Bucket = bucket.NewLocal(dir)
	if set != nil {
		set(&rcfg)
	}
	r, err := lakeread.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// serveAPI serves the Loki API of cfg on a test server until the test
// ends and returns its URL.
func serveAPI(t testing.TB, cfg lokiapi.Config) string {
	t.Helper()
	h, err := lokiapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// get GETs path with params and decodes the JSON answer into v; it
// returns the status and the body.
func get(t *testing.T, base, path string, params url.Values, v any) (int, string) {
	t.Helper()
	resp, err := http.Get(base + path + "?" + params.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", path, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

// streamsResponse is Loki's query response with streams.
type streamsResponse struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Stream map[string]string `json:"stream"`
			Values [][2]string       `json:"values"`
		} `json:"result"`
		Stats struct {
			Summary map[string]float64 `json:"summary"`
		} `json:"stats"`
	} `json:"data"`
}

// matrixResponse is Loki's query response with a matrix.
type matrixResponse struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	} `json:"data"`
}

func window(from, to time.Time) url.Values {
	return url.Values{"start": {strconv.FormatInt(from.UnixNano(), 10)}, "end": {strconv.FormatInt(to.UnixNano(), 10)}}
}

// TestLogQueries: log queries give the lines of the selected services that
// pass the line filters, newest first (or oldest first) up to the limit,
// in Loki's streams shape, and equal what was sent.
func TestLogQueries(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	var bodies [][]byte
	for i := range 4 {
		bodies = append(bodies, synth.Logs(synth.Config{Seed: int64(i), Resources: 3, ScopesPerResource: 1, TotalRecords: 400, Start: start.Add(time.Duration(i) * 15 * time.Minute)}))
	}
	base, sent := lokiServer(t, bodies...)
	var in []sentLog // the records of the window
	for _, s := range sent {
		if s.t >= start.UnixNano() && s.t <= start.Add(2*time.Hour).UnixNano() {
			in = append(in, s)
		}
	}
	svc := in[0].service
	word := strings.Fields(in[0].line)[0]
	params := window(start, start.Add(2*time.Hour))
	for _, c := range []struct {
		query   string
		limit   int
		forward bool
		keep    func(sentLog) bool
	}{
		{`{service_name="` + svc + `"}`, 5000, false, func(s sentLog) bool { return s.service == svc }},
		{`{service_name="` + svc + `"} |= "` + word + `"`, 5000, true, func(s sentLog) bool { return s.service == svc && strings.Contains(s.line, word) }},
		{`{service_name=~".+"} != "` + word + `"`, 7, false, func(s sentLog) bool { return !strings.Contains(s.line, word) }},
		{`{service_name!="` + svc + `"} |~ "(?i)` + strings.ToUpper(word) + `"`, 5000, false, func(s sentLog) bool {
			return s.service != svc && strings.Contains(strings.ToLower(s.line), strings.ToLower(word))
		}},
	} {
		var want []sentLog
		for _, s := range sent {
			if c.keep(s) && s.t >= start.UnixNano() && s.t <= start.Add(2*time.Hour).UnixNano() {
				want = append(want, s)
			}
		}
		slices.SortStableFunc(want, func(a, b sentLog) int {
			if c.forward {
				return int(a.t - b.t)
			}
			return int(b.t - a.t)
		})
		want = want[:min(len(want), c.limit)]
		p := url.Values{"query": {c.query}, "limit": {strconv.Itoa(c.limit)}}
		for k, v := range params {
			p[k] = v
		}
		if c.forward {
			p.Set("direction", "forward")
		}
		var res streamsResponse
		if code, body := get(t, base, "/loki/api/v1/query_range", p, &res); code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.query, code, body)
		}
		if res.Status != "success" || res.Data.ResultType != "streams" {
			t.Fatalf("%s: %+v", c.query, res)
		}
		var got []sentLog
		for _, st := range res.Data.Result {
			if st.Stream["service_name"] == "" {
				t.Fatalf("%s: a stream without service_name: %v", c.query, st.Stream)
			}
			for _, v := range st.Values {
				ts, _ := strconv.ParseInt(v[0], 10, 64)
				got = append(got, sentLog{t: ts, service: st.Stream["service_name"], line: v[1]})
			}
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("%s: %d lines, want %d", c.query, len(got), len(want))
		}
		key := func(s sentLog) string { return fmt.Sprint(s.t, s.service, s.line) }
		gk, wk := make([]string, len(got)), make([]string, len(want))
		for i := range got {
			gk[i], wk[i] = key(got[i]), key(want[i])
		}
		slices.Sort(gk)
		slices.Sort(wk)
		if c.limit >= 5000 && !slices.Equal(gk, wk) {
			t.Errorf("%s: lines differ", c.query)
		}
		if c.limit < 5000 { // the newest 7: compare times only (ties may differ)
			for i := range got {
				if !slices.ContainsFunc(want, func(w sentLog) bool { return w.t == got[i].t }) {
					t.Errorf("%s: line at %d is not among the newest", c.query, got[i].t)
				}
			}
		}
		if res.Data.Stats.Summary["totalLinesProcessed"] == 0 {
			t.Errorf("%s: no stats", c.query)
		}
	}
}

// TestMetricQueries: count_over_time, rate and bytes_over_time, summed by a
// label, per step, equal counts made from what was sent.
func TestMetricQueries(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	var bodies [][]byte
	for i := range 6 {
		bodies = append(bodies, synth.Logs(synth.Config{Seed: int64(i + 10), Resources: 2, ScopesPerResource: 1, TotalRecords: 300, Start: start.Add(time.Duration(i) * 7 * time.Minute)}))
	}
	base, sent := lokiServer(t, bodies...)
	svc := sent[0].service
	from, to := start.Add(5*time.Minute), start.Add(50*time.Minute)
	step := time.Minute
	for _, c := range []struct {
		query string
		value func(s sentLog) float64
		group func(s sentLog) string
		rate  bool
	}{
		{`sum by (severity_text) (count_over_time({service_name="` + svc + `"}[1m]))`, func(sentLog) float64 { return 1 }, func(s sentLog) string { return s.severity }, false},
		{`sum(rate({service_name=~".+"}[5m]))`, func(sentLog) float64 { return 1 }, func(sentLog) string { return "" }, true},
		{`sum by (service_name) (bytes_over_time({service_name=~".+"}[2m]))`, func(s sentLog) float64 { return float64(len(s.line)) }, func(s sentLog) string { return s.service }, false},
	} {
		rng := map[bool]time.Duration{false: time.Minute}[false]
		switch {
		case strings.Contains(c.query, "[5m]"):
			rng = 5 * time.Minute
		case strings.Contains(c.query, "[2m]"):
			rng = 2 * time.Minute
		}
		want := map[string]map[int64]float64{}
		for ts := from; !ts.After(to); ts = ts.Add(step) {
			for _, s := range sent {
				if strings.Contains(c.query, svc) && s.service != svc {
					continue
				}
				if s.t > ts.Add(-rng).UnixNano() && s.t <= ts.UnixNano() {
					g := c.group(s)
					if want[g] == nil {
						want[g] = map[int64]float64{}
					}
					want[g][ts.UnixMilli()] += c.value(s)
				}
			}
		}
		p := window(from, to)
		p.Set("query", c.query)
		p.Set("step", "60")
		var res matrixResponse
		if code, body := get(t, base, "/loki/api/v1/query_range", p, &res); code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.query, code, body)
		}
		if res.Data.ResultType != "matrix" || len(res.Data.Result) != len(want) {
			t.Fatalf("%s: %s with %d series, want %d", c.query, res.Data.ResultType, len(res.Data.Result), len(want))
		}
		for _, s := range res.Data.Result {
			g := ""
			for _, v := range s.Metric {
				g = v
			}
			w := want[g]
			if len(s.Values) != len(w) {
				t.Errorf("%s, %v: %d points, want %d", c.query, s.Metric, len(s.Values), len(w))
			}
			for _, v := range s.Values {
				ms := int64(v[0].(float64) * 1000)
				got, _ := strconv.ParseFloat(v[1].(string), 64)
				exp := w[ms]
				if c.rate {
					exp /= rng.Seconds()
				}
				if diff := got - exp; diff > 1e-9 || diff < -1e-9 {
					t.Errorf("%s, %v at %d: %v, want %v", c.query, s.Metric, ms, got, exp)
				}
			}
		}
	}
}

// TestLabelsAndErrors: the label endpoints list the streams' labels and
// values; malformed queries are 400 with the position; a limit past the
// maximum is 413.
func TestLabelsAndErrors(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	base, sent := lokiServer(t, synth.Logs(synth.Config{Seed: 3, Resources: 4, ScopesPerResource: 1, TotalRecords: 100, Start: start}))
	p := window(start.Add(-time.Minute), start.Add(time.Hour))
	var labels struct {
		Status string
		Data   []string
	}
	get(t, base, "/loki/api/v1/labels", p, &labels)
	if !slices.Contains(labels.Data, "service_name") {
		t.Errorf("labels %v lack service_name", labels.Data)
	}
	var values struct{ Data []string }
	get(t, base, "/loki/api/v1/label/service_name/values", p, &values)
	for _, s := range sent {
		if !slices.Contains(values.Data, s.service) {
			t.Errorf("values %v lack %s", values.Data, s.service)
		}
	}
	ps := window(start.Add(-time.Minute), start.Add(time.Hour))
	ps.Set("match[]", `{service_name="`+sent[0].service+`"}`)
	var series struct{ Data []map[string]string }
	get(t, base, "/loki/api/v1/series", ps, &series)
	if len(series.Data) == 0 {
		t.Errorf("no series for %s", sent[0].service)
	}
	for _, s := range series.Data {
		if s["service_name"] != sent[0].service {
			t.Errorf("series %v", s)
		}
	}
	for q, want := range map[string]string{
		`{service_name="x"`:             "parse error at line 1, col 18",
		`sum(count_over_time({a="b"}))`: "expected a range",
	} {
		p := window(start, start.Add(time.Hour))
		p.Set("query", q)
		if code, body := get(t, base, "/loki/api/v1/query_range", p, nil); code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d %q, want 400 with %q", q, code, body, want)
		}
	}
	p = window(start, start.Add(time.Hour))
	p.Set("query", `{service_name="x"}`)
	p.Set("limit", "100000")
	if code, _ := get(t, base, "/loki/api/v1/query_range", p, nil); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a limit past the maximum: %d, want 413", code)
	}
}

// TestTenantsAndShapes: X-Scope-OrgID selects the tenant (one never sees
// another's lines); without the header option a header naming another
// tenant than the request's is refused; index/stats, vector and scalar
// answers have Loki's documented shapes.
func TestTenantsAndShapes(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	w := newLakeWriter(t, dir)
	for tn, seed := range map[string]int64{"acme": 1, "beta": 2} {
		if _, err := w.Append(otlpwire.SignalLogs, tn, synth.Logs(synth.Config{Seed: seed, Resources: 1, ScopesPerResource: 1, TotalRecords: 50, Start: start})); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, dir, nil)
	serve := func(orgID bool) string {
		cfg := lokiapi.DefaultConfig()
		cfg.Reader, cfg.Tenant, cfg.OrgIDHeader = r, "acme", orgID
		return serveAPI(t, cfg)
	}
	withOrg, withoutOrg := serve(true), serve(false)
	p := window(start.Add(-time.Hour), start.Add(time.Hour))
	p.Set("query", `{service_name=~".+"}`)
	p.Set("limit", "1000")
	count := func(base, org string) (int, int) {
		req, _ := http.NewRequest("GET", base+"/loki/api/v1/query_range?"+p.Encode(), nil)
		if org != "" {
			req.Header.Set("X-Scope-OrgID", org)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var res streamsResponse
		json.NewDecoder(resp.Body).Decode(&res) //nolint:errcheck
		n := 0
		for _, s := range res.Data.Result {
			n += len(s.Values)
		}
		return resp.StatusCode, n
	}
	if code, n := count(withOrg, "acme"); code != 200 || n != 50 {
		t.Errorf("acme: %d, %d lines", code, n)
	}
	if code, n := count(withOrg, "beta"); code != 200 || n != 50 {
		t.Errorf("beta: %d, %d lines", code, n)
	}
	if code, n := count(withOrg, "gamma"); code != 200 || n != 0 {
		t.Errorf("gamma: %d, %d lines, want none", code, n)
	}
	if code, _ := count(withoutOrg, "beta"); code != http.StatusForbidden {
		t.Errorf("another tenant's header without the option: %d, want 403", code)
	}
	if code, n := count(withoutOrg, ""); code != 200 || n != 50 {
		t.Errorf("the default tenant: %d, %d lines", code, n)
	}

	var stats map[string]int64
	ps := window(start.Add(-time.Hour), start.Add(time.Hour))
	ps.Set("query", `{service_name=~".+"}`)
	get(t, withOrg, "/loki/api/v1/index/stats", ps, &stats)
	if stats["entries"] != 50 || stats["streams"] == 0 || stats["bytes"] == 0 {
		t.Errorf("index/stats %v", stats)
	}
	var vec struct {
		Status string
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		}
	}
	pv := url.Values{"query": {`sum(count_over_time({service_name=~".+"}[2h]))`}, "time": {strconv.FormatInt(start.Add(time.Hour).UnixNano(), 10)}}
	get(t, withOrg, "/loki/api/v1/query", pv, &vec)
	if vec.Data.ResultType != "vector" || len(vec.Data.Result) != 1 || vec.Data.Result[0].Value[1] != "50" {
		t.Errorf("vector: %+v", vec.Data)
	}
	var sc struct {
		Data struct {
			ResultType string `json:"resultType"`
			Result     [2]any `json:"result"`
		}
	}
	get(t, withOrg, "/loki/api/v1/query", url.Values{"query": {`2 * 21`}, "time": {"1780308000"}}, &sc)
	if sc.Data.ResultType != "scalar" || sc.Data.Result[1] != "42" || sc.Data.Result[0] != float64(1780308000) {
		t.Errorf("scalar: %+v", sc.Data)
	}
}

// TestBytesLimit: a query that would read more of the lake than the
// reader's byte budget fails with 413 and says why.
func TestBytesLimit(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	w := newLakeWriter(t, dir)
	if _, err := w.Append(otlpwire.SignalLogs, "default", synth.Logs(synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 500, Start: start})); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := lokiapi.DefaultConfig()
	cfg.Reader, cfg.Tenant = newReader(t, dir, func(c *lakeread.Config) { c.MaxBytes = 1000 }), "default"
	srvURL := serveAPI(t, cfg)
	for _, q := range []string{`{service_name=~".+"}`, `sum(count_over_time({service_name=~".+"}[1h]))`} {
		p := window(start.Add(-time.Hour), start.Add(time.Hour))
		p.Set("query", q)
		if code, body := get(t, srvURL, "/loki/api/v1/query_range", p, nil); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "limit of 1000 bytes") {
			t.Errorf("%s: %d %q, want 413 naming the limit", q, code, body)
		}
	}
}
