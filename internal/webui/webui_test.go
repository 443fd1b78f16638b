package webui

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// maxGzipTotal bounds the pages' files, gzipped, all together.
const maxGzipTotal = 500 << 10

// TestAssetsEmbedded: every file under static/ is embedded unchanged,
// every script's imports and index.html's links name embedded files, and
// everything gzipped is under 500 KiB.
func TestAssetsEmbedded(t *testing.T) {
	a, err := loadAssets()
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	err = fs.WalkDir(os.DirFS("static"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		onDisk[p] = true
		want, err := os.ReadFile(path.Join("static", p))
		if err != nil {
			return err
		}
		f := a.byName[p]
		if f == nil {
			t.Errorf("static/%s is not embedded", p)
			return nil
		}
		if !bytes.Equal(f.raw, want) {
			t.Errorf("static/%s: embedded bytes differ from the file", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(onDisk) != len(a.byName) {
		t.Errorf("%d files on disk, %d embedded", len(onDisk), len(a.byName))
	}
	for _, want := range []string{"index.html", "js/app.js", "css/app.css", "vendor/uplot/uPlot.esm.js", "vendor/uplot/uPlot.min.css", "vendor/uplot/LICENSE"} {
		if a.byName[want] == nil {
			t.Errorf("%s not embedded", want)
		}
	}

	// Imports (static and dynamic) resolve to embedded modules.
	imports := regexp.MustCompile(`(?:\bfrom\s*|\bimport\s*\(\s*)"(\.{1,2}/[^"]+)"`)
	links := regexp.MustCompile(`(?:href|src)="/static/([^"]+)"`)
	for name, f := range a.byName {
		switch path.Ext(name) {
		case ".js":
			for _, m := range imports.FindAllStringSubmatch(string(f.raw), -1) {
				if target := path.Join(path.Dir(name), m[1]); a.byName[target] == nil {
					t.Errorf("%s imports %s: %s is not embedded", name, m[1], target)
				}
			}
		case ".html":
			for _, m := range links.FindAllStringSubmatch(string(f.raw), -1) {
				if a.byName[m[1]] == nil {
					t.Errorf("%s links /static/%s, which is not embedded", name, m[1])
				}
			}
		}
	}

	total, raw := 0, 0
	for _, f := range a.byName {
		raw += len(f.raw)
		if f.gz != nil {
			total += len(f.gz)
		} else {
			total += len(f.raw)
		}
	}
	t.Logf("%d files, %d bytes, %d bytes gzipped", len(a.byName), raw, total)
	if total > maxGzipTotal {
		t.Errorf("the files gzipped are %d bytes, more than %d", total, maxGzipTotal)
	}
}

// TestServing: the pages' paths serve index.html, files come gzipped when
// asked with their ETag and a 304 for a current copy, with the security
// headers; unknown files are 404.
func TestServing(t *testing.T) {
	h := newTestHandler(t, prometheus.NewRegistry(), Config{})
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	index := h.assets.byName["index.html"]
	for _, p := range []string{"/", "/graph", "/traces", "/trace/0af7651916cd43dd8448eb211c80319c", "/services", "/logs", "/alerts"} {
		body, resp := fetch(t, srv.URL+p, nil)
		if resp.StatusCode != 200 || !bytes.Equal(body, index.raw) || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Errorf("GET %s: %d %q, not index.html", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: security headers missing: %v", p, resp.Header)
		}
	}
	app := h.assets.byName["js/app.js"]
	body, resp := fetch(t, srv.URL+"/static/js/app.js", map[string]string{"Accept-Encoding": "gzip"})
	if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("app.js: %v", resp.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, app.raw) {
		t.Error("app.js gunzipped differs from the file")
	}
	if body, resp := fetch(t, srv.URL+"/static/js/app.js", map[string]string{"Accept-Encoding": "gzip;q=0"}); resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, app.raw) {
		t.Error("app.js gzipped for a client refusing gzip")
	}
	etag := resp.Header.Get("ETag")
	if _, resp := fetch(t, srv.URL+"/static/js/app.js", map[string]string{"If-None-Match": etag}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match %s: %d, want 304", etag, resp.StatusCode)
	}
	for _, p := range []string{"/static/nope.js", "/static/index.html", "/static/js"} {
		if _, resp := fetch(t, srv.URL+p, nil); resp.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
}

func fetch(t *testing.T, url string, headers map[string]string) ([]byte, *http.Response) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b, resp
}

// TestPublic: only GETs of the pages and their files are public.
func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/", true},
		{"HEAD", "/graph", true},
		{"GET", "/traces", true},
		{"GET", "/trace/0af7651916cd43dd8448eb211c80319c", true},
		{"GET", "/services", true},
		{"GET", "/logs", true},
		{"GET", "/alerts", true},
		{"GET", "/static/js/app.js", true},
		{"GET", "/static/vendor/uplot/uPlot.esm.js", true},
		{"POST", "/", false},
		{"GET", "/static/", false},
		{"GET", "/trace/", false},
		{"GET", "/trace/a/b", false},
		{"GET", "/static/../metrics", false},
		{"GET", "/static//metrics", false},
		{"GET", "/static/./x", false},
		{"GET", "/api/wirehouse/status", false},
		{"GET", "/metrics", false},
		{"GET", "/api/v1/query", false},
		{"GET", "/jaeger/api/traces/0af7651916cd43dd8448eb211c80319c", false},
		{"GET", "/logs/x", false},
		{"GET", "/graphs", false},
		{"GET", "/alerts/x", false},
		{"GET", "/services/frontend", false},
		{"GET", "/jaeger/api/dependencies", false},
		{"GET", "/api/v1/alerts", false},
		{"GET", "/api/v1/rules", false},
		{"GET", "/prometheus/api/v1/rules", false},
	} {
		r := httptest.NewRequest(tc.method, "http://x/", nil)
		r.URL.Path = tc.path
		if got := Public(r); got != tc.want {
			t.Errorf("Public(%s %s) = %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}

// TestNavigation: each link of the top bar (index.html) opens a page: its
// path is public and served, and app.js routes it to an embedded module
// that marks that link active; the service map (after Traces) and the
// alerts page are among them.
func TestNavigation(t *testing.T) {
	a, err := loadAssets()
	if err != nil {
		t.Fatal(err)
	}
	nav := regexp.MustCompile(`<a href="(/[^"]*)" data-page="([a-z]+)">([^<]+)</a>`).FindAllStringSubmatch(string(a.byName["index.html"].raw), -1)
	routes := regexp.MustCompile(`\[/(\^[^,]*\$)/, "([a-z]+)", "\./(pages/[a-z]+\.js)", "[^"]+"\]`).FindAllStringSubmatch(string(a.byName["js/app.js"].raw), -1)
	if len(nav) == 0 || len(routes) < len(nav) {
		t.Fatalf("%d links in the top bar, %d routes in app.js", len(nav), len(routes))
	}
	for _, r := range routes {
		if a.byName["js/"+r[3]] == nil {
			t.Errorf("app.js routes %s to %s, which is not embedded", r[1], r[3])
		}
	}
	h := newTestHandler(t, prometheus.NewRegistry(), Config{})
	mux := http.NewServeMux()
	h.Register(mux)
	var seen []string
	for _, l := range nav {
		path, page, title := l[1], l[2], l[3]
		seen = append(seen, title)
		if r := httptest.NewRequest("GET", path, nil); !Public(r) {
			t.Errorf("top bar link %s: not public", path)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), a.byName["index.html"].raw) {
			t.Errorf("top bar link %s: %d, not index.html", path, w.Code)
		}
		routed := false
		for _, r := range routes {
			re, err := regexp.Compile(strings.ReplaceAll(r[1], `\/`, "/"))
			if err != nil {
				t.Fatalf("app.js route %s: %v", r[1], err)
			}
			if re.MatchString(path) {
				routed = true
				if r[2] != page {
					t.Errorf("top bar link %s (data-page %s): app.js marks %s active", path, page, r[2])
				}
				break
			}
		}
		if !routed {
			t.Errorf("top bar link %s: no route in app.js", path)
		}
	}
	if want := []string{"Status", "Metrics", "Traces", "Services", "Logs", "Alerts"}; !slices.Equal(seen, want) {
		t.Errorf("top bar: %q, want %q", seen, want)
	}
}

// clock is a fake time that tests move.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTestHandler(t *testing.T, reg prometheus.Gatherer, cfg Config) *Handler {
	t.Helper()
	d := DefaultConfig()
	d.Gatherer = reg
	if cfg.Interval != 0 {
		d.Interval, d.Window = cfg.Interval, cfg.Window
	}
	d.Restrict, d.Now, d.Settings = cfg.Restrict, cfg.Now, cfg.Settings
	h, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// statusOf asks the handler for /api/wirehouse/status as tenant t (none
// if "").
func statusOf(t *testing.T, h *Handler, ten string) Status {
	t.Helper()
	r := httptest.NewRequest("GET", "/api/wirehouse/status", nil)
	if ten != "" {
		r = r.WithContext(tenant.NewContext(r.Context(), ten))
	}
	w := httptest.NewRecorder()
	h.statusAPI().ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("status: %d %s", w.Code, w.Body)
	}
	var st Status
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatalf("status JSON: %v\n%s", err, w.Body)
	}
	return st
}

// find returns the series of view with labels (as k=v pairs).
func find(t *testing.T, st Status, view string, kv ...string) Series {
	t.Helper()
	for _, s := range st.Views[view] {
		ok := true
		for i := 0; i < len(kv); i += 2 {
			ok = ok && s.Labels[kv[i]] == kv[i+1]
		}
		if ok {
			return s
		}
	}
	t.Fatalf("view %s has no series %v: %+v", view, kv, st.Views[view])
	return Series{}
}

func equalFloats(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) })
}

