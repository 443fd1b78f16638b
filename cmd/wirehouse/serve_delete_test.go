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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/bucket/s3test"
)

// duckdbDeleteCount counts the lake's logs with DuckDB, over the files
// pyarrow's dataset finds (on disk, or in S3 with pyarrow's own S3
// filesystem): all rows, and those of service api whose body holds
// "password". Usage: local DIR, or s3 ENDPOINT BUCKET PREFIX KEY SECRET.
const duckdbDeleteCount = `import duckdb, json, sys
import pyarrow.dataset as ds, pyarrow.fs as pafs
try:
    if sys.argv[1] == "s3":
        endpoint, bucket, prefix, key, secret = sys.argv[2:7]
        scheme, host = endpoint.split("://")
        fs = pafs.S3FileSystem(endpoint_override=host, scheme=scheme, access_key=key, secret_key=secret, region="us-east-1")
        d = ds.dataset(f"{bucket}/{prefix}/logs", filesystem=fs, format="parquet", partitioning="hive")
    else:
        d = ds.dataset(sys.argv[2] + "/logs", format="parquet", partitioning="hive")
except FileNotFoundError:  # no logs file yet
    print("[0, 0]")
    sys.exit(0)
t = d.to_table(columns=["service_name", "body"])
q = "SELECT count(*), count(*) FILTER (WHERE service_name = 'api' AND body LIKE '%password%') FROM t"
print(json.dumps(duckdb.connect().execute(q).fetchone()))`

// TestServeLokiDelete: 1,000,000 logs in 10 files of one hour, 1 % of them
// (service api, a line holding "password") selected by a delete request
// made with Loki's API; serve is killed with SIGKILL at random moments
// while it carries it out and restarted each time, until the request is
// listed as processed. Then exactly the selected rows are gone (DuckDB's
// counts before and after, and the lake's footers), and a reader that
// queried throughout (LogQL counts of the rows the request does not
// select, and of all of api's, the selected ones hidden from the moment
// the request is made) never saw one twice or missing. A processed request
// cannot be canceled; an unknown one is not found; a bad query is a bad
// request.
func TestServeLokiDelete(t *testing.T) {
	t.Parallel() // mostly waiting (restarts, SeaweedFS, DuckDB): beside the other waiting tests
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) { testLokiDelete(t, store) })
	}
}

