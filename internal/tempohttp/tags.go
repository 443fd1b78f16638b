package tempohttp

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/traceql"
	"github.com/wirehouse/wirehouse/internal/traceql/eval"
)

// Tag values: at most this many a request, and the traces a q filter
// reads (the most recent matching ones).
const (
	maxTagValues   = 1000
	tagValueTraces = 500
)

// tagsRange reads start and end (Unix seconds) of a tags request: unset
// means the whole lake, as Tempo's tags APIs answer without them.
func tagsRange(r *http.Request) (start, end time.Time, err error) {
	if start, err = secondsParam(r, "start"); err != nil {
		return
	}
	if end, err = secondsParam(r, "end"); err == nil && !end.IsZero() {
		end = end.Add(time.Second)
	}
	return
}

func jsonBody(v any) (body, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return body{}, err
	}
	return body{b: b, ctype: "application/json"}, nil
}

func badRequest(err error) error { return &readapi.Error{Kind: readapi.KindBadRequest, Err: err} }

// tags answers /api/search/tags: the span and resource attribute names,
// unscoped, sorted ({"tagNames": [...]}).
func (h *Handler) tags(r *http.Request) (body, error) {
	start, end, err := tagsRange(r)
	if err != nil {
		return body{}, badRequest(err)
	}
	names, err := h.cfg.Reader.TraceTagNames(r.Context(), tenant.FromContext(r.Context()), start, end)
	if err != nil {
		return body{}, err
	}
	all := slices.Concat(names[lakeread.TagSpan], names[lakeread.TagResource])
	slices.Sort(all)
	return jsonBody(map[string][]string{"tagNames": slices.Compact(all)})
}

// scopeJSON is one scope of /api/v2/search/tags.
type scopeJSON struct {
	Name string   `json:"name"`
	Tags []string `json:"tags"`
}

// tagsV2 answers /api/v2/search/tags?scope=: the attribute names of each
// scope (resource, span, event, link, instrumentation) and the
// intrinsics, or those of the one scope asked.
func (h *Handler) tagsV2(r *http.Request) (body, error) {
	start, end, err := tagsRange(r)
	if err != nil {
		return body{}, badRequest(err)
	}
	want := r.FormValue("scope")
	switch want {
	case "", "all", "none", "intrinsic":
	default:
		if !slices.Contains(lakeread.TagScopes, lakeread.TagScope(want)) {
			return body{}, badRequest(fmt.Errorf("invalid scope %q: want resource, span, event, link, instrumentation or intrinsic", want))
		}
	}
	var out []scopeJSON
	if want != "intrinsic" {
		names, err := h.cfg.Reader.TraceTagNames(r.Context(), tenant.FromContext(r.Context()), start, end)
		if err != nil {
			return body{}, err
		}
		for _, s := range lakeread.TagScopes {
			if want == "" || want == "all" || want == "none" || want == string(s) {
				out = append(out, scopeJSON{Name: string(s), Tags: append([]string{}, names[s]...)})
			}
		}
	}
	if want == "" || want == "all" || want == "intrinsic" {
		out = append(out, scopeJSON{Name: "intrinsic", Tags: traceql.IntrinsicWords()})
	}
	return jsonBody(map[string][]scopeJSON{"scopes": out})
}

// tagValueJSON is one value of /api/v2/search/tag/{tag}/values.
type tagValueJSON struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// tagValues answers /api/search/tag/{tag}/values (v1: the values as
// text, {"tagValues": [...]}) and /api/v2/search/tag/{tag}/values (typed
// values; q, a TraceQL filter, keeps the values of the spans it matches).
func (h *Handler) tagValues(r *http.Request, v2 bool) (body, error) {
	start, end, err := tagsRange(r)
	if err != nil {
		return body{}, badRequest(err)
	}
	tag := r.PathValue("tag")
	vals, err := h.readTagValues(r, tag, start, end, v2)
	if err != nil {
		return body{}, err
	}
	if !v2 {
		text := make([]string, 0, len(vals))
		for _, v := range vals {
			text = append(text, v.Value)
		}
		slices.Sort(text)
		return jsonBody(map[string][]string{"tagValues": slices.Compact(text)})
	}
	return jsonBody(map[string][]tagValueJSON{"tagValues": vals})
}

