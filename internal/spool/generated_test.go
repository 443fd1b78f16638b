package spool

import (
	"bytes"
	"os"
	"testing"

	"github.com/wirehouse/wirehouse/internal/xdrgen"
)

// TestGeneratedUpToDate regenerates record_xdr.go in memory and fails if
// the checked-in file differs: run go generate ./internal/spool to fix.
func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("record.x")
	if err != nil {
		t.Fatal(err)
	}
	want, err := xdrgen.Compile("spool", []xdrgen.Source{{Name: "record.x", Text: string(src)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("record_xdr.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("record_xdr.go is stale; run go generate ./internal/spool")
	}
}
