package lokiapi

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Defaults of detected_fields and detected_field values, as Loki's
// documentation gives limit's; line_limit is the lines read in all (Loki's
// is per shard, 100).
const (
	defaultFieldLimit = 1000
	defaultLineLimit  = 1000
)

// detectedParams reads query (a log query), the range (start, end or
// since), line_limit and limit (or field_limit).
func (h *Handler) detectedParams(r *http.Request) (q Query, lineLimit, limit int, err error) {
	q = Query{Tenant: tenant.FromContext(r.Context())}
	text := r.FormValue("query")
	if text == "" {
		return q, 0, 0, fmt.Errorf("%w: the query parameter is missing", errBad)
	}
	if q.Expr, err = logql.Parse(text); err != nil {
		return q, 0, 0, err
	}
	if _, ok := q.Expr.(*logql.LogQuery); !ok {
		return q, 0, 0, fmt.Errorf("%w: detected fields take a log query, not %s", errBad, text)
	}
	if q.Start, q.End, err = h.rangeParams(r); err != nil {
		return q, 0, 0, err
	}
	intParam := func(def int, names ...string) (int, error) {
		for _, name := range names {
			if s := r.FormValue(name); s != "" {
				n, err := strconv.Atoi(s)
				if err != nil || n <= 0 {
					return 0, fmt.Errorf("%w: invalid %s %q", errBad, name, s)
				}
				return n, nil
			}
		}
		return def, nil
	}
	if lineLimit, err = intParam(defaultLineLimit, "line_limit"); err != nil {
		return q, 0, 0, err
	}
	if lineLimit > h.cfg.MaxLines {
		return q, 0, 0, fmt.Errorf("%w: line_limit %d over the maximum of %d lines", eval.ErrLimit, lineLimit, h.cfg.MaxLines)
	}
	limit, err = intParam(defaultFieldLimit, "limit", "field_limit")
	return q, lineLimit, limit, err
}

// detect runs DetectFields for the request.
func (h *Handler) detect(r *http.Request) ([]*eval.DetectedField, int, error) {
	q, lineLimit, limit, err := h.detectedParams(r)
	if err != nil {
		return nil, 0, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	fields, err := h.eng.DetectFields(ctx, q, lineLimit)
	return fields, limit, err
}

// detectedFields answers /detected_fields: the fields of the query's
// newest lines (line_limit), at most limit of them, in Loki's shape:
// {"fields": [{"label", "type", "cardinality", "parsers", "jsonPath"}],
// "limit"}, parsers null for structured metadata.
func (h *Handler) detectedFields(r *http.Request) (any, error) {
	fields, limit, err := h.detect(r)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, min(len(fields), limit))
	for _, f := range fields[:min(len(fields), limit)] {
		m := map[string]any{"label": f.Label, "type": f.Type, "cardinality": f.Cardinality, "parsers": f.Parsers}
		if f.Parsers == nil {
			m["parsers"] = nil
		}
		if len(f.JSONPath) > 0 {
			m["jsonPath"] = f.JSONPath
		}
		out = append(out, m)
	}
	return map[string]any{"fields": out, "limit": limit}, nil
}

// detectedFieldValues answers /detected_field/{name}/values: the distinct
// values of a field of the query's newest lines, sorted, at most limit:
// {"values": [...], "limit"}.
func (h *Handler) detectedFieldValues(r *http.Request) (any, error) {
	fields, limit, err := h.detect(r)
	if err != nil {
		return nil, err
	}
	values := []string{}
	name := r.PathValue("name")
	for _, f := range fields {
		if f.Label == name {
			values = f.Values()
		}
	}
	return map[string]any{"values": values[:min(len(values), limit)], "limit": limit}, nil
}

// detectedLabels answers /detected_labels: the stream labels of the
// streams query selects (every stream without one) in the range, each
// with its number of distinct values: {"detectedLabels": [{"label",
// "cardinality"}]}, sorted by name.
func (h *Handler) detectedLabels(r *http.Request) (any, error) {
	var sel []string
	if q := r.FormValue("query"); q != "" && q != "{}" {
		sel = append(sel, q)
	}
	streams, err := h.streamsOf(r, sel)
	if err != nil {
		return nil, err
	}
	values := map[string]map[string]bool{}
	for _, s := range streams {
		for _, l := range s {
			if values[l.Name] == nil {
				values[l.Name] = map[string]bool{}
			}
			values[l.Name][l.Value] = true
		}
	}
	out := make([]map[string]any, 0, len(values))
	for _, name := range slices.Sorted(maps.Keys(values)) {
		out = append(out, map[string]any{"label": name, "cardinality": len(values[name])})
	}
	return map[string]any{"detectedLabels": out}, nil
}
