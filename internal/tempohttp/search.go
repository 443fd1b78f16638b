package tempohttp

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/traceql"
	"github.com/wirehouse/wirehouse/internal/traceql/eval"
)

// Search defaults and bounds, as Tempo's: 20 traces, 3 spans a spanset.
const (
	defaultLimit  = 20
	maxLimit      = 1000
	defaultSpss   = 3
	maxCandidates = 20000
	// defaultWindow is the range searched when the request gives none
	// (Grafana always gives one).
	defaultWindow = time.Hour
)

// lakeSource is the lake as the search engine's Source, for one search:
// it keeps where each candidate's matching spans lie, so that reading
// their traces reads only the hours around them.
type lakeSource struct {
	r     *lakeread.Reader
	found map[[16]byte]lakeread.FoundTrace
}

func (s *lakeSource) Candidates(ctx context.Context, tenant string, h eval.Hint, start, end time.Time, limit int) ([][16]byte, bool, error) {
	q := lakeread.Query{Service: h.Service, Operation: h.Name, StartMin: start, StartMax: end,
		DurationMin: h.MinDur, DurationMax: h.MaxDur, ErrorStatus: h.Error, Limit: limit}
	if len(h.Attrs) > 0 {
		q.Attributes = h.Attrs
	}
	found, err := s.r.FindTraces(ctx, tenant, q)
	if err != nil {
		return nil, false, err
	}
	ids := make([][16]byte, len(found))
	for i, f := range found {
		ids[i] = f.ID
		s.found[f.ID] = f
	}
	return ids, len(found) == limit, nil
}

func (s *lakeSource) Spans(ctx context.Context, tenant string, ids [][16]byte, fn func([]byte) error) error {
	if len(ids) == 0 {
		return nil
	}
	// Traces Candidates found are read around where it found them;
	// others (a span-local search's, from SpanPoints) by id alone, which
	// the lake's trace-id index keeps to the files holding them.
	var found []lakeread.FoundTrace
	var byID [][16]byte
	for _, id := range ids {
		if f, ok := s.found[id]; ok {
			found = append(found, f)
		} else {
			byID = append(byID, id)
		}
	}
	var spans []*lakeread.Spans
	if len(found) > 0 {
		got, err := s.r.FoundTracesSpans(ctx, tenant, found)
		if err != nil {
			return err
		}
		spans = got
	}
	if len(byID) > 0 {
		got, _, err := s.r.Traces(ctx, tenant, byID, time.Time{}, time.Time{})
		if err != nil {
			return err
		}
		spans = append(spans, got...)
	}
	for _, sp := range spans {
		td, err := sp.AppendProto(nil)
		if err != nil {
			return err
		}
		if err := fn(td); err != nil {
			return err
		}
	}
	return nil
}

// searchParams are /api/search's parameters.
type searchParams struct {
	q            string
	limit, spss  int
	start, end   time.Time
	minDur, maxD time.Duration
}

