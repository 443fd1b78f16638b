package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
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

	"github.com/wirehouse/wirehouse/internal/bucket/s3test"
)

// pyarrowCount is the script that counts the lake in an S3 bucket with
// pyarrow's own S3 filesystem and datasets: for each signal, the rows,
// how many acknowledged ids are missing or there more than once, and the
// rows of each service.
const pyarrowCount = `
import json, sys
import pyarrow as pa, pyarrow.compute as pc, pyarrow.dataset as ds, pyarrow.fs as pafs
endpoint, bucket, prefix, acked_path = sys.argv[1:5]
scheme, host = endpoint.split("://")
fs = pafs.S3FileSystem(endpoint_override=host, scheme=scheme, access_key=sys.argv[5], secret_key=sys.argv[6], region="us-east-1")
acked = json.load(open(acked_path))
out = {}
for sig in ("logs", "traces"):
    d = ds.dataset(f"{bucket}/{prefix}/{sig}", filesystem=fs, format="parquet", partitioning="hive")
    counts, services, rows = {}, {}, 0
    # File by file: a logs file (schema version 3) has test.id in its
    # key column attr_test_id when frequent in it, else in the map.
    for frag in d.get_fragments():
        key_col = "attr_test_id" in frag.physical_schema.names
        t = frag.to_table(columns=["attributes", "service_name"] + (["attr_test_id"] if key_col else []))
        ids = pc.map_lookup(t["attributes"], pa.scalar("test.id"), "first")
        if key_col:
            ids = pc.coalesce(t["attr_test_id"].cast(pa.string()), ids)
        for v in ids.to_pylist():
            if v is not None:
                counts[int(v)] = counts.get(int(v), 0) + 1
        for s in t["service_name"].to_pylist():
            services[s] = services.get(s, 0) + 1
        rows += t.num_rows
    missing = sum(1 for i in acked[sig] if counts.get(i, 0) == 0)
    dup = sum(1 for n in counts.values() if n > 1)
    out[sig] = {"rows": rows, "ids": len(counts), "missing": missing, "dup": dup, "services": services, "files": len(d.files)}
print(json.dumps(out))
`

