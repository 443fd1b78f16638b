package logql

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wirehouse/wirehouse/internal/querysyntax"
)

// tokKind is the kind of a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tString // a quoted string; text is its value, unquoted
	tNumber // an integer or decimal number
	tDuration
	tBytes
	tOp // punctuation and operators: text holds it
)

var kindNames = [...]string{tEOF: "end of query", tIdent: "identifier", tString: "string", tNumber: "number",
	tDuration: "duration", tBytes: "bytes", tOp: "operator"}

// token is a lexical token and where it starts in the query (byte offset).
type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of query"
	case tString:
		return strconv.Quote(t.text)
	}
	return strconv.Quote(t.text)
}

// ParseError is an error in a query, with where it is.
type ParseError = querysyntax.ParseError

func newError(query string, pos int, format string, args ...any) *ParseError {
	return querysyntax.ErrorAt(query, pos, format, args...)
}

// ops are the operators, longest first where one is a prefix of another.
var ops = []string{
	"|=", "|~", "|>", "!=", "!~", "!>", "=~", "==", ">=", "<=", "|",
	"{", "}", "(", ")", "[", "]", ",", "=", ">", "<", "+", "-", "*", "/", "%", "^",
}

// lex splits query into tokens.
func lex(query string) ([]token, error) {
	var out []token
	i := 0
	for {
		for i < len(query) {
			r, n := utf8.DecodeRuneInString(query[i:])
			if unicode.IsSpace(r) {
				i += n
				continue
			}
			if r == '#' { // a comment, to the end of the line
				for i < len(query) && query[i] != '\n' {
					i++
				}
				continue
			}
			break
		}
		if i >= len(query) {
			return append(out, token{kind: tEOF, pos: i}), nil
		}
		start := i
		c := query[i]
		switch {
		case c == '"' || c == '`':
			s, n, err := querysyntax.Unquote(query[i:])
			if err != nil {
				return nil, newError(query, start, "%v", err)
			}
			out = append(out, token{kind: tString, text: s, pos: start})
			i += n
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(query) && query[i+1] >= '0' && query[i+1] <= '9':
			tok, n, err := lexNumber(query[i:])
			if err != nil {
				return nil, newError(query, start, "%v", err)
			}
			tok.pos = start
			out = append(out, tok)
			i += n
		case c == '_' || c < utf8.RuneSelf && unicode.IsLetter(rune(c)):
			j := i + 1
			for j < len(query) && (query[j] == '_' || query[j] == '.' || query[j] < utf8.RuneSelf && (unicode.IsLetter(rune(query[j])) || unicode.IsDigit(rune(query[j])))) {
				j++
			}
			out = append(out, token{kind: tIdent, text: query[i:j], pos: start})
			i = j
		default:
			op := querysyntax.Operator(query[i:], ops)
			if op == "" {
				r, _ := utf8.DecodeRuneInString(query[i:])
				return nil, newError(query, start, "unexpected character %q", r)
			}
			out = append(out, token{kind: tOp, text: op, pos: start})
			i += len(op)
		}
	}
}

// durationUnits and byteUnits are the suffixes of durations and byte
// sizes, longest first.
var (
	durationUnits = []string{"ns", "us", "µs", "ms", "s", "m", "h", "d", "w", "y"}
	byteUnits     = []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "KB", "MB", "GB", "TB", "PB", "EB", "kB", "B"}
)

// lexNumber reads a number, a duration (1h30m, 500ms) or a byte size
// (20MB, 1.5KiB) at the start of s.
func lexNumber(s string) (token, int, error) {
	num := func(i int) int {
		if strings.HasPrefix(s[i:], "0x") || strings.HasPrefix(s[i:], "0X") {
			j := i + 2
			for j < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
				j++
			}
			return j
		}
		j := i
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
			j++
		}
		if j < len(s) && (s[j] == 'e' || s[j] == 'E') && j+1 < len(s) {
			k := j + 1
			if s[k] == '+' || s[k] == '-' {
				k++
			}
			if k < len(s) && s[k] >= '0' && s[k] <= '9' {
				for k < len(s) && s[k] >= '0' && s[k] <= '9' {
					k++
				}
				j = k
			}
		}
		return j
	}
	isUnitEnd := func(i int) bool {
		return i >= len(s) || !(s[i] == '_' || s[i] < utf8.RuneSelf && (unicode.IsLetter(rune(s[i])) || unicode.IsDigit(rune(s[i]))))
	}
	end := num(0)
	for _, u := range byteUnits {
		if strings.HasPrefix(s[end:], u) && isUnitEnd(end+len(u)) {
			text := s[:end+len(u)]
			if _, err := ParseBytes(text); err != nil {
				return token{}, 0, err
			}
			return token{kind: tBytes, text: text}, len(text), nil
		}
	}
	// A duration: one or more <number><unit>.
	i := 0
	isDur := false
	for {
		j := num(i)
		if j == i {
			break
		}
		unit := ""
		for _, u := range durationUnits {
			if strings.HasPrefix(s[j:], u) {
				unit = u
				break
			}
		}
		if unit == "" || !isUnitEnd(j+len(unit)) && !(j+len(unit) < len(s) && s[j+len(unit)] >= '0' && s[j+len(unit)] <= '9') {
			break
		}
		isDur = true
		i = j + len(unit)
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			break
		}
	}
	if isDur {
		text := s[:i]
		if _, err := ParseDuration(text); err != nil {
			return token{}, 0, err
		}
		return token{kind: tDuration, text: text}, i, nil
	}
	text := s[:end]
	if _, err := strconv.ParseFloat(text, 64); err != nil {
		if _, err := strconv.ParseInt(text, 0, 64); err != nil {
			return token{}, 0, fmt.Errorf("invalid number %q", text)
		}
	}
	return token{kind: tNumber, text: text}, end, nil
}
