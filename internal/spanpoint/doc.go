// Package spanpoint holds Point, what TraceQL's span-local queries know of
// a span read from columns (service, name, kind, status, start, duration,
// trace id). lakeread reads batches of them and traceql/eval aggregates
// them; the type lives here, below both, so a batch passes from one to the
// other as it is, without a copy a span (which cost a tenth of a 6-hour
// rate() query's CPU at 10M spans when each package had its own).
package spanpoint

// Point is a span as column reads give it. Service and Name are owned by
// whoever made the batch, valid only while it is handed over, and never
// changed (lakeread copies each distinct one once).
type Point struct {
	Service, Name []byte
	Kind, Status  int32 // OTLP's numbers
	Start         int64 // Unix nanoseconds
	Duration      int64 // nanoseconds
	End           int64 // Unix nanoseconds, when asked for (lakeread.NeedEnd)
	TraceID       [16]byte
	// N is how many spans the point stands for (0 and 1: one). A source
	// that answers from per-minute counts gives one point a service,
	// kind, status and minute, at the minute's start, only when asked to
	// (lakeread.SpanFilter.Counted).
	N int64
}
