package otlpwire

import (
	"io"
	"iter"

	"google.golang.org/protobuf/encoding/protowire"
)

// TracesRequest is an encoded
// opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest:
//
//	message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
//
// Every value read from it aliases it.
type TracesRequest []byte

// ResourceSpans iterates the resource containers. A malformed container
// header ends the iteration with a non-nil error as the last pair.
func (r TracesRequest) ResourceSpans() iter.Seq2[ResourceSpans, error] {
	return func(yield func(ResourceSpans, error) bool) {
		seq(r, fieldResources, "resource_spans", func(b []byte, err error) bool { return yield(ResourceSpans(b), err) })
	}
}

// ResourceCount counts the resource containers.
func (r TracesRequest) ResourceCount() (int, error) {
	return count(r, fieldResources, "resource_spans")
}

// SpanCount counts the spans of the whole request. It reads the resource
// and scope framing, not the spans themselves.
func (r TracesRequest) SpanCount() (int, error) { return countIn(r, fieldResources, spanLevels, nil) }

var spanLevels = []string{"resource_spans", "scope_spans", "spans"}

// ResourceSpans is the encoded body of a ResourceSpans:
//
//	message ResourceSpans {
//	  Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3;
//	}
type ResourceSpans []byte

// Resource returns the resource (the last one, if repeated: the earlier ones
// are validated, as Validate would); empty if absent.
func (rs ResourceSpans) Resource() (Resource, error) { return header(rs, "resource", validateResource) }

// SchemaURL returns schema_url.
func (rs ResourceSpans) SchemaURL() ([]byte, error) { return schemaURL(rs) }

// ScopeSpans iterates the scope containers.
func (rs ResourceSpans) ScopeSpans() iter.Seq2[ScopeSpans, error] {
	return func(yield func(ScopeSpans, error) bool) {
		seq(rs, fieldChildren, "scope_spans", func(b []byte, err error) bool { return yield(ScopeSpans(b), err) })
	}
}

// SpanCount counts the spans of all scopes.
func (rs ResourceSpans) SpanCount() (int, error) {
	return countIn(rs, fieldChildren, spanLevels[1:], nil)
}

// AppendTo appends to dst an ExportTraceServiceRequest holding only this
// resource and returns the extended slice. With a dst of enough capacity it
// does not allocate.
func (rs ResourceSpans) AppendTo(dst []byte) []byte { return appendRequest(dst, rs) }

// WriteTo writes the request AppendTo would append. It does not allocate.
func (rs ResourceSpans) WriteTo(w io.Writer) (int64, error) { return writeRequest(w, rs) }

// ScopeSpans is the encoded body of a ScopeSpans:
//
//	message ScopeSpans {
//	  InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3;
//	}
type ScopeSpans []byte

// Scope returns the instrumentation scope (the last one, if repeated: the
// earlier ones are validated, as Validate would); empty if absent.
func (ss ScopeSpans) Scope() (Scope, error) { return header(ss, "scope", validateScope) }

// SchemaURL returns schema_url.
func (ss ScopeSpans) SchemaURL() ([]byte, error) { return schemaURL(ss) }

// Spans iterates the spans.
func (ss ScopeSpans) Spans() iter.Seq2[Span, error] {
	return func(yield func(Span, error) bool) {
		seq(ss, fieldChildren, "spans", func(b []byte, err error) bool { return yield(Span(b), err) })
	}
}

// SpanCount counts the spans.
func (ss ScopeSpans) SpanCount() (int, error) { return count(ss, fieldChildren, "spans") }

// Span is the encoded body of an opentelemetry.proto.trace.v1.Span:
//
//	message Span {
//	  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3;
//	  bytes parent_span_id = 4; fixed32 flags = 16; string name = 5;
//	  SpanKind kind = 6; fixed64 start_time_unix_nano = 7;
//	  fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
//	  uint32 dropped_attributes_count = 10; repeated Event events = 11;
//	  uint32 dropped_events_count = 12; repeated Link links = 13;
//	  uint32 dropped_links_count = 14; Status status = 15;
//	}
//	message Status { string message = 2; StatusCode code = 3; }
type Span []byte

