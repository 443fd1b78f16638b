package lokiapi

import (
	"context"
	"errors"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/querybudget"
)

// The engine's types, by the names the handlers use.
type (
	// Query is a LogQL query to evaluate (eval.Query).
	Query = eval.Query
	// Result is what a query gives (eval.Result).
	Result = eval.Result
	// Stream is a label set and its lines (eval.Stream).
	Stream = eval.Stream
)

// NewEngine returns the LogQL engine the API runs: internal/logql/eval
// reading the lake through r, each query's memory charged to the
// querybudget ticket its context carries; maxSeries bounds the series of
// a metric query's steps, maxPoints its steps. pending, if not nil, gives
// the records a tenant's delete requests will remove, hidden from every
// query until they are (lakeSource).
func NewEngine(r *lakeread.Reader, maxSeries, maxPoints int, pending func(ctx context.Context, tenant string) func(*eval.Record) bool) *eval.Engine {
	return eval.NewEngine(eval.Config{
		Source:    lakeSource{r: r, pending: pending},
		MaxSeries: maxSeries,
		MaxPoints: maxPoints,
		// A context without a ticket gives a nil one, which charges nothing.
		Budget: func(ctx context.Context) eval.Budget { return querybudget.FromContext(ctx) },
	})
}

// lakeSource is the lake as the engine's source: lakeread's records as
// eval's. With pending, a tenant's records that its delete requests not
// yet carried out select are hidden (Loki's filter-and-delete mode), in
// the spool and the lake alike: a query then decodes every field of a
// record (a request's selector may name any label), and counts records
// rather than reading counts (ErrNotCountable).
type lakeSource struct {
	r       *lakeread.Reader
	pending func(ctx context.Context, tenant string) func(*eval.Record) bool
}

// hidden is the test of tenant's records its pending delete requests
// select, nil for none.
func (l lakeSource) hidden(ctx context.Context, tenant string) func(*eval.Record) bool {
	if l.pending == nil {
		return nil
	}
	return l.pending(ctx, tenant)
}

// Logs reads the records of s with lakeread.Reader.Logs; the record fn
// gets, and its attribute slices, are reused from one call to the next.
func (l lakeSource) Logs(ctx context.Context, tenant string, s eval.Scan, fn func(*eval.Record) bool) error {
	q := lakeread.LogQuery{Start: s.Start, End: s.End, Service: s.Service, Contains: s.Contains,
		Matches: s.Matches, AttrValues: s.AttrValues, AttrNames: s.AttrNames, AttrLabel: eval.LabelName,
		Fields: logFields(s.Fields), Newest: s.Newest, Oldest: s.Oldest, Limit: s.Limit}
	hide := l.hidden(ctx, tenant)
	if hide != nil {
		q.Fields = lakeread.AllLogFields
	}
	var rec eval.Record
	return l.r.Logs(ctx, tenant, q, func(r *lakeread.LogRecord) bool {
		rec = eval.Record{
			Time: r.Time, Line: r.Line, Service: r.Service, Resource: appendKVs(rec.Resource[:0], r.Resource),
			ScopeName: r.ScopeName, ScopeVersion: r.ScopeVersion, SeverityText: r.SeverityText, SeverityNumber: r.SeverityNumber,
			TraceID: r.TraceID, SpanID: r.SpanID, Attrs: appendKVs(rec.Attrs[:0], r.Attrs),
		}
		if hide != nil && hide(&rec) {
			return true
		}
		return fn(&rec)
	})
}

// CountLogs counts with lakeread.Reader.CountLogs (eval.Counter): the
// lake's time, service, severity and, for |= filters, body columns alone.
func (l lakeSource) CountLogs(ctx context.Context, tenant string, s eval.Scan, bucket func(int64) int64, fn func(*eval.Record, int64, int64, int64) bool) error {
	if l.hidden(ctx, tenant) != nil {
		return eval.ErrNotCountable // the counts hold records a request hides
	}
	q := lakeread.LogCountQuery{Start: s.Start, End: s.End, Service: s.Service, Contains: s.Contains, Bucket: bucket,
		Severity: s.Fields&eval.FieldSeverity != 0, Bytes: s.CountBytes}
	var rec eval.Record
	err := l.r.CountLogs(ctx, tenant, q, func(c lakeread.LogCount) bool {
		rec = eval.Record{Service: c.Service, SeverityText: c.SeverityText, SeverityNumber: c.SeverityNumber}
		return fn(&rec, c.Bucket, c.N, c.Bytes)
	})
	if errors.Is(err, lakeread.ErrNoByteCounts) {
		return eval.ErrNotCountable
	}
	return err
}

// LogStreams returns lakeread.Reader.LogStreams as records.
func (l lakeSource) LogStreams(ctx context.Context, tenant string, start, end time.Time) ([]eval.Record, error) {
	streams, err := l.r.LogStreams(ctx, tenant, start, end)
	if err != nil {
		return nil, err
	}
	out := make([]eval.Record, len(streams))
	for i, s := range streams {
		out[i] = eval.Record{Service: s.Service, Resource: appendKVs(nil, s.Resource)}
	}
	return out, nil
}

// appendKVs appends kvs to dst as eval's.
func appendKVs(dst []eval.KV, kvs []lakeread.KV) []eval.KV {
	for _, kv := range kvs {
		dst = append(dst, eval.KV(kv))
	}
	return dst
}

// logFields are the lakeread fields of f (0, all of them, is 0).
func logFields(f eval.Fields) lakeread.LogFields {
	var out lakeread.LogFields
	for _, m := range [...]struct {
		e eval.Fields
		l lakeread.LogFields
	}{
		{eval.FieldLine, lakeread.FieldLine}, {eval.FieldResource, lakeread.FieldResource},
		{eval.FieldScope, lakeread.FieldScope}, {eval.FieldSeverity, lakeread.FieldSeverity},
		{eval.FieldIDs, lakeread.FieldIDs}, {eval.FieldAttrs, lakeread.FieldAttrs},
	} {
		if f&m.e != 0 {
			out |= m.l
		}
	}
	return out
}
