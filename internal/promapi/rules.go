package promapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// RulesSource gives the rules of a tenant (Prometheus' web API's
// RulesRetriever; a *rules.Manager is one).
type RulesSource interface {
	RuleGroups() []*rules.Group
	AlertingRules() []*rules.AlertingRule
}

// AlertmanagerSource gives the Alertmanagers alerts are sent to (a
// *notifier.Manager is one).
type AlertmanagerSource interface {
	Alertmanagers() []*url.URL
	DroppedAlertmanagers() []*url.URL
}

// The shapes of Prometheus' web API (web/api/v1): rule groups, rules,
// alerts, Alertmanagers.
type (
	ruleDiscovery struct {
		RuleGroups     []*ruleGroup `json:"groups"`
		GroupNextToken string       `json:"groupNextToken,omitempty"`
	}
	ruleGroup struct {
		Name           string    `json:"name"`
		File           string    `json:"file"`
		Rules          []any     `json:"rules"`
		Interval       float64   `json:"interval"`
		Limit          int       `json:"limit"`
		EvaluationTime float64   `json:"evaluationTime"`
		LastEvaluation time.Time `json:"lastEvaluation"`
	}
	alertingRule struct {
		State          string           `json:"state"`
		Name           string           `json:"name"`
		Query          string           `json:"query"`
		Duration       float64          `json:"duration"`
		KeepFiringFor  float64          `json:"keepFiringFor"`
		Labels         labels.Labels    `json:"labels"`
		Annotations    labels.Labels    `json:"annotations"`
		Alerts         []*alert         `json:"alerts"`
		Health         rules.RuleHealth `json:"health"`
		LastError      string           `json:"lastError,omitempty"`
		EvaluationTime float64          `json:"evaluationTime"`
		LastEvaluation time.Time        `json:"lastEvaluation"`
		Type           string           `json:"type"`
	}
	recordingRule struct {
		Name           string           `json:"name"`
		Query          string           `json:"query"`
		Labels         labels.Labels    `json:"labels"`
		Health         rules.RuleHealth `json:"health"`
		LastError      string           `json:"lastError,omitempty"`
		EvaluationTime float64          `json:"evaluationTime"`
		LastEvaluation time.Time        `json:"lastEvaluation"`
		Type           string           `json:"type"`
	}
	alert struct {
		Labels          labels.Labels `json:"labels"`
		Annotations     labels.Labels `json:"annotations"`
		State           string        `json:"state"`
		ActiveAt        *time.Time    `json:"activeAt,omitempty"`
		KeepFiringSince *time.Time    `json:"keepFiringSince,omitempty"`
		Value           string        `json:"value"`
	}
	alertmanagerTarget struct {
		URL string `json:"url"`
	}
)

// rulesOf is the rules source of the request's tenant, or none.
func (a *API) rulesOf(r *http.Request) RulesSource {
	if a.cfg.Rules == nil {
		return nil
	}
	return a.cfg.Rules(tenant.FromContext(r.Context()))
}

// rules answers /api/v1/rules as Prometheus does: the groups of the
// request's tenant, filtered by type, match[] (on the rules' labels),
// rule_name[], rule_group[] and file[], alerts left out with
// exclude_alerts, paged with group_limit and group_next_token.
func (a *API) rules(r *http.Request) (answer, error) {
	sets, aerr := a.matchers(r, false)
	if aerr != nil {
		return answer{}, aerr
	}
	q := r.URL.Query()
	if err := checkRulesParams(q); err != nil {
		return answer{}, err
	}
	res := RulesAnswer(a.rulesOf(r), q, sets)
	if res == nil {
		return answer{}, invalidParam("group_next_token", "invalid group_next_token '%v'. were rule groups changed?", q.Get("group_next_token"))
	}
	return answer{data: func(s *jsoniter.Stream) { s.WriteVal(res) }}, nil
}

// RulesAnswer is the data of a rules answer over src (nil: no rules)
// for the request's query (its parameters already checked with
// CheckRulesParams) and match[] sets; nil when group_next_token names
// no group. lokiapi's Prometheus-shaped ruler endpoints answer with it.
func RulesAnswer(src RulesSource, form url.Values, sets [][]*labels.Matcher) any {
	set := func(vs []string) map[string]bool {
		m := make(map[string]bool, len(vs))
		for _, v := range vs {
			m[v] = true
		}
		return m
	}
	names, groups, files := set(form["rule_name[]"]), set(form["rule_group[]"]), set(form["file[]"])
	typ := strings.ToLower(form.Get("type"))
	wantAlerts, wantRecords := typ == "" || typ == "alert", typ == "" || typ == "record"
	exclude, _ := strconv.ParseBool(strings.ToLower(form.Get("exclude_alerts")))
	limit, _ := strconv.ParseInt(form.Get("group_limit"), 10, 32)
	token := form.Get("group_next_token")
	res := &ruleDiscovery{RuleGroups: []*ruleGroup{}}
	if src == nil {
		if token != "" {
			return nil
		}
		return res
	}
	found := false
	for _, g := range src.RuleGroups() {
		if limit > 0 && token != "" && !found {
			if token != groupToken(g.File(), g.Name()) {
				continue
			}
			found = true
		}
		if (len(groups) > 0 && !groups[g.Name()]) || (len(files) > 0 && !files[g.File()]) {
			continue
		}
		rg := &ruleGroup{Name: g.Name(), File: g.File(), Interval: g.Interval().Seconds(), Limit: g.Limit(),
			Rules: []any{}, EvaluationTime: g.GetEvaluationTime().Seconds(), LastEvaluation: g.GetLastEvaluation()}
		for _, rr := range g.Rules(sets...) {
			if len(names) > 0 && !names[rr.Name()] {
				continue
			}
			lastError := ""
			if err := rr.LastError(); err != nil {
				lastError = err.Error()
			}
			switch rule := rr.(type) {
			case *rules.AlertingRule:
				if !wantAlerts {
					continue
				}
				var alerts []*alert
				if !exclude {
					alerts = apiAlerts(rule.ActiveAlerts())
				}
				rg.Rules = append(rg.Rules, alertingRule{State: rule.State().String(), Name: rule.Name(),
					Query: rule.Query().String(), Duration: rule.HoldDuration().Seconds(),
					KeepFiringFor: rule.KeepFiringFor().Seconds(), Labels: rule.Labels(), Annotations: rule.Annotations(),
					Alerts: alerts, Health: rule.Health(), LastError: lastError,
					EvaluationTime: rule.GetEvaluationDuration().Seconds(), LastEvaluation: rule.GetEvaluationTimestamp(),
					Type: "alerting"})
			case *rules.RecordingRule:
				if !wantRecords {
					continue
				}
				rg.Rules = append(rg.Rules, recordingRule{Name: rule.Name(), Query: rule.Query().String(),
					Labels: rule.Labels(), Health: rule.Health(), LastError: lastError,
					EvaluationTime: rule.GetEvaluationDuration().Seconds(), LastEvaluation: rule.GetEvaluationTimestamp(),
					Type: "recording"})
			}
		}
		if len(rg.Rules) == 0 {
			continue
		}
		if limit > 0 && len(res.RuleGroups) == int(limit) {
			res.GroupNextToken = groupToken(g.File(), g.Name())
			break
		}
		res.RuleGroups = append(res.RuleGroups, rg)
	}
	if limit > 0 && token != "" && !found {
		return nil
	}
	return res
}

