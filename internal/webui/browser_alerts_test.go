package webui_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/amtest"
	"github.com/wirehouse/wirehouse/internal/serve"
)

// The rule files of TestBrowser's server, over what feed sends: a PromQL
// group with a firing alert (one per namespace, once its for has passed),
// a pending one (for: 1h), an inactive one and a recording rule that
// fails at every evaluation (its label makes every series the same); and
// a LogQL group with a firing alert and a recording rule.
const (
	browserPromRules = `groups:
- name: cluster
  interval: 1s
  rules:
  - alert: NamespaceCPU
    expr: count by (namespace) (container_cpu_usage_seconds_total) > 0
    for: 10s
    labels:
      severity: page
    annotations:
      summary: '{{ $labels.namespace }} has {{ $value }} CPU series'
  - alert: ClusterCPUSustained
    expr: count(container_cpu_usage_seconds_total) > 0
    for: 1h
    labels:
      severity: ticket
  - alert: TooManyCPUSeries
    expr: count(container_cpu_usage_seconds_total) > 1e9
  - record: namespace:cpu_series:count
    expr: count by (namespace) (container_cpu_usage_seconds_total)
    labels:
      namespace: all
`
	browserLogQLRules = `groups:
- name: service-logs
  interval: 2s
  rules:
  - record: service_name:log_lines:rate1m
    expr: sum by (service_name) (rate({service_name=~".+"}[1m]))
  - alert: ServiceLogging
    expr: sum by (service_name) (count_over_time({service_name=~".+"}[5m])) > 0
    for: 10s
    labels:
      severity: info
    annotations:
      summary: '{{ $labels.service_name }} logged {{ $value }} lines in 5 minutes'
`
)

// alertmanager is the real Alertmanager (internal/amtest), its webhook
// receiver this test's server.
type alertmanager struct {
	URL  string
	hook *amtest.Webhook
}

func startAlertmanager(t *testing.T) *alertmanager {
	t.Helper()
	url, hook := amtest.Start(t)
	return &alertmanager{URL: url, hook: hook}
}

// generatorURL is the generator URL of the first alert named name
// notified, "" if none.
func (am *alertmanager) generatorURL(name string) string {
	if al := am.hook.Alerts(name); len(al) > 0 {
		return al[0].GeneratorURL
	}
	return ""
}

// withRules has serve evaluate the rule files above and send the alerts
// to am.
func withRules(t *testing.T, am *alertmanager) func(*serve.Config) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	prom, logql := write("cluster.rules.yml", browserPromRules), write("service-logs.logql.yml", browserLogQLRules)
	return func(c *serve.Config) {
		c.Rules.Files, c.Rules.LogQLFiles = []string{prom}, []string{logql}
		if err := c.Alerting.AddURL(am.URL); err != nil {
			t.Fatal(err)
		}
	}
}

// apiRule is a rule as Prometheus' rules API gives it.
type apiRule struct {
	Name, Type, State, Health, LastError, Query string
	Alerts                                      []struct{ State string }
}

// apiRules returns the rules of the API at path (/api/v1/rules or Loki's
// /prometheus/api/v1/rules) by name, with their group's name in Group.
func apiRules(t *testing.T, u string) (map[string]apiRule, map[string]string) {
	t.Helper()
	var ans struct {
		Data struct {
			Groups []struct {
				Name  string
				Rules []apiRule
			}
		}
	}
	if code := getJSON(t, u, "", &ans); code != http.StatusOK {
		t.Fatalf("GET %s: %d", u, code)
	}
	rules, group := map[string]apiRule{}, map[string]string{}
	for _, g := range ans.Data.Groups {
		for _, r := range g.Rules {
			rules[r.Name], group[r.Name] = r, g.Name
		}
	}
	return rules, group
}

// pageRule is a rule as the alerts page shows it.
type pageRule struct {
	Name, Type, Lang, Group, State, Health, Error, Query, Href string
}

