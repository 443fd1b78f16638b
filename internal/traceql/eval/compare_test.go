package eval

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// TestMetricsCompare: compare() over four traces of a web span calling a
// db span, two 30 s steps; the series worked out by hand from the spans
// below.
func TestMetricsCompare(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	type span struct {
		svc, name string
		kind      ptrace.SpanKind
		status    ptrace.StatusCode
		attr, val string
		code      int64
	}
	// Trace n starts at base plus at[n] seconds: web's span first, then
	// db's (child of web's).
	at := []int{1, 2, 31, 32}
	traces := [][]span{
		{{"web", "GET /a", ptrace.SpanKindServer, ptrace.StatusCodeError, "", "", 500}, {"db", "query", ptrace.SpanKindClient, ptrace.StatusCodeUnset, "db", "pg", 0}},
		{{"web", "GET /a", ptrace.SpanKindServer, ptrace.StatusCodeOk, "", "", 200}, {"db", "query", ptrace.SpanKindClient, ptrace.StatusCodeUnset, "db", "pg", 0}},
		{{"web", "GET /b", ptrace.SpanKindServer, ptrace.StatusCodeError, "", "", 503}, {"db", "query", ptrace.SpanKindClient, ptrace.StatusCodeUnset, "db", "mysql", 0}},
		{{"web", "GET /c", ptrace.SpanKindServer, ptrace.StatusCodeUnset, "", "", 200}},
	}
	src := &memSource{}
	for n, spans := range traces {
		td := ptrace.NewTraces()
		for i, s := range spans {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", s.svc)
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(n + 1), 3})
			sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if i == 1 {
				sp.SetParentSpanID(pcommon.SpanID{1})
			}
			sp.SetName(s.name)
			sp.SetKind(s.kind)
			sp.Status().SetCode(s.status)
			if s.code != 0 {
				sp.Attributes().PutInt("code", s.code)
			}
			if s.attr != "" {
				sp.Attributes().PutStr(s.attr, s.val)
			}
			start := base.Add(time.Duration(at[n]) * time.Second)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		}
		src.traces = append(src.traces, td)
	}
	rng := Range{Start: base, End: base.Add(60 * time.Second), Step: 30 * time.Second}
	show := func(ss []Series) string {
		var b strings.Builder
		for _, s := range ss {
			b.WriteString("{")
			for _, l := range s.Labels {
				b.WriteString(l.Name + "=" + l.Value.String() + " ")
			}
			b.WriteString("}")
			for _, p := range s.Samples {
				fmt.Fprintf(&b, " %d:%g", (p.TimestampMs-base.UnixMilli())/30000, p.Value)
			}
			b.WriteString("\n")
		}
		return b.String()
	}
	// Selection (status = error): web's spans of traces 1 (step 0) and 3
	// (step 1). Baseline: db's of 1 and 2 and web's of 2 (step 0), db's
	// of 3 and web's of 4 (step 1). With TopN 2 the baseline's names
	// (query 3 spans, GET /a 1, GET /c 1) keep query and GET /a (ties by
	// value), and name gets the error series: both groups' spans with a
	// name, 4 and 3.
	want := `{__meta_error="__too_many_values__" name=nil } 0:4 1:3
{__meta_type="baseline" kind=client } 0:2 1:1
{__meta_type="baseline" kind=server } 0:1 1:1
{__meta_type="baseline" name="GET /a" } 0:1
{__meta_type="baseline" name="query" } 0:2 1:1
{__meta_type="baseline" resource.service.name="db" } 0:2 1:1
{__meta_type="baseline" resource.service.name="web" } 0:1 1:1
{__meta_type="baseline" span.code=200 } 0:1 1:1
{__meta_type="baseline" span.db="mysql" } 1:1
{__meta_type="baseline" span.db="pg" } 0:2
{__meta_type="baseline" status=ok } 0:1
{__meta_type="baseline" status=unset } 0:2 1:2
{__meta_type="baseline_total" kind=nil } 0:3 1:2
{__meta_type="baseline_total" name=nil } 0:3 1:2
{__meta_type="baseline_total" resource.service.name=nil } 0:3 1:2
{__meta_type="baseline_total" span.code=nil } 0:1 1:1
{__meta_type="baseline_total" span.db=nil } 0:2 1:1
{__meta_type="baseline_total" status=nil } 0:3 1:2
{__meta_type="selection" kind=server } 0:1 1:1
{__meta_type="selection" name="GET /a" } 0:1
{__meta_type="selection" name="GET /b" } 1:1
{__meta_type="selection" resource.service.name="web" } 0:1 1:1
{__meta_type="selection" span.code=500 } 0:1
{__meta_type="selection" span.code=503 } 1:1
{__meta_type="selection" status=error } 0:1 1:1
{__meta_type="selection_total" kind=nil } 0:1 1:1
{__meta_type="selection_total" name=nil } 0:1 1:1
{__meta_type="selection_total" resource.service.name=nil } 0:1 1:1
{__meta_type="selection_total" span.code=nil } 0:1 1:1
{__meta_type="selection_total" status=nil } 0:1 1:1
`
	parsed, err := traceql.Parse(`{ } | compare({ status = error }, 2)`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 100})
	if err != nil {
		t.Fatal(err)
	}
	if s := show(got); s != want {
		t.Errorf("compare:\n got\n%s\n want\n%s", s, want)
	}
	// A window on the selection: only trace 3's error span (start 31 s)
	// is selected; trace 1's web span joins the baseline.
	parsed, err = traceql.Parse(fmt.Sprintf(`{ resource.service.name = "web" } | compare({ status = error }, 10, %d, %d)`,
		base.Add(30*time.Second).UnixNano(), base.Add(60*time.Second).UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	got, err = Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 100})
	if err != nil {
		t.Fatal(err)
	}
	var status []string
	for _, s := range got {
		if l := s.Labels[1]; l.Name == "status" && l.Value.Type != traceql.TypeNil {
			status = append(status, strings.TrimSuffix(show([]Series{s}), "\n"))
		}
	}
	if g, w := strings.Join(status, ";"), `{__meta_type="baseline" status=error } 0:1;{__meta_type="baseline" status=ok } 0:1;{__meta_type="baseline" status=unset } 1:1;{__meta_type="selection" status=error } 1:1`; g != w {
		t.Errorf("compare with a window: status series\n got  %s\n want %s", g, w)
	}
	if _, err := Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 100, MaxSeries: 3}); err == nil {
		t.Error("compare past MaxSeries answered")
	}
}
