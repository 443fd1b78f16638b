package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// stormLoad sends ~1M logs (500 requests of 2,000 records, over the last
// half hour), 40,000 spans and some metrics to serve over OTLP/HTTP.
func stormLoad(t *testing.T, otlpHTTP string, base time.Time) {
	t.Helper()
	post := func(signal otlpwire.Signal, body []byte) {
		resp, err := http.Post("http://"+otlpHTTP+"/v1/"+signal.String(), "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("load %s: %s", signal, resp.Status)
		}
	}
	var wg sync.WaitGroup
	seeds := make(chan int)
	for range 2 {
		wg.Go(func() {
			for seed := range seeds {
				post(otlpwire.SignalLogs, synth.Logs(synth.Config{Seed: int64(seed) * 3, Resources: 4, ScopesPerResource: 2, TotalRecords: 2000, Start: base}))
				if seed%25 == 0 {
					post(otlpwire.SignalTraces, synth.Traces(synth.Config{Seed: int64(seed), Resources: 4, ScopesPerResource: 1, TotalRecords: 2000, Start: base}))
					post(otlpwire.SignalMetrics, synth.Generate(otlpwire.SignalMetrics, synth.Config{Seed: int64(seed), Resources: 4, ScopesPerResource: 1, TotalRecords: 200, Start: base}))
				}
			}
		})
	}
	for seed := range 500 {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
}

// p99 returns the 99th percentile of ds (sorted in place).
func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(float64(len(ds))*0.99))]
}

