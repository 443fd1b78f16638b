package otlpwire

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
)

// Resource identity hashing.
//
// Hash is a stable 64-bit digest of a set of attributes, for sharding and
// routing: the same attributes give the same hash in every process, on every
// platform and in every release (a change to the algorithm would be a new
// function), whatever order the attributes, or the fields within them, were
// encoded in. The algorithm:
//
//	entry(kv)   = XXH64(uvarint(len(key)) ‖ key ‖ enc(value))
//	set(attrs)  = Σ entry(kv)  (mod 2^64; addition makes it order-free)
//	Hash(attrs) = XXH64(le64(set(attrs)) ‖ le64(len(attrs)))
//
//	enc(value) is one type byte (the ValueType number) followed by:
//	  string, bytes: uvarint(len) ‖ bytes
//	  bool:          one byte, 0 or 1
//	  int:           le64(int)
//	  double:        le64(IEEE-754 bits), as encoded (so 0.0 ≠ -0.0)
//	  array:         uvarint(n) ‖ enc(v1) ‖ … ‖ enc(vn)  (order matters)
//	  kvlist:        le64(set(entries)) ‖ le64(n)       (order-free)
//	  empty:         nothing
//
// XXH64 is xxHash64 with seed 0 (github.com/cespare/xxhash/v2). Duplicate
// keys each count. Nesting deeper than MaxAnyValueDepth is an error.

// Hash returns the order-independent identity hash of the attributes
// described above. It does not allocate.
func (a Attributes) Hash() (uint64, error) {
	sum, n, err := setHash(a, 1)
	if err != nil {
		return 0, err
	}
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], sum)
	binary.LittleEndian.PutUint64(buf[8:], n)
	return xxhash.Sum64(buf[:]), nil
}

// Hash returns the identity hash of the resource's attributes (see
// Attributes.Hash). dropped_attributes_count and entity_refs do not take
// part.
func (r Resource) Hash() (uint64, error) {
	a, err := r.Attributes()
	if err != nil {
		return 0, err
	}
	return a.Hash()
}

func setHash(a Attributes, depth int) (sum, n uint64, err error) {
	if depth > MaxAnyValueDepth {
		return 0, 0, newErr(ErrTooDeep, int(a.off), "")
	}
	for kv, err := range a.All() {
		if err != nil {
			return 0, 0, err
		}
		var d xxhash.Digest
		d.Reset()
		var buf [binary.MaxVarintLen64]byte
		d.Write(binary.AppendUvarint(buf[:0], uint64(len(kv.Key))))
		d.Write(kv.Key)
		if err := hashValue(&d, kv.Value, depth); err != nil {
			return 0, 0, err
		}
		sum += d.Sum64()
		n++
	}
	return sum, n, nil
}

func hashValue(d *xxhash.Digest, v Value, depth int) error {
	var buf [1 + 16]byte
	buf[0] = byte(v.typ)
	switch v.typ {
	case ValueString, ValueBytes:
		d.Write(binary.AppendUvarint(buf[:1], v.n))
		d.Write(v.raw())
	case ValueBool:
		buf[1] = byte(v.n)
		d.Write(buf[:2])
	case ValueInt, ValueDouble:
		binary.LittleEndian.PutUint64(buf[1:], v.n)
		d.Write(buf[:9])
	case ValueArray:
		if depth >= MaxAnyValueDepth {
			return newErr(ErrTooDeep, 0, "")
		}
		n, err := v.Array().Len()
		if err != nil {
			return err
		}
		d.Write(binary.AppendUvarint(buf[:1], uint64(n)))
		for e, err := range v.Array().All() {
			if err != nil {
				return err
			}
			if err := hashValue(d, e, depth+1); err != nil {
				return err
			}
		}
	case ValueKVList:
		sum, n, err := setHash(v.KVList(), depth+1)
		if err != nil {
			return err
		}
		binary.LittleEndian.PutUint64(buf[1:], sum)
		binary.LittleEndian.PutUint64(buf[9:], n)
		d.Write(buf[:17])
	default:
		d.Write(buf[:1])
	}
	return nil
}
