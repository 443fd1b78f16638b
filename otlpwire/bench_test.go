package otlpwire_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/wirewalk"
	"github.com/wirehouse/wirehouse/otlpwire"

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

var benchSignals = []otlpwire.Signal{otlpwire.SignalMetrics, otlpwire.SignalLogs, otlpwire.SignalTraces}

func fixture(s otlpwire.Signal) []byte { return synth.Fixture(s, synth.Ascending) }

func pdataUnmarshal(b *testing.B, s otlpwire.Signal, in []byte) any {
	var v any
	var err error
	switch s {
	case otlpwire.SignalLogs:
		v, err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(in)
	case otlpwire.SignalTraces:
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
				case otlpwire.SignalLogs:
					n, err = otlpwire.LogsRequest(in).LogRecordCount()
				case otlpwire.SignalTraces:
					n, err = otlpwire.TracesRequest(in).SpanCount()
				default:
					n, err = otlpwire.MetricsRequest(in).DataPointCount()
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
				case otlpwire.SignalLogs:
					for rl, err := range otlpwire.LogsRequest(in).ResourceLogs() {
						r, err2 := rl.Resource()
						if err != nil || err2 != nil {
							b.Fatal(err, err2)
						}
						n += len(r)
					}
				case otlpwire.SignalTraces:
					for rs, err := range otlpwire.TracesRequest(in).ResourceSpans() {
						r, err2 := rs.Resource()
						if err != nil || err2 != nil {
							b.Fatal(err, err2)
						}
						n += len(r)
					}
				default:
					for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
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

// BenchmarkIterate is seed 000's iteration-only row: range over the
// resource containers and take nothing from them (pdata: unmarshal, then
// loop over ResourceX().At(i)).
func BenchmarkIterate(b *testing.B) {
	for _, s := range benchSignals {
		in := fixture(s)
		b.Run(fmt.Sprintf("signal=%s/impl=otlpwire", s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				switch s {
				case otlpwire.SignalLogs:
					for rl, err := range otlpwire.LogsRequest(in).ResourceLogs() {
						if err != nil {
							b.Fatal(err)
						}
						n += len(rl)
					}
				case otlpwire.SignalTraces:
					for rs, err := range otlpwire.TracesRequest(in).ResourceSpans() {
						if err != nil {
							b.Fatal(err)
						}
						n += len(rs)
					}
				default:
					for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
						if err != nil {
							b.Fatal(err)
						}
						n += len(rm)
					}
				}
				sink += n
			}
		})
		b.Run(fmt.Sprintf("signal=%s/impl=pdata", s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				switch v := pdataUnmarshal(b, s, in).(type) {
				case plog.Logs:
					for i := 0; i < v.ResourceLogs().Len(); i++ {
						_ = v.ResourceLogs().At(i)
						n++
					}
				case ptrace.Traces:
					for i := 0; i < v.ResourceSpans().Len(); i++ {
						_ = v.ResourceSpans().At(i)
						n++
					}
				case pmetric.Metrics:
					for i := 0; i < v.ResourceMetrics().Len(); i++ {
						_ = v.ResourceMetrics().At(i)
						n++
					}
				}
				sink += n
			}
		})
	}
}

