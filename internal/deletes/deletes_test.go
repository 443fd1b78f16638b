package deletes

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestRequests: requests are kept per tenant, refused when their query,
// range or trace ids are not ones a rewrite can carry out, canceled only
// before they are processed.
func TestRequests(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	through := uint64(41)
	s, err := New(Config{Bucket: bucket.NewLocal(t.TempDir()), Through: func() uint64 { return through }, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start, end := now.Add(-time.Hour), now
	for _, bad := range []string{`{a="b"} | json`, `sum(rate({a="b"}[1m]))`, `{a="b"`, ``} {
		if _, err := s.Add(ctx, "a", bad, start, end); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := s.Add(ctx, "a", `{a="b"}`, end, start); !errors.Is(err, ErrInvalid) {
		t.Errorf("end before start: %v", err)
	}
	if _, err := s.Add(ctx, "a/../b", `{a="b"}`, start, end); !errors.Is(err, ErrInvalid) {
		t.Errorf("a tenant that is not a name: %v", err)
	}
	for _, ids := range [][]string{{"xyz"}, {"abcd"}} {
		if _, err := s.AddSpans(ctx, "a", ids, "", start, end); !errors.Is(err, ErrInvalid) {
			t.Errorf("trace ids %v: %v", ids, err)
		}
	}
	if _, err := s.AddSpans(ctx, "a", nil, "", start, end); !errors.Is(err, ErrInvalid) {
		t.Errorf("neither trace ids nor a service: %v", err)
	}
	r1, err := s.Add(ctx, "a", `{service_name="api"} |= "password"`, start, end)
	if err != nil || r1.Status != StatusReceived || r1.Through != 41 || r1.Signal != "logs" {
		t.Fatalf("add: %+v %v", r1, err)
	}
	now = now.Add(time.Second)
	r2, err := s.AddSpans(ctx, "a", []string{"AB000000000000000000000000000001"}, "", start, end)
	if err != nil || r2.TraceIDs[0] != "ab000000000000000000000000000001" {
		t.Fatalf("add spans: %+v %v", r2, err)
	}
	if _, err := s.Add(ctx, "b", `{a="b"}`, start, end); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(ctx, "a")
	if err != nil || len(got) != 2 || got[0].ID != r1.ID || got[1].ID != r2.ID {
		t.Fatalf("a's requests: %+v %v", got, err)
	}
	if all, _ := s.List(ctx, ""); len(all) != 3 {
		t.Fatalf("every request: %d", len(all))
	}
	if err := s.Cancel(ctx, "b", r1.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("b canceling a's request: %v", err)
	}
	// Pending: a's logs request hides api's lines with password, not
	// b's records; canceled, it hides nothing.
	hide := s.Pending(ctx, "a")
	if hide == nil || !hide(&eval.Record{Time: now.Add(-time.Minute).UnixNano(), Service: "api", Line: []byte("x password y")}) ||
		hide(&eval.Record{Time: now.Add(-time.Minute).UnixNano(), Service: "web", Line: []byte("x password y")}) {
		t.Fatal("a's pending request does not hide what it selects, or hides more")
	}
	if hideB := s.Pending(ctx, "b"); hideB == nil || hideB(&eval.Record{Time: now.Add(-time.Minute).UnixNano(), Service: "api", Line: []byte("x password y")}) {
		t.Fatal("b's request: hides a's query's records")
	}
	if err := s.Cancel(ctx, "a", r1.ID); err != nil {
		t.Fatal(err)
	}
	if s.Pending(ctx, "a") != nil {
		t.Fatal("a canceled request still hides records")
	}
	if got, _ := s.List(ctx, "a"); got[0].Status != StatusCanceled {
		t.Errorf("after cancel: %+v", got[0])
	}
	if err := s.finish(ctx, r2); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, "a", r2.ID); !errors.Is(err, ErrNotCancelable) {
		t.Errorf("cancel a processed request: %v", err)
	}
}

// TestDamagedRequest: an object under Prefix that is not a request is
// passed over, not an error that would stop every request.
func TestDamagedRequest(t *testing.T) {
	b := bucket.NewLocal(t.TempDir())
	s, err := New(Config{Bucket: b, Through: func() uint64 { return 1 }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := b.Upload(ctx, Prefix+"a/0000000000000000.json", strings.NewReader("{not json")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, "a", `{a="b"}`, time.Unix(0, 0), time.Unix(100, 0)); err != nil {
		t.Fatal(err)
	}
	if reqs, err := s.List(ctx, "a"); err != nil || len(reqs) != 1 {
		t.Fatalf("list: %v %v", reqs, err)
	}
}

// countingBucket counts the objects read with Get.
type countingBucket struct {
	bucket.Bucket
	gets atomic.Int64
}

func (b *countingBucket) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	b.gets.Add(1)
	return b.Bucket.Get(ctx, name)
}

// TestListReadsEndedOnce: a request processed or canceled is read once;
// later listings read only the requests still received, and still see
// the ended ones as they ended.
func TestListReadsEndedOnce(t *testing.T) {
	b := &countingBucket{Bucket: bucket.NewLocal(t.TempDir())}
	s, err := New(Config{Bucket: b, Through: func() uint64 { return 1 }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	var ids []string
	for range 4 {
		r, err := s.Add(ctx, "a", `{a="b"}`, now.Add(-time.Hour), now)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if err := s.Cancel(ctx, "a", ids[0]); err != nil {
		t.Fatal(err)
	}
	reqs, err := s.List(ctx, "a")
	if err != nil || len(reqs) != 4 {
		t.Fatalf("list: %d %v", len(reqs), err)
	}
	for _, r := range reqs[1:3] {
		if err := s.finish(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	s.List(ctx, "a") // reads the 3 requests not seen ended yet
	b.gets.Store(0)
	reqs, err = s.List(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if n := b.gets.Load(); n != 1 {
		t.Errorf("a listing read %d objects, want 1 (the request still received)", n)
	}
	want := []string{StatusCanceled, StatusProcessed, StatusProcessed, StatusReceived}
	for i, r := range reqs {
		if r.ID != ids[i] || r.Status != want[i] {
			t.Errorf("request %d: %s %s, want %s %s", i, r.ID, r.Status, ids[i], want[i])
		}
	}
	// An ended request written again (a file's progress counted after
	// the cancel): read again.
	if _, err := s.progress(ctx, reqs[0], 1, 10); err != nil {
		t.Fatal(err)
	}
	if reqs, _ = s.List(ctx, "a"); reqs[0].Files != 1 || reqs[0].Rows != 10 {
		t.Errorf("a canceled request's progress after it was read: %+v", reqs[0])
	}
}

// TestDrop: Drop gives a matcher for the partitions of a tenant and
// signal whose hours a request not carried out yet spans, and none for
// another tenant, signal or hour, or once the request is processed.
func TestDrop(t *testing.T) {
	s, err := New(Config{Bucket: bucket.NewLocal(t.TempDir()), Through: func() uint64 { return 1 }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Date(2030, 1, 1, 10, 30, 0, 0, time.UTC)
	r, err := s.Add(ctx, "a", `{service_name="api"} |= "password"`, start, start.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddSpans(ctx, "a", nil, "db", start, start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sig    otlpwire.Signal
		tenant string
		hour   time.Time
		want   bool
	}{
		{otlpwire.SignalLogs, "a", start.Truncate(time.Hour), true},
		{otlpwire.SignalLogs, "a", start.Truncate(time.Hour).Add(time.Hour), true},
		{otlpwire.SignalLogs, "a", start.Truncate(time.Hour).Add(2 * time.Hour), false},
		{otlpwire.SignalLogs, "a", start.Truncate(time.Hour).Add(-time.Hour), false},
		{otlpwire.SignalLogs, "b", start.Truncate(time.Hour), false},
		{otlpwire.SignalTraces, "a", start.Truncate(time.Hour), true},
		{otlpwire.SignalTraces, "b", start.Truncate(time.Hour), false},
	} {
		if got := s.Drop(c.sig, c.tenant, c.hour) != nil; got != c.want {
			t.Errorf("Drop(%v, %q, %v): %v, want %v", c.sig, c.tenant, c.hour, got, c.want)
		}
	}
	if err := s.finish(ctx, r); err != nil {
		t.Fatal(err)
	}
	if s.Drop(otlpwire.SignalLogs, "a", start.Truncate(time.Hour)) != nil {
		t.Error("a processed request still drops rows")
	}
}
