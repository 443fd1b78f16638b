package otlpwire

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// Benchmarks on the seed-000 fixture (synth.Fixture: 5 resources × 100
// records, two attributes each, the shape the seed report measured), each
// pairing impl=otlpwire with impl=pdata in the same run, plus the deep walk
// on synth.RealisticFixture (8-10 resource and 4-8 record attributes of
// mixed kinds). pdata always pays its unmarshal: that is what a receiver
// holding wire bytes would pay.
//
//	go test -run='^$' -bench=. -benchmem ./otlpwire/

var sink int

var benchSignals = []synth.Signal{synth.SignalMetrics, synth.SignalLogs, synth.SignalTraces}

func fixture(s synth.Signal) []byte { return synth.Fixture(s, synth.Ascending) }

func pdataUnmarshal(b *testing.B, s synth.Signal, in []byte) any {
	var v any
	var err error
	switch s {
	case synth.SignalLogs:
		v, err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(in)
	case synth.SignalTraces:
		v, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(in)
	default:
		v, err = (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(in)
	}
	if err != nil {
		b.Fatal(err)
	}
	return v
}

func BenchmarkCount(b *testing.B) {
	for _, s := range benchSignals {
		in := fixture(s)
		b.Run(fmt.Sprintf("signal=%s/impl=otlpwire", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				var n int
				var err error
				switch s {
				case synth.SignalLogs:
					n, err = LogsRequest(in).LogRecordCount()
				case synth.SignalTraces:
					n, err = TracesRequest(in).SpanCount()
				default:
					n, err = MetricsRequest(in).DataPointCount()
				}
				if err != nil || n != 500 {
					b.Fatal(n, err)
				}
				sink += n
			}
		})
		b.Run(fmt.Sprintf("signal=%s/impl=pdata", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				var n int
				switch v := pdataUnmarshal(b, s, in).(type) {
				case plog.Logs:
					n = v.LogRecordCount()
				case ptrace.Traces:
					n = v.SpanCount()
				case pmetric.Metrics:
					n = v.DataPointCount()
				}
				if n != 500 {
					b.Fatal(n)
				}
				sink += n
			}
		})
	}
}

func BenchmarkResources(b *testing.B) {
	for _, s := range benchSignals {
		in := fixture(s)
		b.Run(fmt.Sprintf("signal=%s/impl=otlpwire", s), func(b *testing.B) {
			for b.Loop() {
				n := 0
				switch s {
				case synth.SignalLogs:
					for rl, err := range LogsRequest(in).ResourceLogs() {
						r, err2 := rl.Resource()
						if err != nil || err2 != nil {
							b.Fatal(err, err2)
						}
						n += len(r)
					}
				case synth.SignalTraces:
					for rs, err := range TracesRequest(in).ResourceSpans() {
						r, err2 := rs.Resource()
						if err != nil || err2 != nil {
							b.Fatal(err, err2)
						}
						n += len(r)
					}
				default:
					for rm, err := range MetricsRequest(in).ResourceMetrics() {
						r, err2 := rm.Resource()
						if err != nil || err2 != nil {
							b.Fatal(err, err2)
						}
						n += len(r)
					}
				}
				if n == 0 {
					b.Fatal("no resources")
				}
				sink += n
			}
		})
		b.Run(fmt.Sprintf("signal=%s/impl=pdata", s), func(b *testing.B) {
			for b.Loop() {
				n := 0
				switch v := pdataUnmarshal(b, s, in).(type) {
				case plog.Logs:
					for i := 0; i < v.ResourceLogs().Len(); i++ {
						n += v.ResourceLogs().At(i).Resource().Attributes().Len()
					}
				case ptrace.Traces:
					for i := 0; i < v.ResourceSpans().Len(); i++ {
						n += v.ResourceSpans().At(i).Resource().Attributes().Len()
					}
				case pmetric.Metrics:
					for i := 0; i < v.ResourceMetrics().Len(); i++ {
						n += v.ResourceMetrics().At(i).Resource().Attributes().Len()
					}
				}
				if n == 0 {
					b.Fatal("no resources")
				}
				sink += n
			}
		})
	}
}

