package eval

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// The oracle: random traces built with pdata, each query's answer worked
// out by a reference written here over pdata from the operators'
// definitions (brute force: parents by span id, ancestors by walking up),
// and compared with Eval's over the same traces read from their OTLP
// encoding by AddOTLP.

// pred is a spanset filter: its TraceQL, and the reference's test of a
// pdata span (with its resource's service name).
type pred struct {
	q  string
	ok func(sp ptrace.Span, service string) bool
}

var nameRE = regexp.MustCompile(`^(?:op[12])$`)

var preds = []pred{
	{`{ }`, func(ptrace.Span, string) bool { return true }},
	{`{ kind = server }`, func(sp ptrace.Span, _ string) bool { return sp.Kind() == ptrace.SpanKindServer }},
	{`{ kind = client }`, func(sp ptrace.Span, _ string) bool { return sp.Kind() == ptrace.SpanKindClient }},
	{`{ status = error }`, func(sp ptrace.Span, _ string) bool { return sp.Status().Code() == ptrace.StatusCodeError }},
	{`{ span.n > 2 }`, func(sp ptrace.Span, _ string) bool {
		v, ok := sp.Attributes().Get("n")
		return ok && v.Type() == pcommon.ValueTypeInt && v.Int() > 2
	}},
	{`{ resource.service.name = "a" }`, func(_ ptrace.Span, svc string) bool { return svc == "a" }},
	{`{ name =~ "op[12]" }`, func(sp ptrace.Span, _ string) bool { return nameRE.MatchString(sp.Name()) }},
	{`{ event:name = "retry" }`, func(sp ptrace.Span, _ string) bool {
		for i := 0; i < sp.Events().Len(); i++ {
			if sp.Events().At(i).Name() == "retry" {
				return true
			}
		}
		return false
	}},
}

// randomTraces makes n traces of 1-25 spans each: random trees (some
// spans' parents missing), kinds, statuses, names, an int attribute,
// events and three services.
func randomTraces(rng *rand.Rand, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	for t := range n {
		tid := pcommon.TraceID{byte(t), byte(t >> 8), 1}
		count := 1 + rng.IntN(25)
		for i := range count {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", string(rune('a'+rng.IntN(3))))
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(tid)
			sp.SetSpanID(pcommon.SpanID{7: byte(i + 1)})
			switch {
			case i == 0:
			case rng.IntN(12) == 0:
				sp.SetParentSpanID(pcommon.SpanID{7: byte(100 + i)}) // a parent never sent
			default:
				sp.SetParentSpanID(pcommon.SpanID{7: byte(1 + rng.IntN(i))})
			}
			sp.SetName(fmt.Sprintf("op%d", rng.IntN(4)))
			sp.SetKind(ptrace.SpanKind(rng.IntN(6)))
			sp.Status().SetCode(ptrace.StatusCode(rng.IntN(3)))
			sp.SetStartTimestamp(pcommon.Timestamp(1_700_000_000_000_000_000 + int64(i)*1000))
			sp.SetEndTimestamp(sp.StartTimestamp() + pcommon.Timestamp(rng.IntN(5000)))
			if rng.IntN(2) == 0 {
				sp.Attributes().PutInt("n", int64(rng.IntN(6)))
			}
			if rng.IntN(5) == 0 {
				sp.Events().AppendEmpty().SetName("retry")
			}
		}
	}
	return td
}

// refSpan is a span as the reference sees it.
type refSpan struct {
	id, parent pcommon.SpanID
	match      []bool // of each pred
}

