//go:build linux

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/wirehouse/wirehouse/internal/dirlock"
	"github.com/wirehouse/wirehouse/internal/diskfull"
)

// dirState maps every file under dir to its size and checksum, and every
// directory to "dir".
func dirState(t *testing.T, dir string) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			state[p] = "dir"
			return nil
		}
		if p == filepath.Join(dir, dirlock.FileName) {
			// The data directory's lock holds the PID of the last
			// process to take it: every start rewrites it.
			state[p] = "lock"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		state[p] = fmt.Sprintf("%d %x", len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// Metrics of the disk-full test: request i of worker w holds a point at
// dfAt+i ms in each of dfSeries series {w, k} of the gauge dfull.
const (
	dfMetricWorkers = 2
	dfSeries        = 50
)

// metricAcks counts the metrics requests of the disk-full test: OTLP,
// and remote write of series rw_dfull{seq} at the test's start time.
type metricAcks struct {
	mu      sync.Mutex
	next    [dfMetricWorkers]int
	acked   [dfMetricWorkers][]int
	refused int // 503
	other   []string
	rwNext  int
	rwAcked []int
	rw      map[int]int // remote write answers by status
}

func (a *metricAcks) points() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, r := range a.acked {
		n += len(r) * dfSeries
	}
	return n
}

func (a *metricAcks) refusals() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.refused
}

func metricsRequest(t *testing.T, at time.Time, w, i int) []byte {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "disk-full")
	rm.Resource().Attributes().PutStr("service.instance.id", strconv.Itoa(w)) // a target_info series per worker
	g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("dfull")
	gauge := g.SetEmptyGauge()
	for k := range dfSeries {
		p := gauge.DataPoints().AppendEmpty()
		p.Attributes().PutInt("w", int64(w))
		p.Attributes().PutInt("k", int64(k))
		p.SetTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Duration(i) * time.Millisecond)))
		p.SetDoubleValue(float64(i) + float64(k)/7)
	}
	b, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sendMetricsUntil posts worker w's requests to p until ctx ends, and
