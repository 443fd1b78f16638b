package traceql

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wirehouse/wirehouse/internal/querysyntax"
)

// kind is what a token is.
type kind uint8

const (
	kEOF      kind = iota
	kIdent         // a bare word: a keyword, an intrinsic, an enum, a function
	kAttr          // an attribute: text is its name, scope its scope
	kIntr          // a scoped intrinsic (span:name): text is the whole
	kString        // a quoted string: text is its value
	kInt           // an integer
	kFloat         // a decimal number
	kDuration      // a duration: dur is its value
	kOp            // punctuation and operators: text holds it
)

// token is a lexical token and the byte offset where it starts.
type token struct {
	kind  kind
	text  string
	scope Scope // of a kAttr
	dur   time.Duration
	pos   int
}

func (t token) String() string {
	switch t.kind {
	case kEOF:
		return "end of query"
	case kString:
		return "string " + strconv.Quote(t.text)
	case kAttr:
		return "attribute " + strconv.Quote(Attribute{Scope: t.scope, Name: t.text}.String())
	}
	return strconv.Quote(t.text)
}

// ParseError is a malformed query and where the problem is.
type ParseError = querysyntax.ParseError

func errorAt(query string, pos int, format string, args ...any) *ParseError {
	return querysyntax.ErrorAt(query, pos, format, args...)
}

// operators are TraceQL's punctuation, longest first where one begins
// another.
var operators = []string{
	"&>>", "&<<", "!>>", "!<<",
	"&&", "||", "&>", "&<", "&~", "!>", "!<", "!~", "!=", "=~", ">>", "<<", ">=", "<=",
	"{", "}", "(", ")", ",", "|", "=", ">", "<", "~", "!", "+", "-", "*", "/", "%", "^",
}

// scopeNames are the attribute scopes written before a dot.
var scopeNames = map[string]Scope{
	"span": ScopeSpan, "resource": ScopeResource, "event": ScopeEvent, "link": ScopeLink,
	"instrumentation": ScopeInstrumentation,
}

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isWord(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' }

// isAttrByte reports whether c continues an unquoted attribute name:
// anything but space, quotes and the operator characters (a dash is kept,
// as in http.request.header.x-forwarded-for).
func isAttrByte(c byte) bool {
	return c >= utf8.RuneSelf || c > ' ' && !strings.ContainsRune("{}()=!<>&|~+*/%^,\"`'", rune(c))
}

// lex splits query into tokens, the last one kEOF.
func lex(query string) ([]token, error) {
	var out []token
	for i := 0; ; {
		for i < len(query) && (query[i] == ' ' || query[i] == '\t' || query[i] == '\n' || query[i] == '\r') {
			i++
		}
		if i == len(query) {
			return append(out, token{kind: kEOF, pos: i}), nil
		}
		start, c := i, query[i]
		switch {
		case c == '"' || c == '`':
			s, n, err := querysyntax.Unquote(query[i:])
			if err != nil {
				return nil, errorAt(query, start, "%v", err)
			}
			out = append(out, token{kind: kString, text: s, pos: start})
			i += n
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(query) && query[i+1] >= '0' && query[i+1] <= '9':
			t, n, err := number(query[i:])
			if err != nil {
				return nil, errorAt(query, start, "%v", err)
			}
			t.pos = start
			out = append(out, t)
			i += n
		case c == '.':
			name, n, err := attrName(query[i+1:])
			if err != nil {
				return nil, errorAt(query, start, "%v", err)
			}
			out = append(out, token{kind: kAttr, text: name, scope: ScopeNone, pos: start})
			i += 1 + n
		case isWordStart(c):
			j := i + 1
			for j < len(query) && isWord(query[j]) {
				j++
			}
			word := query[i:j]
			switch {
			case j < len(query) && query[j] == '.' && scopeNames[word] != ScopeNone:
				name, n, err := attrName(query[j+1:])
				if err != nil {
					return nil, errorAt(query, j+1, "%v", err)
				}
				out = append(out, token{kind: kAttr, text: name, scope: scopeNames[word], pos: start})
				i = j + 1 + n
			case j+1 < len(query) && query[j] == ':' && isWordStart(query[j+1]):
				k := j + 2
				for k < len(query) && isWord(query[k]) {
					k++
				}
				out = append(out, token{kind: kIntr, text: query[i:k], pos: start})
				i = k
			default:
				out = append(out, token{kind: kIdent, text: word, pos: start})
				i = j
			}
		default:
			op := querysyntax.Operator(query[i:], operators)
			if op == "" {
				r, _ := utf8.DecodeRuneInString(query[i:])
				return nil, errorAt(query, start, "unexpected character %q", r)
			}
			out = append(out, token{kind: kOp, text: op, pos: start})
			i += len(op)
		}
	}
}

// attrName reads an attribute name at the start of s (after its scope's
// dot): a quoted string, or a run of bytes that are not space or
// operator characters. It returns the name and the bytes it took.
func attrName(s string) (string, int, error) {
	if s != "" && s[0] == '"' {
		name, n, err := querysyntax.Unquote(s)
		if err == nil && name == "" {
			err = fmt.Errorf("empty attribute name")
		}
		return name, n, err
	}
	n := 0
	for n < len(s) && isAttrByte(s[n]) {
		n++
	}
	if n == 0 {
		return "", 0, fmt.Errorf("attribute name expected after the dot")
	}
	if !utf8.ValidString(s[:n]) {
		return "", 0, fmt.Errorf("attribute name not valid UTF-8")
	}
	return s[:n], n, nil
}

// number reads an integer, a decimal number or a duration (1h30m, 250ms,
// 1.5s) at the start of s.
func number(s string) (token, int, error) {
	j := 0
	for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.') {
		j++
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && s[k] >= '0' && s[k] <= '9' {
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			return floatToken(s[:k])
		}
	}
	if j < len(s) && (isWordStart(s[j]) || s[j] == 0xc2) { // a unit (µ is 0xc2 0xb5)
		k := j
		for k < len(s) && (isWord(s[k]) || s[k] == '.' || s[k] == 0xc2 || s[k] == 0xb5) {
			k++
		}
		d, err := time.ParseDuration(s[:k])
		if err != nil {
			return token{}, 0, fmt.Errorf("invalid duration %q", s[:k])
		}
		return token{kind: kDuration, text: s[:k], dur: d}, k, nil
	}
	if strings.IndexByte(s[:j], '.') >= 0 {
		return floatToken(s[:j])
	}
	if _, err := strconv.ParseInt(s[:j], 10, 64); err != nil {
		return token{}, 0, fmt.Errorf("invalid integer %q", s[:j])
	}
	return token{kind: kInt, text: s[:j]}, j, nil
}

func floatToken(s string) (token, int, error) {
	if _, err := strconv.ParseFloat(s, 64); err != nil {
		return token{}, 0, fmt.Errorf("invalid number %q", s)
	}
	return token{kind: kFloat, text: s}, len(s), nil
}
