package promapi

import (
	"net/http"
	"strconv"

	jsoniter "github.com/json-iterator/go"
)

// targetMetadata answers /api/v1/targets/metadata: wirehouse scrapes no
// targets, so an empty list, after checking the parameters as Prometheus
// checks them (limit, match_target; metric selects from nothing).
func (a *API) targetMetadata(w http.ResponseWriter, r *http.Request) {
	if v := r.FormValue("limit"); v != "" {
		if _, err := strconv.Atoi(v); err != nil {
			a.fail(w, badData("limit must be a number"))
			return
		}
	}
	if v := r.FormValue("match_target"); v != "" {
		if _, err := a.parser.ParseMetricSelector(v); err != nil {
			a.fail(w, invalidParam("match_target", "%v", err))
			return
		}
	}
	a.respond(w, nil, func(s *jsoniter.Stream) { s.WriteEmptyArray() })
}
