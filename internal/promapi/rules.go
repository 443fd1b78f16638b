package promapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// rules answers /api/v1/rules: no rule groups. The parameters are checked
// as Prometheus checks them (match[], type, exclude_alerts, group_limit,
// group_next_token, which can name no group); the name filters (rule_name[],
// rule_group[], file[]) select from nothing.
func (a *API) rules(r *http.Request) (answer, error) {
	if _, err := a.matchers(r, false); err != nil {
		return answer{}, err
	}
	if err := checkRulesParams(r.URL.Query()); err != nil {
		return answer{}, err
	}
	return answer{data: emptyListIn("groups")}, nil
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
	if token != "" { // there is no group, so no token names one
		return invalidParam("group_next_token", "invalid group_next_token '%v'. were rule groups changed?", token)
	}
	return nil
}
