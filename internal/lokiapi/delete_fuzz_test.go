package lokiapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/deletes"
	"github.com/wirehouse/wirehouse/internal/lokiapi"
)

// FuzzDeleteParams: any query string or form body to Loki's delete API
// (POST to add, GET to list, DELETE to cancel) is answered 2xx or 4xx
// (a malformed or missing parameter is 400, an unknown request 404),
// never 5xx or a panic.
func FuzzDeleteParams(f *testing.F) {
	dir := f.TempDir()
	store, err := deletes.New(deletes.Config{Bucket: bucket.NewLocal(dir), Through: func() uint64 { return 1 }})
	if err != nil {
		f.Fatal(err)
	}
	cfg := lokiapi.DefaultConfig()
	cfg.Reader, cfg.Tenant, cfg.Deletes = newReader(f, dir, nil), "default", store
	base := serveAPI(f, cfg)
	for _, q := range []string{
		"query=%7Bservice_name%3D%22api%22%7D+%7C%3D+%22password%22&start=1780308000&end=1780311600",
		"query=%7Bapp%3D%22a%22%7D&start=2026-06-01T10:00:00Z&end=2026-06-01T11:00:00Z",
		"query=%7Bapp%3D%22a%22%7D+%7C+json&start=1780308000",
		"query=%7Bapp%3D%22a%22%7D&start=1780311600&end=1780308000",
		"request_id=abc", "request_id=..%2F..%2Fx", "",
	} {
		for m := range uint8(3) {
			f.Add(q, m, false)
			f.Add(q, m, true)
		}
	}
	methods := []string{http.MethodPost, http.MethodGet, http.MethodDelete}
	f.Fuzz(func(t *testing.T, params string, method uint8, inBody bool) {
		m := methods[int(method)%len(methods)]
		url, body := base+"/loki/api/v1/delete?"+params, ""
		if inBody {
			url, body = base+"/loki/api/v1/delete", params
		}
		req, err := http.NewRequest(m, url, strings.NewReader(body))
		if err != nil {
			return // a URL net/http will not send
		}
		if inBody {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s %q: %d %s", m, url, body, resp.StatusCode, b)
		}
	})
}
