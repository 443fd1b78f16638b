package otlpwire

import (
	"io"
	"iter"

	"google.golang.org/protobuf/encoding/protowire"
)

// LogsRequest is an encoded
// opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest:
//
//	message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
//
// Every value read from it aliases it.
type LogsRequest []byte

// ResourceLogs iterates the resource containers. A malformed container
// header ends the iteration with a non-nil error as the last pair.
func (r LogsRequest) ResourceLogs() iter.Seq2[ResourceLogs, error] {
	return func(yield func(ResourceLogs, error) bool) {
		seq(r, fieldResources, "resource_logs", func(b []byte, err error) bool { return yield(ResourceLogs(b), err) })
	}
}

// ResourceCount counts the resource containers.
func (r LogsRequest) ResourceCount() (int, error) { return count(r, fieldResources, "resource_logs") }

// LogRecordCount counts the log records of the whole request. It reads the
// resource and scope framing, not the records themselves.
func (r LogsRequest) LogRecordCount() (int, error) {
	return countIn(r, fieldResources, logLevels, nil)
}

var logLevels = []string{"resource_logs", "scope_logs", "log_records"}

// ResourceLogs is the encoded body of a ResourceLogs:
//
//	message ResourceLogs {
//	  Resource resource = 1; repeated ScopeLogs scope_logs = 2; string schema_url = 3;
//	}
type ResourceLogs []byte

// Resource returns the resource (the last one, if repeated: the earlier ones
// are validated, as Validate would); empty if absent.
func (rl ResourceLogs) Resource() (Resource, error) { return header(rl, "resource", validateResource) }

// SchemaURL returns schema_url.
func (rl ResourceLogs) SchemaURL() ([]byte, error) { return schemaURL(rl) }

// ScopeLogs iterates the scope containers.
func (rl ResourceLogs) ScopeLogs() iter.Seq2[ScopeLogs, error] {
	return func(yield func(ScopeLogs, error) bool) {
		seq(rl, fieldChildren, "scope_logs", func(b []byte, err error) bool { return yield(ScopeLogs(b), err) })
	}
}

// LogRecordCount counts the log records of all scopes.
func (rl ResourceLogs) LogRecordCount() (int, error) {
	return countIn(rl, fieldChildren, logLevels[1:], nil)
}

// AppendTo appends to dst an ExportLogsServiceRequest holding only this
// resource and returns the extended slice. With a dst of enough capacity it
// does not allocate.
func (rl ResourceLogs) AppendTo(dst []byte) []byte { return appendRequest(dst, rl) }

// WriteTo writes the request AppendTo would append. It does not allocate.
func (rl ResourceLogs) WriteTo(w io.Writer) (int64, error) { return writeRequest(w, rl) }

// ScopeLogs is the encoded body of a ScopeLogs:
//
//	message ScopeLogs {
//	  InstrumentationScope scope = 1; repeated LogRecord log_records = 2; string schema_url = 3;
//	}
type ScopeLogs []byte

// Scope returns the instrumentation scope (the last one, if repeated: the
// earlier ones are validated, as Validate would); empty if absent.
func (sl ScopeLogs) Scope() (Scope, error) { return header(sl, "scope", validateScope) }

// SchemaURL returns schema_url.
func (sl ScopeLogs) SchemaURL() ([]byte, error) { return schemaURL(sl) }

// LogRecords iterates the log records.
func (sl ScopeLogs) LogRecords() iter.Seq2[LogRecord, error] {
	return func(yield func(LogRecord, error) bool) {
		seq(sl, fieldChildren, "log_records", func(b []byte, err error) bool { return yield(LogRecord(b), err) })
	}
}

// LogRecordCount counts the log records.
func (sl ScopeLogs) LogRecordCount() (int, error) { return count(sl, fieldChildren, "log_records") }

// LogRecord is the encoded body of an opentelemetry.proto.logs.v1.LogRecord:
//
//	message LogRecord {
//	  fixed64 time_unix_nano = 1; fixed64 observed_time_unix_nano = 11;
//	  SeverityNumber severity_number = 2; string severity_text = 3;
//	  AnyValue body = 5; repeated KeyValue attributes = 6;
//	  uint32 dropped_attributes_count = 7; fixed32 flags = 8;
//	  bytes trace_id = 9; bytes span_id = 10; string event_name = 12;
//	}
type LogRecord []byte

// LogRecordFields holds every field of a LogRecord, read in one pass by
// LogRecord.Read. Byte slices alias the request.
type LogRecordFields struct {
	Time, ObservedTime     uint64 // ns since the Unix epoch
	SeverityNumber         int32
	SeverityText           []byte
	Body                   Value // Type() == ValueEmpty when absent
	Attributes             Attributes
	DroppedAttributesCount uint32
	Flags                  uint32
	TraceID                []byte // empty or 16 bytes
	SpanID                 []byte // empty or 8 bytes
	EventName              []byte
}

