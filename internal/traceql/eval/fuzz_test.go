package eval

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// fuzzTrace builds a trace from b: each span takes 4 bytes (its parent,
// which may be itself, a missing span or a cycle; kind and status; an
// attribute's type and value; a duration).
func fuzzTrace(b []byte) *Trace {
	t := &Trace{}
	for i := 0; i+4 <= len(b) && len(t.Spans) < 64; i += 4 {
		n := len(t.Spans)
		s := Span{SpanID: [8]byte{7: byte(n + 1)}, ParentID: [8]byte{7: b[i] % 70},
			Kind: traceql.Kind(b[i+1] % 6), Status: traceql.Status(b[i+1] / 6 % 3),
			StartUnixNano: int64(b[i+3]) * 1000, EndUnixNano: int64(b[i+3])*1000 + int64(b[i+2])*77,
			Name: string(rune('a' + b[i+2]%5))}
		s.Resource = []KeyValue{{"service.name", Value{Type: traceql.TypeString, S: string(rune('p' + b[i]%3))}}}
		switch b[i+2] % 5 {
		case 0:
			s.Attrs = []KeyValue{{"x", Value{Type: traceql.TypeInt, I: int64(b[i+3]) - 100}}}
		case 1:
			s.Attrs = []KeyValue{{"x", Value{Type: traceql.TypeFloat, F: float64(b[i+3]) / 7}}}
		case 2:
			s.Attrs = []KeyValue{{"x", Value{Type: traceql.TypeString, S: string(b[i : i+2])}}}
		case 3:
			s.Attrs = []KeyValue{{"x", Value{Type: traceql.TypeBool, B: b[i+3]&1 == 1}}}
		}
		if b[i+3]%4 == 0 {
			s.Events = []Event{{Name: "e", TimeUnixNano: s.StartUnixNano + 5, Attrs: s.Attrs}}
		}
		if b[i+3]%5 == 0 {
			s.Links = []Link{{SpanID: [8]byte{7: b[i+1]}, Attrs: s.Attrs}}
		}
		t.Spans = append(t.Spans, s)
	}
	return t
}

// FuzzTraceQL: any query that parses, over any trace, evaluates without
// a panic, to spansets of the trace's spans (each ascending, once each),
// the same each time.
func FuzzTraceQL(f *testing.F) {
	for _, q := range []string{
		`{ .x > 3 && kind = server }`,
		`{ kind = server } >> { status = error } | count() > 1`,
		`{ } !~ { .x = nil } | by(resource.service.name, .x) | avg(.x) >= 0`,
		`({ .x =~ "a.*" } | coalesce()) &<< { event.x != 2 || link.x < 1.5 }`,
		`{ nestedSetParent < 0 && childCount > 0 } &~ { traceDuration > 1us } | select(.x) | sum(duration) > 1ms`,
		`{ .x * 2 - 1 ^ 2 % 3 / 4 = -0.5 || !(name = "a") } !< { rootName != nil } | max(.x) < min(.x) + 1`,
		`{ nestedSetParent < 0 && true } | compare({ status = error && .x > 1 }, 2)`,
	} {
		f.Add(q, []byte("\x01\x02\x03\x04\x00\x07\x09\x0c\x02\x0d\x01\x00\x05\x05\x05\x05"))
	}
	f.Fuzz(func(t *testing.T, query string, spans []byte) {
		q, err := traceql.Parse(query)
		if err != nil {
			return
		}
		e, err := Compile(q)
		if err != nil {
			return // a bad regular expression
		}
		tr := fuzzTrace(spans)
		got := e.Eval(tr)
		for _, ss := range got {
			if len(ss.Spans) == 0 {
				t.Fatalf("%s: an empty spanset", query)
			}
			for k, i := range ss.Spans {
				if i < 0 || int(i) >= len(tr.Spans) || k > 0 && ss.Spans[k-1] >= i {
					t.Fatalf("%s: spanset %v not ascending indexes of %d spans", query, ss.Spans, len(tr.Spans))
				}
			}
		}
		again := e.Eval(tr)
		if !slices.EqualFunc(got, again, func(a, b Spanset) bool { return slices.Equal(a.Spans, b.Spans) }) {
			t.Fatalf("%s: %v, then %v", query, got, again)
		}
		// compare(): two labels a series, every count positive.
		if q.Metrics == nil || q.Metrics.Compare == nil || len(got) == 0 {
			return
		}
		acc, err := newCompareAcc(q.Metrics.Compare, Range{Start: time.Unix(0, 0), End: time.Unix(0, 300_000), Step: 50 * time.Microsecond}, MetricsLimits{})
		if err != nil {
			return
		}
		acc.observe(tr, got)
		for _, sr := range acc.result() {
			if len(sr.Labels) != 2 || len(sr.Samples) == 0 || slices.ContainsFunc(sr.Samples, func(s Sample) bool { return s.Value <= 0 }) {
				t.Fatalf("%s: compare series %+v", query, sr)
			}
		}
	})
}

