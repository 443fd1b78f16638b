package xdr

import (
	"encoding/binary"
	"math"
)

// DefaultMaxDepth is the nesting limit a Decoder starts with: how many
// structs, unions and optional values may be open at once. It stops hostile
// input from exhausting the stack through recursive types.
const DefaultMaxDepth = 200

// Decoder reads XDR items from a byte slice. It is a cursor: each Decode
// method consumes one item from the front of the unread input.
//
// Methods that return []byte (the views) alias the input: they are only
// valid while the input is, and the caller must copy them to keep them.
// Methods returning string copy. A Decoder does no allocation of its own.
//
// Errors are *Error values carrying the offset of the failing item; after an
// error the cursor position is unspecified. The zero Decoder decodes an
// empty input; use Reset to point it at data.
type Decoder struct {
	buf      []byte
	off      int
	depth    int
	maxDepth int // 0: DefaultMaxDepth, applied by Enter
}

// NewDecoder returns a Decoder reading b. The Decoder aliases b.
func NewDecoder(b []byte) *Decoder {
	return &Decoder{buf: b}
}

// Reset makes d read b from the start, keeping its depth limit.
func (d *Decoder) Reset(b []byte) {
	d.buf, d.off, d.depth = b, 0, 0
}

// SetMaxDepth sets the nesting limit (see DefaultMaxDepth); n <= 0 restores
// the default.
func (d *Decoder) SetMaxDepth(n int) {
	d.maxDepth = max(n, 0)
}

// Offset returns the number of bytes consumed so far.
func (d *Decoder) Offset() int { return d.off }

// Remaining returns the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.buf) - d.off }

// Rest returns the unread input without consuming it; it aliases the input.
func (d *Decoder) Rest() []byte { return d.buf[d.off:] }

// Done returns an ErrTrailing *Error if unread bytes remain, else nil.
func (d *Decoder) Done() error {
	if d.off != len(d.buf) {
		return &Error{Offset: d.off, Op: "decode", Err: ErrTrailing}
	}
	return nil
}

// Enter records that a struct, union or optional value is being opened and
// fails with ErrDepth beyond the limit. Generated code pairs it with Leave.
func (d *Decoder) Enter() error {
	d.depth++
	limit := d.maxDepth
	if limit == 0 {
		limit = DefaultMaxDepth
	}
	if d.depth > limit {
		return &Error{Offset: d.off, Op: "decode", Err: ErrDepth}
	}
	return nil
}

// Leave closes what Enter opened.
func (d *Decoder) Leave() { d.depth-- }

// fail builds an *Error at the current offset. It is small enough to be
// inlined, which keeps the Decode methods themselves inlinable.
func (d *Decoder) fail(op string, err error) error {
	return &Error{Offset: d.off, Op: op, Err: err}
}

// DecodeUint32 consumes an unsigned int.
func (d *Decoder) DecodeUint32() (uint32, error) {
	b := d.buf[d.off:]
	if len(b) < 4 {
		return 0, d.fail("decode unsigned int", ErrTruncated)
	}
	v := binary.BigEndian.Uint32(b)
	d.off += 4
	return v, nil
}

// DecodeInt32 consumes an int. Enum values are decoded with it and then
// checked by the caller (generated code does this).
func (d *Decoder) DecodeInt32() (int32, error) {
	b := d.buf[d.off:]
	if len(b) < 4 {
		return 0, d.fail("decode int", ErrTruncated)
	}
	v := binary.BigEndian.Uint32(b)
	d.off += 4
	return int32(v), nil
}

// DecodeUint64 consumes an unsigned hyper.
func (d *Decoder) DecodeUint64() (uint64, error) {
	b := d.buf[d.off:]
	if len(b) < 8 {
		return 0, d.fail("decode unsigned hyper", ErrTruncated)
	}
	v := binary.BigEndian.Uint64(b)
	d.off += 8
	return v, nil
}

// DecodeInt64 consumes a hyper.
func (d *Decoder) DecodeInt64() (int64, error) {
	b := d.buf[d.off:]
	if len(b) < 8 {
		return 0, d.fail("decode hyper", ErrTruncated)
	}
	v := binary.BigEndian.Uint64(b)
	d.off += 8
	return int64(v), nil
}

// DecodeBool consumes a bool; any value other than 0 or 1 is ErrBool.
func (d *Decoder) DecodeBool() (bool, error) {
	b := d.buf[d.off:]
	if len(b) < 4 {
		return false, d.fail("decode bool", ErrTruncated)
	}
	v := binary.BigEndian.Uint32(b)
	if v > 1 {
		return false, d.fail("decode bool", ErrBool)
	}
	d.off += 4
	return v == 1, nil
}

// DecodeOptional consumes the flag in front of optional data (§4.19) and
// reports whether a value follows; any flag other than 0 or 1 is ErrBool.
func (d *Decoder) DecodeOptional() (bool, error) {
	b := d.buf[d.off:]
	if len(b) < 4 {
		return false, d.fail("decode optional", ErrTruncated)
	}
	v := binary.BigEndian.Uint32(b)
	if v > 1 {
		return false, d.fail("decode optional", ErrBool)
	}
	d.off += 4
	return v == 1, nil
}

