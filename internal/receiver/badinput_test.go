package receiver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// smallLimits keeps bomb and size tests cheap.
func smallLimits() Config {
	c := testConfig()
	c.MaxRequestBytes = 256 << 10
	c.MaxDecompressedBytes = 1 << 20
	c.MaxGRPCMessageBytes = 1 << 20
	c.MaxInflightBytes = 4 << 20
	return c
}

// mustServe checks the server still accepts a valid request.
func mustServe(t *testing.T, r *Receiver) {
	t.Helper()
	status, _, resp := post(t, httpURL(r, otlpwire.SignalLogs), logsBody(3), "Content-Type", "application/x-protobuf")
	if status != http.StatusOK {
		t.Fatalf("server stopped serving: status %d: %s", status, resp)
	}
}

func TestHTTPBadInput(t *testing.T) {
	r, rec := start(t, smallLimits())
	good := logsBody(50)
	zeros := make([]byte, 16<<20) // 16 MiB of zeros: a few KiB compressed
	gzBomb, zstdBomb, deflateBomb := gzipped(t, zeros), zstded(t, zeros), deflated(t, zeros)
	big := bytes.Repeat([]byte{0x0a, 0x00}, 200<<10) // 400 KiB of empty resource_logs
	for _, tc := range []struct {
		name    string
		body    []byte
		headers []string
		chunked bool
		status  int
		want    string // in the message
	}{
		{"truncated protobuf", good[:len(good)-7], []string{"Content-Type", "application/x-protobuf"}, false, 400, "truncated"},
		{"garbage protobuf", []byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"), []string{"Content-Type", "application/x-protobuf"}, false, 400, "invalid ExportLogsServiceRequest"},
		{"wrong wire type", []byte{0x08, 0x01}, []string{"Content-Type", "application/x-protobuf"}, false, 400, "wire type"},
		{"invalid JSON", []byte(`{"resourceLogs":[{"scopeLogs":[`), []string{"Content-Type", "application/json"}, false, 400, "OTLP/JSON"},
		{"JSON bad trace id", []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"xyz"}]}]}]}`), []string{"Content-Type", "application/json"}, false, 400, "OTLP/JSON"},
		{"wrong content type", good, []string{"Content-Type", "text/plain"}, false, 415, "unsupported content type"},
		{"missing content type", good, nil, false, 415, "unsupported content type"},
		{"unsupported encoding", good, []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "br"}, false, 415, "Content-Encoding"},
		{"corrupt gzip", []byte("\x1f\x8b\x08\x00garbage"), []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "gzip"}, false, 400, "gzip"},
		{"corrupt zstd", []byte("\x28\xb5\x2f\xfdgarbage"), []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "zstd"}, false, 400, "zstd"},
		{"gzip bomb", gzBomb, []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "gzip"}, false, 413, "decompressed"},
		{"zstd bomb", zstdBomb, []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "zstd"}, false, 413, "decompressed"},
		{"deflate bomb", deflateBomb, []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "deflate"}, false, 413, "decompressed"},
		{"corrupt deflate", []byte("\x78\x9cgarbage"), []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "deflate"}, false, 400, "deflate"},
		{"over size limit, chunked", big, []string{"Content-Type", "application/x-protobuf"}, true, 413, "exceeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.bodies(otlpwire.SignalLogs))
			var body io.Reader = bytes.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length: sent chunked
			}
			req, err := http.NewRequest(http.MethodPost, httpURL(r, otlpwire.SignalLogs), body)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+1 < len(tc.headers); i += 2 {
				req.Header.Set(tc.headers[i], tc.headers[i+1])
			}
			resp, err := testClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, b)
			}
			msg := string(b)
			switch resp.Header.Get("Content-Type") {
			case "application/x-protobuf":
				msg = statusMessage(t, b)
			case "application/json":
				if !strings.HasPrefix(msg, `{"code":`) {
					t.Errorf("JSON error body %q is not a google.rpc.Status", msg)
				}
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("message %q does not mention %q", msg, tc.want)
			}
			if len(rec.bodies(otlpwire.SignalLogs)) != before {
				t.Error("a refused request reached the sink")
			}
			mustServe(t, r)
		})
	}
	if used := drained(r); used != 0 {
		t.Errorf("in-flight bytes %d after all requests finished", used)
	}
}

func TestHTTPMethodAndPath(t *testing.T) {
	r, _ := start(t, testConfig())
	resp, err := testClient.Get(httpURL(r, otlpwire.SignalLogs))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: status %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	status, _, _ := post(t, "http://"+r.HTTPAddr().String()+"/v1/profiles", nil, "Content-Type", "application/x-protobuf")
	if status != http.StatusNotFound {
		t.Errorf("unknown path: status %d", status)
	}
}

// rawExchange writes raw bytes on a new connection, half-closes it and
// returns the first response.
func rawExchange(t *testing.T, addr string, raw string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp
}

// TestHTTPContentLengthOverLimit: a body announced larger than the limit
// is refused from the headers alone, without reading it.
func TestHTTPContentLengthOverLimit(t *testing.T) {
	r, _ := start(t, smallLimits())
	resp := rawExchange(t, r.HTTPAddr().String(), "POST /v1/logs HTTP/1.1\r\nHost: x\r\n"+
		"Content-Type: application/x-protobuf\r\nContent-Length: 1073741824\r\n\r\n")
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(statusMessage(t, b), "exceeds the limit") {
		t.Errorf("status %d, %q", resp.StatusCode, statusMessage(t, b))
	}
	mustServe(t, r)
}

func TestHTTPLyingContentLength(t *testing.T) {
	r, rec := start(t, testConfig())
	good := logsBody(20)
	addr := r.HTTPAddr().String()
	head := "POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n"

	// Longer than the body: the body ends early.
	resp := rawExchange(t, addr, fmt.Sprintf(head, len(good)+1000)+string(good))
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(statusMessage(t, b), "unexpected EOF") {
		t.Errorf("Content-Length too long: status %d, %q", resp.StatusCode, statusMessage(t, b))
	}
	// Shorter than the body: the request is cut, and fails validation.
	resp = rawExchange(t, addr, fmt.Sprintf(head, len(good)/2)+string(good))
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(statusMessage(t, b), "truncated") {
		t.Errorf("Content-Length too short: status %d, %q", resp.StatusCode, statusMessage(t, b))
	}
	if n := len(rec.bodies(otlpwire.SignalLogs)); n != 0 {
		t.Errorf("%d lying requests reached the sink", n)
	}
	mustServe(t, r)
}

// TestStalledBodies: clients that announce large bodies and then send
// nothing hold only the read-ahead hint of the in-flight budget each, not
// what they announced, so they cannot refuse everyone else.
func TestStalledBodies(t *testing.T) {
	cfg := testConfig()
	cfg.MaxRequestBytes, cfg.MaxDecompressedBytes = 64<<20, 64<<20
	cfg.MaxInflightBytes = 64 << 20
	r, _ := start(t, cfg)
	const stalled = 4 // announcing 4 × 60 MiB against a 64 MiB budget
	for range stalled {
		c, err := net.Dial("tcp", r.HTTPAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := fmt.Fprintf(c, "POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n", 60<<20); err != nil {
			t.Fatal(err)
		}
	}
	want := int64(stalled * (maxHint + 1))
	deadline := time.Now().Add(10 * time.Second)
	for r.budget.used.Load() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if used := r.budget.used.Load(); used != want {
		t.Errorf("%d stalled bodies hold %d in-flight bytes, want %d (the hint each)", stalled, used, want)
	}
	mustServe(t, r)
}

// TestOverload fills the in-flight budget with a request held in the sink:
// the next one is refused at once with 429 and Retry-After, not queued.
func TestOverload(t *testing.T) {
	cfg := smallLimits()
	cfg.MaxInflightBytes = cfg.MaxDecompressedBytes // 1 MiB
	r, rec := start(t, cfg)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rec.hook = func(context.Context, *pipeline.Request) (pipeline.Outcome, error) {
		once.Do(func() { close(entered); <-release })
		return pipeline.Outcome{}, nil
	}
	// ~630 KiB decompressed, sent zstd-compressed under the 256 KiB limit:
	// one request fits the 1 MiB budget, two do not.
	body := logsBody(1000)
	if len(body) < 600<<10 || len(body) > 1<<20 {
		t.Fatalf("test body is %d bytes; adjust the record count", len(body))
	}
	held := make(chan string, 1)
	compressed := zstded(t, body)
	go func() {
		status, _, b, err := tryPost(httpURL(r, otlpwire.SignalLogs), compressed, "Content-Type", "application/x-protobuf", "Content-Encoding", "zstd")
		held <- fmt.Sprint(status, err, string(b))
	}()
	select {
	case <-entered:
	case s := <-held:
		t.Fatalf("first request was not held in the sink: %s", s)
	}
	status, h, resp := post(t, httpURL(r, otlpwire.SignalLogs), zstded(t, body), "Content-Type", "application/x-protobuf", "Content-Encoding", "zstd")
	if status != http.StatusTooManyRequests || h.Get("Retry-After") != "1" {
		t.Errorf("over budget: status %d, Retry-After %q: %s", status, h.Get("Retry-After"), statusMessage(t, resp))
	}
	close(release)
	if s := <-held; s != fmt.Sprint(http.StatusOK, nil, "") {
		t.Errorf("held request: %s", s)
	}
	if used := drained(r); used != 0 {
		t.Errorf("in-flight bytes %d after all requests finished", used)
	}
	mustServe(t, r)
}

// TestSlowloris opens 1,000 connections that trickle request headers. The
// server keeps serving others, closes the slow ones after the header
// timeout, and its heap stays bounded.
func TestSlowloris(t *testing.T) {
	cfg := testConfig()
	cfg.ReadHeaderTimeout = 500 * time.Millisecond
	r, _ := start(t, cfg)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	heapBefore := ms.HeapInuse

	const clients = 1000
	conns := make([]net.Conn, 0, clients)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range clients {
		c, err := net.Dial("tcp", r.HTTPAddr().String())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, "POST /v1/logs HTTP/1.1\r\nHost: x\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range conns { // one more header line each, never finishing
		io.WriteString(c, "X-Slow: 1\r\n") //nolint:errcheck // the server may have closed it already
	}
	mustServe(t, r)
	runtime.ReadMemStats(&ms)
	if grown := int64(ms.HeapInuse) - int64(heapBefore); grown > 64<<20 {
		t.Errorf("heap grew by %d MiB with %d slow clients", grown>>20, clients)
	}
	// Every slow connection is closed by the server.
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("slow connection %d not closed by the server: %v", i, err)
		}
	}
	mustServe(t, r)
}

// TestGRPCSlowClients holds 1,000 idle TCP connections to the gRPC port;
// a real client is still served.
func TestGRPCSlowClients(t *testing.T) {
	cfg := testConfig()
	cfg.ReadHeaderTimeout = 500 * time.Millisecond
	r, rec := start(t, cfg)
	conns := make([]net.Conn, 0, 1000)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 1000 {
		c, err := net.Dial("tcp", r.GRPCAddr().String())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
		io.WriteString(c, "PRI * HTTP/2.0\r\n") //nolint:errcheck // a preface cut short
	}
	conn := dialGRPC(t, r)
	if err := exportGRPC(context.Background(), conn, otlpwire.SignalLogs, logsBody(5), nil); err != nil {
		t.Fatalf("export while 1,000 clients stall: %v", err)
	}
	if n := rec.records(t, otlpwire.SignalLogs); n != 5 {
		t.Fatalf("%d records stored", n)
	}
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Fatalf("stalled connection %d not closed by the server: %v", i, err)
		}
	}
}

// TestJSONTooBigForBudget: a JSON request whose transcoding can never fit
// the in-flight budget is refused as too large (413), not as overloaded
// (429), which the client would retry forever.
func TestJSONTooBigForBudget(t *testing.T) {
	cfg := smallLimits()
	cfg.MaxRequestBytes = 1 << 20
	cfg.MaxInflightBytes = cfg.MaxDecompressedBytes // 1 MiB
	r, _ := start(t, cfg)
	doc := []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"` + strings.Repeat("x", 400<<10) + `"}}]}]}]}`)
	status, _, resp := post(t, httpURL(r, otlpwire.SignalLogs), doc, "Content-Type", "application/json")
	if status != http.StatusRequestEntityTooLarge || !strings.Contains(string(resp), "in-flight limit") {
		t.Errorf("status %d: %s", status, resp)
	}
	mustServe(t, r)
}
