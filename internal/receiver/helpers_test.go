package receiver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// recorder is a sink that keeps a copy of every request it accepts.
type recorder struct {
	mu   sync.Mutex
	reqs map[otlpwire.Signal][][]byte
	// hook, if set, runs before the request is recorded; a non-nil error
	// or a rejection refuses it.
	hook func(ctx context.Context, req *pipeline.Request) (pipeline.Outcome, error)
}

func (r *recorder) Consume(ctx context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
	if r.hook != nil {
		out, err := r.hook(ctx, req)
		if err != nil {
			return out, err
		}
		if out.Rejected > 0 {
			return out, nil
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reqs == nil {
		r.reqs = map[otlpwire.Signal][][]byte{}
	}
	r.reqs[req.Signal] = append(r.reqs[req.Signal], bytes.Clone(req.Body))
	return pipeline.Outcome{}, nil
}

func (r *recorder) bodies(sig otlpwire.Signal) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.reqs[sig]...)
}

// records counts the records of sig received so far with the signal's
// counter.
func (r *recorder) records(t *testing.T, sig otlpwire.Signal) int {
	t.Helper()
	n := 0
	for _, b := range r.bodies(sig) {
		c, err := sig.Count(b)
		if err != nil {
			t.Fatalf("recorded %s request does not count: %v", sig, err)
		}
		n += c
	}
	return n
}

// waitRecords waits until at least want records of sig arrived (exporters
// send in the background) and fails the test after 10 s.
func (r *recorder) waitRecords(t *testing.T, sig otlpwire.Signal, want int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := r.records(t, sig)
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testConfig is DefaultConfig on loopback ports chosen by the OS.
func testConfig() Config {
	c := DefaultConfig()
	c.GRPCAddr = "127.0.0.1:0"
	c.HTTPAddr = "127.0.0.1:0"
	return c
}

// start runs a receiver with one recorder for every signal and stops it at
// the end of the test.
func start(t *testing.T, cfg Config) (*Receiver, *recorder) {
	t.Helper()
	rec := &recorder{}
	return startWith(t, cfg, pipeline.Sinks{Metrics: []pipeline.Sink{rec}, Logs: []pipeline.Sink{rec}, Traces: []pipeline.Sink{rec}}), rec
}

// startWith runs a receiver with the given sinks and stops it at the end
// of the test.
func startWith(t *testing.T, cfg Config, sinks pipeline.Sinks) *Receiver {
	t.Helper()
	r, err := New(cfg, sinks)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return r
}

func httpURL(r *Receiver, sig otlpwire.Signal) string {
	return "http://" + r.HTTPAddr().String() + sig.HTTPPath()
}

// post sends body to the signal's OTLP/HTTP path with the given headers
// (name, value pairs) and returns the status, headers and body.
func post(t *testing.T, url string, body []byte, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	status, h, b, err := tryPost(url, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return status, h, b
}

// tryPost is post for goroutines other than the test's.
func tryPost(url string, body []byte, headers ...string) (int, http.Header, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := testClient.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read response: %w", err)
	}
	return resp.StatusCode, resp.Header, b, nil
}

// testClient does not keep connections alive, so no idle connection
// outlives a test (goleak).
var testClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
