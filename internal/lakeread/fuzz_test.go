package lakeread_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// FuzzTraceFile: a damaged lake file (any bytes in place of a file the
// writer wrote) makes Trace fail or find nothing, never panic or hang, and
// whatever it returns encodes.
func FuzzTraceFile(f *testing.F) {
	body := synth.Traces(synth.Config{Seed: 3, Resources: 1, ScopesPerResource: 1, TotalRecords: 20})
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		f.Fatal(err)
	}
	id := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	seedDir := f.TempDir()
	writeLake(f, seedDir, body)
	paths, _ := filepath.Glob(filepath.Join(seedDir, "traces", "*", "*", "*", "*.parquet"))
	if len(paths) != 1 {
		f.Fatalf("%d seed files", len(paths))
	}
	seed, err := os.ReadFile(paths[0])
	if err != nil {
		f.Fatal(err)
	}
	rel, _ := filepath.Rel(seedDir, paths[0])
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := newReader(t, dir).Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
		if err == nil {
			if _, err := res.Spans.AppendProto(nil); err != nil {
				t.Logf("encode: %v", err) // a damaged value is an error, not a panic
			}
		}
	})
}
