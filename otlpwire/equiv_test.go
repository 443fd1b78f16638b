package otlpwire_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// Equivalence with pdata, the reference decoder, on randomized requests of
// every shape the generator produces, in both field orders.

var signals = []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces, otlpwire.SignalMetrics}

func randomRequest(seed uint64, s otlpwire.Signal, o synth.Order) []byte {
	return synth.Random(rand.New(rand.NewPCG(seed, uint64(s)<<8|uint64(o))), s, o)
}

func equivSeeds(t *testing.T) int {
	if testing.Short() {
		return 100
	}
	return 1000
}

func dumpWire(s otlpwire.Signal, b []byte) (lines, error) {
	switch s {
	case otlpwire.SignalLogs:
		return dumpWireLogs(b)
	case otlpwire.SignalTraces:
		return dumpWireTraces(b)
	}
	return dumpWireMetrics(b)
}

func dumpPdata(s otlpwire.Signal, b []byte) (lines, error) {
	switch s {
	case otlpwire.SignalLogs:
		return dumpPdataLogs(b)
	case otlpwire.SignalTraces:
		return dumpPdataTraces(b)
	}
	return dumpPdataMetrics(b)
}

func diffLines(want, got lines) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n pdata:    %s\n otlpwire: %s", i, w, g)
		}
	}
	return ""
}

func TestEquivalenceFields(t *testing.T) {
	n := equivSeeds(t)
	for _, s := range signals {
		for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
			t.Run(fmt.Sprintf("signal=%s/order=%s", s, o), func(t *testing.T) {
				for seed := range uint64(n) {
					b := randomRequest(seed, s, o)
					want, err := dumpPdata(s, b)
					if err != nil {
						t.Fatalf("seed %d: pdata rejects generated request: %v", seed, err)
					}
					got, err := dumpWire(s, b)
					if err != nil {
						t.Fatalf("seed %d: otlpwire: %v", seed, err)
					}
					if d := diffLines(want, got); d != "" {
						t.Fatalf("seed %d: %s", seed, d)
					}
					if err := s.Validate(b); err != nil {
						t.Fatalf("seed %d: Validate: %v", seed, err)
					}
				}
			})
		}
	}
}

// counts is every count this package offers for a request: the request
// total, then per resource, then per scope, in order.
type counts struct {
	Resources int
	Total     int
	Metrics   int
	PerRes    []int
	PerScope  []int
}

func wireCounts(s otlpwire.Signal, b []byte) (c counts, err error) {
	switch s {
	case otlpwire.SignalLogs:
		r := otlpwire.LogsRequest(b)
		if c.Resources, err = r.ResourceCount(); err != nil {
			return c, err
		}
		if c.Total, err = r.LogRecordCount(); err != nil {
			return c, err
		}
		for rl, err := range r.ResourceLogs() {
			if err != nil {
				return c, err
			}
			n, err := rl.LogRecordCount()
			if err != nil {
				return c, err
			}
			c.PerRes = append(c.PerRes, n)
			for sl, err := range rl.ScopeLogs() {
				if err != nil {
					return c, err
				}
				n, err := sl.LogRecordCount()
				if err != nil {
					return c, err
				}
				c.PerScope = append(c.PerScope, n)
			}
		}
	case otlpwire.SignalTraces:
		r := otlpwire.TracesRequest(b)
		if c.Resources, err = r.ResourceCount(); err != nil {
			return c, err
		}
		if c.Total, err = r.SpanCount(); err != nil {
			return c, err
		}
		for rs, err := range r.ResourceSpans() {
			if err != nil {
				return c, err
			}
			n, err := rs.SpanCount()
			if err != nil {
				return c, err
			}
			c.PerRes = append(c.PerRes, n)
			for ss, err := range rs.ScopeSpans() {
				if err != nil {
					return c, err
				}
				n, err := ss.SpanCount()
				if err != nil {
					return c, err
				}
				c.PerScope = append(c.PerScope, n)
			}
		}
	case otlpwire.SignalMetrics:
		r := otlpwire.MetricsRequest(b)
		if c.Resources, err = r.ResourceCount(); err != nil {
			return c, err
		}
		if c.Total, err = r.DataPointCount(); err != nil {
			return c, err
		}
		if c.Metrics, err = r.MetricCount(); err != nil {
			return c, err
		}
		for rm, err := range r.ResourceMetrics() {
			if err != nil {
				return c, err
			}
			n, err := rm.DataPointCount()
			if err != nil {
				return c, err
			}
			m, err := rm.MetricCount()
			if err != nil {
				return c, err
			}
			c.PerRes = append(c.PerRes, n, m)
			for sm, err := range rm.ScopeMetrics() {
				if err != nil {
					return c, err
				}
				n, err := sm.DataPointCount()
				if err != nil {
					return c, err
				}
				m, err := sm.MetricCount()
				if err != nil {
					return c, err
				}
				c.PerScope = append(c.PerScope, n, m)
			}
		}
	}
	return c, nil
}

