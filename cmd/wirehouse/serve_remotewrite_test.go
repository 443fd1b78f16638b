package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/wirehouse/wirehouse/internal/syncbuf"
)

// TestServeRemoteWriteToPrometheus: serve sends the metrics it stores to
// a real Prometheus server (Debian's 2.42, with its remote-write
// receiver) by remote write, with Prometheus' own queue manager reading
// the metric store's write-ahead log. Every sample sent over OTLP is
// queryable in Prometheus, including those sent while Prometheus was
// down for 30 s. Needs WIREHOUSE_PROMETHEUS.
func TestServeRemoteWriteToPrometheus(t *testing.T) {
	t.Parallel() // mostly waiting: runs beside the forwarding test
	prom := peerFromEnv(t, "WIREHOUSE_PROMETHEUS", "extracts Debian's prometheus server")
	promDir := t.TempDir()
	promAddr := freeAddr(t)
	if err := os.WriteFile(filepath.Join(promDir, "prometheus.yml"), []byte("global: {scrape_interval: 1m}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var promLog syncbuf.Buffer
	startProm := func() *exec.Cmd {
		cmd := exec.Command(prom, "--config.file="+filepath.Join(promDir, "prometheus.yml"),
			"--storage.tsdb.path="+filepath.Join(promDir, "data"), "--web.listen-address="+promAddr,
			"--web.enable-remote-write-receiver")
		cmd.Stdout, cmd.Stderr = &promLog, &promLog
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	pc := startProm()
	defer func() {
		pc.Process.Signal(syscall.SIGTERM)
		pc.Wait()
	}()
	cfg := filepath.Join(t.TempDir(), "wirehouse.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`remote_write:
  - url: http://%s/api/v1/write
    queue_config: {batch_send_deadline: 200ms, min_backoff: 100ms, max_backoff: 1s}
`, promAddr)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServeProc(t, t.TempDir(), "--config", cfg)
	defer p.stop(t)

	const series = 20
	// Points are stamped when they are sent, as SDKs stamp them when they
	// collect: Prometheus' WAL watcher sends only samples newer than its
	// start.
	send := func(from, to int) { // batches, to exclusive
		for k := from; k < to; k++ {
			now := time.Now()
			md := pmetric.NewMetrics()
			rm := md.ResourceMetrics().AppendEmpty()
			rm.Resource().Attributes().PutStr("service.name", "rw-test")
			g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
			g.SetName("rw_test_gauge")
			gauge := g.SetEmptyGauge()
			for i := range series {
				dp := gauge.DataPoints().AppendEmpty()
				dp.SetTimestamp(pcommon.NewTimestampFromTime(now))
				dp.SetDoubleValue(float64(k*100 + i))
				dp.Attributes().PutInt("series", int64(i))
			}
			body, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.Post("http://"+p.addrs["OTLP/HTTP"]+"/v1/metrics", "application/x-protobuf", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("OTLP metrics: %d", resp.StatusCode)
			}
			time.Sleep(2 * time.Millisecond) // the next batch is later
		}
	}
	const q = `sum(count_over_time(rw_test_gauge[1h]))`
	inProm := func() float64 {
		resp, err := http.Get("http://" + promAddr + "/-/ready")
		if err != nil {
			return -1
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return -1
		}
		return promQueryAt(t, promAddr, q, "")[""]
	}
	waitCount := func(want float64, what string) {
		deadline := time.Now().Add(60 * time.Second)
		for inProm() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: Prometheus has %v samples, want %v\nserve:\n%s\nprometheus:\n%s", what, inProm(), want, p.stderr, &promLog)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	send(0, 30)
	waitCount(series*30, "first samples")
	inServe := promQuery(t, p.addrs["admin HTTP"], q)[""]

	// Prometheus down for 30 s while samples keep coming.
	pc.Process.Signal(syscall.SIGTERM)
	pc.Wait()
	send(30, 60)
	time.Sleep(30 * time.Second)
	pc = startProm()
	waitCount(series*60, "after Prometheus was down 30 s")
	t.Logf("%d samples in Prometheus, as sent; serve held %v of the first %d", series*60, inServe, series*30)
	if inServe != series*30 {
		t.Errorf("serve holds %v samples of the first batch, want %d", inServe, series*30)
	}
}

// TestServeRemoteWriteV2: serve sends remote write 2.0
// (io.prometheus.write.v2.Request) to another serve, whose receiver is
// Prometheus' own write handler: every sample arrives.
func TestServeRemoteWriteV2(t *testing.T) {
	b := startServeProc(t, t.TempDir())
	defer b.stop(t)
	cfg := filepath.Join(t.TempDir(), "wirehouse.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`remote_write:
  - url: http://%s/api/v1/write
    protobuf_message: io.prometheus.write.v2.Request
    queue_config: {batch_send_deadline: 200ms}
`, b.addrs["admin HTTP"])), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startServeProc(t, t.TempDir(), "--config", cfg)
	defer a.stop(t)
	const series, batches = 20, 30
	for range batches {
		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "rw2-test")
		g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		g.SetName("rw2_test_total")
		sum := g.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		now := time.Now()
		for i := range series {
			dp := sum.DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.NewTimestampFromTime(now))
			dp.SetIntValue(int64(i))
			dp.Attributes().PutInt("series", int64(i))
		}
		body, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post("http://"+a.addrs["OTLP/HTTP"]+"/v1/metrics", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("OTLP metrics: %d", resp.StatusCode)
		}
		time.Sleep(2 * time.Millisecond)
	}
	const q = `sum(count_over_time(rw2_test_total[1h]))`
	deadline := time.Now().Add(30 * time.Second)
	for promQuery(t, b.addrs["admin HTTP"], q)[""] != series*batches {
		if time.Now().After(deadline) {
			t.Fatalf("the receiving serve has %v samples, want %d\n%s", promQuery(t, b.addrs["admin HTTP"], q)[""], series*batches, a.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Prometheus' handler counts the samples of 2.0 requests that came
	// without metadata (the sender has no metadata WAL records); 1.0
	// requests do not move it.
	if v2 := scrapeValue(t, b.addrs["admin HTTP"], "prometheus_api_remote_write_without_metadata_appended_samples_total"); v2 != series*batches {
		t.Errorf("the receiver counted %v samples of remote write 2.0 requests, want %d", v2, series*batches)
	}
}
