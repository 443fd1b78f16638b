package tracemetrics

import (
	"math"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Flush writes each tenant's series as one OTLP metrics request at now,
// and gives it to write, tenants in name order: with all, every series
// known (as the connectors write them at each flush), else those counted
// since their last write. A series' first write holds a zero point at
// its start time before its value (see the package documentation); the
// series of a tenant whose write fails are written again at the next
// Flush. write is called without the Generator's lock held; req is its
// own.
func (g *Generator) Flush(now time.Time, all bool, write func(tenant string, req []byte) error) error {
	type job struct {
		tenant string
		req    []byte
		spans  []*spanSeries
		graph  []*graphSeries
	}
	g.mu.Lock()
	var jobs []job
	for _, t := range slices.Sorted(func(yield func(string) bool) {
		for t := range g.tenants {
			if !yield(t) {
				return
			}
		}
	}) {
		j := job{tenant: t}
		j.req, j.spans, j.graph = g.encode(g.tenants[t], uint64(now.UnixNano()), all)
		if j.req != nil {
			jobs = append(jobs, j)
		}
	}
	g.mu.Unlock()
	var first error
	for _, j := range jobs {
		if err := write(j.tenant, j.req); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		g.mu.Lock()
		for _, s := range j.spans {
			s.flushed, s.dirty = true, false
			s.exemplars = s.exemplars[:copy(s.exemplars, s.exemplars[s.exWritten:])]
			s.exWritten = 0
		}
		for _, s := range j.graph {
			s.flushed, s.dirty = true, false
		}
		g.mu.Unlock()
	}
	return first
}

// encode writes ts's series (all, or those not written since they were
// counted) as an ExportMetricsServiceRequest at now (ns), or nil when
// there are none; it returns the series it holds.
func (g *Generator) encode(ts *tenantState, now uint64, all bool) (req []byte, written []*spanSeries, writtenGraph []*graphSeries) {
	spanRM := func(resource []byte, series []*spanSeries) []byte {
		var calls, dur []byte
		for _, s := range series {
			if !all && s.flushed && !s.dirty {
				continue
			}
			written = append(written, s)
			if !s.flushed {
				if s.start/1e6 < now/1e6 {
					calls = appendNumberPoint(calls, s.attrs, s.start, s.start, 0, nil)
					dur = appendHistogramPoint(dur, s.attrs, s.start, s.start, 0, 0, make([]uint64, len(s.counts)), SpanBoundsMs, nil)
				}
			}
			s.exWritten = len(s.exemplars)
			calls = appendNumberPoint(calls, s.attrs, s.start, now, s.calls, s.exemplars)
			dur = appendHistogramPoint(dur, s.attrs, s.start, now, s.calls, s.sum, s.counts, SpanBoundsMs, s.exemplars)
		}
		if calls == nil {
			return nil
		}
		metrics := appendMetric(nil, "traces.span.metrics.calls", "", sumOf(calls))
		metrics = appendMetric(metrics, "traces.span.metrics.duration", "ms", histogramOf(dur))
		return resourceMetrics(resource, "spanmetricsconnector", metrics)
	}
	for _, r := range ts.order {
		if rm := spanRM(r.resource, r.order); rm != nil {
			req = protowire.AppendBytes(protowire.AppendTag(req, 1, protowire.BytesType), rm)
		}
	}
	if ts.overflow != nil {
		if rm := spanRM(nil, []*spanSeries{ts.overflow}); rm != nil {
			req = protowire.AppendBytes(protowire.AppendTag(req, 1, protowire.BytesType), rm)
		}
	}
	var total, failed, server, client []byte
	zero := make([]uint64, len(GraphBoundsSec)+1)
	for _, s := range ts.graphOrder {
		if !all && s.flushed && !s.dirty {
			continue
		}
		writtenGraph = append(writtenGraph, s)
		if !s.flushed && g.start/1e6 < now/1e6 {
			total = appendNumberPoint(total, s.attrs, g.start, g.start, 0, nil)
			if s.failed > 0 {
				failed = appendNumberPoint(failed, s.attrs, g.start, g.start, 0, nil)
			}
			server = appendHistogramPoint(server, s.attrs, g.start, g.start, 0, 0, zero, GraphBoundsSec, nil)
			client = appendHistogramPoint(client, s.attrs, g.start, g.start, 0, 0, zero, GraphBoundsSec, nil)
		}
		total = appendNumberPoint(total, s.attrs, g.start, now, s.total, nil)
		if s.failed > 0 {
			failed = appendNumberPoint(failed, s.attrs, g.start, now, s.failed, nil)
		}
		server = appendHistogramPoint(server, s.attrs, g.start, now, s.total, s.serverSum, s.server, GraphBoundsSec, nil)
		client = appendHistogramPoint(client, s.attrs, g.start, now, s.total, s.clientSum, s.client, GraphBoundsSec, nil)
	}
	if total != nil {
		metrics := appendMetric(nil, "traces_service_graph_request_total", "", sumOf(total))
		if len(failed) > 0 {
			metrics = appendMetric(metrics, "traces_service_graph_request_failed_total", "", sumOf(failed))
		}
		metrics = appendMetric(metrics, "traces_service_graph_request_server", "s", histogramOf(server))
		metrics = appendMetric(metrics, "traces_service_graph_request_client", "s", histogramOf(client))
		req = protowire.AppendBytes(protowire.AppendTag(req, 1, protowire.BytesType), resourceMetrics(nil, "traces_service_graph", metrics))
	}
	return req, written, writtenGraph
}

// resourceMetrics is a ResourceMetrics of resource (a Resource message;
// nil for an empty one) with one scope of metrics (Metric messages, each
// with its tag).
func resourceMetrics(resource []byte, scope string, metrics []byte) []byte {
	var sm []byte
	sm = protowire.AppendTag(sm, 1, protowire.BytesType)
	sm = protowire.AppendBytes(sm, protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), scope))
	sm = append(sm, metrics...)
	var rm []byte
	rm = protowire.AppendTag(rm, 1, protowire.BytesType)
	rm = protowire.AppendBytes(rm, resource)
	rm = protowire.AppendTag(rm, 2, protowire.BytesType)
	return protowire.AppendBytes(rm, sm)
}

