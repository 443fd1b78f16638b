package lakeread

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
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
		used, n, blooms := c.used, c.lru.Len(), len(c.blooms)
		c.mu.Unlock()
		// A trace by id keeps the readers of chunks without a
		// dictionary too (a lookup of the trace again reads no page).
		if dict, plain := idleReaders(t, c); dict == 0 || plain == 0 {
			t.Fatalf("after trace lookups: %d readers with a dictionary kept, %d without: want both", dict, plain)
		}
		if n == 0 || used <= 0 || used > max || blooms == 0 {
			t.Fatalf("cache of %d bytes: %d readers and bloom filters (%d filters), %d bytes", max, n, blooms, used)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		used, n = c.used, c.lru.Len()
		c.mu.Unlock()
		if n != 0 || used != 0 || len(c.idle) != 0 || len(c.blooms) != 0 || len(c.byFile) != 0 {
			t.Fatalf("after Close: %d entries, %d bytes, %d idle, %d filters, %d files", n, used, len(c.idle), len(c.blooms), len(c.byFile))
		}
	}

	// The filters kept in memory answer as parquet-go's file filters, for
	// ids present and absent (random ones), the second time from memory.
	c := newChunkCache(DefaultChunkCacheBytes, 0)
	files, err := lake.DataFiles(context.Background(), bucket.NewLocal(dir), "traces/tenant=acme/")
	if err != nil || len(files) == 0 {
		t.Fatalf("%d files: %v", len(files), err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	checked, passed := 0, 0
	for _, f := range files {
		fh, err := os.Open(filepath.Join(dir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		pf, err := parquet.OpenFile(fh, f.Size)
		if err != nil {
			t.Fatal(err)
		}
		lc, _ := pf.Schema().Lookup("trace_id")
		for _, rg := range pf.RowGroups() {
			cc := rg.ColumnChunks()[lc.ColumnIndex]
			if cc.BloomFilter() == nil {
				t.Fatalf("%s: no trace_id bloom filter", f.Name)
			}
			probe := append([][16]byte(nil), ids...)
			for range 200 {
				var id [16]byte
				for i := range id {
					id[i] = byte(rng.Uint32())
				}
				probe = append(probe, id)
			}
			for round := range 2 {
				for _, id := range probe {
					h := []byte(hex.EncodeToString(id[:]))
					want, err := cc.BloomFilter().Check(parquet.ByteArrayValue(h))
					if err != nil {
						t.Fatal(err)
					}
					got, err := c.mayHoldBytes(cc, h)
					if err != nil || got != want {
						t.Fatalf("%s round %d id %x: kept filter says %v (%v), the file's %v", f.Name, round, id, got, err, want)
					}
					checked++
					if got {
						passed++
					}
				}
			}
		}
	}
	if passed == 0 || passed == checked {
		t.Fatalf("%d of %d ids passed the filters: the test compares nothing", passed, checked)
	}
}

// idleReaders counts the readers c keeps of chunks with a dictionary and
// without one.
func idleReaders(t *testing.T, c *chunkCache) (dict, plain int) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.idle {
		d, err := e.Value.(*chunkReader).pages.ReadDictionary()
		switch {
		case err != nil:
			t.Fatal(err)
		case d == nil:
			plain++
		default:
			dict++
		}
	}
	return dict, plain
}

// TestChunkCacheLogsDictionaries: the log records a query reads a few of
// (a rare token's) are read through the cache, which keeps the readers of
// their chunks with a dictionary alone: a logs page of a chunk without
// one (a body's, up to 64 KiB) would crowd the dictionaries out.
func TestChunkCacheLogsDictionaries(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	body := synth.Logs(synth.Config{Seed: 5, Resources: 4, ScopesPerResource: 1, TotalRecords: 3000, Start: start})
	cfg := lake.DefaultWriterConfig()
	cfg.Dir = dir
	w, err := lake.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(otlpwire.SignalLogs, "acme", body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rc := DefaultConfig()
	rc.Bucket = bucket.NewLocal(dir)
	r, err := New(rc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A token of one line, found by reading them all (no point read:
	// every record), then the records that hold it (a point read).
	var rare string
	key := regexp.MustCompile(`session:[0-9a-f]{8}`)
	err = r.Logs(context.Background(), "acme", LogQuery{Start: start.Add(-time.Hour), End: start.Add(time.Hour)}, func(rec *LogRecord) bool {
		rare = key.FindString(string(rec.Line))
		return rare == ""
	})
	if err != nil || rare == "" {
		t.Fatalf("no session key in the lines (%v)", err)
	}
	n := 0
	err = r.Logs(context.Background(), "acme", LogQuery{Start: start.Add(-time.Hour), End: start.Add(time.Hour), Contains: [][]byte{[]byte(rare)}, Newest: true},
		func(*LogRecord) bool { n++; return true })
	if err != nil || n == 0 || n > pointRows {
		t.Fatalf("%d records hold %s (%v), want a few", n, rare, err)
	}
	if dict, plain := idleReaders(t, r.chunks); dict == 0 || plain != 0 {
		t.Fatalf("after a logs point read: %d readers with a dictionary kept, %d without: want some, none", dict, plain)
	}
}
