package eval

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Parsers: | json, | logfmt, | regexp "re", | pattern "p", | unpack. Each
// sets labels from the line; a label that would replace one the line
// has already gets the suffix _extracted (setExtracted). A line that does
// not parse is kept with __error__ set (json, unpack, logfmt --strict).

// parsers are the constructors of the parser stages by kind.
var parsers = map[logql.ParserKind]func(*logql.Parser) (stage, error){
	logql.ParseJSON:    compileJSON,
	logql.ParseLogfmt:  compileLogfmt,
	logql.ParseRegexp:  compileRegexp,
	logql.ParsePattern: compilePatternParser,
	logql.ParseUnpack:  compileUnpack,
}

// compileParser compiles a parser stage.
func compileParser(p *logql.Parser) (stage, error) {
	if c, ok := parsers[p.Kind]; ok {
		return c(p)
	}
	return nil, fmt.Errorf("unsupported parser %s", p.Kind)
}

// compileJSON compiles | json: every leaf of the line's object, or with
// parameters (| json a="b.c[0]") the values of their paths.
func compileJSON(p *logql.Parser) (stage, error) {
	if len(p.Params) > 0 {
		return func(e *entry) bool {
			var v any
			if err := json.Unmarshal(e.line, &v); err != nil {
				e.set("__error__", "JSONParserErr")
				e.set("__error_details__", err.Error())
				return true
			}
			for _, x := range p.Params {
				if s, ok := jsonPath(v, x.Path); ok {
					e.set(LabelName(x.Label), s)
				}
			}
			return true
		}, nil
	}
	return func(e *entry) bool {
		var m map[string]any
		if err := json.Unmarshal(e.line, &m); err != nil {
			e.set("__error__", "JSONParserErr")
			e.set("__error_details__", err.Error())
			return true
		}
		flattenJSON(e, "", m)
		return true
	}, nil
}

// compileLogfmt compiles | logfmt [--strict] [--keep-empty] [params].
func compileLogfmt(p *logql.Parser) (stage, error) {
	strict := false
	keepEmpty := false
	for _, f := range p.Flags {
		strict = strict || f == "--strict"
		keepEmpty = keepEmpty || f == "--keep-empty"
	}
	want := map[string]string{}
	for _, x := range p.Params {
		want[x.Path] = x.Label
	}
	return func(e *entry) bool {
		pairs, err := parseLogfmt(e.line)
		if err != nil && strict {
			e.set("__error__", "LogfmtParserErr")
			e.set("__error_details__", err.Error())
			return true
		}
		for _, kv := range pairs {
			if kv[1] == "" && !keepEmpty {
				continue
			}
			if len(want) > 0 {
				if l, ok := want[kv[0]]; ok {
					e.set(LabelName(l), kv[1])
				}
				continue
			}
			setExtracted(e, LabelName(kv[0]), kv[1])
		}
		return true
	}, nil
}

// compileRegexp compiles | regexp "re": its named captures.
func compileRegexp(p *logql.Parser) (stage, error) {
	re, err := regexp.Compile(p.Expr)
	if err != nil {
		return nil, fmt.Errorf("regexp parser: %w", err)
	}
	if len(re.SubexpNames()) < 2 {
		return nil, fmt.Errorf("regexp parser %q has no named capture", p.Expr)
	}
	return func(e *entry) bool {
		m := re.FindSubmatch(e.line)
		if m == nil {
			return true
		}
		for i, name := range re.SubexpNames() {
			if name != "" {
				setExtracted(e, LabelName(name), string(m[i]))
			}
		}
		return true
	}, nil
}

// compilePatternParser compiles | pattern "p": its captures.
func compilePatternParser(p *logql.Parser) (stage, error) {
	pt, err := compilePattern(p.Expr)
	if err != nil {
		return nil, err
	}
	return func(e *entry) bool {
		if m, ok := pt.match(string(e.line)); ok {
			for k, v := range m {
				setExtracted(e, LabelName(k), v)
			}
		}
		return true
	}, nil
}

// compileUnpack compiles | unpack: the string fields of the line's
// object as labels, and _entry as the line.
func compileUnpack(*logql.Parser) (stage, error) {
	return func(e *entry) bool {
		var m map[string]any
		if err := json.Unmarshal(e.line, &m); err != nil {
			e.set("__error__", "JSONParserErr")
			return true
		}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				continue
			}
			if k == "_entry" {
				e.line = []byte(s)
				continue
			}
			setExtracted(e, LabelName(k), s)
		}
		return true
	}, nil
}

// setExtracted sets a label a parser extracted; one that would replace a
// stream label or metadata gets the suffix _extracted, as in Loki.
func setExtracted(e *entry, name, v string) {
	if _, ok := e.labels[name]; ok {
		name += "_extracted"
	}
	e.set(name, v)
}

// flattenJSON sets a label per leaf of a JSON object, nested keys joined
// by "_"; arrays are left out, as Loki's json parser does.
func flattenJSON(e *entry, prefix string, m map[string]any) {
	for k, v := range m {
		name := LabelName(k)
		if prefix != "" {
			name = prefix + "_" + name
		}
		switch v := v.(type) {
		case map[string]any:
			flattenJSON(e, name, v)
		case []any:
		case string:
			setExtracted(e, name, v)
		case nil:
			setExtracted(e, name, "")
		case float64:
			setExtracted(e, name, strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			setExtracted(e, name, strconv.FormatBool(v))
		}
	}
}

// jsonPath evaluates a json parser parameter: a.b, a[0], a["k"].
func jsonPath(v any, path string) (string, bool) {
	for path != "" {
		switch {
		case path[0] == '.':
			path = path[1:]
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return "", false
			}
			key := path[1:end]
			path = path[end+1:]
			if uq, err := strconv.Unquote(key); err == nil {
				m, ok := v.(map[string]any)
				if !ok {
					return "", false
				}
				v = m[uq]
				continue
			}
			i, err := strconv.Atoi(key)
			a, ok := v.([]any)
			if err != nil || !ok || i < 0 || i >= len(a) {
				return "", false
			}
			v = a[i]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			m, ok := v.(map[string]any)
			if !ok {
				return "", false
			}
			v, path = m[path[:end]], path[end:]
		}
	}
	switch v := v.(type) {
	case string:
		return v, true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	case nil:
		return "", false
	default:
		b, _ := json.Marshal(v)
		return string(b), true
	}
}

// parseLogfmt reads key=value pairs (values bare or double-quoted).
func parseLogfmt(line []byte) ([][2]string, error) {
	var out [][2]string
	s := string(line)
	var bad error
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		i := strings.IndexAny(s, "= \t")
		if i == 0 {
			bad = fmt.Errorf("logfmt: unexpected %q", s[0])
			s = s[1:]
			continue
		}
		if i < 0 || s[i] != '=' {
			key := s
			if i >= 0 {
				key, s = s[:i], s[i:]
			} else {
				s = ""
			}
			out = append(out, [2]string{key, ""})
			continue
		}
		key := s[:i]
		s = s[i+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			j := 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				bad = fmt.Errorf("logfmt: unterminated quoted value of %s", key)
				val, s = s[1:], ""
			} else {
				uq, err := strconv.Unquote(s[:j+1])
				if err != nil {
					uq = s[1:j]
				}
				val, s = uq, s[j+1:]
			}
		} else {
			j := strings.IndexAny(s, " \t")
			if j < 0 {
				j = len(s)
			}
			val, s = s[:j], s[j:]
		}
		out = append(out, [2]string{key, val})
	}
	return out, bad
}