// records which were acknowledged (200 without a partial success).
func sendMetricsUntil(ctx context.Context, t *testing.T, p *serveProc, at time.Time, w int, a *metricAcks) {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	for ctx.Err() == nil {
		a.mu.Lock()
		i := a.next[w]
		a.next[w]++
		a.mu.Unlock()
		resp, err := client.Post("http://"+p.addrs["OTLP/HTTP"]+"/v1/metrics", "application/x-protobuf", bytes.NewReader(metricsRequest(t, at, w, i)))
		if err != nil {
			continue // the server was killed
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		a.mu.Lock()
		switch {
		case resp.StatusCode == http.StatusOK && len(body) == 0:
			a.acked[w] = append(a.acked[w], i)
		case resp.StatusCode == http.StatusServiceUnavailable:
			a.refused++
			a.mu.Unlock()
			time.Sleep(5 * time.Millisecond) // as a client honouring Retry-After would, faster
			continue
		default:
			a.other = append(a.other, fmt.Sprintf("HTTP %d %q", resp.StatusCode, body))
		}
		a.mu.Unlock()
	}
}

// remoteWriteUntil remote-writes 5 new series at a time to p until ctx
// ends, and records the acknowledged ones (204).
func remoteWriteUntil(ctx context.Context, t *testing.T, p *serveProc, at time.Time, a *metricAcks) {
	for ctx.Err() == nil {
		a.mu.Lock()
		seqs := []int{a.rwNext, a.rwNext + 1, a.rwNext + 2, a.rwNext + 3, a.rwNext + 4}
		a.rwNext += 5
		a.mu.Unlock()
		code := remoteWrite(t, p.addrs["admin HTTP"], "rw_dfull", seqs, at)
		a.mu.Lock()
		if a.rw == nil {
			a.rw = map[int]int{}
		}
		a.rw[code]++
		if code == http.StatusNoContent {
			a.rwAcked = append(a.rwAcked, seqs...)
		}
		a.mu.Unlock()
		if code != http.StatusNoContent {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// check queries every dfull and rw_dfull sample through serve's PromQL
// API and checks that every acknowledged point is there.
func (a *metricAcks) check(t *testing.T, p *serveProc, at time.Time, when string) {
	t.Helper()
	params := url.Values{"query": {"dfull[1h]"}, "time": {strconv.FormatInt(at.Add(30*time.Minute).Unix(), 10)}}
	resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/api/v1/query?" + params.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Values [][2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" {
		t.Fatalf("%s: query: HTTP %d %v %s", when, resp.StatusCode, err, out.Status)
	}
	stored := map[string]bool{}
	for _, r := range out.Data.Result {
		for _, v := range r.Values {
			ms := int64(math.Round(v[0].(float64) * 1000))
			stored[r.Metric["w"]+"/"+r.Metric["k"]+"@"+strconv.FormatInt(ms, 10)] = true
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	missing, acked := 0, 0
	for w, reqs := range a.acked {
		for _, i := range reqs {
			ms := at.Add(time.Duration(i) * time.Millisecond).UnixMilli()
			for k := range dfSeries {
				acked++
				if !stored[fmt.Sprintf("%d/%d@%d", w, k, ms)] {
					missing++
				}
			}
		}
	}
	t.Logf("metrics %s: %d points acknowledged, %d stored, %d acknowledged missing (%d requests refused with 503)",
		when, acked, len(stored), missing, a.refused)
	if missing > 0 {
		t.Errorf("metrics %s: %d of %d acknowledged points missing", when, missing, acked)
	}
	if len(a.other) > 0 {
		t.Errorf("metrics %s: unexpected answers: %q", when, a.other[:min(len(a.other), 5)])
	}
	got := promQueryAt(t, p.addrs["admin HTTP"], "rw_dfull", strconv.FormatInt(at.Unix()+1, 10))
	missing = 0
	for _, i := range a.rwAcked {
		if v, ok := got[strconv.Itoa(i)]; !ok || v != float64(i) {
			missing++
		}
	}
	t.Logf("remote write %s: %d samples acknowledged, %d stored, %d acknowledged missing (answers by status %v)",
		when, len(a.rwAcked), len(got), missing, a.rw)
	if missing > 0 {
		t.Errorf("remote write %s: %d of %d acknowledged samples missing", when, missing, len(a.rwAcked))
	}
	for code := range a.rw {
		if code != http.StatusNoContent && code != http.StatusServiceUnavailable && code != http.StatusInternalServerError && code != 0 {
			t.Errorf("remote write %s: HTTP %d answered", when, code)
		}
	}
}

// checkLake checks that every acknowledged log and span is in the lake.
func (a *acked) checkLake(t *testing.T, data, when string) {
	t.Helper()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, tc := range []struct {
		signal string
		acked  []int64
	}{{"logs", a.logs}, {"traces", a.span}} {
		got := lakeIDs(t, filepath.Join(data, "lake"), tc.signal)
		missing, dup := 0, 0
		for _, id := range tc.acked {
			if got[id] == 0 {
				missing++
			}
		}
		for _, n := range got {
			if n > 1 {
				dup++
			}
		}
		t.Logf("%s %s: %d acknowledged, %d ids in the lake, %d acknowledged missing, %d duplicated", tc.signal, when, len(tc.acked), len(got), missing, dup)
		if missing > 0 {
			t.Errorf("%s %s: %d of %d acknowledged records missing from the lake", tc.signal, when, missing, len(tc.acked))
		}
	}
}

func (a *acked) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.logs) + len(a.span)
}

// pollUntil polls cond every 10 ms until it holds, failing the test after
// limit (a bound on a hang, not a timed assertion).
func pollUntil(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, limit)
		}
	}
}

// lakeCaughtUp reports whether p's lake loader has committed every
// spooled record.
func lakeCaughtUp(p *serveProc) bool {
	resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(b), "\nwirehouse_lake_lag_records 0\n")
}

// scrapeMetrics returns p's /metrics.
func scrapeMetrics(t *testing.T, p *serveProc) string {
	t.Helper()
	resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// diskFullLoad runs the senders of the three signals against p until stop is
// called.
type diskFullLoad struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startDiskFullLoad(t *testing.T, p *serveProc, at time.Time, m *metricAcks, lt *acked, next func() int64) *diskFullLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &diskFullLoad{cancel: cancel}
	for w := range dfMetricWorkers {
		l.wg.Go(func() { sendMetricsUntil(ctx, t, p, at, w, m) })
	}
	l.wg.Go(func() { remoteWriteUntil(ctx, t, p, at, m) })
	for _, tc := range [][2]string{{"grpc", "logs"}, {"http", "logs"}, {"grpc", "traces"}, {"http", "traces"}} {
		l.wg.Go(func() { sendUntil(ctx, t, p, tc[0], tc[1], next, lt) })
	}
	return l
}

func (l *diskFullLoad) stop() {
	l.cancel()
	l.wg.Wait()
	http.DefaultClient.CloseIdleConnections()
}

