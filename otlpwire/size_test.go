package otlpwire

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestViewsFitRegisters holds the views a walk passes by value to four
// fields and four machine words. The compiler keeps such a struct in
// registers; a larger one is copied through memory at every call taking
// it, which cost a validating metrics walk 8 % (a 16-byte load of a value
// just stored 8 bytes at a time stalls on store forwarding).
func TestViewsFitRegisters(t *testing.T) {
	const words = 4 * unsafe.Sizeof(uintptr(0))
	for _, v := range []any{Attributes{}, List[NumberDataPoint]{}, Value{}, Fixed64s{}} {
		typ := reflect.TypeOf(v)
		if typ.Size() > words {
			t.Errorf("%s is %d bytes, more than four words (%d)", typ, typ.Size(), words)
		}
		if typ.NumField() > 4 {
			t.Errorf("%s has %d fields, more than four", typ, typ.NumField())
		}
	}
}
