package otlpwire

import (
	"encoding/binary"
	"iter"
	"math"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// ValueType is the kind held by an AnyValue.
type ValueType uint8

// The AnyValue kinds, in the order of the oneof in common.proto.
const (
	ValueEmpty ValueType = iota // no value field present, or string_value_strindex (see AnyValue)
	ValueString
	ValueBool
	ValueInt
	ValueDouble
	ValueArray
	ValueKVList
	ValueBytes
)

var valueTypeNames = [...]string{"Empty", "Str", "Bool", "Int", "Double", "Array", "KVList", "Bytes"}

// String returns the pdata name of the kind ("Str", "Int", ...).
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return "Unknown"
}

// AnyValue is the encoded body of an opentelemetry.proto.common.v1.AnyValue:
//
//	message AnyValue {
//	  oneof value {
//	    string string_value = 1; bool bool_value = 2; int64 int_value = 3;
//	    double double_value = 4; ArrayValue array_value = 5;
//	    KeyValueList kvlist_value = 6; bytes bytes_value = 7;
//	    int32 string_value_strindex = 8;
//	  }
//	}
//
// string_value_strindex is a reference into a profiles dictionary's string
// table, which only the profiles signal has. It reads as ValueEmpty, as
// pdata's Value shows it, and like every oneof field it replaces an
// earlier value.
type AnyValue []byte

// Value decodes the AnyValue in one pass. The result aliases a.
func (a AnyValue) Value() (Value, error) {
	v, _, err := parseAnyValue(a)
	return v, err
}

// Value is a decoded AnyValue. Byte slices it returns alias the request it
// was read from: copy them to keep them past the request's lifetime.
// Array and key-value list contents are decoded lazily, on iteration.
//
// A Value is three words: a pointer to the contents of a string, bytes,
// array or key-value list value, and their length or the bits of a bool,
// int or double.
type Value struct {
	p   *byte  // first byte of the contents; nil for scalars and empty contents
	n   uint64 // length of the contents, or the bool, int or double bits
	typ ValueType
}

// bytesValue makes a Value of a bytes-like kind aliasing s.
func bytesValue(t ValueType, s []byte) Value {
	if len(s) == 0 {
		return Value{typ: t}
	}
	return Value{p: &s[0], n: uint64(len(s)), typ: t}
}

// raw returns the contents of a bytes-like value, capped at their length.
func (v Value) raw() []byte {
	if v.p == nil {
		return nil
	}
	return unsafe.Slice(v.p, v.n)
}

// Type returns the kind of value; ValueEmpty for an AnyValue with no field set.
func (v Value) Type() ValueType { return v.typ }

// Str returns the string value, or nil when Type() != ValueString.
func (v Value) Str() []byte {
	if v.typ != ValueString {
		return nil
	}
	return v.raw()
}

// Bool returns the bool value, or false when Type() != ValueBool.
func (v Value) Bool() bool { return v.typ == ValueBool && v.n != 0 }

// Int returns the int value, or 0 when Type() != ValueInt.
func (v Value) Int() int64 {
	if v.typ != ValueInt {
		return 0
	}
	return int64(v.n)
}

// Double returns the double value, or 0 when Type() != ValueDouble.
func (v Value) Double() float64 {
	if v.typ != ValueDouble {
		return 0
	}
	return math.Float64frombits(v.n)
}

// Bytes returns the bytes value, or nil when Type() != ValueBytes.
func (v Value) Bytes() []byte {
	if v.typ != ValueBytes {
		return nil
	}
	return v.raw()
}

// Array returns the elements of an array value; empty unless
// Type() == ValueArray.
func (v Value) Array() Values {
	if v.typ != ValueArray {
		return nil
	}
	return Values(v.raw())
}

// KVList returns the entries of a key-value list value; empty unless
// Type() == ValueKVList.
func (v Value) KVList() Attributes {
	if v.typ != ValueKVList {
		return Attributes{}
	}
	return Attributes{b: v.raw(), num: 1}
}

// Values is the encoded body of an ArrayValue (repeated AnyValue values = 1).
type Values []byte