func parseSearch(r *http.Request, now time.Time) (searchParams, error) {
	p := searchParams{q: r.FormValue("q"), limit: defaultLimit, spss: defaultSpss}
	var err error
	if s := r.FormValue("limit"); s != "" {
		if p.limit, err = strconv.Atoi(s); err != nil || p.limit < 1 {
			return p, fmt.Errorf("invalid limit %q: want a positive integer", s)
		}
		p.limit = min(p.limit, maxLimit)
	}
	if s := r.FormValue("spss"); s != "" {
		if p.spss, err = strconv.Atoi(s); err != nil || p.spss < 1 {
			return p, fmt.Errorf("invalid spss %q: want a positive integer", s)
		}
	}
	if p.start, err = secondsParam(r, "start"); err != nil {
		return p, err
	}
	if p.end, err = secondsParam(r, "end"); err != nil {
		return p, err
	}
	switch {
	case p.end.IsZero():
		p.end = now
	default:
		p.end = p.end.Add(time.Second) // whole seconds: the end's second included
	}
	if p.start.IsZero() {
		p.start = p.end.Add(-defaultWindow)
	}
	if !p.start.Before(p.end) {
		return p, fmt.Errorf("invalid start %s: not before end %s", r.FormValue("start"), r.FormValue("end"))
	}
	if err := readapi.CheckRange(r.Context(), p.start, p.end); err != nil {
		return p, err
	}
	for name, d := range map[string]*time.Duration{"minDuration": &p.minDur, "maxDuration": &p.maxD} {
		if s := r.FormValue(name); s != "" {
			if *d, err = time.ParseDuration(s); err != nil || *d < 0 {
				return p, fmt.Errorf("invalid %s %q: want a duration such as 100ms", name, s)
			}
		}
	}
	if tags := r.FormValue("tags"); tags != "" {
		if p.q != "" {
			return p, fmt.Errorf("give q or tags, not both")
		}
		if p.q, err = tagsQuery(tags); err != nil {
			return p, err
		}
	}
	if p.q == "" {
		p.q = "{ }"
	}
	return p, nil
}

// tagsQuery turns Tempo's legacy tags search (logfmt: key=value pairs,
// values quoted when they hold spaces) into TraceQL: each pair an
// unscoped equality, service.name the resource's.
func tagsQuery(tags string) (string, error) {
	var conds []string
	for rest := strings.TrimSpace(tags); rest != ""; rest = strings.TrimSpace(rest) {
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return "", fmt.Errorf("invalid tags %q: want key=value pairs", tags)
		}
		key := rest[:eq]
		rest = rest[eq+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			end := 1
			for end < len(rest) && (rest[end] != '"' || rest[end-1] == '\\') {
				end++
			}
			if end == len(rest) {
				return "", fmt.Errorf("invalid tags %q: unterminated quote", tags)
			}
			v, err := strconv.Unquote(rest[:end+1])
			if err != nil {
				return "", fmt.Errorf("invalid tags %q: %v", tags, err)
			}
			val, rest = v, rest[end+1:]
		} else if sp := strings.IndexAny(rest, " \t"); sp >= 0 {
			val, rest = rest[:sp], rest[sp:]
		} else {
			val, rest = rest, ""
		}
		attr := traceql.Attribute{Name: key}
		if key == "service.name" {
			attr.Scope = traceql.ScopeResource
		}
		conds = append(conds, attr.String()+" = "+strconv.Quote(val))
	}
	return "{ " + strings.Join(conds, " && ") + " }", nil
}

// search answers /api/search: TraceQL (q) or tags, in Tempo's JSON.
func (h *Handler) search(r *http.Request) (body, error) {
	p, err := parseSearch(r, time.Now())
	if err != nil {
		return body{}, &readapi.Error{Kind: readapi.KindBadRequest, Err: err}
	}
	parsed, err := traceql.Parse(p.q)
	if err != nil {
		return body{}, err // a *ParseError: 400 with its line and column
	}
	if parsed.IsMetrics() {
		return body{}, readapi.Errorf(readapi.KindBadRequest, "a metrics query goes to /api/metrics/query_range")
	}
	q, err := eval.Compile(parsed)
	if err != nil {
		return body{}, &readapi.Error{Kind: readapi.KindBadRequest, Err: err}
	}
	lim := eval.SearchLimits{Limit: p.limit, MaxCandidates: maxCandidates}
	if p.minDur > 0 || p.maxD > 0 {
		lim.Keep = func(t *eval.Trace) bool {
			s := eval.Summarize(t)
			d := time.Duration(s.End - s.Start)
			return d >= p.minDur && (p.maxD == 0 || d <= p.maxD)
		}
	}
	src := &lakeSource{r: h.cfg.Reader, found: map[[16]byte]lakeread.FoundTrace{}}
	res, err := eval.Search(r.Context(), src, tenant.FromContext(r.Context()), q, p.start, p.end, lim)
	if err != nil {
		return body{}, err
	}
	b, err := json.Marshal(searchAnswer(res, q, p.spss))
	if err != nil {
		return body{}, err
	}
	return body{b: b, ctype: "application/json"}, nil
}

