package logql

import (
	"errors"
	"strings"
	"testing"
)

// TestParse: queries from Loki's documentation and Grafana's Explore
// parse, and print back in a canonical form that parses to the same.
func TestParse(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{service_name="api"}`, `{service_name="api"}`},
		{`{container="query-frontend",namespace="loki-dev"} |= "metrics.go" | logfmt | duration > 10s and throughput_mb < 500`,
			`{container="query-frontend", namespace="loki-dev"} |= "metrics.go" | logfmt | (duration>10s and throughput_mb<500)`},
		{"{a=~`x.*`, b!=\"c\", d!~\"e\"} != \"skip\" |~ `(?i)err` !~ \"x\" |= \"a\" or \"b\"",
			`{a=~"x.*", b!="c", d!~"e"} != "skip" |~ "(?i)err" !~ "x" |= "a" or "b"`},
		{`{job="x"} | json | status >= 500, method="GET" or level=~"err.*"`,
			`{job="x"} | json | ((status>=500 and method="GET") or level=~"err.*")`},
		{`{job="x"} | json first_server="servers[0]", ua="request.headers[\"User-Agent\"]"`,
			`{job="x"} | json first_server="servers[0]", ua="request.headers[\"User-Agent\"]"`},
		{`{job="x"} | logfmt --strict --keep-empty level, msg | line_format "{{.level}} {{.msg}}"`,
			`{job="x"} | logfmt --strict --keep-empty level="level", msg="msg" | line_format "{{.level}} {{.msg}}"`},
		{`{job="x"} | regexp "(?P<method>\\w+) (?P<path>\\S+)" | pattern "<ip> - <_>"`,
			`{job="x"} | regexp "(?P<method>\\w+) (?P<path>\\S+)" | pattern "<ip> - <_>"`},
		{`{job="x"} | label_format dst=src, msg="{{.a}}" | drop a, b="c" | keep d | decolorize`,
			`{job="x"} | label_format dst=src, msg="{{.a}}" | drop a, b="c" | keep d | decolorize`},
		{`{job="x"} | size > 1.5KiB | latency <= 250ms | n == -3 | (a="1" or b="2")`,
			`{job="x"} | size>1.5KiB | latency<=250ms | n==-3 | (a="1" or b="2")`},
		{`count_over_time({service_name="api"} |= "timeout" [5m])`, `count_over_time({service_name="api"} |= "timeout" [5m])`},
		{`rate({service_name="api"}[1m] |= "x")`, `rate({service_name="api"} |= "x" [1m])`},
		{`sum by (severity_text) (count_over_time({service_name="X"}[1m]))`,
			`sum by (severity_text) (count_over_time({service_name="X"} [1m]))`},
		{`sum(rate({a="b"}[5m])) without (pod)`, `sum without (pod) (rate({a="b"} [5m]))`},
		{`topk(5, sum by (host) (bytes_over_time({a="b"}[1h] offset 1d)))`,
			`topk(5, sum by (host) (bytes_over_time({a="b"} [1h] offset 1d)))`},
		{`quantile_over_time(0.99, {a="b"} | json | unwrap duration(latency) | __error__="" [5m]) by (route)`,
			`quantile_over_time(0.99, {a="b"} | json | unwrap duration(latency) | __error__="" [5m]) by (route)`},
		{`sum_over_time({a="b"} | logfmt | unwrap bytes [1m])`, `sum_over_time({a="b"} | logfmt | unwrap bytes [1m])`},
		{`sum(rate({a="b"}[1m])) / sum(rate({c="d"}[1m])) * 100`,
			`((sum(rate({a="b"} [1m])) / sum(rate({c="d"} [1m]))) * 100)`},
		{`sum(rate({a="b"}[1m])) > bool 2`, `(sum(rate({a="b"} [1m])) > bool 2)`},
		{`rate({a="b"}[1m]) / on (x) group_left (y) rate({c="d"}[1m])`,
			`(rate({a="b"} [1m]) / on (x) group_left (y) rate({c="d"} [1m]))`},
		{`2 ^ 3 ^ 2 - -1`, `((2 ^ (3 ^ 2)) - -1)`},
		{`vector(0) or sum(count_over_time({a="b"}[1m]))`, `(vector(0) or sum(count_over_time({a="b"} [1m])))`},
		{"{a=\"b\"} # a comment\n |= \"c\"", `{a="b"} |= "c"`},
	} {
		e, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got := e.String(); got != c.want {
			t.Errorf("Parse(%q).String()\n got  %s\n want %s", c.in, got, c.want)
			continue
		}
		again, err := Parse(e.String())
		if err != nil || again.String() != e.String() {
			t.Errorf("%q does not parse back: %v, %v", e.String(), again, err)
		}
	}
}

// TestParseErrors: malformed queries fail with a *ParseError that says
// what and where.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		in       string
		line     int
		col      int
		contains string
	}{
		{`{}`, 1, 1, "at least one matcher"},
		{`{a="b"`, 1, 7, `expected "}"`},
		{`{a=b}`, 1, 4, "expected a quoted value"},
		{`{a="b"} | frobnicate`, 1, 11, `unknown stage "frobnicate"`},
		{`{a="b"} |= "x`, 1, 12, "unterminated string"},
		{"{a=\"b\"}\n | status > \"x\"", 2, 11, "compares numbers"},
		{`count_over_time({a="b"})`, 1, 24, "expected a range"},
		{`sum_over_time({a="b"}[1m])`, 1, 1, "needs an unwrapped label"},
		{`count_over_time({a="b"} | unwrap x [1m])`, 1, 1, "takes no unwrap"},
		{`topk(0.5, rate({a="b"}[1m]))`, 1, 1, "positive integer"},
		{`{a="b"} + 1`, 1, 9, "cannot be an operand"},
		{`{a="b"}[5m]`, 1, 8, "outside a range aggregation"},
		{`rate({a="b"}[5x])`, 1, 14, `expected a range such as 5m`},
		{`{a="b"} | x =~ 5`, 1, 13, "quoted regular expression"},
		{`sum(rate({a="b"}[1m])) + bool 1`, 1, 26, "only comparisons"},
		{`{a="b"} @`, 1, 9, "unexpected character"},
		{`{a=~"("}`, 1, 5, "invalid regular expression"},
		{`{a="b"} |~ "x" or "["`, 1, 19, "invalid regular expression"},
		{strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300), 1, 201, "nested more than"},
	} {
		_, err := Parse(c.in)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q): %v, want a *ParseError", c.in, err)
			continue
		}
		if pe.Line != c.line || pe.Col != c.col || !strings.Contains(pe.Msg, c.contains) {
			t.Errorf("Parse(%q): %v; want line %d col %d with %q", c.in, err, c.line, c.col, c.contains)
		}
	}
}

// FuzzParse: any text parses or fails with a *ParseError, never panics;
// what parses prints back to a query that parses to the same text.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{service_name="api"} |= "timeout" | json | status >= 500 | line_format "{{.msg}}"`,
		`sum by (level) (count_over_time({a=~"b|c"} != "x" | logfmt --strict [5m] offset 1h))`,
		`topk(3, sum(rate({a="b"}[1m])) by (x)) / on (x) group_left vector(1)`,
		`quantile_over_time(0.5, {a="b"} | unwrap duration_seconds(d) | __error__="" [1m]) without (i)`,
		`{a="b"} | label_format x=y, z="{{.q}}" | drop a, b!="c" | keep d | size > 10MB or (t < 2s, u == 1)`,
		"{a=`raw\\string`} |~ `\\d+` or \"x\" |> \"<_> <ip>\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		e, err := Parse(q)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q): %T %v, not a *ParseError", q, err, err)
			}
			return
		}
		s := e.String()
		again, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) = %s, which does not parse: %v", q, s, err)
		}
		if again.String() != s {
			t.Fatalf("Parse(%q) = %s, parsed again %s", q, s, again.String())
		}
	})
}