// pdataCounts computes the same counts from pdata; ok is false when pdata
// rejects the input.
func pdataCounts(s otlpwire.Signal, b []byte) (c counts, ok bool) {
	switch s {
	case otlpwire.SignalLogs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			return c, false
		}
		c.Resources, c.Total = ld.ResourceLogs().Len(), ld.LogRecordCount()
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			n := 0
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				k := rl.ScopeLogs().At(j).LogRecords().Len()
				c.PerScope = append(c.PerScope, k)
				n += k
			}
			c.PerRes = append(c.PerRes, n)
		}
	case otlpwire.SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			return c, false
		}
		c.Resources, c.Total = td.ResourceSpans().Len(), td.SpanCount()
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			n := 0
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				k := rs.ScopeSpans().At(j).Spans().Len()
				c.PerScope = append(c.PerScope, k)
				n += k
			}
			c.PerRes = append(c.PerRes, n)
		}
	case otlpwire.SignalMetrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		if err != nil {
			return c, false
		}
		c.Resources, c.Total, c.Metrics = md.ResourceMetrics().Len(), md.DataPointCount(), md.MetricCount()
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			n, m := 0, 0
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				sm := rm.ScopeMetrics().At(j)
				k := 0
				for q := 0; q < sm.Metrics().Len(); q++ {
					k += metricPoints(sm.Metrics().At(q))
				}
				c.PerScope = append(c.PerScope, k, sm.Metrics().Len())
				n += k
				m += sm.Metrics().Len()
			}
			c.PerRes = append(c.PerRes, n, m)
		}
	}
	return c, true
}

func metricPoints(m pmetric.Metric) int {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints().Len()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints().Len()
	case pmetric.MetricTypeHistogram:
		return m.Histogram().DataPoints().Len()
	case pmetric.MetricTypeExponentialHistogram:
		return m.ExponentialHistogram().DataPoints().Len()
	case pmetric.MetricTypeSummary:
		return m.Summary().DataPoints().Len()
	}
	return 0
}

func TestEquivalenceCounts(t *testing.T) {
	n := equivSeeds(t)
	for _, s := range signals {
		for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
			t.Run(fmt.Sprintf("signal=%s/order=%s", s, o), func(t *testing.T) {
				for seed := range uint64(n) {
					b := randomRequest(seed, s, o)
					want, ok := pdataCounts(s, b)
					if !ok {
						t.Fatalf("seed %d: pdata rejects generated request", seed)
					}
					got, err := wireCounts(s, b)
					if err != nil {
						t.Fatalf("seed %d: %v", seed, err)
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Fatalf("seed %d: counts = %+v, pdata %+v", seed, got, want)
					}
				}
			})
		}
	}
}

