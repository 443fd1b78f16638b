package oracle

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/wirehouse/wirehouse/internal/ruler"
)

// ruleFixture is a rule manager's groups, evaluated at fixed times, and
// one Alertmanager: what both APIs list in TestOracleRules.
type ruleFixture struct{ ruler.Static }

func (f *ruleFixture) Alertmanagers() []*url.URL {
	return []*url.URL{{Scheme: "http", Host: "alertmanager:9093", Path: "/api/v2/alerts"}}
}

func (f *ruleFixture) DroppedAlertmanagers() []*url.URL { return nil }

// ruleFile has two groups: recording rules, an alert pending then firing
// (for: 1m), one firing at once with keep_firing_for, one whose query
// fails at evaluation (health err), and a group of its own.
const ruleFile = `groups:
- name: api
  interval: 30s
  labels:
    team: core
  rules:
  - record: job:up:sum
    expr: sum by (job) (up)
  - alert: InstanceDown
    expr: up == 0
    for: 1m
    labels:
      severity: page
    annotations:
      summary: '{{ $labels.instance }} of {{ $labels.job }} is down ({{ $value }})'
  - alert: Requests500
    expr: rate(http_requests_total{code="500"}[1m]) > 0
    keep_firing_for: 2m
  - alert: ManyToMany
    expr: up / on() up
- name: db
  limit: 10
  rules:
  - record: db:up
    expr: up{job="db"}
  - alert: Always
    expr: vector(1)
    labels:
      severity: info
`

// newRuleFixture loads ruleFile with Prometheus' rule manager over db
// and evaluates every group at t0+5m and t0+6m.
func newRuleFixture(t *testing.T, db *tsdb.DB) *ruleFixture {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(ruleFile), 0o600); err != nil {
		t.Fatal(err)
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute,
		Parser: parser.NewParser(parser.Options{})})
	m := rules.NewManager(&rules.ManagerOptions{
		NameValidationScheme: model.UTF8Validation,
		QueryFunc:            rules.EngineQueryFunc(engine, db),
		NotifyFunc:           func(context.Context, string, ...*rules.Alert) {},
		Context:              context.Background(),
		AppendableV2:         db,
		Queryable:            db,
		Logger:               slog.New(slog.DiscardHandler),
	})
	groups, errs := m.LoadGroups(time.Minute, labels.EmptyLabels(), "", nil, false, path)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	f := &ruleFixture{}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	}) {
		f.Static = append(f.Static, groups[k])
	}
	for _, at := range []time.Duration{5 * time.Minute, 6 * time.Minute} {
		for _, g := range f.Static {
			g.Eval(context.Background(), t0.Add(at))
		}
	}
	return f
}

// TestOracleRules: with the same rule groups (loaded and evaluated by
// Prometheus' rule manager) and Alertmanager, promapi and Prometheus'
// web/api/v1 answer /rules (every filter, paging, bad parameters),
// /alerts and /alertmanagers alike.
func TestOracleRules(t *testing.T) {
	db, reg := openDB(t)
	f := newRuleFixture(t, db)
	o, p := ours(t, db, reg, "", f), theirs(t, db, reg, false, "", f)
	defer o.Client().CloseIdleConnections()
	defer p.Client().CloseIdleConnections()
	file := f.Static[0].File()
	// The token of the second group: Prometheus' own, from its first
	// page.
	_, page := do(t, p, call{path: "/rules", params: q("group_limit", "1")})
	dbToken, _ := field(page, "data", "groupNextToken").(string)
	if dbToken == "" {
		t.Fatalf("no groupNextToken in Prometheus' first page: %v", page)
	}
	for _, c := range []call{
		{name: "rules", path: "/rules", status: 200},
		{name: "rules/alert", path: "/rules", params: q("type", "alert"), status: 200},
		{name: "rules/record", path: "/rules", params: q("type", "RECORD"), status: 200},
		{name: "rules/exclude-alerts", path: "/rules", params: q("exclude_alerts", "true"), status: 200},
		{name: "rules/rule-name", path: "/rules", params: q("rule_name[]", "InstanceDown", "rule_name[]", "db:up"), status: 200},
		{name: "rules/rule-group", path: "/rules", params: q("rule_group[]", "db"), status: 200},
		{name: "rules/file", path: "/rules", params: q("file[]", file), status: 200},
		{name: "rules/file-none", path: "/rules", params: q("file[]", "/nowhere.yml"), status: 200},
		{name: "rules/match", path: "/rules", params: q("match[]", `{severity="page"}`, "match[]", `{team="core",severity!="page"}`), status: 200},
		{name: "rules/limit", path: "/rules", params: q("group_limit", "1"), status: 200},
		{name: "rules/next", path: "/rules", params: q("group_limit", "1", "group_next_token", dbToken), status: 200},
		{name: "rules/limit-all", path: "/rules", params: q("group_limit", "5"), status: 200},
		{name: "rules/token-unknown", path: "/rules", params: q("group_limit", "1", "group_next_token", "abc"), status: 400},
		{name: "rules/type-bad", path: "/rules", params: q("type", "silence"), status: 400},
		{name: "rules/match-parse", path: "/rules", params: q("match[]", "{"), status: 400},
		{name: "alerts", path: "/alerts", status: 200},
		{name: "alertmanagers", path: "/alertmanagers", status: 200},
	} {
		t.Run(c.name, func(t *testing.T) { compare(t, o, p, c) })
	}
}
