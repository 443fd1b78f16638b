package synth

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var signals = []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces, otlpwire.SignalMetrics}

// decoded is a request decoded by pdata, the oracle.
type decoded struct {
	logs    plog.Logs
	traces  ptrace.Traces
	metrics pmetric.Metrics
}

// decode unmarshals b with pdata and returns the request, its record count
// and pdata's encoding of it.
func decode(tb testing.TB, s otlpwire.Signal, b []byte) (d decoded, count int, canonical []byte) {
	tb.Helper()
	var err error
	switch s {
	case otlpwire.SignalLogs:
		if d.logs, err = (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b); err == nil {
			count = d.logs.LogRecordCount()
			canonical, err = (&plog.ProtoMarshaler{}).MarshalLogs(d.logs)
		}
	case otlpwire.SignalTraces:
		if d.traces, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b); err == nil {
			count = d.traces.SpanCount()
			canonical, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(d.traces)
		}
	case otlpwire.SignalMetrics:
		if d.metrics, err = (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b); err == nil {
			count = d.metrics.DataPointCount()
			canonical, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(d.metrics)
		}
	}
	if err != nil {
		tb.Fatalf("pdata cannot decode %v: %v", s, err)
	}
	return d, count, canonical
}

// checkOrders checks that the Ascending and Descending encodings of one
// request decode to the same data and that each is in its field order.
func checkOrders(t *testing.T, s otlpwire.Signal, asc, desc []byte) {
	t.Helper()
	_, na, ca := decode(t, s, asc)
	_, nd, cd := decode(t, s, desc)
	if na != nd || !bytes.Equal(ca, cd) {
		t.Fatalf("asc and desc decode differently: %d vs %d records, %d vs %d bytes", na, nd, len(ca), len(cd))
	}
	if err := checkFieldOrder(asc, requestMessage(s), Ascending, nil); err != nil {
		t.Fatalf("asc: %v", err)
	}
	if err := checkFieldOrder(desc, requestMessage(s), Descending, nil); err != nil {
		t.Fatalf("desc: %v", err)
	}
}

func TestGenerate(t *testing.T) {
	shapes := []Config{
		{Resources: 1, ScopesPerResource: 1, RecordsPerScope: 1},
		{Resources: 2, ScopesPerResource: 3, RecordsPerScope: 17},
		{Resources: 5, ScopesPerResource: 1, RecordsPerScope: 100},
		{Resources: 1, ScopesPerResource: 2, RecordsPerScope: 0},
		{Resources: 0, ScopesPerResource: 2, RecordsPerScope: 5},
		{Resources: 3, ScopesPerResource: 2, RecordsPerScope: 9, TotalRecords: 1001},
	}
	for _, s := range signals {
		for _, seed := range []int64{0, 1, 42, -7, 1 << 40} {
			for _, cfg := range shapes {
				cfg.Seed = seed
				name := fmt.Sprintf("signal=%v/seed=%d/shape=%dx%dx%d+%d", s, seed, cfg.Resources, cfg.ScopesPerResource, cfg.RecordsPerScope, cfg.TotalRecords)
				t.Run(name, func(t *testing.T) {
					cfg.Order = Ascending
					asc := Generate(s, cfg)
					cfg.Order = Descending
					desc := Generate(s, cfg)
					checkOrders(t, s, asc, desc)
					want := cfg.Resources * cfg.ScopesPerResource * cfg.RecordsPerScope
					if cfg.TotalRecords > 0 {
						want = cfg.TotalRecords
					}
					if _, n, _ := decode(t, s, asc); n != want {
						t.Errorf("%d records, want %d", n, want)
					}
					if again := Generate(s, cfg); !bytes.Equal(again, desc) {
						t.Error("same config, different bytes")
					}
					if want > 0 {
						cfg.Seed++
						if other := Generate(s, cfg); bytes.Equal(other, desc) {
							t.Error("different seeds, same bytes")
						}
					}
				})
			}
		}
	}
}

