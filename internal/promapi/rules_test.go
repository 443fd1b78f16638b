package promapi

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
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

// testRules is Prometheus' rule manager's groups over db, evaluated at
// t0+5m and t0+6m (an alert firing, one pending past its for, a rule
// failing), and one Alertmanager: the source FuzzParams' /rules and
// /alerts read. (The oracle module compares these endpoints with
// Prometheus' own.)
type testRules struct{ ruler.Static }

func (testRules) Alertmanagers() []*url.URL {
	return []*url.URL{{Scheme: "http", Host: "alertmanager:9093", Path: "/api/v2/alerts"}}
}

func (testRules) DroppedAlertmanagers() []*url.URL { return nil }

func newTestRules(tb testing.TB, db *tsdb.DB) testRules {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "rules.yml")
	if err := os.WriteFile(path, []byte(`groups:
- name: api
  rules:
  - record: job:up:sum
    expr: sum by (job) (up)
  - alert: Down
    expr: up == 0
    for: 1m
    labels: {severity: page}
    annotations: {summary: '{{ $labels.instance }} down'}
  - alert: Later
    expr: up == 0
    for: 1h
  - alert: Broken
    expr: up / on() up
`), 0o600); err != nil {
		tb.Fatal(err)
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: time.Minute, LookbackDelta: 5 * time.Minute,
		Parser: parser.NewParser(parser.Options{})})
	m := rules.NewManager(&rules.ManagerOptions{NameValidationScheme: model.UTF8Validation,
		QueryFunc: rules.EngineQueryFunc(engine, db), NotifyFunc: func(context.Context, string, ...*rules.Alert) {},
		Context: context.Background(), AppendableV2: db, Queryable: db})
	groups, errs := m.LoadGroups(time.Minute, labels.EmptyLabels(), "", nil, false, path)
	if len(errs) > 0 {
		tb.Fatal(errs)
	}
	var r testRules
	for _, g := range groups {
		for _, at := range []time.Duration{5 * time.Minute, 6 * time.Minute} {
			g.Eval(context.Background(), t0.Add(at))
		}
		r.Static = append(r.Static, g)
	}
	return r
}