// readTagValues reads tag's values: an intrinsic's, a scoped attribute's
// (resource., span.) or an unscoped one's (v1's tag, v2's .name: span
// and resource).
func (h *Handler) readTagValues(r *http.Request, tag string, start, end time.Time, v2 bool) ([]tagValueJSON, error) {
	ctx, tn := r.Context(), tenant.FromContext(r.Context())
	if q := r.FormValue("q"); v2 && q != "" {
		return h.matchedTagValues(r, tag, q, start, end)
	}
	if in, ok := traceql.LookupIntrinsic(tag); ok && v2 {
		switch in {
		case traceql.IntrinsicStatus:
			return keywords("error", "ok", "unset"), nil
		case traceql.IntrinsicKind:
			return keywords("client", "consumer", "internal", "producer", "server", "unspecified"), nil
		case traceql.IntrinsicName:
			ops, err := h.cfg.Reader.Operations(ctx, tn, "", "", start, end)
			if err != nil {
				return nil, err
			}
			var out []tagValueJSON
			for _, o := range ops {
				if len(out) == 0 || out[len(out)-1].Value != o.Name {
					out = append(out, tagValueJSON{"string", o.Name})
				}
			}
			return out, nil
		case traceql.IntrinsicRootServiceName:
			tag = "resource.service.name"
		default:
			return []tagValueJSON{}, nil // durations, ids: no list of values
		}
	}
	scopes := []lakeread.TagScope{lakeread.TagSpan, lakeread.TagResource}
	key := tag
	if v2 {
		a, err := attributeOf(tag)
		if err != nil {
			return nil, badRequest(err)
		}
		key = a.Name
		switch a.Scope {
		case traceql.ScopeSpan:
			scopes = scopes[:1]
		case traceql.ScopeResource:
			scopes = scopes[1:]
		case traceql.ScopeInstrumentation:
			scopes = []lakeread.TagScope{lakeread.TagInstrumentation}
		case traceql.ScopeEvent:
			scopes = []lakeread.TagScope{lakeread.TagEvent}
		case traceql.ScopeLink:
			scopes = []lakeread.TagScope{lakeread.TagLink}
		case traceql.ScopeNone:
		default:
			return []tagValueJSON{}, nil
		}
	}
	out := []tagValueJSON{}
	seen := map[lakeread.TagValue]bool{}
	for _, s := range scopes {
		vals, err := h.cfg.Reader.TraceTagValues(ctx, tn, s, key, start, end, maxTagValues)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			if !seen[v] && len(out) < maxTagValues {
				seen[v] = true
				out = append(out, tagValueJSON{v.Type, v.Value})
			}
		}
	}
	return out, nil
}

// attributeOf reads a v2 tag: scope.name, .name, or a name without a
// scope (taken as unscoped, dots and all).
func attributeOf(tag string) (traceql.Attribute, error) {
	q := tag
	if i := strings.IndexByte(q, '.'); i != 0 && (i < 0 || !slices.Contains(tagScopeWords, q[:i])) {
		q = "." + q
	}
	parsed, err := traceql.Parse("{ " + q + " = nil }")
	if err != nil {
		return traceql.Attribute{}, fmt.Errorf("invalid tag %q", tag)
	}
	b, ok := parsed.Pipeline.Stages[0].(traceql.SpansetStage).Spanset.(traceql.Filter).Expr.(traceql.Binary)
	if !ok {
		return traceql.Attribute{}, fmt.Errorf("invalid tag %q", tag)
	}
	a, ok := b.L.(traceql.Attribute)
	if !ok {
		return traceql.Attribute{}, fmt.Errorf("invalid tag %q", tag)
	}
	return a, nil
}

var tagScopeWords = []string{"span", "resource", "event", "link", "instrumentation"}

func keywords(ws ...string) []tagValueJSON {
	out := make([]tagValueJSON, len(ws))
	for i, w := range ws {
		out[i] = tagValueJSON{"keyword", w}
	}
	return out
}

// matchedTagValues is tag's values over the spans TraceQL filter q
// matches, in the most recent tagValueTraces traces it matches.
func (h *Handler) matchedTagValues(r *http.Request, tag, q string, start, end time.Time) ([]tagValueJSON, error) {
	parsed, err := traceql.Parse(q)
	if err != nil {
		return nil, err
	}
	if parsed.IsMetrics() {
		return nil, badRequest(fmt.Errorf("q must be a spanset filter"))
	}
	var field traceql.Field
	if in, ok := traceql.LookupIntrinsic(tag); ok {
		field = in
	} else if field, err = attributeOf(tag); err != nil {
		return nil, badRequest(err)
	}
	cq, err := eval.Compile(parsed)
	if err != nil {
		return nil, badRequest(err)
	}
	if start.IsZero() || end.IsZero() {
		end = time.Now()
		start = end.Add(-defaultWindow)
	}
	src := &lakeSource{r: h.cfg.Reader, found: map[[16]byte]lakeread.FoundTrace{}}
	res, err := eval.Search(r.Context(), src, tenant.FromContext(r.Context()), cq, start, end,
		eval.SearchLimits{Limit: tagValueTraces, MaxCandidates: maxCandidates})
	if err != nil {
		return nil, err
	}
	out := []tagValueJSON{}
	seen := map[tagValueJSON]bool{}
	for _, m := range res.Matches {
		for _, ss := range m.Spansets {
			for _, i := range ss.Spans {
				v, ok := eval.FieldOf(m.Trace, i, field)
				if !ok {
					continue
				}
				tv := typedValue(v)
				if !seen[tv] && len(out) < maxTagValues {
					seen[tv] = true
					out = append(out, tv)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b tagValueJSON) int {
		return cmp.Or(strings.Compare(a.Type, b.Type), strings.Compare(a.Value, b.Value))
	})
	return out, nil
}

// typedValue is a value as the v2 tag values API types it.
func typedValue(v eval.Value) tagValueJSON {
	switch v.Type {
	case traceql.TypeString:
		return tagValueJSON{"string", v.S}
	case traceql.TypeInt:
		return tagValueJSON{"int", strconv.FormatInt(v.I, 10)}
	case traceql.TypeFloat:
		return tagValueJSON{"float", strconv.FormatFloat(v.F, 'g', -1, 64)}
	case traceql.TypeBool:
		return tagValueJSON{"bool", strconv.FormatBool(v.B)}
	case traceql.TypeDuration:
		return tagValueJSON{"duration", time.Duration(v.I).String()}
	}
	return tagValueJSON{"keyword", v.String()}
}
