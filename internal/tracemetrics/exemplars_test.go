package tracemetrics

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// exemplarsOf decodes a flushed request: each span-metric point's
// exemplars, as "metric span_name: span id byte/duration ms" lines, with
// their timestamps checked to be the point's.
func exemplarsOf(t *testing.T, req []byte) []string {
	t.Helper()
	r := pmetricotlp.NewExportRequest()
	if err := r.UnmarshalProto(req); err != nil {
		t.Fatal(err)
	}
	var out []string
	add := func(metric string, attrs map[string]any, ts uint64, ex pmetric.ExemplarSlice) {
		for i := range ex.Len() {
			e := ex.At(i)
			if uint64(e.Timestamp()) != ts {
				t.Errorf("%s: exemplar at %d, its point at %d", metric, e.Timestamp(), ts)
			}
			out = append(out, fmt.Sprintf("%s %v: %s %d/%g", metric, attrs["span.name"], e.TraceID(), e.SpanID()[7], e.DoubleValue()))
		}
	}
	rms := r.Metrics().ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				m := ms.At(k)
				switch m.Type() {
				case pmetric.MetricTypeSum:
					for p := range m.Sum().DataPoints().Len() {
						dp := m.Sum().DataPoints().At(p)
						add(m.Name(), dp.Attributes().AsRaw(), uint64(dp.Timestamp()), dp.Exemplars())
					}
				case pmetric.MetricTypeHistogram:
					for p := range m.Histogram().DataPoints().Len() {
						dp := m.Histogram().DataPoints().At(p)
						add(m.Name(), dp.Attributes().AsRaw(), uint64(dp.Timestamp()), dp.Exemplars())
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestExemplars: with Exemplars on, a span-metric point carries the
// trace id, span id and duration (ms) of the spans it counted since its
// last write, at most MaxExemplarsPerPoint, on its calls and duration
// points alike, timed at the write; a write that fails keeps them for
// the next; a written one does not hold them again; the overflow series
// and the service graph hold none; with Exemplars off there are none.
func TestExemplars(t *testing.T) {
	spans := func(n int, first byte) []byte {
		var defs []spanDef
		for i := range n {
			defs = append(defs, spanDef{name: "GET /", kind: ptrace.SpanKindServer, id: first + byte(i), ms: 10 * (i + 1)})
		}
		return traces(t, map[string][]spanDef{"api": defs}, nil)
	}
	flush := func(g *Generator, at time.Time, fail bool) []byte {
		var got []byte
		err := g.Flush(at, false, func(_ string, req []byte) error {
			got = req
			if fail {
				return errors.New("refused")
			}
			return nil
		})
		if (err != nil) != fail {
			t.Fatalf("flush: %v", err)
		}
		return got
	}
	cfg := DefaultConfig()
	cfg.Exemplars, cfg.MaxExemplarsPerPoint = true, 2
	g, err := New(cfg, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Consume("t", spans(3, 1), t0); err != nil {
		t.Fatal(err)
	}
	const trace = "0102030405060708090a0b0c0d0e0f10"
	want := []string{
		"traces.span.metrics.calls GET /: " + trace + " 1/10", "traces.span.metrics.calls GET /: " + trace + " 2/20",
		"traces.span.metrics.duration GET /: " + trace + " 1/10", "traces.span.metrics.duration GET /: " + trace + " 2/20",
	}
	if got := exemplarsOf(t, flush(g, t0.Add(time.Second), true)); !slices.Equal(got, want) {
		t.Fatalf("exemplars of the first flush (refused):\n%q\nwant\n%q", got, want)
	}
	if got := exemplarsOf(t, flush(g, t0.Add(2*time.Second), false)); !slices.Equal(got, want) {
		t.Fatalf("exemplars written again after a refused write:\n%q\nwant\n%q", got, want)
	}
	if err := g.Consume("t", spans(1, 9), t0); err != nil {
		t.Fatal(err)
	}
	want = []string{"traces.span.metrics.calls GET /: " + trace + " 9/10", "traces.span.metrics.duration GET /: " + trace + " 9/10"}
	if got := exemplarsOf(t, flush(g, t0.Add(3*time.Second), false)); !slices.Equal(got, want) {
		t.Fatalf("exemplars after a written flush:\n%q\nwant\n%q", got, want)
	}

	// Past the series bound, the overflow series: no exemplars there.
	cfg.MaxSeries = 1
	g, _ = New(cfg, t0)
	g.Consume("t", spans(1, 1), t0)
	g.Consume("t", traces(t, map[string][]spanDef{"api": {{name: "other", kind: ptrace.SpanKindServer, id: 5, ms: 1}}}, nil), t0)
	for _, line := range exemplarsOf(t, flush(g, t0.Add(time.Second), false)) {
		if !slices.Contains([]string{"traces.span.metrics.calls GET /: " + trace + " 1/10", "traces.span.metrics.duration GET /: " + trace + " 1/10"}, line) {
			t.Errorf("an exemplar not of GET /'s series: %s", line)
		}
	}

	g, _ = New(DefaultConfig(), t0)
	g.Consume("t", spans(3, 1), t0)
	if got := exemplarsOf(t, flush(g, t0.Add(time.Second), false)); len(got) != 0 {
		t.Errorf("exemplars with Exemplars off: %q", got)
	}
}
