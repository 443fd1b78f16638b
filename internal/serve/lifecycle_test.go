package serve

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestNewClosesOnError: whichever step New fails at, it closes what it had
// opened, so the same data directory opens again at once (the metric
// store's and the spool's locks are free) and no goroutine is left
// (goleak in TestMain).
func TestNewClosesOnError(t *testing.T) {
	injected := errors.New("injected")
	for _, step := range []string{"quarantine", "remote write", "metric store", "spool", "lake loader", "forward", "sinks", "receiver", "admin"} {
		t.Run(step, func(t *testing.T) {
			cfg := testConfig(t)
			reached := false
			_, err := newServer(cfg, io.Discard, func(s string) error {
				if s == step {
					reached = true
					return injected
				}
				return nil
			})
			if !reached || !errors.Is(err, injected) {
				t.Fatalf("New did not fail at %q: %v", step, err)
			}
			s, err := New(cfg, io.Discard)
			if err != nil {
				t.Fatalf("reopening after a failure at %q: %v", step, err)
			}
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			if err := s.Shutdown(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestStartFailureReleasesStorage: a Start that cannot listen closes the
// storage, so another server can open the data directory.
func TestStartFailureReleasesStorage(t *testing.T) {
	a := startServer(t, testConfig(t))
	cfg := testConfig(t)
	cfg.Admin.Listen = a.Addrs().Admin.String()
	b, err := New(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err == nil || !strings.Contains(err.Error(), "listen admin HTTP") {
		t.Fatalf("Start on a busy admin port: %v", err)
	}
	cfg.Admin.Listen = "127.0.0.1:0"
	cfg.Jaeger.StorageListen = a.Addrs().Jaeger.String()
	c, err := New(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err == nil || !strings.Contains(err.Error(), "listen jaeger storage gRPC") {
		t.Fatalf("Start on a busy Jaeger storage port: %v", err)
	}
	cfg.Jaeger.StorageListen = "127.0.0.1:0"
	startServer(t, cfg)
}

// TestUsageCountsStoredOnly: the per-service counters count a request
// once the stores took it, not one they refused: here a logs request
// larger than the whole spool (413), and a metrics request whose points
// the store refused in full would be told apart the same way.
func TestUsageCountsStoredOnly(t *testing.T) {
	cfg := testConfig(t)
	cfg.Spool.SegmentSize = 1 << 20
	cfg.Spool.MaxSize = 2 << 20
	s := startServer(t, cfg)
	a := s.Addrs()
	url := "http://" + a.HTTP.String() + "/v1/logs"
	huge := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 12000})
	if len(huge) <= 2<<20 {
		t.Fatalf("the large request is only %d bytes", len(huge))
	}
	if code, resp := post(t, url, "application/x-protobuf", huge); code != 413 {
		t.Fatalf("a request larger than the spool: status %d %s", code, resp)
	}
	small := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 2, Resources: 1, ScopesPerResource: 1, TotalRecords: 25})
	if code, resp := post(t, url, "application/x-protobuf", small); code != 200 {
		t.Fatalf("a small request: status %d %s", code, resp)
	}
	_, metrics := get(t, "http://"+a.Admin.String()+"/metrics")
	total := 0
	for _, l := range strings.Split(grep(metrics, "wirehouse_sink_records_total{"), "\n") {
		if strings.Contains(l, `signal="logs"`) {
			f := strings.Fields(l)
			n, err := strconv.Atoi(f[len(f)-1])
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
	}
	if total != 25 {
		t.Errorf("usage counted %d log records, want the 25 stored:\n%s", total, grep(metrics, "wirehouse_sink_records_total"))
	}
}
