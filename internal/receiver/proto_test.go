package receiver

import "google.golang.org/protobuf/encoding/protowire"

func consumeTag(b []byte) (protowire.Number, protowire.Type, int) { return protowire.ConsumeTag(b) }

// consumeValue returns a length-delimited field's contents (nil for other
// types) and the bytes the value takes.
func consumeValue(num protowire.Number, typ protowire.Type, b []byte) ([]byte, int) {
	if typ == protowire.BytesType {
		v, n := protowire.ConsumeBytes(b)
		return v, n
	}
	return nil, protowire.ConsumeFieldValue(num, typ, b)
}