// reference answers L OP R over one trace's spans by the operators'
// definitions: the ids of the spans selected, sorted.
func reference(spans []refSpan, l, r int, op string) []pcommon.SpanID {
	byID := map[pcommon.SpanID]*refSpan{}
	for i := range spans {
		byID[spans[i].id] = &spans[i]
	}
	parent := func(s *refSpan) *refSpan {
		if s.parent.IsEmpty() || s.parent == s.id {
			return nil
		}
		return byID[s.parent]
	}
	isChild := func(c, p *refSpan) bool { return parent(c) == p }
	isDesc := func(d, a *refSpan) bool {
		seen := map[*refSpan]bool{}
		for p := parent(d); p != nil && !seen[p]; p = parent(p) {
			if p == a {
				return true
			}
			seen[p] = true
		}
		return false
	}
	isSib := func(x, y *refSpan) bool { return x != y && parent(x) != nil && parent(x) == parent(y) }
	// rel(b, a): b stands in the operator's relation to a.
	rels := map[string]func(b, a *refSpan) bool{
		">": isChild, "<": func(b, a *refSpan) bool { return isChild(a, b) },
		">>": isDesc, "<<": func(b, a *refSpan) bool { return isDesc(a, b) }, "~": isSib,
	}
	var L, R []*refSpan
	for i := range spans {
		if spans[i].match[l] {
			L = append(L, &spans[i])
		}
		if spans[i].match[r] {
			R = append(R, &spans[i])
		}
	}
	any := func(set []*refSpan, f func(*refSpan) bool) bool { return slices.ContainsFunc(set, f) }
	out := map[pcommon.SpanID]bool{}
	switch op {
	case "&&":
		if len(L) > 0 && len(R) > 0 {
			for _, s := range append(L, R...) {
				out[s.id] = true
			}
		}
	case "||":
		for _, s := range append(L, R...) {
			out[s.id] = true
		}
	default:
		base := op
		if op[0] == '!' || op[0] == '&' {
			base = op[1:]
		}
		rel := rels[base]
		for _, b := range R {
			in := any(L, func(a *refSpan) bool { return rel(b, a) })
			if in == (op[0] != '!') {
				out[b.id] = true
			}
		}
		if op[0] == '&' {
			for _, a := range L {
				if any(R, func(b *refSpan) bool { return rel(b, a) }) {
					out[a.id] = true
				}
			}
		}
	}
	var ids []pcommon.SpanID
	for id := range out {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b pcommon.SpanID) int { return slices.Compare(a[:], b[:]) })
	return ids
}

// TestSpansetOperatorsOracle: every spanset operator over pairs of
// filters on 120 random traces, Eval against the reference.
func TestSpansetOperatorsOracle(t *testing.T) {
	td := randomTraces(rand.New(rand.NewPCG(42, 7)), 120)
	raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[[16]byte]*Trace{}
	var order [][16]byte
	if err := AddOTLP(byID, &order, raw); err != nil {
		t.Fatal(err)
	}
	// The reference's view of each trace, from pdata.
	ref := map[[16]byte][]refSpan{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		svc, _ := rs.Resource().Attributes().Get("service.name")
		sp := rs.ScopeSpans().At(0).Spans().At(0)
		s := refSpan{id: sp.SpanID(), parent: sp.ParentSpanID()}
		for _, p := range preds {
			s.match = append(s.match, p.ok(sp, svc.Str()))
		}
		ref[sp.TraceID()] = append(ref[sp.TraceID()], s)
	}
	ops := []string{"&&", "||", ">", ">>", "<", "<<", "~", "!>", "!>>", "!<", "!<<", "!~", "&>", "&>>", "&<", "&<<", "&~"}
	checked, nonEmpty := 0, 0
	for l := range preds {
		for r := range preds {
			for _, op := range ops {
				query := preds[l].q + " " + op + " " + preds[r].q
				q, err := traceql.Parse(query)
				if err != nil {
					t.Fatalf("Parse(%q): %v", query, err)
				}
				e, err := Compile(q)
				if err != nil {
					t.Fatalf("Compile(%q): %v", query, err)
				}
				for _, id := range order {
					tr := byID[id]
					want := reference(ref[id], l, r, op)
					var got []pcommon.SpanID
					for _, ss := range e.Eval(tr) {
						for _, i := range ss.Spans {
							got = append(got, pcommon.SpanID(tr.Spans[i].SpanID))
						}
					}
					slices.SortFunc(got, func(a, b pcommon.SpanID) int { return slices.Compare(a[:], b[:]) })
					if !slices.Equal(got, want) {
						t.Fatalf("%s over trace %x: got %v, want %v", query, id, got, want)
					}
					checked++
					if len(want) > 0 {
						nonEmpty++
					}
				}
			}
		}
	}
	if nonEmpty < checked/4 {
		t.Fatalf("only %d of %d answers had spans: the traces do not exercise the operators", nonEmpty, checked)
	}
	t.Logf("%d query-trace pairs, %d with spans", checked, nonEmpty)
}
