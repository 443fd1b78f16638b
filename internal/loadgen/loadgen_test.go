package loadgen

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/receiver"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server starts a receiver whose sinks run sink and counts records.
func server(t *testing.T, sink pipeline.SinkFunc) (*receiver.Receiver, *atomic.Int64) {
	t.Helper()
	var records atomic.Int64
	s := pipeline.SinkFunc(func(ctx context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		records.Add(int64(req.Records))
		if sink != nil {
			return sink(ctx, req)
		}
		return pipeline.Outcome{}, nil
	})
	cfg := receiver.DefaultConfig()
	cfg.GRPCAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	r, err := receiver.New(cfg, pipeline.Sinks{Metrics: []pipeline.Sink{s}, Logs: []pipeline.Sink{s}, Traces: []pipeline.Sink{s}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return r, &records
}

func TestRun(t *testing.T) {
	r, records := server(t, nil)
	for _, tc := range []struct {
		transport, encoding, compression string
		signal                           otlpwire.Signal
	}{
		{"grpc", "proto", "none", otlpwire.SignalLogs},
		{"grpc", "proto", "gzip", otlpwire.SignalTraces},
		{"grpc", "proto", "zstd", otlpwire.SignalMetrics},
		{"http", "proto", "none", otlpwire.SignalMetrics},
		{"http", "proto", "gzip", otlpwire.SignalLogs},
		{"http", "json", "zstd", otlpwire.SignalTraces},
		{"http", "json", "none", otlpwire.SignalLogs},
	} {
		name := fmt.Sprintf("%s/%s/%s/%s", tc.transport, tc.encoding, tc.compression, tc.signal)
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Transport, cfg.Encoding, cfg.Compression, cfg.Signal = tc.transport, tc.encoding, tc.compression, tc.signal
			cfg.Endpoint = r.GRPCAddr().String()
			if tc.transport == "http" {
				cfg.Endpoint = "http://" + r.HTTPAddr().String()
			}
			cfg.Batch, cfg.Resources, cfg.Concurrency, cfg.Count, cfg.Variants = 25, 2, 3, 40, 4
			before := records.Load()
			res, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != 40 || res.OK != 40 || res.Failed != 0 || len(res.Errors) != 0 {
				t.Fatalf("result %+v", res)
			}
			if res.Accepted != 1000 || records.Load()-before != 1000 {
				t.Fatalf("accepted %d, server counted %d, want 1000", res.Accepted, records.Load()-before)
			}
			// Metrics: 40 requests round robin over 4 variants send each
			// point ten times; a TSDB stores it once.
			if want := int64(1000); tc.signal == otlpwire.SignalMetrics {
				if res.Stored <= 0 || res.Stored > 100 {
					t.Errorf("stored %d, want at most the 100 points of the 4 variants", res.Stored)
				}
			} else if res.Stored != want {
				t.Errorf("stored %d, want %d", res.Stored, want)
			}
			if l := res.Latency; l.P50 <= 0 || l.P50 > l.P90 || l.P90 > l.P99 || l.P99 > l.Max {
				t.Errorf("latency percentiles out of order: %+v", l)
			}
		})
	}
}

// TestRunStored: a metrics run counts as stored the points distinct by
// series and millisecond of the variants acknowledged, however often they
// were sent; with --repeat every point is new.
func TestRunStored(t *testing.T) {
	r, _ := server(t, nil)
	cfg := DefaultConfig()
	cfg.Endpoint, cfg.Signal, cfg.Batch, cfg.Variants = r.GRPCAddr().String(), otlpwire.SignalMetrics, 50, 4
	var stored []int64
	for _, count := range []int{4, 12} {
		cfg.Count = count
		res, err := Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := newDistinct()
		for _, b := range generate(cfg, res.Start) {
			if err := d.add(otlpwire.MetricsRequest(b)); err != nil {
				t.Fatal(err)
			}
		}
		if res.Accepted != int64(count*50) || res.Stored != d.n || res.Stored > 200 {
			t.Errorf("count %d: accepted %d, stored %d; want %d accepted, %d stored", count, res.Accepted, res.Stored, count*50, d.n)
		}
		stored = append(stored, res.Stored)
	}
	if stored[0] != stored[1] {
		t.Errorf("stored %d after one round, %d after three", stored[0], stored[1])
	}
	cfg.Repeat, cfg.Count = true, 12
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stored != 600 || res.Accepted != 600 {
		t.Errorf("--repeat: accepted %d, stored %d, want 600 each", res.Accepted, res.Stored)
	}
	d := newDistinct()
	for _, b := range generate(cfg, res.Start) {
		if err := d.add(otlpwire.MetricsRequest(b)); err != nil {
			t.Fatal(err)
		}
	}
	if d.n != 600 {
		t.Errorf("--repeat generated %d distinct points of 600", d.n)
	}
}

