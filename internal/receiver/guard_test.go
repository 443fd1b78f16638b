package receiver

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// keptRequests is a Quarantiner that remembers what it was given.
type keptRequests struct {
	mu     sync.Mutex
	bodies [][]byte
	causes []error
}

func (k *keptRequests) Quarantine(req *pipeline.Request, cause error) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.bodies = append(k.bodies, bytes.Clone(req.Body))
	k.causes = append(k.causes, cause)
	return nil
}

// TestSinkPanic: a sink that panics on a request does not stop the
// server: the request is refused as an internal error (500 / INTERNAL,
// which exporters do not retry), handed to the quarantine, and the next
// request is served.
func TestSinkPanic(t *testing.T) {
	poison := logsBody(3)
	rec := &recorder{}
	sink := pipeline.SinkFunc(func(ctx context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		if bytes.Equal(req.Body, poison) {
			var m map[string]int
			m["boom"]++ // a nil map write: a real runtime panic
		}
		return rec.Consume(ctx, req)
	})
	kept := &keptRequests{}
	cfg := testConfig()
	cfg.Quarantine = kept
	r := startWith(t, cfg, pipeline.Sinks{Logs: []pipeline.Sink{sink}})

	status1, _, _ := post(t, httpURL(r, otlpwire.SignalLogs), poison, "Content-Type", "application/x-protobuf")
	if status1 != http.StatusInternalServerError {
		t.Errorf("HTTP: status %d, want 500", status1)
	}
	conn := dialGRPC(t, r)
	err := exportGRPC(context.Background(), conn, otlpwire.SignalLogs, poison, nil)
	if status.Code(err) != codes.Internal {
		t.Errorf("gRPC: %v, want INTERNAL", err)
	}
	good := logsBody(5)
	if st, _, _ := post(t, httpURL(r, otlpwire.SignalLogs), good, "Content-Type", "application/x-protobuf"); st != http.StatusOK {
		t.Errorf("after the panics: status %d, want 200", st)
	}
	if err := exportGRPC(context.Background(), conn, otlpwire.SignalLogs, good, nil); err != nil {
		t.Errorf("after the panics: gRPC %v", err)
	}
	if got := rec.records(t, otlpwire.SignalLogs); got != 10 {
		t.Errorf("stored %d records, want 10", got)
	}
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if len(kept.bodies) != 2 || !bytes.Equal(kept.bodies[0], poison) || !bytes.Equal(kept.bodies[1], poison) {
		t.Errorf("quarantined %d requests, want the poison twice", len(kept.bodies))
	}
}
