package eval

import (
	"context"
	"errors"
	"regexp"
	"time"
)

// Source is what an Engine reads: a tenant's log records. lokiapi gives
// the lake's (lakeread.Reader); a test may give records in memory.
type Source interface {
	// Logs calls fn with the records of tenant that s selects; fn
	// returns false to stop. fn must not keep r, nor its slices, after
	// it returns: a source may reuse them.
	Logs(ctx context.Context, tenant string, s Scan, fn func(r *Record) bool) error
	// LogStreams returns the distinct services and resources of
	// tenant's records in [start, end), as records of which only Service
	// and Resource are set: what the label and series endpoints list.
	LogStreams(ctx context.Context, tenant string, start, end time.Time) ([]Record, error)
}

// Counter is a Source that can count records without decoding them: the
// lake reads a volume or count query's columns alone (lakeread's
// CountLogs). The engine uses it, when its Source has it, for the range
// aggregations whose answer is a count of records per service and
// severity: count_over_time and rate over a selector with |= filters
// alone, summed by service_name, severity or detected_level; and
// bytes_over_time and bytes_rate of a selector alone, when the source
// can sum the lines' bytes (s.CountBytes; else ErrNotCountable, and the
// engine reads the lines).
type Counter interface {
	// CountLogs counts the records of tenant that s selects by service,
	// severity (when s.Fields has FieldSeverity; else every count's
	// severity is empty) and bucket(time), and calls fn with
	// each count's record (only Service, SeverityText and SeverityNumber
	// set; fn must not keep it), bucket, number and, with s.CountBytes,
	// the bytes of their lines; fn returns false to stop.
	CountLogs(ctx context.Context, tenant string, s Scan, bucket func(t int64) int64, fn func(r *Record, bucket, n, bytes int64) bool) error
}

// ErrNotCountable is a Counter's error for a count it cannot give from
// what it keeps (the bytes of lines it did not tally): the engine reads
// the records instead. Nothing was handed to fn.
var ErrNotCountable = errors.New("eval: the source cannot count this")

// Scan is what a query asks a Source for: records in a time range, with
// the filters the source tests before it decodes the rest of a record.
type Scan struct {
	// Start and End bound the records' times: [Start, End).
	Start, End time.Time
	// Service, if set, keeps the records of the services it accepts.
	Service func(string) bool
	// Contains are strings every kept record's line holds (|= filters
	// that come first in the pipeline).
	Contains [][]byte
	// Matches are regular expressions every kept record's line matches
	// (|~ filters that come first in the pipeline).
	Matches []*regexp.Regexp
	// AttrValues are values a kept record has as the value of one of its
	// attributes (record or resource), from label filters and selector
	// matchers name="v" on attribute labels: a source may use them to
	// skip records (it may also keep a record that has v under another
	// key); the pipeline tests the labels.
	AttrValues []string
	// AttrNames are the labels of AttrValues, one each: a source may
	// look for value i only under the keys whose LabelName is
	// AttrNames[i].
	AttrNames []string
	// Fields are the fields of Record the query needs besides Time and
	// Service; 0: all of them.
	Fields Fields
	// Newest asks for the records newest first, Oldest oldest first (a
	// log query stops at its limit); neither: any order.
	Newest, Oldest bool
	// CountBytes asks a Counter for the bytes of the lines too.
	CountBytes bool
	// Limit, if positive, is how many records the query takes before it
	// may stop (a log query's line limit): a source that reads ahead of
	// the callback waits for its verdict once that many were handed over,
	// rather than read on for a query that has stopped.
	Limit int
}

// Fields are fields of a Record, for Scan.Fields.
type Fields uint8

const (
	FieldLine     Fields = 1 << iota // Line
	FieldResource                    // Resource
	FieldScope                       // ScopeName, ScopeVersion
	FieldSeverity                    // SeverityText, SeverityNumber
	FieldIDs                         // TraceID, SpanID
	FieldAttrs                       // Attrs
	AllFields     = FieldLine | FieldResource | FieldScope | FieldSeverity | FieldIDs | FieldAttrs
)

// Record is an OTLP log record, every value as text.
type Record struct {
	Time           int64  // ns since the epoch: its time, else its observed time
	Line           []byte // the body: a string as is, another value as JSON
	Service        string // service.name, else unknown_service
	Resource       []KV   // resource attributes
	ScopeName      string
	ScopeVersion   string
	SeverityText   string
	SeverityNumber int32
	TraceID        string // hex, "" when absent
	SpanID         string
	Attrs          []KV // the record's attributes
}

// KV is an attribute as text.
type KV struct{ Key, Value string }

// Budget is the memory budget of a query (querybudget.Ticket in serve):
// Charge adds n bytes to what the query holds, or fails (the query then
// stops with that error) when the query may not hold that much.
type Budget interface {
	Charge(n int64) error
}

// noBudget charges nothing.
type noBudget struct{}

func (noBudget) Charge(int64) error { return nil }