// The JSON of Tempo's SearchResponse.
type (
	searchResponse struct {
		Traces  []traceJSON   `json:"traces"`
		Metrics searchMetrics `json:"metrics"`
	}
	searchMetrics struct {
		InspectedTraces int    `json:"inspectedTraces"`
		CompletedJobs   int    `json:"completedJobs"`
		TotalJobs       int    `json:"totalJobs"`
		InspectedBytes  string `json:"inspectedBytes"`
	}
	traceJSON struct {
		TraceID           string        `json:"traceID"`
		RootServiceName   string        `json:"rootServiceName"`
		RootTraceName     string        `json:"rootTraceName,omitempty"`
		StartTimeUnixNano string        `json:"startTimeUnixNano"`
		DurationMs        int64         `json:"durationMs"`
		SpanSet           *spanSetJSON  `json:"spanSet,omitempty"`
		SpanSets          []spanSetJSON `json:"spanSets"`
	}
	spanSetJSON struct {
		Spans      []spanJSON `json:"spans"`
		Matched    int        `json:"matched"`
		Attributes []attrJSON `json:"attributes,omitempty"`
	}
	spanJSON struct {
		SpanID            string     `json:"spanID"`
		Name              string     `json:"name,omitempty"`
		StartTimeUnixNano string     `json:"startTimeUnixNano"`
		DurationNanos     string     `json:"durationNanos"`
		Attributes        []attrJSON `json:"attributes,omitempty"`
	}
	attrJSON struct {
		Key   string         `json:"key"`
		Value map[string]any `json:"value"`
	}
)

// rootUnknown is what Tempo answers for a trace whose root span it has not
// seen.
const rootUnknown = "<root span not yet received>"

// searchAnswer builds the response: each trace with its spansets, each
// with at most spss spans (the earliest), their attributes those the
// query reads and selects.
func searchAnswer(res eval.SearchResult, q *eval.Query, spss int) searchResponse {
	out := searchResponse{Traces: []traceJSON{}, Metrics: searchMetrics{InspectedTraces: res.Inspected, CompletedJobs: 1, TotalJobs: 1, InspectedBytes: "0"}}
	for _, m := range res.Matches {
		s := eval.Summarize(m.Trace)
		tj := traceJSON{TraceID: hex.EncodeToString(m.ID[:]), RootServiceName: rootUnknown,
			StartTimeUnixNano: strconv.FormatInt(s.Start, 10), DurationMs: (s.End - s.Start) / int64(time.Millisecond),
			SpanSets: []spanSetJSON{}}
		if s.HasRoot {
			tj.RootServiceName, tj.RootTraceName = s.RootService, s.RootName
		}
		for _, ss := range m.Spansets {
			sj := spanSetJSON{Matched: len(ss.Spans), Spans: []spanJSON{}}
			spans := append([]int32(nil), ss.Spans...)
			eval.SortSpans(m.Trace, spans)
			for _, i := range spans[:min(len(spans), spss)] {
				sp := &m.Trace.Spans[i]
				sj.Spans = append(sj.Spans, spanJSON{SpanID: hex.EncodeToString(sp.SpanID[:]), Name: sp.Name,
					StartTimeUnixNano: strconv.FormatInt(sp.StartUnixNano, 10),
					DurationNanos:     strconv.FormatInt(sp.EndUnixNano-sp.StartUnixNano, 10),
					Attributes:        shownAttrs(q, m.Trace, i)})
			}
			for _, b := range ss.By {
				sj.Attributes = append(sj.Attributes, attrJSON{Key: strings.TrimPrefix(b.Field.String(), "."), Value: anyValue(b.Value)})
			}
			tj.SpanSets = append(tj.SpanSets, sj)
		}
		if len(tj.SpanSets) > 0 {
			tj.SpanSet = &tj.SpanSets[0]
		}
		out.Traces = append(out.Traces, tj)
	}
	return out
}

