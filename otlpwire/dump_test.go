package otlpwire_test

// Two independent renderings of a request as text lines, one through this
// package and one through pdata, for the equivalence tests and fuzz
// targets. Both print every field in the same format; doubles as bits.

import (
	"fmt"
	"math"
	"strings"

	"github.com/wirehouse/wirehouse/otlpwire"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

type lines []string

func (l *lines) add(format string, args ...any) { *l = append(*l, fmt.Sprintf(format, args...)) }

func fbits(f float64) string { return fmt.Sprintf("%016x", math.Float64bits(f)) }

func id(b []byte, size int) string {
	if len(b) == 0 {
		return strings.Repeat("00", size)
	}
	return fmt.Sprintf("%x", b)
}

// ---- this package ----

func dumpValue(out *lines, prefix string, v otlpwire.Value) error {
	switch v.Type() {
	case otlpwire.ValueEmpty:
		out.add("%s Empty", prefix)
	case otlpwire.ValueString:
		out.add("%s Str %q", prefix, v.Str())
	case otlpwire.ValueBool:
		out.add("%s Bool %v", prefix, v.Bool())
	case otlpwire.ValueInt:
		out.add("%s Int %d", prefix, v.Int())
	case otlpwire.ValueDouble:
		out.add("%s Double %s", prefix, fbits(v.Double()))
	case otlpwire.ValueBytes:
		out.add("%s Bytes %x", prefix, v.Bytes())
	case otlpwire.ValueArray:
		out.add("%s Array", prefix)
		i := 0
		for e, err := range v.Array().All() {
			if err != nil {
				return err
			}
			if err := dumpValue(out, fmt.Sprintf("%s[%d]", prefix, i), e); err != nil {
				return err
			}
			i++
		}
	case otlpwire.ValueKVList:
		out.add("%s Map", prefix)
		return dumpAttrs(out, prefix+".", v.KVList())
	}
	return nil
}

func dumpAttrs(out *lines, prefix string, a otlpwire.Attributes) error {
	i := 0
	for kv, err := range a.All() {
		if err != nil {
			return err
		}
		if err := dumpValue(out, fmt.Sprintf("%sattr[%d] %q", prefix, i, kv.Key), kv.Value); err != nil {
			return err
		}
		i++
	}
	return nil
}

func dumpResource(out *lines, prefix string, r otlpwire.Resource) error {
	var f otlpwire.ResourceFields
	if err := r.Read(&f); err != nil {
		return err
	}
	out.add("%s resource dropped=%d", prefix, f.DroppedAttributesCount)
	return dumpAttrs(out, prefix+".res.", f.Attributes)
}

func dumpScope(out *lines, prefix string, s otlpwire.Scope) error {
	var f otlpwire.ScopeFields
	if err := s.Read(&f); err != nil {
		return err
	}
	out.add("%s scope name=%q version=%q dropped=%d", prefix, f.Name, f.Version, f.DroppedAttributesCount)
	return dumpAttrs(out, prefix+".scope.", f.Attributes)
}

func dumpWireLogs(b []byte) (lines, error) {
	var out lines
	i := 0
	for rl, err := range otlpwire.LogsRequest(b).ResourceLogs() {
		if err != nil {
			return out, err
		}
		p := fmt.Sprintf("rl[%d]", i)
		u, err := rl.SchemaURL()
		if err != nil {
			return out, err
		}
		out.add("%s schema=%q", p, u)
		r, err := rl.Resource()
		if err != nil {
			return out, err
		}
		if err := dumpResource(&out, p, r); err != nil {
			return out, err
		}
		j := 0
		for sl, err := range rl.ScopeLogs() {
			if err != nil {
				return out, err
			}
			p := fmt.Sprintf("%s.sl[%d]", p, j)
			u, err := sl.SchemaURL()
			if err != nil {
				return out, err
			}
			out.add("%s schema=%q", p, u)
			s, err := sl.Scope()
			if err != nil {
				return out, err
			}
			if err := dumpScope(&out, p, s); err != nil {
				return out, err
			}
			k := 0
			for lr, err := range sl.LogRecords() {
				if err != nil {
					return out, err
				}
				p := fmt.Sprintf("%s.lr[%d]", p, k)
				var f otlpwire.LogRecordFields
				if err := lr.Read(&f); err != nil {
					return out, err
				}
				out.add("%s time=%d obs=%d sev=%d sevtext=%q flags=%d trace=%s span=%s event=%q dropped=%d",
					p, f.Time, f.ObservedTime, f.SeverityNumber, f.SeverityText, f.Flags,
					id(f.TraceID, 16), id(f.SpanID, 8), f.EventName, f.DroppedAttributesCount)
				if err := dumpValue(&out, p+".body", f.Body); err != nil {
					return out, err
				}
				if err := dumpAttrs(&out, p+".", f.Attributes); err != nil {
					return out, err
				}
				k++
			}
			j++
		}
		i++
	}
	return out, nil
}

func dumpWireTraces(b []byte) (lines, error) {
	var out lines
	i := 0
	for rs, err := range otlpwire.TracesRequest(b).ResourceSpans() {
		if err != nil {
			return out, err
		}
		p := fmt.Sprintf("rs[%d]", i)
		u, err := rs.SchemaURL()
		if err != nil {
			return out, err
		}
		out.add("%s schema=%q", p, u)
		r, err := rs.Resource()
		if err != nil {
			return out, err
		}
		if err := dumpResource(&out, p, r); err != nil {
			return out, err
		}
		j := 0
		for ss, err := range rs.ScopeSpans() {
			if err != nil {
				return out, err
			}
			p := fmt.Sprintf("%s.ss[%d]", p, j)
			u, err := ss.SchemaURL()
			if err != nil {
				return out, err
			}
			out.add("%s schema=%q", p, u)
			s, err := ss.Scope()
			if err != nil {
				return out, err
			}
			if err := dumpScope(&out, p, s); err != nil {
				return out, err
			}
			k := 0
			for sp, err := range ss.Spans() {
				if err != nil {
					return out, err
				}
				if err := dumpWireSpan(&out, fmt.Sprintf("%s.span[%d]", p, k), sp); err != nil {
					return out, err
				}
				k++
			}
			j++
		}
		i++
	}
	return out, nil
}

func dumpWireSpan(out *lines, p string, sp otlpwire.Span) error {
	var f otlpwire.SpanFields
	if err := sp.Read(&f); err != nil {
		return err
	}
	out.add("%s trace=%s span=%s parent=%s state=%q flags=%d name=%q kind=%d start=%d end=%d dropped=%d/%d/%d status=%d %q",
		p, id(f.TraceID, 16), id(f.SpanID, 8), id(f.ParentSpanID, 8), f.TraceState, f.Flags, f.Name, f.Kind,
		f.StartTime, f.EndTime, f.DroppedAttributesCount, f.DroppedEventsCount, f.DroppedLinksCount,
		f.StatusCode, f.StatusMessage)
	if err := dumpAttrs(out, p+".", f.Attributes); err != nil {
		return err
	}
	i := 0
	for e, err := range f.Events.All() {
		if err != nil {
			return err
		}
		var ef otlpwire.SpanEventFields
		if err := e.Read(&ef); err != nil {
			return err
		}
		q := fmt.Sprintf("%s.event[%d]", p, i)
		out.add("%s time=%d name=%q dropped=%d", q, ef.Time, ef.Name, ef.DroppedAttributesCount)
		if err := dumpAttrs(out, q+".", ef.Attributes); err != nil {
			return err
		}
		i++
	}
	i = 0
	for l, err := range f.Links.All() {
		if err != nil {
			return err
		}
		var lf otlpwire.SpanLinkFields
		if err := l.Read(&lf); err != nil {
			return err
		}
		q := fmt.Sprintf("%s.link[%d]", p, i)
		out.add("%s trace=%s span=%s state=%q dropped=%d flags=%d", q, id(lf.TraceID, 16), id(lf.SpanID, 8), lf.TraceState, lf.DroppedAttributesCount, lf.Flags)
		if err := dumpAttrs(out, q+".", lf.Attributes); err != nil {
			return err
		}
		i++
	}
	return nil
}

func dumpWireMetrics(b []byte) (lines, error) {
	var out lines
	i := 0
	for rm, err := range otlpwire.MetricsRequest(b).ResourceMetrics() {
		if err != nil {
			return out, err
		}
		p := fmt.Sprintf("rm[%d]", i)
		u, err := rm.SchemaURL()
		if err != nil {
			return out, err
		}
		out.add("%s schema=%q", p, u)
		r, err := rm.Resource()
		if err != nil {
			return out, err
		}
		if err := dumpResource(&out, p, r); err != nil {
			return out, err
		}
		j := 0
		for sm, err := range rm.ScopeMetrics() {
			if err != nil {
				return out, err
			}
			p := fmt.Sprintf("%s.sm[%d]", p, j)
			u, err := sm.SchemaURL()
			if err != nil {
				return out, err
			}
			out.add("%s schema=%q", p, u)
			s, err := sm.Scope()
			if err != nil {
				return out, err
			}
			if err := dumpScope(&out, p, s); err != nil {
				return out, err
			}
			k := 0
			for m, err := range sm.Metrics() {
				if err != nil {
					return out, err
				}
				if err := dumpWireMetric(&out, fmt.Sprintf("%s.m[%d]", p, k), m); err != nil {
					return out, err
				}
				k++
			}
			j++
		}
		i++
	}
	return out, nil
}

func dumpWireExemplars(out *lines, p string, l otlpwire.List[otlpwire.Exemplar]) error {
	i := 0
	for e, err := range l.All() {
		if err != nil {
			return err
		}
		var f otlpwire.ExemplarFields
		if err := e.Read(&f); err != nil {
			return err
		}
		q := fmt.Sprintf("%s.ex[%d]", p, i)
		out.add("%s time=%d vt=%d int=%d double=%s span=%s trace=%s", q, f.Time, f.ValueType, f.Int, fbits(f.Double), id(f.SpanID, 8), id(f.TraceID, 16))
		if err := dumpAttrs(out, q+".", f.FilteredAttributes); err != nil {
			return err
		}
		i++
	}
	return nil
}

func dumpWireMetric(out *lines, p string, m otlpwire.Metric) error {
	var f otlpwire.MetricFields
	if err := m.Read(&f); err != nil {
		return err
	}
	out.add("%s name=%q desc=%q unit=%q type=%s", p, f.Name, f.Description, f.Unit, f.Type)
	if err := dumpAttrs(out, p+".meta.", f.Metadata); err != nil {
		return err
	}
	switch f.Type {
	case otlpwire.MetricTypeSum:
		out.add("%s temporality=%d monotonic=%v", p, f.AggregationTemporality, f.IsMonotonic)
	case otlpwire.MetricTypeHistogram, otlpwire.MetricTypeExponentialHistogram:
		out.add("%s temporality=%d", p, f.AggregationTemporality)
	}
	i := 0
	for dp, err := range f.NumberDataPoints().All() {
		if err != nil {
			return err
		}
		var pf otlpwire.NumberDataPointFields
		if err := dp.Read(&pf); err != nil {
			return err
		}
		q := fmt.Sprintf("%s.dp[%d]", p, i)
		out.add("%s start=%d time=%d vt=%d int=%d double=%s flags=%d", q, pf.StartTime, pf.Time, pf.ValueType, pf.Int, fbits(pf.Double), pf.Flags)
		if err := dumpAttrs(out, q+".", pf.Attributes); err != nil {
			return err
		}
		if err := dumpWireExemplars(out, q, pf.Exemplars); err != nil {
			return err
		}
		i++
	}
	for dp, err := range f.HistogramDataPoints().All() {
		if err != nil {
			return err
		}
		var pf otlpwire.HistogramDataPointFields
		if err := dp.Read(&pf); err != nil {
			return err
		}
		q := fmt.Sprintf("%s.dp[%d]", p, i)
		buckets, err := pf.BucketCounts.AppendTo(nil)
		if err != nil {
			return err
		}
		bounds, err := pf.ExplicitBounds.AppendTo(nil)
		if err != nil {
			return err
		}
		out.add("%s start=%d time=%d count=%d sum=%v/%s min=%v/%s max=%v/%s buckets=%v bounds=%s flags=%d", q, pf.StartTime, pf.Time, pf.Count,
			pf.HasSum, fbits(pf.Sum), pf.HasMin, fbits(pf.Min), pf.HasMax, fbits(pf.Max), fmtU64(buckets), fmtF64(bounds), pf.Flags)
		if err := dumpAttrs(out, q+".", pf.Attributes); err != nil {
			return err
		}
		if err := dumpWireExemplars(out, q, pf.Exemplars); err != nil {
			return err
		}
		i++
	}
	for dp, err := range f.ExponentialHistogramDataPoints().All() {
		if err != nil {
			return err
		}
		var pf otlpwire.ExponentialHistogramDataPointFields
		if err := dp.Read(&pf); err != nil {
			return err
		}
		q := fmt.Sprintf("%s.dp[%d]", p, i)
		pos, err := pf.Positive.BucketCounts.AppendTo(nil)
		if err != nil {
			return err
		}
		neg, err := pf.Negative.BucketCounts.AppendTo(nil)
		if err != nil {
			return err
		}
		out.add("%s start=%d time=%d count=%d sum=%v/%s min=%v/%s max=%v/%s scale=%d zero=%d zt=%s pos=%d:%v neg=%d:%v flags=%d", q, pf.StartTime, pf.Time, pf.Count,
			pf.HasSum, fbits(pf.Sum), pf.HasMin, fbits(pf.Min), pf.HasMax, fbits(pf.Max), pf.Scale, pf.ZeroCount, fbits(pf.ZeroThreshold),
			pf.Positive.Offset, fmtU64(pos), pf.Negative.Offset, fmtU64(neg), pf.Flags)
		if err := dumpAttrs(out, q+".", pf.Attributes); err != nil {
			return err
		}
		if err := dumpWireExemplars(out, q, pf.Exemplars); err != nil {
			return err
		}
		i++
	}
	for dp, err := range f.SummaryDataPoints().All() {
		if err != nil {
			return err
		}
		var pf otlpwire.SummaryDataPointFields
		if err := dp.Read(&pf); err != nil {
			return err
		}
		q := fmt.Sprintf("%s.dp[%d]", p, i)
		out.add("%s start=%d time=%d count=%d sum=%s flags=%d", q, pf.StartTime, pf.Time, pf.Count, fbits(pf.Sum), pf.Flags)
		if err := dumpAttrs(out, q+".", pf.Attributes); err != nil {
			return err
		}
		j := 0
		for qv, err := range pf.QuantileValues.All() {
			if err != nil {
				return err
			}
			qq, vv, err := qv.Read()
			if err != nil {
				return err
			}
			out.add("%s.q[%d] %s %s", q, j, fbits(qq), fbits(vv))
			j++
		}
		i++
	}
	return nil
}

func fmtU64(v []uint64) string {
	if len(v) == 0 {
		return "[]"
	}
	return fmt.Sprint(v)
}

func fmtF64(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = fbits(f)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// ---- pdata ----

func dumpPValue(out *lines, prefix string, v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeEmpty:
		out.add("%s Empty", prefix)
	case pcommon.ValueTypeStr:
		out.add("%s Str %q", prefix, v.Str())
	case pcommon.ValueTypeBool:
		out.add("%s Bool %v", prefix, v.Bool())
	case pcommon.ValueTypeInt:
		out.add("%s Int %d", prefix, v.Int())
	case pcommon.ValueTypeDouble:
		out.add("%s Double %s", prefix, fbits(v.Double()))
	case pcommon.ValueTypeBytes:
		out.add("%s Bytes %x", prefix, v.Bytes().AsRaw())
	case pcommon.ValueTypeSlice:
		out.add("%s Array", prefix)
		for i := 0; i < v.Slice().Len(); i++ {
			dumpPValue(out, fmt.Sprintf("%s[%d]", prefix, i), v.Slice().At(i))
		}
	case pcommon.ValueTypeMap:
		out.add("%s Map", prefix)
		dumpPAttrs(out, prefix+".", v.Map())
	}
}

func dumpPAttrs(out *lines, prefix string, m pcommon.Map) {
	i := 0
	for k, v := range m.All() {
		dumpPValue(out, fmt.Sprintf("%sattr[%d] %q", prefix, i, k), v)
		i++
	}
}

func dumpPResource(out *lines, p string, r pcommon.Resource) {
	out.add("%s resource dropped=%d", p, r.DroppedAttributesCount())
	dumpPAttrs(out, p+".res.", r.Attributes())
}

func dumpPScope(out *lines, p string, s pcommon.InstrumentationScope) {
	out.add("%s scope name=%q version=%q dropped=%d", p, s.Name(), s.Version(), s.DroppedAttributesCount())
	dumpPAttrs(out, p+".scope.", s.Attributes())
}

func dumpPdataLogs(b []byte) (lines, error) {
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
	if err != nil {
		return nil, err
	}
	var out lines
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		p := fmt.Sprintf("rl[%d]", i)
		out.add("%s schema=%q", p, rl.SchemaUrl())
		dumpPResource(&out, p, rl.Resource())
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			p := fmt.Sprintf("%s.sl[%d]", p, j)
			out.add("%s schema=%q", p, sl.SchemaUrl())
			dumpPScope(&out, p, sl.Scope())
			for k := 0; k < sl.LogRecords().Len(); k++ {
				lr := sl.LogRecords().At(k)
				p := fmt.Sprintf("%s.lr[%d]", p, k)
				tid, sid := lr.TraceID(), lr.SpanID()
				out.add("%s time=%d obs=%d sev=%d sevtext=%q flags=%d trace=%x span=%x event=%q dropped=%d",
					p, lr.Timestamp(), lr.ObservedTimestamp(), lr.SeverityNumber(), lr.SeverityText(), lr.Flags(),
					tid[:], sid[:], lr.EventName(), lr.DroppedAttributesCount())
				dumpPValue(&out, p+".body", lr.Body())
				dumpPAttrs(&out, p+".", lr.Attributes())
			}
		}
	}
	return out, nil
}