func testLokiDelete(t *testing.T, store string) {
	python := os.Getenv("WIREHOUSE_PYTHON")
	data := t.TempDir()
	args := []string{"--lake-max-delay", "100ms", "--lake-compact=false"} // ten files, whatever the hour
	var (
		env     []string
		srv     *s3test.Server
		bkt     string
		counter = []string{"local", filepath.Join(data, "lake")}
	)
	if store == "s3" {
		srv = s3test.Start(t)
		bkt = srv.CreateBucket("lake")
		env = srv.Environ()
		args = append(args, "--lake-url", "s3://"+bkt+"/wh", "--lake-s3-endpoint", srv.Endpoint, "--lake-s3-path-style", "--lake-compact-grace", "1s")
		counter = []string{"s3", srv.Endpoint, bkt, "wh", s3test.AccessKey, s3test.SecretKey}
		if python == "" {
			t.Skip("counting the lake in S3 needs WIREHOUSE_PYTHON (pyarrow, DuckDB)")
		}
	}
	var mu sync.Mutex // over p
	p := startServeProcEnv(t, env, data, args...)
	t.Cleanup(func() { mu.Lock(); p.cmd.Process.Kill(); mu.Unlock() })
	admin := func() string { mu.Lock(); defer mu.Unlock(); return p.addrs["admin HTTP"] }

	const batches = 10
	perBatch := 100_000
	if v, err := strconv.Atoi(os.Getenv("WIREHOUSE_DELETE_LOGS")); err == nil && v >= batches*100 { // fewer (or more) logs
		perBatch = v / batches
	}
	lakeDir := filepath.Join(data, "lake")
	base := time.Now().Truncate(time.Hour)
	if time.Since(base) > 50*time.Minute {
		base = base.Add(-time.Hour) // all in one hour whatever the time
	}
	matched, webRows, apiKept := 0, 0, 0
	for b := range batches {
		ld := plog.NewLogs()
		logs := map[string]plog.LogRecordSlice{}
		for _, svc := range []string{"api", "web"} {
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("service.name", svc)
			logs[svc] = rl.ScopeLogs().AppendEmpty().LogRecords()
		}
		for i := range perBatch {
			n := b*perBatch + i
			svc, line := "web", "GET /index "+strconv.Itoa(n)
			switch {
			case n%100 == 0:
				svc, line = "api", "login password=hunter2 user "+strconv.Itoa(n)
				matched++
			case n%3 == 0:
				svc, line = "api", "login ok user "+strconv.Itoa(n)
				apiKept++
			default:
				webRows++
			}
			lr := logs[svc].AppendEmpty()
			lr.SetTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Duration(n) * (50 * time.Minute) / time.Duration(batches*perBatch))))
			lr.Body().SetStr(line)
		}
		body, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		resp, err := http.Post("http://"+p.addrs["OTLP/HTTP"]+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("batch %d: HTTP %d", b, resp.StatusCode)
		}
		// A file each: the next batch once this one is in the lake.
		for deadline := time.Now().Add(20 * time.Second); logsFiles(t, lakeDir, srv, bkt) != b+1; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("batch %d: %d logs files", b, logsFiles(t, lakeDir, srv, bkt))
			}
		}
	}
	total := batches * perBatch
	duck := func() [2]int {
		var c [2]int
		if python == "" {
			return [2]int{lakeRows(t, lakeDir), -1}
		}
		out, err := exec.Command(python, append([]string{"-c", duckdbDeleteCount}, counter...)...).CombinedOutput()
		if err == nil {
			err = json.Unmarshal(out, &c)
		}
		if err != nil {
			t.Fatalf("duckdb: %v\n%s", err, out)
		}
		return c
	}
	for deadline := time.Now().Add(60 * time.Second); duck()[0] != total; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%v rows in the lake, want %d", duck(), total)
		}
	}
	if n := logsFiles(t, lakeDir, srv, bkt); n != batches {
		t.Fatalf("%d logs files, want %d", n, batches)
	}
	if c := duck(); python != "" && c != [2]int{total, matched} {
		t.Fatalf("DuckDB before: %v, want %d rows, %d selected", c, total, matched)
	}

	const query = `{service_name="api"} |= "password"`
	deleteAPI := func(method string, params url.Values) (int, []byte) {
		req, _ := http.NewRequest(method, "http://"+admin()+"/loki/api/v1/delete?"+params.Encode(), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	if code, b := deleteAPI(http.MethodPost, url.Values{"query": {`{service_name="api"} | json`}}); code != http.StatusBadRequest {
		t.Errorf("a query with a parser: %d %s, want 400", code, b)
	}
	if code, b := deleteAPI(http.MethodPost, url.Values{"query": {query},
		"start": {strconv.FormatInt(base.Add(-time.Hour).Unix(), 10)}, "end": {strconv.FormatInt(base.Add(2*time.Hour).Unix(), 10)}}); code != http.StatusNoContent {
		t.Fatalf("POST delete: %d %s", code, b)
	}

	// The reader: counts of what the request leaves, through Loki's API
	// (the selected rows are hidden from queries from the request on).
	count := func(q string) (int, bool) {
		at := strconv.FormatInt(base.Add(2*time.Hour).UnixNano(), 10)
		resp, err := http.Get("http://" + admin() + "/loki/api/v1/query?" + url.Values{"query": {q}, "time": {at}}.Encode())
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		var d struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&d) != nil || len(d.Data.Result) != 1 {
			return 0, false
		}
		n, err := strconv.Atoi(fmt.Sprint(d.Data.Result[0].Value[1]))
		return n, err == nil
	}
	var reads, bad atomic.Int64
	var badMsg atomic.Value
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			for q, want := range map[string]int{
				`sum(count_over_time({service_name="web"}[3h]))`:                webRows,
				`sum(count_over_time({service_name="api"} != "password" [3h]))`: apiKept,
				// The selected rows hidden from the request on, removed later.
				`sum(count_over_time({service_name="api"}[3h]))`: apiKept,
			} {
				if n, ok := count(q); ok {
					reads.Add(1)
					if n != want {
						bad.Add(1)
						badMsg.Store(fmt.Sprintf("%s = %d, want %d", q, n, want))
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	status := func() string {
		code, b := deleteAPI(http.MethodGet, nil)
		var reqs []struct {
			RequestID string `json:"request_id"`
			Query     string `json:"query"`
			Status    string `json:"status"`
		}
		if code != http.StatusOK || json.Unmarshal(b, &reqs) != nil || len(reqs) != 1 || reqs[0].Query != query {
			return fmt.Sprintf("HTTP %d %s", code, b)
		}
		return reqs[0].Status
	}
	kills := 0
	for deadline := time.Now().Add(90 * time.Second); status() != "processed"; {
		if time.Now().After(deadline) {
			t.Fatalf("not processed after %d kills: %s\n%s", kills, status(), p.stderr)
		}
		if kills < 6 {
			time.Sleep(time.Duration(50+rand.IntN(400)) * time.Millisecond)
			mu.Lock()
			p.cmd.Process.Signal(syscall.SIGKILL)
			p.cmd.Wait()
			p = startServeProcEnv(t, env, data, args...)
			mu.Unlock()
			kills++
			continue
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	readers.Wait()
	t.Logf("%d rows in %d files; processed after %d kills; %d reads during it", total, batches, kills, reads.Load())
	if n := bad.Load(); n > 0 {
		t.Errorf("%d reads saw rows twice or missing, e.g. %v", n, badMsg.Load())
	}
	if n, ok := count(`sum(count_over_time({service_name="api"} |= "password" [3h]))`); ok && n != 0 {
		t.Errorf("%d selected rows left", n)
	}
	if code, b := deleteAPI(http.MethodGet, nil); !strings.Contains(string(b), `"status":"processed"`) {
		t.Errorf("GET delete: %d %s", code, b)
	}
	var id struct {
		RequestID string `json:"request_id"`
	}
	_, b := deleteAPI(http.MethodGet, nil)
	var ids []struct {
		RequestID string `json:"request_id"`
	}
	json.Unmarshal(b, &ids)
	if len(ids) == 1 {
		id = ids[0]
	}
	if code, b := deleteAPI(http.MethodDelete, url.Values{"request_id": {id.RequestID}}); code != http.StatusBadRequest {
		t.Errorf("cancel a processed request: %d %s, want 400", code, b)
	}
	if code, b := deleteAPI(http.MethodDelete, url.Values{"request_id": {"0123456789abcdef"}}); code != http.StatusNotFound {
		t.Errorf("cancel an unknown request: %d %s, want 404", code, b)
	}
	mu.Lock()
	p.stop(t)
	mu.Unlock()
	if store == "s3" {
		// In S3 the inputs of the swaps stay readable for the grace
		// period (a second here); the pass at the next start removes
		// them, and their intents.
		time.Sleep(1500 * time.Millisecond)
		p = startServeProcEnv(t, env, data, args...)
		for deadline := time.Now().Add(30 * time.Second); intentsIn(t, srv, bkt) > 0; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d intents left in the bucket", intentsIn(t, srv, bkt))
			}
		}
		p.stop(t)
	}
	want := [2]int{total - matched, 0}
	if python == "" {
		want[1] = -1
	}
	if c := duck(); c != want {
		t.Errorf("after: %v rows (and selected, by DuckDB), want %v", c, want)
	}
}

// logsFiles counts the logs files of the lake in dir, or in bucket bkt
// of srv if set.
func logsFiles(t *testing.T, dir string, srv *s3test.Server, bkt string) int {
	t.Helper()
	n := 0
	if srv == nil {
		return len(parquetFiles(t, filepath.Join(dir, "logs")))
	}
	for _, k := range s3Keys(t, srv, bkt) {
		if strings.Contains(k, "/logs/") && strings.HasSuffix(k, ".parquet") {
			n++
		}
	}
	return n
}

// intentsIn counts the merge and rewrite intents (.compact) in bucket bkt.
func intentsIn(t *testing.T, srv *s3test.Server, bkt string) int {
	t.Helper()
	n := 0
	for _, k := range s3Keys(t, srv, bkt) {
		if strings.HasSuffix(k, "/.compact") {
			n++
		}
	}
	return n
}

// s3Keys lists the keys of bucket bkt of srv.
func s3Keys(t *testing.T, srv *s3test.Server, bkt string) []string {
	t.Helper()
	var keys []string
	pg := s3.NewListObjectsV2Paginator(srv.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(bkt)})
	for pg.HasMorePages() {
		out, err := pg.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	return keys
}

// TestServeSpanDelete: spans of three services in 40 traces; a request
// deletes two traces by id, another every span of service db: after
// both are processed, the two traces and db's spans are gone from the
// lake's files and Jaeger's API, every other span kept.
func TestServeSpanDelete(t *testing.T) {
	data := t.TempDir()
	p := startServeProc(t, data, "--lake-max-delay", "100ms", "--lake-compact=false")
	defer p.stop(t)
	admin := p.addrs["admin HTTP"]
	td := ptrace.NewTraces()
	spans := map[string]ptrace.SpanSlice{}
	for _, svc := range []string{"front", "back", "db"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		spans[svc] = rs.ScopeSpans().AppendEmpty().Spans()
	}
	now := time.Now()
	traceID := func(i int) pcommon.TraceID {
		var id pcommon.TraceID
		id[0], id[15] = 0xab, byte(i+1)
		return id
	}
	perTrace := map[string]int{}
	for i := range 40 {
		for j, svc := range []string{"front", "back", "db"} {
			if svc == "db" && i%2 == 1 {
				continue
			}
			sp := spans[svc].AppendEmpty()
			sp.SetTraceID(traceID(i))
			sp.SetSpanID(pcommon.SpanID{byte(i + 1), byte(j + 1)})
			sp.SetName("op")
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Duration(i) * time.Second)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Duration(i)*time.Second + time.Millisecond)))
			perTrace[traceID(i).String()]++
		}
	}
	body, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	resp, err := http.Post("http://"+p.addrs["OTLP/HTTP"]+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	total := 0
	for _, n := range perTrace {
		total += n
	}
	tracesDir := filepath.Join(data, "lake", "traces")
	for deadline := time.Now().Add(20 * time.Second); lakeRows(t, tracesDir) != total; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d spans in the lake, want %d", lakeRows(t, tracesDir), total)
		}
	}
	post := func(params url.Values) {
		resp, err := http.Post("http://"+admin+"/api/v1/admin/spans/delete?"+params.Encode(), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("POST %v: %d %s", params, resp.StatusCode, b)
		}
	}
	gone := []string{traceID(3).String(), traceID(8).String()}
	post(url.Values{"trace_id": gone})
	post(url.Values{"service": {"db"}})
	// Both at once is refused.
	if resp, err := http.Post("http://"+admin+"/api/v1/admin/spans/delete?trace_id="+gone[0]+"&service=db", "", nil); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("trace id and service at once: %d", resp.StatusCode)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://" + admin + "/api/v1/admin/spans/delete")
		if err != nil {
			t.Fatal(err)
		}
		var reqs []struct{ Status string }
		json.NewDecoder(resp.Body).Decode(&reqs)
		resp.Body.Close()
		if len(reqs) == 2 && reqs[0].Status == "processed" && reqs[1].Status == "processed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("requests: %+v\n%s", reqs, p.stderr)
		}
	}
	want := total
	removed := map[string]bool{}
	for _, id := range gone {
		removed[id] = true
	}
	for i := range 40 {
		id := traceID(i).String()
		var traces []struct {
			Spans []struct{} `json:"spans"`
		}
		code := jaegerGet(t, admin, "/jaeger/api/traces/"+id, &traces)
		wantSpans := perTrace[id]
		if i%2 == 0 {
			wantSpans-- // its db span
		}
		if removed[id] {
			wantSpans = 0
		}
		got := 0
		if code == http.StatusOK && len(traces) == 1 {
			got = len(traces[0].Spans)
		}
		if got != wantSpans {
			t.Errorf("trace %d: %d spans (HTTP %d), want %d", i, got, code, wantSpans)
		}
		want -= perTrace[id] - wantSpans
	}
	if got := lakeRows(t, tracesDir); got != want {
		t.Errorf("%d spans in the lake, want %d", got, want)
	}
}