func TestRealisticFixture(t *testing.T) {
	for _, s := range signals {
		t.Run("signal="+s.String(), func(t *testing.T) {
			asc, desc := RealisticFixture(s, Ascending), RealisticFixture(s, Descending)
			checkOrders(t, s, asc, desc)
			d, n, canonical := decode(t, s, desc)
			if n != 500 {
				t.Errorf("%d records, want 500", n)
			}
			if !bytes.Equal(canonical, desc) {
				t.Errorf("pdata re-encodes the Descending fixture differently (%d vs %d bytes) at byte %d", len(canonical), len(desc), firstDiff(canonical, desc))
			}
			if !bytes.Equal(RealisticFixture(s, Descending), desc) {
				t.Error("RealisticFixture is not deterministic")
			}
			checkFixtureShape(t, s, d)
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// checkFixtureShape checks the documented shape: 5 resources with 8-10
// attributes, one named and versioned scope each, 100 records each with
// timestamps and 4-8 attributes.
func checkFixtureShape(t *testing.T, s otlpwire.Signal, d decoded) {
	t.Helper()
	type container struct {
		res   pcommon.Resource
		scope pcommon.InstrumentationScope
		n     int
		attrs func(i int) (pcommon.Map, bool) // attributes of record i, and whether it has its timestamps
	}
	var cs []container
	switch s {
	case otlpwire.SignalLogs:
		for _, rl := range d.logs.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				lrs := sl.LogRecords()
				cs = append(cs, container{rl.Resource(), sl.Scope(), lrs.Len(), func(i int) (pcommon.Map, bool) {
					r := lrs.At(i)
					return r.Attributes(), r.Timestamp() != 0 && r.ObservedTimestamp() != 0 && !r.TraceID().IsEmpty()
				}})
			}
		}
	case otlpwire.SignalTraces:
		for _, rs := range d.traces.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				spans := ss.Spans()
				cs = append(cs, container{rs.Resource(), ss.Scope(), spans.Len(), func(i int) (pcommon.Map, bool) {
					sp := spans.At(i)
					return sp.Attributes(), sp.StartTimestamp() != 0 && sp.EndTimestamp() > sp.StartTimestamp() && !sp.ParentSpanID().IsEmpty()
				}})
			}
		}
	case otlpwire.SignalMetrics:
		for _, rm := range d.metrics.ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				var points []func() (pcommon.Map, bool)
				for _, m := range sm.Metrics().All() {
					points = append(points, metricPoints(m)...)
				}
				cs = append(cs, container{rm.Resource(), sm.Scope(), len(points), func(i int) (pcommon.Map, bool) { return points[i]() }})
			}
		}
	}
	if len(cs) != 5 {
		t.Fatalf("%d scope containers, want 5 (one per resource)", len(cs))
	}
	for _, c := range cs {
		if n := c.res.Attributes().Len(); n < 8 || n > 10 {
			t.Errorf("resource has %d attributes, want 8-10", n)
		}
		if c.scope.Name() == "" || c.scope.Version() == "" {
			t.Errorf("scope %q %q lacks a name or version", c.scope.Name(), c.scope.Version())
		}
		if c.n != 100 {
			t.Errorf("%d records in a scope, want 100", c.n)
		}
		for i := range c.n {
			attrs, ok := c.attrs(i)
			if n := attrs.Len(); n < 4 || n > 8 {
				t.Fatalf("record %d has %d attributes, want 4-8", i, n)
			}
			if !ok {
				t.Fatalf("record %d lacks a timestamp or id", i)
			}
		}
	}
}

// metricPoints returns, for each data point of m, its attributes and
// whether it has a timestamp.
func metricPoints(m pmetric.Metric) []func() (pcommon.Map, bool) {
	var out []func() (pcommon.Map, bool)
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		for _, p := range m.Gauge().DataPoints().All() {
			out = append(out, func() (pcommon.Map, bool) { return p.Attributes(), p.Timestamp() != 0 })
		}
	case pmetric.MetricTypeSum:
		for _, p := range m.Sum().DataPoints().All() {
			out = append(out, func() (pcommon.Map, bool) { return p.Attributes(), p.Timestamp() != 0 && p.StartTimestamp() != 0 })
		}
	case pmetric.MetricTypeHistogram:
		for _, p := range m.Histogram().DataPoints().All() {
			out = append(out, func() (pcommon.Map, bool) { return p.Attributes(), p.Timestamp() != 0 && p.StartTimestamp() != 0 })
		}
	case pmetric.MetricTypeExponentialHistogram:
		for _, p := range m.ExponentialHistogram().DataPoints().All() {
			out = append(out, func() (pcommon.Map, bool) { return p.Attributes(), p.Timestamp() != 0 && p.StartTimestamp() != 0 })
		}
	case pmetric.MetricTypeSummary:
		for _, p := range m.Summary().DataPoints().All() {
			out = append(out, func() (pcommon.Map, bool) { return p.Attributes(), p.Timestamp() != 0 && p.StartTimestamp() != 0 })
		}
	}
	return out
}