// SpanFields holds every field of a Span, read in one pass by Span.Read.
// Byte slices alias the request.
type SpanFields struct {
	TraceID                []byte // empty or 16 bytes
	SpanID                 []byte // empty or 8 bytes
	TraceState             []byte
	ParentSpanID           []byte // empty or 8 bytes
	Flags                  uint32
	Name                   []byte
	Kind                   int32
	StartTime, EndTime     uint64 // ns since the Unix epoch
	Attributes             Attributes
	DroppedAttributesCount uint32
	Events                 List[SpanEvent]
	DroppedEventsCount     uint32
	Links                  List[SpanLink]
	DroppedLinksCount      uint32
	StatusCode             int32
	StatusMessage          []byte
}

// Read decodes every field of the span into f in one scan. Attributes,
// events and links are located, not decoded.
func (sp Span) Read(f *SpanFields) error { return sp.read(f, nil) }

// read is Read; given pairs, it also checks the span's own attribute
// pairs as Attributes.Validate would, as it passes over them (counting
// them in *pairs), as LogRecord.read does.
func (sp Span) read(f *SpanFields, pairs *int) error {
	*f = SpanFields{}
	var attrs, events, links span
	for i := 0; i < len(sp); {
		// Fast path: the usual fields, recognized by their whole tag byte
		// with one-byte lengths; anything else, and every error, takes the
		// general path below.
		if i+1 < len(sp) {
			switch sp[i] {
			case 0x0a: // trace_id
				if s, j, ok := short(sp, i); ok && (len(s) == 16 || len(s) == 0) {
					f.TraceID, i = s, j
					continue
				}
			case 0x12: // span_id
				if s, j, ok := short(sp, i); ok && (len(s) == 8 || len(s) == 0) {
					f.SpanID, i = s, j
					continue
				}
			case 0x22: // parent_span_id
				if s, j, ok := short(sp, i); ok && (len(s) == 8 || len(s) == 0) {
					f.ParentSpanID, i = s, j
					continue
				}
			case 0x2a: // name
				if s, j, ok := short(sp, i); ok {
					f.Name, i = s, j
					continue
				}
			case 0x30: // kind
				if c := sp[i+1]; c < 0x80 {
					f.Kind, i = int32(c), i+2
					continue
				}
			case 0x39: // start_time_unix_nano
				if v, ok := le64(sp, i); ok {
					f.StartTime, i = v, i+9
					continue
				}
			case 0x41: // end_time_unix_nano
				if v, ok := le64(sp, i); ok {
					f.EndTime, i = v, i+9
					continue
				}
			case 0x4a: // attributes
				j := i
				if pairs != nil {
					var err error
					if j, err = checkPairRun(sp, i, 0x4a, pairs); err != nil {
						return err
					}
				} else {
					j = skipRun(sp, i, 0x4a)
				}
				if j > i {
					attrs.add(i, j)
					i = j
					continue
				}
			}
		}
		t, s, j, ok := quickBytes(sp, i)
		var v uint64
		if !ok {
			t, v, s, j = field(sp, i)
		}
		if j < 0 || spanSchema.bad(t) {
			if err := spanSchema.failAt(sp, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			if err := checkID(s, 16, i, "trace_id"); err != nil {
				return err
			}
			f.TraceID = s
		case 2:
			if err := checkID(s, 8, i, "span_id"); err != nil {
				return err
			}
			f.SpanID = s
		case 3:
			f.TraceState = s
		case 4:
			if err := checkID(s, 8, i, "parent_span_id"); err != nil {
				return err
			}
			f.ParentSpanID = s
		case 5:
			f.Name = s
		case 6:
			f.Kind = int32(v)
		case 7:
			f.StartTime = v
		case 8:
			f.EndTime = v
		case 9:
			if pairs != nil {
				if err := checkPair(s, *pairs, j-len(s)); err != nil {
					return err
				}
				*pairs++
				var err error
				if j, err = checkPairRun(sp, j, 0x4a, pairs); err != nil {
					return err
				}
			} else {
				j = skipRun(sp, j, 0x4a)
			}
			attrs.add(i, j)
		case 10:
			f.DroppedAttributesCount = uint32(v)
		case 11:
			j = skipRun(sp, j, 0x5a)
			events.add(i, j)
		case 12:
			f.DroppedEventsCount = uint32(v)
		case 13:
			j = skipRun(sp, j, 0x6a)
			links.add(i, j)
		case 14:
			f.DroppedLinksCount = uint32(v)
		case 15:
			if err := readStatus(s, f); err != nil {
				return within(err, "status", -1, j-len(s))
			}
		case 16:
			f.Flags = uint32(v)
		}
		i = j
	}
	f.Attributes.set(sp, attrs, 9)
	f.Events.set(sp, events, 11, nameEvents)
	f.Links.set(sp, links, 13, nameLinks)
	return nil
}

var spanSchema = newSchema(map[protowire.Number]fieldSpec{
	1: bytesf("trace_id"), 2: bytesf("span_id"), 3: bytesf("trace_state"), 4: bytesf("parent_span_id"),
	5: bytesf("name"), 6: varintf("kind"), 7: fixed("start_time_unix_nano"), 8: fixed("end_time_unix_nano"),
	9: bytesf("attributes"), 10: varintf("dropped_attributes_count"), 11: bytesf("events"),
	12: varintf("dropped_events_count"), 13: bytesf("links"), 14: varintf("dropped_links_count"),
	15: bytesf("status"), 16: fixed32f("flags"),
})

// readStatus merges a Status message into f: a repeated status field
// merges field by field, as protobuf and pdata do.
func readStatus(b []byte, f *SpanFields) error {
	for i := 0; i < len(b); {
		t, v, s, j := field(b, i)
		if j < 0 || statusSchema.bad(t) {
			if err := statusSchema.failAt(b, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 2:
			f.StatusMessage = s
		case 3:
			f.StatusCode = int32(v)
		}
		i = j
	}
	return nil
}

var statusSchema = newSchema(map[protowire.Number]fieldSpec{2: bytesf("message"), 3: varintf("code")})

// SpanEvent is the encoded body of a Span.Event:
//
//	message Event {
//	  fixed64 time_unix_nano = 1; string name = 2;
//	  repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4;
//	}
type SpanEvent []byte

// SpanEventFields holds the fields of a span event.
type SpanEventFields struct {
	Time                   uint64
	Name                   []byte
	Attributes             Attributes
	DroppedAttributesCount uint32
}

// Read decodes the event's fields into f in one scan.
func (e SpanEvent) Read(f *SpanEventFields) error {
	*f = SpanEventFields{}
	var attrs span
	for i := 0; i < len(e); {
		t, v, s, j := field(e, i)
		if j < 0 || eventSchema.bad(t) {
			if err := eventSchema.failAt(e, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			f.Time = v
		case 2:
			f.Name = s
		case 3:
			j = skipRun(e, j, 0x1a)
			attrs.add(i, j)
		case 4:
			f.DroppedAttributesCount = uint32(v)
		}
		i = j
	}
	f.Attributes.set(e, attrs, 3)
	return nil
}

var eventSchema = newSchema(map[protowire.Number]fieldSpec{1: fixed("time_unix_nano"), 2: bytesf("name"), 3: bytesf("attributes"), 4: varintf("dropped_attributes_count")})

// SpanLink is the encoded body of a Span.Link:
//
//	message Link {
//	  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3;
//	  repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5;
//	  fixed32 flags = 6;
//	}
type SpanLink []byte

// SpanLinkFields holds the fields of a span link.
type SpanLinkFields struct {
	TraceID, SpanID        []byte
	TraceState             []byte
	Attributes             Attributes
	DroppedAttributesCount uint32
	Flags                  uint32
}

// Read decodes the link's fields into f in one scan.
func (l SpanLink) Read(f *SpanLinkFields) error {
	*f = SpanLinkFields{}
	var attrs span
	for i := 0; i < len(l); {
		t, v, s, j := field(l, i)
		if j < 0 || linkSchema.bad(t) {
			if err := linkSchema.failAt(l, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			if err := checkID(s, 16, i, "trace_id"); err != nil {
				return err
			}
			f.TraceID = s
		case 2:
			if err := checkID(s, 8, i, "span_id"); err != nil {
				return err
			}
			f.SpanID = s
		case 3:
			f.TraceState = s
		case 4:
			j = skipRun(l, j, 0x22)
			attrs.add(i, j)
		case 5:
			f.DroppedAttributesCount = uint32(v)
		case 6:
			f.Flags = uint32(v)
		}
		i = j
	}
	f.Attributes.set(l, attrs, 4)
	return nil
}

var linkSchema = newSchema(map[protowire.Number]fieldSpec{
	1: bytesf("trace_id"), 2: bytesf("span_id"), 3: bytesf("trace_state"), 4: bytesf("attributes"),
	5: varintf("dropped_attributes_count"), 6: fixed32f("flags"),
})
