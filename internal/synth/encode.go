package synth

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
)

// Order is the order in which the fields of every message are written.
// Elements of a repeated field keep their relative order in both orders.
type Order int

const (
	// Ascending writes the fields of every message in ascending field-number
	// order, as protobuf-go (and so the OpenTelemetry SDKs) does.
	Ascending Order = iota
	// Descending writes the fields of every message in the order pdata's
	// marshaller (used by the OpenTelemetry Collector) produces: the reverse of
	// the order in which pdata declares them. That is descending field-number
	// order, except where the .proto declares a field out of number order:
	// LogRecord.observed_time_unix_nano (11) comes right before time_unix_nano
	// (1), Span.flags (16) right before parent_span_id (4), the attributes of
	// data points and exemplars come last, and Exemplar writes span_id (4)
	// before trace_id (5).
	Descending
)

// String returns "asc" or "desc", the names ParseOrder accepts.
func (o Order) String() string {
	switch o {
	case Ascending:
		return "asc"
	case Descending:
		return "desc"
	}
	return fmt.Sprintf("Order(%d)", int(o))
}

// ParseOrder parses "asc" or "desc"; any other text returns an error naming it.
func ParseOrder(s string) (Order, error) {
	switch s {
	case "asc":
		return Ascending, nil
	case "desc":
		return Descending, nil
	}
	return 0, fmt.Errorf("synth: unknown order %q (want asc or desc)", s)
}

// encoder appends protobuf fields to buf. Generators write each message's
// fields in pdata's declaration order; end reorders them for the encoder's
// Order once the message is complete and inserts its length prefix.
//
// The scalar helpers omit zero values (proto3 implicit presence); the
// ...Always variants are for oneof members, optional fields and deliberately
// present defaults.
type encoder struct {
	order   Order
	buf     []byte
	marks   []mark  // first byte of every field of the open messages
	frames  []frame // open messages, innermost last
	scratch []byte
	groups  []group
}

// mark is where a field, or a run of a repeated field, starts in buf.
type mark struct {
	off int
	num protowire.Number
}

// frame is an open message.
type frame struct {
	start     int // first content byte in buf
	markStart int // index in marks of its first field
}

// group is a run of consecutive fields with the same number, from one mark
// to the next: the elements of a repeated field, which keep their order.
type group struct {
	start, end int
	num        protowire.Number
}

// encoders keeps encoders with grown buffers: most of the cost of a large
// request is otherwise growing the buffer and collecting the old ones.
var encoders = sync.Pool{New: func() any { return new(encoder) }}

// newEncoder returns an encoder for a top-level message in order o.
func newEncoder(o Order) *encoder {
	e := encoders.Get().(*encoder)
	e.reset(o)
	return e
}

// reset starts a new top-level message, keeping the buffers' capacity.
func (e *encoder) reset(o Order) {
	e.order = o
	e.buf = e.buf[:0]
	e.marks = e.marks[:0]
	e.frames = append(e.frames[:0], frame{})
}

// finish closes the top-level message and returns a copy of its bytes. It
// returns e to the pool: e must not be used afterwards.
func (e *encoder) finish() []byte {
	if len(e.frames) != 1 {
		panic("synth: finish with open messages")
	}
	e.reorder(e.frames[0])
	e.frames = e.frames[:0]
	b := append([]byte(nil), e.buf...)
	encoders.Put(e)
	return b
}

// mark records that field num starts at off, unless the field before it in
// the innermost open message has the same number: reorder only needs the
// start of each run of a repeated field.
func (e *encoder) mark(num protowire.Number, off int) {
	if n := len(e.marks); n > e.frames[len(e.frames)-1].markStart && e.marks[n-1].num == num {
		return
	}
	e.marks = append(e.marks, mark{off: off, num: num})
}

// tag writes the tag of field num.
func (e *encoder) tag(num protowire.Number, typ protowire.Type) {
	e.mark(num, len(e.buf))
	e.buf = protowire.AppendTag(e.buf, num, typ)
}

// begin opens the embedded message field num. Every begin needs an end.
func (e *encoder) begin(num protowire.Number) {
	e.tag(num, protowire.BytesType)
	e.frames = append(e.frames, frame{start: len(e.buf), markStart: len(e.marks)})
}

var zeros [binary.MaxVarintLen64]byte

// end closes the innermost open message: it orders its fields and inserts
// the length prefix in front of them.
func (e *encoder) end() {
	f := e.frames[len(e.frames)-1]
	e.frames = e.frames[:len(e.frames)-1]
	e.reorder(f)
	e.marks = e.marks[:f.markStart]
	n := len(e.buf) - f.start
	ls := protowire.SizeVarint(uint64(n))
	e.buf = append(e.buf, zeros[:ls]...)
	copy(e.buf[f.start+ls:], e.buf[f.start:f.start+n])
	protowire.AppendVarint(e.buf[:f.start], uint64(n)) // fits: overwrites the gap
}

