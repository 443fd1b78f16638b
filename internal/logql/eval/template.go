package eval

import (
	"regexp"
	"strings"
	"text/template"
	"time"
)

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

// templateFuncs are the functions of line_format and label_format
// templates, by the names Loki documents.
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
