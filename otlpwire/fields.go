package otlpwire

import (
	"encoding/binary"

	"google.golang.org/protobuf/encoding/protowire"
)

// fieldSpec declares one field of a message for the single-pass readers:
// its name for errors and its wire type. A packed repeated scalar also
// accepts its element's wire type (elem).
type fieldSpec struct {
	name string
	typ  protowire.Type
	elem protowire.Type
	pack bool
}

// schema describes the fields of one message, indexed by field number.
// types mirrors the wire types for the hot check (0xff: not declared).
type schema struct {
	fields []fieldSpec
	types  [32]byte
}

func newSchema(fields map[protowire.Number]fieldSpec) *schema {
	sc := &schema{}
	for i := range sc.types {
		sc.types[i] = 0xff
	}
	top := protowire.Number(0)
	for n := range fields {
		top = max(top, n)
	}
	sc.fields = make([]fieldSpec, top+1)
	for n, f := range fields {
		sc.fields[n] = f
		sc.types[n] = byte(f.typ)
	}
	return sc
}

// bad reports whether a declared field arrived with another wire type.
func (sc *schema) bad(t uint64) bool {
	n := t >> 3
	return n < 32 && sc.types[n] != byte(t&7) && sc.types[n] != 0xff
}

// failAt is fail for a field read by field: j < 0 means the field at b[i:]
// is malformed, and next says how.
func (sc *schema) failAt(b []byte, i int, t uint64, j int) error {
	var err error
	if j < 0 {
		_, _, _, _, _, err = next(b, i)
	}
	return sc.fail(protowire.Number(t>>3), protowire.Type(t&7), i, err)
}

// fail turns the result of next for the field at offset i into the error to
// return, naming the field; nil when the field is acceptable after all (an
// unpacked occurrence of a packed field).
func (sc *schema) fail(n protowire.Number, typ protowire.Type, i int, err error) error {
	var spec fieldSpec
	if int(n) < len(sc.fields) {
		spec = sc.fields[n]
	}
	if spec.name == "" {
		return err
	}
	if err != nil {
		return within(err, spec.name, -1, 0)
	}
	if spec.pack && typ == spec.elem {
		return nil
	}
	return newErr(ErrWireType, i, "for field "+spec.name)
}

// skipRun passes over the fields with the one-byte tag t that follow at
// b[j:], as long as each has a one-byte length: the rest of a run of
// repeated fields such as attributes, without a call per field.
func skipRun(b []byte, j int, t byte) int {
	for j+1 < len(b) && b[j] == t {
		l := int(b[j+1])
		if l >= 0x80 || l > len(b)-j-2 {
			break
		}
		j += 2 + l
	}
	return j
}

// checkID reports an id that is neither empty nor size bytes long.
func checkID(v []byte, size, off int, name string) error {
	if len(v) != 0 && len(v) != size {
		return newErr(ErrIDLength, off, "for field "+name)
	}
	return nil
}

func fixed(name string) fieldSpec    { return fieldSpec{name: name, typ: wireFixed64} }
func fixed32f(name string) fieldSpec { return fieldSpec{name: name, typ: wireFixed32} }
func varintf(name string) fieldSpec  { return fieldSpec{name: name, typ: wireVarint} }
func bytesf(name string) fieldSpec   { return fieldSpec{name: name, typ: wireBytes} }
func packedf(name string, elem protowire.Type) fieldSpec {
	return fieldSpec{name: name, typ: wireBytes, elem: elem, pack: true}
}

// quickBytes reads a length-delimited field with a one-byte tag and a
// one-byte length at b[i:], the commonest field of every record, inline at
// the call site. ok is false for anything else, which field reads.
func quickBytes(b []byte, i int) (t uint64, s []byte, j int, ok bool) {
	if i+1 < len(b) {
		if x, l := b[i], int(b[i+1]); x&7 == 2 && x >= 8 && x < 0x80 && l < 0x80 && l <= len(b)-i-2 {
			j = i + 2 + l
			return uint64(x), b[i+2 : j : j], j, true
		}
	}
	return 0, nil, 0, false
}

// short reads the value of a length-delimited field whose one-byte tag is
// at b[i] and whose length is one byte; the caller has checked that
// i+1 < len(b). ok is false for a longer or truncated value.
func short(b []byte, i int) (s []byte, j int, ok bool) {
	if l := int(b[i+1]); l < 0x80 && l <= len(b)-i-2 {
		j = i + 2 + l
		return b[i+2 : j : j], j, true
	}
	return nil, 0, false
}

// le64 reads the fixed64 value of the field whose one-byte tag is at b[i];
// ok is false when fewer than eight bytes follow.
func le64(b []byte, i int) (uint64, bool) {
	if len(b)-i >= 9 {
		return binary.LittleEndian.Uint64(b[i+1:]), true
	}
	return 0, false
}
