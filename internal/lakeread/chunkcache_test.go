package lakeread

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestChunkCacheBounded: the chunk cache keeps readers between lookups
// within its bound, and the file cache closing a file drops its readers.
func TestChunkCacheBounded(t *testing.T) {
	dir := t.TempDir()
	cfg := lake.DefaultWriterConfig()
	cfg.Dir = dir
	w, err := lake.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ids [][16]byte
	for i := range 3 {
		body := synth.Traces(synth.Config{Seed: int64(i), Resources: 4, ScopesPerResource: 1, TotalRecords: 4000})
		if _, err := w.Append(otlpwire.SignalTraces, "acme", body); err != nil {
			t.Fatal(err)
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		for k := range 4 {
			ids = append(ids, req.Traces().ResourceSpans().At(k).ScopeSpans().At(0).Spans().At(k).TraceID())
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int64{DefaultChunkCacheBytes, 200 << 10} {
		rc := DefaultConfig()
		rc.Bucket, rc.ChunkCacheBytes = bucket.NewLocal(dir), max
		r, err := New(rc)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			for _, id := range ids {
				res, err := r.Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
				if err != nil || res.Spans.Len() == 0 {
					t.Fatalf("trace %x: %d spans, %v", id, res.Spans.Len(), err)
				}
			}
		}
		c := r.chunks
		c.mu.Lock()
		used, n := c.used, c.lru.Len()
		c.mu.Unlock()
		if n == 0 || used <= 0 || used > max {
			t.Fatalf("cache of %d bytes: %d readers, %d bytes", max, n, used)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		used, n = c.used, c.lru.Len()
		c.mu.Unlock()
		if n != 0 || used != 0 || len(c.idle) != 0 || len(c.byFile) != 0 {
			t.Fatalf("after Close: %d readers, %d bytes, %d idle, %d files", n, used, len(c.idle), len(c.byFile))
		}
	}
}
