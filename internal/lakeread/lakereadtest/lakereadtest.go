// Package lakereadtest builds lakes for the tests of the packages that
// serve lakeread's answers.
package lakereadtest

import (
	"testing"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Reader writes each tenant's OTLP traces requests to a new lake (schema
// version 2, in a test directory) and returns a reader of it, with cfg's
// other fields applied by set, closed when the test ends.
func Reader(t testing.TB, tenants map[string][]byte, set ...func(*lakeread.Config)) *lakeread.Reader {
	t.Helper()
	return ReaderAt(t, t.TempDir(), tenants, set...)
}

// ReaderAt is Reader with the lake in dir, for a test that reads its
// files with another engine too.
func ReaderAt(t testing.TB, dir string, tenants map[string][]byte, set ...func(*lakeread.Config)) *lakeread.Reader {
	t.Helper()
	wcfg := lake.DefaultWriterConfig()
	wcfg.Dir = dir
	w, err := lake.NewWriter(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	for tn, b := range tenants {
		if _, err := w.Append(otlpwire.SignalTraces, tn, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rcfg := lakeread.DefaultConfig()
	rcfg.Bucket = bucket.NewLocal(dir)
	for _, f := range set {
		f(&rcfg)
	}
	r, err := lakeread.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}