func dumpPdataTraces(b []byte) (lines, error) {
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		return nil, err
	}
	var out lines
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		p := fmt.Sprintf("rs[%d]", i)
		out.add("%s schema=%q", p, rs.SchemaUrl())
		dumpPResource(&out, p, rs.Resource())
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			p := fmt.Sprintf("%s.ss[%d]", p, j)
			out.add("%s schema=%q", p, ss.SchemaUrl())
			dumpPScope(&out, p, ss.Scope())
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				p := fmt.Sprintf("%s.span[%d]", p, k)
				tid, sid, pid := sp.TraceID(), sp.SpanID(), sp.ParentSpanID()
				out.add("%s trace=%x span=%x parent=%x state=%q flags=%d name=%q kind=%d start=%d end=%d dropped=%d/%d/%d status=%d %q",
					p, tid[:], sid[:], pid[:], sp.TraceState().AsRaw(), sp.Flags(), sp.Name(), sp.Kind(),
					sp.StartTimestamp(), sp.EndTimestamp(), sp.DroppedAttributesCount(), sp.DroppedEventsCount(), sp.DroppedLinksCount(),
					sp.Status().Code(), sp.Status().Message())
				dumpPAttrs(&out, p+".", sp.Attributes())
				for e := 0; e < sp.Events().Len(); e++ {
					ev := sp.Events().At(e)
					q := fmt.Sprintf("%s.event[%d]", p, e)
					out.add("%s time=%d name=%q dropped=%d", q, ev.Timestamp(), ev.Name(), ev.DroppedAttributesCount())
					dumpPAttrs(&out, q+".", ev.Attributes())
				}
				for l := 0; l < sp.Links().Len(); l++ {
					lk := sp.Links().At(l)
					q := fmt.Sprintf("%s.link[%d]", p, l)
					ltid, lsid := lk.TraceID(), lk.SpanID()
					out.add("%s trace=%x span=%x state=%q dropped=%d flags=%d", q, ltid[:], lsid[:], lk.TraceState().AsRaw(), lk.DroppedAttributesCount(), lk.Flags())
					dumpPAttrs(&out, q+".", lk.Attributes())
				}
			}
		}
	}
	return out, nil
}

