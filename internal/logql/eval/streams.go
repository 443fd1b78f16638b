package eval

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Streams returns the label sets of tenant's streams in [start, end]
// that any of selectors (each a selector's matchers) selects; all of
// them without selectors. Each set is given once, in the source's order:
// what Loki's labels, label values and series endpoints list.
func (e *Engine) Streams(ctx context.Context, tenant string, start, end time.Time, selectors [][]logql.Matcher) ([]Labels, error) {
	streams, err := e.src.LogStreams(ctx, tenant, start, end.Add(1))
	if err != nil {
		return nil, err
	}
	var out []Labels
	seen := map[string]bool{}
	for _, s := range streams {
		ls := streamLabels(&Record{Service: s.Service, Resource: s.Resource})
		if len(selectors) > 0 && !slices.ContainsFunc(selectors, func(ms []logql.Matcher) bool { return matchAll(ms, ls) }) {
			continue
		}
		if k := ls.key(); !seen[k] {
			seen[k] = true
			out = append(out, ls)
		}
	}
	return out, nil
}

// matchAll reports whether ls passes every matcher.
func matchAll(ms []logql.Matcher, ls Labels) bool {
	for _, m := range ms {
		test, err := matcherTest(m)
		if err != nil {
			return false
		}
		v, _ := ls.Get(m.Name)
		if !test(v) {
			return false
		}
	}
	return true
}

// IndexStats are the statistics of a selector over a range, as Loki's
// index/stats endpoint gives them.
type IndexStats struct {
	Streams int64 // distinct index label sets
	Entries int64 // lines
	Bytes   int64 // of the lines
}

// IndexStats counts the streams, lines and bytes that q's selector (its
// stream matchers; q.Expr must be a *logql.LogQuery) selects in [q.Start,
// q.End] of q.Tenant.
func (e *Engine) IndexStats(ctx context.Context, q Query) (IndexStats, error) {
	lq, ok := q.Expr.(*logql.LogQuery)
	if !ok {
		return IndexStats{}, fmt.Errorf("index stats take a stream selector, not %s", q.Expr)
	}
	ev := &evaluator{e: e, q: q, tk: noBudget{}}
	s, err := ev.compile(&logql.LogQuery{Matchers: lq.Matchers}, q.Start, q.End.Add(1))
	if err != nil {
		return IndexStats{}, err
	}
	streams := map[string]bool{}
	var st IndexStats
	err = ev.each(ctx, s, func(e *entry) bool {
		st.Entries++
		st.Bytes += int64(len(e.line))
		streams[e.stream.key()] = true
		return true
	})
	st.Streams = int64(len(streams))
	return st, err
}

// Lines calls fn with the time and line of every record q (a log query)
// selects in [q.Start, q.End] of q.Tenant, in the source's order, until
// fn returns false; the line is valid only during the call. Nothing is
// kept: what a scan of many lines (a patterns query) reads them with.
func (e *Engine) Lines(ctx context.Context, q Query, fn func(ts int64, line []byte) bool) (Stats, error) {
	lq, ok := q.Expr.(*logql.LogQuery)
	if !ok {
		return Stats{}, fmt.Errorf("lines take a log query, not %s", q.Expr)
	}
	ev := &evaluator{e: e, q: q, tk: noBudget{}}
	s, err := ev.compile(lq, q.Start, q.End.Add(1))
	if err != nil {
		return Stats{}, err
	}
	if len(s.matchers) == 0 && len(s.stages) == 0 {
		// A selector of services alone: the lines, no labels made.
		s.lq.Fields = FieldLine
		err = e.src.Logs(ctx, q.Tenant, s.lq, func(r *Record) bool {
			ev.stats.Lines++
			ev.stats.Bytes += int64(len(r.Line))
			return fn(r.Time, r.Line)
		})
		return ev.stats, err
	}
	err = ev.each(ctx, s, func(en *entry) bool { return fn(en.ts, en.line) })
	return ev.stats, err
}
