package lake

import (
	"reflect"
	"testing"
	"unsafe"
)

// TestStagedFitsRegisters holds staged, which Column.stage returns for
// every attribute, to four fields and four words: the compiler keeps such
// a struct in registers, and copies a larger one through memory, where
// the reload of a value just stored stalls (BenchmarkLogsToRows 4–5 %
// slower with kind and vt as two fields of their own, five in all).
func TestStagedFitsRegisters(t *testing.T) {
	if size, words := unsafe.Sizeof(staged{}), 4*unsafe.Sizeof(uintptr(0)); size > words {
		t.Errorf("staged is %d bytes, more than four words (%d)", size, words)
	}
	if n := reflect.TypeFor[staged]().NumField(); n > 4 {
		t.Errorf("staged has %d fields, more than four", n)
	}
}
