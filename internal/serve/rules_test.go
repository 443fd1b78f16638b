package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"

	"github.com/wirehouse/wirehouse/internal/amtest"
)

// writeFile writes content to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// lokiPushAs pushes lines of stream {service_name=svc} at ts through
// Loki's push API (JSON) as the tenant of token.
func lokiPushAs(t *testing.T, a Addrs, token, svc string, ts time.Time, lines ...string) {
	t.Helper()
	var values [][2]string
	for i, l := range lines {
		values = append(values, [2]string{strconv.FormatInt(ts.Add(time.Duration(i)*time.Millisecond).UnixNano(), 10), l})
	}
	body, _ := json.Marshal(map[string]any{"streams": []any{map[string]any{"stream": map[string]string{"service_name": svc}, "values": values}}})
	code, resp := request(t, http.MethodPost, "http://"+a.HTTP.String()+"/loki/api/v1/push", token, "application/json", body)
	if code != http.StatusNoContent {
		t.Fatalf("loki push as %q: %d %s", token, code, resp)
	}
}

// promAPI is Prometheus' Go client of the admin API, as token's tenant.
func promAPI(t *testing.T, a Addrs, token string) v1.API {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: "http://" + a.Admin.String(),
		RoundTripper: bearerRT{token, &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		t.Fatal(err)
	}
	return v1.NewAPI(c)
}

// activeAlerts returns the state of the active alerts named name, by
// their labels, as token's tenant sees them on path (/api/v1/alerts or
// Loki's /prometheus/api/v1/alerts).
func activeAlerts(t *testing.T, a Addrs, token, path, name string) map[string]string {
	t.Helper()
	code, body := request(t, http.MethodGet, "http://"+a.Admin.String()+path, token, "", nil)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, code, body)
	}
	var d struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("%s: %v: %s", path, err, body)
	}
	out := map[string]string{}
	for _, al := range d.Data.Alerts {
		if al.Labels["alertname"] == name {
			out[fmt.Sprint(al.Labels)] = al.State
		}
	}
	return out
}

// waitFor polls cond every 100ms until it holds or within passes, and
// returns how long it took.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

// The rule files of TestServeRules: the default tenant's PromQL and
// LogQL rules, and one file of each for tenants a and b.
const (
	promRules = `groups:
- name: gauges
  rules:
  - record: job:rule_gauge:sum
    expr: sum by (job) (rule_gauge)
  - alert: GaugeHigh
    expr: rule_gauge > 10
    labels:
      severity: page
    annotations:
      summary: 'gauge {{ $labels.job }} is {{ $value }}'
`
	logqlRules = `groups:
- name: errors
  rules:
  - record: service:errors:count1m
    expr: sum by (service_name) (count_over_time({service_name="x"} |= "error" [1m]))
  - alert: ManyErrors
    expr: count_over_time({service_name="x"} |= "error" [1m]) > 5
    labels:
      severity: ticket
`
	tenantPromRules = `groups:
- name: tenant-gauges
  rules:
  - record: tenant:rule_gauge:sum
    expr: sum(rule_gauge)
  - alert: TenantGaugeHigh
    expr: rule_gauge > 50
`
	tenantLogQLRules = `groups:
- name: tenant-logs
  rules:
  - record: tenant:lines:count1m
    expr: sum(count_over_time({service_name="x"} [1m]))
`
)

