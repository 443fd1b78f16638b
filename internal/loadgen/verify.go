package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Verification reads back what a metrics run got acknowledged through the
// server's Prometheus HTTP API (GET /api/v1/query).
//
// Remote write is checked exactly: for every metric name, one instant query
// count_over_time({__name__="name"}[range]) at the last acknowledged
// timestamp, with range covering the first acknowledged one, gives the
// samples of every series of that name in the run's time range; each series
// sent must be there with at least as many samples as were acknowledged for
// it. More samples are not an error (a request that failed may still have
// been partly written).
//
// OTLP is checked per metric name ("per-name"): the acknowledged requests
// are translated again, independently of the store, by Prometheus' OTLP
// rules (expectation) into the series and samples each name must hold,
// deduplicated as the TSDB does; for every name, count_over_time over the
// run's time range must find at least that many series and samples.
// Against a server that names metrics otherwise, or when points were
// refused, it falls back to totals ("at-least"): the gauge and sum points,
// against the series and samples of every name in the time range.

// VerifyResult is the outcome of Verify.
type VerifyResult struct {
	Rule            string // "exact" (remote write), "per-name" (OTLP) or "at-least" (OTLP totals)
	SeriesExpected  int64
	SeriesFound     int64
	SamplesExpected int64
	SamplesFound    int64
	MissingSeries   int64
	MissingSamples  int64
	// Missing describes up to 10 series that are missing or short.
	Missing []string
}

// OK reports whether nothing was missing.
func (v VerifyResult) OK() bool { return v.MissingSeries == 0 && v.MissingSamples == 0 }

// Verify checks that the samples res got acknowledged for the metrics run
// cfg are queryable at queryEndpoint (a base URL such as
// http://localhost:9090). A missing series or sample is reported in the
// result; the error is for failed queries.
func Verify(ctx context.Context, queryEndpoint string, cfg Config, res Result) (VerifyResult, error) {
	if cfg.Signal != otlpwire.SignalMetrics {
		return VerifyResult{}, errors.New("--verify needs --signal metrics")
	}
	if !strings.Contains(queryEndpoint, "://") {
		queryEndpoint = "http://" + queryEndpoint
	}
	q := &querier{base: strings.TrimRight(queryEndpoint, "/"), client: &http.Client{Timeout: 30 * time.Second}}
	if cfg.TLS != nil {
		q.client.Transport = &http.Transport{TLSClientConfig: cfg.TLS}
	}
	if cfg.AdminBearerToken != "" {
		q.authorization = "Bearer " + cfg.AdminBearerToken
	}
	if res.Written != nil {
		return verifyRemoteWrite(ctx, q, res.Written)
	}
	return verifyOTLP(ctx, q, cfg, res)
}

func verifyRemoteWrite(ctx context.Context, q *querier, w *Written) (VerifyResult, error) {
	v := VerifyResult{Rule: "exact"}
	byName := map[string][]int{}
	var names []string
	for i, s := range w.Series {
		if w.Samples[i] == 0 {
			continue
		}
		n := s.Name()
		if byName[n] == nil {
			names = append(names, n)
		}
		byName[n] = append(byName[n], i)
		v.SeriesExpected++
		v.SamplesExpected += w.Samples[i]
	}
	rng := strconv.FormatInt(w.Last-w.First+1, 10) + "ms"
	at := time.UnixMilli(w.Last)
	for _, name := range names {
		got, err := q.countOverTime(ctx, fmt.Sprintf("{__name__=%q}", name), rng, at)
		if err != nil {
			return v, err
		}
		for _, i := range byName[name] {
			s := w.Series[i]
			n, ok := got[labelKey(func(yield func(k, v string) bool) {
				for _, l := range s {
					if !yield(l.Name, l.Value) {
						return
					}
				}
			})]
			want := w.Samples[i]
			if ok {
				v.SeriesFound++
				v.SamplesFound += n
			} else {
				v.MissingSeries++
			}
			if n < want {
				v.MissingSamples += want - n
				if len(v.Missing) < 10 {
					v.Missing = append(v.Missing, fmt.Sprintf("%s{pod=%q}: %d of %d samples", name, label(s, "pod"), n, want))
				}
			}
		}
	}
	return v, nil
}