// TestSampler: counters become per-second rates summed over the labels a
// view drops (a reset counts from zero, a counter created later counts
// from zero at once), gauges stay values; the ring keeps Window/Interval
// samples and forgets series gone for a whole window; the top of a view
// keeps its history and the rest only their totals.
func TestSampler(t *testing.T) {
	reg := prometheus.NewRegistry()
	accepted := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wirehouse_receiver_accepted_records_total"}, []string{"signal", "transport"})
	services := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wirehouse_sink_records_total"}, []string{"signal", "service"})
	spool := prometheus.NewGauge(prometheus.GaugeOpts{Name: "wirehouse_spool_bytes"})
	reg.MustRegister(accepted, services, spool)
	clk := &clock{time.Unix(1_800_000_000, 0)}
	h := newTestHandler(t, reg, Config{Interval: 5 * time.Second, Window: 20 * time.Second, Now: clk.now})
	s := h.sampler

	step := func(f func()) {
		f()
		s.Sample()
		clk.t = clk.t.Add(5 * time.Second)
	}
	nan := math.NaN()
	step(func() { accepted.WithLabelValues("logs", "grpc").Add(10); spool.Set(100) })
	step(func() {
		accepted.WithLabelValues("logs", "grpc").Add(40)
		accepted.WithLabelValues("logs", "http").Add(10) // new: 10 counted at once
		spool.Set(300)
	})
	step(func() { accepted.WithLabelValues("logs", "grpc").Add(5) })
	st := statusOf(t, h, "")
	if len(st.Times) != 3 || st.Now != clk.t.Add(-5*time.Second).UnixMilli() || st.Interval != 5 || st.Window != 20 {
		t.Fatalf("times %v, now %d", st.Times, st.Now)
	}
	logs := find(t, st, "accepted", "signal", "logs")
	if want := []float64{nan, 10, 1}; !equalFloats(logs.Values, want) || logs.Last != 65 {
		t.Errorf("logs rates %v (last %v), want %v: (50+10)/5s then 5/5s, 65 in all", logs.Values, logs.Last, want)
	}
	if !equalFloats(find(t, st, "spool_bytes").Values, []float64{100, 300, 300}) {
		t.Errorf("spool bytes %v", find(t, st, "spool_bytes").Values)
	}
	if r := float64(logs.Rate); r != 5.5 {
		t.Errorf("last minute's rate %v, want 5.5 (55 records over 10 s)", r)
	}

	// A reset, then the window fills: 4 samples kept, the oldest gone.
	accepted.Reset()
	step(func() { accepted.WithLabelValues("logs", "grpc").Add(20) })
	step(func() { accepted.WithLabelValues("logs", "grpc").Add(5) })
	st = statusOf(t, h, "")
	if len(st.Times) != 4 {
		t.Fatalf("%d samples, want the window's 4", len(st.Times))
	}
	if got, want := find(t, st, "accepted", "signal", "logs").Values, []float64{nan, 1, 4, 1}; !equalFloats(got, want) {
		t.Errorf("rates around a reset %v, want %v (the first point has no rate; the reset counts from 0: 20/5s)", got, want)
	}

	// Services: the top 8 per signal keep their history.
	step(func() {
		for i := range 10 {
			services.WithLabelValues("traces", string(rune('a'+i))).Add(float64(i + 1))
		}
	})
	step(func() {
		for i := range 10 {
			services.WithLabelValues("traces", string(rune('a'+i))).Add(float64(10 * (i + 1)))
		}
	})
	st = statusOf(t, h, "")
	withHistory := 0
	for _, sr := range st.Views["services"] {
		if sr.Values != nil {
			withHistory++
			if sr.Labels["service"] < "c" {
				t.Errorf("service %s, among the slowest, has its history", sr.Labels["service"])
			}
		}
	}
	if withHistory != 8 || len(st.Views["services"]) != 10 {
		t.Errorf("%d of %d services with history, want 8 of 10", withHistory, len(st.Views["services"]))
	}

	// Gone for a whole window: forgotten.
	reg.Unregister(spool)
	for range 4 {
		step(func() {})
	}
	if st := statusOf(t, h, ""); len(st.Views["spool_bytes"]) != 0 {
		t.Errorf("spool_bytes kept after a window without it: %+v", st.Views["spool_bytes"])
	}
}

