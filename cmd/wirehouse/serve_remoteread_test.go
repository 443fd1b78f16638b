package main

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestServePrometheusRemoteRead: a real Prometheus server (Debian's 2.42)
// with serve as its remote_read endpoint answers queries with samples only
// serve holds, exactly as serve stores them.
func TestServePrometheusRemoteRead(t *testing.T) {
	prom := peerFromEnv(t, "WIREHOUSE_PROMETHEUS", "extracts Debian's prometheus server")
	p := startServeProc(t, t.TempDir())
	defer p.stop(t)
	admin := p.addrs["admin HTTP"]
	at := time.Now().Add(-30 * time.Second).Truncate(time.Second)
	seqs := []int{1, 2, 3, 5, 8, 13}
	if code := remoteWrite(t, admin, "read_test", seqs, at); code != http.StatusNoContent {
		t.Fatalf("remote write to serve: %d", code)
	}

	promAddr, log := startPrometheus(t, prom, fmt.Sprintf(`remote_read:
  - url: http://%s/api/v1/read
    read_recent: true
`, admin))
	var got map[string]float64
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if resp, err := http.Get("http://" + promAddr + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				got = promQueryAt(t, promAddr, "read_test", fmt.Sprint(at.Unix()))
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30 s:\n%s", log)
		}
	}
	if len(got) != len(seqs) {
		t.Errorf("Prometheus read %d series through remote read, want %d: %v\n%s", len(got), len(seqs), got, log)
	}
	for _, i := range seqs {
		if v, ok := got[fmt.Sprint(i)]; !ok || v != float64(i) {
			t.Errorf("read_test{seq=%d} = %v (%v) through Prometheus, want %d", i, v, ok, i)
		}
	}
	// A range function over the remote series: one sample each.
	if n := promQueryAt(t, promAddr, `sum(count_over_time(read_test[5m]))`, "")[""]; n != float64(len(seqs)) {
		t.Errorf("sum(count_over_time(read_test[5m])) through Prometheus = %v, want %d", n, len(seqs))
	}
}
