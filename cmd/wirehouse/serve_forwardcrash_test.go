package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gatewayCrash is one run of the gateway crash scenario: a gateway
// forwards logs and spans to three downstream serve nodes; under load,
// one node is killed with kill -9 for down, then started again; killAfter
// after its return the gateway is killed with kill -9, and started again
// on its data directory until its queue drains.
type gatewayCrash struct {
	down, killAfter time.Duration
	pause           time.Duration // between each sender's batches of 20
	retry           string        // the destination's retry: setting, if not the default
}

// gatewayCrashResult is what a run measured.
type gatewayCrashResult struct {
	logs, spans           int           // acknowledged by the gateway
	lostLogs, lostSpans   int           // acknowledged, on no node
	dupLogs, dupSpans     int           // on the nodes more than once
	crossNode             int           // ids on two nodes
	inFlight              float64       // wirehouse_forward_queue_records just before the kill (requests of 20)
	ageAtReturn, ageAfter float64       // queue age when the node returned, and 3 s after it
	ageFell               time.Duration // from the return until the queue age was under 1 s
}

func (r gatewayCrashResult) String() string {
	fell := "never"
	if r.ageFell >= 0 {
		fell = r.ageFell.Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("logs %d acked, %d lost, %d duplicated (%.1f%%); spans %d acked, %d lost, %d duplicated (%.1f%%); "+
		"%d on two nodes; %.0f requests (of 20) not delivered at the kill; queue age %.1fs at the return, under 1s after %s, %.1fs 3s after",
		r.logs, r.lostLogs, r.dupLogs, pct(r.dupLogs, r.logs), r.spans, r.lostSpans, r.dupSpans, pct(r.dupSpans, r.spans),
		r.crossNode, r.inFlight, r.ageAtReturn, fell, r.ageAfter)
}

func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// run runs the scenario once.
func (sc gatewayCrash) run(t *testing.T) gatewayCrashResult {
	t.Helper()
	var res gatewayCrashResult
	var downs [3]*serveProc
	var addrs, dirs [3]string
	start := func(i int) {
		downs[i] = startServeProc(t, dirs[i], "--grpc-listen", addrs[i], "--lake-max-delay", "300ms")
	}
	for i := range downs {
		dirs[i] = filepath.Join(t.TempDir(), fmt.Sprintf("node%d", i))
		addrs[i] = freeAddr(t)
		start(i)
	}
	gwConfig := filepath.Join(t.TempDir(), "gateway.yaml")
	if err := os.WriteFile(gwConfig, []byte(fmt.Sprintf(`store: {logs: false, traces: false, metrics: false}
forward:
  - name: backends
    signals: [logs, traces]
    endpoints: [%s]
    compression: zstd
%s`, strings.Join(addrs[:], ", "), sc.retry)), 0o644); err != nil {
		t.Fatal(err)
	}
	gwDir := t.TempDir()
	gw := startServeProc(t, gwDir, "--config", gwConfig)
	defer func() {
		for _, p := range append(downs[:], gw) {
			if p != nil && p.cmd.ProcessState == nil {
				p.cmd.Process.Kill()
				p.cmd.Wait()
			}
		}
	}()
	began := time.Now()
	phase := func(what string) { t.Logf("%5.1fs %s", time.Since(began).Seconds(), what) }
	age := func() float64 { return scrapeValue(t, gw.addrs["admin HTTP"], "wirehouse_forward_queue_age_seconds") }

	a := acked{pause: sc.pause}
	var next struct {
		sync.Mutex
		n int64
	}
	nextID := func() int64 {
		next.Lock()
		defer next.Unlock()
		next.n++
		return next.n
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, c := range []struct{ transport, signal string }{{"grpc", "traces"}, {"http", "logs"}} {
		wg.Go(func() { sendUntil(ctx, t, gw, c.transport, c.signal, nextID, &a) })
	}
	time.Sleep(2 * time.Second)
	if err := downs[1].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	downs[1].cmd.Wait()
	phase("node 1 killed")
	time.Sleep(sc.down)
	res.ageAtReturn = age()
	start(1)
	back := time.Now()
	phase(fmt.Sprintf("node 1 back; queue age %.1fs", res.ageAtReturn))
	res.ageFell = -1
	for time.Since(back) < sc.killAfter {
		v := age()
		if res.ageFell < 0 && v < 1 {
			res.ageFell = time.Since(back)
		}
		if res.ageAfter == 0 && time.Since(back) >= 3*time.Second {
			res.ageAfter = v
		}
		time.Sleep(250 * time.Millisecond)
	}
	res.inFlight = scrapeValue(t, gw.addrs["admin HTTP"], "wirehouse_forward_queue_records")
	if err := gw.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	gw.cmd.Wait()
	cancel()
	wg.Wait()
	phase(fmt.Sprintf("gateway killed; %.0f requests not delivered", res.inFlight))

	gw = startServeProc(t, gwDir, "--config", gwConfig)
	deadline := time.Now().Add(60 * time.Second)
	for scrapeValue(t, gw.addrs["admin HTTP"], "wirehouse_forward_queue_records") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway's forward queue did not drain after its restart\n%s", gw.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	phase("gateway restarted, queue drained")
	gw.stop(t)
	for _, p := range downs {
		p.stop(t)
	}

	res.logs, res.spans = len(a.logs), len(a.span)
	for _, c := range []struct {
		signal    string
		ids       []int64
		lost, dup *int
	}{{"logs", a.logs, &res.lostLogs, &res.dupLogs}, {"traces", a.span, &res.lostSpans, &res.dupSpans}} {
		seen := map[int64]int{}
		nodes := map[int64]int{}
		for _, dir := range dirs {
			for id, n := range lakeIDs(t, filepath.Join(dir, "lake"), c.signal) {
				seen[id] += n
				nodes[id]++
			}
		}
		for id, n := range nodes {
			if n > 1 {
				res.crossNode++
				if res.crossNode < 5 {
					t.Logf("%s id %d on %d nodes", c.signal, id, n)
				}
			}
		}
		for _, id := range c.ids {
			if seen[id] == 0 {
				*c.lost++
			}
		}
		for _, n := range seen {
			if n > 1 {
				*c.dup++
			}
		}
	}
	phase("counted: " + res.String())
	return res
}

// TestForwardGatewayCrash is the scenario of issue 40: one downstream
// of three down for 20 s, the gateway killed with kill -9 15 s and 45 s
// after its return, three times each. It takes about 8 minutes, so it
// runs only with WIREHOUSE_FORWARD_CRASH set (scripts/gateway-crash.sh);
// WIREHOUSE_FORWARD_CRASH_RUNS sets the repeats (3), and
// WIREHOUSE_FORWARD_CRASH_AFTER the delays (15s,45s). Nothing acknowledged
// may be lost, and what is delivered twice is what was in flight at the
// kill, a small share.
func TestForwardGatewayCrash(t *testing.T) {
	if os.Getenv("WIREHOUSE_FORWARD_CRASH") == "" {
		t.Skip("WIREHOUSE_FORWARD_CRASH not set (about 8 minutes; scripts/gateway-crash.sh runs it)")
	}
	runs := 3
	if s := os.Getenv("WIREHOUSE_FORWARD_CRASH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("WIREHOUSE_FORWARD_CRASH_RUNS=%q: %v", s, err)
		}
		runs = n
	}
	afters := []time.Duration{15 * time.Second, 45 * time.Second}
	if s := os.Getenv("WIREHOUSE_FORWARD_CRASH_AFTER"); s != "" {
		afters = nil
		for f := range strings.SplitSeq(s, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("WIREHOUSE_FORWARD_CRASH_AFTER=%q: %v", s, err)
			}
			afters = append(afters, d)
		}
	}
	var summary []string
	for _, after := range afters {
		for i := range runs {
			t.Run(fmt.Sprintf("kill=%v/run=%d", after, i+1), func(t *testing.T) {
				r := gatewayCrash{down: 20 * time.Second, killAfter: after, pause: 5 * time.Millisecond}.run(t)
				summary = append(summary, fmt.Sprintf("kill %v after the return, run %d: %v", after, i+1, r))
				r.check(t, 0.05)
			})
		}
	}
	for _, s := range summary {
		t.Log(s)
	}
}