// TestServeDeleteOnTheWay: spans of services front and db are sent, and
// a delete request for db's is made before the lake loader writes them
// (--lake-max-delay 3s): db's spans never reach the lake (the loader's
// write leaves out what a pending request selects), so the request is
// carried out with no file to rewrite (files and rows removed 0), and the
// lake holds front's spans alone.
func TestServeDeleteOnTheWay(t *testing.T) {
	data := t.TempDir()
	p := startServeProc(t, data, "--lake-max-delay", "3s", "--lake-compact=false")
	defer p.stop(t)
	admin := p.addrs["admin HTTP"]
	td := ptrace.NewTraces()
	now := time.Now()
	for s, svc := range []string{"front", "db"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range 30 {
			sp := spans.AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{0xcd, byte(i + 1)})
			sp.SetSpanID(pcommon.SpanID{byte(s + 1), byte(i + 1)})
			sp.SetName("op")
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Duration(i) * time.Second)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Duration(i)*time.Second + time.Millisecond)))
		}
	}
	body, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if code, _, b := postWith(t, "http://"+p.addrs["OTLP/HTTP"]+"/v1/traces", body, "Content-Type", "application/x-protobuf"); code != http.StatusOK {
		t.Fatalf("spans: %d %s", code, b)
	}
	if code, _, b := postWith(t, "http://"+admin+"/api/v1/admin/spans/delete?service=db", nil); code != http.StatusNoContent {
		t.Fatalf("POST delete: %d %s", code, b)
	}
	type request struct {
		Status string
		Files  int64 `json:"files_rewritten"`
		Rows   int64 `json:"rows_removed"`
	}
	var req request
	for deadline := time.Now().Add(30 * time.Second); req.Status != "processed"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("request: %+v\n%s", req, p.stderr)
		}
		resp, err := http.Get("http://" + admin + "/api/v1/admin/spans/delete")
		if err != nil {
			t.Fatal(err)
		}
		var reqs []request
		json.NewDecoder(resp.Body).Decode(&reqs)
		resp.Body.Close()
		if len(reqs) == 1 {
			req = reqs[0]
		}
	}
	if req.Files != 0 || req.Rows != 0 {
		t.Errorf("the request rewrote %d files, removing %d rows: db's spans reached the lake", req.Files, req.Rows)
	}
	if n := lakeRows(t, filepath.Join(data, "lake", "traces")); n != 30 {
		t.Errorf("%d spans in the lake, want front's 30", n)
	}
	if n := scrape(t, admin)["wirehouse_lake_deleted_rows_total"]; n != 30 {
		t.Errorf("wirehouse_lake_deleted_rows_total %v, want db's 30", n)
	}
}
