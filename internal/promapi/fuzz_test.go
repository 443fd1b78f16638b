package promapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/prometheus/tsdb"
)

// FuzzParams sends arbitrary parameters to every endpoint: the API must
// answer each with a JSON envelope ("success" or "error" with a type) and
// a status code Prometheus uses, never panic. The one answer without a
// body is Prometheus' own: 204 from query_exemplars for an expression
// without a selector (a number, say; the oracle's no-selector case).
func FuzzParams(f *testing.F) {
	for _, seed := range []string{
		"query=up&time=1795428600", "query=rate(http_requests_total[1m])&start=1795428000&end=1795428600&step=15",
		"match[]=up&start=2026-11-23T10:00:00Z", "query=sum((&timeout=5s", "query=up&time=1e400", "limit=-3&match[]={job=~\".+\"}",
		"query=up&start=0&end=1e12&step=0.001", "match[]=%7B", "query=histogram_quantile(0.9,latency)&time=1795428600.123",
		"metric=up&limit=2&limit_per_metric=-1",
		"query=max_over_time(up[5m:])&time=1795428600", "query=up&lookback_delta=1h&stats=all",
		"match[]=up&start=-292273086-05-16T16:47:06Z&end=292277025-08-18T07:12:54.999999999Z",
		"type=alert&rule_name[]=Down&exclude_alerts=false&group_limit=1", "match[]={severity=\"page\"}&file[]=x&rule_group[]=api",
		"group_limit=1&group_next_token=abc", "type=RECORD&group_limit=2147483648",
	} {
		f.Add(uint8(0), seed)
		f.Add(uint8(2), seed)
		f.Add(uint8(6), seed)
		f.Add(uint8(10), seed)
	}
	srv, _, _ := newServerWith(f, func(cfg *Config, db *tsdb.DB) {
		cfg.Metadata = &metaSource{}
		r := newTestRules(f, db)
		cfg.Rules, cfg.Alertmanagers = func(string) RulesSource { return r }, r
	})
	handler := srv.Config.Handler
	paths := []string{"/api/v1/query", "/api/v1/query_range", "/api/v1/series", "/api/v1/labels", "/api/v1/label/job/values",
		"/api/v1/label/__name__/values", "/api/v1/query_exemplars", "/api/v1/metadata", "/api/v1/status/tsdb", "/api/v1/format_query", "/api/v1/rules",
		"/api/v1/alerts", "/api/v1/alertmanagers"}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		params, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		path := paths[int(which)%len(paths)]
		req := httptest.NewRequest(http.MethodGet, path+"?"+params.Encode(), nil)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		if rec.Code == http.StatusNoContent && path == "/api/v1/query_exemplars" {
			if rec.Body.Len() != 0 {
				t.Fatalf("%s?%s: HTTP 204 with a body: %q", path, raw, rec.Body.String())
			}
			return
		}
		var env struct {
			Status    string
			ErrorType string
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
			t.Fatalf("%s?%s: HTTP %d, body not JSON: %v: %q", path, raw, rec.Code, err, rec.Body.String())
		}
		switch {
		case env.Status == "success" && rec.Code == http.StatusOK:
		case env.Status == "error" && env.ErrorType != "" && statusOf[errorType(env.ErrorType)] == rec.Code:
		default:
			t.Fatalf("%s?%s: HTTP %d with %+v", path, raw, rec.Code, env)
		}
	})
}
