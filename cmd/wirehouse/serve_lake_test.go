package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// serveProc is a `wirehouse serve` child process (this test binary run
// as the command, see TestMain).
type serveProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	addrs  map[string]string
}

func startServeProc(t *testing.T, dataDir string, extra ...string) *serveProc {
	t.Helper()
	args := append([]string{"serve", "--data-dir", dataDir, "--grpc-listen", "127.0.0.1:0",
		"--http-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, extra...)
	p := &serveProc{cmd: exec.Command(os.Args[0], args...), stderr: &syncBuffer{}}
	p.cmd.Env = append(os.Environ(), "WIREHOUSE_TEST_MAIN=1")
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`msg="serving (OTLP/gRPC|OTLP/HTTP|admin HTTP)" addr=(\S+)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		addrs := map[string]string{}
		for _, m := range re.FindAllStringSubmatch(p.stderr.String(), -1) {
			addrs[m[1]] = m[2]
		}
		if len(addrs) == 3 {
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
}

// sendUntil sends requests of 20 records, each with a unique test.id, over
// transport until ctx ends, and records the ids of acknowledged requests.
func sendUntil(ctx context.Context, t *testing.T, p *serveProc, transport, signal string, next func() int64, a *acked) {
	var cc *grpc.ClientConn
	if transport == "grpc" {
		var err error
		cc, err = grpc.NewClient(p.addrs["OTLP/gRPC"], grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Error(err)
			return
		}
		defer cc.Close()
	}
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	for ctx.Err() == nil {
		ids := make([]int64, 20)
		for i := range ids {
			ids[i] = next()
		}
		var ok bool
		switch signal {
		case "logs":
			req := plogotlp.NewExportRequestFromLogs(idLogs(ids))
			if cc != nil {
				_, err := plogotlp.NewGRPCClient(cc).Export(ctx, req)
				ok = err == nil
			} else {
				body, _ := req.MarshalProto()
				ok = post(ctx, client, "http://"+p.addrs["OTLP/HTTP"]+"/v1/logs", body)
			}
		case "traces":
			req := ptraceotlp.NewExportRequestFromTraces(idTraces(ids))
			if cc != nil {
				_, err := ptraceotlp.NewGRPCClient(cc).Export(ctx, req)
				ok = err == nil
			} else {
				body, _ := req.MarshalProto()
				ok = post(ctx, client, "http://"+p.addrs["OTLP/HTTP"]+"/v1/traces", body)
			}
		}
		if ok {
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

func post(ctx context.Context, c *http.Client, url string, body []byte) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func idLogs(ids []int64) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "kill-test")
	sl := rl.ScopeLogs().AppendEmpty()
	for _, id := range ids {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		lr.Body().SetStr("record " + fmt.Sprint(id))
		lr.Attributes().PutInt("test.id", id)
	}
	return ld
}

func idTraces(ids []int64) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "kill-test")
	ss := rs.ScopeSpans().AppendEmpty()
	for _, id := range ids {
		sp := ss.Spans().AppendEmpty()
		sp.SetName("op")
		sp.SetTraceID(pcommon.TraceID{1, byte(id >> 8), byte(id)})
		sp.SetSpanID(pcommon.SpanID{2, byte(id >> 8), byte(id)})
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(time.Millisecond)))
		sp.Attributes().PutInt("test.id", id)
	}
	return td
}

// lakeIDs reads attr_test_id of every row of the signal's Parquet files
// and counts each id.
func lakeIDs(t *testing.T, root, signal string) map[int64]int {
	t.Helper()
	ids := map[int64]int{}
	for _, p := range parquetFiles(t, filepath.Join(root, signal)) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		col, ok := pf.Schema().Lookup("attr_test_id")
		if !ok {
			t.Fatalf("%s: no attr_test_id column", p)
		}
		r := parquet.NewReader(bytes.NewReader(b))
		rows := make([]parquet.Row, 256)
		for {
			n, err := r.ReadRows(rows)
			for _, row := range rows[:n] {
				for _, v := range row {
					if v.Column() == col.ColumnIndex {
						ids[v.Int64()]++
					}
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
	}
	return ids
}

// TestServeKill9Lake sends logs and spans over gRPC and HTTP, each record
// with a unique id, kills the server with SIGKILL mid-stream and restarts
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
    q = f"SELECT count(*), count(DISTINCT attr_test_id) FROM read_parquet('{sys.argv[1]}/{s}/**/*.parquet', hive_partitioning = true, union_by_name = true)"
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