// FuzzMetricsSpanwise: a metrics query the span-local path takes
// (spanLocal) gives, over the spans of any trace read one at a time,
// the series the evaluator gives over the whole trace.
func FuzzMetricsSpanwise(f *testing.F) {
	for _, q := range []string{
		`{ } | rate() by (resource.service.name)`,
		`{ kind = server && duration > 100ns } | avg_over_time(duration) by (name, status)`,
		`{ status = error && name = "a" && true } | quantile_over_time(duration, 0.5) by (kind)`,
		`{ resource.service.name = "q" && duration <= 1us } | histogram_over_time(duration)`,
		`{ duration < 5us && duration >= 77ns } | sum_over_time(duration)`,
	} {
		f.Add(q, []byte("\x01\x02\x03\x04\x00\x07\x09\x0c\x02\x0d\x01\x00\x05\x05\x05\x05"))
	}
	f.Fuzz(func(t *testing.T, query string, spans []byte) {
		q, err := traceql.Parse(query)
		if err != nil || q.Metrics == nil {
			return
		}
		rng := Range{Start: time.Unix(0, 0), End: time.Unix(0, 300_000), Step: 50 * time.Microsecond}
		sf, ok := spanLocal(q, rng)
		if !ok {
			return
		}
		e, err := Compile(q)
		if err != nil {
			return
		}
		byTrace, err := newMetricsAcc(q, rng)
		if err != nil {
			return
		}
		bySpan, _ := newMetricsAcc(q, rng)
		tr := fuzzTrace(spans)
		if sets := e.Eval(tr); len(sets) > 0 {
			byTrace.observe(tr, sets)
		}
		for i := range tr.Spans {
			sp := &tr.Spans[i]
			pt := SpanPoint{Service: []byte(lookup(sp.Resource, "service.name").S), Name: []byte(sp.Name), Kind: int32(sp.Kind),
				Status: int32(sp.Status), Start: sp.StartUnixNano, Duration: sp.EndUnixNano - sp.StartUnixNano, End: sp.EndUnixNano}
			if pt.Start < sf.Start.UnixNano() || pt.Start >= sf.End.UnixNano() || sf.Service != "" && string(pt.Service) != sf.Service ||
				sf.Name != "" && string(pt.Name) != sf.Name || sf.Kind >= 0 && pt.Kind != sf.Kind || sf.Status >= 0 && pt.Status != sf.Status ||
				pt.Duration < sf.MinDur || sf.MaxDur > 0 && pt.Duration > sf.MaxDur {
				continue
			}
			bySpan.observePoint(&pt)
		}
		show := func(ss []Series) string { return fmt.Sprint(ss) }
		if a, b := show(bySpan.result()), show(byTrace.result()); a != b {
			t.Fatalf("%s\n spans  %s\n traces %s", query, a, b)
		}
	})
}
