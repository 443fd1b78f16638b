package synth

import (
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The realistic generators keep the shapes their doc comments promise.

func TestLogsShape(t *testing.T) {
	d, n, _ := decode(t, otlpwire.SignalLogs, Logs(Config{Seed: 5, Resources: 4, ScopesPerResource: 2, RecordsPerScope: 250}))
	bodyBytes, withTrace := 0, 0
	severities := map[string]int{}
	for _, rl := range d.logs.ResourceLogs().All() {
		if k := rl.Resource().Attributes().Len(); k < 12 {
			t.Errorf("resource has %d attributes, want at least 12", k)
		}
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				bodyBytes += len(lr.Body().Str())
				if k := lr.Attributes().Len(); k < 10 || k > 20 {
					t.Fatalf("record has %d attributes, want 10-20", k)
				}
				if !lr.TraceID().IsEmpty() && !lr.SpanID().IsEmpty() {
					withTrace++
				}
				severities[lr.SeverityText()]++
			}
		}
	}
	if avg := float64(bodyBytes) / float64(n); avg < 40 || avg > 55 {
		t.Errorf("bodies average %.1f bytes, want about 47", avg)
	}
	if withTrace < n*7/10 || withTrace == n {
		t.Errorf("%d of %d records have trace ids, want most but not all", withTrace, n)
	}
	if len(severities) < 4 {
		t.Errorf("severities %v, want at least 4", severities)
	}
}

func TestTracesShape(t *testing.T) {
	d, n, _ := decode(t, otlpwire.SignalTraces, Traces(Config{Seed: 5, Resources: 4, ScopesPerResource: 2, RecordsPerScope: 250}))
	kinds := map[ptrace.SpanKind]int{}
	statuses := map[ptrace.StatusCode]int{}
	roots, events, links := 0, 0, 0
	for _, rs := range d.traces.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				kinds[sp.Kind()]++
				statuses[sp.Status().Code()]++
				if sp.ParentSpanID().IsEmpty() {
					roots++
				}
				events += sp.Events().Len()
				links += sp.Links().Len()
				if sp.EndTimestamp() <= sp.StartTimestamp() {
					t.Fatalf("span %q ends before it starts", sp.Name())
				}
			}
		}
	}
	if len(kinds) != 5 || len(statuses) != 3 || roots == 0 || roots > n/2 || events == 0 || links == 0 {
		t.Errorf("%d spans: kinds %v, statuses %v, %d roots, %d events, %d links", n, kinds, statuses, roots, events, links)
	}
}

func TestMetricsShape(t *testing.T) {
	d, n, _ := decode(t, otlpwire.SignalMetrics, Metrics(Config{Seed: 5, Resources: 2, ScopesPerResource: 1, RecordsPerScope: 1000}))
	types := map[pmetric.MetricType]int{}
	names := map[string]bool{}
	monotonic := map[bool]int{}
	for _, rm := range d.metrics.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				types[m.Type()]++
				names[m.Name()] = true
				if m.Type() == pmetric.MetricTypeSum {
					monotonic[m.Sum().IsMonotonic()]++
				}
				series := map[string]bool{}
				for _, p := range metricPoints(m) {
					attrs, ok := p()
					if attrs.Len() != 40 || !ok {
						t.Fatalf("%s: point with %d attributes (want 40) or no timestamps", m.Name(), attrs.Len())
					}
					pod, _ := attrs.Get("pod")
					container, _ := attrs.Get("container")
					key := pod.Str() + "/" + container.Str()
					if series[key] {
						t.Fatalf("%s: series %s twice", m.Name(), key)
					}
					series[key] = true
				}
			}
		}
	}
	if n != 2000 || len(types) != 5 || len(names) != 40 || len(monotonic) != 2 {
		t.Errorf("%d points, types %v, %d names, monotonic %v", n, types, len(names), monotonic)
	}
}