func BenchmarkSplit(b *testing.B) {
	for _, s := range benchSignals {
		in := fixture(s)
		b.Run(fmt.Sprintf("signal=%s/impl=otlpwire", s), func(b *testing.B) {
			buf := make([]byte, 0, len(in))
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				n := 0
				switch s {
				case synth.SignalLogs:
					for rl, err := range LogsRequest(in).ResourceLogs() {
						if err != nil {
							b.Fatal(err)
						}
						buf = rl.AppendTo(buf[:0])
						n += len(buf)
					}
				case synth.SignalTraces:
					for rs, err := range TracesRequest(in).ResourceSpans() {
						if err != nil {
							b.Fatal(err)
						}
						buf = rs.AppendTo(buf[:0])
						n += len(buf)
					}
				default:
					for rm, err := range MetricsRequest(in).ResourceMetrics() {
						if err != nil {
							b.Fatal(err)
						}
						buf = rm.AppendTo(buf[:0])
						n += len(buf)
					}
				}
				sink += n
			}
		})
		b.Run(fmt.Sprintf("signal=%s/impl=pdata", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				n := 0
				switch v := pdataUnmarshal(b, s, in).(type) {
				case plog.Logs:
					for i := 0; i < v.ResourceLogs().Len(); i++ {
						one := plog.NewLogs()
						v.ResourceLogs().At(i).CopyTo(one.ResourceLogs().AppendEmpty())
						out, err := (&plog.ProtoMarshaler{}).MarshalLogs(one)
						if err != nil {
							b.Fatal(err)
						}
						n += len(out)
					}
				case ptrace.Traces:
					for i := 0; i < v.ResourceSpans().Len(); i++ {
						one := ptrace.NewTraces()
						v.ResourceSpans().At(i).CopyTo(one.ResourceSpans().AppendEmpty())
						out, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(one)
						if err != nil {
							b.Fatal(err)
						}
						n += len(out)
					}
				case pmetric.Metrics:
					for i := 0; i < v.ResourceMetrics().Len(); i++ {
						one := pmetric.NewMetrics()
						v.ResourceMetrics().At(i).CopyTo(one.ResourceMetrics().AppendEmpty())
						out, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(one)
						if err != nil {
							b.Fatal(err)
						}
						n += len(out)
					}
				}
				sink += n
			}
		})
	}
}

func BenchmarkResourceAttr(b *testing.B) {
	in := fixture(synth.SignalMetrics)
	b.Run("impl=otlpwire", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for rm, err := range MetricsRequest(in).ResourceMetrics() {
				if err != nil {
					b.Fatal(err)
				}
				r, err := rm.Resource()
				if err != nil {
					b.Fatal(err)
				}
				a, err := r.Attributes()
				if err != nil {
					b.Fatal(err)
				}
				v, ok, err := a.Get("service.name")
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
				n += len(v.Str())
			}
			sink += n
		}
	})
	b.Run("impl=pdata", func(b *testing.B) {
		for b.Loop() {
			n := 0
			md := pdataUnmarshal(b, synth.SignalMetrics, in).(pmetric.Metrics)
			for i := 0; i < md.ResourceMetrics().Len(); i++ {
				v, ok := md.ResourceMetrics().At(i).Resource().Attributes().Get("service.name")
				if !ok {
					b.Fatal("no service.name")
				}
				n += len(v.Str())
			}
			sink += n
		}
	})
}

// ---- deep walk: every record's timestamp, every attribute's key and value
// (resource, scope and record attributes).

func useValue(v Value) int {
	switch v.Type() {
	case ValueString:
		return len(v.Str())
	case ValueInt:
		return int(v.Int())
	case ValueDouble:
		return int(v.Double())
	case ValueBool:
		if v.Bool() {
			return 1
		}
	case ValueBytes:
		return len(v.Bytes())
	case ValueArray, ValueKVList:
		return 1
	}
	return 0
}

func usePValue(v pcommon.Value) int {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return len(v.Str())
	case pcommon.ValueTypeInt:
		return int(v.Int())
	case pcommon.ValueTypeDouble:
		return int(v.Double())
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return 1
		}
	case pcommon.ValueTypeBytes:
		return v.Bytes().Len()
	case pcommon.ValueTypeSlice, pcommon.ValueTypeMap:
		return 1
	}
	return 0
}

func walkAttrs(a Attributes) (int, error) {
	n := 0
	for kv, err := range a.All() {
		if err != nil {
			return 0, err
		}
		n += len(kv.Key) + useValue(kv.Value)
	}
	return n, nil
}

func walkPAttrs(m pcommon.Map) int {
	n := 0
	for k, v := range m.All() {
		n += len(k) + usePValue(v)
	}
	return n
}

