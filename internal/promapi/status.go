package promapi

import (
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strconv"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/index"
)

// PrometheusVersion is the version buildinfo reports: that of the
// Prometheus PromQL engine built in (module v0.316.0 is Prometheus
// 3.16.0). Clients such as Grafana choose features by it.
const PrometheusVersion = "3.16.0"

// buildInfo answers /api/v1/status/buildinfo: Prometheus' fields, with
// wirehouse's version and Prometheus' beside it when Config.Version is
// set (see the package documentation).
func (a *API) buildInfo(*http.Request) (answer, error) {
	fields := [][2]string{
		{"version", PrometheusVersion},
		{"revision", a.cfg.Revision},
		{"branch", ""},
		{"buildUser", "wirehouse"},
		{"buildDate", ""},
		{"goVersion", runtime.Version()},
	}
	if a.cfg.Version != "" {
		fields[0][1] = a.cfg.Version
		fields = append(fields, [2]string{"application", "wirehouse"}, [2]string{"prometheusVersion", PrometheusVersion})
	}
	return answer{data: func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		for i, kv := range fields {
			if i > 0 {
				s.WriteMore()
			}
			s.WriteObjectField(kv[0])
			s.WriteString(kv[1])
		}
		s.WriteObjectEnd()
	}}, nil
}

// tsdbStatus answers /api/v1/status/tsdb as Prometheus does: head
// statistics and the top limit (default 10, at most 10,000) metric names by
// series, label names by value count and by value bytes, and label pairs by
// series.
func (a *API) tsdbStatus(r *http.Request) (answer, error) {
	const maxLimit = 10000
	limit := 10
	if v := r.FormValue("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return answer{}, badData("limit must be a positive number")
		}
		if n > maxLimit {
			return answer{}, badData("limit must not exceed %d", maxLimit)
		}
		limit = n
	}
	st, chunks, err := a.cfg.Head.HeadStats(r.Context(), labels.MetricName, limit)
	if err != nil {
		return answer{}, queryError(err)
	}
	if chunks < 0 {
		if chunks, err = a.headChunks(); err != nil {
			return answer{}, &apiError{typ: errInternal, err: fmt.Errorf("gather runtime status: %w", err)}
		}
	}
	ps := st.IndexPostingStats
	return answer{data: func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		s.WriteObjectField("headStats")
		s.WriteObjectStart()
		s.WriteObjectField("numSeries")
		s.WriteUint64(st.NumSeries)
		s.WriteMore()
		s.WriteObjectField("numLabelPairs")
		s.WriteInt(ps.NumLabelPairs)
		s.WriteMore()
		s.WriteObjectField("chunkCount")
		s.WriteInt64(chunks)
		s.WriteMore()
		s.WriteObjectField("minTime")
		s.WriteInt64(st.MinTime)
		s.WriteMore()
		s.WriteObjectField("maxTime")
		s.WriteInt64(st.MaxTime)
		s.WriteObjectEnd()
		for _, l := range []struct {
			name  string
			stats []index.Stat
		}{
			{"seriesCountByMetricName", ps.CardinalityMetricsStats},
			{"labelValueCountByLabelName", ps.CardinalityLabelStats},
			{"memoryInBytesByLabelName", ps.LabelValueStats},
			{"seriesCountByLabelValuePair", ps.LabelValuePairsStats},
		} {
			s.WriteMore()
			s.WriteObjectField(l.name)
			writeArray(s, l.stats, func(st index.Stat) {
				s.WriteObjectStart()
				s.WriteObjectField("name")
				s.WriteString(st.Name)
				s.WriteMore()
				s.WriteObjectField("value")
				s.WriteUint64(st.Count)
				s.WriteObjectEnd()
			})
		}
		s.WriteObjectEnd()
	}}, nil
}

// headChunks reads the prometheus_tsdb_head_chunks gauge from the
// gatherer.
func (a *API) headChunks() (int64, error) {
	mfs, err := a.cfg.Gatherer.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() == "prometheus_tsdb_head_chunks" && len(mf.GetMetric()) > 0 && mf.GetMetric()[0].GetGauge() != nil {
			return int64(mf.GetMetric()[0].GetGauge().GetValue()), nil
		}
	}
	return math.MinInt64, nil // Prometheus' int64(NaN) when the gauge is missing
}
