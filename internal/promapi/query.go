package promapi

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/jsonutil"
	"github.com/prometheus/prometheus/util/stats"

	"github.com/wirehouse/wirehouse/internal/readapi"
)

// maxPoints is the most points a range query may return per series, as in
// Prometheus.
const maxPoints = 11000

// query answers /api/v1/query. As in Prometheus, the parameters are read
// in this order, so that of several bad ones the same is named: limit,
// time, then (in run) timeout, lookback_delta and query.
func (a *API) query(r *http.Request) (answer, error) {
	limit, aerr := parseLimit(r)
	if aerr != nil {
		return answer{}, aerr
	}
	ts, err := parseTime(r, "time", a.cfg.now())
	if err != nil {
		return answer{}, invalidParam("time", "%v", err)
	}
	if aerr := checkEvalTime("time", ts); aerr != nil {
		return answer{}, aerr
	}
	return a.run(r, limit, func(ctx context.Context, opts promql.QueryOpts) (promql.Query, error) {
		return a.engine.NewInstantQuery(ctx, a.q, opts, r.FormValue("query"), ts)
	})
}

// run reads the timeout, lookback_delta and stats parameters, makes the
// query with newQuery (an error there is bad data: the query did not
// parse), runs it and returns its result, cut to limit series if not 0.
func (a *API) run(r *http.Request, limit int, newQuery func(context.Context, promql.QueryOpts) (promql.Query, error)) (answer, error) {
	ctx, cancel, aerr := withTimeout(r)
	if aerr != nil {
		return answer{}, aerr
	}
	defer cancel()
	var lookback time.Duration
	if v := r.FormValue("lookback_delta"); v != "" {
		d, err := parseDuration(v)
		if err != nil {
			return answer{}, badData("error parsing lookback delta duration: %v", err)
		}
		lookback = d
	}
	statsParam := r.FormValue("stats")
	opts := promql.NewPrometheusQueryOpts(statsParam == "all", lookback, nil)
	qry, err := newQuery(ctx, opts)
	if err != nil {
		return answer{}, invalidParam("query", "%v", err)
	}
	return a.exec(ctx, qry, limit, statsParam)
}

// queryRange answers /api/v1/query_range. As in Prometheus, the parameters
// are read in this order: limit, start, end, step, then (in run) timeout,
// lookback_delta and query.
func (a *API) queryRange(r *http.Request) (answer, error) {
	limit, aerr := parseLimit(r)
	if aerr != nil {
		return answer{}, aerr
	}
	start, err := requiredTime(r, "start")
	if err != nil {
		return answer{}, invalidParam("start", "%v", err)
	}
	end, err := requiredTime(r, "end")
	if err != nil {
		return answer{}, invalidParam("end", "%v", err)
	}
	aerr = checkEvalTime("start", start)
	if aerr == nil {
		aerr = checkEvalTime("end", end)
	}
	if aerr != nil {
		return answer{}, aerr
	}
	if end.Before(start) {
		return answer{}, invalidParam("end", "end timestamp must not be before start time")
	}
	if err := readapi.CheckRange(r.Context(), start, end); err != nil {
		return answer{}, err
	}
	step, err := parseDuration(r.FormValue("step"))
	if err != nil {
		return answer{}, invalidParam("step", "%v", err)
	}
	if step <= 0 {
		return answer{}, invalidParam("step", "zero or negative query resolution step widths are not accepted. Try a positive integer")
	}
	// In seconds, as a float: end.Sub(start) saturates past 292 years.
	span := float64(end.Unix()-start.Unix()) + float64(end.Nanosecond()-start.Nanosecond())/1e9
	if math.Floor(span/step.Seconds()) > maxPoints {
		return answer{}, badData("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)")
	}
	return a.run(r, limit, func(ctx context.Context, opts promql.QueryOpts) (promql.Query, error) {
		return a.engine.NewRangeQuery(ctx, a.q, opts, r.FormValue("query"), start, end, step)
	})
}