// verifyOTLP checks per metric name when it can: when the server holds
// any of the names Prometheus' OTLP rules give (wirehouse and Prometheus
// do; servers that name metrics otherwise hold none) and no point was
// refused. Otherwise it falls back to totals over gauge and sum points.
func verifyOTLP(ctx context.Context, q *querier, cfg Config, res Result) (VerifyResult, error) {
	x := newExpectation()
	for i, b := range generate(cfg, res.Start) {
		if i >= len(res.AckedByVariant) || res.AckedByVariant[i] == 0 {
			continue
		}
		if err := x.add(otlpwire.MetricsRequest(b)); err != nil {
			return VerifyResult{}, fmt.Errorf("verify: read generated request %d: %w", i, err)
		}
	}
	if x.last < 0 {
		return VerifyResult{Rule: "per-name"}, nil
	}
	names, err := q.names(ctx, time.UnixMilli(x.first), time.UnixMilli(x.last))
	if err != nil {
		return VerifyResult{}, err
	}
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	// A server that names metrics Prometheus' way holds at least one of
	// the names; one that holds none names them otherwise.
	known := false
	for name := range x.families {
		known = known || have[name]
	}
	if !known || res.Rejected > 0 {
		return verifyOTLPTotals(ctx, q, cfg, res.Start, res.AckedByVariant)
	}
	v := VerifyResult{Rule: "per-name"}
	rng := strconv.FormatInt(x.last-x.first+1, 10) + "ms"
	sorted := slices.Sorted(maps.Keys(x.families))
	for _, name := range sorted {
		f := x.families[name]
		got, err := q.countOverTime(ctx, fmt.Sprintf("{__name__=%q}", name), rng, time.UnixMilli(x.last))
		if err != nil {
			return v, err
		}
		var samples int64
		for _, n := range got {
			samples += n
		}
		es, ep := int64(len(f.series)), int64(len(f.samples))
		v.SeriesExpected += es
		v.SamplesExpected += ep
		v.SeriesFound += int64(len(got))
		v.SamplesFound += samples
		ms, mp := max(0, es-int64(len(got))), max(0, ep-samples)
		v.MissingSeries += ms
		v.MissingSamples += mp
		if (ms > 0 || mp > 0) && len(v.Missing) < 10 {
			v.Missing = append(v.Missing, fmt.Sprintf("%s: %d of %d series, %d of %d samples", name, len(got), es, samples, ep))
		}
	}
	return v, nil
}

// verifyOTLPTotals checks the gauge and sum points in total.
func verifyOTLPTotals(ctx context.Context, q *querier, cfg Config, start time.Time, acked []int64) (VerifyResult, error) {
	v := VerifyResult{Rule: "at-least"}
	series := map[string]bool{}
	samples := map[string]bool{}
	first, last := int64(-1), int64(-1)
	var (
		mf otlpwire.MetricFields
		pf otlpwire.NumberDataPointFields
	)
	for i, b := range generate(cfg, start) {
		if i >= len(acked) || acked[i] == 0 {
			continue
		}
		err := walkMetrics(otlpwire.MetricsRequest(b), &mf, func(resource string) error {
			if mf.Type != otlpwire.MetricTypeGauge && mf.Type != otlpwire.MetricTypeSum {
				return nil
			}
			return mf.NumberDataPoints().Each(func(p otlpwire.NumberDataPoint) error {
				if err := p.Read(&pf); err != nil {
					return err
				}
				k, err := pointKey(mf.Name, pf.Attributes)
				if err != nil {
					return err
				}
				k = resource + k
				ts := int64(pf.Time / 1e6)
				series[k] = true
				samples[k+"\x01"+strconv.FormatInt(ts, 10)] = true
				if first < 0 || ts < first {
					first = ts
				}
				last = max(last, ts)
				return nil
			})
		})
		if err != nil {
			return v, fmt.Errorf("verify: read generated request %d: %w", i, err)
		}
	}
	v.SeriesExpected, v.SamplesExpected = int64(len(series)), int64(len(samples))
	if last < 0 {
		return v, nil
	}
	// One query per stored name: count_over_time drops __name__, so one
	// query over all names could hold equal label sets.
	names, err := q.names(ctx, time.UnixMilli(first), time.UnixMilli(last))
	if err != nil {
		return v, err
	}
	for _, name := range names {
		got, err := q.countOverTime(ctx, fmt.Sprintf("{__name__=%q}", name), strconv.FormatInt(last-first+1, 10)+"ms", time.UnixMilli(last))
		if err != nil {
			return v, err
		}
		v.SeriesFound += int64(len(got))
		for _, n := range got {
			v.SamplesFound += n
		}
	}
	v.MissingSeries = max(0, v.SeriesExpected-v.SeriesFound)
	v.MissingSamples = max(0, v.SamplesExpected-v.SamplesFound)
	if !v.OK() {
		v.Missing = append(v.Missing, fmt.Sprintf("gauge/sum points of %d OTLP series between %s and %s",
			v.SeriesExpected, time.UnixMilli(first).UTC().Format(time.RFC3339Nano), time.UnixMilli(last).UTC().Format(time.RFC3339Nano)))
	}
	return v, nil
}