// BenchmarkSplitWriteTo is seed 000's split row as the seed measured it:
// each resource written with WriteTo, as a standalone request, into a
// reused bytes.Buffer (pdata: unmarshal, copy each resource into a new
// request, marshal it, write it to the same buffer).
func BenchmarkSplitWriteTo(b *testing.B) {
	for _, s := range benchSignals {
		in := fixture(s)
		b.Run(fmt.Sprintf("signal=%s/impl=otlpwire", s), func(b *testing.B) {
			var buf bytes.Buffer
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				switch s {
				case otlpwire.SignalLogs:
					for rl, e := range otlpwire.LogsRequest(in).ResourceLogs() {
						buf.Reset()
						if _, err = rl.WriteTo(&buf); err != nil || e != nil {
							b.Fatal(err, e)
						}
					}
				case otlpwire.SignalTraces:
					for rs, e := range otlpwire.TracesRequest(in).ResourceSpans() {
						buf.Reset()
						if _, err = rs.WriteTo(&buf); err != nil || e != nil {
							b.Fatal(err, e)
						}
					}
				default:
					for rm, e := range otlpwire.MetricsRequest(in).ResourceMetrics() {
						buf.Reset()
						if _, err = rm.WriteTo(&buf); err != nil || e != nil {
							b.Fatal(err, e)
						}
					}
				}
				sink += buf.Len()
			}
		})
		b.Run(fmt.Sprintf("signal=%s/impl=pdata", s), func(b *testing.B) {
			var buf bytes.Buffer
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				var out []byte
				var err error
				switch v := pdataUnmarshal(b, s, in).(type) {
				case plog.Logs:
					for i := 0; i < v.ResourceLogs().Len(); i++ {
						one := plog.NewLogs()
						v.ResourceLogs().At(i).CopyTo(one.ResourceLogs().AppendEmpty())
						if out, err = (&plog.ProtoMarshaler{}).MarshalLogs(one); err != nil {
							b.Fatal(err)
						}
						buf.Reset()
						buf.Write(out)
					}
				case ptrace.Traces:
					for i := 0; i < v.ResourceSpans().Len(); i++ {
						one := ptrace.NewTraces()
						v.ResourceSpans().At(i).CopyTo(one.ResourceSpans().AppendEmpty())
						if out, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(one); err != nil {
							b.Fatal(err)
						}
						buf.Reset()
						buf.Write(out)
					}
				case pmetric.Metrics:
					for i := 0; i < v.ResourceMetrics().Len(); i++ {
						one := pmetric.NewMetrics()
						v.ResourceMetrics().At(i).CopyTo(one.ResourceMetrics().AppendEmpty())
						if out, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(one); err != nil {
							b.Fatal(err)
						}
						buf.Reset()
						buf.Write(out)
					}
				}
				sink += buf.Len()
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
				case otlpwire.SignalLogs:
					for rl, err := range otlpwire.LogsRequest(in).ResourceLogs() {
						if err != nil {
							b.Fatal(err)
						}
						buf = rl.AppendTo(buf[:0])
						n += len(buf)
					}
				case otlpwire.SignalTraces:
					for rs, err := range otlpwire.TracesRequest(in).ResourceSpans() {
						if err != nil {
							b.Fatal(err)
						}
						buf = rs.AppendTo(buf[:0])
						n += len(buf)
					}
				default:
					for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
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
	in := fixture(otlpwire.SignalMetrics)
	b.Run("impl=otlpwire", func(b *testing.B) {
		for b.Loop() {
			n := 0
			for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
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
			md := pdataUnmarshal(b, otlpwire.SignalMetrics, in).(pmetric.Metrics)
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

func walkPAttrs(m pcommon.Map) int {
	n := 0
	for k, v := range m.All() {
		n += len(k) + usePValue(v)
	}
	return n
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
	benchDeepWalk(b, func(s otlpwire.Signal) []byte { return synth.RealisticFixture(s, synth.Ascending) })
}

func benchDeepWalk(b *testing.B, fixture func(otlpwire.Signal) []byte) {
	for _, s := range benchSignals {
		in := fixture(s)
		want, err := wirewalk.Deep(s, in)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("signal=%s/impl=otlpwire", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				n, err := wirewalk.Deep(s, in)
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

// BenchmarkValidate checks the request `wirehouse load` sends (1,000
// records over 10 resources, synth.Generate) as the receiver does before
// it acknowledges anything, against pdata's unmarshal, which is the check
// a pdata receiver gets.
//
//	go test -run='^$' -bench=BenchmarkValidate -benchmem ./otlpwire/
func BenchmarkValidate(b *testing.B) {
	for _, s := range benchSignals {
		in := synth.Generate(s, synth.Config{Seed: 1, Resources: 10, ScopesPerResource: 1, TotalRecords: 1000,
			Start: time.Unix(1700000000, 0)})
		b.Run(fmt.Sprintf("signal=%v/impl=otlpwire", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Validate(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("signal=%v/impl=pdata", s), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				pdataUnmarshal(b, s, in)
			}
		})
	}
}