// TestForwardGatewayCrashShort is the scenario in brief, for make test:
// a downstream down for 3 s, the gateway killed 4 s after its return.
// The retries back off 7.5 s to 22.5 s, so that without the probe none
// would go before the kill: everything sent since the node went down
// would be sent again.
func TestForwardGatewayCrashShort(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	t.Parallel() // mostly waiting
	r := gatewayCrash{down: 3 * time.Second, killAfter: 4 * time.Second, pause: 10 * time.Millisecond,
		retry: "    retry: {initial_interval: 15s, max_interval: 15s}\n"}.run(t)
	t.Log(r)
	r.check(t, 0.10)
}

// check fails t if anything acknowledged was lost, an id is on two nodes,
// more than maxDup of the logs or spans were delivered twice, or the
// queue age was not under 1 s within 3 s of the node's return.
func (r gatewayCrashResult) check(t *testing.T, maxDup float64) {
	t.Helper()
	if r.logs == 0 || r.spans == 0 {
		t.Fatalf("nothing acknowledged: %v", r)
	}
	if r.lostLogs > 0 || r.lostSpans > 0 {
		t.Errorf("acknowledged records lost: %d logs, %d spans", r.lostLogs, r.lostSpans)
	}
	if r.crossNode > 0 {
		t.Errorf("%d ids on two nodes", r.crossNode)
	}
	if d := pct(r.dupLogs, r.logs); d > 100*maxDup {
		t.Errorf("%.1f%% of the logs delivered twice, want at most %.0f%%", d, 100*maxDup)
	}
	if d := pct(r.dupSpans, r.spans); d > 100*maxDup {
		t.Errorf("%.1f%% of the spans delivered twice, want at most %.0f%%", d, 100*maxDup)
	}
	if r.ageFell < 0 || r.ageFell > 3*time.Second {
		t.Errorf("the queue age was under 1 s %v after the node's return, want within 3 s", r.ageFell)
	}
}
