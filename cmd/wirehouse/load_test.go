package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestLoadRemoteWriteVerify sends remote write load to an in-process serve
// and reads every acknowledged sample back through its Prometheus API.
func TestLoadRemoteWriteVerify(t *testing.T) {
	addrs := startServe(t)
	admin := "http://" + addrs["admin HTTP"]
	stdout, stderr, err := runArgs(t, "load", "--signal", "metrics", "--transport", "remote-write",
		"--endpoint", admin+"/api/v1/write", "--batch", "100", "--count", "20", "--concurrency", "4",
		"--variants", "8", "--quiet", "--verify")
	if err != nil {
		t.Fatalf("load: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	for _, want := range []string{
		"records    2000 sent, 2000 accepted",
		"verify     exact: series 800 expected, 800 found; samples 2000 expected, 2000 found; missing 0 series, 0 samples",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// A second run moves the same series forward in time and verifies only
	// its own range.
	stdout, stderr, err = runArgs(t, "load", "--signal", "metrics", "--transport", "remote-write",
		"--endpoint", admin+"/api/v1/write", "--batch", "100", "--count", "20", "--concurrency", "4",
		"--variants", "8", "--quiet", "--verify")
	if err != nil || !strings.Contains(stdout, "samples 2000 expected, 2000 found") {
		t.Fatalf("second load: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
}

// TestLoadVerifyMissing verifies against a server that never got the data.
func TestLoadVerifyMissing(t *testing.T) {
	written, empty := startServe(t), startServe(t)
	stdout, stderr, err := runArgs(t, "load", "--signal", "metrics", "--transport", "remote-write",
		"--endpoint", "http://"+written["admin HTTP"]+"/api/v1/write", "--batch", "100", "--count", "20",
		"--quiet", "--verify", "--query-endpoint", "http://"+empty["admin HTTP"])
	if err == nil {
		t.Fatalf("verify against an empty server passed:\n%s", stdout)
	}
	if !strings.Contains(err.Error(), "missing 1600 series, 2000 samples") || !strings.Contains(err.Error(), "0 of ") {
		t.Errorf("error does not name what is missing: %v", err)
	}
	if !strings.Contains(stdout, "series 1600 expected, 0 found; samples 2000 expected, 0 found") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

func TestLoadVerifyFlags(t *testing.T) {
	for _, args := range [][]string{
		{"load", "--signal", "logs", "--verify"},
		{"load", "--signal", "logs", "--transport", "remote-write"},
		{"load", "--signal", "metrics", "--transport", "remote-write", "--compress", "gzip"},
	} {
		if _, _, err := runArgs(t, args...); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}

// TestLoadOTLPVerify checks OTLP metrics load by totals of gauge and sum points.
func TestLoadOTLPVerify(t *testing.T) {
	addrs := startServe(t)
	stdout, stderr, err := runArgs(t, "load", "--signal", "metrics", "--transport", "http",
		"--endpoint", "http://"+addrs["OTLP/HTTP"], "--batch", "100", "--count", "8", "--variants", "4",
		"--quiet", "--verify", "--query-endpoint", "http://"+addrs["admin HTTP"])
	if err != nil || !strings.Contains(stdout, "verify     per-name:") || !strings.Contains(stdout, "missing 0 series, 0 samples") {
		t.Fatalf("load: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
}

// TestLoadRepeatStoresEverySample: with --repeat every request carries the
// same series one second later, so the store keeps every point of every
// request (none is a duplicate) and --verify finds them all.
func TestLoadRepeatStoresEverySample(t *testing.T) {
	addrs := startServe(t)
	stdout, stderr, err := runArgs(t, "load", "--signal", "metrics", "--transport", "grpc",
		"--endpoint", addrs["OTLP/gRPC"], "--batch", "50", "--count", "20", "--repeat",
		"--quiet", "--verify", "--query-endpoint", "http://"+addrs["admin HTTP"])
	if err != nil || !strings.Contains(stdout, "samples 1000 expected") || !strings.Contains(stdout, "missing 0 series, 0 samples") {
		t.Fatalf("load --repeat: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	if _, _, err := runArgs(t, "load", "--signal", "metrics", "--repeat", "--duration", "1s"); err == nil {
		t.Error("--repeat without --count accepted")
	}
}

// TestLoadRepeatExporters: --exporters 3 sends three copies of the series
// set, each in time order behind a window of three requests, so three
// concurrent senders lose nothing even to a store without an out-of-order
// window, and --verify finds three times the series.
func TestLoadRepeatExporters(t *testing.T) {
	addrs := startServe(t)
	stdout, stderr, err := runArgs(t, "load", "--signal", "metrics", "--transport", "grpc",
		"--endpoint", addrs["OTLP/gRPC"], "--batch", "50", "--count", "30", "--repeat", "--exporters", "3", "--concurrency", "3",
		"--quiet", "--verify", "--query-endpoint", "http://"+addrs["admin HTTP"])
	if err != nil || !strings.Contains(stdout, "records    1500 sent, 1500 accepted, 0 rejected") ||
		!strings.Contains(stdout, "series 150 expected, 150 found; samples 1500 expected, 1500 found") {
		t.Fatalf("load --exporters: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	for _, bad := range [][]string{
		{"--exporters", "2", "--count", "4"},
		{"--exporters", "2", "--count", "4", "--repeat", "--signal", "logs"},
		{"--exporters", "2", "--count", "4", "--repeat", "--transport", "remote-write"},
		{"--exporters", "-1", "--count", "4", "--repeat"},
	} {
		// No --endpoint: a flag check must refuse these before sending.
		args := append([]string{"load", "--signal", "metrics"}, bad...)
		if _, _, err := runArgs(t, args...); err == nil || !strings.Contains(err.Error(), "--exporters") {
			t.Errorf("%v: %v, want a refusal naming --exporters", bad, err)
		}
	}
}

// TestLoadPayloadServerCPU sends the rich comparison payload from three
// workers to a serve process that promotes every resource attribute:
// every sample of every series is stored (the workers keep each series in
// order), and --server-pid reports the server's CPU time (and the summary
// the client's own).
func TestLoadPayloadServerCPU(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(cfg, []byte("metrics: {promote_all_resource_attributes: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServeProc(t, filepath.Join(dir, "data"), "--config", cfg)
	defer p.stop(t)
	stdout, stderr, err := runArgs(t, "load", "--signal", "metrics", "--transport", "http",
		"--endpoint", "http://"+p.addrs["OTLP/HTTP"], "--payload", "rich", "--series", "300", "--batch", "30",
		"--count", "1200", "--concurrency", "3", "--server-pid", strconv.Itoa(p.cmd.Process.Pid), "--server-settle", "100ms",
		"--quiet", "--verify", "--query-endpoint", "http://"+p.addrs["admin HTTP"])
	// Found counts the 3 targets' target_info series too. The load is
	// large enough for the server to spend several of the kernel's 10 ms
	// clock ticks on it: with 60 requests it sometimes spent less than
	// one, and the server line (CPU time over zero) was left out.
	if err != nil || !strings.Contains(stdout, "series 300 expected") || !strings.Contains(stdout, "samples 36000 expected") ||
		!strings.Contains(stdout, "missing 0 series, 0 samples") ||
		!strings.Contains(stdout, "records accepted per server CPU-second") ||
		!strings.Contains(stdout, "CPU-seconds while sending") {
		t.Fatalf("load --payload rich: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	// Promoted: a resource attribute is a label of the series.
	resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/api/v1/label/k8s_pod_uid/values")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"status":"success"`) || strings.Count(string(body), "-0000-4000-8000-") != 3 {
		t.Errorf("k8s_pod_uid values: %s, want the 3 targets' uids", body)
	}
	for _, bad := range [][]string{
		{"--payload", "rich", "--duration", "1s"},
		{"--payload", "square", "--count", "1"},
		{"--payload", "gauge", "--count", "1", "--signal", "logs"},
	} {
		args := append([]string{"load", "--signal", "metrics"}, bad...)
		if _, _, err := runArgs(t, args...); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestLoadCPUProfile: --cpuprofile writes a profile of the sending phase
// (gzipped protobuf, as runtime/pprof writes it), and a run that fails
// before its first request leaves no empty file behind.
func TestLoadCPUProfile(t *testing.T) {
	addrs := startServe(t)
	prof := filepath.Join(t.TempDir(), "load.prof")
	stdout, stderr, err := runArgs(t, "load", "--signal", "logs", "--transport", "grpc",
		"--endpoint", addrs["OTLP/gRPC"], "--batch", "10", "--count", "50", "--quiet", "--cpuprofile", prof)
	if err != nil || !strings.Contains(stdout, "CPU-seconds while sending") {
		t.Fatalf("load: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	b, err := os.ReadFile(prof)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile: %d bytes %x, %v; want a gzipped pprof profile", len(b), b[:min(len(b), 2)], err)
	}
	bad := filepath.Join(t.TempDir(), "bad.prof")
	if _, _, err := runArgs(t, "load", "--signal", "logs", "--transport", "grpc", "--endpoint", "dns://a/b/c%%",
		"--count", "1", "--quiet", "--cpuprofile", bad); err == nil {
		t.Fatal("load to an unparsable endpoint succeeded")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a run that sent nothing left %s (%v)", bad, err)
	}
}

// TestLoadProcs checks the GOMAXPROCS load sends with: --procs when given,
// else the requests in flight while they are fewer than the processors,
// and nothing when the GOMAXPROCS environment variable chose already.
func TestLoadProcs(t *testing.T) {
	_, fromEnv := os.LookupEnv("GOMAXPROCS")
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	n := runtime.GOMAXPROCS(0)
	if got := loadProcs(3, 1); got != 3 {
		t.Errorf("loadProcs(--procs 3, concurrency 1) = %d, want 3", got)
	}
	if got := loadProcs(0, n+1); got != 0 {
		t.Errorf("loadProcs(0, concurrency %d) = %d, want 0 (leave GOMAXPROCS %d)", n+1, got, n)
	}
	if n > 1 {
		if got := loadProcs(0, 1); got != 1 {
			t.Errorf("loadProcs(0, concurrency 1) = %d, want 1 (GOMAXPROCS %d)", got, n)
		}
	}
	t.Setenv("GOMAXPROCS", strconv.Itoa(n))
	if got := loadProcs(0, 1); got != 0 {
		t.Errorf("with GOMAXPROCS set, loadProcs(0, 1) = %d, want 0", got)
	}
	if got := loadProcs(2, 1); got != 2 {
		t.Errorf("with GOMAXPROCS set, loadProcs(--procs 2, 1) = %d, want 2", got)
	}

	// A run with one processor gives the runtime its own choice back.
	if fromEnv {
		return // n came from the environment, not the runtime's choice
	}
	os.Unsetenv("GOMAXPROCS")
	addrs := startServe(t)
	if _, stderr, err := runArgs(t, "load", "--endpoint", addrs["OTLP/gRPC"], "--batch", "1", "--count", "5", "--procs", "1", "--quiet"); err != nil {
		t.Fatalf("load --procs 1: %v\n%s", err, stderr)
	}
	if got := runtime.GOMAXPROCS(0); got != n {
		t.Errorf("GOMAXPROCS %d after load --procs 1, want %d again", got, n)
	}
	if _, _, err := runArgs(t, "load", "--procs", "-1"); err == nil || !strings.Contains(err.Error(), "--procs") {
		t.Errorf("load --procs -1: err = %v, want a --procs usage error", err)
	}
}
