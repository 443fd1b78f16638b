package promapi

import (
	"net/http"
	"strconv"

	jsoniter "github.com/json-iterator/go"
)

// targetMetadata answers /api/v1/targets/metadata: wirehouse scrapes no
// targets, so an empty list, after checking the parameters as Prometheus
// checks them (limit, match_target; metric selects from nothing).
func (a *API) targetMetadata(r *http.Request) (answer, error) {
	if v := r.FormValue("limit"); v != "" {
		if _, err := strconv.Atoi(v); err != nil {
			return answer{}, badData("limit must be a number")
		}
	}
	if v := r.FormValue("match_target"); v != "" {
		if _, err := a.parser.ParseMetricSelector(v); err != nil {
			return answer{}, invalidParam("match_target", "%v", err)
		}
	}
	return answer{data: func(s *jsoniter.Stream) { s.WriteEmptyArray() }}, nil
}