// appendMetric appends a Metric (ScopeMetrics field 2) named name, of
// unit, whose data field is data (a Sum or Histogram with its tag).
func appendMetric(dst []byte, name, unit string, data []byte) []byte {
	var m []byte
	m = protowire.AppendString(protowire.AppendTag(m, 1, protowire.BytesType), name)
	if unit != "" {
		m = protowire.AppendString(protowire.AppendTag(m, 3, protowire.BytesType), unit)
	}
	m = append(m, data...)
	return protowire.AppendBytes(protowire.AppendTag(dst, 2, protowire.BytesType), m)
}

// sumOf is a monotonic cumulative Sum (Metric field 7) of points.
func sumOf(points []byte) []byte {
	s := append([]byte(nil), points...)
	s = protowire.AppendVarint(protowire.AppendTag(s, 2, protowire.VarintType), 2) // AGGREGATION_TEMPORALITY_CUMULATIVE
	s = protowire.AppendVarint(protowire.AppendTag(s, 3, protowire.VarintType), 1) // is_monotonic
	return protowire.AppendBytes(protowire.AppendTag(nil, 7, protowire.BytesType), s)
}

// histogramOf is a cumulative Histogram (Metric field 9) of points.
func histogramOf(points []byte) []byte {
	h := append([]byte(nil), points...)
	h = protowire.AppendVarint(protowire.AppendTag(h, 2, protowire.VarintType), 2)
	return protowire.AppendBytes(protowire.AppendTag(nil, 9, protowire.BytesType), h)
}

// appendNumberPoint appends an integer NumberDataPoint (data_points,
// field 1).
func appendNumberPoint(dst []byte, attrs [][]byte, start, t uint64, v uint64, exemplars []exemplar) []byte {
	var p []byte
	p = protowire.AppendFixed64(protowire.AppendTag(p, 2, protowire.Fixed64Type), start)
	p = protowire.AppendFixed64(protowire.AppendTag(p, 3, protowire.Fixed64Type), t)
	p = appendExemplars(p, 5, exemplars, t)
	p = protowire.AppendFixed64(protowire.AppendTag(p, 6, protowire.Fixed64Type), v) // as_int
	for _, kv := range attrs {
		p = protowire.AppendBytes(protowire.AppendTag(p, 7, protowire.BytesType), kv)
	}
	return protowire.AppendBytes(protowire.AppendTag(dst, 1, protowire.BytesType), p)
}