func walkHeaders(r Resource, s Scope) (int, error) {
	var rf ResourceFields
	if err := r.Read(&rf); err != nil {
		return 0, err
	}
	var sf ScopeFields
	if err := s.Read(&sf); err != nil {
		return 0, err
	}
	a, err := walkAttrs(rf.Attributes)
	if err != nil {
		return 0, err
	}
	c, err := walkAttrs(sf.Attributes)
	return a + c + len(sf.Name), err
}

func deepWalkLogs(in []byte) (int, error) {
	n := 0
	var f LogRecordFields
	for rl, err := range LogsRequest(in).ResourceLogs() {
		if err != nil {
			return 0, err
		}
		r, err := rl.Resource()
		if err != nil {
			return 0, err
		}
		for sl, err := range rl.ScopeLogs() {
			if err != nil {
				return 0, err
			}
			s, err := sl.Scope()
			if err != nil {
				return 0, err
			}
			h, err := walkHeaders(r, s)
			if err != nil {
				return 0, err
			}
			n += h
			for lr, err := range sl.LogRecords() {
				if err != nil {
					return 0, err
				}
				if err := lr.Read(&f); err != nil {
					return 0, err
				}
				a, err := walkAttrs(f.Attributes)
				if err != nil {
					return 0, err
				}
				n += int(f.Time&0xff) + a
			}
		}
	}
	return n, nil
}

func deepWalkTraces(in []byte) (int, error) {
	n := 0
	var f SpanFields
	for rs, err := range TracesRequest(in).ResourceSpans() {
		if err != nil {
			return 0, err
		}
		r, err := rs.Resource()
		if err != nil {
			return 0, err
		}
		for ss, err := range rs.ScopeSpans() {
			if err != nil {
				return 0, err
			}
			s, err := ss.Scope()
			if err != nil {
				return 0, err
			}
			h, err := walkHeaders(r, s)
			if err != nil {
				return 0, err
			}
			n += h
			for sp, err := range ss.Spans() {
				if err != nil {
					return 0, err
				}
				if err := sp.Read(&f); err != nil {
					return 0, err
				}
				a, err := walkAttrs(f.Attributes)
				if err != nil {
					return 0, err
				}
				n += int(f.StartTime&0xff) + a
			}
		}
	}
	return n, nil
}

func deepWalkMetrics(in []byte) (int, error) {
	n := 0
	var mf MetricFields
	for rm, err := range MetricsRequest(in).ResourceMetrics() {
		if err != nil {
			return 0, err
		}
		r, err := rm.Resource()
		if err != nil {
			return 0, err
		}
		for sm, err := range rm.ScopeMetrics() {
			if err != nil {
				return 0, err
			}
			s, err := sm.Scope()
			if err != nil {
				return 0, err
			}
			h, err := walkHeaders(r, s)
			if err != nil {
				return 0, err
			}
			n += h
			for m, err := range sm.Metrics() {
				if err != nil {
					return 0, err
				}
				if err := m.Read(&mf); err != nil {
					return 0, err
				}
				k, err := walkPoints(&mf)
				if err != nil {
					return 0, err
				}
				n += k
			}
		}
	}
	return n, nil
}

func walkPoints(mf *MetricFields) (int, error) {
	n := 0
	var nf NumberDataPointFields
	for p, err := range mf.NumberDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&nf); err != nil {
			return 0, err
		}
		a, err := walkAttrs(nf.Attributes)
		if err != nil {
			return 0, err
		}
		n += int(nf.Time&0xff) + a
	}
	var hf HistogramDataPointFields
	for p, err := range mf.HistogramDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&hf); err != nil {
			return 0, err
		}
		a, err := walkAttrs(hf.Attributes)
		if err != nil {
			return 0, err
		}
		n += int(hf.Time&0xff) + a
	}
	var ef ExponentialHistogramDataPointFields
	for p, err := range mf.ExponentialHistogramDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&ef); err != nil {
			return 0, err
		}
		a, err := walkAttrs(ef.Attributes)
		if err != nil {
			return 0, err
		}
		n += int(ef.Time&0xff) + a
	}
	var sf SummaryDataPointFields
	for p, err := range mf.SummaryDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&sf); err != nil {
			return 0, err
		}
		a, err := walkAttrs(sf.Attributes)
		if err != nil {
			return 0, err
		}
		n += int(sf.Time&0xff) + a
	}
	return n, nil
}