// TestServeDiskFull runs serve on a small tmpfs and fills it while
// metrics, logs and traces are sent: metrics are refused with 503 from the
// first failed WAL write until the store has reopened its TSDB, after the
// space came back; then the disk is filled again and serve killed. A
// start on the full disk fails, saying why, and changes nothing; once
// space is back, serve starts, and every acknowledged point is queryable
// and every acknowledged log and span in the lake, again after a
// restart.
func TestServeDiskFull(t *testing.T) {
	root := diskfull.Tmpfs(t, 48<<20)
	data := filepath.Join(root, "data")
	filler := filepath.Join(root, "filler")
	args := []string{"--lake-max-delay", "200ms", "--spool-segment-size", "1MiB"}
	start := func() *serveProc {
		p := startServeProc(t, data, args...)
		t.Cleanup(func() { p.cmd.Process.Kill(); p.cmd.Wait() }) // before the unmount
		return p
	}
	at := time.Now().Add(-10 * time.Minute).Truncate(time.Second)
	var (
		m    metricAcks
		lt   acked
		idMu sync.Mutex
		id   int64
	)
	next := func() int64 {
		idMu.Lock()
		defer idMu.Unlock()
		id++
		return id
	}

	// Fill the disk under load, then free it.
	p := start()
	l := startDiskFullLoad(t, p, at, &m, &lt, next)
	pollUntil(t, 10*time.Second, "requests acknowledged", func() bool { return m.points() > 2000 && lt.count() > 2000 })
	diskfull.Fill(t, filler)
	pollUntil(t, 10*time.Second, "metrics refused on the full disk", func() bool { return m.refusals() > 0 })
	os.Remove(filler)
	acked, logs := m.points(), lt.count()
	pollUntil(t, 20*time.Second, "metrics, logs and traces acknowledged after space returned", func() bool {
		return m.points() > acked+dfSeries*dfMetricWorkers*10 && lt.count() > logs
	})
	if !strings.Contains(p.stderr.String(), "reopened the TSDB") {
		t.Errorf("no reopen in the log:\n%s", p.stderr)
	}
	if metrics := scrapeMetrics(t, p); !strings.Contains(metrics, "\nwirehouse_metricstore_accepting 1\n") ||
		strings.Contains(metrics, "\nwirehouse_metricstore_reopens_total 0\n") {
		t.Errorf("/metrics after the reopen:\n%s", grepLines(metrics, "wirehouse_metricstore_"))
	}
	l.stop()
	m.check(t, p, at, "after space returned")

	// Fill it again, and kill serve while it is full.
	l = startDiskFullLoad(t, p, at, &m, &lt, next)
	diskfull.Fill(t, filler)
	refused := m.refusals()
	pollUntil(t, 10*time.Second, "metrics refused on the full disk again", func() bool { return m.refusals() > refused })
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	l.stop()

	// A start on the full disk fails and changes nothing.
	diskfull.Fill(t, filler) // what the kill freed, if anything
	before := dirState(t, data)
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--data-dir", data, "--grpc-listen", "127.0.0.1:0",
		"--http-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--jaeger-storage-listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), "WIREHOUSE_TEST_MAIN=1")
	out, err := cmd.CombinedOutput()
	msg := string(out)
	if err == nil || !strings.Contains(msg, "not enough free space for the metric store in "+filepath.Join(data, "metrics")) ||
		!strings.Contains(msg, "free space on its file system and start again") {
		t.Errorf("serve on a full disk: %v\n%s", err, msg)
	}
	t.Logf("serve on a full disk: %v: %s", err, strings.TrimSpace(msg[strings.LastIndex(strings.TrimSpace(msg), "\n")+1:]))
	if after := dirState(t, data); !maps.Equal(before, after) {
		for k, v := range after {
			if before[k] != v {
				t.Errorf("the refused start changed %s: %q, was %q", k, v, before[k])
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				t.Errorf("the refused start removed %s", k)
			}
		}
	}

	// Space is back: everything acknowledged is there, and again after a
	// clean restart.
	os.Remove(filler)
	p = start()
	t.Logf("the start zeroed %d torn WAL records; Prometheus repaired %d segments",
		strings.Count(p.stderr.String(), "zeroed a torn"), strings.Count(p.stderr.String(), "Successfully repaired WAL"))
	m.check(t, p, at, "after a start once space returned")
	pollUntil(t, 20*time.Second, "the lake caught up with the spool", func() bool { return lakeCaughtUp(p) })
	p.stop(t)
	lt.checkLake(t, data, "after a start once space returned")
	p = start()
	m.check(t, p, at, "after a restart")
	p.stop(t)
	lt.checkLake(t, data, "after a restart")
}
