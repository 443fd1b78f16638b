package receiver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestValidatingSink checks that a pipeline.Validating first sink receives requests
// the receiver did not validate, that its refusal of a malformed request is
// answered as a failed Validate would be (400, the same message), and that
// the sinks after it see only requests it accepted.
func TestValidatingSink(t *testing.T) {
	var first [][]byte
	check := pipeline.SinkFunc(func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		first = append(first, bytes.Clone(req.Body))
		if err := otlpwire.MetricsRequest(req.Body).Validate(); err != nil {
			return pipeline.Outcome{}, fmt.Errorf("store: %w", err)
		}
		return pipeline.Outcome{}, nil
	})
	later := &recorder{}
	r := startWith(t, testConfig(), pipeline.Sinks{Metrics: []pipeline.Sink{pipeline.Validating(check), later}})
	url := httpURL(r, otlpwire.SignalMetrics)

	good := synth.Generate(otlpwire.SignalMetrics, synth.Config{Seed: 3, Resources: 2, ScopesPerResource: 1, TotalRecords: 20})
	// A point with a key-value whose value has the wrong wire type: the
	// containers count cleanly, so only a full walk finds it.
	bad := []byte{0x0a, 0x13, 0x12, 0x11, 0x12, 0x0f, 0x0a, 0x01, 'm', 0x2a, 0x0a, 0x0a, 0x08, 0x3a, 0x06, 0x0a, 0x01, 'k', 0x12, 0x01, 0x08}
	want := otlpwire.MetricsRequest(bad).Validate()
	if want == nil {
		t.Fatal("test request is valid")
	}
	if n, err := otlpwire.MetricsRequest(bad).DataPointCount(); err != nil || n != 1 {
		t.Fatalf("test request counts %d, %v; want 1 point counted cleanly", n, err)
	}

	status, _, _ := post(t, url, good, "Content-Type", "application/x-protobuf")
	if status != http.StatusOK {
		t.Fatalf("valid request: status %d", status)
	}
	status, _, resp := post(t, url, bad, "Content-Type", "application/x-protobuf")
	if status != http.StatusBadRequest {
		t.Fatalf("malformed request: status %d, want 400", status)
	}
	if msg, wantMsg := statusMessage(t, resp), "invalid ExportMetricsServiceRequest: "+want.Error(); msg != wantMsg {
		t.Errorf("message %q, want %q", msg, wantMsg)
	}
	// Counted as a failed Validate is: one refused request, no records.
	if n := testutil.ToFloat64(r.m.requests.WithLabelValues("metrics", "http", "refused", "bad_data")); n != 1 {
		t.Errorf("%v refused requests counted, want 1", n)
	}
	if n := testutil.ToFloat64(r.m.refused.WithLabelValues("metrics", "http", "bad_data")); n != 0 {
		t.Errorf("%v refused records counted, want 0", n)
	}
	if len(first) != 2 || !bytes.Equal(first[1], bad) {
		t.Errorf("the pipeline.Validating sink got %d requests; want both, unvalidated", len(first))
	}
	if got := later.bodies(otlpwire.SignalMetrics); len(got) != 1 || !bytes.Equal(got[0], good) {
		t.Errorf("the next sink got %d requests; want only the valid one", len(got))
	}

	// Garbage that does not even count is refused before any sink, with
	// Validate's message.
	garbage := []byte{0x0a, 0x05, 0x01}
	status, _, resp = post(t, url, garbage, "Content-Type", "application/x-protobuf")
	wantMsg := "invalid ExportMetricsServiceRequest: " + otlpwire.MetricsRequest(garbage).Validate().Error()
	if msg := statusMessage(t, resp); status != http.StatusBadRequest || msg != wantMsg {
		t.Errorf("truncated request: status %d, message %q, want %q", status, msg, wantMsg)
	}
	if len(first) != 2 {
		t.Errorf("the pipeline.Validating sink got a request that does not count")
	}
}
