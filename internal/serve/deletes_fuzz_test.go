package serve

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/deletes"
)

// FuzzSpanDeleteParams: any query string or form body, and any
// X-Scope-OrgID, to the spans' delete API (POST to add, GET to list,
// DELETE to cancel) is answered 2xx or 4xx, never 5xx or a panic.
func FuzzSpanDeleteParams(f *testing.F) {
	store, err := deletes.New(deletes.Config{Bucket: bucket.NewLocal(f.TempDir()), Through: func() uint64 { return 1 }})
	if err != nil {
		f.Fatal(err)
	}
	s := &Server{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler), deletes: store}
	h := s.spanDeletes()
	for _, q := range []string{
		"trace_id=0af7651916cd43dd8448eb211c80319c&start=1780308000&end=1780311600",
		"trace_id=0af7651916cd43dd8448eb211c80319c&trace_id=AB000000000000000000000000000001",
		"service=checkout&start=2026-06-01T10:00:00Z&end=2026-06-01T11:00:00Z",
		"service=checkout&start=1780311600&end=1780308000", "trace_id=xyz",
		"request_id=abc", "request_id=..%2F..%2Fx", "",
	} {
		for m := range uint8(4) {
			f.Add(q, m, false, "")
			f.Add(q, m, true, "b")
		}
	}
	methods := []string{http.MethodPost, http.MethodGet, http.MethodDelete, http.MethodPut}
	f.Fuzz(func(t *testing.T, params string, method uint8, inBody bool, orgID string) {
		m := methods[int(method)%len(methods)]
		target, body := "/api/v1/admin/spans/delete?"+params, ""
		if inBody {
			target, body = "/api/v1/admin/spans/delete", params
		}
		var r *http.Request
		func() {
			defer func() {
				if recover() != nil {
					r = nil // a target httptest will not make
				}
			}()
			r = httptest.NewRequest(m, target, strings.NewReader(body))
		}()
		if r == nil {
			return
		}
		if inBody {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		if orgID != "" {
			r.Header["X-Scope-Orgid"] = []string{orgID}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("%s %s %q (tenant %q): %d %s", m, target, body, orgID, w.Code, w.Body)
		}
	})
}