func TestParse(t *testing.T) {
	for _, s := range signals {
		if got, err := otlpwire.ParseSignal(s.String()); err != nil || got != s {
			t.Errorf("ParseSignal(%q) = %v, %v", s, got, err)
		}
	}
	for _, o := range []Order{Ascending, Descending} {
		if got, err := ParseOrder(o.String()); err != nil || got != o {
			t.Errorf("ParseOrder(%q) = %v, %v", o, got, err)
		}
	}
	if _, err := otlpwire.ParseSignal("profiles"); err == nil {
		t.Error("ParseSignal(profiles) succeeded")
	}
	if _, err := ParseOrder("ascending"); err == nil {
		t.Error("ParseOrder(ascending) succeeded")
	}
}

func TestConfigRecords(t *testing.T) {
	cfg := Config{Resources: 3, ScopesPerResource: 4, TotalRecords: 1000}
	total := 0
	for ri := range 3 {
		for si := range 4 {
			n := cfg.records(ri, si)
			if n != 83 && n != 84 {
				t.Errorf("scope %d/%d: %d records, want 83 or 84", ri, si, n)
			}
			total += n
		}
	}
	if total != 1000 {
		t.Errorf("%d records in total, want 1000", total)
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, s := range signals {
		for _, o := range []Order{Ascending, Descending} {
			cfg := Config{Seed: 1, Order: o, Resources: 2, ScopesPerResource: 2, TotalRecords: 1000}
			b.Run(fmt.Sprintf("signal=%v/order=%v/records=1000", s, o), func(b *testing.B) {
				size := 0
				for b.Loop() {
					size = len(Generate(s, cfg))
				}
				b.SetBytes(int64(size))
			})
		}
	}
}

// TestStart: Config.Start moves every timestamp of a request by the same
// amount, and the same Config still gives the same bytes.
func TestStart(t *testing.T) {
	start := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, sig := range []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces, otlpwire.SignalMetrics} {
		t.Run("signal="+sig.String(), func(t *testing.T) {
			cfg := Config{Seed: 5, Resources: 2, ScopesPerResource: 1, TotalRecords: 40, Start: start}
			a, b := Generate(sig, cfg), Generate(sig, cfg)
			if !bytes.Equal(a, b) {
				t.Fatal("the same Config gave different bytes")
			}
			if bytes.Equal(a, Generate(sig, Config{Seed: 5, Resources: 2, ScopesPerResource: 1, TotalRecords: 40})) {
				t.Fatal("Start changed nothing")
			}
		})
	}
	// Every log timestamp is within seconds of Start + seed.
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(Logs(Config{Seed: 5, Resources: 1, ScopesPerResource: 1, TotalRecords: 20, Start: start})); err != nil {
		t.Fatal(err)
	}
	want := start.Add(5 * time.Second)
	rl := req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := range rl.Len() {
		if ts := rl.At(i).Timestamp().AsTime(); ts.After(want) || ts.Before(want.Add(-time.Minute)) {
			if ts.IsZero() || ts.Equal(time.Unix(0, 0)) {
				continue // a record without a timestamp
			}
			t.Errorf("log %d at %v, want within a minute before %v", i, ts, want)
		}
	}
}

