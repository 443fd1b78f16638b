package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wirehouse/wirehouse/internal/syncbuf"
)

// TestMain runs the tests, or, with WIREHOUSE_TEST_MAIN=1 in the
// environment, the wirehouse command itself: tests that must kill a real
// process (kill -9) start this test binary that way instead of building
// the command.
func TestMain(m *testing.M) {
	if os.Getenv("WIREHOUSE_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// startServe runs "wirehouse serve" on OS-chosen loopback ports and returns
// the addresses it logged.
func startServe(t *testing.T, extra ...string) map[string]string {
	t.Helper()
	addrs, _ := startServeAt(t, filepath.Join(t.TempDir(), "data"), extra...)
	return addrs
}

// startServeAt is startServe with data directory dataDir; stop stops the
// server and checks it shut down cleanly (the test's cleanup does, if
// stop was not called).
func startServeAt(t *testing.T, dataDir string, extra ...string) (addrs map[string]string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncbuf.Buffer{}
	args := append([]string{"serve", "--data-dir", dataDir,
		"--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--jaeger-storage-listen", "127.0.0.1:0"}, extra...)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, io.Discard, stderr) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("serve did not stop")
			}
			if !strings.Contains(stderr.String(), "shut down cleanly") {
				t.Errorf("no clean shutdown in the log:\n%s", stderr)
			}
		})
	}
	t.Cleanup(stop)
	re := regexp.MustCompile(`msg="serving (OTLP/gRPC|OTLP/HTTP|admin HTTP|Jaeger remote storage gRPC)" addr=(\S+)`)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		addrs := map[string]string{}
		for _, m := range re.FindAllStringSubmatch(stderr.String(), -1) {
			addrs[m[1]] = m[2]
		}
		if len(addrs) == 4 {
			return addrs, stop
		}
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v\n%s", err, stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not log its addresses:\n%s", stderr)
	return nil, nil
}

// TestServeAndLoad runs serve and load against each other: every request
// load reports as accepted shows up in serve's /metrics.
func TestServeAndLoad(t *testing.T) {
	addrs := startServe(t, "--log-level", "info")
	for _, tc := range []struct {
		name   string
		args   []string
		signal string
	}{
		{"grpc logs", []string{"--transport", "grpc", "--endpoint", addrs["OTLP/gRPC"], "--signal", "logs", "--compress", "zstd"}, "logs"},
		{"http json traces", []string{"--transport", "http", "--endpoint", addrs["OTLP/HTTP"], "--signal", "traces", "--encoding", "json", "--compress", "gzip"}, "traces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"load", "--count", "30", "--batch", "20", "--concurrency", "2", "--json", "--quiet"}, tc.args...)
			stdout, stderr, err := runArgs(t, args...)
			if err != nil {
				t.Fatalf("load: %v\n%s", err, stderr)
			}
			var res struct {
				Requests, OK int64
				Accepted     int64 `json:"records_accepted"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("load --json output: %v\n%s", err, stdout)
			}
			if res.Requests != 30 || res.OK != 30 || res.Accepted != 600 {
				t.Errorf("load result %+v\n%s", res, stdout)
			}
		})
	}
	resp, err := http.Get("http://" + addrs["admin HTTP"] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	for _, want := range []string{
		`wirehouse_receiver_accepted_records_total{signal="logs",transport="grpc"} 600`,
		`wirehouse_receiver_accepted_records_total{signal="traces",transport="http"} 600`,
		"wirehouse_spool_appends_total 60", // every logs and traces request went to the spool
		"wirehouse_lake_lag_records 60",    // and waits for the lake's 1 min max delay
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestLoadOutputs(t *testing.T) {
	addrs := startServe(t)
	stdout, _, err := runArgs(t, "load", "--endpoint", addrs["OTLP/gRPC"], "--count", "5", "--batch", "1", "--csv", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "signal,transport,") || !strings.HasPrefix(lines[1], "logs,grpc,proto,none,1,1,5,5,0,5,0,") {
		t.Errorf("CSV output:\n%s", stdout)
	}
	stdout, stderr, err := runArgs(t, "load", "--endpoint", addrs["OTLP/gRPC"], "--duration", "1500ms", "--batch", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"logs over grpc", "requests ", "latency    p50", "errors     none"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "requests") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
}

func TestServeBadFlags(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfgPath, []byte("limits: {max_request_size: 1MiB}\nlog: {level: debug}\n"), 0o644)
	cfg, err := parseServeFlags([]string{"--config", cfgPath, "--log-level", "warn"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Limits.MaxRequestSize != 1<<20 || cfg.Log.Level != "warn" {
		t.Errorf("file then flags: %+v", cfg)
	}
	for _, args := range [][]string{
		{"--max-inflight", "lots"},
		{"--log-level", "loud"},
		{"--config", filepath.Join(dir, "missing.yaml")},
		{"--max-request-size", "1GiB"}, // above max decompressed
		{"extra"},
	} {
		if _, err := parseServeFlags(args, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	for _, args := range [][]string{
		{"load", "--transport", "udp"},
		{"load", "--encoding", "json"},
		{"load", "--csv", "--json"},
		{"load", "--signal", "profiles"},
	} {
		if _, _, err := runArgs(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// peerFromEnv returns the path of a real peer that make test installs and
// names in env; without it (a plain go test) the test is skipped, saying
// what make test does to provide it.
func peerFromEnv(t *testing.T, env, provides string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		t.Skip(env + " not set; `make test` " + provides + " and sets it")
	}
	return path
}
