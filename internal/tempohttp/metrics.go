package tempohttp

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/traceql"
	"github.com/wirehouse/wirehouse/internal/traceql/eval"
)

// Metrics queries: the most traces one that needs whole traces reads by
// default (past it, 413: Config.MaxMetricsTraces), the most steps a range
// has.
const (
	maxMetricsTraces = 20000
	maxSteps         = 11000
	// maxMetricsSeries bounds the series a metrics query makes (past it,
	// 413); the memory they hold is charged to the query's ticket too.
	maxMetricsSeries = 10000
)

// metricsParams reads a metrics request: q, start and end (RFC 3339,
// Unix seconds or nanoseconds; the last hour by default) and, for a
// range query, step (a duration or seconds; about a hundredth of the
// range by default, at least a second).
func metricsParams(r *http.Request, instant bool, now time.Time) (*traceql.Query, eval.Range, error) {
	var rng eval.Range
	q := r.FormValue("q")
	if q == "" {
		return nil, rng, badRequest(fmt.Errorf("q is required: a TraceQL metrics query such as { } | rate()"))
	}
	parsed, err := traceql.Parse(q)
	if err != nil {
		return nil, rng, err
	}
	if !parsed.IsMetrics() {
		return nil, rng, badRequest(fmt.Errorf("q must end in a metrics function such as rate(): %s", q))
	}
	rng.End, rng.Start = now, time.Time{}
	for name, dst := range map[string]*time.Time{"start": &rng.Start, "end": &rng.End} {
		if s := r.FormValue(name); s != "" {
			t, err := readapi.ParseLokiTime(s)
			if err != nil {
				return nil, rng, badRequest(fmt.Errorf("invalid %s %q", name, s))
			}
			*dst = t
		}
	}
	if rng.Start.IsZero() {
		rng.Start = rng.End.Add(-defaultWindow)
	}
	if !rng.Start.Before(rng.End) {
		return nil, rng, badRequest(fmt.Errorf("invalid range: start %s not before end %s", rng.Start, rng.End))
	}
	if err := readapi.CheckRange(r.Context(), rng.Start, rng.End); err != nil {
		return nil, rng, err
	}
	span := rng.End.Sub(rng.Start)
	switch s := r.FormValue("step"); {
	case instant:
		rng.Step = span
	case s == "":
		rng.Step = max(time.Second, (span / 100).Truncate(time.Second))
	default:
		if rng.Step, err = time.ParseDuration(s); err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil {
				return nil, rng, badRequest(fmt.Errorf("invalid step %q: want a duration such as 30s", s))
			}
			rng.Step = time.Duration(f * float64(time.Second))
		}
		if rng.Step <= 0 {
			return nil, rng, badRequest(fmt.Errorf("invalid step %q: must be positive", s))
		}
	}
	if !instant {
		// As Tempo does: the range widened to whole steps from the Unix
		// epoch, so that a refreshed "last hour" puts spans in the same
		// steps (and a grid of whole minutes can add span counts up).
		step := int64(rng.Step)
		down, up := floorDiv(rng.Start.UnixNano(), step), -floorDiv(-rng.End.UnixNano(), step)
		if up > math.MaxInt64/step || down < math.MinInt64/step {
			return nil, rng, badRequest(fmt.Errorf("invalid step %q: the range in whole steps runs past the years 1677-2262", r.FormValue("step")))
		}
		rng.Start = time.Unix(0, down*step)
		rng.End = time.Unix(0, up*step)
	}
	if rng.Steps() > maxSteps {
		return nil, rng, badRequest(fmt.Errorf("%d steps in the range, more than %d: use a longer step", rng.Steps(), maxSteps))
	}
	return parsed, rng, nil
}

// The JSON of Tempo's metrics answers.
type (
	seriesJSON struct {
		Labels     []attrJSON   `json:"labels"`
		Samples    []sampleJSON `json:"samples,omitempty"`
		Value      *float64     `json:"value,omitempty"` // instant queries
		PromLabels string       `json:"promLabels"`
	}
	sampleJSON struct {
		TimestampMs string  `json:"timestampMs"`
		Value       float64 `json:"value"`
	}
)

// metricsQuery answers /api/metrics/query_range (instant false: samples
// by step) and /api/metrics/query (one value a series over the range), in
// Tempo's JSON.
func (h *Handler) metricsQuery(r *http.Request, instant bool) (body, error) {
	parsed, rng, err := metricsParams(r, instant, time.Now())
	if err != nil {
		return body{}, err
	}
	src := &lakeSource{r: h.cfg.Reader, found: map[[16]byte]lakeread.FoundTrace{}}
	series, err := eval.Metrics(r.Context(), src, tenant.FromContext(r.Context()), parsed, rng, eval.MetricsLimits{MaxTraces: cmp.Or(h.cfg.MaxMetricsTraces, maxMetricsTraces),
		MaxSeries: maxMetricsSeries, Charge: querybudget.FromContext(r.Context()).Charge})
	if err != nil {
		var ue *eval.UnsupportedError
		if errors.As(err, &ue) {
			return body{}, badRequest(err)
		}
		return body{}, err
	}
	out := []seriesJSON{}
	for _, s := range series {
		sj := seriesJSON{Labels: []attrJSON{}}
		var prom []string
		for _, l := range s.Labels {
			name := strings.TrimPrefix(l.Name, ".")
			sj.Labels = append(sj.Labels, attrJSON{Key: name, Value: anyValue(l.Value)})
			v := l.Value.S
			if l.Value.Type != traceql.TypeString {
				v = l.Value.String()
			}
			prom = append(prom, name+"="+strconv.Quote(v))
		}
		sj.PromLabels = "{" + strings.Join(prom, ", ") + "}"
		if instant {
			v := 0.0
			for _, p := range s.Samples {
				v += p.Value
			}
			sj.Value = &v
		} else {
			for _, p := range s.Samples {
				sj.Samples = append(sj.Samples, sampleJSON{TimestampMs: strconv.FormatInt(p.TimestampMs, 10), Value: p.Value})
			}
		}
		out = append(out, sj)
	}
	return jsonBody(map[string]any{"series": out, "metrics": map[string]any{"completedJobs": 1, "totalJobs": 1}})
}

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
