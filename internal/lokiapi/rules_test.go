package lokiapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/parser/posrange"
	"github.com/prometheus/prometheus/rules"
	"go.yaml.in/yaml/v3"

	"github.com/wirehouse/wirehouse/internal/lokiapi"
	"github.com/wirehouse/wirehouse/internal/promapi"
	"github.com/wirehouse/wirehouse/internal/ruler"
)

// textExpr is an expression that prints itself, as the ruler holds a
// LogQL one.
type textExpr string

func (e textExpr) String() string                        { return string(e) }
func (e textExpr) Pretty(int) string                     { return string(e) }
func (e textExpr) PositionRange() posrange.PositionRange { return posrange.PositionRange{} }
func (e textExpr) Type() parser.ValueType                { return parser.ValueTypeVector }
func (e textExpr) PromQLExpr()                           {}

// newLogRules are two files of LogQL groups, as Prometheus' rule
// manager holds them.
func newLogRules() ruler.Static {
	errs := rules.NewAlertingRule("ManyErrors", textExpr(`count_over_time({service_name="x"} |= "error" [1m]) > 5`),
		5*time.Minute, 0, labels.FromStrings("severity", "page"), labels.FromStrings("summary", "{{ $value }} errors"),
		labels.EmptyLabels(), "", true, nil)
	rate := rules.NewRecordingRule("service:lines:rate1m", textExpr(`sum by (service_name) (rate({service_name=~".+"}[1m]))`), labels.EmptyLabels())
	other := rules.NewRecordingRule("x:bytes", textExpr(`sum(bytes_over_time({service_name="x"}[5m]))`), labels.FromStrings("team", "core"))
	return ruler.Static{
		rules.NewGroup(rules.GroupOptions{Name: "errors", File: "/rules/default/a.yml", Interval: time.Minute, Rules: []rules.Rule{errs, rate}}),
		rules.NewGroup(rules.GroupOptions{Name: "bytes", File: "/rules/default/b.yml", Interval: 5 * time.Minute, Limit: 10, Rules: []rules.Rule{other}}),
	}
}

// TestRulerEndpoints: Loki's ruler reads, as its documentation gives
// them: the rule groups by namespace (the file) as YAML in the rule
// format, one namespace, one group, 404 "no rule groups found" where
// there are none (another tenant's), the write endpoints refused (rules
// are files); and the groups and alerts in Prometheus' JSON.
func TestRulerEndpoints(t *testing.T) {
	lr := newLogRules()
	cfg := lokiapi.DefaultConfig()
	cfg.Reader, cfg.Tenant, cfg.OrgIDHeader = newReader(t, t.TempDir(), nil), "default", true
	cfg.Rules = func(tenant string) promapi.RulesSource {
		if tenant == "default" {
			return lr
		}
		return nil
	}
	base := serveAPI(t, cfg)
	call := func(method, path, org string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		if org != "" {
			req.Header.Set("X-Scope-OrgID", org)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	type rule struct {
		Record, Alert, Expr, For string
		Labels, Annotations      map[string]string
	}
	type group struct {
		Name, Interval string
		Limit          int
		Rules          []rule
	}
	errorsGroup := group{Name: "errors", Interval: "1m", Rules: []rule{
		{Alert: "ManyErrors", Expr: `count_over_time({service_name="x"} |= "error" [1m]) > 5`, For: "5m",
			Labels: map[string]string{"severity": "page"}, Annotations: map[string]string{"summary": "{{ $value }} errors"}},
		{Record: "service:lines:rate1m", Expr: `sum by (service_name) (rate({service_name=~".+"}[1m]))`},
	}}
	bytesGroup := group{Name: "bytes", Interval: "5m", Limit: 10, Rules: []rule{
		{Record: "x:bytes", Expr: `sum(bytes_over_time({service_name="x"}[5m]))`, Labels: map[string]string{"team": "core"}}}}
	for _, c := range []struct {
		path string
		want any
	}{
		{"/loki/api/v1/rules", map[string][]group{"/rules/default/a.yml": {errorsGroup}, "/rules/default/b.yml": {bytesGroup}}},
		{"/loki/api/v1/rules/%2Frules%2Fdefault%2Fb.yml", map[string][]group{"/rules/default/b.yml": {bytesGroup}}},
		{"/loki/api/v1/rules/%2Frules%2Fdefault%2Fa.yml/errors", errorsGroup},
	} {
		code, ct, body := call(http.MethodGet, c.path, "")
		if code != http.StatusOK || ct != "application/yaml" {
			t.Errorf("%s: %d %s %s", c.path, code, ct, body)
			continue
		}
		var got any
		switch c.want.(type) {
		case group:
			var g group
			err := yaml.Unmarshal([]byte(body), &g)
			got = g
			if err != nil {
				t.Fatal(err)
			}
		default:
			var m map[string][]group
			if err := yaml.Unmarshal([]byte(body), &m); err != nil {
				t.Fatal(err)
			}
			got = m
		}
		if gy, _ := yaml.Marshal(got); string(gy) != mustYAML(t, c.want) {
			t.Errorf("%s:\n%s\nwant\n%s", c.path, gy, mustYAML(t, c.want))
		}
	}
	for _, c := range []struct{ method, path, org string }{
		{http.MethodGet, "/loki/api/v1/rules", "other"},
		{http.MethodGet, "/loki/api/v1/rules/nowhere.yml", ""},
		{http.MethodGet, "/loki/api/v1/rules/%2Frules%2Fdefault%2Fa.yml/nogroup", ""},
	} {
		if code, _, body := call(c.method, c.path, c.org); code != http.StatusNotFound || !strings.Contains(body, "no rule groups found") {
			t.Errorf("%s %s as %q: %d %s, want 404 no rule groups found", c.method, c.path, c.org, code, body)
		}
	}
	for _, m := range []string{http.MethodPost, http.MethodDelete} {
		if code, _, _ := call(m, "/loki/api/v1/rules/ns", ""); code != http.StatusMethodNotAllowed {
			t.Errorf("%s /loki/api/v1/rules/ns: %d, want 405", m, code)
		}
	}
	// Prometheus' shapes (promapi's, which the oracle compares with
	// Prometheus' own).
	code, ct, body := call(http.MethodGet, "/prometheus/api/v1/rules?type=alert", "")
	if code != 200 || !strings.HasPrefix(ct, "application/json") || !strings.Contains(body, `"status":"success"`) ||
		!strings.Contains(body, `"name":"ManyErrors","query":"count_over_time({service_name=\"x\"} |= \"error\" [1m]) \u003e 5"`) ||
		strings.Contains(body, "service:lines:rate1m") {
		t.Errorf("/prometheus/api/v1/rules?type=alert: %d %s %s", code, ct, body)
	}
	if code, _, body := call(http.MethodGet, "/prometheus/api/v1/rules?type=silence", ""); code != 400 {
		t.Errorf("/prometheus/api/v1/rules?type=silence: %d %s", code, body)
	}
	if code, _, body := call(http.MethodGet, "/prometheus/api/v1/alerts", "other"); code != 200 || body != `{"data":{"alerts":[]},"status":"success"}`+"\n" {
		t.Errorf("/prometheus/api/v1/alerts of a tenant without rules: %d %q", code, body)
	}
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