// DecodeFloat32 consumes a float. All bit patterns, including NaNs, are
// accepted and preserved.
func (d *Decoder) DecodeFloat32() (float32, error) {
	b := d.buf[d.off:]
	if len(b) < 4 {
		return 0, d.fail("decode float", ErrTruncated)
	}
	v := binary.BigEndian.Uint32(b)
	d.off += 4
	return math.Float32frombits(v), nil
}

// DecodeFloat64 consumes a double. All bit patterns are accepted.
func (d *Decoder) DecodeFloat64() (float64, error) {
	b := d.buf[d.off:]
	if len(b) < 8 {
		return 0, d.fail("decode double", ErrTruncated)
	}
	v := binary.BigEndian.Uint64(b)
	d.off += 8
	return math.Float64frombits(v), nil
}

// DecodeQuadruple consumes a quadruple as its 16 raw bytes (see Quadruple).
func (d *Decoder) DecodeQuadruple() (Quadruple, error) {
	var q Quadruple
	if len(d.buf)-d.off < 16 {
		return q, d.fail("decode quadruple", ErrTruncated)
	}
	copy(q[:], d.buf[d.off:])
	d.off += 16
	return q, nil
}

// padded consumes n data bytes plus their zero padding and returns a view
// of the data; op names the item for errors. The caller has already checked
// that n fits in an int.
func (d *Decoder) padded(n int, op string) ([]byte, error) {
	total := n + Pad(n)
	if total < n || len(d.buf)-d.off < total {
		return nil, d.fail(op, ErrTruncated)
	}
	b := d.buf[d.off : d.off+n : d.off+n]
	for _, p := range d.buf[d.off+n : d.off+total] {
		if p != 0 {
			return nil, &Error{Offset: d.off + n, Op: op, Err: ErrPadding}
		}
	}
	d.off += total
	return b, nil
}

// DecodeFixedOpaque consumes n bytes of fixed-length opaque data and its
// padding and returns a view of the data, aliasing the input (zero-copy).
func (d *Decoder) DecodeFixedOpaque(n int) ([]byte, error) {
	if n < 0 {
		return nil, d.fail("decode fixed opaque", ErrLength)
	}
	return d.padded(n, "decode fixed opaque")
}

// DecodeFixedBytesInto consumes len(dst) bytes of fixed-length opaque data
// and its padding, copying the data into dst. It does not allocate.
func (d *Decoder) DecodeFixedBytesInto(dst []byte) error {
	b, err := d.padded(len(dst), "decode fixed opaque")
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

// length consumes a length word and checks it against max and against the
// remaining input (len*unit bytes must follow) before anything is read.
func (d *Decoder) length(max uint32, unit int, op string) (int, error) {
	if len(d.buf)-d.off < 4 {
		return 0, d.fail(op, ErrTruncated)
	}
	n := binary.BigEndian.Uint32(d.buf[d.off:])
	if n > max {
		return 0, d.fail(op, ErrTooLong)
	}
	if uint64(n) > uint64(len(d.buf)-d.off-4)/uint64(unit) { // n*unit > rest, without overflow
		return 0, d.fail(op, ErrTruncated)
	}
	d.off += 4
	return int(n), nil
}

// DecodeOpaque consumes variable-length opaque data of at most max bytes
// and returns a view of it, aliasing the input (zero-copy). The length is
// checked against max (ErrTooLong) and the remaining input (ErrTruncated)
// before anything else.
func (d *Decoder) DecodeOpaque(max uint32) ([]byte, error) {
	return d.varBytes(max, "decode opaque")
}

// DecodeStringView is DecodeString without the copy: the returned bytes
// alias the input. Contents are not validated (XDR strings are bytes).
func (d *Decoder) DecodeStringView(max uint32) ([]byte, error) {
	return d.varBytes(max, "decode string")
}

// varBytes consumes a length of at most max and that many bytes plus
// padding, returning a view of the bytes.
func (d *Decoder) varBytes(max uint32, op string) ([]byte, error) {
	start := d.off
	n, err := d.length(max, 1, op)
	if err != nil {
		return nil, err
	}
	b, err := d.padded(n, op)
	if err != nil {
		d.off = start
		return nil, err
	}
	return b, nil
}

// DecodeString consumes a string of at most max bytes and returns a copy.
func (d *Decoder) DecodeString(max uint32) (string, error) {
	b, err := d.DecodeStringView(max)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// DecodeCount consumes the element count of a variable-length array whose
// elements each take at least minSize bytes on the wire. It fails with
// ErrTooLong if the count exceeds max and ErrTruncated if count*minSize
// exceeds the remaining input, so a caller may allocate count elements
// knowing the input can back them. minSize below 1 is treated as 1.
func (d *Decoder) DecodeCount(max uint32, minSize int) (int, error) {
	if minSize < 1 {
		minSize = 1
	}
	return d.length(max, minSize, "decode array count")
}

// CheckCount verifies that n elements of at least minSize bytes each fit in
// the remaining input; generated code uses it before allocating fixed-length
// arrays held in slices.
func (d *Decoder) CheckCount(n, minSize int) error {
	if minSize < 1 {
		minSize = 1
	}
	if n < 0 || uint64(n) > uint64(len(d.buf)-d.off)/uint64(minSize) {
		return d.fail("decode array", ErrTruncated)
	}
	return nil
}