// TestServeS3TwoNodes: two serve nodes write one bucket of a real
// S3-compatible store (SeaweedFS), taking logs and traces from the
// OpenTelemetry SDK's exporters (each record a unique id) and from
// telemetrygen at once. One node is killed with SIGKILL mid-stream and
// restarted, five times; then the store is stopped for 20 s under load
// (a small spool makes clients see 429 once it fills) and started again.
// After both nodes stop, pyarrow's S3 filesystem reads the bucket: every
// acknowledged record is there exactly once, each telemetrygen record
// too, and clients saw only retryable refusals.
func TestServeS3TwoNodes(t *testing.T) {
	t.Parallel() // mostly waiting: runs beside the forwarding and remote write tests
	tgen := peerFromEnv(t, "WIREHOUSE_TELEMETRYGEN", "installs telemetrygen")
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs pyarrow in a venv")
	srv := s3test.Start(t)
	bkt := srv.CreateBucket("lake")
	dataA, dataB := t.TempDir(), t.TempDir()
	lakeArgs := []string{"--lake-url", "s3://" + bkt + "/wh", "--lake-s3-endpoint", srv.Endpoint, "--lake-s3-path-style",
		"--lake-max-delay", "300ms"}
	startA := func(extra ...string) *serveProc {
		return startServeProcEnv(t, srv.Environ(), dataA, append(append([]string{"--lake-node", "node-a"}, lakeArgs...), extra...)...)
	}
	startB := func(extra ...string) *serveProc {
		return startServeProcEnv(t, srv.Environ(), dataB, append(append([]string(nil), lakeArgs...), extra...)...) // node name made and kept in dataB
	}
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
	send := func(ctx context.Context, p *serveProc, wg *sync.WaitGroup) {
		for _, tc := range [][2]string{{"grpc", "logs"}, {"http", "traces"}} {
			wg.Go(func() { sendUntil(ctx, t, p, tc[0], tc[1], next, &a) })
		}
	}

	// 1. Both nodes at once, with telemetrygen alongside the SDK.
	pa, pb := startA(), startB()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	send(ctx, pa, &wg)
	send(ctx, pb, &wg)
	tg := map[string]int{}       // telemetrygen records sent, by service
	tgSvc := map[string]string{} // telemetrygen's service, by node
	for node, p := range map[string]*serveProc{"a": pa, "b": pb} {
		svc := "tg-" + strings.ReplaceAll(p.addrs["OTLP/gRPC"], ":", "-")
		tgSvc[node] = svc
		for _, args := range [][]string{
			{"logs", "--logs", "300", "--service", svc},
			{"traces", "--traces", "50", "--child-spans", "3", "--service", svc},
		} {
			args = append(args, "--otlp-insecure", "--otlp-endpoint", p.addrs["OTLP/gRPC"], "--rate", "0")
			if out, err := exec.Command(tgen, args...).CombinedOutput(); err != nil {
				t.Fatalf("telemetrygen %v: %v\n%s", args, err, out)
			}
		}
		tg["logs/"+svc], tg["traces/"+svc] = 300, 200
	}
	time.Sleep(time.Second)
	cancel()
	wg.Wait()
	if len(a.logs) == 0 || len(a.span) == 0 {
		t.Fatalf("nothing acknowledged: %d logs, %d spans\n%s", len(a.logs), len(a.span), pa.stderr)
	}

	// 2. kill -9 of node a mid-stream, five times, while b goes on.
	ctx, cancel = context.WithCancel(context.Background())
	send(ctx, pb, &wg)
	for range 5 {
		ctxA, cancelA := context.WithCancel(context.Background())
		var wgA sync.WaitGroup
		send(ctxA, pa, &wgA)
		time.Sleep(time.Duration(200+rand.IntN(400)) * time.Millisecond)
		if err := pa.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		pa.cmd.Wait()
		cancelA()
		wgA.Wait()
		pa = startA()
	}
	cancel()
	wg.Wait()

	// 3. The store down for 20 s under load (about 50 requests of 50
	// logs a second to each node), with spools small enough to fill
	// meanwhile (in about 8 s).
	small := []string{"--spool-max-size", "4MiB", "--spool-segment-size", "1MiB"}
	pa.stop(t)
	pb.stop(t)
	pa, pb = startA(small...), startB(small...)
	srv.Stop()
	statuses := map[int]int{}
	var stMu sync.Mutex
	deadline := time.Now().Add(20 * time.Second)
	var lwg sync.WaitGroup
	for _, p := range []*serveProc{pa, pb} {
		lwg.Go(func() {
			for time.Now().Before(deadline) {
				ids := make([]int64, 50)
				for i := range ids {
					ids[i] = next()
				}
				code, _ := postLogs(t, p, ids)
				stMu.Lock()
				statuses[code]++
				stMu.Unlock()
				if code == 200 {
					a.mu.Lock()
					a.logs = append(a.logs, ids...)
					a.mu.Unlock()
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	lwg.Wait()
	srv.Restart()
	t.Logf("while the store was down: HTTP statuses %v", statuses)
	for code := range statuses {
		if code != 200 && code != 429 && code != 503 {
			t.Errorf("a client got HTTP %d while the store was down; want only 200 and the retryable 429 and 503", code)
		}
	}
	if statuses[429] == 0 || statuses[200] == 0 {
		t.Errorf("the small spools never filled while the store was down (statuses %v): the test did not reach the limit", statuses)
	}
	for _, p := range []*serveProc{pa, pb} {
		pollUntil(t, 2*time.Minute, "lake caught up after the store came back", func() bool { return lakeCaughtUp(p) })
	}
	// Each node answers queries for what the other wrote: node b's Loki
	// and Jaeger APIs find node a's telemetrygen logs and traces in the
	// bucket, and the other way round.
	for _, q := range []struct {
		wrote string
		asked *serveProc
	}{{"a", pb}, {"b", pa}} {
		svc, asked := tgSvc[q.wrote], q.asked
		var d struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		}
		params := url.Values{"query": {`sum(count_over_time({service_name="` + svc + `"}[2h]))`},
			"time": {strconv.FormatInt(time.Now().Add(time.Minute).UnixNano(), 10)}}
		lokiGet(t, asked.addrs["admin HTTP"], "/loki/api/v1/query", params, &d)
		if len(d.Result) != 1 || fmt.Sprint(d.Result[0].Value[1]) != "300" {
			t.Errorf("the other node's Loki API counts %v logs of %s, want 300", d.Result, svc)
		}
		var traces []struct {
			Spans []any `json:"spans"`
		}
		if code := jaegerGet(t, asked.addrs["admin HTTP"], "/jaeger/api/traces?limit=1000&lookback=2h&service="+svc, &traces); code != http.StatusOK || len(traces) != 50 {
			t.Errorf("the other node's Jaeger API finds %d traces of %s (HTTP %d), want 50", len(traces), svc, code)
		}
		for _, tr := range traces {
			if len(tr.Spans) != 4 {
				t.Errorf("a trace of %s has %d spans, want 4", svc, len(tr.Spans))
				break
			}
		}
	}
	pa.stop(t)
	pb.stop(t)
	if b, err := os.ReadFile(filepath.Join(dataB, "node-id")); err != nil || strings.TrimSpace(string(b)) == "" {
		t.Errorf("node b kept no node-id: %q, %v", b, err)
	}

	// 4. pyarrow reads the bucket.
	ackedPath := filepath.Join(t.TempDir(), "acked.json")
	ab, _ := json.Marshal(map[string][]int64{"logs": a.logs, "traces": a.span})
	if err := os.WriteFile(ackedPath, ab, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, "-c", pyarrowCount, srv.Endpoint, bkt, "wh", ackedPath, s3test.AccessKey, s3test.SecretKey).CombinedOutput()
	if err != nil {
		t.Fatalf("pyarrow: %v\n%s", err, out)
	}
	var got map[string]struct {
		Rows, IDs, Missing, Dup, Files int
		Services                       map[string]int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("pyarrow output %q: %v", out, err)
	}
	for sig, acked := range map[string][]int64{"logs": a.logs, "traces": a.span} {
		g := got[sig]
		t.Logf("%s: %d acknowledged with ids, pyarrow read %d rows in %d files: %d ids, %d missing, %d more than once",
			sig, len(acked), g.Rows, g.Files, g.IDs, g.Missing, g.Dup)
		if g.Missing != 0 || g.Dup != 0 || g.IDs < len(acked) {
			t.Errorf("%s: %d acknowledged records missing, %d ids more than once", sig, g.Missing, g.Dup)
		}
		for key, n := range tg {
			if s, svc, _ := strings.Cut(key, "/"); s == sig && g.Services[svc] != n {
				t.Errorf("%s of %s: pyarrow counts %d, telemetrygen sent %d", sig, svc, g.Services[svc], n)
			}
		}
	}
}