// metricValue reads a sample of the admin port's /metrics: the first
// series of name whose line holds match.
func metricValue(t *testing.T, admin, name, match string) float64 {
	t.Helper()
	resp, err := http.Get(admin + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name) && strings.Contains(line, match) {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s{%s} on /metrics", name, match)
	return 0
}

// TestQueryStorm runs a storm of queries against a default serve holding
// ~1M logs (in the lake and the spool), with OTLP load running: 200
// heavy LogQL range queries at once, 500 live tails, 200 PromQL and
// Jaeger searches. The peak RSS stays under the ceiling serve logs,
// /readyz answers within a second throughout, OTLP requests keep
// succeeding with a P99 within 3x of their P99 before the storm (or
// 20 ms), and every query either answers or is refused in its API's
// shape with a Retry-After. Then the same query twenty times at once
// answers as alone (or is refused so), and a query whose client goes
// away stops within a second.
func TestQueryStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 1M logs and runs ~1,000 queries")
	}
	p := startServeProc(t, t.TempDir(), strings.Fields(os.Getenv("STORM_FLAGS"))...)
	defer p.stop(t)
	pid := p.cmd.Process.Pid
	m := regexp.MustCompile(`ceiling_bytes=(\d+)`).FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("serve logged no ceiling:\n%s", p.stderr)
	}
	ceiling, _ := strconv.ParseInt(m[1], 10, 64)
	admin := "http://" + p.addrs["admin HTTP"]
	now := time.Now()
	base := now.Add(-30 * time.Minute)
	began := time.Now()
	stormLoad(t, p.addrs["OTLP/HTTP"], base)
	t.Logf("loaded 1M logs in %v; RSS %d MiB", time.Since(began).Round(time.Millisecond), procKiB(t, pid, "VmRSS")>>20)

	// OTLP latency unloaded, once the lake loader has caught up (it
	// keeps the last batch for up to a minute): small requests, one at a
	// time.
	for deadline := time.Now().Add(time.Minute); metricValue(t, admin, "wirehouse_lake_lag_records", "") > 100_000; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lake loader did not catch up in a minute")
		}
	}
	small := synth.Logs(synth.Config{Seed: 999_999, Resources: 1, ScopesPerResource: 1, TotalRecords: 50, Start: now})
	otlpURL := "http://" + p.addrs["OTLP/HTTP"] + "/v1/logs"
	exportOnce := func() (time.Duration, error) {
		t0 := time.Now()
		resp, err := http.Post(otlpURL, "application/x-protobuf", bytes.NewReader(small))
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("OTLP export: %s", resp.Status)
		}
		return time.Since(t0), nil
	}
	var unloaded []time.Duration
	for range 300 {
		d, err := exportOnce()
		if err != nil {
			t.Fatal(err)
		}
		unloaded = append(unloaded, d)
		time.Sleep(10 * time.Millisecond)
	}
	unloadedP99 := p99(unloaded)

	stormCtx, endStorm := context.WithCancel(context.Background())
	defer endStorm()
	var bg sync.WaitGroup
	// OTLP load throughout.
	var otlpMu sync.Mutex
	var loaded []time.Duration
	var otlpErrs []error
	bg.Go(func() {
		for stormCtx.Err() == nil {
			d, err := exportOnce()
			otlpMu.Lock()
			if err != nil {
				otlpErrs = append(otlpErrs, err)
			} else {
				loaded = append(loaded, d)
			}
			otlpMu.Unlock()
			time.Sleep(10 * time.Millisecond)
		}
	})
	// /readyz every 250 ms, each within a second.
	var readyFails atomic.Int64
	var readySlowest atomic.Int64
	bg.Go(func() {
		c := &http.Client{Timeout: time.Second}
		for stormCtx.Err() == nil {
			t0 := time.Now()
			resp, err := c.Get(admin + "/readyz")
			if err != nil || resp.StatusCode != http.StatusOK {
				readyFails.Add(1)
			}
			if err == nil {
				resp.Body.Close()
			}
			if d := int64(time.Since(t0)); d > readySlowest.Load() {
				readySlowest.Store(d)
			}
			time.Sleep(250 * time.Millisecond)
		}
	})

	// Answers by API and status; a refusal without Retry-After counts
	// as "no Retry-After".
	var ansMu, reasonMu sync.Mutex
	answers := map[string]map[string]int{}
	reasons := map[string]int{}
	note := func(api string, resp *http.Response, err error) {
		key := ""
		switch {
		case err != nil:
			key = "error: " + err.Error()
		case resp.StatusCode == http.StatusOK:
			key = "200"
		case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
			key = strconv.Itoa(resp.StatusCode)
			if resp.Header.Get("Retry-After") == "" {
				key += " no Retry-After"
			}
			b, _ := io.ReadAll(resp.Body)
			reasonMu.Lock()
			reasons[api+" "+key+" "+string(bytes.TrimSpace(b))]++
			reasonMu.Unlock()
		default:
			b, _ := io.ReadAll(resp.Body)
			key = fmt.Sprintf("%d %s", resp.StatusCode, bytes.TrimSpace(b))
		}
		ansMu.Lock()
		if answers[api] == nil {
			answers[api] = map[string]int{}
		}
		answers[api][key]++
		ansMu.Unlock()
	}
	get := func(api, u string) {
		c := &http.Client{Timeout: 3 * time.Minute}
		resp, err := c.Get(u)
		note(api, resp, err)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}

	// 500 live tails, of five queries.
	wsBase := "ws" + strings.TrimPrefix(admin, "http") + "/loki/api/v1/tail?"
	var tails []*websocket.Conn
	for i := range 500 {
		u := wsBase + url.Values{"query": {fmt.Sprintf(`{service_name=~".+"} |= "tail-%d"`, i%5)}}.Encode()
		conn, resp, err := websocket.DefaultDialer.Dial(u, nil)
		if err != nil {
			if resp == nil {
				note("loki tail", nil, err)
				continue
			}
			note("loki tail", resp, nil)
			continue
		}
		note("loki tail", &http.Response{StatusCode: http.StatusOK}, nil)
		tails = append(tails, conn)
		bg.Go(func() {
			for {
				if _, _, err := conn.ReadMessage(); err != nil {
					return
				}
			}
		})
	}
	// A regex after a parser: evaluated on every decoded record (a |~
	// before any parser is tested on the lake's body column, and answers
	// too fast to be heavy).
	rangeQ := url.Values{
		"query": {`{service_name=~".+"} | logfmt |~ "(a+)+$"`},
		"start": {strconv.FormatInt(base.Add(-time.Minute).UnixNano(), 10)}, "end": {strconv.FormatInt(time.Now().UnixNano(), 10)},
	}.Encode()
	var storm sync.WaitGroup
	for range 200 {
		storm.Go(func() { get("loki query_range", admin+"/loki/api/v1/query_range?"+rangeQ) })
	}
	promQ := url.Values{
		"query": {`count by (__name__) ({__name__=~".+"})`},
		"start": {strconv.FormatInt(base.Unix(), 10)}, "end": {strconv.FormatInt(time.Now().Unix(), 10)}, "step": {"15"},
	}.Encode()
	for i := range 200 {
		if i%2 == 0 {
			storm.Go(func() { get("prometheus query_range", admin+"/api/v1/query_range?"+promQ) })
		} else {
			storm.Go(func() { get("jaeger search", admin+"/jaeger/api/traces?service=checkout&limit=20&lookback=1h") })
		}
	}
	storm.Wait()
	for _, c := range tails {
		c.Close()
	}
	endStorm()
	bg.Wait()
	peak := procKiB(t, pid, "VmHWM")
	otlpMu.Lock()
	loadedP99 := p99(loaded)
	otlpMu.Unlock()
	t.Logf("storm of %v: peak RSS %d MiB (ceiling %d MiB); OTLP P99 %v during, %v before (%d requests, %d failed); slowest /readyz %v, %d failed",
		time.Since(began).Round(time.Second), peak>>20, ceiling>>20, loadedP99, unloadedP99, len(loaded), len(otlpErrs),
		time.Duration(readySlowest.Load()), readyFails.Load())
	for api, byKey := range answers {
		t.Logf("%-24s %v", api, byKey)
	}
	for r, n := range reasons {
		t.Logf("%5d × %.300s", n, r)
	}
	if peak > ceiling {
		t.Errorf("peak RSS %d MiB over the logged ceiling of %d MiB", peak>>20, ceiling>>20)
	}
	if readyFails.Load() > 0 {
		t.Errorf("/readyz failed or took over a second %d times", readyFails.Load())
	}
	if len(otlpErrs) > 0 {
		t.Errorf("OTLP exports failed during the storm: %v", otlpErrs[0])
	}
	if limit := max(3*unloadedP99, 20*time.Millisecond); loadedP99 > limit {
		t.Errorf("OTLP P99 %v during the storm, over %v (3x the %v before it)", loadedP99, limit, unloadedP99)
	}
	answered := 0
	for api, byKey := range answers {
		for k, n := range byKey {
			switch k {
			case "200":
				if api != "loki tail" {
					answered += n
				}
			case "429", "503":
			default:
				t.Errorf("%s: %d answered %q: want 200, or 429/503 with a Retry-After", api, n, k)
			}
		}
	}
	if answered == 0 {
		t.Error("no query of the storm was answered")
	}

	t.Run("twenty at once", func(t *testing.T) {
		q := url.Values{
			"query": {`sum by (service_name) (count_over_time({service_name=~".+"} |= "e" [5m]))`},
			"start": {strconv.FormatInt(base.Unix(), 10)}, "end": {strconv.FormatInt(now.Unix(), 10)}, "step": {"60"},
		}.Encode()
		run := func() (int, string, string) {
			resp, err := http.Get(admin + "/loki/api/v1/query_range?" + q)
			if err != nil {
				return 0, "", err.Error()
			}
			defer resp.Body.Close()
			var body struct {
				Data struct {
					Result json.RawMessage `json:"result"`
				} `json:"data"`
			}
			b, _ := io.ReadAll(resp.Body)
			json.Unmarshal(b, &body)
			return resp.StatusCode, resp.Header.Get("Retry-After"), string(body.Data.Result)
		}
		code, _, alone := run()
		if code != http.StatusOK || len(alone) < 10 {
			resp, err := http.Get(admin + "/loki/api/v1/query_range?" + q)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Logf("again: %d %.500s", resp.StatusCode, b)
			}
			t.Fatalf("alone: %d %.200s", code, alone)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := map[string]int{}
		for range 20 {
			wg.Go(func() {
				code, retry, res := run()
				key := strconv.Itoa(code)
				switch {
				case code == http.StatusOK && res != alone:
					key = "200 with another answer"
				case code == http.StatusTooManyRequests && retry == "":
					key = "429 without Retry-After"
				}
				mu.Lock()
				got[key]++
				mu.Unlock()
			})
		}
		wg.Wait()
		t.Logf("twenty at once: %v", got)
		for k, n := range got {
			if k != "200" && k != "429" {
				t.Errorf("%d answered %s", n, k)
			}
		}
	})

	t.Run("client gone", func(t *testing.T) {
		before := metricValue(t, admin, "wirehouse_queries_canceled_total", "")
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, admin+"/loki/api/v1/query_range?"+rangeQ, nil)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		for deadline := time.Now().Add(10 * time.Second); metricValue(t, admin, "wirehouse_queries_running", "") == 0; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the query never ran")
			}
		}
		time.Sleep(300 * time.Millisecond)
		cancel()
		<-done
		gone := time.Now()
		for metricValue(t, admin, "wirehouse_queries_running", "") != 0 {
			if time.Since(gone) > time.Second {
				t.Fatalf("the query still runs %v after its client went away", time.Since(gone))
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("stopped %v after its client went away", time.Since(gone).Round(time.Millisecond))
		if after := metricValue(t, admin, "wirehouse_queries_canceled_total", ""); after != before+1 {
			t.Errorf("wirehouse_queries_canceled_total %v -> %v, want one more", before, after)
		}
	})
}
