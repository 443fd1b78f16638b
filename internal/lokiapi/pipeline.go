package lokiapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// entry is a log line going through a pipeline, with its labels: the
// stream's, the structured metadata and those the pipeline added.
type entry struct {
	ts     int64
	line   []byte
	stream Labels // the index labels
	labels map[string]string
	order  []string // label names in the order they were set, for parsers' collisions
}

func (e *entry) set(name, v string) {
	if _, ok := e.labels[name]; !ok {
		e.order = append(e.order, name)
	}
	e.labels[name] = v
}

func (e *entry) del(name string) { delete(e.labels, name) }

// sorted returns the entry's labels, sorted.
func (e *entry) sorted() Labels {
	out := make([]Label, 0, len(e.labels))
	for k, v := range e.labels {
		out = append(out, Label{k, v})
	}
	return labelsOf(out)
}

// stage is a compiled pipeline stage: it changes e and tells whether the
// line is kept.
type stage func(e *entry) bool

// compilePipeline compiles a log query's stages.
func compilePipeline(stages []logql.Stage) ([]stage, error) {
	var out []stage
	for _, s := range stages {
		st, err := compileStage(s)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

func compileStage(s logql.Stage) (stage, error) {
	switch s := s.(type) {
	case *logql.LineFilter:
		return compileLineFilter(s)
	case *logql.Parser:
		return compileParser(s)
	case *logql.LabelFilter:
		pred, err := compilePred(s.Pred)
		if err != nil {
			return nil, err
		}
		return pred, nil
	case *logql.LineFormat:
		tmpl, err := template.New("line_format").Funcs(templateFuncs).Option("missingkey=zero").Parse(s.Template)
		if err != nil {
			return nil, fmt.Errorf("line_format: %w", err)
		}
		return func(e *entry) bool {
			var b bytes.Buffer
			if err := tmpl.Execute(&b, templateData(e)); err != nil {
				e.set("__error__", "TemplateFormatErr")
				e.set("__error_details__", err.Error())
				return true
			}
			e.line = b.Bytes()
			return true
		}, nil
	case *logql.LabelFormat:
		type op struct {
			dst, src string
			tmpl     *template.Template
		}
		var ops []op
		for _, o := range s.Ops {
			if o.Rename {
				ops = append(ops, op{dst: o.Dst, src: o.Src})
				continue
			}
			t, err := template.New("label_format").Funcs(templateFuncs).Option("missingkey=zero").Parse(o.Template)
			if err != nil {
				return nil, fmt.Errorf("label_format %s: %w", o.Dst, err)
			}
			ops = append(ops, op{dst: o.Dst, tmpl: t})
		}
		return func(e *entry) bool {
			data := templateData(e)
			for _, o := range ops {
				if o.tmpl == nil {
					v := e.labels[o.src]
					e.del(o.src)
					e.set(o.dst, v)
					continue
				}
				var b bytes.Buffer
				if err := o.tmpl.Execute(&b, data); err != nil {
					e.set("__error__", "TemplateFormatErr")
					continue
				}
				e.set(o.dst, b.String())
			}
			return true
		}, nil
	case *logql.DropKeep:
		type m struct {
			name string
			test func(string) bool
		}
		var ms []m
		for _, l := range s.Labels {
			test, err := matcherTest(l)
			if err != nil {
				return nil, err
			}
			ms = append(ms, m{l.Name, test})
		}
		return func(e *entry) bool {
			if s.Keep {
				for name, v := range e.labels {
					keep := false
					for _, x := range ms {
						if x.name == name && (x.test == nil || x.test(v)) {
							keep = true
						}
					}
					if !keep {
						e.del(name)
					}
				}
				return true
			}
			for _, x := range ms {
				if v, ok := e.labels[x.name]; ok && (x.test == nil || x.test(v)) {
					e.del(x.name)
				}
			}
			return true
		}, nil
	case *logql.Decolorize:
		return func(e *entry) bool { e.line = ansi.ReplaceAll(e.line, nil); return true }, nil
	}
	return nil, fmt.Errorf("unsupported stage %s", s)
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")

// matcherTest is the test of a drop/keep or selector matcher; nil for a
// bare name.
func matcherTest(m logql.Matcher) (func(string) bool, error) {
	switch m.Op {
	case "":
		return nil, nil
	case logql.MatchEqual:
		return func(v string) bool { return v == m.Value }, nil
	case logql.MatchNotEqual:
		return func(v string) bool { return v != m.Value }, nil
	case logql.MatchRegexp, logql.MatchNotRegexp:
		re, err := regexp.Compile("^(?:" + m.Value + ")$")
		if err != nil {
			return nil, fmt.Errorf("matcher %s: %w", m, err)
		}
		if m.Op == logql.MatchRegexp {
			return re.MatchString, nil
		}
		return func(v string) bool { return !re.MatchString(v) }, nil
	}
	return nil, fmt.Errorf("matcher %s: unknown operator", m)
}

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

// pattern is a compiled pattern expression: literals and named captures
// (<name>; <_> captures nothing).
type pattern struct {
	lits  []string // lits[i] precedes names[i]; the last is the tail
	names []string
}

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

func compileParser(p *logql.Parser) (stage, error) {
	switch p.Kind {
	case logql.ParseJSON:
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
	case logql.ParseLogfmt:
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
	case logql.ParseRegexp:
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
	case logql.ParsePattern:
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
	case logql.ParseUnpack:
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
	return nil, fmt.Errorf("unsupported parser %s", p.Kind)
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

// templateData is what line_format and label_format templates see: the
// labels, and __line__ and __timestamp__.
func templateData(e *entry) map[string]any {
	m := make(map[string]any, len(e.labels)+2)
	for k, v := range e.labels {
		m[k] = v
	}
	m["__line__"] = string(e.line)
	m["__timestamp__"] = time.Unix(0, e.ts).UTC()
	return m
}

var templateFuncs = template.FuncMap{
	"ToLower": strings.ToLower, "ToUpper": strings.ToUpper, "lower": strings.ToLower, "upper": strings.ToUpper,
	"Title": strings.Title, //nolint:staticcheck // as Loki's
	"Trim":  strings.Trim, "TrimSpace": strings.TrimSpace, "TrimPrefix": strings.TrimPrefix, "TrimSuffix": strings.TrimSuffix,
	"trim": strings.TrimSpace, "trimPrefix": func(p, s string) string { return strings.TrimPrefix(s, p) },
	"trimSuffix": func(p, s string) string { return strings.TrimSuffix(s, p) },
	"Replace":    strings.Replace, "replace": func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
	"contains": func(sub, s string) bool { return strings.Contains(s, sub) }, "hasPrefix": func(p, s string) bool { return strings.HasPrefix(s, p) },
	"hasSuffix": func(p, s string) bool { return strings.HasSuffix(s, p) },
	"default": func(d string, v any) any {
		if v == nil || v == "" {
			return d
		}
		return v
	},
	"regexReplaceAll": func(re, s, repl string) (string, error) {
		r, err := regexp.Compile(re)
		if err != nil {
			return "", err
		}
		return r.ReplaceAllString(s, repl), nil
	},
	"unixEpoch": func(t time.Time) int64 { return t.Unix() },
	"toDate":    func(layout, v string) (time.Time, error) { return time.Parse(layout, v) },
	"date":      func(layout string, t time.Time) string { return t.Format(layout) },
}

// compilePred compiles a label filter's predicate. A value that does not
// convert to the filter's type keeps the line with __error__ set, as in
// Loki, so that | __error__="" drops it.
func compilePred(p logql.LabelPred) (stage, error) {
	switch p := p.(type) {
	case *logql.LabelAnd:
		l, err := compilePred(p.L)
		if err != nil {
			return nil, err
		}
		r, err := compilePred(p.R)
		if err != nil {
			return nil, err
		}
		return func(e *entry) bool { return l(e) && r(e) }, nil
	case *logql.LabelOr:
		l, err := compilePred(p.L)
		if err != nil {
			return nil, err
		}
		r, err := compilePred(p.R)
		if err != nil {
			return nil, err
		}
		return func(e *entry) bool { return l(e) || r(e) }, nil
	case *logql.LabelCompare:
		if p.Kind == logql.ValueString {
			test, err := matcherTest(logql.Matcher{Name: p.Label, Op: logql.MatchOp(p.Op), Value: p.Str})
			if err != nil {
				return nil, err
			}
			return func(e *entry) bool { return test(e.labels[p.Label]) }, nil
		}
		cmpf := numericCompare(p.Op)
		return func(e *entry) bool {
			v, ok := e.labels[p.Label]
			if !ok {
				return false
			}
			x, err := convert(p.Kind, v)
			if err != nil {
				e.set("__error__", "LabelFilterErr")
				e.set("__error_details__", err.Error())
				return true
			}
			return cmpf(x, p.Num)
		}, nil
	}
	return nil, fmt.Errorf("unsupported label filter %s", p)
}

func numericCompare(op string) func(a, b float64) bool {
	switch op {
	case "==":
		return func(a, b float64) bool { return a == b }
	case "!=":
		return func(a, b float64) bool { return a != b }
	case ">":
		return func(a, b float64) bool { return a > b }
	case ">=":
		return func(a, b float64) bool { return a >= b }
	case "<":
		return func(a, b float64) bool { return a < b }
	}
	return func(a, b float64) bool { return a <= b }
}

// convert reads a label's value as a number, a duration (seconds) or a
// byte size.
func convert(k logql.ValueKind, v string) (float64, error) {
	switch k {
	case logql.ValueDuration:
		d, err := logql.ParseDuration(v)
		return d.Seconds(), err
	case logql.ValueBytes:
		b, err := logql.ParseBytes(v)
		return float64(b), err
	}
	return strconv.ParseFloat(v, 64)
}
