package otlpwire

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// fieldSpec declares one field of a message for the single-pass readers:
// its name for errors and its wire type. A packed repeated scalar also
// accepts its element's wire type (elem).
type fieldSpec struct {
	name string
	typ  protowire.Type
	elem protowire.Type // for packed fields; 0 (varint) is distinguished by packed
	pack bool
}

// schema is indexed by field number; unnamed entries are unknown fields.
type schema []fieldSpec

// bad reports whether a field read by next needs the slow check: next
// failed, or a declared field arrived with another wire type.
func (sc schema) bad(n protowire.Number, typ protowire.Type, err error) bool {
	return err != nil || (int(n) < len(sc) && typ != sc[n].typ && sc[n].name != "")
}

// fail turns the result of next for the field at offset i into the error to
// return, naming the field; nil when the field is acceptable after all (an
// unpacked occurrence of a packed field).
func (sc schema) fail(n protowire.Number, typ protowire.Type, i int, err error) error {
	var spec fieldSpec
	if int(n) < len(sc) {
		spec = sc[n]
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
