package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/parquet-go/parquet-go"
	"github.com/prometheus/prometheus/prompb"
	"github.com/wirehouse/wirehouse/internal/lake"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/log/logtest"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/wirehouse/wirehouse/internal/syncbuf"
)

// serveProc is a `wirehouse serve` child process (this test binary run
// as the command, see TestMain).
type serveProc struct {
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	addrs  map[string]string
}

func startServeProc(t *testing.T, dataDir string, extra ...string) *serveProc {
	t.Helper()
	return startServeProcEnv(t, nil, dataDir, extra...)
}

// startServeProcEnv is startServeProc with env (KEY=value) added to the
// process's environment.
func startServeProcEnv(t *testing.T, env []string, dataDir string, extra ...string) *serveProc {
	t.Helper()
	args := append([]string{"serve", "--data-dir", dataDir, "--grpc-listen", "127.0.0.1:0",
		"--http-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--jaeger-storage-listen", "127.0.0.1:0"}, extra...)
	p := &serveProc{cmd: exec.Command(os.Args[0], args...), stderr: &syncbuf.Buffer{}}
	p.cmd.Env = append(append(os.Environ(), env...), "WIREHOUSE_TEST_MAIN=1")
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`msg="serving (OTLP/gRPC|OTLP/HTTP|admin HTTP|Jaeger remote storage gRPC)" addr=(\S+)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		addrs := map[string]string{}
		for _, m := range re.FindAllStringSubmatch(p.stderr.String(), -1) {
			addrs[m[1]] = m[2]
		}
		if len(addrs) == 4 {
			p.addrs = addrs
			return p
		}
	}
	p.cmd.Process.Kill()
	p.cmd.Wait()
	t.Fatalf("serve did not start:\n%s", p.stderr)
	return nil
}

// acked collects the ids of records whose request was acknowledged.
type acked struct {
	mu   sync.Mutex
	logs []int64
	span []int64
	// pause, if set, is the rest between batches, for tests that want a
	// steady load rather than all a core can send.
	pause time.Duration
}

// sendUntil sends batches of 20 records, each with a unique test.id, with
// the OpenTelemetry Go SDK's OTLP exporter for signal over transport
// (called directly, retries off, so each Export call's result is the
// acknowledgement of exactly its records) until ctx ends, and records the
// ids of acknowledged batches.
func sendUntil(ctx context.Context, t *testing.T, p *serveProc, transport, signal string, next func() int64, a *acked) {
	res := resource.NewSchemaless(attribute.String("service.name", "kill-test"))
	var (
		logExp  sdklog.Exporter
		spanExp sdktrace.SpanExporter
		err     error
	)
	grpcEP, httpEP := p.addrs["OTLP/gRPC"], p.addrs["OTLP/HTTP"]
	switch transport + "/" + signal {
	case "grpc/logs":
		logExp, err = otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(grpcEP), otlploggrpc.WithInsecure(),
			otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}), otlploggrpc.WithTimeout(5*time.Second))
	case "http/logs":
		logExp, err = otlploghttp.New(ctx, otlploghttp.WithEndpoint(httpEP), otlploghttp.WithInsecure(),
			otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}), otlploghttp.WithTimeout(5*time.Second))
	case "grpc/traces":
		spanExp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(grpcEP), otlptracegrpc.WithInsecure(),
			otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}), otlptracegrpc.WithTimeout(5*time.Second))
	case "http/traces":
		spanExp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(httpEP), otlptracehttp.WithInsecure(),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}), otlptracehttp.WithTimeout(5*time.Second))
	}
	if err != nil {
		t.Error(err)
		return
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if logExp != nil {
			logExp.Shutdown(sctx)
		} else {
			spanExp.Shutdown(sctx)
		}
	}()
	for ctx.Err() == nil {
		ids := make([]int64, 20)
		for i := range ids {
			ids[i] = next()
		}
		now := time.Now()
		if logExp != nil {
			recs := make([]sdklog.Record, len(ids))
			for i, id := range ids {
				recs[i] = logtest.RecordFactory{
					Timestamp:  now,
					Body:       attribute.StringValue(fmt.Sprint("record ", id)),
					Attributes: []attribute.KeyValue{attribute.Int64("test.id", id)},
					Resource:   res,
				}.NewRecord()
			}
			err = logExp.Export(ctx, recs)
		} else {
			stubs := make(tracetest.SpanStubs, len(ids))
			for i, id := range ids {
				stubs[i] = tracetest.SpanStub{
					Name: "op",
					SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
						TraceID: trace.TraceID{1, byte(id >> 16), byte(id >> 8), byte(id)},
						SpanID:  trace.SpanID{2, byte(id >> 16), byte(id >> 8), byte(id)},
					}),
					StartTime:  now,
					EndTime:    now.Add(time.Millisecond),
					Attributes: []attribute.KeyValue{attribute.Int64("test.id", id)},
					Resource:   res,
				}
			}
			err = spanExp.ExportSpans(ctx, stubs.Snapshots())
		}
		if a.pause > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(a.pause):
			}
		}
		if err == nil {
			a.mu.Lock()
			if signal == "logs" {
				a.logs = append(a.logs, ids...)
			} else {
				a.span = append(a.span, ids...)
			}
			a.mu.Unlock()
		}
	}
}

// lakeIDs reads the test.id attribute of every row of the signal's
// Parquet files and counts each id.
func lakeIDs(t *testing.T, root, signal string) map[int64]int {
	t.Helper()
	ids := map[int64]int{}
	for _, p := range parquetFiles(t, filepath.Join(root, signal)) {
		for _, attrs := range lakeAttributes(t, p) {
			if v := attrs["test.id"]; v != nil {
				id, err := strconv.ParseInt(*v, 10, 64)
				if err != nil {
					t.Fatalf("%s: test.id %q: %v", p, *v, err)
				}
				ids[id]++
			}
		}
	}
	return ids
}

// lakeAttributes reads the record attributes of every row of the lake
// file p: its map's and, in a logs file of schema version 3, its key
// columns' (lake.KeyColumns), as text.
func lakeAttributes(t *testing.T, p string) []map[string]*string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	type row struct {
		Attributes map[string]*string `parquet:"attributes"`
	}
	rows := make([]row, pf.NumRows())
	if n, err := parquet.NewGenericReader[row](pf).Read(rows); int64(n) != pf.NumRows() {
		t.Fatalf("%s: read %d of %d rows: %v", p, n, pf.NumRows(), err)
	}
	out := make([]map[string]*string, len(rows))
	for i, r := range rows {
		out[i] = r.Attributes
		if out[i] == nil {
			out[i] = map[string]*string{}
		}
	}
	keys, err := lake.KeyColumns(pf)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	for _, kc := range keys {
		lc, _ := pf.Schema().Lookup(kc.Name)
		base := 0
		for _, rg := range pf.RowGroups() {
			pages := rg.ColumnChunks()[lc.ColumnIndex].Pages()
			r := base
			for {
				pg, err := pages.ReadPage()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: column %s: %v", p, kc.Name, err)
				}
				vals := make([]parquet.Value, pg.NumValues())
				if n, err := pg.Values().ReadValues(vals); n != len(vals) && err != io.EOF {
					t.Fatalf("%s: column %s: %d of %d values: %v", p, kc.Name, n, len(vals), err)
				}
				for _, v := range vals {
					if !v.IsNull() {
						s := v.String()
						if kc.Kind == lake.KindDouble {
							s = strconv.FormatFloat(v.Double(), 'g', -1, 64)
						}
						out[r][kc.Key] = &s
					}
					r++
				}
			}
			pages.Close()
			base += int(rg.NumRows())
		}
	}
	return out
}

// TestServeKill9Lake sends logs and spans over gRPC and HTTP with the
// OpenTelemetry Go SDK's exporters, each record with a unique id, kills the server with SIGKILL mid-stream and restarts
// it, 20 times; then stops it cleanly and checks that every acknowledged
// record is in the Parquet lake exactly once, and that no record is there
// twice. With WIREHOUSE_PYTHON (make test) DuckDB counts the same.
func TestServeKill9Lake(t *testing.T) {
	data := t.TempDir()
	var (
		a    acked
		idMu sync.Mutex
		id   int64
	)
	next := func() int64 {
		idMu.Lock()
		defer idMu.Unlock()
		id++
		return id
	}
	const cycles = 20
	for cycle := range cycles {
		p := startServeProc(t, data, "--lake-max-delay", "300ms")
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, tc := range [][2]string{{"grpc", "logs"}, {"http", "logs"}, {"grpc", "traces"}, {"http", "traces"}} {
			wg.Go(func() { sendUntil(ctx, t, p, tc[0], tc[1], next, &a) })
		}
		time.Sleep(time.Duration(100+rand.IntN(300)) * time.Millisecond)
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.cmd.Wait()
		cancel()
		wg.Wait()
		if cycle == 0 && len(a.logs) == 0 {
			t.Fatalf("nothing acknowledged in the first cycle:\n%s", p.stderr)
		}
	}
	// A last run drains the spool into the lake and stops cleanly.
	p := startServeProc(t, data, "--lake-max-delay", "300ms")
	time.Sleep(time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, p.stderr)
	}
	root := filepath.Join(data, "lake")
	for _, tc := range []struct {
		signal string
		acked  []int64
	}{{"logs", a.logs}, {"traces", a.span}} {
		got := lakeIDs(t, root, tc.signal)
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
		t.Logf("%s: %d acknowledged over %d kill -9 cycles, %d ids in the lake, %d acknowledged missing, %d duplicated",
			tc.signal, len(tc.acked), cycles, len(got), missing, dup)
		if missing > 0 || dup > 0 {
			t.Errorf("%s: %d acknowledged records missing, %d records duplicated", tc.signal, missing, dup)
		}
	}
	if python := os.Getenv("WIREHOUSE_PYTHON"); python != "" {
		script := `import duckdb, json, sys
r = {}
for s in ("logs", "traces"):
    tid = "coalesce(CAST(attr_test_id AS VARCHAR), attributes['test.id'])" if s == "logs" else "attributes['test.id']"
    q = f"SELECT count(*), count(DISTINCT {tid}) FROM read_parquet('{sys.argv[1]}/{s}/**/*.parquet', hive_partitioning = true, union_by_name = true)"
    r[s] = con = duckdb.connect().execute(q).fetchone()
print(json.dumps(r))`
		out, err := exec.Command(python, "-c", script, root).CombinedOutput()
		if err != nil {
			t.Fatalf("duckdb: %v\n%s", err, out)
		}
		var counts map[string][2]int
		if err := json.Unmarshal(out, &counts); err != nil {
			t.Fatalf("duckdb output %q: %v", out, err)
		}
		for s, n := range map[string]int{"logs": len(a.logs), "traces": len(a.span)} {
			if c := counts[s]; c[0] != c[1] || c[0] < n {
				t.Errorf("DuckDB %s: %d rows, %d distinct ids, %d acknowledged", s, c[0], c[1], n)
			}
		}
	}
}

// fillSpool posts logs of 100 records, each with a new id, until serve
// answers 429 (with a Retry-After), and returns the ids acknowledged
// before; it fails the test on any other answer, or if the spool never
// fills.
func fillSpool(t *testing.T, p *serveProc) []int64 {
	t.Helper()
	var acked []int64
	for i := int64(0); i < 2000; i++ {
		ids := idRange(1000*i, 100)
		switch code, retry := postLogs(t, p, ids); code {
		case http.StatusOK:
			acked = append(acked, ids...)
		case http.StatusTooManyRequests:
			if retry == "" {
				t.Error("429 without Retry-After")
			}
			return acked
		default:
			t.Fatalf("HTTP %d", code)
		}
	}
	t.Fatalf("the spool never filled after %d acknowledged logs", len(acked))
	return nil
}

// postLogs posts a protobuf logs request of one log per id to serve's
// OTLP/HTTP endpoint and returns the status code and Retry-After.
func postLogs(t *testing.T, p *serveProc, ids []int64) (int, string) {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "spool-test")
	sl := rl.ScopeLogs().AppendEmpty()
	for _, id := range ids {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		lr.Body().SetStr(strings.Repeat("x", 200))
		lr.Attributes().PutInt("test.id", id)
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+p.addrs["OTLP/HTTP"]+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

func (p *serveProc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v\n%s", err, p.stderr)
	}
	http.DefaultClient.CloseIdleConnections()
}

func idRange(from, n int64) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = from + int64(i)
	}
	return ids
}

// TestServeSpoolTornTail: serve is killed, the last record of its spool
// segment is torn (as a power loss can leave it), and the next start
// repairs the segment, says so in its log, and goes on serving; every
// other acknowledged record reaches the lake once.
func TestServeSpoolTornTail(t *testing.T) {
	data := t.TempDir()
	p := startServeProc(t, data, "--lake-max-delay", "1h")
	for i := range int64(10) {
		if code, _ := postLogs(t, p, idRange(100*i, 20)); code != http.StatusOK {
			t.Fatalf("batch %d: HTTP %d", i, code)
		}
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
	segs, _ := filepath.Glob(filepath.Join(data, "spool", "*.seg"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	st, err := os.Stat(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(segs[0], st.Size()-10); err != nil { // cut into the last record (batch 9)
		t.Fatal(err)
	}
	p = startServeProc(t, data, "--lake-max-delay", "200ms")
	if !strings.Contains(p.stderr.String(), "spool: repaired") {
		t.Errorf("no repair in the log:\n%s", p.stderr)
	}
	for i := int64(10); i < 13; i++ {
		if code, _ := postLogs(t, p, idRange(100*i, 20)); code != http.StatusOK {
			t.Fatalf("batch %d after the repair: HTTP %d", i, code)
		}
	}
	time.Sleep(500 * time.Millisecond)
	p.stop(t)
	got := lakeIDs(t, filepath.Join(data, "lake"), "logs")
	for i := range int64(13) {
		for _, id := range idRange(100*i, 20) {
			want := 1
			if i == 9 {
				want = 0 // the torn record
			}
			if got[id] != want {
				t.Fatalf("id %d (batch %d) is in the lake %d times, want %d", id, i, got[id], want)
			}
		}
	}
}

// TestServeSpoolFull: the lake cannot be written (a file stands where
// its logs directory goes), so the spool consumer falls behind until the
// spool reaches its size limit; serve then refuses logs with 429 and a
// Retry-After instead of filling the disk. Once the lake is writable again
// the consumer catches up, serve accepts again, and every acknowledged log
// is in the lake once.
func TestServeSpoolFull(t *testing.T) {
	data := t.TempDir()
	block := filepath.Join(data, "lake", "logs")
	if err := os.MkdirAll(filepath.Dir(block), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServeProc(t, data, "--lake-max-delay", "100ms", "--spool-segment-size", "1MiB", "--spool-max-size", "2MiB")
	acked := fillSpool(t, p)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(p.stderr.String(), "lake write failed"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no failed lake write in the log:\n%s", p.stderr)
		}
	}
	// Still refused: the consumer is stuck, so nothing freed the space.
	for i := int64(0); ; i++ {
		ids := idRange(5_000_000+100*i, 100)
		code, _ := postLogs(t, p, ids)
		if code == http.StatusTooManyRequests {
			break
		}
		if code != http.StatusOK || i == 100 {
			t.Fatalf("HTTP %d while the lake is blocked and the spool full, want 429", code)
		}
		acked = append(acked, ids...)
	}
	if err := os.Remove(block); err != nil {
		t.Fatal(err)
	}
	ok := false
	for i := int64(0); i < 200 && !ok; i++ {
		ids := idRange(10_000_000+100*i, 100)
		if code, _ := postLogs(t, p, ids); code == http.StatusOK {
			acked = append(acked, ids...)
			ok = true
		} else {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !ok {
		t.Fatal("serve still refuses logs after the lake became writable")
	}
	time.Sleep(300 * time.Millisecond)
	p.stop(t)
	got := lakeIDs(t, filepath.Join(data, "lake"), "logs")
	for _, id := range acked {
		if got[id] != 1 {
			t.Fatalf("acknowledged id %d is in the lake %d times", id, got[id])
		}
	}
	t.Logf("%d logs acknowledged before the spool filled, all in the lake once", len(acked))
}

// remoteWrite posts Prometheus remote-write 1.0 samples (snappy protobuf):
// one series name{seq="<i>"} = i per i, at time at, and returns the status.
func remoteWrite(t *testing.T, admin, name string, seqs []int, at time.Time) int {
	t.Helper()
	var wr prompb.WriteRequest
	for _, i := range seqs {
		wr.Timeseries = append(wr.Timeseries, prompb.TimeSeries{
			Labels:  []prompb.Label{{Name: "__name__", Value: name}, {Name: "seq", Value: fmt.Sprint(i)}},
			Samples: []prompb.Sample{{Value: float64(i), Timestamp: at.UnixMilli()}},
		})
	}
	pb, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+admin+"/api/v1/write", bytes.NewReader(snappy.Encode(nil, pb)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0 // the server was killed mid-request
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// promQuery runs an instant query on serve's API and returns the values
// of the result vector by their seq label (or "" when absent).
func promQuery(t *testing.T, admin, query string) map[string]float64 {
	t.Helper()
	return promQueryAt(t, admin, query, "")
}

// promQueryAt is promQuery against the Prometheus API at addr, evaluated at
// time at (Unix seconds; "" for now).
func promQueryAt(t *testing.T, addr, query, at string) map[string]float64 {
	t.Helper()
	return promQueryAuth(t, addr, query, at, "")
}

// promQueryAuth is promQueryAt with a bearer token, if not "".
func promQueryAuth(t *testing.T, addr, query, at, token string) map[string]float64 {
	t.Helper()
	params := url.Values{"query": {query}}
	if at != "" {
		params.Set("time", at)
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/query?"+params.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" {
		t.Fatalf("query %s: HTTP %d %v %+v", query, resp.StatusCode, err, out)
	}
	vals := map[string]float64{}
	for _, r := range out.Data.Result {
		v, _ := strconv.ParseFloat(r.Value[1].(string), 64)
		vals[r.Metric["seq"]] = v
	}
	return vals
}

// TestServeMetricsKill9 writes OTLP metrics, then remote-write samples
// while killing serve with SIGKILL mid-stream and restarting it, 5 times:
// every acknowledged sample is queryable afterwards (from the WAL),
// through the PromQL API and promtool.
func TestServeMetricsKill9(t *testing.T) {
	data := t.TempDir()
	var acked []int
	next := 0
	at := time.Now().Add(-time.Minute).Truncate(time.Second)
	for cycle := range 5 {
		p := startServeProc(t, data)
		if cycle == 0 {
			// OTLP metrics land in the same store, under Prometheus'
			// names. (synth's timestamps are old: they go first, while
			// the TSDB head is empty.)
			stdout, stderr, err := runArgs(t, "load", "--signal", "metrics", "--transport", "grpc", "--endpoint", p.addrs["OTLP/gRPC"], "--count", "3", "--batch", "50", "--json", "--quiet")
			if err != nil || !strings.Contains(stdout, `"records_rejected": 0`) {
				t.Fatalf("load: %v\n%s%s", err, stdout, stderr)
			}
		}
		stop := time.Now().Add(time.Duration(100+rand.IntN(200)) * time.Millisecond)
		for time.Now().Before(stop) {
			seqs := []int{next, next + 1, next + 2, next + 3, next + 4}
			next += 5
			if remoteWrite(t, p.addrs["admin HTTP"], "kill_test", seqs, at) == http.StatusNoContent {
				acked = append(acked, seqs...)
			}
		}
		p.cmd.Process.Signal(syscall.SIGKILL)
		p.cmd.Wait()
		http.DefaultClient.CloseIdleConnections()
	}
	p := startServeProc(t, data)
	got := promQuery(t, p.addrs["admin HTTP"], `kill_test`)
	missing := 0
	for _, i := range acked {
		if v, ok := got[fmt.Sprint(i)]; !ok || v != float64(i) {
			missing++
		}
	}
	t.Logf("%d samples acknowledged over 5 kill -9 cycles, %d queryable after restart, %d missing", len(acked), len(got), missing)
	if len(acked) == 0 || missing > 0 {
		t.Errorf("%d of %d acknowledged samples missing after kill -9", missing, len(acked))
	}
	resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/api/v1/label/__name__/values")
	if err != nil {
		t.Fatal(err)
	}
	names, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`"target_info"`, `"kill_test"`, `_total"`} { // synth's sums are counters
		if !strings.Contains(string(names), want) {
			t.Errorf("metric names after OTLP metrics lack %s: %s", want, names)
		}
	}
	if promtool := os.Getenv("WIREHOUSE_PROMTOOL"); promtool != "" {
		out, err := exec.Command(promtool, "query", "instant", "http://"+p.addrs["admin HTTP"], `count(kill_test)`).CombinedOutput()
		if err != nil || !strings.Contains(string(out), fmt.Sprintf("{} => %d @", len(acked))) {
			t.Errorf("promtool query instant count(kill_test): %v\n%s", err, out)
		}
	}
	p.stop(t)
}
