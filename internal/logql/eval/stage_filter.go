package eval

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Line filters: |= "s", != "s", |~ "re", !~ "re", |> "pattern",
// !> "pattern". A filter of several values (|= "a" or "b") keeps a line
// that any of them matches (a negated one, a line that none matches).

// compileLineFilter compiles a line filter.
func compileLineFilter(f *logql.LineFilter) (stage, error) {
	var tests []func([]byte) bool
	for _, v := range f.Values {
		switch f.Op {
		case logql.LineContains, logql.LineNotContains:
			b := []byte(v)
			tests = append(tests, func(l []byte) bool { return bytes.Contains(l, b) })
		case logql.LineMatches, logql.LineNotMatches:
			re, err := regexp.Compile(v)
			if err != nil {
				return nil, fmt.Errorf("line filter %s %q: %w", f.Op, v, err)
			}
			tests = append(tests, re.Match)
		case logql.LinePattern, logql.LineNotPattern:
			p, err := compilePattern(v)
			if err != nil {
				return nil, err
			}
			tests = append(tests, func(l []byte) bool { _, ok := p.match(string(l)); return ok })
		}
	}
	neg := f.Op == logql.LineNotContains || f.Op == logql.LineNotMatches || f.Op == logql.LineNotPattern
	return func(e *entry) bool {
		for _, t := range tests {
			if t(e.line) {
				return !neg
			}
		}
		return neg
	}, nil
}