// reorder rewrites the fields of message f, written in declaration order,
// in the encoder's order.
func (e *encoder) reorder(f frame) {
	ms := e.marks[f.markStart:]
	if len(ms) < 2 {
		return
	}
	e.groups = e.groups[:0]
	for i, m := range ms {
		end := len(e.buf)
		if i+1 < len(ms) {
			end = ms[i+1].off
		}
		e.groups = append(e.groups, group{start: m.off, end: end, num: m.num})
	}
	gs := e.groups
	switch e.order {
	case Ascending:
		sorted := true
		for i := 1; i < len(gs); i++ {
			if gs[i].num < gs[i-1].num {
				sorted = false
				break
			}
		}
		if sorted {
			return
		}
		// Stable insertion sort: messages have a handful of groups.
		for i := 1; i < len(gs); i++ {
			for j := i; j > 0 && gs[j].num < gs[j-1].num; j-- {
				gs[j], gs[j-1] = gs[j-1], gs[j]
			}
		}
	case Descending:
		for i, j := 0, len(gs)-1; i < j; i, j = i+1, j-1 {
			gs[i], gs[j] = gs[j], gs[i]
		}
	}
	e.scratch = e.scratch[:0]
	for _, g := range gs {
		e.scratch = append(e.scratch, e.buf[g.start:g.end]...)
	}
	copy(e.buf[ms[0].off:], e.scratch)
}

// varint writes a varint field (uint32, uint64, int32, int64, enum) unless v is 0.
func (e *encoder) varint(num protowire.Number, v uint64) {
	if v != 0 {
		e.varintAlways(num, v)
	}
}

// varintAlways writes a varint field even if v is 0.
func (e *encoder) varintAlways(num protowire.Number, v uint64) {
	e.tag(num, protowire.VarintType)
	e.buf = protowire.AppendVarint(e.buf, v)
}

// boolAlways writes a bool field even if v is false.
func (e *encoder) boolAlways(num protowire.Number, v bool) {
	e.varintAlways(num, protowire.EncodeBool(v))
}

// sint32 writes a zigzag-encoded sint32 field unless v is 0.
func (e *encoder) sint32(num protowire.Number, v int32) {
	if v != 0 {
		e.varintAlways(num, protowire.EncodeZigZag(int64(v)))
	}
}

// fixed32 writes a fixed32 field unless v is 0.
func (e *encoder) fixed32(num protowire.Number, v uint32) {
	if v != 0 {
		e.fixed32Always(num, v)
	}
}

// fixed32Always writes a fixed32 field even if v is 0.
func (e *encoder) fixed32Always(num protowire.Number, v uint32) {
	e.tag(num, protowire.Fixed32Type)
	e.buf = protowire.AppendFixed32(e.buf, v)
}

// fixed64 writes a fixed64 (or sfixed64) field unless v is 0.
func (e *encoder) fixed64(num protowire.Number, v uint64) {
	if v != 0 {
		e.fixed64Always(num, v)
	}
}

// fixed64Always writes a fixed64 field even if v is 0.
func (e *encoder) fixed64Always(num protowire.Number, v uint64) {
	e.tag(num, protowire.Fixed64Type)
	e.buf = protowire.AppendFixed64(e.buf, v)
}

// double writes a double field unless v is 0 (or -0, as pdata does).
func (e *encoder) double(num protowire.Number, v float64) {
	if v != 0 {
		e.doubleAlways(num, v)
	}
}

// doubleAlways writes a double field even if v is 0.
func (e *encoder) doubleAlways(num protowire.Number, v float64) {
	e.fixed64Always(num, math.Float64bits(v))
}

// str writes a string field unless s is empty.
func (e *encoder) str(num protowire.Number, s string) {
	if s != "" {
		e.strAlways(num, s)
	}
}

// strAlways writes a string field even if s is empty.
func (e *encoder) strAlways(num protowire.Number, s string) {
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendString(e.buf, s)
}

// bytes writes a bytes (or string) field unless b is empty.
func (e *encoder) bytes(num protowire.Number, b []byte) {
	if len(b) != 0 {
		e.bytesAlways(num, b)
	}
}

// bytesAlways writes a bytes field even if b is empty.
func (e *encoder) bytesAlways(num protowire.Number, b []byte) {
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendBytes(e.buf, b)
}

// packedFixed64 writes a packed repeated fixed64 field unless vs is empty.
func (e *encoder) packedFixed64(num protowire.Number, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendVarint(e.buf, uint64(8*len(vs)))
	for _, v := range vs {
		e.buf = protowire.AppendFixed64(e.buf, v)
	}
}

// packedDouble writes a packed repeated double field unless vs is empty.
func (e *encoder) packedDouble(num protowire.Number, vs []float64) {
	if len(vs) == 0 {
		return
	}
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendVarint(e.buf, uint64(8*len(vs)))
	for _, v := range vs {
		e.buf = protowire.AppendFixed64(e.buf, math.Float64bits(v))
	}
}

// packedVarint writes a packed repeated varint field unless vs is empty.
func (e *encoder) packedVarint(num protowire.Number, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	n := 0
	for _, v := range vs {
		n += protowire.SizeVarint(v)
	}
	e.tag(num, protowire.BytesType)
	e.buf = protowire.AppendVarint(e.buf, uint64(n))
	for _, v := range vs {
		e.buf = protowire.AppendVarint(e.buf, v)
	}
}
