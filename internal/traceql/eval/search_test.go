package eval

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// TestHintOf: the conditions a hint takes are required ones only.
func TestHintOf(t *testing.T) {
	for _, c := range []struct {
		q    string
		want Hint
	}{
		{`{ resource.service.name = "api" && name = "GET" && span.http.method = "POST" && duration > 10ms && duration < 1s }`,
			Hint{Service: "api", Name: "GET", Attrs: map[string]string{"http.method": "POST"}, MinDur: 10 * time.Millisecond, MaxDur: time.Second}},
		{`{ .service.name = "api" && status = error }`, Hint{Attrs: map[string]string{"service.name": "api"}, Error: true}},
		{`{ resource.service.name = "api" || name = "x" }`, Hint{Unbounded: true}},
		{`{ span.n > 3 }`, Hint{Unbounded: true}},
		{`{ span.n = 3 }`, Hint{Unbounded: true}},    // an integer: the source compares text
		{`{ event.e = "x" }`, Hint{Unbounded: true}}, // not a span's own attribute
		{`{ !(name = "x") }`, Hint{Unbounded: true}}, // a negation requires nothing
		{`{ name != "x" }`, Hint{Unbounded: true}},   // nor does an inequality
		{`{ } >> { name = "db" }`, Hint{Name: "db", Attrs: map[string]string{}}},
		{`{ resource.service.name = "a" } > { name = "db" }`, Hint{Service: "a", Attrs: map[string]string{}}},
		{`{ resource.service.name = "a" } !> { name = "db" }`, Hint{Name: "db", Attrs: map[string]string{}}},
		{`{ resource.service.name = "a" } || { name = "db" }`, Hint{Unbounded: true}},
		{`({ name = "db" } | count() > 2) && { }`, Hint{Name: "db", Attrs: map[string]string{}}},
	} {
		q, err := traceql.Parse(c.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.q, err)
		}
		if got := HintOf(q); !reflect.DeepEqual(got, c.want) {
			t.Errorf("HintOf(%s) = %+v, want %+v", c.q, got, c.want)
		}
	}
}

// memSource is a Source over traces in memory: candidates are every
// trace with a span that holds the hint (the hint's meaning, worked out
// here apart from the engine), most recent first; it counts what it is
// asked.
type memSource struct {
	traces []ptrace.Traces // one trace each, oldest first
	asks   []int           // the limits Candidates was called with
}

func (m *memSource) Candidates(_ context.Context, _ string, h Hint, start, end time.Time, limit int) ([][16]byte, bool, error) {
	m.asks = append(m.asks, limit)
	var ids [][16]byte
	for k := len(m.traces) - 1; k >= 0; k-- {
		rss := m.traces[k].ResourceSpans()
		hit := false
		for i := 0; i < rss.Len(); i++ {
			svc, _ := rss.At(i).Resource().Attributes().Get("service.name")
			sp := rss.At(i).ScopeSpans().At(0).Spans().At(0)
			st := sp.StartTimestamp().AsTime()
			d := sp.EndTimestamp().AsTime().Sub(st)
			ok := !st.Before(start) && st.Before(end) && (h.Service == "" || svc.Str() == h.Service) &&
				(h.Name == "" || sp.Name() == h.Name) && d >= h.MinDur && (h.MaxDur == 0 || d <= h.MaxDur) &&
				(!h.Error || sp.Status().Code() == ptrace.StatusCodeError)
			for k, v := range h.Attrs {
				a, has := sp.Attributes().Get(k)
				ok = ok && has && a.AsString() == v
			}
			hit = hit || ok
		}
		if hit {
			if len(ids) == limit {
				return ids, true, nil
			}
			ids = append(ids, [16]byte(rss.At(0).ScopeSpans().At(0).Spans().At(0).TraceID()))
		}
	}
	return ids, false, nil
}

func (m *memSource) Spans(_ context.Context, _ string, ids [][16]byte, fn func([]byte) error) error {
	for _, td := range m.traces {
		id := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
		if slices.Contains(ids, [16]byte(id)) {
			raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
			if err != nil {
				return err
			}
			if err := fn(raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// TestSearch: the most recent traces that match, found through growing
// batches of candidates; the query decides, the hint only narrows.
func TestSearch(t *testing.T) {
	base := time.Unix(1_700_000_000, 0)
	src := &memSource{}
	for n := range 300 {
		td := ptrace.NewTraces()
		for i, svc := range []string{"web", "db"} {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", svc)
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(n), byte(n >> 8), 9})
			sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
			if i == 1 {
				sp.SetParentSpanID(pcommon.SpanID{1})
			}
			sp.SetName(fmt.Sprintf("op%d", n%10))
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Duration(n) * time.Second)))
			sp.SetEndTimestamp(sp.StartTimestamp() + pcommon.Timestamp(time.Millisecond))
			if n%50 == 7 && i == 1 {
				sp.Status().SetCode(ptrace.StatusCodeError)
			}
		}
		src.traces = append(src.traces, td)
	}
	run := func(query string, limit, maxCand int) (SearchResult, []int) {
		t.Helper()
		q, err := traceql.Parse(query)
		if err != nil {
			t.Fatal(err)
		}
		e, err := Compile(q)
		if err != nil {
			t.Fatal(err)
		}
		src.asks = nil
		res, err := Search(context.Background(), src, "t", e, base, base.Add(time.Hour), SearchLimits{Limit: limit, MaxCandidates: maxCand})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, m := range res.Matches {
			got = append(got, int(m.ID[0])|int(m.ID[1])<<8)
		}
		return res, got
	}
	// Errors in db under web: traces 7, 57, ..., 257; the newest first.
	res, got := run(`{ resource.service.name = "web" } > { status = error }`, 6, 10000)
	if want := []int{257, 207, 157, 107, 57, 7}; !slices.Equal(got, want) || res.Truncated {
		t.Fatalf("got %v (truncated %v), want %v", got, res.Truncated, want)
	}
	// The hint is the left side's service, which every trace has: the
	// search asks for more candidates (256 first, then 4 times as many)
	// until it has its six (trace 7 is the 293rd newest).
	if !slices.Equal(src.asks, []int{256, 1024}) {
		t.Errorf("candidate batches %v, want 256 then 1024", src.asks)
	}
	// All of them when fewer match than the limit.
	if _, got = run(`{ status = error }`, 20, 10000); len(got) != 6 || got[0] != 257 || got[5] != 7 {
		t.Fatalf("errors: %v", got)
	}
	// Candidates bounded: a query that matches nothing reads at most
	// MaxCandidates traces and says so.
	res, got = run(`{ resource.service.name = "web" } >> { name = "none" } || { }  >> { name = "none" }`, 5, 290)
	if len(got) != 0 || !res.Truncated || res.Inspected != 290 { // read in two batches
		t.Fatalf("bounded search: %v, truncated %v, inspected %d", got, res.Truncated, res.Inspected)
	}
	if _, err := Search(context.Background(), src, "t", nil, base, base, SearchLimits{}); err == nil {
		t.Fatal("a search without a limit ran")
	}
}
