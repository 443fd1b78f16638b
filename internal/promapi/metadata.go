package promapi

import (
	"maps"
	"net/http"
	"slices"
	"strconv"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/metadata"
)

// metricMetadata answers /api/v1/metadata as Prometheus does: an object of
// metric family names (here in name order), each with its list of
// {type, unit, help}; without a MetadataSource, an empty object.
func (a *API) metricMetadata(r *http.Request) (answer, error) {
	limit, limitPerMetric := -1, -1
	for _, p := range []struct {
		name string
		dst  *int
	}{{"limit", &limit}, {"limit_per_metric", &limitPerMetric}} {
		if v := r.FormValue(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return answer{}, badData("%s must be a number", p.name)
			}
			*p.dst = n
		}
	}
	if a.cfg.Metadata == nil {
		return answer{data: func(s *jsoniter.Stream) { s.WriteEmptyObject() }}, nil
	}
	res := a.cfg.Metadata.Metadata(r.Context(), r.FormValue("metric"), limit, limitPerMetric)
	names := slices.Sorted(maps.Keys(res))
	return answer{data: func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		for i, name := range names {
			if i > 0 {
				s.WriteMore()
			}
			s.WriteObjectField(name)
			writeArray(s, res[name], func(m metadata.Metadata) {
				s.WriteObjectStart()
				s.WriteObjectField("type")
				s.WriteString(string(m.Type))
				s.WriteMore()
				s.WriteObjectField("unit")
				s.WriteString(m.Unit)
				s.WriteMore()
				s.WriteObjectField("help")
				s.WriteString(m.Help)
				s.WriteObjectEnd()
			})
		}
		s.WriteObjectEnd()
	}}, nil
}
