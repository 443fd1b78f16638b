package lokiapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
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

// FuzzAppendJSONString: a string written by the streams answer's encoder
// is the JSON encoding/json writes for it.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "checkout", `a"b`, `a\b`, "<tag>&", "é", "\xff", "line\n\ttab", "\u2028", "k8s.pod.name", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("%q: %s, encoding/json %s", s, got[1:], want)
		}
	})
}

// TestStreamsAnswer: the streams answer written by hand is the JSON
// encoding/json writes for the same streams as maps (parsed, equal), with
// labels in name order.
func TestStreamsAnswer(t *testing.T) {
	streams := []eval.Stream{
		{Labels: eval.Labels{{Name: "app", Value: "a<b>"}, {Name: "service_name", Value: "checkout"}},
			Entries: []eval.Entry{{Time: 1700000000000000001, Line: "first \"line\"\n"}, {Time: 2, Line: "é\xff"}}},
		{Labels: eval.Labels{}, Entries: nil},
	}
	st := stats(eval.Stats{Lines: 3, Bytes: 40, Returned: 2}, 0.5)
	raw, err := streamsAnswer(streams, st, false)
	if err != nil {
		t.Fatal(err)
	}
	var result []map[string]any
	for _, s := range streams {
		vals := [][2]string{}
		for _, e := range s.Entries {
			vals = append(vals, [2]string{strconv.FormatInt(e.Time, 10), e.Line})
		}
		result = append(result, map[string]any{"stream": s.Labels.Map(), "values": vals})
	}
	want, err := json.Marshal(success(map[string]any{"resultType": "streams", "result": result, "stats": st}))
	if err != nil {
		t.Fatal(err)
	}
	var got, wantV any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, raw)
	}
	if err := json.Unmarshal(want, &wantV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantV) {
		t.Fatalf("answer\n%s\nwant\n%s", raw, want)
	}
	if !strings.Contains(string(raw), `{"app":"a\u003cb\u003e","service_name":"checkout"}`) {
		t.Fatalf("labels not in name order, or escaped otherwise than encoding/json: %s", raw)
	}
}
