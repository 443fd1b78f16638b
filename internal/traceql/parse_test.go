package traceql

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParse: queries of the documentation's every construct and the
// canonical form each parses to, written out by hand.
func TestParse(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{`{}`, `{ }`},
		{`{ }`, `{ }`},
		{`{ true }`, `{ true }`},
		{`{ .http.method = "GET" }`, `{ (.http.method = "GET") }`},
		{`{ span.http.status_code >= 500 && resource.service.name = "api" }`,
			`{ ((span.http.status_code >= 500) && (resource.service.name = "api")) }`},
		{`{ a.b = 1 }`, ``}, // a is no scope
		{`{ duration > 1.5s || status = error }`, `{ ((duration > 1.5s) || (status = error)) }`},
		{`{ span:duration > 100ms && span:name =~ "GET.*" }`, `{ ((duration > 100ms) && (name =~ "GET.*")) }`},
		{`{ kind = server && statusMessage != "" }`, `{ ((kind = server) && (statusMessage != "")) }`},
		{`{ traceDuration > 2s && rootName = "GET /" && rootServiceName = "web" }`,
			`{ (((traceDuration > 2s) && (rootName = "GET /")) && (rootServiceName = "web")) }`},
		{`{ trace:duration > 2s && trace:rootService = "web" && trace:rootName = "x" && trace:id = "abc" }`,
			`{ ((((traceDuration > 2s) && (rootServiceName = "web")) && (rootName = "x")) && (trace:id = "abc")) }`},
		{`{ span:id = "0102" && span:parentID = "03" && nestedSetParent < 0 && nestedSetLeft > 1 && nestedSetRight > 2 }`,
			`{ (((((span:id = "0102") && (span:parentID = "03")) && (nestedSetParent < 0)) && (nestedSetLeft > 1)) && (nestedSetRight > 2)) }`},
		{`{ event:name = "exception" && event.exception.type = "E" }`, `{ ((event:name = "exception") && (event.exception.type = "E")) }`},
		{`{ event:timeSinceStart > 1ms }`, `{ (event:timeSinceStart > 1ms) }`},
		{`{ link:traceID = "ab" && link:spanID = "cd" && link.kind = "follows" }`,
			`{ (((link:traceID = "ab") && (link:spanID = "cd")) && (link.kind = "follows")) }`},
		{`{ instrumentation:name = "otel" && instrumentation:version = "1" && instrumentation.x = 2 }`,
			`{ (((instrumentation:name = "otel") && (instrumentation:version = "1")) && (instrumentation.x = 2)) }`},
		{`{ childCount > 2 && span:childCount < 9 }`, `{ ((childCount > 2) && (childCount < 9)) }`},
		{`{ .a != nil && span.b = nil }`, `{ ((.a != nil) && (span.b = nil)) }`},
		{`{ .a = true && .b != false && !(.c = 1) }`, `{ (((.a = true) && (.b != false)) && !(.c = 1)) }`},
		{`{ .ratio > 0.5 && .n < -3 && .d > -2ms }`, `{ (((.ratio > 0.5) && (.n < -3)) && (.d > -2ms)) }`},
		{`{ .x =~ "a|b" && .y !~ ` + "`^c.*`" + ` }`, `{ ((.x =~ "a|b") && (.y !~ "^c.*")) }`},
		{`{ span.a + span.b * 2 > 10 }`, `{ ((span.a + (span.b * 2)) > 10) }`},
		{`{ span.a ^ 2 ^ 3 = 1 }`, `{ ((span.a ^ (2 ^ 3)) = 1) }`},
		{`{ (span.a - 1) / 2 % 3 = 1 }`, `{ ((((span.a - 1) / 2) % 3) = 1) }`},
		{`{ span."attr with spaces" = "v" && resource."k8s pod" = "p" }`,
			`{ ((span."attr with spaces" = "v") && (resource."k8s pod" = "p")) }`},
		{`{ span.http.request.header.x-forwarded-for = "1.2.3.4" }`, `{ (span.http.request.header.x-forwarded-for = "1.2.3.4") }`},
		{`{ kind = client } && { kind = server }`, `({ (kind = client) } && { (kind = server) })`},
		{`{ .a } || { .b } && { .c }`, `({ .a } || ({ .b } && { .c }))`},
		{`{ .a } > { .b } && { .c } >> { .d }`, `(({ .a } > { .b }) && ({ .c } >> { .d }))`},
		{`{ .a } < { .b } << { .c }`, `(({ .a } < { .b }) << { .c })`},
		{`{ .a } ~ { .b }`, `({ .a } ~ { .b })`},
		{`{ .a } !> { .b } || { .a } !>> { .b } || { .a } !< { .b } || { .a } !<< { .b } || { .a } !~ { .b }`,
			`((((({ .a } !> { .b }) || ({ .a } !>> { .b })) || ({ .a } !< { .b })) || ({ .a } !<< { .b })) || ({ .a } !~ { .b }))`},
		{`{ .a } &> { .b } && { .a } &>> { .b } && { .a } &< { .b } && { .a } &<< { .b } && { .a } &~ { .b }`,
			`((((({ .a } &> { .b }) && ({ .a } &>> { .b })) && ({ .a } &< { .b })) && ({ .a } &<< { .b })) && ({ .a } &~ { .b }))`},
		{`{ .a } | count() > 2`, `{ .a } | count() > 2`},
		{`{ .a } | avg(duration) > 1s | max(span.size) >= 10 | min(duration) < 5ms | sum(.bytes) != 0`,
			`{ .a } | avg(duration) > 1s | max(span.size) >= 10 | min(duration) < 5ms | sum(.bytes) != 0`},
		{`{ .a } | (count() + 1) * 2 > 4`, `{ .a } | ((count() + 1) * 2) > 4`},
		{`{ .a } | by(resource.service.name) | count() > 1`, `{ .a } | by(resource.service.name) | count() > 1`},
		{`{ .a } | select(span.http.url, duration)`, `{ .a } | select(span.http.url, duration)`},
		{`{ .a } | coalesce()`, `{ .a } | coalesce()`},
		{`{ .a } | { .b }`, `{ .a } | { .b }`},
		{`({ .a } | count() > 1) && { .b }`, `(({ .a } | count() > 1) && { .b })`},
		{`({ .a })`, `{ .a }`},
		{`{ } | rate()`, `{ } | rate()`},
		{`{ status = error } | rate() by (resource.service.name)`, `{ (status = error) } | rate() by (resource.service.name)`},
		{`{ } | count_over_time() by (name, kind)`, `{ } | count_over_time() by (name, kind)`},
		{`{ } | min_over_time(duration) | topk(5)`, `{ } | min_over_time(duration) | topk(5)`},
		{`{ } | max_over_time(span.size) | bottomk(2)`, `{ } | max_over_time(span.size) | bottomk(2)`},
		{`{ } | avg_over_time(duration) by (.a)`, `{ } | avg_over_time(duration) by (.a)`},
		{`{ } | sum_over_time(span.bytes)`, `{ } | sum_over_time(span.bytes)`},
		{`{ } | quantile_over_time(duration, .99, 0.9, 0.5) by (span.http.route)`,
			`{ } | quantile_over_time(duration, 0.99, 0.9, 0.5) by (span.http.route)`},
		{`{ } | histogram_over_time(duration) by (kind)`, `{ } | histogram_over_time(duration) by (kind)`},
		{`{ resource.service.name = "a" } | compare({ status = error })`,
			`{ (resource.service.name = "a") } | compare({ (status = error) })`},
		{`{ } | compare({ status = error }, 10)`, `{ } | compare({ (status = error) }, 10)`},
		{`{ } | compare({ status = error }, 10, 1700000000000000000, 1700000060000000000)`,
			`{ } | compare({ (status = error) }, 10, 1700000000000000000, 1700000060000000000)`},
		{`{ } | rate() with(sample=true)`, `{ } | rate() with(sample=true)`},
		{`{ .a } | count() > 1 | rate() with (sample=0.1, exemplars=false)`,
			`{ .a } | count() > 1 | rate() with(sample=0.1, exemplars=false)`},
		{"{\n  .a = 1\n}", `{ (.a = 1) }`},
		{`{ ."5xx" = 1 }`, `{ (."5xx" = 1) }`},
	} {
		q, err := Parse(c.q)
		if c.want == "" {
			if err == nil {
				t.Errorf("Parse(%q) = %s, want an error", c.q, q)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", c.q, err)
			continue
		}
		if got := q.String(); got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.q, got, c.want)
		}
	}
}

