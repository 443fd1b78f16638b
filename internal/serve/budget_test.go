package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"
)

// TestQueryBudgetRefusals: with the query budget's every slot taken, each
// read API refuses a query in its own error shape with a Retry-After
// (Prometheus' JSON errorType "unavailable" 503, Loki's text 429,
// Jaeger's errors[] 429, Tempo's text 429, remote read's text 429); the
// cheap endpoints (build info) still answer; and once the slot is free
// the same queries are answered.
func TestQueryBudgetRefusals(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.Queries.MaxConcurrent, cfg.Limits.Queries.MaxConcurrentPerTenant, cfg.Limits.Queries.QueueWait = 1, 1, 0
	cfg.Limits.RetryAfter = 2 * time.Second
	s := startServer(t, cfg)
	admin := "http://" + s.Addrs().Admin.String()
	held, err := s.gate.Admit(context.Background(), "elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	rr, _ := (&prompb.ReadRequest{Queries: []*prompb.Query{{StartTimestampMs: 0, EndTimestampMs: 1,
		Matchers: []*prompb.LabelMatcher{{Type: prompb.LabelMatcher_EQ, Name: "__name__", Value: "up"}}}}}).Marshal()
	remoteRead := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, admin+"/api/v1/read", bytes.NewReader(snappy.Encode(nil, rr)))
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("Content-Encoding", "snappy")
		req.Header.Set("X-Prometheus-Remote-Read-Version", "0.1.0")
		return client.Do(req)
	}
	get := func(path string) func() (*http.Response, error) {
		return func() (*http.Response, error) { return client.Get(admin + path) }
	}
	cases := []struct {
		name   string
		do     func() (*http.Response, error)
		status int
		body   func(string) bool // the API's error shape
	}{
		{"prometheus query", get("/api/v1/query?query=up"), 503, func(b string) bool {
			var e struct{ Status, ErrorType, Error string }
			return json.Unmarshal([]byte(b), &e) == nil && e.Status == "error" && e.ErrorType == "unavailable" && strings.Contains(e.Error, "too many queries")
		}},
		{"prometheus labels", get("/api/v1/labels"), 503, func(b string) bool { return strings.Contains(b, `"errorType":"unavailable"`) }},
		{"loki query_range", get("/loki/api/v1/query_range?" + url.Values{"query": {`{service_name="x"}`}}.Encode()), 429, func(b string) bool {
			return strings.HasPrefix(b, "too many queries at once")
		}},
		{"loki labels", get("/loki/api/v1/labels"), 429, func(b string) bool { return strings.HasPrefix(b, "too many queries") }},
		{"jaeger services", get("/jaeger/api/services"), 429, func(b string) bool {
			var e struct {
				Errors []struct {
					Code int
					Msg  string
				}
			}
			return json.Unmarshal([]byte(b), &e) == nil && len(e.Errors) == 1 && e.Errors[0].Code == 429
		}},
		{"tempo trace", get("/tempo/api/traces/0123456789abcdef0123456789abcdef"), 429, func(b string) bool {
			return strings.HasPrefix(b, "too many queries")
		}},
		{"tempo search", get("/tempo/api/search?q=" + url.QueryEscape(`{ }`)), 429, func(b string) bool { return strings.HasPrefix(b, "too many queries") }},
		{"tempo tags", get("/tempo/api/v2/search/tags"), 429, func(b string) bool { return strings.HasPrefix(b, "too many queries") }},
		{"tempo tag values", get("/tempo/api/v2/search/tag/name/values"), 429, func(b string) bool { return strings.HasPrefix(b, "too many queries") }},
		{"tempo metrics", get("/tempo/api/metrics/query_range?q=" + url.QueryEscape(`{ } | rate()`)), 429, func(b string) bool { return strings.HasPrefix(b, "too many queries") }},
		{"remote read", remoteRead, 429, func(b string) bool { return strings.HasPrefix(b, "too many queries") }},
	}
	for _, c := range cases {
		resp, err := c.do()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || resp.Header.Get("Retry-After") != "2" || !c.body(string(b)) {
			t.Errorf("%s: %d Retry-After %q %q; want %d with Retry-After 2 in the API's shape", c.name, resp.StatusCode, resp.Header.Get("Retry-After"), b, c.status)
		}
	}
	for _, path := range []string{"/api/v1/status/buildinfo", "/loki/api/v1/status/buildinfo", "/readyz", "/tempo/api/echo", "/tempo/api/status/buildinfo"} {
		resp, err := get(path)()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s refused while the budget is full: %s", path, resp.Status)
		}
	}
	held.Done()
	for _, c := range cases {
		resp, err := c.do()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode == 429 || resp.StatusCode == 503 {
			t.Errorf("%s: %d with the slot free", c.name, resp.StatusCode)
		}
	}
}
