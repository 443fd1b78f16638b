package xdr

import (
	"math"
)

// Unbounded is the maximum for variable-length data declared without one
// (opaque x<>, string s<>, T a<>): RFC 4506 §4.10 limits such lengths to
// 2^32 - 1.
const Unbounded = math.MaxUint32

// Every Append function appends the encoding of its argument to dst and
// returns the extended slice, growing it as needed (there is no size cap).
// The result aliases dst when dst has room. Functions that can fail return
// dst unchanged together with an *Error whose Offset is len(dst).

// AppendUint32 appends an unsigned int (RFC 4506 §4.2).
func AppendUint32(dst []byte, v uint32) []byte {
	return append(dst, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// AppendInt32 appends an int or an enum value (§4.1, §4.3).
func AppendInt32(dst []byte, v int32) []byte {
	return AppendUint32(dst, uint32(v))
}

// AppendUint64 appends an unsigned hyper (§4.5).
func AppendUint64(dst []byte, v uint64) []byte {
	return append(dst, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// AppendInt64 appends a hyper (§4.5).
func AppendInt64(dst []byte, v int64) []byte {
	return AppendUint64(dst, uint64(v))
}

// AppendBool appends a bool as the enum values FALSE=0 / TRUE=1 (§4.4).
func AppendBool(dst []byte, v bool) []byte {
	var b byte
	if v {
		b = 1
	}
	return append(dst, 0, 0, 0, b)
}

// AppendFloat32 appends a float as IEEE 754 single precision (§4.6).
func AppendFloat32(dst []byte, v float32) []byte {
	return AppendUint32(dst, math.Float32bits(v))
}

// AppendFloat64 appends a double as IEEE 754 double precision (§4.7).
func AppendFloat64(dst []byte, v float64) []byte {
	return AppendUint64(dst, math.Float64bits(v))
}

// Quadruple holds the 16 bytes of an XDR quadruple-precision float (§4.8)
// in wire order: the IEEE 754 binary128 bit pattern, most significant byte
// first. Go has no float128, so this package does no arithmetic on it; it
// only carries the bits, which round-trip exactly.
type Quadruple [16]byte

// AppendQuadruple appends a quadruple (§4.8) as its 16 bytes.
func AppendQuadruple(dst []byte, v Quadruple) []byte {
	return append(dst, v[:]...)
}

// Pad returns the number of zero bytes that follow n bytes of opaque or
// string data to reach a multiple of four (§4.9).
func Pad(n int) int { return -n & 3 }

var zeros [4]byte

// AppendFixedOpaque appends fixed-length opaque data (§4.9): b followed by
// zero padding. The declared length is len(b); callers with a Go array pass
// a[:].
func AppendFixedOpaque(dst, b []byte) []byte {
	dst = append(dst, b...)
	return append(dst, zeros[:Pad(len(b))]...)
}

// AppendOpaque appends variable-length opaque data (§4.10): the length, b,
// and zero padding. It fails with ErrTooLong if len(b) > max.
func AppendOpaque(dst, b []byte, max uint32) ([]byte, error) {
	if uint64(len(b)) > uint64(max) {
		return dst, &Error{Offset: len(dst), Op: "encode opaque", Err: ErrTooLong}
	}
	dst = AppendUint32(dst, uint32(len(b)))
	dst = append(dst, b...)
	return append(dst, zeros[:Pad(len(b))]...), nil
}

// AppendString appends a string (§4.11): the length, the bytes, and zero
// padding. It fails with ErrTooLong if len(s) > max.
func AppendString(dst []byte, s string, max uint32) ([]byte, error) {
	if uint64(len(s)) > uint64(max) {
		return dst, &Error{Offset: len(dst), Op: "encode string", Err: ErrTooLong}
	}
	dst = AppendUint32(dst, uint32(len(s)))
	dst = append(dst, s...)
	return append(dst, zeros[:Pad(len(s))]...), nil
}

// AppendCount appends the element count of a variable-length array (§4.13).
// It fails with ErrTooLong if n > max.
func AppendCount(dst []byte, n int, max uint32) ([]byte, error) {
	if n < 0 || uint64(n) > uint64(max) {
		return dst, &Error{Offset: len(dst), Op: "encode array count", Err: ErrTooLong}
	}
	return AppendUint32(dst, uint32(n)), nil
}

// SizeOpaque returns the encoded size of n bytes of variable-length opaque
// or string data, including the length word and padding.
func SizeOpaque(n int) int { return 4 + n + Pad(n) }

// SizeFixedOpaque returns the encoded size of n bytes of fixed-length opaque
// data, including padding.
func SizeFixedOpaque(n int) int { return n + Pad(n) }
