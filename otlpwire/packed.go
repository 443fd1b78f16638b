package otlpwire

import (
	"iter"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// packed locates a repeated scalar field, which an encoder may write packed
// (one length-delimited field) or unpacked (one field per element); a
// parser must accept both, and their concatenation.
type packed struct {
	b   []byte
	off int32 // clamped, as List's: four words, held in registers
	num protowire.Number
}

func newPacked(msg []byte, s span, num protowire.Number) packed {
	if s.last == 0 {
		return packed{}
	}
	return packed{b: s.of(msg), off: clampOff(s.first), num: num}
}

// each calls fn with every element in order, decoded as elem.
func (p packed) each(elem protowire.Type, fn func(uint64) bool) error {
	for i := 0; i < len(p.b); {
		n, typ, j, err := tag(p.b, i)
		if err != nil {
			return shift(err, int(p.off))
		}
		if n != p.num {
			if i, err = skip(p.b, j, typ); err != nil {
				return shift(err, int(p.off))
			}
			continue
		}
		if typ == elem {
			var x uint64
			if elem == wireVarint {
				x, i, err = varint(p.b, j)
			} else {
				x, i, err = fixed64(p.b, j)
			}
			if err != nil {
				return shift(err, int(p.off))
			}
			if !fn(x) {
				return nil
			}
			continue
		}
		v, k, err := bytesField(p.b, j)
		if err != nil {
			return shift(err, int(p.off))
		}
		for q := 0; q < len(v); {
			var x uint64
			if elem == wireVarint {
				x, q, err = varint(v, q)
			} else {
				x, q, err = fixed64(v, q)
			}
			if err != nil {
				return shift(err, int(p.off)+k-len(v))
			}
			if !fn(x) {
				return nil
			}
		}
		i = k
	}
	return nil
}

// Fixed64s is a view of a repeated fixed64 field (histogram bucket counts).
type Fixed64s struct{ p packed }

// All iterates the values; a malformed value ends the iteration with a
// non-nil error as the last pair.
func (f Fixed64s) All() iter.Seq2[uint64, error] {
	return func(yield func(uint64, error) bool) {
		ok := true
		if err := f.p.each(wireFixed64, func(x uint64) bool { ok = yield(x, nil); return ok }); err != nil && ok {
			yield(0, err)
		}
	}
}

// Len counts the values.
func (f Fixed64s) Len() (int, error) { return f.p.len(wireFixed64) }

// AppendTo appends the values to dst.
func (f Fixed64s) AppendTo(dst []uint64) ([]uint64, error) {
	err := f.p.each(wireFixed64, func(x uint64) bool { dst = append(dst, x); return true })
	return dst, err
}

// Float64s is a view of a repeated double field (histogram explicit bounds).
type Float64s struct{ p packed }

// All iterates the values; a malformed value ends the iteration with a
// non-nil error as the last pair.
func (f Float64s) All() iter.Seq2[float64, error] {
	return func(yield func(float64, error) bool) {
		ok := true
		if err := f.p.each(wireFixed64, func(x uint64) bool { ok = yield(math.Float64frombits(x), nil); return ok }); err != nil && ok {
			yield(0, err)
		}
	}
}

// Len counts the values.
func (f Float64s) Len() (int, error) { return f.p.len(wireFixed64) }

// AppendTo appends the values to dst.
func (f Float64s) AppendTo(dst []float64) ([]float64, error) {
	err := f.p.each(wireFixed64, func(x uint64) bool { dst = append(dst, math.Float64frombits(x)); return true })
	return dst, err
}

// Uint64s is a view of a repeated uint64 (varint) field (exponential
// histogram bucket counts).
type Uint64s struct{ p packed }

// All iterates the values; a malformed value ends the iteration with a
// non-nil error as the last pair.
func (u Uint64s) All() iter.Seq2[uint64, error] {
	return func(yield func(uint64, error) bool) {
		ok := true
		if err := u.p.each(wireVarint, func(x uint64) bool { ok = yield(x, nil); return ok }); err != nil && ok {
			yield(0, err)
		}
	}
}

// Len counts the values.
func (u Uint64s) Len() (int, error) { return u.p.len(wireVarint) }

// AppendTo appends the values to dst.
func (u Uint64s) AppendTo(dst []uint64) ([]uint64, error) {
	err := u.p.each(wireVarint, func(x uint64) bool { dst = append(dst, x); return true })
	return dst, err
}

func (p packed) len(elem protowire.Type) (int, error) {
	n := 0
	err := p.each(elem, func(uint64) bool { n++; return true })
	return n, err
}
