package otlpwire

import (
	"encoding/binary"
	"errors"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// Wire-level primitives. Each takes the message b and an offset i, and
// returns the offset after what it read. They never allocate on success and
// never slice past len(b); a length prefix is compared with the bytes left
// before it is used. Byte slices they return alias b with capacity capped at
// their length, so an append by the caller cannot overwrite the input.

const (
	wireVarint  = protowire.VarintType
	wireFixed32 = protowire.Fixed32Type
	wireFixed64 = protowire.Fixed64Type
	wireBytes   = protowire.BytesType
)

// tag reads a field tag at b[i:]. The one-byte case (field numbers 1-15,
// every OTLP field) is inlined at the call site.
func tag(b []byte, i int) (protowire.Number, protowire.Type, int, error) {
	if uint(i) < uint(len(b)) {
		if x := b[i]; x < 0x80 && x >= 8 {
			return protowire.Number(x >> 3), protowire.Type(x & 7), i + 1, nil
		}
	}
	return tagSlow(b, i)
}

func tagSlow(b []byte, i int) (protowire.Number, protowire.Type, int, error) {
	v, n := protowire.ConsumeVarint(b[i:])
	if n < 0 {
		return 0, 0, i, varintErr(n, i, "tag")
	}
	num, typ := protowire.DecodeTag(v)
	if num < protowire.MinValidNumber || v>>3 > uint64(protowire.MaxValidNumber) {
		return 0, 0, i, newErr(ErrFieldNumber, i, "in tag")
	}
	return num, typ, i + n, nil
}

// varint reads a varint at b[i:].
func varint(b []byte, i int) (uint64, int, error) {
	if uint(i) < uint(len(b)) && b[i] < 0x80 {
		return uint64(b[i]), i + 1, nil
	}
	return varintSlow(b, i)
}

func varintSlow(b []byte, i int) (uint64, int, error) {
	v, n := protowire.ConsumeVarint(b[i:])
	if n < 0 {
		return 0, i, varintErr(n, i, "varint")
	}
	return v, i + n, nil
}

func varintErr(n, off int, what string) error {
	if errors.Is(protowire.ParseError(n), io.ErrUnexpectedEOF) {
		return newErr(ErrTruncated, off, what)
	}
	return newErr(ErrOverflow, off, what)
}

// fixed64 reads a little-endian 64-bit value at b[i:].
func fixed64(b []byte, i int) (uint64, int, error) {
	if i >= 0 && len(b)-i >= 8 {
		return binary.LittleEndian.Uint64(b[i:]), i + 8, nil
	}
	return 0, i, newErr(ErrTruncated, i, "fixed64")
}

// fixed32 reads a little-endian 32-bit value at b[i:].
func fixed32(b []byte, i int) (uint32, int, error) {
	if i >= 0 && len(b)-i >= 4 {
		return binary.LittleEndian.Uint32(b[i:]), i + 4, nil
	}
	return 0, i, newErr(ErrTruncated, i, "fixed32")
}

// bytesField reads a length-delimited value at b[i:] and returns it with
// its capacity capped, and the offset after it. The one-byte length case
// is inlined at the call site.
func bytesField(b []byte, i int) ([]byte, int, error) {
	if uint(i) < uint(len(b)) {
		if n := int(b[i]); n < 0x80 && n < len(b)-i {
			e := i + 1 + n
			return b[i+1 : e : e], e, nil
		}
	}
	return bytesFieldSlow(b, i)
}

func bytesFieldSlow(b []byte, i int) ([]byte, int, error) {
	v, n := protowire.ConsumeVarint(b[i:])
	if n < 0 {
		return nil, i, varintErr(n, i, "length prefix")
	}
	if v > uint64(len(b)-i-n) {
		return nil, i, newErr(ErrTruncated, i, "length-delimited field")
	}
	s := i + n
	e := s + int(v)
	return b[s:e:e], e, nil
}

// next reads the whole field at b[i:]: its number and wire type, its value
// (v for varint and fixed-width fields, s for length-delimited ones, capped
// and aliasing b) and the offset after it. Groups and reserved wire types
// are errors. On error num is the field number when the tag was read, else
// 0. The fast path covers one-byte tags, one-byte lengths and one-byte
// varints, which is nearly every field of an OTLP record.
//
// It repeats field's fast path on purpose: written as a wrapper around
// field, the counting loops that call it (count, repeated) ran about 35 %
// slower (BenchmarkCount 3.0 -> 4.1 µs, 2026-11-23).
func next(b []byte, i int) (num protowire.Number, typ protowire.Type, v uint64, s []byte, j int, err error) {
	if uint(i) < uint(len(b)) {
		if x := b[i]; x < 0x80 && x >= 8 {
			num, typ, j = protowire.Number(x>>3), protowire.Type(x&7), i+1
			switch typ {
			case wireBytes:
				if uint(j+1) < uint(len(b)) {
					n := int(b[j])
					if n < 0x80 {
						if n < len(b)-j {
							e := j + 1 + n
							return num, typ, 0, b[j+1 : e : e], e, nil
						}
					} else if c := b[j+1]; c < 0x80 {
						if n = n&0x7f | int(c)<<7; n <= len(b)-j-2 {
							e := j + 2 + n
							return num, typ, 0, b[j+2 : e : e], e, nil
						}
					}
				}
			case wireVarint:
				if uint(j) < uint(len(b)) && b[j] < 0x80 {
					return num, typ, uint64(b[j]), nil, j + 1, nil
				}
			case wireFixed64:
				if len(b)-j >= 8 {
					return num, typ, binary.LittleEndian.Uint64(b[j:]), nil, j + 8, nil
				}
			case wireFixed32:
				if len(b)-j >= 4 {
					return num, typ, uint64(binary.LittleEndian.Uint32(b[j:])), nil, j + 4, nil
				}
			}
		}
	}
	return nextSlow(b, i)
}

// field is next for the hot loops of the record readers: the tag comes
// back as one word (number<<3 | wire type) and an error as j < 0, to be
// described by schema.fail. It returns fewer words than next, which keeps
// them in registers.
func field(b []byte, i int) (t, v uint64, s []byte, j int) {
	if uint(i+1) < uint(len(b)) {
		// One- or two-byte tag (field numbers up to 2047).
		x := b[i]
		if x < 0x80 {
			t, j = uint64(x), i+1
		} else if y := b[i+1]; y < 0x80 {
			t, j = uint64(x&0x7f)|uint64(y)<<7, i+2
		}
		if t >= 8 {
			switch protowire.Type(t & 7) {
			case wireBytes:
				if uint(j+1) < uint(len(b)) {
					n := int(b[j])
					if n < 0x80 {
						if n < len(b)-j {
							e := j + 1 + n
							return t, 0, b[j+1 : e : e], e
						}
					} else if c := b[j+1]; c < 0x80 {
						if n = n&0x7f | int(c)<<7; n <= len(b)-j-2 {
							e := j + 2 + n
							return t, 0, b[j+2 : e : e], e
						}
					}
				}
			case wireVarint:
				if uint(j) < uint(len(b)) && b[j] < 0x80 {
					return t, uint64(b[j]), nil, j + 1
				}
			case wireFixed64:
				if len(b)-j >= 8 {
					return t, binary.LittleEndian.Uint64(b[j:]), nil, j + 8
				}
			case wireFixed32:
				if len(b)-j >= 4 {
					return t, uint64(binary.LittleEndian.Uint32(b[j:])), nil, j + 4
				}
			}
		}
	}
	n, typ, v, s, j, err := nextSlow(b, i)
	t = uint64(n)<<3 | uint64(typ)
	if err != nil {
		return t, 0, nil, -1
	}
	return t, v, s, j
}

func nextSlow(b []byte, i int) (num protowire.Number, typ protowire.Type, v uint64, s []byte, j int, err error) {
	num, typ, j, err = tagSlow(b, i)
	if err != nil {
		return 0, 0, 0, nil, i, err
	}
	switch typ {
	case wireBytes:
		s, j, err = bytesField(b, j)
	case wireVarint:
		v, j, err = varint(b, j)
	case wireFixed64:
		v, j, err = fixed64(b, j)
	case wireFixed32:
		var x uint32
		x, j, err = fixed32(b, j)
		v = uint64(x)
	case protowire.StartGroupType, protowire.EndGroupType:
		err = newErr(ErrGroup, i, "")
	default:
		err = newErr(ErrWireType, i, "(reserved wire type)")
	}
	return num, typ, v, s, j, err
}

// skip passes over the value of a field of wire type typ at b[i:].
func skip(b []byte, i int, typ protowire.Type) (int, error) {
	switch typ {
	case wireVarint:
		_, j, err := varint(b, i)
		return j, err
	case wireFixed64:
		if len(b)-i < 8 {
			return i, newErr(ErrTruncated, i, "fixed64")
		}
		return i + 8, nil
	case wireBytes:
		_, j, err := bytesField(b, i)
		return j, err
	case wireFixed32:
		if len(b)-i < 4 {
			return i, newErr(ErrTruncated, i, "fixed32")
		}
		return i + 4, nil
	case protowire.StartGroupType, protowire.EndGroupType:
		return i, newErr(ErrGroup, i, "")
	default:
		return i, newErr(ErrWireType, i, "(reserved wire type)")
	}
}

// span records the smallest range [first, last) of a message that holds
// every occurrence of one repeated field, so that a later iteration over the
// field reads only that range instead of the whole message.
type span struct{ first, last int }

func (s *span) add(start, end int) {
	if s.last == 0 {
		s.first = start
	}
	s.last = end
}

func (s span) of(b []byte) []byte { return b[s.first:s.last:s.last] }

// repeated walks the occurrences of field num (wire type bytes) in msg and
// calls yield with each value and its start offset within msg. name labels
// errors. It stops early when yield returns false.
func repeated(msg []byte, num protowire.Number, name string, yield func(v []byte, base int) bool) error {
	idx := 0
	for i := 0; i < len(msg); {
		n, typ, _, s, j, err := next(msg, i)
		if n == num {
			if err != nil {
				return within(err, name, idx, 0)
			}
			if typ != wireBytes {
				return within(newErr(ErrWireType, 0, ""), name, idx, i)
			}
			if !yield(s, j-len(s)) {
				return nil
			}
			idx++
		} else if err != nil {
			return err
		}
		i = j
	}
	return nil
}

// seq iterates the occurrences of the repeated message field num of msg,
// for the container iterators. An error is yielded once, as the last pair,
// with a nil slice.
//
// It is not generic on purpose: a caller in another package that ranges
// over an iterator passes its loop body as yield, and the compiler treats
// a function value handed to a generic function of another package as
// escaping, which would cost the caller heap allocations per loop. The
// iterators convert the element type in a closure of their own instead.
func seq(msg []byte, num protowire.Number, name string, yield func([]byte, error) bool) {
	idx := 0
	for i := 0; i < len(msg); {
		t, _, s, j := field(msg, i)
		n := protowire.Number(t >> 3)
		if j < 0 {
			_, _, _, _, _, err := next(msg, i)
			if n == num {
				err = within(err, name, idx, 0)
			}
			yield(nil, err)
			return
		}
		if n == num {
			if protowire.Type(t&7) != wireBytes {
				yield(nil, within(newErr(ErrWireType, 0, ""), name, idx, i))
				return
			}
			if !yield(s, nil) {
				return
			}
			idx++
		}
		i = j
	}
}

// count returns how many times field num occurs in msg.
func count(msg []byte, num protowire.Number, name string) (int, error) {
	c := 0
	for i := 0; i < len(msg); {
		n, typ, _, _, j, err := next(msg, i)
		if n == num {
			if err != nil {
				return c, within(err, name, c, 0)
			}
			if typ != wireBytes {
				return c, within(newErr(ErrWireType, 0, ""), name, c, i)
			}
			c++
		} else if err != nil {
			return c, err
		}
		i = j
	}
	return c, nil
}

// last returns the value of the last occurrence of the length-delimited
// field num in msg (protobuf's last-one-wins rule for singular fields), nil
// if there is none.
func last(msg []byte, num protowire.Number, name string) ([]byte, error) {
	out, _, err := lastCount(msg, num, name)
	return out, err
}

// lastCount is last that also counts the occurrences.
func lastCount(msg []byte, num protowire.Number, name string) ([]byte, int, error) {
	var out []byte
	seen := 0
	want := byte(num)<<3 | byte(wireBytes)
	for i := 0; i < len(msg); {
		// Fast path: step over other length-delimited fields (the records
		// of a scope container) with one- or two-byte lengths, inline.
		if x := msg[i]; x != want && x&7 == byte(wireBytes) && x >= 8 && x < 0x80 && i+2 < len(msg) {
			if l := int(msg[i+1]); l < 0x80 {
				if l <= len(msg)-i-2 {
					i += 2 + l
					continue
				}
			} else if c := msg[i+2]; c < 0x80 {
				if l = l&0x7f | int(c)<<7; l <= len(msg)-i-3 {
					i += 3 + l
					continue
				}
			}
		}
		n, typ, _, s, j, err := next(msg, i)
		if n == num {
			if err != nil {
				return nil, seen, within(err, name, -1, 0)
			}
			if typ != wireBytes {
				return nil, seen, newErr(ErrWireType, i, "for field "+name)
			}
			out = s
			seen++
		} else if err != nil {
			return nil, seen, err
		}
		i = j
	}
	return out, seen, nil
}