// TestParseTree: the tree itself, for a query of each kind.
func TestParseTree(t *testing.T) {
	q, err := Parse(`{ span.http.status_code >= 500 && kind = server } >> { status = error } | by(resource.service.name) | count() > 2 | quantile_over_time(duration, 0.9) by (name) | topk(3)`)
	if err != nil {
		t.Fatal(err)
	}
	want := &Query{
		Pipeline: Pipeline{Stages: []Stage{
			SpansetStage{SpansetOp{Op: ">>",
				L: Filter{Binary{Op: "&&",
					L: Binary{Op: ">=", L: Attribute{ScopeSpan, "http.status_code"}, R: Static{Type: TypeInt, I: 500}},
					R: Binary{Op: "=", L: IntrinsicKind, R: Static{Type: TypeKind, I: int64(KindServer)}}}},
				R: Filter{Binary{Op: "=", L: IntrinsicStatus, R: Static{Type: TypeStatus, I: int64(StatusError)}}}}},
			By{Fields: []Field{Attribute{ScopeResource, "service.name"}}},
			ScalarFilter{Op: ">", L: Aggregate{Fn: "count"}, R: Static{Type: TypeInt, I: 2}},
		}},
		Metrics: &Metrics{Fn: "quantile_over_time", Field: IntrinsicDuration, Quantiles: []float64{0.9}, By: []Field{IntrinsicName}},
		Rank:    "topk", RankN: 3,
	}
	if !reflect.DeepEqual(q, want) {
		t.Fatalf("got  %#v\nwant %#v", q, want)
	}
	q, err = Parse(`{ .d > 1h30m && .e < 250us }`)
	if err != nil {
		t.Fatal(err)
	}
	b := q.Pipeline.Stages[0].(SpansetStage).Spanset.(Filter).Expr.(Binary)
	if got := b.L.(Binary).R.(Static); got != (Static{Type: TypeDuration, I: int64(90 * time.Minute)}) {
		t.Errorf("1h30m = %#v", got)
	}
	if got := b.R.(Binary).R.(Static); got != (Static{Type: TypeDuration, I: int64(250 * time.Microsecond)}) {
		t.Errorf("250us = %#v", got)
	}
}

