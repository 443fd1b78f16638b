package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// DetectedField is a field of a query's lines, as Loki's detected_fields
// reports it: its name, the type all its values fit, how many distinct
// values the lines hold, and the parsers it came from ("logfmt", "json";
// none for structured metadata). JSONPath is the keys of a json field
// (nested keys join its name with "_").
type DetectedField struct {
	Label       string
	Type        string // string, int, float, boolean, duration, bytes
	Cardinality int
	Parsers     []string
	JSONPath    []string
	values      map[string]bool
}

// maxFieldValues bounds the distinct values kept of a field: its
// cardinality stops there.
const maxFieldValues = 10000

// DetectFields returns the fields of the newest lineLimit lines q (a log
// query) selects in its range: their structured metadata and what the
// logfmt or JSON parser finds in each line (a line that is a JSON object
// is read as JSON, any other as logfmt, where it has key=value pairs; a
// parsed name that is a label already gets the suffix _extracted, as
// Loki's). Sorted by name.
func (e *Engine) DetectFields(ctx context.Context, q Query, lineLimit int) ([]*DetectedField, error) {
	lq, ok := q.Expr.(*logql.LogQuery)
	if !ok {
		return nil, fmt.Errorf("detected fields take a log query, not %s", q.Expr)
	}
	q.Limit, q.Categorize, q.Forward = lineLimit, true, false
	q.Expr = lq
	res, err := e.Exec(ctx, q)
	if err != nil {
		return nil, err
	}
	fields := map[string]*DetectedField{}
	add := func(name, parser string, path []string, v string) {
		f := fields[name]
		if f == nil {
			f = &DetectedField{Label: name, values: map[string]bool{}, JSONPath: path}
			fields[name] = f
		}
		if parser != "" && !slices.Contains(f.Parsers, parser) {
			f.Parsers = append(f.Parsers, parser)
		}
		if len(f.values) < maxFieldValues {
			f.values[v] = true
		}
	}
	for _, s := range res.Streams {
		for _, en := range s.Entries {
			taken := func(name string) bool {
				_, inStream := s.Labels.Get(name)
				_, inMD := en.Metadata.Get(name)
				return inStream || inMD
			}
			for _, l := range en.Metadata {
				add(l.Name, "", nil, l.Value)
			}
			// The query's own parsers' labels are found again below.
			line := []byte(en.Line)
			if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '{' {
				var m map[string]any
				if json.Unmarshal(t, &m) == nil {
					jsonLeaves("", nil, m, func(name string, path []string, v string) {
						if taken(name) {
							name += "_extracted"
						}
						add(name, "json", path, v)
					})
					continue
				}
			}
			pairs, _ := parseLogfmt(line)
			for _, kv := range pairs {
				if kv[1] == "" || !labelNameAsIs(kv[0]) {
					continue // a bare word, or no key: not logfmt
				}
				name := kv[0]
				if taken(name) {
					name += "_extracted"
				}
				add(name, "logfmt", nil, kv[1])
			}
		}
	}
	out := make([]*DetectedField, 0, len(fields))
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		f := fields[name]
		f.Cardinality = len(f.values)
		f.Type = fieldType(f.values)
		slices.Sort(f.Parsers)
		out = append(out, f)
	}
	return out, nil
}

// Values returns the field's distinct values, sorted.
func (f *DetectedField) Values() []string { return slices.Sorted(maps.Keys(f.values)) }

// jsonLeaves calls fn with each leaf of a JSON object: its name (keys
// joined by "_", as the json parser names them), its path and its value
// as text; arrays are left out, as the parser leaves them.
func jsonLeaves(prefix string, path []string, m map[string]any, fn func(name string, path []string, v string)) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		name := LabelName(k)
		if prefix != "" {
			name = prefix + "_" + name
		}
		p := append(slices.Clip(path), k)
		switch v := m[k].(type) {
		case map[string]any:
			jsonLeaves(name, p, v, fn)
		case string:
			fn(name, p, v)
		case float64:
			fn(name, p, strconv.FormatFloat(v, 'f', -1, 64))
		case bool:
			fn(name, p, strconv.FormatBool(v))
		}
	}
}

// fieldType is the narrowest of Loki's field types all values fit: int,
// float, boolean, duration, bytes, else string.
func fieldType(values map[string]bool) string {
	all := func(ok func(string) bool) bool {
		for v := range values {
			if !ok(v) {
				return false
			}
		}
		return len(values) > 0
	}
	switch {
	case all(func(v string) bool { _, err := strconv.ParseInt(v, 10, 64); return err == nil }):
		return "int"
	case all(func(v string) bool { _, err := strconv.ParseFloat(v, 64); return err == nil }):
		return "float"
	case all(func(v string) bool {
		_, err := strconv.ParseBool(v)
		return err == nil && strings.ContainsAny(v, "tfTF")
	}):
		return "boolean"
	case all(func(v string) bool { _, err := time.ParseDuration(v); return err == nil }):
		return "duration"
	case all(func(v string) bool {
		_, err := logql.ParseBytes(v)
		return err == nil && strings.IndexFunc(v, func(r rune) bool { return r >= 'A' && r <= 'z' }) > 0
	}):
		return "bytes"
	}
	return "string"
}