// resourceRequests returns each resource of b as a standalone request, as
// pdata builds it (CopyTo into a new request, then marshal).
func pdataResourceRequests(s otlpwire.Signal, b []byte) ([][]byte, error) {
	var out [][]byte
	switch s {
	case otlpwire.SignalLogs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			return nil, err
		}
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			one := plog.NewLogs()
			ld.ResourceLogs().At(i).CopyTo(one.ResourceLogs().AppendEmpty())
			p, err := (&plog.ProtoMarshaler{}).MarshalLogs(one)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	case otlpwire.SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			return nil, err
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			one := ptrace.NewTraces()
			td.ResourceSpans().At(i).CopyTo(one.ResourceSpans().AppendEmpty())
			p, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(one)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	case otlpwire.SignalMetrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		if err != nil {
			return nil, err
		}
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			one := pmetric.NewMetrics()
			md.ResourceMetrics().At(i).CopyTo(one.ResourceMetrics().AppendEmpty())
			p, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(one)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// wireResourceRequests splits b with AppendTo, checking WriteTo agrees.
func wireResourceRequests(t *testing.T, s otlpwire.Signal, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	add := func(app func([]byte) []byte, wr func(*bytes.Buffer) (int64, error)) {
		one := app(nil)
		var buf bytes.Buffer
		n, err := wr(&buf)
		if err != nil || int(n) != len(one) || !bytes.Equal(buf.Bytes(), one) {
			t.Fatalf("WriteTo = %d, %v; differs from AppendTo (%d bytes)", n, err, len(one))
		}
		out = append(out, one)
	}
	var err error
	switch s {
	case otlpwire.SignalLogs:
		for rl, e := range otlpwire.LogsRequest(b).ResourceLogs() {
			if err = e; e != nil {
				break
			}
			add(rl.AppendTo, func(w *bytes.Buffer) (int64, error) { return rl.WriteTo(w) })
		}
	case otlpwire.SignalTraces:
		for rs, e := range otlpwire.TracesRequest(b).ResourceSpans() {
			if err = e; e != nil {
				break
			}
			add(rs.AppendTo, func(w *bytes.Buffer) (int64, error) { return rs.WriteTo(w) })
		}
	case otlpwire.SignalMetrics:
		for rm, e := range otlpwire.MetricsRequest(b).ResourceMetrics() {
			if err = e; e != nil {
				break
			}
			add(rm.AppendTo, func(w *bytes.Buffer) (int64, error) { return rm.WriteTo(w) })
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// canonical re-marshals a request with pdata, so that two requests holding
// the same data compare equal byte for byte.
func canonical(s otlpwire.Signal, b []byte) ([]byte, error) {
	switch s {
	case otlpwire.SignalLogs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			return nil, err
		}
		return (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	case otlpwire.SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			return nil, err
		}
		return (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	}
	md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
	if err != nil {
		return nil, err
	}
	return (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
}

func TestEquivalenceResourceSplit(t *testing.T) {
	n := equivSeeds(t)
	for _, s := range signals {
		for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
			t.Run(fmt.Sprintf("signal=%s/order=%s", s, o), func(t *testing.T) {
				for seed := range uint64(n) {
					b := randomRequest(seed, s, o)
					want, err := pdataResourceRequests(s, b)
					if err != nil {
						t.Fatal(err)
					}
					got := wireResourceRequests(t, s, b)
					if len(got) != len(want) {
						t.Fatalf("seed %d: %d resources, pdata %d", seed, len(got), len(want))
					}
					for i := range got {
						c, err := canonical(s, got[i])
						if err != nil {
							t.Fatalf("seed %d resource %d: pdata rejects AppendTo output: %v", seed, i, err)
						}
						if !bytes.Equal(c, want[i]) {
							t.Fatalf("seed %d resource %d: AppendTo output differs from the original resource", seed, i)
						}
					}
				}
			})
		}
	}
}

// flatRecords renders each record of a request with its resource, scope
// (and metric) as one pdata JSON document, in order.
func flatRecords(t *testing.T, s otlpwire.Signal, b []byte) []string {
	t.Helper()
	var out []string
	switch s {
	case otlpwire.SignalLogs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				sl := rl.ScopeLogs().At(j)
				for k := 0; k < sl.LogRecords().Len(); k++ {
					one := plog.NewLogs()
					orl := one.ResourceLogs().AppendEmpty()
					rl.Resource().CopyTo(orl.Resource())
					orl.SetSchemaUrl(rl.SchemaUrl())
					osl := orl.ScopeLogs().AppendEmpty()
					sl.Scope().CopyTo(osl.Scope())
					osl.SetSchemaUrl(sl.SchemaUrl())
					sl.LogRecords().At(k).CopyTo(osl.LogRecords().AppendEmpty())
					j, _ := (&plog.JSONMarshaler{}).MarshalLogs(one)
					out = append(out, string(j))
				}
			}
		}
	case otlpwire.SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					one := ptrace.NewTraces()
					ors := one.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(ors.Resource())
					ors.SetSchemaUrl(rs.SchemaUrl())
					oss := ors.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(oss.Scope())
					oss.SetSchemaUrl(ss.SchemaUrl())
					ss.Spans().At(k).CopyTo(oss.Spans().AppendEmpty())
					j, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
					out = append(out, string(j))
				}
			}
		}
	case otlpwire.SignalMetrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				sm := rm.ScopeMetrics().At(j)
				for k := 0; k < sm.Metrics().Len(); k++ {
					m := sm.Metrics().At(k)
					for p := 0; p < metricPoints(m); p++ {
						one := pmetric.NewMetrics()
						orm := one.ResourceMetrics().AppendEmpty()
						rm.Resource().CopyTo(orm.Resource())
						orm.SetSchemaUrl(rm.SchemaUrl())
						osm := orm.ScopeMetrics().AppendEmpty()
						sm.Scope().CopyTo(osm.Scope())
						osm.SetSchemaUrl(sm.SchemaUrl())
						om := osm.Metrics().AppendEmpty()
						m.CopyTo(om)
						keepPoint(om, p)
						j, _ := (&pmetric.JSONMarshaler{}).MarshalMetrics(one)
						out = append(out, string(j))
					}
				}
			}
		}
	}
	return out
}