// TestStatusTenants: with Restrict, a request sees the tenant-labelled
// series of its own tenant only (the default tenant's when its context
// names none); without, every tenant's.
func TestStatusTenants(t *testing.T) {
	reg := prometheus.NewRegistry()
	lake := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "wirehouse_lake_usage_bytes"}, []string{"signal", "tenant"})
	reg.MustRegister(lake)
	for _, tn := range []string{"default", "a", "b"} {
		lake.WithLabelValues("logs", tn).Set(100)
	}
	tenants := func(st Status) []string {
		var out []string
		for _, s := range st.Views["lake_bytes"] {
			out = append(out, s.Labels["tenant"])
		}
		return out
	}
	open := newTestHandler(t, reg, Config{})
	open.sampler.Sample()
	if got := tenants(statusOf(t, open, "a")); !slices.Equal(got, []string{"a", "b", "default"}) {
		t.Errorf("without Restrict: tenants %v, want all three", got)
	}
	restricted := newTestHandler(t, reg, Config{Restrict: true, Settings: func() []Setting { return []Setting{{"Data directory", "/data"}} }})
	restricted.sampler.Sample()
	for _, tc := range []struct{ ctx, want string }{{"", "default"}, {"a", "a"}, {"b", "b"}, {"c", ""}} {
		st := statusOf(t, restricted, tc.ctx)
		want := []string{tc.want}
		if tc.want == "" {
			want = nil
		}
		if got := tenants(st); !slices.Equal(got, want) || st.Tenant != cmpOr(tc.ctx, "default") {
			t.Errorf("tenant %q sees tenants %v as %q, want %v", tc.ctx, got, st.Tenant, want)
		}
		if len(st.Settings) != 1 || st.Build.Version == "" {
			t.Errorf("settings %v, build %+v", st.Settings, st.Build)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestSpoolAge: the oldest record not in the lake yet arrived after the
// last sample whose spool_last_seq had not passed the committed number.
func TestSpoolAge(t *testing.T) {
	times := []int64{0, 5000, 10000, 15000}
	series := func(vals ...float64) []Series {
		return []Series{{Values: vals, Last: Float(vals[len(vals)-1])}}
	}
	for _, tc := range []struct {
		name      string
		last      []float64
		committed float64
		want      Age
	}{
		{"all in the lake", []float64{1, 2, 3, 4}, 4, Age{}},
		{"waiting since sample 2", []float64{1, 2, 5, 6}, 2, Age{Seconds: 10}},
		{"before the window", []float64{3, 4, 5, 6}, 2, Age{Seconds: 15, AtLeast: true}},
	} {
		got := spoolAge(times, series(tc.last...), series(tc.committed))
		if got == nil || *got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if spoolAge(times, nil, series(1)) != nil {
		t.Error("an age without the spool's series")
	}
}

// TestRunStops: Run samples at once and returns when its context ends.
func TestRunStops(t *testing.T) {
	h := newTestHandler(t, prometheus.NewRegistry(), Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		h.Run(ctx)
		close(done)
	}()
	for deadline := time.Now().Add(5 * time.Second); len(h.sampler.snapshot().times) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no sample taken at start")
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	ok.Gatherer = prometheus.NewRegistry()
	for name, f := range map[string]func(*Config){
		"no gatherer":   func(c *Config) { c.Gatherer = nil },
		"zero interval": func(c *Config) { c.Interval = 0 },
		"short window":  func(c *Config) { c.Window = time.Second },
		"huge window":   func(c *Config) { c.Window = 1000 * time.Hour },
		"bad tenant":    func(c *Config) { c.Tenant = "a/b" },
	} {
		c := ok
		f(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(ok); err != nil {
		t.Errorf("defaults: %v", err)
	}
}
