// Package querysyntax holds what the hand-written lexers of the query
// languages (internal/logql, internal/traceql) share: the error of a
// malformed query, with its line and column as Loki and Tempo answer
// them, quoted strings, and operators matched longest first. One error
// type lets readapi answer any language's syntax error as a bad request.
package querysyntax

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseError is a malformed query and where the problem is.
type ParseError struct {
	Pos       int // byte offset in the query
	Line, Col int // 1-based; Col counts runes
	Msg       string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("parse error at line %d, col %d: %s", e.Line, e.Col, e.Msg)
}

// ErrorAt returns a ParseError at byte offset pos of query (clamped to
// the query).
func ErrorAt(query string, pos int, format string, args ...any) *ParseError {
	pos = min(max(pos, 0), len(query))
	before := query[:pos]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
	return &ParseError{Pos: pos, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// Unquote reads the quoted string at the start of s: "..." with Go's
// escapes (ending at a newline is an error) or `...` raw. It returns the
// value and the bytes it took.
func Unquote(s string) (string, int, error) {
	q := s[0]
	for j := 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q == '"':
			j++
		case s[j] == q:
			if q == '`' {
				return s[1:j], j + 1, nil
			}
			v, err := strconv.Unquote(s[:j+1])
			if err != nil {
				return "", 0, fmt.Errorf("invalid string %s: %v", s[:j+1], err)
			}
			return v, j + 1, nil
		case s[j] == '\n' && q == '"':
			return "", 0, fmt.Errorf("unterminated string")
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}

// Operator returns the first of ops that s begins with ("" if none):
// list the longer of two operators that begin alike first.
func Operator(s string, ops []string) string {
	for _, o := range ops {
		if strings.HasPrefix(s, o) {
			return o
		}
	}
	return ""
}