// appendHistogramPoint appends a HistogramDataPoint (data_points, field
// 1) with explicit bounds.
func appendHistogramPoint(dst []byte, attrs [][]byte, start, t, count uint64, sum float64, counts []uint64, bounds []float64, exemplars []exemplar) []byte {
	var p []byte
	p = protowire.AppendFixed64(protowire.AppendTag(p, 2, protowire.Fixed64Type), start)
	p = protowire.AppendFixed64(protowire.AppendTag(p, 3, protowire.Fixed64Type), t)
	p = protowire.AppendFixed64(protowire.AppendTag(p, 4, protowire.Fixed64Type), count)
	p = protowire.AppendFixed64(protowire.AppendTag(p, 5, protowire.Fixed64Type), math.Float64bits(sum))
	var packed []byte
	for _, c := range counts {
		packed = protowire.AppendFixed64(packed, c)
	}
	p = protowire.AppendBytes(protowire.AppendTag(p, 6, protowire.BytesType), packed)
	packed = packed[:0]
	for _, b := range bounds {
		packed = protowire.AppendFixed64(packed, math.Float64bits(b))
	}
	p = protowire.AppendBytes(protowire.AppendTag(p, 7, protowire.BytesType), packed)
	p = appendExemplars(p, 8, exemplars, t)
	for _, kv := range attrs {
		p = protowire.AppendBytes(protowire.AppendTag(p, 9, protowire.BytesType), kv)
	}
	return protowire.AppendBytes(protowire.AppendTag(dst, 1, protowire.BytesType), p)
}

// appendExemplars appends es as Exemplar messages of field num (a data
// point's exemplars), timed t (ns), as the connector times them.
func appendExemplars(dst []byte, num protowire.Number, es []exemplar, t uint64) []byte {
	var m []byte
	for _, e := range es {
		m = protowire.AppendFixed64(protowire.AppendTag(m[:0], 2, protowire.Fixed64Type), t)
		m = protowire.AppendFixed64(protowire.AppendTag(m, 3, protowire.Fixed64Type), math.Float64bits(e.ms)) // as_double
		if e.hasSpan {
			m = protowire.AppendBytes(protowire.AppendTag(m, 4, protowire.BytesType), e.spanID[:])
		}
		m = protowire.AppendBytes(protowire.AppendTag(m, 5, protowire.BytesType), e.traceID[:])
		dst = protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), m)
	}
	return dst
}

// stringKV is a KeyValue message of a string value.
func stringKV(key string, v []byte) []byte {
	var av []byte
	av = protowire.AppendBytes(protowire.AppendTag(av, 1, protowire.BytesType), v)
	return keyValue(key, av)
}

// boolKV is a KeyValue message of a bool value.
func boolKV(key string, v bool) []byte {
	var av []byte
	av = protowire.AppendVarint(protowire.AppendTag(av, 2, protowire.VarintType), protowire.EncodeBool(v))
	return keyValue(key, av)
}

func keyValue(key string, anyValue []byte) []byte {
	var kv []byte
	kv = protowire.AppendString(protowire.AppendTag(kv, 1, protowire.BytesType), key)
	return protowire.AppendBytes(protowire.AppendTag(kv, 2, protowire.BytesType), anyValue)
}

// anyValue is v as an AnyValue message, for the scalar types; false for
// arrays, maps and bytes.
func anyValue(v otlpwire.Value) ([]byte, bool) {
	switch v.Type() {
	case otlpwire.ValueString:
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), v.Str()), true
	case otlpwire.ValueBool:
		return protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), protowire.EncodeBool(v.Bool())), true
	case otlpwire.ValueInt:
		return protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), uint64(v.Int())), true
	case otlpwire.ValueDouble:
		return protowire.AppendFixed64(protowire.AppendTag(nil, 4, protowire.Fixed64Type), math.Float64bits(v.Double())), true
	}
	return nil, false
}

// dimension is the KeyValue of dimension d: the span's attribute of that
// name, else the resource's; false when neither has a scalar one.
func dimension(d string, span, resource otlpwire.Attributes) ([]byte, bool) {
	for _, attrs := range []otlpwire.Attributes{span, resource} {
		v, ok, err := attrs.Get(d)
		if err != nil || !ok {
			continue
		}
		av, ok := anyValue(v)
		if !ok {
			return nil, false
		}
		return keyValue(d, av), true
	}
	return nil, false
}

// lookup returns the text of attribute key (strings as they are,
// numbers and booleans as pdata's AsString writes them), if it is there
// and scalar.
func lookup(attrs otlpwire.Attributes, key string) ([]byte, bool) {
	v, ok, err := attrs.Get(key)
	if err != nil || !ok {
		return nil, false
	}
	return text(v)
}

// text is v's text (strings as they are, numbers and booleans as pdata's
// AsString writes them); false when it is not a scalar.
func text(v otlpwire.Value) ([]byte, bool) {
	switch v.Type() {
	case otlpwire.ValueString:
		return v.Str(), true
	case otlpwire.ValueBool:
		return strconv.AppendBool(nil, v.Bool()), true
	case otlpwire.ValueInt:
		return strconv.AppendInt(nil, v.Int(), 10), true
	case otlpwire.ValueDouble:
		return strconv.AppendFloat(nil, v.Double(), 'f', -1, 64), true
	}
	return nil, false
}
