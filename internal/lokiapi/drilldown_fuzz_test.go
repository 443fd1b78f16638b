package lokiapi_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/lokiapi"
	"github.com/wirehouse/wirehouse/internal/promapi"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// FuzzDrilldownParams: any query string to the volume, detected and
// patterns endpoints, over a lake of a few services, and to the ruler's
// endpoints, over two groups of rules, is answered 200 or 4xx (a
// malformed parameter is 400), never 5xx or a panic.
func FuzzDrilldownParams(f *testing.F) {
	dir := f.TempDir()
	w := newLakeWriter(f, dir)
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	if _, err := w.Append(otlpwire.SignalLogs, "default", synth.Logs(synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 50, Start: start})); err != nil {
		f.Fatal(err)
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	cfg := lokiapi.DefaultConfig()
	cfg.Reader, cfg.Tenant = newReader(f, dir, nil), "default"
	lr := newLogRules()
	cfg.Rules = func(string) promapi.RulesSource { return lr }
	base := serveAPI(f, cfg)
	for _, q := range []string{
		"query=%7Bservice_name%3D~%22.%2B%22%7D&start=1780308000&end=1780311600&step=60s&limit=2&targetLabels=service_name&aggregateBy=labels",
		"query=%7Bservice_name%3D%22a%22%7D+%7C+logfmt&line_limit=10&limit=5&since=2h",
		"query=%7Ba%3D%22b%22%7D&step=0.5&start=2026-06-01T10:00:00Z",
		"type=alert&rule_name[]=ManyErrors&group_limit=1&exclude_alerts=true", "match[]=%7Bteam%3D%22core%22%7D&file[]=%2Frules%2Fdefault%2Fb.yml",
		"group_limit=1&group_next_token=x",
	} {
		f.Add(q, uint8(0))
		f.Add(q, uint8(8))
	}
	paths := []string{"/loki/api/v1/index/volume", "/loki/api/v1/index/volume_range", "/loki/api/v1/detected_labels",
		"/loki/api/v1/detected_fields", "/loki/api/v1/detected_field/level/values", "/loki/api/v1/patterns",
		"/loki/api/v1/rules", "/loki/api/v1/rules/%2Frules%2Fdefault%2Fa.yml/errors", "/prometheus/api/v1/rules", "/prometheus/api/v1/alerts"}
	f.Fuzz(func(t *testing.T, rawQuery string, which uint8) {
		resp, err := http.Get(base + paths[int(which)%len(paths)] + "?" + rawQuery)
		if err != nil {
			return // a query string net/http will not send
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s?%s: %d %s", paths[int(which)%len(paths)], rawQuery, resp.StatusCode, b)
		}
	})
}