func TestRunCountsRefusals(t *testing.T) {
	var n atomic.Int64
	r, _ := server(t, func(context.Context, *pipeline.Request) (pipeline.Outcome, error) {
		switch n.Add(1) % 3 {
		case 0:
			return pipeline.Outcome{}, fmt.Errorf("full: %w", pipeline.ErrOverloaded)
		case 1:
			return pipeline.Outcome{Rejected: 2, Message: "two too old"}, nil
		}
		return pipeline.Outcome{}, nil
	})
	for _, transport := range []string{"grpc", "http"} {
		t.Run(transport, func(t *testing.T) {
			n.Store(0)
			cfg := DefaultConfig()
			cfg.Transport, cfg.Batch, cfg.Count = transport, 10, 30
			cfg.Endpoint = r.GRPCAddr().String()
			code := "ResourceExhausted"
			if transport == "http" {
				cfg.Endpoint, code = r.HTTPAddr().String(), "http_429"
			}
			res, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed != 10 || res.Errors[code] != 10 || res.Rejected != 20 || res.Accepted != 20*10-20 {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestRunDurationAndRate(t *testing.T) {
	r, _ := server(t, nil)
	cfg := DefaultConfig()
	cfg.Endpoint, cfg.Batch, cfg.Duration, cfg.Rate, cfg.Concurrency = r.GRPCAddr().String(), 1, 300*time.Millisecond, 100, 2
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 100 requests/s for 0.3 s: about 30; the bound is loose, the point is
	// that the rate limits (unlimited would be thousands).
	if res.Requests < 1 || res.Requests > 40 || res.Failed != 0 {
		t.Errorf("result %+v", res)
	}
}

func TestRunInterrupted(t *testing.T) {
	r, _ := server(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cfg := DefaultConfig()
	cfg.Endpoint, cfg.Batch, cfg.Count = r.GRPCAddr().String(), 1, 1<<30
	res, err := Run(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || res.Requests == 0 || res.Failed != 0 {
		t.Errorf("result %+v", res)
	}
}

func TestConnectionRefused(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Transport, cfg.Endpoint, cfg.Count, cfg.Batch = "http", "127.0.0.1:1", 3, 1
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 3 || res.Errors["connection"] != 3 {
		t.Errorf("result %+v", res)
	}
}

func TestValidate(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"transport":   func(c *Config) { c.Transport = "udp" },
		"json grpc":   func(c *Config) { c.Encoding = "json" },
		"compression": func(c *Config) { c.Compression = "lz4" },
		"batch":       func(c *Config) { c.Batch = 0 },
		"resources":   func(c *Config) { c.Resources = c.Batch + 1 },
		"no end":      func(c *Config) { c.Duration = 0 },
		"rate":        func(c *Config) { c.Rate = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			c := DefaultConfig()
			mod(&c)
			if c.Validate() == nil {
				t.Error("accepted")
			}
		})
	}
}

// TestParseStatCPU reads utime+stime past a command name holding spaces
// and parentheses, and refuses short or bad lines.
func TestParseStatCPU(t *testing.T) {
	line := "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 12 0 100 0 0\n"
	d, err := parseStatCPU([]byte(line))
	if err != nil || d != 3250*time.Millisecond {
		t.Fatalf("got %v, %v; want 3.25s", d, err)
	}
	for _, bad := range []string{"", "1 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 -5 7 8"} {
		if _, err := parseStatCPU([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	self, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	later, err := ProcessCPU(os.Getpid())
	if err != nil || later < self {
		t.Fatalf("CPU time went from %v to %v (%v)", self, later, err)
	}
}

// TestWindowOrder: with a window, no request starts before every request
// k or more below it has ended, and requests closer than k overlap.
func TestWindowOrder(t *testing.T) {
	const count, batch, series = 400, 10, 50 // k = 5
	w := newWindow(count, batch, series)
	var (
		next    atomic.Int64
		mu      sync.Mutex
		ended   = make([]bool, count)
		overlap atomic.Int64
		running atomic.Int64
		wg      sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for {
				n := next.Add(1) - 1
				if n >= count {
					return
				}
				if !w.acquire(context.Background(), n) {
					t.Error("acquire failed")
					return
				}
				mu.Lock()
				for m := int64(0); m <= n-5; m++ {
					if !ended[m] {
						t.Errorf("request %d started before %d ended", n, m)
					}
				}
				mu.Unlock()
				if running.Add(1) > 1 {
					overlap.Add(1)
				}
				time.Sleep(50 * time.Microsecond)
				running.Add(-1)
				mu.Lock()
				ended[n] = true
				mu.Unlock()
				w.release(n)
			}
		})
	}
	wg.Wait()
	if overlap.Load() == 0 {
		t.Error("no two requests ever ran together")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if newWindow(10, 1, 2).acquire(ctx, 5) {
		t.Error("acquire of a blocked request with a cancelled context succeeded")
	}
}

// FuzzParseStatCPU: any line gives a CPU time or an error, never a panic
// or a negative time.
func FuzzParseStatCPU(f *testing.F) {
	f.Add([]byte("4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 12 0 100 0 0\n"))
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseStatCPU(b)
		if err == nil && d < 0 {
			t.Fatalf("negative CPU time %v", d)
		}
	})
}
