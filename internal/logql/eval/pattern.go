package eval

import (
	"fmt"
	"strings"
)

// pattern is a compiled pattern expression, of the pattern parser and
// the |> and !> line filters: literals and named captures (<name>; <_>
// captures nothing).
type pattern struct {
	lits  []string // lits[i] precedes names[i]; the last is the tail
	names []string
}

// compilePattern compiles a pattern expression; it fails on one without
// a capture or with two captures side by side.
func compilePattern(s string) (*pattern, error) {
	p := &pattern{}
	lit := ""
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(s[i:], '>')
		}
		if i < 0 || j < 0 {
			lit += s
			break
		}
		name := s[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, " <") {
			lit += s[:i+1]
			s = s[i+1:]
			continue
		}
		p.lits = append(p.lits, lit+s[:i])
		p.names = append(p.names, name)
		lit, s = "", s[i+j+1:]
	}
	p.lits = append(p.lits, lit)
	for i := 1; i < len(p.names); i++ {
		if p.lits[i] == "" {
			return nil, fmt.Errorf("pattern %q: two captures with nothing between them", s)
		}
	}
	if len(p.names) == 0 {
		return nil, fmt.Errorf("pattern %q has no capture", s)
	}
	return p, nil
}

// match returns the captures of line, or false if it does not match.
func (p *pattern) match(line string) (map[string]string, bool) {
	out := map[string]string{}
	if !strings.HasPrefix(line, p.lits[0]) {
		return nil, false
	}
	rest := line[len(p.lits[0]):]
	for i, name := range p.names {
		next := p.lits[i+1]
		var v string
		if next == "" {
			v, rest = rest, ""
		} else {
			k := strings.Index(rest, next)
			if k < 0 {
				return nil, false
			}
			v, rest = rest[:k], rest[k+len(next):]
		}
		if name != "_" {
			out[name] = v
		}
	}
	return out, true
}
