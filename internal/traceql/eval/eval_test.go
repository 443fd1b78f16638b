package eval

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// testTrace is one trace, drawn here by hand:
//
//	r  GET /      server    frontend  0-100ms  http.status_code=200
//	├─ a  auth       internal  frontend  10-20ms  user=alice        scope lib
//	└─ b  POST /pay  client    frontend  20-90ms  error, 503, event exception(Timeout)
//	   └─ c  pay        server    payment   25-85ms  error, 503
//	      ├─ d  SELECT  client  payment  30-40ms  db.system=postgres, cached=true, a link (kind=follows)
//	      └─ e  SELECT  client  payment  40-80ms  db.system=postgres, rows=10, ratio=0.5
//
// Spans are listed out of order, as a store may give them.
func testTrace() (*Trace, []string) {
	ms := func(n int64) int64 { return 1_700_000_000_000_000_000 + n*int64(time.Millisecond) }
	id := func(n byte) [8]byte { return [8]byte{7: n} }
	s := func(k string, v any) KeyValue {
		switch v := v.(type) {
		case string:
			return KeyValue{k, Value{Type: traceql.TypeString, S: v}}
		case int:
			return KeyValue{k, Value{Type: traceql.TypeInt, I: int64(v)}}
		case float64:
			return KeyValue{k, Value{Type: traceql.TypeFloat, F: v}}
		case bool:
			return KeyValue{k, Value{Type: traceql.TypeBool, B: v}}
		}
		panic(v)
	}
	front := []KeyValue{s("service.name", "frontend")}
	pay := []KeyValue{s("service.name", "payment"), s("deployment.environment", "prod")}
	tid := [16]byte{0: 0xab, 15: 0xcd}
	spans := []Span{
		{SpanID: id(4), ParentID: id(3), Name: "pay", Kind: traceql.KindServer, Status: traceql.StatusError, StartUnixNano: ms(25), EndUnixNano: ms(85),
			Attrs: []KeyValue{s("http.status_code", 503)}, Resource: pay},
		{SpanID: id(1), Name: "GET /", Kind: traceql.KindServer, StartUnixNano: ms(0), EndUnixNano: ms(100),
			Attrs: []KeyValue{s("http.status_code", 200)}, Resource: front},
		{SpanID: id(2), ParentID: id(1), Name: "auth", Kind: traceql.KindInternal, StartUnixNano: ms(10), EndUnixNano: ms(20),
			Attrs: []KeyValue{s("user", "alice")}, Resource: front, ScopeName: "lib", ScopeVersion: "1.2"},
		{SpanID: id(3), ParentID: id(1), Name: "POST /pay", Kind: traceql.KindClient, Status: traceql.StatusError, StatusMessage: "timeout",
			StartUnixNano: ms(20), EndUnixNano: ms(90), Attrs: []KeyValue{s("http.status_code", 503)}, Resource: front,
			Events: []Event{{Name: "log", TimeUnixNano: ms(21)}, {Name: "exception", TimeUnixNano: ms(89), Attrs: []KeyValue{s("exception.type", "Timeout")}}}},
		{SpanID: id(5), ParentID: id(4), Name: "SELECT", Kind: traceql.KindClient, StartUnixNano: ms(30), EndUnixNano: ms(40),
			Attrs: []KeyValue{s("db.system", "postgres"), s("cached", true)}, Resource: pay,
			Links: []Link{{TraceID: [16]byte{1}, SpanID: id(9), Attrs: []KeyValue{s("kind", "follows")}}}},
		{SpanID: id(6), ParentID: id(4), Name: "SELECT", Kind: traceql.KindClient, StartUnixNano: ms(40), EndUnixNano: ms(80),
			Attrs: []KeyValue{s("db.system", "postgres"), s("rows", 10), s("ratio", 0.5)}, Resource: pay},
	}
	for i := range spans {
		spans[i].TraceID = tid
	}
	return &Trace{Spans: spans}, []string{"c", "r", "a", "b", "d", "e"}
}

