package xdrgen

import (
	"fmt"
	"strconv"
	"strings"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tNum
	tPunct
)

type token struct {
	kind tokKind
	text string
	num  int64
	pos  Pos
	off  int      // byte offset of the token in the source
	doc  []string // comment lines ending on the line right above the token
}

// lexer splits a .x file into tokens, collecting %-lines and comments.
type lexer struct {
	file      string
	src       string
	off       int
	line, col int
	pass      []PassLine
	comments  []string // pending comment block
	commentAt int      // line the pending block ends on
	tokLine   int      // line of the last token, to skip trailing comments
}

func newLexer(file, src string) *lexer {
	return &lexer{file: file, src: src, line: 1, col: 1}
}

func (l *lexer) pos() Pos { return Pos{File: l.file, Line: l.line, Col: l.col} }

func (l *lexer) advance(n int) {
	for i := 0; i < n; i++ {
		if l.src[l.off] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.off++
	}
}

func (l *lexer) addComment(text string, startLine, endLine int) {
	if startLine == l.tokLine {
		return // a trailing comment documents its own line, not the next
	}
	if len(l.comments) > 0 && l.commentAt < endLine-1-strings.Count(text, "\n") {
		l.comments = nil // a blank line separates comment blocks
	}
	for _, s := range strings.Split(text, "\n") {
		l.comments = append(l.comments, strings.TrimRight(s, " \t\r"))
	}
	l.commentAt = endLine
}

// next returns the next token.
func (l *lexer) next() (token, error) {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.advance(1)
		case c == '%' && l.col == 1:
			end := strings.IndexByte(l.src[l.off:], '\n')
			if end < 0 {
				end = len(l.src) - l.off
			}
			l.pass = append(l.pass, PassLine{Pos: l.pos(), Text: l.src[l.off+1 : l.off+end]})
			l.advance(end)
		case strings.HasPrefix(l.src[l.off:], "//"):
			end := strings.IndexByte(l.src[l.off:], '\n')
			if end < 0 {
				end = len(l.src) - l.off
			}
			line := l.line
			l.addComment(strings.TrimPrefix(strings.TrimPrefix(l.src[l.off:l.off+end], "//"), " "), line, line)
			l.advance(end)
		case strings.HasPrefix(l.src[l.off:], "/*"):
			p := l.pos()
			end := strings.Index(l.src[l.off+2:], "*/")
			if end < 0 {
				return token{}, errorf(p, "unterminated /* comment")
			}
			body := l.src[l.off+2 : l.off+2+end]
			l.advance(end + 4)
			var lines []string
			for _, s := range strings.Split(body, "\n") {
				s = strings.TrimSpace(s)
				s = strings.TrimSpace(strings.TrimPrefix(s, "*"))
				lines = append(lines, s)
			}
			for len(lines) > 0 && lines[0] == "" {
				lines = lines[1:]
			}
			for len(lines) > 0 && lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			if len(lines) > 0 {
				l.addComment(strings.Join(lines, "\n"), p.Line, l.line)
			}
		default:
			return l.token()
		}
	}
	return token{kind: tEOF, pos: l.pos(), off: l.off}, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (l *lexer) token() (token, error) {
	t := token{pos: l.pos(), off: l.off}
	if len(l.comments) > 0 && l.commentAt == l.line-1 {
		t.doc = l.comments
	}
	l.comments = nil
	l.tokLine = l.line
	c := l.src[l.off]
	switch {
	case isLetter(c) || c == '_':
		n := 1
		for l.off+n < len(l.src) && (isLetter(l.src[l.off+n]) || isDigit(l.src[l.off+n]) || l.src[l.off+n] == '_') {
			n++
		}
		t.kind, t.text = tIdent, l.src[l.off:l.off+n]
		l.advance(n)
		return t, nil
	case isDigit(c) || c == '-' && l.off+1 < len(l.src) && isDigit(l.src[l.off+1]):
		n := 1
		for l.off+n < len(l.src) && (isLetter(l.src[l.off+n]) || isDigit(l.src[l.off+n])) {
			n++
		}
		t.kind, t.text = tNum, l.src[l.off:l.off+n]
		v, err := parseNumber(t.text)
		if err != nil {
			return t, errorf(t.pos, "bad constant %q: %v", t.text, err)
		}
		t.num = v
		l.advance(n)
		return t, nil
	case strings.IndexByte("{}[]<>();:,=*", c) >= 0:
		t.kind, t.text = tPunct, string(c)
		l.advance(1)
		return t, nil
	}
	return t, errorf(t.pos, "unexpected character %q", c)
}

// parseNumber reads an RFC 4506 constant: decimal, 0x hex, or 0-led octal,
// optionally negative. Values must fit in 64 bits signed or unsigned.
func parseNumber(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	u, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, err
	}
	if neg {
		if u > 1<<63 {
			return 0, fmt.Errorf("out of range")
		}
		return -int64(u), nil
	}
	if u > 1<<63-1 {
		return 0, fmt.Errorf("out of range")
	}
	return int64(u), nil
}
