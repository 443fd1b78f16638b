package promapi

import (
	"net/http"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/jsonutil"
)

// queryExemplars answers /api/v1/query_exemplars as Prometheus does: the
// exemplars between start and end (default: all time) of the series the
// selectors of the PromQL expression query select, grouped by series.
func (a *API) queryExemplars(r *http.Request) (answer, error) {
	mint, maxt, e := window(r)
	if e != nil {
		return answer{}, e
	}
	if maxt < mint {
		return answer{}, badData("end timestamp must not be before start timestamp")
	}
	expr, err := a.parser.ParseExpr(r.FormValue("query"))
	if err != nil {
		return answer{}, badData("%v", err)
	}
	selectors := parser.ExtractSelectors(expr)
	if len(selectors) == 0 {
		return answer{}, nil // as Prometheus: no data, so 204 and no body
	}
	eq, err := a.cfg.Exemplars.ExemplarQuerier(r.Context())
	if err != nil {
		return answer{}, queryError(err)
	}
	res, err := eq.Select(mint, maxt, selectors...)
	if err != nil {
		return answer{}, queryError(err)
	}
	return answer{data: func(s *jsoniter.Stream) {
		writeArray(s, res, func(r exemplar.QueryResult) {
			s.WriteObjectStart()
			s.WriteObjectField("seriesLabels")
			writeLabels(s, r.SeriesLabels)
			s.WriteMore()
			s.WriteObjectField("exemplars")
			writeArray(s, r.Exemplars, func(ex exemplar.Exemplar) {
				s.WriteObjectStart()
				s.WriteObjectField("labels")
				writeLabels(s, ex.Labels)
				s.WriteMore()
				s.WriteObjectField("value")
				jsonutil.MarshalFloat(ex.Value, s)
				s.WriteMore()
				s.WriteObjectField("timestamp")
				jsonutil.MarshalTimestamp(ex.Ts, s)
				s.WriteObjectEnd()
			})
			s.WriteObjectEnd()
		})
	}}, nil
}
