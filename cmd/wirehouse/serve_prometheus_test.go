package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/syncbuf"
)

// TestServePrometheusRemoteWrite runs a real Prometheus server (Debian's
// prometheus package, 2.42, which make test extracts next to promtool) that
// scrapes serve's own /metrics every second and remote-writes what it
// scrapes to serve's /api/v1/write: the remote-write sender a receiver
// meets most. After a few scrapes, every sample Prometheus holds for the
// job (up to two seconds ago, which remote write has had time to send)
// must be in serve, with the same count, and the scraped series must carry
// Prometheus' job and instance labels. Needs WIREHOUSE_PROMETHEUS.
func TestServePrometheusRemoteWrite(t *testing.T) {
	prom := peerFromEnv(t, "WIREHOUSE_PROMETHEUS", "extracts Debian's prometheus server")
	// The admin server wants a token: Prometheus sends it when scraping
	// and remote-writing (authorization: credentials).
	const token = "prometheus-agent-0123456789"
	p := startServeProc(t, t.TempDir(), "--admin-bearer-tokens-file", writeTokens(t, filepath.Join(t.TempDir(), "admin-tokens"), token+"\n"))
	defer p.stop(t)
	admin := p.addrs["admin HTTP"]
	inServe := func(q, at string) float64 { return promQueryAuth(t, admin, q, at, token)[""] }

	promAddr, log := startPrometheus(t, prom, fmt.Sprintf(`global: {scrape_interval: 1s}
scrape_configs:
  - job_name: wirehouse
    static_configs: [{targets: [%q]}]
    authorization: {credentials: %q}
remote_write:
  - url: http://%s/api/v1/write
    authorization: {credentials: %q}
    queue_config: {batch_send_deadline: 200ms, min_backoff: 50ms, max_backoff: 500ms}
`, admin, token, admin, token))

	// Wait for eight scrapes to have reached serve.
	const scrapes = `count_over_time(up{job="wirehouse"}[10m])`
	for deadline := time.Now().Add(60 * time.Second); inServe(scrapes, "") < 8; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve has %v scrapes of up after 60 s\nprometheus:\n%s\nserve:\n%s", inServe(scrapes, ""), log, p.stderr)
		}
	}
	// Every sample Prometheus scraped until 2 s ago, in both: the same
	// count per query.
	at := fmt.Sprint(time.Now().Add(-2 * time.Second).Unix())
	for _, q := range []string{
		`count_over_time(up{job="wirehouse"}[10m])`,
		`count_over_time(scrape_samples_scraped{job="wirehouse"}[10m])`,
		`count({job="wirehouse"})`,
		`sum(wirehouse_receiver_inflight_bytes_limit{job="wirehouse"})`,
		`count(count by (__name__) ({job="wirehouse"}))`,
	} {
		inProm, there := promQueryAt(t, promAddr, q, at)[""], inServe(q, at)
		if inProm == 0 || inProm != there {
			t.Errorf("%s at %s: %v in Prometheus, %v in serve", q, at, inProm, there)
		}
		t.Logf("%s: %v in both", q, there)
	}
	if up := inServe(`up{job="wirehouse",instance="`+admin+`"}`, ""); up != 1 {
		t.Errorf("up{instance=%q} = %v in serve, want 1", admin, up)
	}
}

// startPrometheus runs the Prometheus server at prom with the given
// configuration and flags on a loopback port until the test ends, and
// returns its address and its log.
func startPrometheus(t *testing.T, prom, config string, flags ...string) (string, *syncbuf.Buffer) {
	t.Helper()
	// Prometheus 2.42 needs a fixed web port: take one the OS hands out.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prom, append([]string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + addr}, flags...)...)
	log := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	return addr, log
}
