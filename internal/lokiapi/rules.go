package lokiapi

import (
	"fmt"
	"net/http"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/rules"
	"go.yaml.in/yaml/v3"

	"github.com/wirehouse/wirehouse/internal/promapi"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// The ruler's read endpoints, as Loki's documentation gives them:
//
//   - GET /loki/api/v1/rules, /rules/{namespace} and
//     /rules/{namespace}/{group}: the tenant's rule groups as YAML, a map
//     of namespace (the rule file) to its groups in the rule format; 404
//     "no rule groups found" when there is none;
//   - GET /prometheus/api/v1/rules and /prometheus/api/v1/alerts: the
//     groups with their state, and the active alerts, in Prometheus' JSON
//     shape (promapi.RulesAnswer, AlertsAnswer), as Grafana's alerting
//     views read a Loki data source's rules.
//
// Rules come from files (serve's rules.logql_files): the endpoints that
// would change them answer 405.

// rawYAML is an answer written as YAML already.
type rawYAML []byte

// ruleGroupYAML and ruleYAML are a group and a rule in the rule format.
type ruleGroupYAML struct {
	Name     string         `yaml:"name"`
	Interval model.Duration `yaml:"interval,omitempty"`
	Limit    int            `yaml:"limit,omitempty"`
	Rules    []ruleYAML     `yaml:"rules"`
}

type ruleYAML struct {
	Record        string            `yaml:"record,omitempty"`
	Alert         string            `yaml:"alert,omitempty"`
	Expr          string            `yaml:"expr"`
	For           model.Duration    `yaml:"for,omitempty"`
	KeepFiringFor model.Duration    `yaml:"keep_firing_for,omitempty"`
	Labels        map[string]string `yaml:"labels,omitempty"`
	Annotations   map[string]string `yaml:"annotations,omitempty"`
}

// rulesOf is the rules of the request's tenant.
func (h *Handler) rulesOf(r *http.Request) promapi.RulesSource {
	if h.cfg.Rules == nil {
		return nil
	}
	return h.cfg.Rules(tenant.FromContext(r.Context()))
}

// ruleGroups answers /loki/api/v1/rules[/{namespace}[/{group}]].
func (h *Handler) ruleGroups(r *http.Request) (any, error) {
	ns, name := r.PathValue("namespace"), r.PathValue("group")
	out := map[string][]ruleGroupYAML{}
	if src := h.rulesOf(r); src != nil {
		for _, g := range src.RuleGroups() {
			if (ns != "" && g.File() != ns) || (name != "" && g.Name() != name) {
				continue
			}
			out[g.File()] = append(out[g.File()], groupYAML(g))
		}
	}
	if len(out) == 0 {
		return nil, readapi.Errorf(readapi.KindNotFound, "no rule groups found")
	}
	if name != "" { // one group: the group itself, as Loki answers it
		b, err := yaml.Marshal(out[ns][0])
		if err != nil {
			return nil, fmt.Errorf("encode rule group: %w", err)
		}
		return rawYAML(b), nil
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode rule groups: %w", err)
	}
	return rawYAML(b), nil
}

// groupYAML is g in the rule format.
func groupYAML(g *rules.Group) ruleGroupYAML {
	out := ruleGroupYAML{Name: g.Name(), Interval: model.Duration(g.Interval()), Limit: g.Limit(), Rules: []ruleYAML{}}
	for _, r := range g.Rules() {
		y := ruleYAML{Expr: r.Query().String(), Labels: r.Labels().Map()}
		switch r := r.(type) {
		case *rules.AlertingRule:
			y.Alert, y.For, y.KeepFiringFor = r.Name(), model.Duration(r.HoldDuration()), model.Duration(r.KeepFiringFor())
			y.Annotations = r.Annotations().Map()
		default:
			y.Record = r.Name()
		}
		if len(y.Labels) == 0 {
			y.Labels = nil
		}
		if len(y.Annotations) == 0 {
			y.Annotations = nil
		}
		out.Rules = append(out.Rules, y)
	}
	return out
}

// promRules answers /prometheus/api/v1/rules in Prometheus' shape.
func (h *Handler) promRules(r *http.Request) (any, error) {
	q := r.URL.Query()
	sets, err := promapi.CheckRulesQuery(q)
	if err != nil {
		return nil, readapi.Errorf(readapi.KindBadRequest, "%v", err)
	}
	res := promapi.RulesAnswer(h.rulesOf(r), q, sets)
	if res == nil {
		return nil, readapi.Errorf(readapi.KindBadRequest, "invalid parameter \"group_next_token\": invalid group_next_token '%v'. were rule groups changed?", q.Get("group_next_token"))
	}
	return success(res), nil
}

// promAlerts answers /prometheus/api/v1/alerts in Prometheus' shape.
func (h *Handler) promAlerts(r *http.Request) (any, error) {
	return success(promapi.AlertsAnswer(h.rulesOf(r))), nil
}

// rulesReadOnly answers the ruler's write endpoints: the rules are files.
func rulesReadOnly(w http.ResponseWriter, _ *http.Request) {
	http.Error(w, "rules come from rule files (rules.logql_files): edit them and send SIGHUP, or wait for the change to be seen", http.StatusMethodNotAllowed)
}
