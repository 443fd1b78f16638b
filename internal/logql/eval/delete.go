package eval

import (
	"fmt"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Selection is the query of a Loki delete request compiled: a stream
// selector and line filters, the only stages Loki's delete API takes,
// over [Start, End]. It tells the records the request removes; a store
// scans with Scan, and tests each record it finds with Match.
type Selection struct {
	sel        *selection
	start, end int64 // ns, both included
}

// CompileSelection compiles a delete request's query, refusing any
// stage but line filters with an error a caller answers as a bad request.
func CompileSelection(query string, start, end time.Time) (*Selection, error) {
	expr, err := logql.Parse(query)
	if err != nil {
		return nil, err
	}
	lq, ok := expr.(*logql.LogQuery)
	if !ok {
		return nil, fmt.Errorf("a delete query is a stream selector and line filters, not a metric query: %s", query)
	}
	for _, st := range lq.Pipeline {
		if _, ok := st.(*logql.LineFilter); !ok {
			return nil, fmt.Errorf("a delete query takes only line filters after its selector, not %s", st)
		}
	}
	if end.Before(start) {
		return nil, fmt.Errorf("end %s before start %s", end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	var ev evaluator
	s, err := ev.compile(lq, start, end.Add(1))
	if err != nil {
		return nil, err
	}
	return &Selection{sel: s, start: start.UnixNano(), end: end.UnixNano()}, nil
}

// Scan is what a store may test on its columns before Match: the time
// range, the services, the line filters. Every field but those is zero.
func (s *Selection) Scan() Scan { return s.sel.lq }

// Match reports whether the request removes r: in the time range, its
// stream matched by the selector, its line by every filter.
func (s *Selection) Match(r *Record) bool {
	if r.Time < s.start || r.Time > s.end {
		return false
	}
	if s.sel.lq.Service != nil && !s.sel.lq.Service(r.Service) {
		return false
	}
	return s.sel.passes(newEntry(r))
}