// TestServeRules: serve evaluates Prometheus and LogQL rules and sends
// their alerts to the real Alertmanager, whose webhook receiver is this
// test's server. A PromQL alert fires within two evaluation intervals of
// its data crossing the threshold and resolves when it falls back, both
// seen in /api/v1/alerts and at the webhook; a LogQL alert on
// count_over_time({service_name="x"} |= "error" [1m]) > 5 the same way;
// recorded series equal their expressions run through the query APIs at
// the same times; tenants a and b (tokens) have rules of their own, which
// read their own series and logs alone, and see only their own rules and
// alerts through Prometheus' and Loki's rules APIs; alerts of a tenant
// carry its tenant label.
func TestServeRules(t *testing.T) {
	am, hook := amtest.Start(t)

	dir := t.TempDir()
	cfg := testConfig(t)
	const interval = 2 * time.Second
	cfg.Rules.EvaluationInterval = interval
	cfg.Rules.Files = []string{writeFile(t, dir, "prom.yml", promRules)}
	cfg.Rules.LogQLFiles = []string{writeFile(t, dir, "logql.yml", logqlRules)}
	cfg.Rules.Tenants = map[string]RuleFiles{}
	for _, tn := range []string{tenantA, tenantB} {
		cfg.Rules.Tenants[tn] = RuleFiles{Files: []string{writeFile(t, dir, tn+"-prom.yml", tenantPromRules)},
			LogQLFiles: []string{writeFile(t, dir, tn+"-logql.yml", tenantLogQLRules)}}
	}
	if err := cfg.Alerting.AddURL(am); err != nil {
		t.Fatal(err)
	}
	s := startTenantServer(t, cfg)
	a := s.Addrs()
	admin := "http://" + a.Admin.String()

	// /api/v1/alertmanagers lists the Alertmanager once discovered.
	waitFor(t, 10*time.Second, "the Alertmanager listed", func() bool {
		code, body := request(t, http.MethodGet, admin+"/api/v1/alertmanagers", adminTokDefault, "", nil)
		return code == 200 && strings.Contains(body, `{"activeAlertmanagers":[{"url":"`+am+`/api/v2/alerts"}],"droppedAlertmanagers":[]}`)
	})

	gauge := func(token string, v float64, at time.Time) {
		t.Helper()
		remoteWriteAs(t, admin, token, []prompb.TimeSeries{{
			Labels:  []prompb.Label{{Name: "__name__", Value: "rule_gauge"}, {Name: "job", Value: "j"}},
			Samples: []prompb.Sample{{Value: v, Timestamp: at.UnixMilli()}},
		}})
	}
	// The samples are stamped a second ahead, so that no evaluation runs
	// at a time past a sample before the sample is stored: each recorded
	// value is then what a query at its time gives afterwards.
	gauge(adminTokA, 3, time.Now().Add(time.Second))
	gauge(adminTokB, 100, time.Now().Add(time.Second))
	lokiPushAs(t, a, otlpTokA, "x", time.Now().Add(-10*time.Second), "a error 1", "a error 2")
	lokiPushAs(t, a, otlpTokB, "x", time.Now().Add(-10*time.Second), "b error 1", "b error 2", "b error 3", "b error 4", "b error 5", "b error 6", "b error 7")

	// The PromQL alert: fires within two evaluation intervals of the
	// sample crossing its threshold (its time), then resolves.
	crossed := time.Now().Add(time.Second)
	gauge(adminTokDefault, 20, crossed)
	firing := func(path, name string) func() bool {
		return func() bool {
			for _, st := range activeAlerts(t, a, adminTokDefault, path, name) {
				if st == "firing" {
					return true
				}
			}
			return false
		}
	}
	waitFor(t, 2*interval+3*time.Second, "GaugeHigh firing", firing("/api/v1/alerts", "GaugeHigh"))
	if took := time.Since(crossed); took > 2*interval+time.Second {
		t.Errorf("GaugeHigh fired %v after its sample's time; want within two evaluation intervals (%v)", took, 2*interval)
	}
	waitFor(t, 10*time.Second, "GaugeHigh at the webhook", func() bool { return len(hook.Alerts("GaugeHigh")) > 0 })
	got := hook.Alerts("GaugeHigh")[0]
	if got.Status != "firing" || got.Labels["job"] != "j" || got.Labels["severity"] != "page" || got.Annotations["summary"] != "gauge j is 20" {
		t.Errorf("GaugeHigh's notification: %+v", got)
	}
	if _, ok := got.Labels["tenant"]; ok {
		t.Errorf("the default tenant's alert has a tenant label: %v", got.Labels)
	}
	if !strings.Contains(got.GeneratorURL, "/graph?g0.expr=") {
		t.Errorf("GaugeHigh's generator URL %q", got.GeneratorURL)
	}
	fellBack := time.Now().Add(time.Second)
	gauge(adminTokDefault, 0, fellBack)
	waitFor(t, 2*interval+3*time.Second, "GaugeHigh resolved", func() bool {
		return len(activeAlerts(t, a, adminTokDefault, "/api/v1/alerts", "GaugeHigh")) == 0
	})
	waitFor(t, 10*time.Second, "GaugeHigh resolved at the webhook", func() bool {
		al := hook.Alerts("GaugeHigh")
		return al[len(al)-1].Status == "resolved"
	})

	// The LogQL alert: six error lines 50s ago (and lines without the
	// word); fires, then resolves once they leave the minute.
	pushed := time.Now()
	lokiPushAs(t, a, otlpTokDefault, "x", pushed.Add(-50*time.Second),
		"error 1", "error 2", "fine 3", "error 4", "error 5", "error 6", "error 7")
	lokiPushAs(t, a, otlpTokDefault, "y", pushed.Add(-50*time.Second), "error in another service")
	waitFor(t, 2*interval+3*time.Second, "ManyErrors firing", firing("/prometheus/api/v1/alerts", "ManyErrors"))
	waitFor(t, 10*time.Second, "ManyErrors at the webhook", func() bool { return len(hook.Alerts("ManyErrors")) > 0 })
	if got := hook.Alerts("ManyErrors")[0]; got.Status != "firing" || got.Labels["service_name"] != "x" || got.Labels["severity"] != "ticket" ||
		!strings.Contains(got.GeneratorURL, "/logs?query=") {
		t.Errorf("ManyErrors' notification: %+v", got)
	}
	// The PromQL API lists no LogQL rule, Loki's no PromQL one.
	if len(activeAlerts(t, a, adminTokDefault, "/api/v1/alerts", "ManyErrors")) != 0 {
		t.Error("a LogQL alert in /api/v1/alerts")
	}
	waitFor(t, 20*time.Second, "ManyErrors resolved", func() bool {
		return len(activeAlerts(t, a, adminTokDefault, "/prometheus/api/v1/alerts", "ManyErrors")) == 0
	})
	if left := time.Until(pushed.Add(10 * time.Second)); left > 0 {
		t.Errorf("ManyErrors resolved %v before its lines left the minute", left)
	}
	waitFor(t, 10*time.Second, "ManyErrors resolved at the webhook", func() bool {
		al := hook.Alerts("ManyErrors")
		return al[len(al)-1].Status == "resolved"
	})

	// Recorded values equal their expressions through the query APIs
	// at the recorded times (the LogQL ones after the lines were pushed:
	// earlier evaluations ran before the lines were there).
	checkRecorded(t, a, adminTokDefault, "job:rule_gauge:sum", time.Time{}, func(at time.Time) map[string]float64 {
		return instant(t, promAPI(t, a, adminTokDefault), "sum by (job) (rule_gauge)", at)
	})
	checkRecorded(t, a, adminTokDefault, "service:errors:count1m", pushed.Add(time.Second), func(at time.Time) map[string]float64 {
		return lokiInstant(t, a, adminTokDefault, `sum by (service_name) (count_over_time({service_name="x"} |= "error" [1m]))`, at)
	})

	// Tenants: each one's recorded series from its own data alone; its
	// alerts with its label; its rules alone in both rules APIs.
	for _, tc := range []struct {
		token, name    string
		gauge, lines   float64
		fires, notSees string
	}{{adminTokA, tenantA, 3, 2, "", "tenant-gauges-b"}, {adminTokB, tenantB, 100, 7, "TenantGaugeHigh", ""}} {
		c := promAPI(t, a, tc.token)
		var g, l map[string]float64
		waitFor(t, 3*interval+3*time.Second, tc.name+"'s recorded series", func() bool {
			g = instant(t, c, "tenant:rule_gauge:sum", time.Now())
			l = instant(t, c, "tenant:lines:count1m", time.Now())
			if g[`{__name__="tenant:rule_gauge:sum"}`] == tc.gauge && len(g) == 1 &&
				l[`{__name__="tenant:lines:count1m"}`] == tc.lines && len(l) == 1 {
				return true
			}
			t.Logf("%s: tenant:rule_gauge:sum %v, tenant:lines:count1m %v", tc.name, g, l)
			return false
		})
		for _, q := range []string{"job:rule_gauge:sum", "service:errors:count1m", "rule_gauge{job=\"j\"} == 20"} {
			if v := instant(t, c, q, time.Now()); len(v) != 0 {
				t.Errorf("%s reads another tenant's %s: %v", tc.name, q, v)
			}
		}
		_, body := request(t, http.MethodGet, admin+"/api/v1/rules", tc.token, "", nil)
		if !strings.Contains(body, `"name":"tenant-gauges"`) || strings.Contains(body, `"gauges"`) || strings.Contains(body, "tenant-logs") {
			t.Errorf("%s's /api/v1/rules: %s", tc.name, body)
		}
		_, body = request(t, http.MethodGet, admin+"/prometheus/api/v1/rules", tc.token, "", nil)
		if !strings.Contains(body, `"name":"tenant-logs"`) || strings.Contains(body, `"errors"`) || strings.Contains(body, "tenant-gauges") {
			t.Errorf("%s's Loki /prometheus/api/v1/rules: %s", tc.name, body)
		}
		_, body = request(t, http.MethodGet, admin+"/loki/api/v1/rules", tc.token, "", nil)
		if !strings.Contains(body, "name: tenant-logs") || !strings.Contains(body, `expr: sum(count_over_time({service_name="x"} [1m]))`) ||
			!strings.Contains(body, tc.name+"-logql.yml:") {
			t.Errorf("%s's Loki /loki/api/v1/rules: %s", tc.name, body)
		}
	}
	waitFor(t, 10*time.Second, "TenantGaugeHigh of b at the webhook", func() bool { return len(hook.Alerts("TenantGaugeHigh")) > 0 })
	for _, al := range hook.Alerts("TenantGaugeHigh") {
		if al.Labels["tenant"] != tenantB {
			t.Errorf("TenantGaugeHigh of tenant %q (only b's gauge is above 50): %v", al.Labels["tenant"], al.Labels)
		}
	}
	// The default tenant's rules list its own groups alone.
	_, body := request(t, http.MethodGet, admin+"/api/v1/rules", adminTokDefault, "", nil)
	if !strings.Contains(body, `"name":"gauges"`) || strings.Contains(body, "tenant-") || strings.Contains(body, `"errors"`) {
		t.Errorf("the default tenant's /api/v1/rules: %s", body)
	}
}

