package eval

import (
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// FuzzPipeline: any query's pipeline compiles or fails with an error, and
// runs on any line without panicking; logfmt reads any line.
func FuzzPipeline(f *testing.F) {
	for _, c := range [][2]string{
		{`{a="b"} | json | status >= 500 | line_format "{{.msg}} {{.status}}"`, `{"status": 503, "msg": "x", "n": {"k": [1, 2]}}`},
		{`{a="b"} | logfmt --strict | duration > 1s, size < 2KiB | label_format x=duration`, `level=info msg="a \"b\"" duration=1.5s size=10B`},
		{`{a="b"} | regexp "(?P<ip>\\S+) (?P<code>\\d+)" | code != 200 or ip =~ "10\\..*"`, `10.0.0.1 404`},
		{`{a="b"} | pattern "<_> [<level>] <msg>" |> "<_> [ERROR] <_>" | drop msg | keep level`, `2026 [ERROR] boom`},
		{`{a="b"} | json first="a[0]", k="m[\"k\"]" | unpack | decolorize`, "{\"a\": [\"x\"], \"m\": {\"k\": 1}, \"_entry\": \"\x1b[31mred\x1b[0m\"}"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, query, line string) {
		parseLogfmt([]byte(line)) //nolint:errcheck
		e, err := logql.Parse(query)
		if err != nil {
			return
		}
		lq, ok := e.(*logql.LogQuery)
		if !ok {
			return
		}
		stages, err := compilePipeline(lq.Pipeline)
		if err != nil {
			return
		}
		en := &entry{ts: 1, line: []byte(line), labels: map[string]string{"service_name": "s"}}
		for _, st := range stages {
			if !st(en) {
				break
			}
		}
	})
}

// FuzzSelection: a delete request's query compiles or fails with an
// error, never a panic; one that compiles tests any record without
// panicking, and never matches a record outside its range.
func FuzzSelection(f *testing.F) {
	for _, q := range []string{
		`{service_name="api"} |= "password"`,
		`{service_name=~"a.*", env!="dev"} |~ "(?i)secret" != "ok"`,
		`{level="error"} |> "<_> token=<_>"`,
		`{a="b"} | json`,
		`sum(rate({a="b"}[1m]))`,
	} {
		f.Add(q, "login password=x", "api", int64(5))
	}
	f.Fuzz(func(t *testing.T, query, line, service string, at int64) {
		s, err := CompileSelection(query, time.Unix(0, 10), time.Unix(0, 20))
		if err != nil {
			return
		}
		_ = s.Scan()
		r := &Record{Time: at, Line: []byte(line), Service: service, Attrs: []KV{{"level", "error"}}, Resource: []KV{{"env", "prod"}}}
		if s.Match(r) && (at < 10 || at > 20) {
			t.Fatalf("%q matched a record at %d, outside [10, 20]", query, at)
		}
	})
}
