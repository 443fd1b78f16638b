package otlpwire

import (
	"testing"
	"unsafe"
)

// TestViewsFitRegisters holds the views a walk passes by value to four
// machine words. The compiler keeps a struct of at most four words in
// registers; a larger one is copied through memory at every call taking
// it, which cost a validating metrics walk 8 % (a 16-byte load of a value
// just stored 8 bytes at a time stalls on store forwarding).
func TestViewsFitRegisters(t *testing.T) {
	const words = 4 * unsafe.Sizeof(uintptr(0))
	for name, size := range map[string]uintptr{
		"Attributes":            unsafe.Sizeof(Attributes{}),
		"List[NumberDataPoint]": unsafe.Sizeof(List[NumberDataPoint]{}),
		"Value":                 unsafe.Sizeof(Value{}),
	} {
		if size > words {
			t.Errorf("%s is %d bytes, more than four words (%d)", name, size, words)
		}
	}
}
