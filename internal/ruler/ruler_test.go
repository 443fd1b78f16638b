package ruler

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// TestLogQLParser: a LogQL rule's expr is kept as written (what its
// query function parses again and the rules APIs show); a log query, or
// text LogQL does not parse, is refused with the parser's reason.
func TestLogQLParser(t *testing.T) {
	p := logqlParser{parser.NewParser(parser.Options{})}
	for _, q := range []string{
		`count_over_time({service_name="x"} |= "error" [1m]) > 5`,
		`sum by (service_name) (rate({app=~".+"} | logfmt | level="error" [5m]))`,
		`  sum(bytes_over_time({a="b"}[1h]))  `,
	} {
		e, err := p.ParseExpr(q)
		if err != nil {
			t.Errorf("%s: %v", q, err)
			continue
		}
		if e.String() != strings.TrimSpace(q) || e.Type() != parser.ValueTypeVector {
			t.Errorf("%s: kept as %q (%s)", q, e, e.Type())
		}
	}
	for q, want := range map[string]string{
		`{service_name="x"} |= "error"`: "a log query",
		`sum(rate({a="b"}[1m])`:         "parse LogQL",
		`up == 0`:                       "parse LogQL",
	} {
		if _, err := p.ParseExpr(q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", q, err, want)
		}
	}
}

// TestValidate: the settings New refuses.
func TestValidate(t *testing.T) {
	ok := DefaultConfig()
	ok.Tenants = map[string]Files{"": {PromQL: []string{"a.yml"}}}
	if err := ok.Validate(); err == nil || !strings.Contains(err.Error(), "metric store") {
		t.Errorf("no store: %v", err)
	}
	for name, c := range map[string]func(*Config){
		"interval":    func(c *Config) { c.Interval = 0 },
		"watch":       func(c *Config) { c.WatchEvery = -1 },
		"tenant":      func(c *Config) { c.Tenants = map[string]Files{"a/b": {}} },
		"logql":       func(c *Config) { c.Tenants = map[string]Files{"": {LogQL: []string{"a.yml"}}} },
		"bad pattern": func(c *Config) { c.Tenants = map[string]Files{"": {PromQL: []string{"[a"}}} },
	} {
		cfg := DefaultConfig()
		c(&cfg)
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzRuleFile: any rule file, read as Loki's ruler format (LogQL
// exprs) and as Prometheus', is parsed or refused with an error, never a
// panic; an accepted LogQL rule keeps its expr as written.
func FuzzRuleFile(f *testing.F) {
	for _, seed := range []string{
		"groups:\n- name: a\n  rules:\n  - record: x:y\n    expr: sum(count_over_time({a=\"b\"}[1m]))\n",
		"groups:\n- name: a\n  interval: 1m\n  rules:\n  - alert: A\n    expr: count_over_time({a=\"b\"} |= \"error\" [1m]) > 5\n    for: 5m\n    labels: {s: p}\n    annotations: {summary: '{{ $value }}'}\n",
		"groups:\n- name: a\n  rules:\n  - alert: A\n    expr: '{a=\"b\"}'\n",
		"groups: [\n", "groups:\n- name: a\n  rules:\n  - record: x\n    alert: y\n    expr: up\n",
	} {
		f.Add(seed)
	}
	logql := logqlParser{parser.NewParser(parser.Options{})}
	promql := parser.NewParser(parser.Options{})
	discard := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, content string) {
		if gs, errs := rulefmt.Parse([]byte(content), false, model.UTF8Validation, logql, discard); len(errs) == 0 && gs != nil {
			for _, g := range gs.Groups {
				for _, r := range g.Rules {
					e, err := logql.ParseExpr(r.Expr)
					if err != nil {
						t.Fatalf("an accepted rule's expr %q: %v", r.Expr, err)
					}
					if e.String() != strings.TrimSpace(r.Expr) {
						t.Fatalf("expr %q kept as %q", r.Expr, e)
					}
				}
			}
		}
		rulefmt.Parse([]byte(content), false, model.UTF8Validation, promql, discard) //nolint:errcheck
	})
}
