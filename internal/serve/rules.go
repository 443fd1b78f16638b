package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	promconfig "github.com/prometheus/prometheus/config"
	"go.yaml.in/yaml/v3"

	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/lokiapi"
	"github.com/wirehouse/wirehouse/internal/promapi"
	"github.com/wirehouse/wirehouse/internal/ruler"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// RulesConfig names the rule files serve evaluates (internal/ruler): the
// default tenant's, and each other tenant's.
type RulesConfig struct {
	// EvaluationInterval is the interval of groups that set none
	// (Prometheus' global evaluation_interval).
	EvaluationInterval time.Duration `yaml:"evaluation_interval"`
	// Files and LogQLFiles are the default tenant's (see RuleFiles).
	Files      []string `yaml:"files"`
	LogQLFiles []string `yaml:"logql_files"`
	// Tenants are the rule files of tenants other than the default one,
	// by tenant: their rules read and write that tenant's data alone.
	Tenants map[string]RuleFiles `yaml:"tenants"`
	// ExternalURL prefixes alerts' generator URLs (default: the admin
	// listen address, over http).
	ExternalURL string `yaml:"external_url"`
}

// RuleFiles are globs of rule files: Files in Prometheus' format (PromQL),
// LogQLFiles in Loki's ruler format (LogQL).
type RuleFiles struct {
	Files      []string `yaml:"files"`
	LogQLFiles []string `yaml:"logql_files"`
}

// validate reports the first bad rules setting; lakeTenant is the
// default tenant's name.
func (c RulesConfig) validate(lakeTenant string) error {
	if c.EvaluationInterval <= 0 {
		return fmt.Errorf("rules: evaluation_interval must be positive, got %v", c.EvaluationInterval)
	}
	for t := range c.Tenants {
		switch {
		case t == "" || t == lakeTenant:
			return fmt.Errorf("rules.tenants: %q is the default tenant: its files go in rules.files and rules.logql_files", t)
		case !tenant.Valid(t):
			return fmt.Errorf("rules.tenants: %q is not a valid tenant name", t)
		}
	}
	return nil
}

// any reports whether c names a rule file.
func (c RulesConfig) any() bool {
	if len(c.Files)+len(c.LogQLFiles) > 0 {
		return true
	}
	for _, f := range c.Tenants {
		if len(f.Files)+len(f.LogQLFiles) > 0 {
			return true
		}
	}
	return false
}

// Alerting is Prometheus' alerting block (alertmanagers, with every
// setting Prometheus has: static_configs, basic_auth, authorization,
// tls_config, path_prefix, scheme, api_version, timeout; and
// alert_relabel_configs), read with Prometheus' configuration loader.
type Alerting struct {
	cfg *promconfig.Config
}

// UnmarshalYAML reads the block with Prometheus' loader.
func (a *Alerting) UnmarshalYAML(n *yaml.Node) error {
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "alerting"}, n}}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("line %d: alerting: %w", n.Line, err)
	}
	c, err := promconfig.Load(string(b), slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("line %d: alerting: %w", n.Line, err)
	}
	if len(c.AlertingConfig.AlertmanagerConfigs)+len(c.AlertingConfig.AlertRelabelConfigs) > 0 {
		a.merge(c)
	}
	return nil
}

// MarshalYAML writes the block as Prometheus does.
func (a Alerting) MarshalYAML() (any, error) {
	if a.cfg == nil {
		return nil, nil
	}
	return a.cfg.AlertingConfig, nil
}

func (a *Alerting) merge(c *promconfig.Config) {
	if a.cfg == nil {
		a.cfg = c
		return
	}
	a.cfg.AlertingConfig.AlertmanagerConfigs = append(a.cfg.AlertingConfig.AlertmanagerConfigs, c.AlertingConfig.AlertmanagerConfigs...)
	a.cfg.AlertingConfig.AlertRelabelConfigs = append(a.cfg.AlertingConfig.AlertRelabelConfigs, c.AlertingConfig.AlertRelabelConfigs...)
}