// show writes spansets as the letters of their spans (in the drawing's
// order) and their by() values, sorted: "c d e | r a b".
func show(t *Trace, letters []string, sets []Spanset) string {
	order := "rabcde"
	var parts []string
	for _, ss := range sets {
		var ls []string
		for _, i := range ss.Spans {
			ls = append(ls, letters[i])
		}
		SortLetters(ls, order)
		p := strings.Join(ls, " ")
		for _, b := range ss.By {
			p += " by " + b.Value.String()
		}
		parts = append(parts, p)
	}
	slices.Sort(parts)
	return strings.Join(parts, " | ")
}

func SortLetters(ls []string, order string) {
	for i := 1; i < len(ls); i++ {
		for j := i; j > 0 && strings.Index(order, ls[j]) < strings.Index(order, ls[j-1]); j-- {
			ls[j], ls[j-1] = ls[j-1], ls[j]
		}
	}
}

// TestEval: each query's spansets over testTrace, worked out by hand from
// the drawing.
func TestEval(t *testing.T) {
	tr, letters := testTrace()
	for _, c := range []struct{ q, want string }{
		{`{ }`, "r a b c d e"},
		{`{ status = error }`, "b c"},
		{`{ status != error }`, "r a d e"},
		{`{ !(status = error) }`, "r a d e"},
		{`{ statusMessage = "timeout" }`, "b"},
		{`{ resource.service.name = "payment" }`, "c d e"},
		{`{ .service.name = "payment" }`, "c d e"},
		{`{ .deployment.environment != "dev" }`, "c d e"},
		{`{ .http.status_code >= 500 }`, "b c"},
		{`{ span.http.status_code != 200 }`, "b c"},
		{`{ span.http.status_code = "503" }`, ""},
		{`{ span.user = nil }`, "r b c d e"},
		{`{ span.user != nil }`, "a"},
		{`{ duration > 50ms }`, "r b c"},
		{`{ duration >= 10ms && duration <= 10ms }`, "a d"},
		{`{ kind = client && name = "SELECT" }`, "d e"},
		{`{ kind = internal || kind = server }`, "r a c"},
		{`{ name =~ "SEL.*" }`, "d e"},
		{`{ name =~ "SEL" }`, ""},
		{`{ name !~ ".*/.*" }`, "a c d e"},
		{`{ event.exception.type = "Timeout" }`, "b"},
		{`{ event:name = "exception" && event.exception.type = "Timeout" }`, "b"},
		{`{ event:name = "log" && event.exception.type = "Timeout" }`, ""},
		{`{ event:timeSinceStart > 60ms }`, "b"},
		{`{ link.kind = "follows" && link:spanID = "0000000000000009" }`, "d"},
		{`{ link:traceID = "01000000000000000000000000000000" }`, "d"},
		{`{ instrumentation:name = "lib" && instrumentation:version = "1.2" }`, "a"},
		{`{ span.cached }`, "d"},
		{`{ span.user }`, ""},
		{`{ span.rows + 5 = 15 }`, "e"},
		{`{ span.ratio * 2 = 1 }`, "e"},
		{`{ span.rows > 9.5 && span.rows < 10.5 }`, "e"},
		{`{ span.rows / 4 = 2.5 }`, "e"},
		{`{ span.rows % 4 = 2 && span.rows ^ 2 = 100 }`, "e"},
		{`{ -span.rows = -10 }`, "e"},
		{`{ duration - 5ms = 5ms }`, "a d"},
		{`{ rootName = "GET /" && rootServiceName = "frontend" && traceDuration = 100ms }`, "r a b c d e"},
		{`{ trace:id = "ab0000000000000000000000000000cd" }`, "r a b c d e"},
		{`{ span:id = "0000000000000004" }`, "c"},
		{`{ span:parentID = "0000000000000004" }`, "d e"},
		{`{ span:parentID = nil }`, "r"},
		{`{ nestedSetParent < 0 }`, "r"},
		{`{ childCount = 2 }`, "r c"},
		{`{ nestedSetLeft > 5 && nestedSetRight < 12 }`, "d e"},
		{`{ kind = server } > { kind = client }`, "b d e"},
		{`{ kind = server } >> { name = "SELECT" }`, "d e"},
		{`{ name = "SELECT" } << { kind = server }`, "r c"},
		{`{ name = "SELECT" } < { }`, "c"},
		{`{ name = "pay" } < { }`, "b"},
		{`{ name = "auth" } ~ { }`, "b"},
		{`{ name = "SELECT" } ~ { name = "SELECT" }`, "d e"},
		{`{ kind = server } !> { kind = client }`, ""},
		{`{ name = "pay" } !> { kind = client }`, "b"},
		{`{ name = "pay" } !>> { }`, "r a b c"},
		{`{ name = "auth" } !< { }`, "a b c d e"},
		{`{ name = "SELECT" } !<< { }`, "a d e"},
		{`{ name = "auth" } !~ { }`, "r a c d e"},
		{`{ .nope = 1 } !> { kind = client }`, "b d e"},
		{`{ name = "pay" } &> { kind = client }`, "c d e"},
		{`{ name = "GET /" } &>> { status = error }`, "r b c"},
		{`{ status = error } &< { kind = server }`, "r b"},
		{`{ name = "SELECT" } &<< { kind = server }`, "r c d e"},
		{`{ name = "auth" } &~ { }`, "a b"},
		{`{ status = error } && { .db.system = "postgres" }`, "b c d e"},
		{`{ .nope = 1 } && { status = error }`, ""},
		{`{ .nope = 1 } || { status = error }`, "b c"},
		{`{ kind = server } | { status = error }`, "c"},
		{`{ } | count() > 5`, "r a b c d e"},
		{`{ } | count() > 6`, ""},
		{`{ resource.service.name = "payment" } | avg(duration) > 30ms`, "c d e"},
		{`{ resource.service.name = "payment" } | avg(duration) > 40ms`, ""},
		{`{ } | max(span.http.status_code) = 503 | min(span.http.status_code) = 200`, "r a b c d e"},
		{`{ } | max(span.http.status_code) = 503 | min(span.http.status_code) > 200`, ""},
		{`{ } | max(span.http.status_code) = 503`, "r a b c d e"},
		{`{ } | min(duration) = 10ms`, "r a b c d e"},
		{`{ } | sum(span.http.status_code) = 1206`, "r a b c d e"},
		{`{ } | (count() + 4) / 2 = 5`, "r a b c d e"},
		{`{ } | by(resource.service.name)`, "c d e by \"payment\" | r a b by \"frontend\""},
		{`{ } | by(resource.service.name) | count() = 3`, "c d e by \"payment\" | r a b by \"frontend\""},
		{`{ } | by(resource.service.name) | avg(duration) > 40ms`, "r a b by \"frontend\""},
		{`{ } | by(resource.service.name) | coalesce()`, "r a b c d e"},
		{`{ } | by(kind, status)`, "a by internal by unset | b by client by error | c by server by error | d e by client by unset | r by server by unset"},
		{`({ } | by(resource.service.name) | count() > 2) && { name = "auth" }`, "r a b c d e"},
		{`({ kind = server } | count() > 2) || { name = "auth" }`, "a"},
		{`{ status = error } | select(span.http.status_code)`, "b c"},
	} {
		q, err := traceql.Parse(c.q)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.q, err)
			continue
		}
		e, err := Compile(q)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.q, err)
			continue
		}
		if got := show(tr, letters, e.Eval(tr)); got != c.want {
			t.Errorf("%s\n got  %q\n want %q", c.q, got, c.want)
		}
	}
}
