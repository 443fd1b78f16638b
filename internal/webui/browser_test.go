package webui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/wirehouse/wirehouse/internal/loadgen"
	"github.com/wirehouse/wirehouse/internal/serve"
	"github.com/wirehouse/wirehouse/internal/syncbuf"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestBrowser drives the pages in headless Chromium against a real serve
// fed by the load generator (logs, traces and metrics over OTLP/gRPC):
// the status page shows records coming in for each signal, a PromQL query
// draws a graph, a trace search finds traces and the trace view has as
// many span rows as the Jaeger API has spans, a LogQL query shows lines
// with a link to their trace, the alerts page shows the server's PromQL
// and LogQL rules as the rules APIs give them (testAlertsPage), the
// service map and the traces page's RED panels over a server of their
// own fed a service graph (testServicesPage), and no page logs an error.
// With admin bearer tokens the page asks for one, refuses a wrong one and
// loads the data with the right one, which the next pages (the alerts
// page, empty: that server has no rules; the service map, empty: it has
// no spans) send. It logs each page's first contentful paint and the
// time until its data is drawn, and with WIREHOUSE_SCREENSHOTS=<dir>
// writes a screenshot of each page there. `make test` installs Chromium
// and sets WIREHOUSE_CHROMIUM.
func TestBrowser(t *testing.T) {
	bin := os.Getenv("WIREHOUSE_CHROMIUM")
	if bin == "" {
		t.Skip("WIREHOUSE_CHROMIUM not set; `make test` installs chromium and sets it")
	}
	shots := os.Getenv("WIREHOUSE_SCREENSHOTS")
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	am := startAlertmanager(t)
	srv := startServe(t, withRules(t, am))
	feed(t, srv.grpc)
	browser := startChromium(t, bin)

	t.Run("status", func(t *testing.T) {
		t.Parallel()
		tab := newTab(t, browser)
		tab.open(srv.url + "/")
		// Rates need two samples (5 s apart) with records between them.
		for _, sig := range []string{"logs", "traces", "metrics"} {
			tab.wait(fmt.Sprintf(`Number(document.querySelector('[data-signal=%q]')?.dataset.rate) > 0`, sig), 20*time.Second)
		}
		if shots != "" { // a minute of history, and the lake measured again, make a better picture
			tab.wait(`Number(document.querySelector('[data-samples]')?.dataset.samples) >= 13 &&
				document.querySelectorAll('[data-panel="lake"] tbody tr').length > 0`, 100*time.Second)
		}
		if n := eval[int](tab, `document.querySelectorAll('[data-panel="services"] tbody tr').length`); n == 0 {
			t.Error("no service in the services table")
		}
		tab.timings("status")
		tab.shot(shots, "status", true)
	})

	t.Run("graph", func(t *testing.T) {
		t.Parallel()
		tab := newTab(t, browser)
		q := `sum by (namespace) (rate(container_cpu_usage_seconds_total[1m]))`
		tab.open(srv.url + "/graph?g0.expr=" + url.QueryEscape(q) + "&g0.range_input=5m")
		tab.waitReady()
		points := eval[int](tab, `Number(document.querySelector('.query-panel .chart')?.dataset.points || 0)`)
		canvas := eval[bool](tab, `!!document.querySelector('.query-panel .chart canvas')`)
		legend := eval[int](tab, `document.querySelectorAll('.query-panel .legend > span').length`)
		if points == 0 || !canvas || legend == 0 {
			t.Errorf("%s: %d points, canvas %v, %d legend entries; page says %q", q, points, canvas, legend,
				eval[string](tab, `document.querySelector('.query-panel').innerText`))
		}
		// The table tab answers the instant query.
		tab.click(`.query-panel .tabs button[data-tab=table]`)
		tab.wait(`document.querySelectorAll('.series-table tbody tr').length > 0`, 10*time.Second)
		tab.timings("graph")
		tab.click(`.query-panel .tabs button[data-tab=graph]`)
		tab.wait(`Number(document.querySelector('.query-panel .chart')?.dataset.points || 0) > 0`, 10*time.Second)
		tab.shot(shots, "graph", false)

		// Completion: metric names as they are typed, then the metric's
		// label names in a selector, then a label's values.
		ta := `.query-panel textarea`
		tab.do("type a metric name", chromedp.Evaluate[chromedp.Void](`document.querySelector('.query-panel textarea').value = ""`),
			chromedp.SendKeys(chromedp.CSS(ta), "container_cpu_u"))
		tab.wait(`[...document.querySelectorAll('.complete:not([hidden]) div')].some(d => d.textContent.startsWith("container_cpu_usage_seconds_total"))`, 5*time.Second)
		tab.do("accept", chromedp.SendKeys(chromedp.CSS(ta), "\t"))
		if v := eval[string](tab, `document.querySelector('.query-panel textarea').value`); v != "container_cpu_usage_seconds_total" {
			t.Errorf("after Tab the query is %q", v)
		}
		tab.do("open a selector", chromedp.SendKeys(chromedp.CSS(ta), "{"))
		tab.wait(`[...document.querySelectorAll('.complete:not([hidden]) div')].some(d => d.textContent.startsWith("namespace"))`, 5*time.Second)
		tab.do("type a label", chromedp.SendKeys(chromedp.CSS(ta), "namesp\t"))
		tab.wait(`document.querySelectorAll('.complete:not([hidden]) div').length > 0`, 5*time.Second)
		if v := eval[string](tab, `document.querySelector('.query-panel textarea').value`); v != `container_cpu_usage_seconds_total{namespace=""` {
			t.Errorf("after a label name the query is %q", v)
		}
	})

	t.Run("traces", func(t *testing.T) {
		t.Parallel()
		tab := newTab(t, browser)
		tab.open(srv.url + "/traces?lookback=15m")
		tab.waitReady()
		tab.wait(`document.querySelectorAll('.trace-item').length > 0`, 10*time.Second)
		tab.timings("traces")
		tab.shot(shots, "traces", false)
		// A minimum duration narrows the search (the form, then the URL).
		tab.do("search by duration", chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name=minDuration]').value = "300ms"`))
		tab.click(`.search-form button[type=submit]`)
		tab.wait(`location.search.includes("minDuration=300ms") && document.querySelector('.results-info').textContent.includes(" in ")`, 10*time.Second)
		long := eval[int](tab, `document.querySelectorAll('.trace-item').length`)
		short := eval[int](tab, `[...document.querySelectorAll('.trace-item')].filter(e => e.dataset.duration < 300000).length`)
		if long == 0 || short > 0 {
			t.Errorf("minDuration=300ms: %d traces, %d of them shorter", long, short)
		}
		// TraceQL through Tempo's API: completion offers the scopes'
		// names, and the query's traces are listed.
		tab.open(srv.url + "/traces?lookback=15m")
		tab.waitReady()
		tab.do("type TraceQL", chromedp.SendKeys(chromedp.CSS(`textarea[name=q]`), `{ resource.serv`))
		tab.wait(`[...document.querySelectorAll('.complete:not([hidden]) div')].some(d => d.textContent.startsWith("resource.service.name"))`, 5*time.Second)
		tab.do("set TraceQL", chromedp.Evaluate[chromedp.Void](`document.querySelector('textarea[name=q]').value = '{ kind = server && duration > 100ms }'`))
		tab.click(`.search-form button[type=submit]`)
		tab.wait(`location.search.includes("q=") && document.querySelector('.results-info').textContent.includes(" in ")`, 10*time.Second)
		if n, fast := eval[int](tab, `document.querySelectorAll('.trace-item').length`),
			eval[int](tab, `[...document.querySelectorAll('.trace-item')].filter(e => e.dataset.duration < 100000).length`); n == 0 || fast > 0 {
			t.Errorf("TraceQL duration > 100ms: %d traces, %d of them shorter", n, fast)
		}
		tab.open(srv.url + "/traces?lookback=15m")
		tab.waitReady()
		tab.wait(`document.querySelectorAll('.trace-item').length > 0`, 10*time.Second)
		// The trace with the most spans of the results.
		id := eval[string](tab, `[...document.querySelectorAll('.trace-item')].sort((a, b) => b.dataset.spans - a.dataset.spans)[0].dataset.traceId`)
		var api struct {
			Data []struct {
				Spans []json.RawMessage `json:"spans"`
			} `json:"data"`
		}
		getJSON(t, srv.url+"/jaeger/api/traces/"+id, "", &api)
		if len(api.Data) != 1 || len(api.Data[0].Spans) == 0 {
			t.Fatalf("Jaeger API: trace %s: %d traces", id, len(api.Data))
		}
		tab.clickToLoad(fmt.Sprintf(`.trace-item[data-trace-id=%q]`, id))
		tab.waitReady()
		if p := eval[string](tab, `location.pathname`); p != "/trace/"+id {
			t.Fatalf("the result opened %s, want /trace/%s", p, id)
		}
		rows := eval[int](tab, `document.querySelectorAll('.waterfall .span-row').length`)
		if rows != len(api.Data[0].Spans) {
			t.Errorf("trace %s: %d rows in the waterfall, the Jaeger API has %d spans", id, rows, len(api.Data[0].Spans))
		}
		tab.timings("trace")
		tab.shot(shots, "trace", false)
		// A span opens to its tags, process, events and links.
		tab.click(`.waterfall .span-row`)
		tab.wait(`!!document.querySelector('.span-detail table.kv')`, 5*time.Second)
		text := eval[string](tab, `document.querySelector('.span-detail').textContent`)
		for _, want := range []string{"Tags (", "Process: ", "Events (", "Links ("} {
			if !strings.Contains(text, want) {
				t.Errorf("span details lack %q:\n%s", want, text)
			}
		}
	})

	t.Run("logs", func(t *testing.T) {
		t.Parallel()
		tab := newTab(t, browser)
		tab.open(srv.url + "/logs?range=15m")
		tab.waitReady()
		lines := eval[int](tab, `document.querySelectorAll('.log-line').length`)
		volume := eval[int](tab, `Number(document.querySelector('.volume')?.dataset.points || 0)`)
		if lines == 0 || volume == 0 {
			t.Fatalf("%d lines, %d volume points; page says %q", lines, volume, eval[string](tab, `document.getElementById('main').innerText.slice(0, 500)`))
		}
		tab.timings("logs")
		tab.shot(shots, "logs", false)
		orig := eval[string](tab, `document.querySelector('.query-panel textarea').value`)
		// Completion of stream labels in a selector.
		tab.do("type a selector", chromedp.Evaluate[chromedp.Void](`document.querySelector('.query-panel textarea').value = ""`),
			chromedp.SendKeys(chromedp.CSS(`.query-panel textarea`), "{serv"))
		tab.wait(`[...document.querySelectorAll('.complete:not([hidden]) div')].some(d => d.textContent.startsWith("service_name"))`, 5*time.Second)
		tab.do("close the completion", chromedp.SendKeys(chromedp.CSS(`.query-panel textarea`), "\x1b"))
		id := eval[string](tab, `document.querySelector('.log-line[data-trace-id]')?.dataset.traceId || ""`)
		if id == "" {
			t.Fatal("no line with a trace id")
		}
		tab.click(`.log-line[data-trace-id]`)
		tab.wait(fmt.Sprintf(`document.querySelector('.log-detail a.trace-link')?.getAttribute('href') === "/trace/%s"`, id), 5*time.Second)
		if text := eval[string](tab, `document.querySelector('.log-detail').textContent`); !strings.Contains(text, "Structured metadata (") || !strings.Contains(text, "service_name") {
			t.Errorf("line details:\n%s", text)
		}
		// The Drilldown tabs, for the query as it was: fields (a value's +
		// adds its filter), patterns, services by volume.
		tab.do("restore the query", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector('.query-panel textarea').value = %q`, orig)))
		tab.click(`.query-panel button.primary`)
		tab.wait(fmt.Sprintf(`document.querySelector('.insight').dataset.query === %q && document.querySelectorAll('.insight tr.field').length > 0`, orig), 10*time.Second)
		tab.click(`.insight tr.field`)
		tab.wait(`document.querySelectorAll('.insight tr.field-value button').length > 0`, 10*time.Second)
		field := eval[string](tab, `document.querySelector('.insight tr.field').dataset.field`)
		tab.click(`.insight tr.field-value button`)
		tab.wait(fmt.Sprintf(`(document.querySelector('.insight').dataset.query || "").includes("| %s=")`, field), 10*time.Second)
		tab.click(`.tabs button[data-tab="patterns"]`)
		tab.wait(`document.querySelector('.insight').dataset.tab === "patterns" && document.querySelectorAll('.insight tr.pattern').length > 0`, 10*time.Second)
		tab.click(`.tabs button[data-tab="services"]`)
		tab.wait(`document.querySelector('.insight').dataset.tab === "services" && document.querySelectorAll('.insight tr.service').length > 0`, 10*time.Second)
		tab.shot(shots, "logs-services", false)
	})

	t.Run("alerts", func(t *testing.T) {
		t.Parallel()
		testAlertsPage(t, newTab(t, browser), srv, am, shots)
	})

	t.Run("services", func(t *testing.T) {
		t.Parallel()
		testServicesPage(t, browser, shots)
	})

	t.Run("auth", func(t *testing.T) {
		t.Parallel()
		const token = "webui-test-token-0123456789"
		tokens := filepath.Join(t.TempDir(), "admin-tokens")
		if err := os.WriteFile(tokens, []byte(token+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := startServe(t, func(c *serve.Config) { c.Admin.Auth.BearerTokensFile = tokens })
		var status struct{ Views map[string]any }
		if code := getJSON(t, s.url+"/api/wirehouse/status", "", &status); code != http.StatusUnauthorized {
			t.Errorf("status without a token: %d, want 401", code)
		}
		if code := getJSON(t, s.url+"/api/wirehouse/status", token, &status); code != http.StatusOK || status.Views == nil {
			t.Errorf("status with the token: %d, %+v", code, status)
		}
		tab := newTab(t, browser)
		tab.unauthorizedOK = true
		tab.open(s.url + "/")
		tab.wait(`document.getElementById('auth').open`, 10*time.Second)
		tab.typeToken("not-the-token-0123456789")
		tab.wait(`document.getElementById('auth').open && !document.getElementById('auth-error').hidden`, 10*time.Second)
		tab.typeToken(token)
		tab.waitReady()
		if open := eval[bool](tab, `document.getElementById('auth').open`); open {
			t.Error("the token form is still open")
		}
		if n := eval[int](tab, `document.querySelectorAll('[data-panel]').length`); n == 0 {
			t.Error("no panel drawn after signing in")
		}
		if v := eval[string](tab, `sessionStorage.getItem('wirehouse.token')`); v != token {
			t.Errorf("sessionStorage holds %q", v)
		}
		// Another page sends the token kept; this server has no rules: the
		// alerts page says where they come from, and that no Alertmanager
		// is set.
		tab.open(s.url + "/alerts")
		tab.waitReady()
		if open := eval[bool](tab, `document.getElementById('auth').open`); open {
			t.Error("the alerts page asks for the token again")
		}
		if text := eval[string](tab, `document.querySelector('.no-rules')?.textContent || ""`); !strings.Contains(text, "No rules loaded: see rules.files / --rules-files") {
			t.Errorf("alerts page without rules: %q", tab.text())
		}
		if text := eval[string](tab, `document.querySelector('.alertmanagers')?.textContent || ""`); !strings.Contains(text, "No Alertmanager") {
			t.Errorf("alerts page without an Alertmanager: %q", text)
		}
		tab.open(s.url + "/services")
		tab.waitReady()
		if text := eval[string](tab, `document.querySelector('.map-empty')?.textContent || ""`); !strings.Contains(text, "No calls between services in this range") {
			t.Errorf("service map without spans: %q", tab.text())
		}
	})
}

// server is a running serve: its admin URL and OTLP/gRPC and OTLP/HTTP
// addresses.
type server struct{ url, grpc, http string }

// startServe runs serve on loopback ports with its data in a temporary
// directory, changed by edit if not nil, until the test ends.
func startServe(t *testing.T, edit func(*serve.Config)) server {
	t.Helper()
	cfg := serve.DefaultConfig()
	cfg.DataDir = filepath.Join(t.TempDir(), "data")
	cfg.OTLP.GRPC.Listen, cfg.OTLP.HTTP.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
	cfg.Jaeger.StorageListen = ""
	cfg.Lake.MaxDelay = time.Second
	cfg.Log.Level = "warn"
	if edit != nil {
		edit(&cfg)
	}
	var logs syncbuf.Buffer
	s, err := serve.New(cfg, &logs)
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
		if t.Failed() {
			t.Logf("serve's log:\n%s", logs.String())
		}
	})
	a := s.Addrs()
	return server{url: "http://" + a.Admin.String(), grpc: a.GRPC.String(), http: a.HTTP.String()}
}

// feed sends each signal's records: a first batch of distinct requests
// (20 of 50 records; metrics the same series 30 times a second apart, so
// that rate() has points), then 5 requests a second of each until the
// test ends.
func feed(t *testing.T, endpoint string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	run := func(cfg loadgen.Config) error {
		_, err := loadgen.Run(ctx, cfg, io.Discard)
		return err
	}
	base := loadgen.DefaultConfig()
	base.Endpoint, base.Batch, base.Resources = endpoint, 50, 5
	var first sync.WaitGroup
	for _, sig := range []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces, otlpwire.SignalMetrics} {
		c := base
		c.Signal, c.Count, c.Variants = sig, 20, 20
		if sig == otlpwire.SignalMetrics {
			c.Batch, c.Count, c.Repeat = 200, 30, true
		}
		first.Go(func() {
			if err := run(c); err != nil {
				t.Errorf("load %s: %v", sig, err)
			}
		})
		bg := base
		bg.Signal, bg.Rate, bg.Duration, bg.Variants = sig, 5, time.Hour, 4
		wg.Go(func() {
			if err := run(bg); err != nil && ctx.Err() == nil {
				t.Errorf("background load %s: %v", sig, err)
			}
		})
	}
	first.Wait()
}

// startChromium starts headless Chromium for the test, with a profile in a
// temporary directory and nothing that reaches out to Google's hosts.
func startChromium(t *testing.T, bin string) context.Context {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000))
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil { // start the browser, bound to ctx
		t.Fatalf("start chromium %s: %v", bin, err)
	}
	return ctx
}

// tab is a browser tab of one subtest that collects what its pages log
// as errors; the test fails on any at its end.
type tab struct {
	t              *testing.T
	ctx            context.Context
	mu             sync.Mutex
	errors         []string
	unauthorizedOK bool // 401s are expected (the token form's test)
}

func newTab(t *testing.T, browser context.Context) *tab {
	tb := &tab{t: t}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithListener(tb.listen))
	tb.ctx = ctx
	// Open the tab now: the first Do binds it to its context, which must
	// not be one of the per-action timeouts below.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, e := range tb.errors {
			t.Errorf("page error: %s", e)
		}
	})
	return tb
}

// listen keeps console errors and warnings, uncaught exceptions and the
// browser's error log entries (failed requests).
func (tb *tab) listen(ev any) {
	var msg string
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.ConsoleAPICalledTypeError && e.Type != runtime.ConsoleAPICalledTypeWarning && e.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		var parts []string
		for _, a := range e.Args {
			parts = append(parts, strings.Trim(string(a.Value), `"`)+a.Description)
		}
		msg = fmt.Sprintf("console.%s: %s", e.Type, strings.Join(parts, " "))
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg = "exception: " + d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
	case *log.EventEntryAdded:
		if e.Entry.Level != log.EntryLevelError {
			return
		}
		tb.mu.Lock()
		ok := tb.unauthorizedOK
		tb.mu.Unlock()
		if ok && strings.Contains(e.Entry.Text, "401") {
			return
		}
		msg = fmt.Sprintf("log: %s %s", e.Entry.Text, e.Entry.URL)
	default:
		return
	}
	tb.mu.Lock()
	tb.errors = append(tb.errors, msg)
	tb.mu.Unlock()
}

func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	tb.doWithin(30*time.Second, what, actions...)
}

