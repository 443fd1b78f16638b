package lakeread_test

import (
	"cmp"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// writeFiles writes each of reqs (traces of tenant acme) as a file of
// its own, all in one hour partition, with or without the lake's indexes.
func writeFiles(t *testing.T, dir string, noIndexes bool, reqs [][]byte) {
	t.Helper()
	cfg := lake.DefaultWriterConfig()
	cfg.Dir, cfg.ManualFlush, cfg.NoIndexes = dir, true, noIndexes
	w, err := lake.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reqs {
		if _, err := w.Append(otlpwire.SignalTraces, "acme", r); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(lake.RangeName(uint64(i+1), uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// damageRegions flips a byte of the last fingerprint of every spans
// file's trace-id region under dir.
func damageRegions(t *testing.T, dir string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".parquet" {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		end := len(b) - 8 - int(binary.LittleEndian.Uint32(b[len(b)-8:]))
		b[end-13] ^= 0x10
		n++
		return os.WriteFile(p, b, 0o644)
	})
	if n == 0 {
		t.Fatal("no file damaged")
	}
}

// TestTraceIDIndex: over a partition of many files, a lookup by trace id
// opens only the files that hold the trace (their trace-id regions pass
// over the others), and its answer is the one of the same files written
// without the index, of the same files with damaged regions (read by
// their bloom filters), and what was sent (pdata).
func TestTraceIDIndex(t *testing.T) {
	const files = 12
	start := time.Date(2026, 3, 2, 10, 5, 0, 0, time.UTC)
	var reqs [][]byte
	sent := ptrace.NewTraces()
	where := map[pcommon.TraceID][]int{} // the files holding each trace
	for i := range files {
		body := synth.Traces(synth.Config{Seed: int64(100 + i), Resources: 3, ScopesPerResource: 1, TotalRecords: 300, Start: start.Add(time.Duration(i) * time.Minute)})
		if i == files-1 {
			body = reqs[0] // a trace in two files: the first and the last
		}
		reqs = append(reqs, body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		req.Traces().ResourceSpans().MoveAndAppendTo(sent.ResourceSpans())
		for _, rs := range ptraceFrom(t, body).ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if w := where[sp.TraceID()]; len(w) == 0 || w[len(w)-1] != i {
						where[sp.TraceID()] = append(w, i)
					}
				}
			}
		}
	}
	indexed, plain, damaged := t.TempDir(), t.TempDir(), t.TempDir()
	writeFiles(t, indexed, false, reqs)
	writeFiles(t, plain, true, reqs)
	writeFiles(t, damaged, false, reqs)
	damageRegions(t, damaged)
	readers := map[string]*lakeread.Reader{"indexed": newReader(t, indexed), "plain": newReader(t, plain), "damaged": newReader(t, damaged)}

	var ids []pcommon.TraceID
	for id := range where {
		ids = append(ids, id)
	}
	// Those in two files first, then the others, 60 in all.
	slices.SortFunc(ids, func(a, b pcommon.TraceID) int {
		return cmp.Or(cmp.Compare(len(where[b]), len(where[a])), slices.Compare(a[:], b[:]))
	})
	ids = ids[:min(len(ids), 60)]
	twice := 0
	for _, id := range ids {
		want := spansOf(sent, id)
		answers := map[string][]string{}
		for name, r := range readers {
			res, err := r.Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
			if err != nil {
				t.Fatalf("%s %s: %v", name, id, err)
			}
			b, err := res.Spans.AppendProto(nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
			if err != nil {
				t.Fatal(err)
			}
			answers[name] = spansOf(got, id)
			switch name {
			case "indexed":
				if res.FilesOpened != len(where[id]) || res.FilesPassed != files-len(where[id]) {
					t.Errorf("trace %s in %d files: %d opened, %d passed over", id, len(where[id]), res.FilesOpened, res.FilesPassed)
				}
			default:
				if res.FilesPassed != 0 || res.FilesOpened != files {
					t.Errorf("%s: trace %s: %d opened, %d passed over, want every file opened", name, id, res.FilesOpened, res.FilesPassed)
				}
			}
		}
		if len(where[id]) > 1 {
			twice++
		}
		// Spans sent twice (the first request again) come back twice.
		if !slices.Equal(dedupe(answers["indexed"]), dedupe(want)) || len(answers["indexed"]) != len(want) {
			t.Fatalf("trace %s: %d spans, want %d", id, len(answers["indexed"]), len(want))
		}
		for _, name := range []string{"plain", "damaged"} {
			if !slices.Equal(answers[name], answers["indexed"]) {
				t.Fatalf("trace %s: %s lake gives %d spans, the indexed one %d", id, name, len(answers[name]), len(answers["indexed"]))
			}
		}
	}
	if twice == 0 {
		t.Fatal("no trace looked up is in two files: the test misses that case")
	}
}

func ptraceFrom(t *testing.T, body []byte) ptrace.Traces {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	return req.Traces()
}

func dedupe(s []string) []string { return slices.Compact(slices.Clone(s)) }