// TestRepeatMetrics: with Repeat, consecutive seeds carry the same series
// (metric names and attributes, in the same order) one second apart, and
// their values move: counters grow and some gauge values change.
func TestRepeatMetrics(t *testing.T) {
	type point struct {
		series string
		ts     pcommon.Timestamp
		value  float64
		gauge  bool
	}
	points := func(seed int64) []point {
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(Metrics(Config{Seed: seed, Repeat: true, Resources: 2, ScopesPerResource: 1, TotalRecords: 300})); err != nil {
			t.Fatal(err)
		}
		var out []point
		rms := req.Metrics().ResourceMetrics()
		for i := range rms.Len() {
			sms := rms.At(i).ScopeMetrics()
			for j := range sms.Len() {
				ms := sms.At(j).Metrics()
				for k := range ms.Len() {
					m := ms.At(k)
					var dps pmetric.NumberDataPointSlice
					switch m.Type() {
					case pmetric.MetricTypeGauge:
						dps = m.Gauge().DataPoints()
					case pmetric.MetricTypeSum:
						dps = m.Sum().DataPoints()
					default:
						continue
					}
					for l := range dps.Len() {
						dp := dps.At(l)
						v := dp.DoubleValue()
						if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
							v = float64(dp.IntValue())
						}
						out = append(out, point{
							series: fmt.Sprint(m.Name(), dp.Attributes().AsRaw()),
							ts:     dp.Timestamp(), value: v,
							gauge: m.Type() == pmetric.MetricTypeGauge,
						})
					}
				}
			}
		}
		return out
	}
	// Seed 0 drifts like every other: a gauge moves a little from seed to
	// seed, never by the whole drift amplitude at once.
	p0, p1 := points(0), points(1)
	for i := range p0 {
		if p0[i].gauge && math.Abs(p1[i].value-p0[i].value) > 0.1*math.Abs(p0[i].value)+1e-9 {
			t.Fatalf("point %d (%s): %g at seed 0, %g at seed 1: a jump", i, p0[i].series, p0[i].value, p1[i].value)
		}
	}
	a, b := points(10), points(25)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("seed 10 has %d number points, seed 25 %d", len(a), len(b))
	}
	var gaugesMoved, gauges int
	for i := range a {
		if a[i].series != b[i].series {
			t.Fatalf("point %d: series %s became %s", i, a[i].series, b[i].series)
		}
		if d := b[i].ts - a[i].ts; d < 14e9 || d > 16e9 {
			t.Errorf("point %d: timestamp moved %v over 15 seeds, want about 15s", i, time.Duration(d))
		}
		if a[i].gauge {
			gauges++
			if a[i].value != b[i].value {
				gaugesMoved++
			}
		}
	}
	if gauges == 0 || gaugesMoved < gauges/2 {
		t.Errorf("%d of %d gauge values changed between seeds, want most", gaugesMoved, gauges)
	}
}

// TestNoiseMetrics: with Noise, consecutive seeds still carry the same
// series and counters never go down, but the steps are uneven: the
// time between scrapes varies, and so do a counter's increments, where
// without Noise both are exactly constant.
func TestNoiseMetrics(t *testing.T) {
	type sample struct {
		ts    pcommon.Timestamp
		value float64
	}
	sums := func(seed int64, noise bool) (names []string, out []sample) {
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(Metrics(Config{Seed: seed, Repeat: true, Noise: noise, Resources: 2, ScopesPerResource: 1, TotalRecords: 300})); err != nil {
			t.Fatal(err)
		}
		for _, rm := range req.Metrics().ResourceMetrics().All() {
			for _, sm := range rm.ScopeMetrics().All() {
				for _, m := range sm.Metrics().All() {
					if m.Type() != pmetric.MetricTypeSum || !m.Sum().IsMonotonic() {
						continue
					}
					for _, dp := range m.Sum().DataPoints().All() {
						v := dp.DoubleValue()
						if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
							v = float64(dp.IntValue())
						}
						names = append(names, fmt.Sprint(m.Name(), dp.Attributes().AsRaw()))
						out = append(out, sample{dp.Timestamp(), v})
					}
				}
			}
		}
		return names, out
	}
	for _, noise := range []bool{false, true} {
		var seeds [][]sample
		var names0 []string
		for seed := range int64(6) {
			names, s := sums(seed, noise)
			if seed == 0 {
				names0 = names
			} else if !slices.Equal(names, names0) {
				t.Fatalf("noise=%v seed %d: other series than seed 0", noise, seed)
			}
			seeds = append(seeds, s)
		}
		if len(names0) == 0 {
			t.Fatal("no monotonic sums")
		}
		uneven, unevenTime := 0, 0
		for i := range names0 {
			for s := 1; s < len(seeds); s++ {
				if seeds[s][i].value < seeds[s-1][i].value {
					t.Fatalf("noise=%v %s: %g at seed %d after %g", noise, names0[i], seeds[s][i].value, s, seeds[s-1][i].value)
				}
			}
			d1 := seeds[2][i].value - seeds[1][i].value
			d2 := seeds[3][i].value - seeds[2][i].value
			if math.Abs(d1-d2) > 0.05*max(math.Abs(d1), math.Abs(d2)) {
				uneven++
			}
			if seeds[2][i].ts-seeds[1][i].ts != seeds[3][i].ts-seeds[2][i].ts {
				unevenTime++
			}
		}
		if noise && (uneven < len(names0)/2 || unevenTime < len(names0)/2) {
			t.Errorf("noise: %d of %d counters grew unevenly, %d had uneven scrape intervals, want most", uneven, len(names0), unevenTime)
		}
		if !noise && (unevenTime != 0 || uneven > len(names0)/10) {
			t.Errorf("without noise: %d of %d counters grew unevenly, %d had uneven scrape intervals, want (nearly) none", uneven, len(names0), unevenTime)
		}
	}
}