// TestParseErrors: malformed queries get a *ParseError at the line and
// column of the problem.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		q         string
		line, col int
		msg       string
	}{
		{`{ .a = }`, 1, 8, "expected a value"},
		{`{ .a = 1`, 1, 9, `expected "}"`},
		{`{ .a = "x }`, 1, 8, "unterminated string"},
		{"{ .a = 1 }\n| count(", 2, 9, `expected ")"`},
		{"{ .a = 1 }\n  && foo", 2, 6, "expected a spanset filter"},
		{`{ service.name = "a" }`, 1, 3, "unknown word"},
		{`{ span:nope = 1 }`, 1, 3, "unknown intrinsic"},
		{`{ 1 + 2 }`, 1, 2, "must be a condition"},
		{`{ .a = 1 = 2 }`, 1, 10, "cannot be chained"},
		{`{ .a =~ 3 }`, 1, 6, "takes a string"},
		{`{ .a } | 3 > 2`, 1, 10, "must compare an aggregate"},
		{`{ .a } | count()`, 1, 17, "expected a comparison"},
		{`{ } | quantile_over_time(duration)`, 1, 34, "at least one quantile"},
		{`{ } | quantile_over_time(duration, 1.5)`, 1, 36, "from 0 to 1"},
		{`{ } | rate() | topk(0)`, 1, 21, "positive integer"},
		{`{ } | compare({ .a }, 1, 2)`, 1, 27, "together"},
		{`{ .a = 1s2 }`, 1, 8, "invalid duration"},
		{`{ .a = 99999999999999999999 }`, 1, 8, "invalid integer"},
		{`{ .a = 1 } with (x=)`, 1, 20, "hint's value"},
		{`{ . = 1 }`, 1, 3, "attribute name expected"},
		{`{ .a = 1 } $`, 1, 12, "unexpected character"},
		{`{ .a = 1 } }`, 1, 12, `unexpected "}"`},
		{"{ .é = 1 } ∑", 1, 12, "unexpected character"},
		{strings.Repeat("(", 300) + "{}" + strings.Repeat(")", 300), 1, 201, "nested deeper"},
	} {
		_, err := Parse(c.q)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q): %v, want a *ParseError", c.q, err)
			continue
		}
		if pe.Line != c.line || pe.Col != c.col || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("Parse(%q): line %d col %d %q, want line %d col %d containing %q", c.q, pe.Line, pe.Col, pe.Msg, c.line, c.col, c.msg)
		}
	}
	if _, err := Parse(strings.Repeat(" ", MaxQueryLength+1)); err == nil {
		t.Error("a query past MaxQueryLength parsed")
	}
}

// FuzzParse: Parse never panics, fails only with a *ParseError, and a
// query's String parses back to the same String.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{ resource.service.name = "checkout" && span.http.response.status_code >= 500 }`,
		`{ kind = server } >> { status = error } | count() > 2`,
		`({ .a } | by(.b) | avg(duration) > 1s) &~ { name =~ "GET.*" } | select(span.x, .y)`,
		`{ } | quantile_over_time(duration, .99, .5) by (resource.service.name) | topk(10) with(sample=true)`,
		`{ span:id = "ab" && !(trace:rootService != nil) } !<< { event:name = "exception" || link:traceID = "cd" }`,
		"{ span.\"a b\" = `x` && .c - 3 ^ 2 % 4 > -1.5e3 && .d < 1h2m3s }",
		`{ } | compare({ status = error }, 5, 1, 2)`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		parsed, err := Parse(q)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q): %T %v, not a *ParseError", q, err, err)
			}
			return
		}
		s := parsed.String()
		again, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %s, which does not parse: %v", q, s, err)
		}
		if again.String() != s {
			t.Fatalf("Parse(%q) = %s, parsed again %s", q, s, again.String())
		}
	})
}