// labelKey returns a key for a label set without __name__, independent of
// the order of labels (seq yields name, value pairs).
func labelKey(seq func(yield func(k, v string) bool)) string {
	var kv []string
	seq(func(k, v string) bool {
		if k != "__name__" {
			kv = append(kv, k+"\x00"+v)
		}
		return true
	})
	slices.Sort(kv)
	return strings.Join(kv, "\x00")
}

func label(s Series, name string) string {
	for _, l := range s {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}

type querier struct {
	base          string
	client        *http.Client
	authorization string
}

// names returns the metric names with samples between start and end.
func (q *querier) names(ctx context.Context, start, end time.Time) ([]string, error) {
	form := url.Values{"start": {promTime(start)}, "end": {promTime(end)}}
	var names []string
	if err := q.get(ctx, "/api/v1/label/__name__/values?"+form.Encode(), "metric names", &names); err != nil {
		return nil, err
	}
	return names, nil
}

func promTime(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', 3, 64) }

// get reads the data of an API response into data; what names the request
// in errors.
func (q *querier) get(ctx context.Context, path, what string, data any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, q.base+path, nil)
	if err != nil {
		return fmt.Errorf("--query-endpoint: %w", err)
	}
	if q.authorization != "" {
		req.Header.Set("Authorization", q.authorization)
	}
	resp, err := q.client.Do(req)
	if err != nil {
		return fmt.Errorf("verify: %s: %w", what, err)
	}
	defer resp.Body.Close()
	body := struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   any    `json:"data"`
	}{Data: data}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("verify: %s: HTTP %d: %w", what, resp.StatusCode, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("verify: %s: HTTP %d: %s", what, resp.StatusCode, body.Error)
	}
	return nil
}

// countOverTime runs count_over_time(selector[rng]) at t and returns the
// count per series, keyed by labelKey.
func (q *querier) countOverTime(ctx context.Context, selector, rng string, t time.Time) (map[string]int64, error) {
	expr := "count_over_time(" + selector + "[" + rng + "])"
	form := url.Values{"query": {expr}, "time": {promTime(t)}}
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := q.get(ctx, "/api/v1/query?"+form.Encode(), "query "+expr, &data); err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(data.Result))
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		n, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("verify: query %s: bad value %q", expr, s)
		}
		out[labelKey(func(yield func(k, v string) bool) {
			for k, v := range r.Metric {
				if !yield(k, v) {
					return
				}
			}
		})] += int64(n)
	}
	return out, nil
}

// walkMetrics reads every metric of req into mf and calls each with the
// identity of the metric's series apart from its own attributes: the
// resource's service.namespace and service.name (which become job) and
// service.instance.id (instance), and the scope's name and version
// (otel_scope_* labels).
func walkMetrics(req otlpwire.MetricsRequest, mf *otlpwire.MetricFields, each func(resource string) error) error {
	var id, ids string
	return req.Walk(otlpwire.MetricVisitor{
		ResourceMetrics: func(rm otlpwire.ResourceMetrics) error {
			res, err := rm.Resource()
			if err != nil {
				return err
			}
			attrs, err := res.Attributes()
			if err != nil {
				return err
			}
			id = ""
			for _, key := range []string{"service.namespace", "service.name", "service.instance.id"} {
				v, ok, err := attrs.Get(key)
				if err != nil {
					return err
				}
				if ok {
					id += valueText(v)
				}
				id += "\x03"
			}
			return nil
		},
		ScopeMetrics: func(sm otlpwire.ScopeMetrics) error {
			sc, err := sm.Scope()
			if err != nil {
				return err
			}
			var sf otlpwire.ScopeFields
			if err := sc.Read(&sf); err != nil {
				return err
			}
			ids = id + string(sf.Name) + "\x03" + string(sf.Version) + "\x03"
			return nil
		},
		Metric: func(m otlpwire.Metric) error {
			if err := m.Read(mf); err != nil {
				return err
			}
			return each(ids)
		},
	})
}

// pointKey is a key for a point's series: its metric name and attributes,
// independent of the attributes' order.
func pointKey(name []byte, attrs otlpwire.Attributes) (string, error) {
	var kvs []string
	for kv, err := range attrs.All() {
		if err != nil {
			return "", err
		}
		kvs = append(kvs, string(kv.Key)+"\x00"+valueText(kv.Value))
	}
	slices.Sort(kvs)
	return string(name) + "\x02" + strings.Join(kvs, "\x01"), nil
}

// valueText renders an attribute value for pointKey.
func valueText(v otlpwire.Value) string {
	switch v.Type() {
	case otlpwire.ValueString:
		return string(v.Str())
	case otlpwire.ValueBytes:
		return string(v.Bytes())
	case otlpwire.ValueInt:
		return strconv.FormatInt(v.Int(), 10)
	case otlpwire.ValueDouble:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case otlpwire.ValueBool:
		return strconv.FormatBool(v.Bool())
	}
	return fmt.Sprint("type ", v.Type())
}