// keepPoint removes every data point of m but the p-th.
func keepPoint(m pmetric.Metric, p int) {
	i := 0
	keep := func() bool { r := i != p; i++; return r }
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		m.Gauge().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { return keep() })
	case pmetric.MetricTypeSum:
		m.Sum().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { return keep() })
	case pmetric.MetricTypeHistogram:
		m.Histogram().DataPoints().RemoveIf(func(pmetric.HistogramDataPoint) bool { return keep() })
	case pmetric.MetricTypeExponentialHistogram:
		m.ExponentialHistogram().DataPoints().RemoveIf(func(pmetric.ExponentialHistogramDataPoint) bool { return keep() })
	case pmetric.MetricTypeSummary:
		m.Summary().DataPoints().RemoveIf(func(pmetric.SummaryDataPoint) bool { return keep() })
	}
}

func splitWith(s *otlpwire.Splitter, sig otlpwire.Signal, b []byte) ([][]byte, error) {
	var out [][]byte
	keep := func(c []byte, err error) error {
		if err != nil {
			return err
		}
		out = append(out, slices.Clone(c))
		return nil
	}
	switch sig {
	case otlpwire.SignalLogs:
		for c, err := range s.SplitLogs(b) {
			if err := keep(c, err); err != nil {
				return out, err
			}
		}
	case otlpwire.SignalTraces:
		for c, err := range s.SplitTraces(b) {
			if err := keep(c, err); err != nil {
				return out, err
			}
		}
	case otlpwire.SignalMetrics:
		for c, err := range s.SplitMetrics(b) {
			if err := keep(c, err); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

func TestEquivalenceSplitter(t *testing.T) {
	n := equivSeeds(t)
	for _, s := range signals {
		for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
			t.Run(fmt.Sprintf("signal=%s/order=%s", s, o), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(s), uint64(o)))
				for seed := range uint64(n) {
					b := randomRequest(seed, s, o)
					maxRec := 1 + r.IntN(6)
					maxBytes := 200 + r.IntN(2000)
					var opts []otlpwire.SplitOption
					if r.IntN(3) > 0 {
						opts = append(opts, otlpwire.WithMaxRecords(maxRec))
					} else {
						maxRec = 0
					}
					if r.IntN(3) > 0 {
						opts = append(opts, otlpwire.WithMaxBytes(maxBytes))
					} else {
						maxBytes = 0
					}
					sp, err := otlpwire.NewSplitter(opts...)
					if err != nil {
						t.Fatal(err)
					}
					chunks, err := splitWith(sp, s, b)
					if err != nil {
						t.Fatalf("seed %d: %v", seed, err)
					}
					var got []string
					for _, c := range chunks {
						cnt, ok := pdataCounts(s, c)
						if !ok {
							t.Fatalf("seed %d: pdata rejects a chunk", seed)
						}
						if cnt.Total == 0 || (maxRec > 0 && cnt.Total > maxRec) {
							t.Fatalf("seed %d: chunk with %d records, max %d", seed, cnt.Total, maxRec)
						}
						if maxBytes > 0 && len(c) > maxBytes && cnt.Total > 1 {
							t.Fatalf("seed %d: chunk of %d bytes and %d records, max %d bytes", seed, len(c), cnt.Total, maxBytes)
						}
						if err := s.Validate(c); err != nil {
							t.Fatalf("seed %d: chunk fails Validate: %v", seed, err)
						}
						got = append(got, flatRecords(t, s, c)...)
					}
					want := flatRecords(t, s, b)
					if !slices.Equal(got, want) {
						t.Fatalf("seed %d (max %d records, %d bytes): %d records after split, %d before, or they differ", seed, maxRec, maxBytes, len(got), len(want))
					}
				}
			})
		}
	}
}