// lokiInstant runs a LogQL metric query at at through /loki/api/v1/query
// and returns the vector's values by series.
func lokiInstant(t *testing.T, a Addrs, token, query string, at time.Time) map[string]float64 {
	t.Helper()
	q := url.Values{"query": {query}, "time": {strconv.FormatInt(at.UnixNano(), 10)}}
	code, body := request(t, http.MethodGet, "http://"+a.Admin.String()+"/loki/api/v1/query?"+q.Encode(), token, "", nil)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", query, code, body)
	}
	var d struct {
		Data struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, r := range d.Data.Result {
		v, _ := strconv.ParseFloat(r.Value[1].(string), 64)
		m := model.Metric{}
		for k, val := range r.Metric {
			m[model.LabelName(k)] = model.LabelValue(val)
		}
		out[labelString(m)] = v
	}
	return out
}

// checkRecorded reads every sample of the recorded series name stored
// at or after from (raw, through a range selector) and checks each
// equals query at its time, without the name; at least three must.
func checkRecorded(t *testing.T, a Addrs, token, name string, from time.Time, query func(time.Time) map[string]float64) {
	t.Helper()
	v, _, _, err := promAPI(t, a, token).Query(context.Background(), name+"[10m]", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	byTime := map[int64]map[string]float64{}
	for _, s := range v.(model.Matrix) {
		m := s.Metric.Clone()
		delete(m, model.MetricNameLabel)
		for _, p := range s.Values {
			if p.Timestamp.Time().Before(from) {
				continue
			}
			if byTime[int64(p.Timestamp)] == nil {
				byTime[int64(p.Timestamp)] = map[string]float64{}
			}
			byTime[int64(p.Timestamp)][labelString(m)] = float64(p.Value)
		}
	}
	times := slices.Sorted(func(yield func(int64) bool) {
		for k := range byTime {
			if !yield(k) {
				return
			}
		}
	})
	if len(times) < 3 {
		t.Fatalf("%s: %d evaluations recorded, want at least 3", name, len(times))
	}
	for _, ms := range times {
		want := query(time.UnixMilli(ms))
		if got := byTime[ms]; !mapsEqual(got, want) {
			t.Errorf("%s at %d: recorded %v, the query gives %v", name, ms, got, want)
		}
	}
}

func mapsEqual(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ruleGroups returns the rule groups /api/v1/rules lists for the default
// tenant (no tokens): name to health of each rule.
func ruleGroups(t *testing.T, a Addrs, path string) map[string][]string {
	t.Helper()
	code, body := request(t, http.MethodGet, "http://"+a.Admin.String()+path, "", "", nil)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, code, body)
	}
	var d struct {
		Data struct {
			Groups []struct {
				Name  string
				Rules []struct {
					Name, Health, LastError string
					LastEvaluation          time.Time
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, g := range d.Data.Groups {
		for _, r := range g.Rules {
			out[g.Name] = append(out[g.Name], r.Name+":"+r.Health)
		}
	}
	return out
}

// TestServeRulesReload: a malformed rule file at start is an error naming
// the file; at a reload (ReloadRules, SIGHUP's) it is refused with its
// error and the rules before keep running; a change to the files (a new
// one matching the glob) is seen without a signal.
func TestServeRulesReload(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "a.yml", "groups:\n- name: one\n  rules:\n  - record: one:value\n    expr: vector(1)\n")
	logs := writeFile(t, dir, "a.logql", "groups:\n- name: lines\n  rules:\n  - record: lines:count\n    expr: sum(count_over_time({service_name=\"x\"}[1m]))\n")
	bad := filepath.Join(dir, "bad.yml")

	for name, c := range map[string]struct{ file, content, want string }{
		"promql": {bad, "groups:\n- name: broken\n  rules:\n  - record: x\n    expr: sum(\n", "bad.yml"},
		"logql":  {bad, "groups:\n- name: broken\n  rules:\n  - record: x\n    expr: '{service_name=\"x\"} |= \"a\"'\n", "a log query"},
		"yaml":   {bad, "groups: [\n", "bad.yml"},
	} {
		writeFile(t, dir, "bad.yml", c.content)
		cfg := testConfig(t)
		cfg.Rules.Files = []string{good}
		if name == "logql" {
			cfg.Rules.LogQLFiles = []string{bad}
		} else {
			cfg.Rules.Files = append(cfg.Rules.Files, bad)
		}
		s, err := New(cfg, io.Discard)
		if err == nil {
			s.stack.close()
			t.Fatalf("%s: New accepted a malformed rule file", name)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not name %q", name, err, c.want)
		}
	}
	os.Remove(bad)

	cfg := testConfig(t)
	cfg.Rules.EvaluationInterval = time.Second
	cfg.Rules.Files = []string{filepath.Join(dir, "*.yml")}
	cfg.Rules.LogQLFiles = []string{logs}
	s := startServer(t, cfg)
	a := s.Addrs()
	waitFor(t, 5*time.Second, "the first evaluations", func() bool {
		g := ruleGroups(t, a, "/api/v1/rules")
		return slices.Equal(g["one"], []string{"one:value:ok"})
	})
	if g := ruleGroups(t, a, "/prometheus/api/v1/rules"); len(g) != 1 || len(g["lines"]) != 1 {
		t.Errorf("Loki's rules: %v", g)
	}
	writeFile(t, dir, "bad.yml", "groups:\n- name: broken\n  rules:\n  - record: x\n    expr: sum(\n")
	err := s.ReloadRules()
	if err == nil || !strings.Contains(err.Error(), "bad.yml") {
		t.Fatalf("a reload with a malformed file: %v", err)
	}
	// The watch sees the bad file too, and refuses it again: the rules
	// before keep being evaluated.
	time.Sleep(6 * time.Second)
	if g := ruleGroups(t, a, "/api/v1/rules"); len(g) != 1 || !slices.Equal(g["one"], []string{"one:value:ok"}) {
		t.Errorf("after a refused reload: %v", g)
	}
	v := instant(t, promAPI(t, a, ""), "one:value", time.Now())
	if v[`{__name__="one:value"}`] != 1 {
		t.Errorf("one:value after a refused reload: %v", v)
	}
	if _, body := request(t, http.MethodGet, "http://"+a.Admin.String()+"/metrics", "", "", nil); !strings.Contains(body, "wirehouse_rules_last_reload_successful 0") {
		t.Error("wirehouse_rules_last_reload_successful is not 0 after a refused reload")
	}
	// Fixed, and a new file: seen without a signal.
	writeFile(t, dir, "bad.yml", "groups:\n- name: two\n  rules:\n  - alert: Always\n    expr: vector(1)\n")
	waitFor(t, 10*time.Second, "the fixed file loaded", func() bool {
		g := ruleGroups(t, a, "/api/v1/rules")
		return len(g) == 2 && slices.Equal(g["two"], []string{"Always:ok"})
	})
}

// TestAlertingConfig: the alerting block takes Prometheus' settings (auth,
// TLS, path prefix, relabeling) and refuses what Prometheus refuses, with
// the line; --alertmanager-url's user information is basic auth.
func TestAlertingConfig(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "wirehouse.yaml", `alerting:
  alertmanagers:
  - scheme: https
    path_prefix: /am
    timeout: 5s
    basic_auth: {username: wh, password: secret}
    tls_config: {insecure_skip_verify: true, server_name: am.example}
    static_configs: [{targets: ["am-0:9093", "am-1:9093"]}]
  alert_relabel_configs:
  - {action: labeldrop, regex: internal_.*}
`)
	c := DefaultConfig()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	am := c.Alerting.cfg.AlertingConfig
	if len(am.AlertmanagerConfigs) != 1 || am.AlertmanagerConfigs[0].Scheme != "https" || am.AlertmanagerConfigs[0].PathPrefix != "/am" ||
		am.AlertmanagerConfigs[0].HTTPClientConfig.BasicAuth.Username != "wh" || !am.AlertmanagerConfigs[0].HTTPClientConfig.TLSConfig.InsecureSkipVerify ||
		len(am.AlertRelabelConfigs) != 1 {
		t.Errorf("alerting: %+v", am)
	}
	if err := c.Alerting.AddURL("http://u:p@am-2:9093/prefix/"); err != nil {
		t.Fatal(err)
	}
	if n := c.Alerting.Len(); n != 2 {
		t.Fatalf("%d Alertmanager configs after --alertmanager-url", n)
	}
	added := c.Alerting.cfg.AlertingConfig.AlertmanagerConfigs[1]
	if added.Scheme != "http" || added.PathPrefix != "/prefix" || added.HTTPClientConfig.BasicAuth.Username != "u" ||
		string(added.HTTPClientConfig.BasicAuth.Password) != "p" {
		t.Errorf("--alertmanager-url: %+v", added)
	}
	for _, bad := range []string{"ftp://am:9093", "am:9093", "http://"} {
		if err := c.Alerting.AddURL(bad); err == nil {
			t.Errorf("--alertmanager-url %q accepted", bad)
		}
	}
	writeFile(t, dir, "bad.yaml", "alerting:\n  alertmanagers:\n  - static_configs: [{targets: [a]}]\n    basic_auth: {username: u}\n    authorization: {credentials: x}\n")
	c = DefaultConfig()
	if err := c.LoadFile(filepath.Join(dir, "bad.yaml")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("basic_auth with authorization: %v", err)
	}
}