// groupToken names a group in group_next_token, as Prometheus does.
func groupToken(file, group string) string {
	h := sha256.Sum256([]byte(file + ";" + group))
	return hex.EncodeToString(h[:])
}

// apiAlerts are alerts as the API shows them.
func apiAlerts(as []*rules.Alert) []*alert {
	out := make([]*alert, len(as))
	for i, a := range as {
		out[i] = &alert{Labels: a.Labels, Annotations: a.Annotations, State: a.State.String(),
			ActiveAt: &a.ActiveAt, Value: strconv.FormatFloat(a.Value, 'e', -1, 64)}
		if !a.KeepFiringSince.IsZero() {
			out[i].KeepFiringSince = &a.KeepFiringSince
		}
	}
	return out
}

// AlertsAnswer is the data of an alerts answer over src (nil: none):
// every active alert of its alerting rules.
func AlertsAnswer(src RulesSource) any {
	alerts := []*alert{}
	if src != nil {
		for _, r := range src.AlertingRules() {
			alerts = append(alerts, apiAlerts(r.ActiveAlerts())...)
		}
	}
	return struct {
		Alerts []*alert `json:"alerts"`
	}{alerts}
}

// alerts answers /api/v1/alerts: the active alerts of the tenant's rules.
func (a *API) alerts(r *http.Request) (answer, error) {
	res := AlertsAnswer(a.rulesOf(r))
	return answer{data: func(s *jsoniter.Stream) { s.WriteVal(res) }}, nil
}

// alertmanagers answers /api/v1/alertmanagers.
func (a *API) alertmanagers(*http.Request) (answer, error) {
	res := struct {
		Active  []*alertmanagerTarget `json:"activeAlertmanagers"`
		Dropped []*alertmanagerTarget `json:"droppedAlertmanagers"`
	}{[]*alertmanagerTarget{}, []*alertmanagerTarget{}}
	if am := a.cfg.Alertmanagers; am != nil {
		for _, u := range am.Alertmanagers() {
			res.Active = append(res.Active, &alertmanagerTarget{u.String()})
		}
		for _, u := range am.DroppedAlertmanagers() {
			res.Dropped = append(res.Dropped, &alertmanagerTarget{u.String()})
		}
	}
	return answer{data: func(s *jsoniter.Stream) { s.WriteVal(res) }}, nil
}

// CheckRulesQuery checks a rules request's parameters as Prometheus does
// and returns its match[] selectors, for another API that lists rules in
// Prometheus' shape (lokiapi's ruler endpoints); its errors are
// Prometheus' messages.
func CheckRulesQuery(q url.Values) ([][]*labels.Matcher, error) {
	var sets [][]*labels.Matcher
	if raw := q["match[]"]; len(raw) > 0 {
		a := &API{parser: parser.NewParser(parser.Options{})}
		s, aerr := a.parseMatchers(raw, false)
		if aerr != nil {
			return nil, aerr
		}
		sets = s
	}
	if err := checkRulesParams(q); err != nil {
		return nil, err
	}
	return sets, nil
}

// checkRulesParams refuses the rules parameters Prometheus refuses, with
// its messages.
func checkRulesParams(q url.Values) *apiError {
	switch typ := strings.ToLower(q.Get("type")); typ {
	case "", "alert", "record":
	default:
		return invalidParam("type", "not supported value %q", typ)
	}
	if v := strings.ToLower(q.Get("exclude_alerts")); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			return invalidParam("exclude_alerts", "error converting exclude_alerts: %v", err)
		}
	}
	limit, token := q.Get("group_limit"), q.Get("group_next_token")
	if token != "" && limit == "" {
		return invalidParam("group_next_token", "group_limit needs to be present in order to paginate over the groups")
	}
	if limit == "" {
		return nil
	}
	n, err := strconv.ParseInt(limit, 10, 32)
	if err != nil {
		return invalidParam("group_limit", "group_limit needs to be a valid number: %v", err)
	}
	if n <= 0 {
		return invalidParam("group_limit", "group_limit needs to be greater than 0")
	}
	return nil
}
