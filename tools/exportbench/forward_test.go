package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// TestWirehouseForwardsToCollector: a wirehouse serve gateway that
// stores nothing forwards logs to a real OpenTelemetry Collector
// otlpreceiver, over OTLP/gRPC with zstd and over OTLP/HTTP with gzip.
// Every log record the gateway acknowledged reaches the Collector's
// consumer with its resource, scope and every field equal, as pdata
// decodes them.
func TestWirehouseForwardsToCollector(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Skip(err)
	}
	bin := filepath.Join(t.TempDir(), "wirehouse")
	build := exec.Command("go", "build", "-o", bin, "./cmd/wirehouse")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build wirehouse: %v\n%s", err, out)
	}
	for _, c := range []struct{ protocol, compression string }{{"grpc", "zstd"}, {"http", "gzip"}} {
		t.Run(c.protocol, func(t *testing.T) {
			sink := new(consumertest.LogsSink)
			f := otlpreceiver.NewFactory()
			cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
			grpcAddr, httpAddr := freeAddr(), freeAddr()
			cfg.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
			cfg.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
			r, err := f.CreateLogs(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, sink)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Start(context.Background(), componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			defer r.Shutdown(context.Background())
			endpoint := grpcAddr
			if c.protocol == "http" {
				endpoint = "http://" + httpAddr
			}
			gw := startGateway(t, bin, "--store", "none", "--forward-endpoints", endpoint, "--forward-protocol", c.protocol,
				"--forward-compression", c.compression, "--forward-signals", "logs")
			var want []string
			for i := range 20 {
				ld := testLogs(i)
				want = append(want, logLines(t, ld)...)
				body, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := http.Post("http://"+gw.otlpHTTP+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("gateway answered %d", resp.StatusCode)
				}
			}
			deadline := time.Now().Add(30 * time.Second)
			for sink.LogRecordCount() < len(want) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			gw.stop(t)
			var got []string
			for _, ld := range sink.AllLogs() {
				got = append(got, logLines(t, ld)...)
			}
			slices.Sort(got)
			slices.Sort(want)
			t.Logf("%d log records sent to the gateway, %d received by the Collector in %d requests", len(want), len(got), len(sink.AllLogs()))
			if !slices.Equal(got, want) {
				t.Fatalf("the Collector received %d log records, want %d equal to those sent", len(got), len(want))
			}
		})
	}
}

// testLogs is request i: two resources, two scopes each, records with
// every kind of attribute and body.
func testLogs(i int) plog.Logs {
	ld := plog.NewLogs()
	base := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for r := range 2 {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.SetSchemaUrl("https://opentelemetry.io/schemas/1.26.0")
		rl.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", (i+r)%5))
		rl.Resource().Attributes().PutInt("host.index", int64(r))
		for s := range 2 {
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(fmt.Sprintf("scope-%d", s))
			sl.Scope().SetVersion("1.2.3")
			for k := range 5 {
				lr := sl.LogRecords().AppendEmpty()
				lr.SetTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Duration(i*100+k) * time.Millisecond)))
				lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Second)))
				lr.SetSeverityNumber(plog.SeverityNumberWarn)
				lr.SetSeverityText("WARN")
				lr.Body().SetStr(fmt.Sprintf("request %d record %d: ünïcode ✓", i, k))
				a := lr.Attributes()
				a.PutStr("str", "v")
				a.PutInt("int", int64(k))
				a.PutDouble("double", 1.5)
				a.PutBool("bool", k%2 == 0)
				a.PutEmptyBytes("bytes").FromRaw([]byte{0, 1, 2})
				a.PutEmptySlice("slice").AppendEmpty().SetStr("x")
				a.PutEmptyMap("map").PutInt("nested", 7)
				lr.SetTraceID(pcommon.TraceID{byte(i), byte(r), byte(s), byte(k), 1})
				lr.SetSpanID(pcommon.SpanID{byte(k), 2})
				lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
				lr.SetEventName("event")
			}
		}
	}
	return ld
}

// logLines is one line per log record: its resource, scope and record,
// marshaled alone.
func logLines(t *testing.T, ld plog.Logs) []string {
	var out []string
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			for k := 0; k < sl.LogRecords().Len(); k++ {
				one := plog.NewLogs()
				orl := one.ResourceLogs().AppendEmpty()
				rl.Resource().CopyTo(orl.Resource())
				orl.SetSchemaUrl(rl.SchemaUrl())
				osl := orl.ScopeLogs().AppendEmpty()
				sl.Scope().CopyTo(osl.Scope())
				osl.SetSchemaUrl(sl.SchemaUrl())
				sl.LogRecords().At(k).CopyTo(osl.LogRecords().AppendEmpty())
				b, err := (&plog.ProtoMarshaler{}).MarshalLogs(one)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, string(b))
			}
		}
	}
	return out
}

// gateway is a wirehouse serve child process.
type gateway struct {
	cmd      *exec.Cmd
	stderr   *lockedBuffer
	otlpHTTP string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startGateway(t *testing.T, bin string, extra ...string) *gateway {
	t.Helper()
	args := append([]string{"serve", "--data-dir", t.TempDir(), "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0",
		"--admin-listen", "127.0.0.1:0", "--jaeger-storage-listen", ""}, extra...)
	g := &gateway{cmd: exec.Command(bin, args...), stderr: &lockedBuffer{}}
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if g.cmd.ProcessState == nil {
			g.cmd.Process.Kill()
			g.cmd.Wait()
		}
	})
	re := regexp.MustCompile(`msg="serving OTLP/HTTP" addr=(\S+)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(g.stderr.String()); m != nil {
			g.otlpHTTP = m[1]
			return g
		}
	}
	t.Fatalf("wirehouse serve did not start:\n%s", g.stderr)
	return nil
}

func (g *gateway) stop(t *testing.T) {
	t.Helper()
	g.cmd.Process.Signal(syscall.SIGTERM)
	if err := g.cmd.Wait(); err != nil {
		t.Fatalf("wirehouse serve: %v\n%s", err, g.stderr)
	}
	if strings.Contains(g.stderr.String(), "level=ERROR") {
		t.Errorf("wirehouse serve logged errors:\n%s", g.stderr)
	}
}
