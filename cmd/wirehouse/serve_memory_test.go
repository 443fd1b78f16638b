package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the gzip compressor for grpc.UseCompressor
	"google.golang.org/grpc/status"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// memoryCeiling is the peak RSS docs/ARCHITECTURE.md promises for serve
// with its default settings under TestServeMemoryCeiling's attack.
const memoryCeiling = 512 << 20

// procKiB reads a "VmHWM:"-style field of /proc/<pid>/status in bytes.
func procKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// bigLogs is a valid logs request of about size bytes.
func bigLogs(size int) []byte {
	one := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 11, Resources: 4, ScopesPerResource: 2, TotalRecords: 4000})
	n := max(1, 4000*size/len(one))
	return synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 11, Resources: 8, ScopesPerResource: 2, TotalRecords: n})
}

// wideJSON is an OTLP/JSON logs request of one record with n attributes.
func wideJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"wide-json"}}]},"scopeLogs":[{"logRecords":[{"timeUnixNano":"1764000000000000000","body":{"stringValue":"wide"},"attributes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"key":"k%07d","value":{"stringValue":"v%d"}}`, i, i)
	}
	b.WriteString(`]}]}]}]}`)
	return b.Bytes()
}

// TestServeMemoryCeiling runs the attack sequence of issue 20 against a
// serve with default settings and checks its peak RSS (VmHWM) against the
// documented ceiling: gzip and zstd bombs of 256 MiB; 30 concurrent 60 MB requests
// over HTTP, then over gRPC, and 30 just under gRPC's message limit;
// 200 stalled HTTP bodies; a 1M-attribute
// OTLP/JSON request. It reports what each request got; every request is
// either acknowledged or refused with a status, and the server stays
// ready throughout.
func TestServeMemoryCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("sends about 4 GB over loopback")
	}
	p := startServeProc(t, t.TempDir())
	defer p.stop(t)
	pid := p.cmd.Process.Pid
	httpURL := "http://" + p.addrs["OTLP/HTTP"] + "/v1/logs"
	var statusMu sync.Mutex
	statuses := map[string]map[int]int{}
	count := func(phase string, code int) {
		statusMu.Lock()
		defer statusMu.Unlock()
		if statuses[phase] == nil {
			statuses[phase] = map[int]int{}
		}
		statuses[phase][code]++
	}
	post := func(phase string, body []byte, headers ...string) {
		req, err := http.NewRequest(http.MethodPost, httpURL, bytes.NewReader(body))
		if err != nil {
			t.Error(err)
			return
		}
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			count(phase, -1)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		count(phase, resp.StatusCode)
	}
	ready := func(when string) {
		resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/readyz")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: not ready: %v %v\n%s", when, resp, err, p.stderr)
		}
		resp.Body.Close()
	}
	rss := func(when string) {
		t.Logf("%-28s RSS %4d MiB, peak %4d MiB (anonymous %d MiB, from files %d MiB)", when, procKiB(t, pid, "VmRSS")>>20, procKiB(t, pid, "VmHWM")>>20, procKiB(t, pid, "RssAnon")>>20, procKiB(t, pid, "RssFile")>>20)
	}
	rss("started")

	// Bombs: 256 MiB of zeros, compressed (four times the limit).
	zeros := make([]byte, 256<<20)
	var gz, zs bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	gw.Write(zeros)
	gw.Close()
	zw, _ := zstd.NewWriter(&zs, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	zw.Write(zeros)
	zw.Close()
	zeros = nil
	for range 4 {
		post("bombs", gz.Bytes(), "Content-Type", "application/x-protobuf", "Content-Encoding", "gzip")
		post("bombs", zs.Bytes(), "Content-Type", "application/x-protobuf", "Content-Encoding", "zstd")
	}
	ready("after bombs")
	rss("after bombs")

	// 30 concurrent 60 MB requests, over HTTP and then gRPC.
	big := bigLogs(60 << 20)
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() { post("30x60MB http", big, "Content-Type", "application/x-protobuf") })
	}
	wg.Wait()
	ready("after 30x60MB http")
	rss("after 30x60MB http")
	conn, err := grpc.NewClient(p.addrs["OTLP/gRPC"], grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(otlpgrpc.Codec{}), grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		t.Fatal(err)
	}
	// Over gRPC: 30 at 60 MB (over the message limit), then 30 at just
	// under the 4 MiB limit, each compressed or not.
	grpcBurst := func(phase string, body []byte, opts ...grpc.CallOption) {
		for range 30 {
			wg.Go(func() {
				var out otlpgrpc.Message
				defer out.Release()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				err := conn.Invoke(ctx, otlpwire.SignalLogs.ExportMethod(), &otlpgrpc.Message{B: body}, &out, opts...)
				code := 200
				if err != nil {
					code = 1000 + int(status.Code(err))
				}
				count(phase, code)
			})
		}
		wg.Wait()
		ready("after " + phase)
		rss("after " + phase)
	}
	grpcBurst("30x60MB grpc", big)
	big = nil
	near := bigLogs(3800 << 10)
	grpcBurst("30x3.8MB grpc", near)
	grpcBurst("30x3.8MB grpc gzip", near, grpc.UseCompressor("gzip"))
	conn.Close()

	// 200 stalled bodies: each announces 60 MB, sends 1 MB and waits.
	var stalled []net.Conn
	chunk := bytes.Repeat([]byte{0x0a}, 1<<20)
	for range 200 {
		c, err := net.Dial("tcp", p.addrs["OTLP/HTTP"])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /v1/logs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-protobuf\r\nContent-Length: %d\r\n\r\n", 60<<20)
		c.Write(chunk)
		stalled = append(stalled, c)
	}
	time.Sleep(2 * time.Second)
	ready("with 200 stalled bodies")
	rss("with 200 stalled bodies")
	for _, c := range stalled {
		c.Close()
	}

	// One OTLP/JSON request of 1M attributes (about 45 MB).
	post("1M-attribute JSON", wideJSON(1_000_000), "Content-Type", "application/json")
	ready("after 1M-attribute JSON")
	rss("after 1M-attribute JSON")

	time.Sleep(3 * time.Second) // the lake loader writes what was accepted
	rss("settled")
	peak := procKiB(t, pid, "VmHWM")
	for phase, m := range statuses {
		t.Logf("%s: statuses %v", phase, m)
	}
	t.Logf("peak RSS %d MiB (ceiling %d MiB)", peak>>20, memoryCeiling>>20)
	if peak > memoryCeiling {
		t.Errorf("peak RSS %d MiB over the documented ceiling of %d MiB", peak>>20, memoryCeiling>>20)
	}
}