// Read decodes every field of the record into f in one scan. Attributes are
// located, not decoded: iterating f.Attributes reads only their bytes. Trace
// and span ids must be empty or of their proper length (ErrIDLength).
func (lr LogRecord) Read(f *LogRecordFields) error { return lr.read(f, nil) }

// read is Read; given pairs, it also checks every attribute pair as
// Attributes.Validate would, as it passes over them (counting them in
// *pairs, for error paths), so that validating a record reads its
// attributes once.
func (lr LogRecord) read(f *LogRecordFields, pairs *int) error {
	*f = LogRecordFields{}
	var attrs span
	for i := 0; i < len(lr); {
		// Fast path: the usual fields, recognized by their whole tag byte
		// (number and wire type) with one-byte lengths; anything else, and
		// every error, takes the general path below.
		if i+1 < len(lr) {
			switch lr[i] {
			case 0x09: // time_unix_nano
				if v, ok := le64(lr, i); ok {
					f.Time, i = v, i+9
					continue
				}
			case 0x59: // observed_time_unix_nano
				if v, ok := le64(lr, i); ok {
					f.ObservedTime, i = v, i+9
					continue
				}
			case 0x10: // severity_number
				if c := lr[i+1]; c < 0x80 {
					f.SeverityNumber, i = int32(c), i+2
					continue
				}
			case 0x1a: // severity_text
				if s, j, ok := short(lr, i); ok {
					f.SeverityText, i = s, j
					continue
				}
			case 0x2a: // body holding one short string
				if s, j, ok := short(lr, i); ok && len(s) >= 2 && s[0] == 0x0a && int(s[1]) == len(s)-2 {
					f.Body, i = bytesValue(ValueString, s[2:]), j
					continue
				}
			case 0x32: // attributes
				j := i
				if pairs != nil {
					var err error
					if j, err = checkPairRun(lr, i, 0x32, pairs); err != nil {
						return err
					}
				} else {
					j = skipRun(lr, i, 0x32)
				}
				if j > i {
					attrs.add(i, j)
					i = j
					continue
				}
			case 0x4a: // trace_id
				if s, j, ok := short(lr, i); ok && (len(s) == 16 || len(s) == 0) {
					f.TraceID, i = s, j
					continue
				}
			case 0x52: // span_id
				if s, j, ok := short(lr, i); ok && (len(s) == 8 || len(s) == 0) {
					f.SpanID, i = s, j
					continue
				}
			}
		}
		t, s, j, ok := quickBytes(lr, i)
		var v uint64
		if !ok {
			t, v, s, j = field(lr, i)
		}
		if j < 0 || logRecordSchema.bad(t) {
			if err := logRecordSchema.failAt(lr, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			f.Time = v
		case 11:
			f.ObservedTime = v
		case 2:
			f.SeverityNumber = int32(v)
		case 3:
			f.SeverityText = s
		case 5:
			body, set, err := parseAnyValue(s)
			if err != nil {
				return within(err, "body", -1, j-len(s))
			}
			if set {
				f.Body = body
			}
		case 6:
			if pairs != nil {
				if err := checkPair(s, *pairs, j-len(s)); err != nil {
					return err
				}
				*pairs++
				var err error
				if j, err = checkPairRun(lr, j, 0x32, pairs); err != nil {
					return err
				}
			} else {
				j = skipRun(lr, j, 0x32)
			}
			attrs.add(i, j)
		case 7:
			f.DroppedAttributesCount = uint32(v)
		case 8:
			f.Flags = uint32(v)
		case 9:
			if err := checkID(s, 16, i, "trace_id"); err != nil {
				return err
			}
			f.TraceID = s
		case 10:
			if err := checkID(s, 8, i, "span_id"); err != nil {
				return err
			}
			f.SpanID = s
		case 12:
			f.EventName = s
		}
		i = j
	}
	f.Attributes.set(lr, attrs, 6)
	return nil
}

var logRecordSchema = newSchema(map[protowire.Number]fieldSpec{
	1: fixed("time_unix_nano"), 11: fixed("observed_time_unix_nano"),
	2: varintf("severity_number"), 3: bytesf("severity_text"), 5: bytesf("body"),
	6: bytesf("attributes"), 7: varintf("dropped_attributes_count"), 8: fixed32f("flags"),
	9: bytesf("trace_id"), 10: bytesf("span_id"), 12: bytesf("event_name"),
})