// AddURL adds an Alertmanager by its URL, as Loki's ruler and vmalert
// take one: scheme, host and port, a path prefix, and basic auth from
// the URL's user information; Prometheus' defaults (API v2, 10s timeout)
// for the rest.
func (a *Alerting) AddURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("alertmanager URL %q: want http(s)://[user:password@]host:port[/prefix]", raw)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "alerting:\n  alertmanagers:\n  - scheme: %s\n    path_prefix: %q\n    static_configs:\n    - targets: [%q]\n",
		u.Scheme, strings.TrimSuffix(u.Path, "/"), u.Host)
	if u.User != nil {
		p, _ := u.User.Password()
		fmt.Fprintf(&b, "    basic_auth:\n      username: %q\n      password: %q\n", u.User.Username(), p)
	}
	c, err := promconfig.Load(b.String(), slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("alertmanager URL %q: %w", raw, err)
	}
	a.merge(c)
	return nil
}

// Len is the number of Alertmanager configurations.
func (a Alerting) Len() int {
	if a.cfg == nil {
		return 0
	}
	return len(a.cfg.AlertingConfig.AlertmanagerConfigs)
}

// openRuler makes the ruler of cfg.Rules, when it names rule files, over
// the metric store (PromQL through the API's engine) and the lake (LogQL
// through lokiapi's engine), within the query budget.
func (s *Server) openRuler(api *promapi.API) error {
	rc := s.cfg.Rules
	if !rc.any() {
		return nil
	}
	c := ruler.DefaultConfig()
	c.Interval = rc.EvaluationInterval
	c.Tenants = map[string]ruler.Files{"": {PromQL: rc.Files, LogQL: rc.LogQLFiles}}
	for t, f := range rc.Tenants {
		c.Tenants[t] = ruler.Files{PromQL: f.Files, LogQL: f.LogQLFiles}
	}
	c.DefaultLakeTenant = s.cfg.Lake.Tenant
	c.ExternalURL = rc.ExternalURL
	if c.ExternalURL == "" {
		c.ExternalURL = "http://" + s.cfg.Admin.Listen
	}
	if s.cfg.Alerting.Len() > 0 {
		c.Alerting = s.cfg.Alerting.cfg
	}
	c.Queryable, c.Appendable, c.Engine = s.metrics.Queryable(), s.metrics.Appendable(), api.Engine()
	if s.traces != nil {
		limits := s.cfg.readLimits()
		var pending func(ctx context.Context, tenant string) func(*eval.Record) bool
		if s.deletes != nil {
			pending = s.deletes.Pending // rules do not see what a delete request removes
		}
		c.Logs = lokiapi.NewEngine(s.traces, limits.MaxSeries, lokiapi.DefaultConfig().MaxPoints, pending)
	}
	c.Gate, c.Registerer, c.Logger = s.gate, s.reg, s.log.With("component", "ruler")
	r, err := ruler.New(c)
	if err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	s.ruler = r
	s.stack.push("ruler", r.Close)
	return nil
}

// ReloadRules loads the rule files again (serve does on SIGHUP); when
// one is bad, the rules before keep running and the error says why.
func (s *Server) ReloadRules() error {
	if s.ruler == nil {
		return nil
	}
	return s.ruler.Reload()
}

// rulerAlertmanagers lists the ruler's Alertmanagers (none without it).
type rulerAlertmanagers struct{ s *Server }

func (a rulerAlertmanagers) Alertmanagers() []*url.URL {
	if a.s.ruler == nil {
		return nil
	}
	return a.s.ruler.Alertmanagers()
}

func (a rulerAlertmanagers) DroppedAlertmanagers() []*url.URL {
	if a.s.ruler == nil {
		return nil
	}
	return a.s.ruler.DroppedAlertmanagers()
}