// exec runs qry and returns its result, cut to limit series if not 0, with
// the query's statistics when statsParam is not empty (as Prometheus: any
// value; other than "true" or "all" it also warns). The answer closes qry
// once written (the result is the query's); on an error exec closes it.
func (a *API) exec(ctx context.Context, qry promql.Query, limit int, statsParam string) (ans answer, _ error) {
	defer releaseUnlessDone(&ans, qry.Close)
	res := qry.Exec(ctx)
	if res.Err != nil {
		return answer{}, queryError(res.Err)
	}
	warnings := res.Warnings
	switch v := res.Value.(type) {
	case promql.Vector:
		if limit > 0 && len(v) > limit {
			res.Value = v[:limit]
			warnings = warnings.Add(fmt.Errorf("results truncated due to limit"))
		}
	case promql.Matrix:
		if limit > 0 && len(v) > limit {
			res.Value = v[:limit]
			warnings = warnings.Add(fmt.Errorf("results truncated due to limit"))
		}
	}
	if statsParam != "" && statsParam != "true" && statsParam != "all" {
		warnings = warnings.Add(fmt.Errorf("value %q for parameter \"stats\" is deprecated and will be rejected in the next major release, use \"true\" or \"all\"", statsParam))
	}
	return answer{query: qry.String(), warnings: warnings, done: qry.Close, data: func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		s.WriteObjectField("resultType")
		s.WriteString(string(res.Value.Type()))
		s.WriteMore()
		s.WriteObjectField("result")
		writeValue(s, res.Value)
		if statsParam != "" {
			s.WriteMore()
			s.WriteObjectField("stats")
			s.WriteVal(stats.NewQueryStats(qry.Stats()))
		}
		s.WriteObjectEnd()
	}}, nil
}

// writeValue writes a PromQL value as the API encodes it.
func writeValue(s *jsoniter.Stream, v parser.Value) {
	switch v := v.(type) {
	case promql.Scalar:
		// As Prometheus, through promql.Scalar's MarshalJSON: unlike a
		// sample's, the value in plain decimals, never an exponent.
		s.WriteArrayStart()
		writeValueTime(s, v.T)
		s.WriteMore()
		s.WriteString(strconv.FormatFloat(v.V, 'f', -1, 64))
		s.WriteArrayEnd()
	case promql.String:
		s.WriteArrayStart()
		writeValueTime(s, v.T)
		s.WriteMore()
		s.WriteString(v.V)
		s.WriteArrayEnd()
	case promql.Vector:
		writeArray(s, v, func(smp promql.Sample) {
			s.WriteObjectStart()
			s.WriteObjectField("metric")
			writeLabels(s, smp.Metric)
			s.WriteMore()
			if smp.H != nil {
				s.WriteObjectField("histogram")
				writeHistPoint(s, promql.HPoint{T: smp.T, H: smp.H})
			} else {
				s.WriteObjectField("value")
				writePoint(s, smp.T, smp.F)
			}
			s.WriteObjectEnd()
		})
	case promql.Matrix:
		writeArray(s, v, func(series promql.Series) {
			s.WriteObjectStart()
			s.WriteObjectField("metric")
			writeLabels(s, series.Metric)
			if len(series.Floats) > 0 {
				s.WriteMore()
				s.WriteObjectField("values")
				writeArray(s, series.Floats, func(p promql.FPoint) {
					writePoint(s, p.T, p.F)
				})
			}
			if len(series.Histograms) > 0 {
				s.WriteMore()
				s.WriteObjectField("histograms")
				writeArray(s, series.Histograms, func(p promql.HPoint) {
					writeHistPoint(s, p)
				})
			}
			s.WriteObjectEnd()
		})
	default:
		s.WriteNil()
	}
}

// writeValueTime writes the time of a scalar or string result as
// Prometheus does (promql.Scalar's and promql.String's MarshalJSON encode
// float64(t)/1000 with encoding/json): in shortest form, 1795428600.5
// where a sample's time, with jsonutil.MarshalTimestamp, is
// 1795428600.500.
func writeValueTime(s *jsoniter.Stream, t int64) {
	s.WriteRaw(strconv.FormatFloat(float64(t)/1000, 'f', -1, 64))
}

func writePoint(s *jsoniter.Stream, t int64, v float64) {
	s.WriteArrayStart()
	jsonutil.MarshalTimestamp(t, s)
	s.WriteMore()
	jsonutil.MarshalFloat(v, s)
	s.WriteArrayEnd()
}

func writeHistPoint(s *jsoniter.Stream, p promql.HPoint) {
	s.WriteArrayStart()
	jsonutil.MarshalTimestamp(p.T, s)
	s.WriteMore()
	jsonutil.MarshalHistogram(p.H, s)
	s.WriteArrayEnd()
}

// formatQuery answers /api/v1/format_query as Prometheus does (Grafana's
// query editor formats with it): the query pretty-printed by the parser.
func (a *API) formatQuery(r *http.Request) (answer, error) {
	expr, err := a.parser.ParseExpr(r.FormValue("query"))
	if err != nil {
		return answer{}, invalidParam("query", "%v", err)
	}
	pretty := expr.Pretty(0)
	return answer{data: func(s *jsoniter.Stream) { s.WriteString(pretty) }}, nil
}
