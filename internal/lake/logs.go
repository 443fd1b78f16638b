package lake

import (
	"fmt"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// LogRows is a batch of log records as columns. Row i of every fixed
// column belongs to the same record; dynamic columns carry their row
// numbers.
type LogRows struct {
	Time, ObservedTime []int64
	SeverityNumber     []int32
	Flags              []uint32
	DroppedAttributes  []uint32
	SeverityText       Strings
	Body               Strings // string bodies as is; other kinds as JSON text; empty when absent
	BodyKind           []Kind  // 0 when the body is absent
	TraceID, SpanID    Strings // raw bytes, empty when absent or all zero
	EventName          Strings
	ScopeName          Strings
	ScopeVersion       Strings

	attrRows // dynamic columns and ServiceName
}

// Len is the number of rows.
func (r *LogRows) Len() int { return len(r.Time) }

// Reset empties the batch and keeps its capacity.
func (r *LogRows) Reset() {
	r.Time, r.ObservedTime = r.Time[:0], r.ObservedTime[:0]
	r.SeverityNumber, r.Flags, r.BodyKind = r.SeverityNumber[:0], r.Flags[:0], r.BodyKind[:0]
	r.DroppedAttributes = r.DroppedAttributes[:0]
	for _, s := range r.strings() {
		s.Reset()
	}
	r.attrRows.reset()
}

func (r *LogRows) strings() [7]*Strings {
	return [...]*Strings{&r.SeverityText, &r.Body, &r.TraceID, &r.SpanID, &r.EventName, &r.ScopeName, &r.ScopeVersion}
}

// AppendLogs appends the records of an ExportLogsServiceRequest. On error
// the batch is left as it was before the call; the error is an
// *otlpwire.Error (or wraps one) naming where the request is malformed.
func (r *LogRows) AppendLogs(req []byte) error {
	row0, ncols, m := r.Len(), len(r.cols.list), r.mark()
	if err := r.appendLogs(otlpwire.LogsRequest(req)); err != nil {
		r.truncate(row0, ncols)
		r.rollbackPairs(m)
		return err
	}
	return nil
}

func (r *LogRows) truncate(n, ncols int) {
	r.Time, r.ObservedTime = r.Time[:n], r.ObservedTime[:n]
	r.SeverityNumber, r.Flags, r.BodyKind = r.SeverityNumber[:n], r.Flags[:n], r.BodyKind[:n]
	r.DroppedAttributes = r.DroppedAttributes[:n]
	for _, s := range r.strings() {
		s.spans = s.spans[:n]
	}
	r.attrRows.truncate(n, ncols)
}

func (r *LogRows) appendLogs(req otlpwire.LogsRequest) error {
	var (
		lf                 otlpwire.LogRecordFields
		svc, name, version Ref // of the current resource and scope
	)
	return req.Walk(otlpwire.LogVisitor{
		ResourceLogs: func(rl otlpwire.ResourceLogs) (err error) {
			svc, err = startResource(&r.attrRows, rl)
			return err
		},
		ScopeLogs: func(sl otlpwire.ScopeLogs) (err error) {
			name, version, err = startScope(&r.attrRows, &r.ScopeName, &r.ScopeVersion, sl)
			return err
		},
		LogRecord: func(lr otlpwire.LogRecord) error {
			if err := lr.Read(&lf); err != nil {
				return err
			}
			return r.appendRecord(&lf, svc, name, version)
		},
	})
}

func (r *LogRows) appendRecord(f *otlpwire.LogRecordFields, svc, scopeName, scopeVersion Ref) error {
	if err := r.addAttrs(int32(len(r.Time)), svc, f.Attributes); err != nil {
		return err
	}
	switch f.Body.Type() {
	case otlpwire.ValueEmpty:
		r.Body.Append(nil)
		r.BodyKind = append(r.BodyKind, 0)
	case otlpwire.ValueString:
		r.Body.Append(f.Body.Str())
		r.BodyKind = append(r.BodyKind, KindString)
	default:
		var err error
		if r.scratch, err = appendJSON(r.scratch[:0], f.Body, 1); err != nil {
			return fmt.Errorf("body: %w", err)
		}
		r.Body.Append(r.scratch)
		r.BodyKind = append(r.BodyKind, KindJSON)
	}
	r.Time = append(r.Time, int64(f.Time))
	r.ObservedTime = append(r.ObservedTime, int64(f.ObservedTime))
	r.SeverityNumber = append(r.SeverityNumber, f.SeverityNumber)
	r.Flags = append(r.Flags, f.Flags)
	r.DroppedAttributes = append(r.DroppedAttributes, f.DroppedAttributesCount)
	r.SeverityText.Append(f.SeverityText)
	r.TraceID.Append(validID(f.TraceID))
	r.SpanID.Append(validID(f.SpanID))
	r.EventName.Append(f.EventName)
	r.ScopeName.AppendRef(scopeName)
	r.ScopeVersion.AppendRef(scopeVersion)
	return nil
}
