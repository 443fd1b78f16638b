package eval

import (
	"context"
	"fmt"
	"time"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// Hint is what every trace a query can match must hold: one span with
// all of it. A Source uses it to find candidate traces without reading
// every span; the query then runs over each candidate's whole trace, so
// a hint only ever admits too much.
type Hint struct {
	Service   string            // resource.service.name, "" any
	Name      string            // span name, "" any
	Attrs     map[string]string // attributes (any scope) whose value's text is this
	Error     bool              // an error status
	MinDur    time.Duration     // span duration at least this (0: any)
	MaxDur    time.Duration     // at most this (0: any)
	Unbounded bool              // no span condition at all: every trace is a candidate
}

// Source gives the engine traces: candidates for a hint, then their
// spans.
type Source interface {
	// Candidates returns at most limit ids of tenant's traces with a span
	// that holds hint and starts in [start, end), the most recent first,
	// and whether there may be more.
	Candidates(ctx context.Context, tenant string, hint Hint, start, end time.Time, limit int) (ids [][16]byte, more bool, err error)
	// Spans calls fn with encoded OTLP TracesData holding every span the
	// source has of the traces ids (in any number of calls).
	Spans(ctx context.Context, tenant string, ids [][16]byte, fn func(td []byte) error) error
}

// HintOf returns the hint of a query: conditions its first spanset
// expression requires of some span, read from the conjunctions of
// equalities and duration bounds it can tell are required.
func HintOf(q *traceql.Query) Hint {
	h, ok := spansetHint(q.Pipeline.Stages[0].(traceql.SpansetStage).Spanset)
	if !ok {
		return Hint{Unbounded: true}
	}
	return h
}

func spansetHint(s traceql.Spanset) (Hint, bool) {
	switch s := s.(type) {
	case traceql.Filter:
		h := Hint{Attrs: map[string]string{}}
		ok := false
		for _, c := range conjuncts(s.Expr) {
			ok = h.add(c) || ok
		}
		return h, ok
	case traceql.SpansetOp:
		switch s.Op {
		case "||":
			return Hint{}, false
		case "!>", "!>>", "!<", "!<<", "!~":
			return spansetHint(s.R) // the left side may select nothing
		}
		// Both sides must select a span: either side's hint holds.
		l, okL := spansetHint(s.L)
		r, okR := spansetHint(s.R)
		switch {
		case okL && (l.Service != "" || !okR):
			return l, true
		case okR:
			return r, true
		}
		return Hint{}, false
	case traceql.Pipeline:
		return spansetHint(s.Stages[0].(traceql.SpansetStage).Spanset)
	}
	return Hint{}, false
}

// conjuncts splits an expression on its top-level &&.
func conjuncts(f traceql.Field) []traceql.Field {
	if b, ok := f.(traceql.Binary); ok && b.Op == "&&" {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	if f == nil {
		return nil
	}
	return []traceql.Field{f}
}

// add takes one required condition into h, if it is of a kind a hint
// holds, and reports whether it did.
func (h *Hint) add(c traceql.Field) bool {
	b, ok := c.(traceql.Binary)
	if !ok {
		return false
	}
	lit, ok := b.R.(traceql.Static)
	if !ok {
		return false
	}
	switch l := b.L.(type) {
	case traceql.Intrinsic:
		switch {
		case l == traceql.IntrinsicName && b.Op == "=" && lit.Type == traceql.TypeString:
			h.Name = lit.S
			return true
		case l == traceql.IntrinsicStatus && b.Op == "=" && lit.Type == traceql.TypeStatus && lit.I == int64(traceql.StatusError):
			h.Error = true
			return true
		case l == traceql.IntrinsicDuration && lit.Type == traceql.TypeDuration && lit.I > 0:
			switch b.Op {
			case ">", ">=":
				h.MinDur = max(h.MinDur, time.Duration(lit.I))
				return true
			case "<", "<=":
				if h.MaxDur == 0 || time.Duration(lit.I) < h.MaxDur {
					h.MaxDur = time.Duration(lit.I)
				}
				return true
			}
		}
	case traceql.Attribute:
		if b.Op != "=" || lit.Type != traceql.TypeString || l.Scope == traceql.ScopeEvent || l.Scope == traceql.ScopeLink {
			return false
		}
		if l.Name == "service.name" && l.Scope == traceql.ScopeResource {
			h.Service = lit.S
			return true
		}
		h.Attrs[l.Name] = lit.S // any scope's: more than the query asks
		return true
	}
	return false
}

// Match is a trace a search found: the trace (its spans as the source
// gave them) and the spansets the query selected.
type Match struct {
	ID       [16]byte
	Trace    *Trace
	Spansets []Spanset
}

// SearchLimits bound a search's work.
type SearchLimits struct {
	// Limit is the most traces to find.
	Limit int
	// MaxCandidates bounds the candidate traces read and evaluated; past
	// it the search answers with what it found (Truncated).
	MaxCandidates int
	// Keep, if not nil, is asked of each matched trace before it counts
	// (the API's whole-trace bounds such as minDuration).
	Keep func(*Trace) bool
}

// SearchResult is a search's matches, the most recent candidates first,
// and what it read.
type SearchResult struct {
	Matches   []Match
	Inspected int  // candidate traces evaluated
	Truncated bool // MaxCandidates was reached with traces left unread
}

// Search finds up to Limit traces of tenant that q matches among those
// with a span starting in [start, end): it asks src for candidates by q's
// hint, reads each candidate's spans and evaluates q over the trace.
// Candidates are asked for in growing batches until Limit traces match,
// none are left, or MaxCandidates were read.
func Search(ctx context.Context, src Source, tenant string, q *Query, start, end time.Time, lim SearchLimits) (SearchResult, error) {
	if lim.Limit <= 0 || lim.MaxCandidates < lim.Limit {
		return SearchResult{}, fmt.Errorf("search: limit %d and %d candidates: want 0 < limit <= candidates", lim.Limit, lim.MaxCandidates)
	}
	if ss, ok := src.(SpanSource); ok {
		if f, ok := spanSearch(q.q, start, end); ok {
			if res, ok, err := searchSpans(ctx, ss, tenant, q, f, lim); ok {
				return res, err
			}
		}
	}
	hint := HintOf(q.q)
	var res SearchResult
	seen := map[[16]byte]bool{}
	// A round's candidates cost about the same to find however many are
	// asked (the hint's spans in the range are read either way; at 10M
	// spans 570 ms for 80 and 640 for 320), while each round reads them
	// again: the first asks for 16 times the limit, so that a query whose
	// matches are one candidate in a few (a structural one) takes one.
	for want := max(16*lim.Limit, 256); ; want *= 4 {
		want = min(want, lim.MaxCandidates)
		ids, more, err := src.Candidates(ctx, tenant, hint, start, end, want)
		if err != nil {
			return res, err
		}
		var fresh [][16]byte
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				fresh = append(fresh, id)
			}
		}
		full := false
		err = eachTrace(ctx, src, tenant, fresh, func(id [16]byte, t *Trace) bool {
			res.Inspected++
			if sets := q.Eval(t); len(sets) > 0 && (lim.Keep == nil || lim.Keep(t)) {
				res.Matches = append(res.Matches, Match{ID: id, Trace: t, Spansets: sets})
				full = len(res.Matches) == lim.Limit
			}
			return !full
		})
		if err != nil || full {
			return res, err
		}
		if !more {
			return res, nil
		}
		if want >= lim.MaxCandidates {
			res.Truncated = true
			return res, nil
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
}

// traceBatch is how many candidates' spans are read and held at once:
// what a search holds besides its matches is one batch of traces.
const traceBatch = 256

// eachTrace reads the traces ids (in that order) from src a batch at a
// time and calls fn with each the source has, until fn returns false.
func eachTrace(ctx context.Context, src Source, tenant string, ids [][16]byte, fn func([16]byte, *Trace) bool) error {
	for len(ids) > 0 {
		batch := ids[:min(len(ids), traceBatch)]
		ids = ids[len(batch):]
		byID := map[[16]byte]*Trace{}
		var order [][16]byte
		if err := src.Spans(ctx, tenant, batch, func(td []byte) error { return AddOTLP(byID, &order, td) }); err != nil {
			return err
		}
		for _, id := range batch {
			if t := byID[id]; t != nil && !fn(id, t) {
				return nil
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}