// shownAttrs are span i's values of the attributes the query reads and
// selects, named as Tempo names them (the attribute's name without its
// scope), sorted by name.
func shownAttrs(q *eval.Query, t *eval.Trace, i int32) []attrJSON {
	var out []attrJSON
	seen := map[string]bool{}
	for _, a := range q.Shown() {
		v, ok := eval.FieldOf(t, i, a)
		if !ok || seen[a.Name] {
			continue
		}
		seen[a.Name] = true
		out = append(out, attrJSON{Key: a.Name, Value: anyValue(v)})
	}
	sort.Slice(out, func(x, y int) bool { return out[x].Key < out[y].Key })
	return out
}

// anyValue is a value in OTLP/JSON's AnyValue shape, as Tempo writes
// attributes.
func anyValue(v eval.Value) map[string]any {
	switch v.Type {
	case traceql.TypeString:
		return map[string]any{"stringValue": v.S}
	case traceql.TypeInt:
		return map[string]any{"intValue": strconv.FormatInt(v.I, 10)}
	case traceql.TypeFloat:
		return map[string]any{"doubleValue": v.F}
	case traceql.TypeBool:
		return map[string]any{"boolValue": v.B}
	case traceql.TypeDuration:
		return map[string]any{"stringValue": time.Duration(v.I).String()}
	case traceql.TypeStatus, traceql.TypeKind:
		return map[string]any{"stringValue": v.String()}
	}
	return map[string]any{"stringValue": "nil"}
}

// SpanPoints is lakeread.SpanPoints for eval's span-local metrics and
// searches; a lake with version-1 spans files in the range, or a filter
// on an attribute without a typed column, has the traces read instead.
func (s *lakeSource) SpanPoints(ctx context.Context, tenant string, f eval.SpanFilter, fn func([]eval.SpanPoint) error) error {
	_, err := s.NewestSpanPoints(ctx, tenant, f, 0, fn)
	return err
}

// NewestSpanPoints is lakeread.NewestSpanPoints for eval's span-local
// searches (eval.NewestSource), as SpanPoints.
func (s *lakeSource) NewestSpanPoints(ctx context.Context, tenant string, f eval.SpanFilter, n int, fn func([]eval.SpanPoint) error) (int64, error) {
	lf := lakeread.SpanFilter{Start: f.Start, End: f.End, Service: f.Service, Name: f.Name, Kind: f.Kind, Status: f.Status,
		MinDur: f.MinDur, MaxDur: f.MaxDur, Counted: f.Counted}
	for _, n := range [...]struct {
		e eval.SpanNeed
		l lakeread.SpanFields
	}{{eval.NeedService, lakeread.NeedService}, {eval.NeedName, lakeread.NeedName}, {eval.NeedKind, lakeread.NeedKind},
		{eval.NeedStatus, lakeread.NeedStatus}, {eval.NeedDuration, lakeread.NeedDuration}, {eval.NeedTraceID, lakeread.NeedTraceID},
		{eval.NeedEnd, lakeread.NeedEnd}} {
		if f.Need&n.e != 0 {
			lf.Need |= n.l
		}
	}
	for _, c := range f.Ints {
		lf.Ints = append(lf.Ints, lakeread.IntCond{Key: c.Key, Op: c.Op, Value: c.Value})
	}
	cutoff, err := s.r.NewestSpanPoints(ctx, tenant, lf, n, fn) // one type: the batch as it is
	if errors.Is(err, lakeread.ErrVersion1) || errors.Is(err, lakeread.ErrNotColumn) {
		return cutoff, eval.ErrNeedTraces
	}
	return cutoff, err
}