// All iterates the array's elements. A malformed element ends the iteration
// with a non-nil error as the last pair.
func (vs Values) All() iter.Seq2[Value, error] {
	return func(yield func(Value, error) bool) {
		idx := 0
		ok := true
		err := repeated(vs, 1, "values", func(b []byte, base int) bool {
			v, _, err := parseAnyValue(b)
			if err != nil {
				ok = yield(Value{}, within(err, "values", idx, base))
				return false
			}
			idx++
			ok = yield(v, nil)
			return ok
		})
		if err != nil && ok {
			yield(Value{}, err)
		}
	}
}

// Len counts the array's elements.
func (vs Values) Len() (int, error) { return count(vs, 1, "values") }

// parseAnyValue decodes an AnyValue. Later oneof fields replace earlier
// ones, as in protobuf and pdata. set reports whether any value field was
// present.
func parseAnyValue(b []byte) (v Value, set bool, err error) {
	// Fast path: exactly one string or bytes field with a one-byte length,
	// the shape of nearly every log body.
	if len(b) >= 2 && (b[0] == 0x0a || b[0] == 0x3a) && int(b[1]) == len(b)-2 {
		return bytesValue(bytesValueTypes[b[0]>>3], b[2:]), true, nil
	}
	for i := 0; i < len(b); {
		t, x, s, j := field(b, i)
		if j < 0 || anyValueSchema.bad(t) {
			if err := anyValueSchema.failAt(b, i, t, j); err != nil {
				return Value{}, false, err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1, 5, 6, 7:
			v, set = bytesValue(bytesValueTypes[n], s), true
		case 2:
			v, set = Value{typ: ValueBool, n: b2u(x != 0)}, true
		case 3:
			v, set = Value{typ: ValueInt, n: x}, true
		case 4:
			v, set = Value{typ: ValueDouble, n: x}, true
		case 8: // string_value_strindex: see AnyValue
			v, set = Value{}, true
		}
		i = j
	}
	return v, set, nil
}

var anyValueSchema = newSchema(map[protowire.Number]fieldSpec{
	1: bytesf("string_value"), 2: varintf("bool_value"), 3: varintf("int_value"), 4: fixed("double_value"),
	5: bytesf("array_value"), 6: bytesf("kvlist_value"), 7: bytesf("bytes_value"),
	8: varintf("string_value_strindex"),
})

var bytesValueTypes = [8]ValueType{1: ValueString, 5: ValueArray, 6: ValueKVList, 7: ValueBytes}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// KeyValue is one decoded attribute. Key and the value's bytes alias the
// request.
type KeyValue struct {
	Key   []byte
	Value Value
}

// parseKeyValue decodes a KeyValue { string key = 1; AnyValue value = 2;
// int32 key_strindex = 3; }.
// A repeated value field merges as pdata does: a later occurrence that sets
// a oneof field replaces the earlier value.
func parseKeyValue(b []byte) (KeyValue, error) {
	var kv KeyValue
	for i := 0; i < len(b); {
		t, _, s, j := field(b, i)
		if j < 0 || keyValueSchema.bad(t) {
			if err := keyValueSchema.failAt(b, i, t, j); err != nil {
				return KeyValue{}, err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			kv.Key = s
		case 2:
			v, set, err := parseAnyValue(s)
			if err != nil {
				return KeyValue{}, within(err, "value", -1, j-len(s))
			}
			if set {
				kv.Value = v
			}
		}
		i = j
	}
	return kv, nil
}

// key_strindex (3), a profiles dictionary reference, is declared so that
// its wire type is checked, as pdata checks it; its value is not used.
var keyValueSchema = newSchema(map[protowire.Number]fieldSpec{1: bytesf("key"), 2: bytesf("value"), 3: varintf("key_strindex")})

// Attributes is a view of the repeated KeyValue field of one message
// (attributes, a key-value list, metric metadata). It aliases the request.
// The zero value is an empty list.
type Attributes struct {
	b []byte // the range of the message holding every occurrence
	// off is the offset of b within that message, for error positions
	// (clamped: protobuf messages are below 2 GiB). With off and num in
	// one word an Attributes is four words, which the compiler keeps in
	// registers: a larger one is copied through memory at every call.
	off int32
	num protowire.Number
}

// Raw returns the bytes the pairs are read from: every occurrence of the
// field with its tag, and whatever a producer wrote between the first and
// the last. Two Attributes with equal Raw hold equal pairs, so Raw can key
// a cache of what is derived from them (the same pairs written in another
// order or layout give another Raw). It aliases the request; nothing is
// validated.
func (a Attributes) Raw() []byte { return a.b }

// All iterates the key-value pairs in order. A malformed pair ends the
// iteration with a non-nil error as the last pair.
func (a Attributes) All() iter.Seq2[KeyValue, error] {
	return func(yield func(KeyValue, error) bool) {
		b, idx := a.b, 0
		kvTag := byte(a.num)<<3 | byte(wireBytes)
		for i := 0; i < len(b); {
			// Fast path: a pair field with a one-byte length whose key and
			// value (in either order) have one-byte lengths and whose
			// AnyValue is a single one-byte-tag field; anything else takes
			// the general path.
			if e := i + 6; e <= len(b) && b[i] == kvTag && b[i+1] < 0x80 {
				j := i + 2 + int(b[i+1])
				f0, l0 := b[i+2], int(b[i+3])
				p := i + 4 + l0
				if j <= len(b) && l0 < 0x80 && p+2 <= j {
					f1, l1 := b[p], int(b[p+1])
					if l1 < 0x80 && p+2+l1 == j {
						var key, s []byte
						if f0 == 0x0a && f1 == 0x12 {
							key, s = b[i+4:p:p], b[p+2:j:j]
						} else if f0 == 0x12 && f1 == 0x0a {
							key, s = b[p+2:j:j], b[i+4:p:p]
						}
						var v Value
						ok := len(s) > 2 && s[0] == 0x0a && int(s[1]) == len(s)-2
						if ok { // a string, inline
							v = Value{p: &s[2], n: uint64(len(s) - 2), typ: ValueString}
						} else {
							v, ok = shortAnyValue(s)
						}
						if ok {
							if !yield(KeyValue{Key: key, Value: v}, nil) {
								return
							}
							idx++
							i = j
							continue
						}
					}
				}
			}
			n, typ, _, s, j, err := next(b, i)
			if err != nil {
				yield(KeyValue{}, shift(err, int(a.off)))
				return
			}
			if n == a.num {
				if typ != wireBytes {
					yield(KeyValue{}, within(newErr(ErrWireType, 0, ""), "attributes", idx, i+int(a.off)))
					return
				}
				kv, err := parseKeyValue(s)
				if err != nil {
					yield(KeyValue{}, within(err, "attributes", idx, j-len(s)+int(a.off)))
					return
				}
				if !yield(kv, nil) {
					return
				}
				idx++
			}
			i = j
		}
	}
}

// shortAnyValue decodes an AnyValue made of exactly one field with a
// one-byte tag and, for bytes kinds, a one-byte length.
func shortAnyValue(s []byte) (Value, bool) {
	if len(s) < 2 {
		return Value{}, false
	}
	switch t := s[0]; t {
	case 0x0a, 0x2a, 0x32, 0x3a: // string, array, kvlist, bytes
		if int(s[1]) == len(s)-2 {
			return bytesValue(bytesValueTypes[t>>3], s[2:]), true
		}
	case 0x10: // bool
		if len(s) == 2 && s[1] < 0x80 {
			return Value{n: b2u(s[1] != 0), typ: ValueBool}, true
		}
	case 0x18: // int
		if len(s) == 2 && s[1] < 0x80 {
			return Value{n: uint64(s[1]), typ: ValueInt}, true
		}
		if x, n := protowire.ConsumeVarint(s[1:]); n == len(s)-1 {
			return Value{n: x, typ: ValueInt}, true
		}
	case 0x21: // double
		if len(s) == 9 {
			return Value{n: binary.LittleEndian.Uint64(s[1:]), typ: ValueDouble}, true
		}
	}
	return Value{}, false
}

// Get returns the value of the first attribute whose key equals key. It
// does not allocate.
func (a Attributes) Get(key string) (Value, bool, error) {
	for kv, err := range a.All() {
		if err != nil {
			return Value{}, false, err
		}
		if string(kv.Key) == key {
			return kv.Value, true, nil
		}
	}
	return Value{}, false, nil
}

// Len counts the attributes.
func (a Attributes) Len() (int, error) {
	if len(a.b) == 0 {
		return 0, nil
	}
	n, err := count(a.b, a.num, "attributes")
	return n, shift(err, int(a.off))
}