func dumpPExemplars(out *lines, p string, es pmetric.ExemplarSlice) {
	for i := 0; i < es.Len(); i++ {
		e := es.At(i)
		q := fmt.Sprintf("%s.ex[%d]", p, i)
		sid, tid := e.SpanID(), e.TraceID()
		var iv int64
		var dv float64
		switch e.ValueType() {
		case pmetric.ExemplarValueTypeInt:
			iv = e.IntValue()
		case pmetric.ExemplarValueTypeDouble:
			dv = e.DoubleValue()
		}
		out.add("%s time=%d vt=%d int=%d double=%s span=%x trace=%x", q, e.Timestamp(), e.ValueType(), iv, fbits(dv), sid[:], tid[:])
		dumpPAttrs(out, q+".", e.FilteredAttributes())
	}
}

func dumpPdataMetrics(b []byte) (lines, error) {
	md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
	if err != nil {
		return nil, err
	}
	var out lines
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		p := fmt.Sprintf("rm[%d]", i)
		out.add("%s schema=%q", p, rm.SchemaUrl())
		dumpPResource(&out, p, rm.Resource())
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			sm := rm.ScopeMetrics().At(j)
			p := fmt.Sprintf("%s.sm[%d]", p, j)
			out.add("%s schema=%q", p, sm.SchemaUrl())
			dumpPScope(&out, p, sm.Scope())
			for k := 0; k < sm.Metrics().Len(); k++ {
				dumpPMetric(&out, fmt.Sprintf("%s.m[%d]", p, k), sm.Metrics().At(k))
			}
		}
	}
	return out, nil
}

