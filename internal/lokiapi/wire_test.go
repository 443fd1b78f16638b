package lokiapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/readapi"
)

// TestWireErrors: the wire answers each kind of error in Loki's plain
// text with its status; a client gone gets 499, whatever the query made
// of its cancelation; a panic of an endpoint is a 500.
func TestWireErrors(t *testing.T) {
	x := wire{timeout: time.Minute, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name   string
		ctx    context.Context
		err    error
		status int
		body   string
		retry  string
	}{
		{"bad", context.Background(), fmt.Errorf("%w: invalid limit", errBad), 400, "bad request: invalid limit\n", ""},
		{"limit", context.Background(), fmt.Errorf("%w: over 5000", eval.ErrLimit), 413, "", ""},
		{"busy", context.Background(), &querybudget.BusyError{RetryAfter: 1500 * time.Millisecond}, 429, "", "2"},
		{"timeout", context.Background(), context.DeadlineExceeded, 504, "query timed out after 1m0s: narrow the time range or the selector\n", ""},
		{"canceled", context.Background(), context.Canceled, 499, "context canceled\n", ""},
		{"client gone", gone, errors.New("scan: read failed"), 499, "scan: read failed\n", ""},
		{"client gone past a limit", gone, eval.ErrLimit, 499, "", ""},
		{"internal", context.Background(), errors.New("disk on fire"), 500, "disk on fire\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			x.WriteError(rec, httptest.NewRequestWithContext(c.ctx, "GET", "/loki/api/v1/query", nil), c.err)
			if rec.Code != c.status || (c.body != "" && rec.Body.String() != c.body) {
				t.Errorf("%d %q, want %d %q", rec.Code, rec.Body, c.status, c.body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			if got := rec.Header().Get("Retry-After"); got != c.retry {
				t.Errorf("Retry-After %q, want %q", got, c.retry)
			}
		})
	}
	t.Run("panic", func(t *testing.T) {
		rec := httptest.NewRecorder()
		readapi.Handle[any](x, nil, func(*http.Request) (any, error) { panic("boom") }).
			ServeHTTP(rec, httptest.NewRequest("GET", "/loki/api/v1/query", nil))
		if rec.Code != 500 || strings.Contains(rec.Body.String(), "boom") {
			t.Errorf("%d %q, want 500 that does not give the panic's value away", rec.Code, rec.Body)
		}
	})
}