func (tb *tab) doWithin(d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v; page says %q", what, err, tb.text())
	}
}

// text is the start of the page's text, for failure messages.
func (tb *tab) text() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 2*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById('main')?.innerText || "").slice(0, 800)`))
	return s
}

func (tb *tab) open(u string) {
	tb.t.Helper()
	tb.do("open "+u, chromedp.Navigate(u))
}

// wait polls the JavaScript condition until it holds.
func (tb *tab) wait(cond string, d time.Duration) {
	tb.t.Helper()
	tb.doWithin(d+5*time.Second, "wait for "+cond, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(50*time.Millisecond)))
}

// waitReady waits for the page to say its data is drawn.
func (tb *tab) waitReady() {
	tb.t.Helper()
	tb.wait(`document.documentElement.dataset.ready === "1"`, 15*time.Second)
}

func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// clickToLoad clicks sel, a link, and waits for the page it opens to load.
func (tb *tab) clickToLoad(sel string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel)))); err != nil {
		tb.t.Fatalf("click %s: %v", sel, err)
	}
}

func (tb *tab) typeToken(tok string) {
	tb.t.Helper()
	tb.do("sign in", chromedp.SetValue(chromedp.CSS("#auth-token"), tok), chromedp.Click(chromedp.CSS("#auth-form button[type=submit]")))
}

func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// timings logs the page's first contentful paint and the time its data
// was drawn (the "wh-data" mark), in ms from the navigation's start.
func (tb *tab) timings(page string) {
	tb.t.Helper()
	p := eval[struct{ FCP, Data float64 }](tb, `({
		FCP: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? -1,
		Data: performance.getEntriesByName("wh-data")[0]?.startTime ?? -1,
	})`)
	tb.t.Logf("%s: first contentful paint %.0f ms, data drawn %.0f ms", page, p.FCP, p.Data)
}

// shot writes the page to dir/name.png (the whole page when full), if dir
// is set.
func (tb *tab) shot(dir, name string, full bool) {
	tb.t.Helper()
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	// Let the last frame settle: no cursor, no focus ring.
	chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement?.blur()`), chromedp.Sleep(300*time.Millisecond)) //nolint:errcheck
	action := chromedp.CaptureScreenshot()
	if full {
		action = chromedp.FullScreenshot(100)
	}
	png, err := chromedp.Run(ctx, action)
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// getJSON GETs u (with a bearer token if set), decodes a 200's body into
// v and returns the status.
func getJSON(t *testing.T, u, token string, v any) int {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", u, err, b)
		}
	}
	return resp.StatusCode
}