func dumpPMetric(out *lines, p string, m pmetric.Metric) {
	out.add("%s name=%q desc=%q unit=%q type=%s", p, m.Name(), m.Description(), m.Unit(), m.Type())
	dumpPAttrs(out, p+".meta.", m.Metadata())
	var nps pmetric.NumberDataPointSlice
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		nps = m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		out.add("%s temporality=%d monotonic=%v", p, m.Sum().AggregationTemporality(), m.Sum().IsMonotonic())
		nps = m.Sum().DataPoints()
	case pmetric.MetricTypeHistogram:
		out.add("%s temporality=%d", p, m.Histogram().AggregationTemporality())
		for i := 0; i < m.Histogram().DataPoints().Len(); i++ {
			dp := m.Histogram().DataPoints().At(i)
			q := fmt.Sprintf("%s.dp[%d]", p, i)
			out.add("%s start=%d time=%d count=%d sum=%v/%s min=%v/%s max=%v/%s buckets=%v bounds=%s flags=%d", q, dp.StartTimestamp(), dp.Timestamp(), dp.Count(),
				dp.HasSum(), fbits(dp.Sum()), dp.HasMin(), fbits(dp.Min()), dp.HasMax(), fbits(dp.Max()),
				fmtU64(dp.BucketCounts().AsRaw()), fmtF64(dp.ExplicitBounds().AsRaw()), dp.Flags())
			dumpPAttrs(out, q+".", dp.Attributes())
			dumpPExemplars(out, q, dp.Exemplars())
		}
	case pmetric.MetricTypeExponentialHistogram:
		out.add("%s temporality=%d", p, m.ExponentialHistogram().AggregationTemporality())
		for i := 0; i < m.ExponentialHistogram().DataPoints().Len(); i++ {
			dp := m.ExponentialHistogram().DataPoints().At(i)
			q := fmt.Sprintf("%s.dp[%d]", p, i)
			out.add("%s start=%d time=%d count=%d sum=%v/%s min=%v/%s max=%v/%s scale=%d zero=%d zt=%s pos=%d:%v neg=%d:%v flags=%d", q, dp.StartTimestamp(), dp.Timestamp(), dp.Count(),
				dp.HasSum(), fbits(dp.Sum()), dp.HasMin(), fbits(dp.Min()), dp.HasMax(), fbits(dp.Max()), dp.Scale(), dp.ZeroCount(), fbits(dp.ZeroThreshold()),
				dp.Positive().Offset(), fmtU64(dp.Positive().BucketCounts().AsRaw()), dp.Negative().Offset(), fmtU64(dp.Negative().BucketCounts().AsRaw()), dp.Flags())
			dumpPAttrs(out, q+".", dp.Attributes())
			dumpPExemplars(out, q, dp.Exemplars())
		}
	case pmetric.MetricTypeSummary:
		for i := 0; i < m.Summary().DataPoints().Len(); i++ {
			dp := m.Summary().DataPoints().At(i)
			q := fmt.Sprintf("%s.dp[%d]", p, i)
			out.add("%s start=%d time=%d count=%d sum=%s flags=%d", q, dp.StartTimestamp(), dp.Timestamp(), dp.Count(), fbits(dp.Sum()), dp.Flags())
			dumpPAttrs(out, q+".", dp.Attributes())
			for j := 0; j < dp.QuantileValues().Len(); j++ {
				qv := dp.QuantileValues().At(j)
				out.add("%s.q[%d] %s %s", q, j, fbits(qv.Quantile()), fbits(qv.Value()))
			}
		}
	}
	if m.Type() != pmetric.MetricTypeGauge && m.Type() != pmetric.MetricTypeSum {
		return
	}
	for i := 0; i < nps.Len(); i++ {
		dp := nps.At(i)
		q := fmt.Sprintf("%s.dp[%d]", p, i)
		var iv int64
		var dv float64
		switch dp.ValueType() {
		case pmetric.NumberDataPointValueTypeInt:
			iv = dp.IntValue()
		case pmetric.NumberDataPointValueTypeDouble:
			dv = dp.DoubleValue()
		}
		out.add("%s start=%d time=%d vt=%d int=%d double=%s flags=%d", q, dp.StartTimestamp(), dp.Timestamp(), dp.ValueType(), iv, fbits(dv), dp.Flags())
		dumpPAttrs(out, q+".", dp.Attributes())
		dumpPExemplars(out, q, dp.Exemplars())
	}
}
