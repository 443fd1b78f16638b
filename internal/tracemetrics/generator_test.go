package tracemetrics

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// spanDef is a span of a test request.
type spanDef struct {
	name         string
	kind         ptrace.SpanKind
	id, parent   byte // span ids 0x..id, 0 for none
	ms           int
	err          bool
	attrs        map[string]any
	resourceAttr map[string]any
}

// traces is an OTLP traces request of one trace: spans by resource
// (service.name, then other attributes), pdata as the test's encoder.
func traces(t *testing.T, byService map[string][]spanDef, resourceAttrs map[string]map[string]any) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	for _, svc := range slices.Sorted(func(yield func(string) bool) {
		for s := range byService {
			if !yield(s) {
				return
			}
		}
	}) {
		rs := td.ResourceSpans().AppendEmpty()
		if svc != "" {
			rs.Resource().Attributes().PutStr("service.name", svc)
		}
		if err := rs.Resource().Attributes().FromRaw(merge(rs.Resource().Attributes().AsRaw(), resourceAttrs[svc])); err != nil {
			t.Fatal(err)
		}
		ss := rs.ScopeSpans().AppendEmpty()
		for _, d := range byService[svc] {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			sp.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, d.id})
			if d.parent != 0 {
				sp.SetParentSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 0, d.parent})
			}
			sp.SetName(d.name)
			sp.SetKind(d.kind)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(t0))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(d.ms) * time.Millisecond)))
			if d.err {
				sp.Status().SetCode(ptrace.StatusCodeError)
			}
			if err := sp.Attributes().FromRaw(d.attrs); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func merge(a, b map[string]any) map[string]any {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// render writes a metrics request as sorted lines: metric, resource
// service, point attributes, then the value (count, sum, bucket counts).
// The zero points a first flush holds (at their start time) are left
// out unless zeros.
func render(t *testing.T, req []byte, zeros bool) []string {
	t.Helper()
	r := pmetricotlp.NewExportRequest()
	if err := r.UnmarshalProto(req); err != nil {
		t.Fatalf("the request does not decode: %v", err)
	}
	var out []string
	rms := r.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		svc := ""
		if v, ok := rm.Resource().Attributes().Get("service.name"); ok {
			svc = v.AsString()
		}
		for j := range rm.ScopeMetrics().Len() {
			sm := rm.ScopeMetrics().At(j)
			for k := range sm.Metrics().Len() {
				m := sm.Metrics().At(k)
				prefix := fmt.Sprintf("%s %s %s[%s]", sm.Scope().Name(), svc, m.Name(), m.Unit())
				switch m.Type() {
				case pmetric.MetricTypeSum:
					if !m.Sum().IsMonotonic() || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
						t.Errorf("%s: not a monotonic cumulative sum", m.Name())
					}
					for p := range m.Sum().DataPoints().Len() {
						dp := m.Sum().DataPoints().At(p)
						if dp.Timestamp() == dp.StartTimestamp() && !zeros {
							continue
						}
						out = append(out, fmt.Sprintf("%s %v = %d", prefix, dp.Attributes().AsRaw(), dp.IntValue()))
					}
				case pmetric.MetricTypeHistogram:
					for p := range m.Histogram().DataPoints().Len() {
						dp := m.Histogram().DataPoints().At(p)
						if dp.Timestamp() == dp.StartTimestamp() && !zeros {
							continue
						}
						out = append(out, fmt.Sprintf("%s %v = %d %g %v", prefix, dp.Attributes().AsRaw(), dp.Count(), dp.Sum(), dp.BucketCounts().AsRaw()))
					}
				default:
					t.Errorf("%s: type %s", m.Name(), m.Type())
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestGraphAndSpanMetrics: one trace across frontend and backend, worked
// out by hand from the connectors' rules: a client/server pair (the
// client failed), a database call, a call to an uninstrumented peer and a
// root server span; the span-metric series and the service-graph edges,
// with their buckets, after the edges' TTL.
func TestGraphAndSpanMetrics(t *testing.T) {
	cfg := DefaultConfig()
	cfg.InstanceID = "node-1"
	g, err := New(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	req := traces(t, map[string][]spanDef{
		"frontend": {
			{name: "GET /", kind: ptrace.SpanKindServer, id: 1, ms: 5},
			{name: "call backend", kind: ptrace.SpanKindClient, id: 2, parent: 1, ms: 12, err: true},
		},
		"backend": {
			{name: "handle", kind: ptrace.SpanKindServer, id: 3, parent: 2, ms: 8},
			{name: "query", kind: ptrace.SpanKindClient, id: 4, parent: 3, ms: 3, attrs: map[string]any{"db.system": "postgresql", "db.name": "orders"}},
			{name: "call payments", kind: ptrace.SpanKindClient, id: 5, parent: 3, ms: 50, attrs: map[string]any{"peer.service": "payments"}},
			{name: "work", kind: ptrace.SpanKindInternal, id: 6, parent: 3, ms: 1},
		},
		"": {{name: "no service", kind: ptrace.SpanKindServer, id: 7, ms: 1}},
	}, map[string]map[string]any{"frontend": {"service.instance.id": "i-1"}})
	if err := g.Consume("default", req, t0); err != nil {
		t.Fatal(err)
	}
	g.Expire(t0.Add(time.Second)) // before the TTL: nothing expires
	if st := g.Stats(); st.Expired != 0 || st.Spans != 6 {
		t.Errorf("stats before the TTL: %+v", st)
	}
	g.Expire(t0.Add(3 * time.Second))
	var got []string
	var tenants []string
	if err := g.Flush(t0.Add(3*time.Second), true, func(tenant string, req []byte) error {
		tenants = append(tenants, tenant)
		got = render(t, req, false)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	sm := func(svc, name, kind, status string) string {
		return fmt.Sprintf("map[collector.instance.id:node-1 service.name:%s span.kind:SPAN_KIND_%s span.name:%s status.code:STATUS_CODE_%s]", svc, kind, name, status)
	}
	// Bounds in ms: 2 4 6 8 10 50 100 ...; in s: 0.002 0.004 0.006 0.008 0.01 0.05 ...
	want := []string{
		"spanmetricsconnector backend traces.span.metrics.calls[] " + sm("backend", "call payments", "CLIENT", "UNSET") + " = 1",
		"spanmetricsconnector backend traces.span.metrics.calls[] " + sm("backend", "handle", "SERVER", "UNSET") + " = 1",
		"spanmetricsconnector backend traces.span.metrics.calls[] " + sm("backend", "query", "CLIENT", "UNSET") + " = 1",
		"spanmetricsconnector backend traces.span.metrics.calls[] " + sm("backend", "work", "INTERNAL", "UNSET") + " = 1",
		"spanmetricsconnector backend traces.span.metrics.duration[ms] " + sm("backend", "call payments", "CLIENT", "UNSET") + " = 1 50 [0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0]",
		"spanmetricsconnector backend traces.span.metrics.duration[ms] " + sm("backend", "handle", "SERVER", "UNSET") + " = 1 8 [0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"spanmetricsconnector backend traces.span.metrics.duration[ms] " + sm("backend", "query", "CLIENT", "UNSET") + " = 1 3 [0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"spanmetricsconnector backend traces.span.metrics.duration[ms] " + sm("backend", "work", "INTERNAL", "UNSET") + " = 1 1 [1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"spanmetricsconnector frontend traces.span.metrics.calls[] " + sm("frontend", "GET /", "SERVER", "UNSET") + " = 1",
		"spanmetricsconnector frontend traces.span.metrics.calls[] " + sm("frontend", "call backend", "CLIENT", "ERROR") + " = 1",
		"spanmetricsconnector frontend traces.span.metrics.duration[ms] " + sm("frontend", "GET /", "SERVER", "UNSET") + " = 1 5 [0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"spanmetricsconnector frontend traces.span.metrics.duration[ms] " + sm("frontend", "call backend", "CLIENT", "ERROR") + " = 1 12 [0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_client[s] map[client:backend connection_type:database failed:false server:orders] = 1 0.003 [0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_client[s] map[client:backend connection_type:virtual_node failed:false server:payments] = 1 0.05 [0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_client[s] map[client:frontend failed:true server:backend] = 1 0.012 [0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_client[s] map[client:user connection_type:virtual_node failed:false server:frontend] = 1 0 [1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_failed_total[] map[client:frontend failed:true server:backend] = 1",
		"traces_service_graph  traces_service_graph_request_server[s] map[client:backend connection_type:database failed:false server:orders] = 1 0.003 [0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_server[s] map[client:backend connection_type:virtual_node failed:false server:payments] = 1 0 [1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_server[s] map[client:frontend failed:true server:backend] = 1 0.008 [0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_server[s] map[client:user connection_type:virtual_node failed:false server:frontend] = 1 0.005 [0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0]",
		"traces_service_graph  traces_service_graph_request_total[] map[client:backend connection_type:database failed:false server:orders] = 1",
		"traces_service_graph  traces_service_graph_request_total[] map[client:backend connection_type:virtual_node failed:false server:payments] = 1",
		"traces_service_graph  traces_service_graph_request_total[] map[client:frontend failed:true server:backend] = 1",
		"traces_service_graph  traces_service_graph_request_total[] map[client:user connection_type:virtual_node failed:false server:frontend] = 1",
	}
	if strings.Join(tenants, ",") != "default" {
		t.Errorf("tenants flushed: %v", tenants)
	}
	if d := diffLines(got, want); d != "" {
		t.Errorf("series:\n%s", d)
	}
	if st := g.Stats(); st.Spans != 6 || st.Expired != 2 {
		t.Errorf("stats: %+v", st)
	}
}

func diffLines(got, want []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			fmt.Fprintf(&b, "missing: %s\n", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			fmt.Fprintf(&b, "extra:   %s\n", g)
		}
	}
	return b.String()
}

// TestBoundsAndFlushes: past MaxSeries new dimension sets go to the
// overflow series; past MaxEdges spans are not paired; extra dimensions
// come from the span, else the resource; a series' first write holds a
// zero point at its start, later ones not; a failed write is written
// again, zero point included, at the next flush; tenants apart.
func TestBoundsAndFlushes(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxSeries, cfg.MaxEdges = 2, 1
	cfg.Dimensions = []string{"http.route", "deployment.environment"}
	g, err := New(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	req := traces(t, map[string][]spanDef{"api": {
		{name: "a", kind: ptrace.SpanKindClient, id: 1, ms: 1, attrs: map[string]any{"http.route": "/a"}},
		{name: "b", kind: ptrace.SpanKindClient, id: 2, ms: 1, attrs: map[string]any{"deployment.environment": "canary"}},
		{name: "c", kind: ptrace.SpanKindInternal, id: 3, ms: 1},
		{name: "d", kind: ptrace.SpanKindInternal, id: 4, ms: 1},
	}}, map[string]map[string]any{"api": {"deployment.environment": "prod"}})
	if err := g.Consume("a", req, t0); err != nil {
		t.Fatal(err)
	}
	if err := g.Consume("b", req, t0); err != nil {
		t.Fatal(err)
	}
	st := g.Stats()
	if st.Overflow != 4 || st.EdgesDropped != 2 {
		t.Errorf("stats: %+v, want 4 spans in overflow (2 a tenant) and 2 spans not paired", st)
	}
	failA := true
	var got map[string][]string
	all := true
	flush := func(at time.Duration) {
		got = map[string][]string{}
		err := g.Flush(t0.Add(at), all, func(tenant string, req []byte) error {
			got[tenant] = render(t, req, true)
			if tenant == "a" && failA {
				return fmt.Errorf("store refused")
			}
			return nil
		})
		if (err != nil) != failA {
			t.Errorf("flush at %v: %v", at, err)
		}
	}
	flush(5 * time.Second)
	first := got["b"]
	// Two series, each calls and duration, each a zero point and a
	// value; the overflow series likewise.
	if len(first) != 12 {
		t.Fatalf("first flush of b: %d points:\n%s", len(first), strings.Join(first, "\n"))
	}
	for _, want := range []string{
		"spanmetricsconnector api traces.span.metrics.calls[] map[deployment.environment:prod http.route:/a service.name:api span.kind:SPAN_KIND_CLIENT span.name:a status.code:STATUS_CODE_UNSET] = 1",
		"spanmetricsconnector api traces.span.metrics.calls[] map[deployment.environment:canary service.name:api span.kind:SPAN_KIND_CLIENT span.name:b status.code:STATUS_CODE_UNSET] = 1",
		"spanmetricsconnector  traces.span.metrics.calls[] map[otel.metric.overflow:true] = 2",
		"spanmetricsconnector  traces.span.metrics.calls[] map[otel.metric.overflow:true] = 0",
	} {
		if !slices.Contains(first, want) {
			t.Errorf("first flush of b lacks %s:\n%s", want, strings.Join(first, "\n"))
		}
	}
	if err := g.Consume("b", req, t0.Add(6*time.Second)); err != nil {
		t.Fatal(err)
	}
	failA = false
	flush(10 * time.Second)
	if n := len(got["b"]); n != 6 {
		t.Errorf("second flush of b: %d points, want 6 (no zero points):\n%s", n, strings.Join(got["b"], "\n"))
	}
	if !slices.Contains(got["b"], "spanmetricsconnector  traces.span.metrics.calls[] map[otel.metric.overflow:true] = 4") {
		t.Errorf("second flush of b:\n%s", strings.Join(got["b"], "\n"))
	}
	if n := len(got["a"]); n != 12 {
		t.Errorf("a's flush after a failed one: %d points, want 12 (zero points again):\n%s", n, strings.Join(got["a"], "\n"))
	}
	// Not all: nothing counted since, nothing written; then the one
	// series counted alone.
	all = false
	flush(15 * time.Second)
	if len(got) != 0 {
		t.Errorf("a flush of the series counted since, none: %v", got)
	}
	one := traces(t, map[string][]spanDef{"api": {{name: "c", kind: ptrace.SpanKindInternal, id: 9, ms: 1}}},
		map[string]map[string]any{"api": {"deployment.environment": "prod"}})
	if err := g.Consume("b", one, t0.Add(16*time.Second)); err != nil {
		t.Fatal(err)
	}
	flush(20 * time.Second)
	if len(got) != 1 || len(got["b"]) != 2 || !slices.Contains(got["b"], "spanmetricsconnector  traces.span.metrics.calls[] map[otel.metric.overflow:true] = 5") {
		t.Errorf("the series counted since: %v", got)
	}
}

// TestResourceOrder: the same resource attributes in another order are
// the same resource, and so the same series.
func TestResourceOrder(t *testing.T) {
	g, err := New(DefaultConfig(), t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, order := range [][]string{{"service.name", "host.name", "k8s.pod.name"}, {"k8s.pod.name", "host.name", "service.name"}} {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		for _, k := range order {
			rs.Resource().Attributes().PutStr(k, map[string]string{"service.name": "api", "host.name": "h", "k8s.pod.name": "p"}[k])
		}
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetName("op")
		b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Consume("t", b, t0); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	g.Flush(t0.Add(time.Second), true, func(_ string, req []byte) error { got = render(t, req, false); return nil }) //nolint:errcheck
	want := "spanmetricsconnector api traces.span.metrics.calls[] map[service.name:api span.kind:SPAN_KIND_UNSPECIFIED span.name:op status.code:STATUS_CODE_UNSET] = 2"
	if !slices.Contains(got, want) || len(got) != 2 {
		t.Errorf("got:\n%s\nwant one series of 2 calls (and its histogram)", strings.Join(got, "\n"))
	}
}

// TestCardinalityLimit: 100,000 distinct span names against a bound of
// 10,000 series a tenant: 10,000 series, the rest in the overflow series
// and its counter, and the state's heap bounded (under 32 MiB after a
// collection, whatever the number of names).
func TestCardinalityLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxSeries = 10_000
	g, err := New(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const names, batch = 100_000, 1000
	for b := range names / batch {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "api")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range batch {
			sp := spans.AppendEmpty()
			sp.SetName(fmt.Sprintf("GET /item/%d", b*batch+i))
			sp.SetKind(ptrace.SpanKindServer)
		}
		req, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Consume("t", req, t0); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	st := g.Stats()
	if st.Spans != names || st.Overflow != names-10_000 {
		t.Errorf("stats: %+v, want %d spans, %d in the overflow series", st, names, names-10_000)
	}
	series, overflow := 0, uint64(0)
	err = g.Flush(t0.Add(time.Second), true, func(_ string, req []byte) error {
		r := pmetricotlp.NewExportRequest()
		if err := r.UnmarshalProto(req); err != nil {
			return err
		}
		rms := r.Metrics().ResourceMetrics()
		for i := range rms.Len() {
			m := rms.At(i).ScopeMetrics().At(0).Metrics().At(0) // calls
			for p := range m.Sum().DataPoints().Len() {
				dp := m.Sum().DataPoints().At(p)
				if dp.Timestamp() == dp.StartTimestamp() {
					continue // the zero point
				}
				if _, ok := dp.Attributes().Get("otel.metric.overflow"); ok {
					overflow = uint64(dp.IntValue())
					continue
				}
				series++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if series != 10_000 || overflow != names-10_000 {
		t.Errorf("flushed %d series and an overflow of %d, want 10000 and %d", series, overflow, names-10_000)
	}
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 32<<20 {
		t.Errorf("the state holds %d MiB of heap for 10,000 series", grown>>20)
	}
	runtime.KeepAlive(g)
}
