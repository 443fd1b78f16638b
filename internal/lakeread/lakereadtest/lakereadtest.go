// Package lakereadtest builds lakes for the tests of the packages that
// serve lakeread's answers.
package lakereadtest

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
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

// DuckDB runs SQL queries over the lake in dir with DuckDB
// (cmd/wirehouse/testdata/duckdb_sql.py, with python: one that has
// duckdb), each with {logs} or {traces} for the signal's files, and
// returns each query's rows, values as text.
func DuckDB(t testing.TB, python, dir string, queries map[string]string) map[string][][]string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(self), "..", "..", "..", "cmd", "wirehouse", "testdata", "duckdb_sql.py")
	in, _ := json.Marshal(queries)
	cmd := exec.Command(python, script, dir)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("duckdb_sql.py: %v\n%s", err, stderr)
	}
	var res map[string][][]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}