// testAlertsPage checks the alerts page of srv, whose rules are
// withRules' and whose Alertmanager is am, against the rules APIs: each
// rule in its group with its language, state badge, health, last error
// and query, linked to the metrics page (PromQL) or the logs page
// (LogQL); the firing alerts before the pending ones; the Alertmanager;
// the state filter. Then the links, and the alerts' generator URLs as
// the Alertmanager received them, open those pages on the rule's query.
func testAlertsPage(t *testing.T, tab *tab, srv server, am *alertmanager, shots string) {
	// The API first: wait for the states the page must show.
	var prom, logql map[string]apiRule
	groups := map[string]string{}
	var ams struct {
		Data struct{ ActiveAlertmanagers []struct{ URL string } }
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var pg, lg map[string]string
		prom, pg = apiRules(t, srv.url+"/api/v1/rules")
		logql, lg = apiRules(t, srv.url+"/prometheus/api/v1/rules")
		getJSON(t, srv.url+"/api/v1/alertmanagers", "", &ams)
		if prom["NamespaceCPU"].State == "firing" && prom["ClusterCPUSustained"].State == "pending" &&
			prom["TooManyCPUSeries"].State == "inactive" && prom["namespace:cpu_series:count"].Health == "err" &&
			prom["TooManyCPUSeries"].Health == "ok" && logql["ServiceLogging"].State == "firing" &&
			logql["service_name:log_lines:rate1m"].Health == "ok" && len(ams.Data.ActiveAlertmanagers) == 1 {
			for k, v := range pg {
				groups[k] = v
			}
			for k, v := range lg {
				groups[k] = v
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rules did not reach their states: PromQL %+v, LogQL %+v, Alertmanagers %+v", prom, logql, ams)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if e := prom["namespace:cpu_series:count"].LastError; !strings.Contains(e, "same labelset") {
		t.Errorf("the failing rule's lastError: %q", e)
	}

	tab.open(srv.url + "/alerts")
	tab.waitReady()
	if p := eval[string](tab, `document.querySelector('.topbar nav a.active')?.dataset.page || ""`); p != "alerts" {
		t.Errorf("the top bar marks %q active", p)
	}
	shown := eval[[]pageRule](tab, `[...document.querySelectorAll('tr.rule')].map((r) => {
		const q = r.querySelector('a.rule-query');
		return { Name: r.dataset.rule, Type: r.dataset.type, Lang: r.dataset.lang, Group: r.closest('.rule-group').dataset.group,
			State: r.querySelector('td:first-child .badge').textContent, Health: r.querySelector('.badge.health').textContent,
			Error: r.querySelector('.rule-error')?.textContent || "", Query: q.textContent, Href: q.getAttribute('href') };
	})`)
	byName := map[string]pageRule{}
	for _, r := range shown {
		byName[r.Name] = r
	}
	if len(shown) != len(prom)+len(logql) {
		t.Errorf("%d rules on the page, the APIs have %d", len(shown), len(prom)+len(logql))
	}
	for lang, rules := range map[string]map[string]apiRule{"promql": prom, "logql": logql} {
		for name, want := range rules {
			got, ok := byName[name]
			if !ok {
				t.Errorf("rule %s is not on the page", name)
				continue
			}
			state := want.State
			if want.Type == "recording" {
				state = "recording"
			}
			if got.Lang != lang || got.Group != groups[name] || got.Type != want.Type || got.State != state ||
				got.Health != want.Health || got.Error != want.LastError || got.Query != want.Query {
				t.Errorf("rule %s: the page shows %+v; the API has %+v in group %s (%s)", name, got, want, groups[name], lang)
			}
			// The query's link: the metrics page's table, or the logs page,
			// as the alerts' generator URLs link them.
			u, err := url.Parse(got.Href)
			var ok2 bool
			if err == nil && lang == "promql" {
				ok2 = u.Path == "/graph" && u.Query().Get("g0.expr") == want.Query && u.Query().Get("g0.tab") == "1"
			} else if err == nil {
				ok2 = u.Path == "/logs" && u.Query().Get("query") == want.Query
			}
			if !ok2 {
				t.Errorf("rule %s (%s): its query links %q", name, lang, got.Href)
			}
		}
	}
	langs := eval[map[string]string](tab, `Object.fromEntries([...document.querySelectorAll('.rule-group')].map((g) =>
		[g.dataset.group, g.dataset.lang + " " + g.querySelector('.badge.lang').textContent]))`)
	if want := map[string]string{"cluster": "promql PromQL", "service-logs": "logql LogQL"}; fmt.Sprint(langs) != fmt.Sprint(want) {
		t.Errorf("groups: %v, want %v", langs, want)
	}
	if e := eval[string](tab, `document.querySelector('tr.rule[data-rule="namespace:cpu_series:count"] .rule-error')?.className || ""`); !strings.Contains(e, "error") {
		t.Errorf("the last error is not shown as an error: class %q", e)
	}

	// Firing and pending alerts, firing first, each with its labels and
	// value.
	alerts := eval[[]struct{ State, Rule, Labels, Value, Since string }](tab, `[...document.querySelectorAll('tr.active-alert')].map((r) => ({
		State: r.querySelector('.badge.state').textContent, Rule: r.dataset.rule,
		Labels: [...r.querySelectorAll('.label-chip')].map((c) => c.textContent).join(" "),
		Value: r.querySelector('td.num').textContent, Since: r.querySelector('td:nth-child(4)').textContent }))`)
	var states []string
	has := map[string]bool{}
	for _, a := range alerts {
		states = append(states, a.State)
		has[a.Rule+" "+a.State] = true
		if a.Value == "" || a.Value == "–" || a.Since == "" || a.Since == "–" || (a.Rule == "NamespaceCPU" && !strings.Contains(a.Labels, `namespace="`)) {
			t.Errorf("alert %+v", a)
		}
	}
	if !slices.IsSortedFunc(states, func(a, b string) int { return strings.Compare(a, b) }) { // "firing" < "pending"
		t.Errorf("alerts in the order %q, want firing before pending", states)
	}
	for _, want := range []string{"NamespaceCPU firing", "ServiceLogging firing", "ClusterCPUSustained pending"} {
		if !has[want] {
			t.Errorf("no %s alert among %+v", want, alerts)
		}
	}
	if got := eval[string](tab, `[...document.querySelectorAll('.am-list li')].map((l) => l.dataset.url).join(" ")`); got != ams.Data.ActiveAlertmanagers[0].URL ||
		!strings.HasPrefix(got, am.URL) {
		t.Errorf("Alertmanagers on the page: %q; the API has %+v", got, ams.Data.ActiveAlertmanagers)
	}
	tab.timings("alerts")
	tab.shot(shots, "alerts", true)

	// An alert's name shows its rule; the rule opens to its definition
	// and alerts.
	tab.click(`tr.active-alert[data-rule="ClusterCPUSustained"] a.alert-name`)
	tab.wait(`document.querySelector('tr.rule.target')?.dataset.rule === "ClusterCPUSustained" && location.pathname === "/alerts"`, 5*time.Second)
	tab.click(`tr.rule[data-rule="NamespaceCPU"] summary`)
	tab.wait(`document.querySelectorAll('tr.rule[data-rule="NamespaceCPU"] .rule-alerts tr').length > 0`, 5*time.Second)

	// The state filter keeps the firing rules and alerts, in the URL too.
	tab.click(`.state-filter button[data-state="firing"]`)
	tab.wait(`location.search === "?state=firing" && document.querySelectorAll('tr.rule').length > 0 &&
		[...document.querySelectorAll('tr.rule, tr.active-alert')].every((r) => r.dataset.state === "firing")`, 5*time.Second)
	if n := eval[int](tab, `document.querySelectorAll('tr.rule').length`); n != 2 {
		t.Errorf("filtered on firing: %d rules, want 2", n)
	}
	tab.click(`.state-filter button[data-state=""]`)
	tab.wait(fmt.Sprintf(`location.search === "" && document.querySelectorAll('tr.rule').length === %d`, len(shown)), 5*time.Second)

	// The links open the pages on the rule's query.
	tab.clickToLoad(`tr.rule[data-rule="NamespaceCPU"] a.rule-query`)
	tab.waitReady()
	checkQueryPage(t, tab, "/graph", prom["NamespaceCPU"].Query)
	tab.open(srv.url + byName["ServiceLogging"].Href)
	tab.waitReady()
	checkQueryPage(t, tab, "/logs", logql["ServiceLogging"].Query)

	// So do the alerts' generator URLs (the ruler's external URL is the
	// configured listen address, :0 here: its path and query).
	for name, want := range map[string]struct{ page, query string }{
		"NamespaceCPU":   {"/graph", prom["NamespaceCPU"].Query},
		"ServiceLogging": {"/logs", logql["ServiceLogging"].Query},
	} {
		var gen string
		deadline := time.Now().Add(75 * time.Second) // a first notification before the Alertmanager is known is resent a minute later
		for gen = am.generatorURL(name); gen == "" && time.Now().Before(deadline); gen = am.generatorURL(name) {
			time.Sleep(200 * time.Millisecond)
		}
		u, err := url.Parse(gen)
		if err != nil || gen == "" {
			t.Errorf("%s: generator URL %q (%v)", name, gen, err)
			continue
		}
		tab.open(srv.url + u.RequestURI())
		tab.waitReady()
		checkQueryPage(t, tab, want.page, want.query)
	}
}

// checkQueryPage checks that the tab shows the page at path with query
// in its editor and its result drawn: the metrics page's table, or the
// logs page's graph of a metric query.
func checkQueryPage(t *testing.T, tab *tab, path, query string) {
	t.Helper()
	if p := eval[string](tab, `location.pathname`); p != path {
		t.Errorf("opened %s, want %s", p, path)
		return
	}
	if q := eval[string](tab, `document.querySelector('.query-panel textarea').value`); q != query {
		t.Errorf("%s: the query is %q, want %q", path, q, query)
	}
	if path == "/graph" {
		if tabName := eval[string](tab, `document.querySelector('.query-panel .tabs button.active')?.dataset.tab || ""`); tabName != "table" {
			t.Errorf("/graph: the %q tab is open, want table", tabName)
		}
		tab.wait(`document.querySelectorAll('.series-table tbody tr').length > 0`, 10*time.Second)
		return
	}
	tab.wait(`!!document.querySelector('#main .chart canvas')`, 10*time.Second)
	if e := eval[string](tab, `document.querySelector('#main .alert')?.textContent || ""`); e != "" {
		t.Errorf("%s: %s", path, e)
	}
}