func deepWalkWire(s synth.Signal, in []byte) (int, error) {
	switch s {
	case synth.SignalLogs:
		return deepWalkLogs(in)
	case synth.SignalTraces:
		return deepWalkTraces(in)
	}
	return deepWalkMetrics(in)
}

func pHeaders(r pcommon.Resource, s pcommon.InstrumentationScope) int {
	return walkPAttrs(r.Attributes()) + walkPAttrs(s.Attributes()) + len(s.Name())
}

func deepWalkPdata(v any) int {
	n := 0
	switch v := v.(type) {
	case plog.Logs:
		for i := 0; i < v.ResourceLogs().Len(); i++ {
			rl := v.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				n += pHeaders(rl.Resource(), sl.Scope())
				for k := 0; k < sl.LogRecords().Len(); k++ {
					lr := sl.LogRecords().At(k)
					n += int(lr.Timestamp()&0xff) + walkPAttrs(lr.Attributes())
				}
			}
		}
	case ptrace.Traces:
		for i := 0; i < v.ResourceSpans().Len(); i++ {
			rs := v.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				n += pHeaders(rs.Resource(), ss.Scope())
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					n += int(sp.StartTimestamp()&0xff) + walkPAttrs(sp.Attributes())
				}
			}
		}
	case pmetric.Metrics:
		for i := 0; i < v.ResourceMetrics().Len(); i++ {
			rm := v.ResourceMetrics().At(i)
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				sm := rm.ScopeMetrics().At(j)
				n += pHeaders(rm.Resource(), sm.Scope())
				for k := 0; k < sm.Metrics().Len(); k++ {
					n += walkPMetric(sm.Metrics().At(k))
				}
			}
		}
	}
	return n
}

func walkPMetric(m pmetric.Metric) int {
	n := 0
	var nps pmetric.NumberDataPointSlice
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		nps = m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		nps = m.Sum().DataPoints()
	case pmetric.MetricTypeHistogram:
		for i := 0; i < m.Histogram().DataPoints().Len(); i++ {
			p := m.Histogram().DataPoints().At(i)
			n += int(p.Timestamp()&0xff) + walkPAttrs(p.Attributes())
		}
	case pmetric.MetricTypeExponentialHistogram:
		for i := 0; i < m.ExponentialHistogram().DataPoints().Len(); i++ {
			p := m.ExponentialHistogram().DataPoints().At(i)
			n += int(p.Timestamp()&0xff) + walkPAttrs(p.Attributes())
		}
	case pmetric.MetricTypeSummary:
		for i := 0; i < m.Summary().DataPoints().Len(); i++ {
			p := m.Summary().DataPoints().At(i)
			n += int(p.Timestamp()&0xff) + walkPAttrs(p.Attributes())
		}
	}
	if m.Type() == pmetric.MetricTypeGauge || m.Type() == pmetric.MetricTypeSum {
		for i := 0; i < nps.Len(); i++ {
			p := nps.At(i)
			n += int(p.Timestamp()&0xff) + walkPAttrs(p.Attributes())
		}
	}
	return n
}

func BenchmarkDeepWalk(b *testing.B) { benchDeepWalk(b, fixture) }

func BenchmarkDeepWalkRealistic(b *testing.B) {
	benchDeepWalk(b, func(s synth.Signal) []byte { return synth.RealisticFixture(s, synth.Ascending) })
}

func benchDeepWalk(b *testing.B, fixture func(synth.Signal) []byte) {
	for _, s := range benchSignals {
		in := fixture(s)
		want, err := deepWalkWire(s, in)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("signal=%s/impl=otlpwire", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				n, err := deepWalkWire(s, in)
				if err != nil || n != want {
					b.Fatal(n, err)
				}
				sink += n
			}
		})
		b.Run(fmt.Sprintf("signal=%s/impl=protowire", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				n, err := deepWalkProtowire(s, in)
				if err != nil || n != want {
					b.Fatalf("protowire walk = %d, %v; otlpwire %d", n, err, want)
				}
				sink += n
			}
		})
		b.Run(fmt.Sprintf("signal=%s/impl=pdata", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				n := deepWalkPdata(pdataUnmarshal(b, s, in))
				if n != want {
					b.Fatalf("pdata walk = %d, otlpwire %d", n, want)
				}
				sink += n
			}
		})
	}
}
