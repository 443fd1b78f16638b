package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// TestMetrics: each metrics function over ten traces 10 s apart (trace n:
// web, 100+n ms, calling db, 10 ms), steps of 30 s over 100 s; the
// expected series worked out by hand.
func TestMetrics(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	src := &memSource{}
	for n := range 10 {
		td := ptrace.NewTraces()
		for i, svc := range []string{"web", "db"} {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", svc)
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(n), 7})
			sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if i == 1 {
				sp.SetParentSpanID(pcommon.SpanID{1})
			}
			start := base.Add(time.Duration(n) * 10 * time.Second)
			d := 10 * time.Millisecond
			if i == 0 {
				d = time.Duration(100+n) * time.Millisecond
			}
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(d)))
		}
		src.traces = append(src.traces, td)
	}
	rng := Range{Start: base, End: base.Add(100 * time.Second), Step: 30 * time.Second}
	ms := func(step int) int64 { return base.Add(time.Duration(step) * 30 * time.Second).UnixMilli() }
	show := func(ss []Series) string {
		out := ""
		for _, s := range ss {
			out += "{"
			for _, l := range s.Labels {
				out += l.Name + "=" + l.Value.String() + " "
			}
			out += "}"
			for _, p := range s.Samples {
				out += fmt.Sprintf(" %d:%.6g", (p.TimestampMs-ms(0))/30000, p.Value)
			}
			out += ";"
		}
		return out
	}
	for _, c := range []struct{ q, want string }{
		{`{ resource.service.name = "db" } | count_over_time()`, "{} 0:3 1:3 2:3 3:1;"},
		{`{ } | rate() by (resource.service.name)`, `{resource.service.name="db" } 0:0.1 1:0.1 2:0.1 3:0.0333333;{resource.service.name="web" } 0:0.1 1:0.1 2:0.1 3:0.0333333;`},
		{`{ resource.service.name = "web" } | max_over_time(duration)`, "{} 0:0.102 1:0.105 2:0.108 3:0.109;"},
		{`{ resource.service.name = "web" } | min_over_time(duration)`, "{} 0:0.1 1:0.103 2:0.106 3:0.109;"},
		{`{ resource.service.name = "web" } | avg_over_time(duration)`, "{} 0:0.101 1:0.104 2:0.107 3:0.109;"},
		{`{ resource.service.name = "web" } | sum_over_time(duration)`, "{} 0:0.303 1:0.312 2:0.321 3:0.109;"},
		{`{ resource.service.name = "web" } | quantile_over_time(duration, 0.5, 1)`, "{p=0.5 } 0:0.101 1:0.104 2:0.107 3:0.109;{p=1.0 } 0:0.102 1:0.105 2:0.108 3:0.109;"},
		{`{ resource.service.name = "db" } | histogram_over_time(duration)`, "{__bucket=0.015625 } 0:3 1:3 2:3 3:1;"},
		{`{ resource.service.name = "web" } > { } | count_over_time() by (resource.service.name)`, `{resource.service.name="db" } 0:3 1:3 2:3 3:1;`},
		{`{ name = "nothing" } | rate()`, ""},
	} {
		parsed, err := traceql.Parse(c.q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 100})
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if s := show(got); s != c.want {
			t.Errorf("%s\n got  %s\n want %s", c.q, s, c.want)
		}
	}
	parsed, _ := traceql.Parse(`{ } | rate()`)
	var tm *TooManyTracesError
	if _, err := Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 5}); !errors.As(err, &tm) || !tm.TooLarge() {
		t.Errorf("over the trace limit: %v", err)
	}
	parsed, _ = traceql.Parse(`{ } | compare({ status = error })`)
	if _, err := Metrics(context.Background(), src, "t", parsed, rng, MetricsLimits{MaxTraces: 100}); err == nil {
		t.Error("compare() answered")
	}
	parsed, _ = traceql.Parse(`{ } | rate()`)
	if _, err := Metrics(context.Background(), src, "t", parsed, Range{Start: base, End: base, Step: time.Second}, MetricsLimits{MaxTraces: 100}); err == nil {
		t.Error("an empty range answered")
	}
	if q := quantile([]float64{1, 2, 3, 4}, 0.5); math.Abs(q-2.5) > 1e-12 {
		t.Errorf("quantile = %v", q)
	}
}
