package lakeread_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestConcurrentQueriesChargedTheirOwnReads: twenty queries at once, each
// within MaxBytes alone, all answer: a query's byte budget counts its own
// reads, not those of the others reading the same files (each has a copy
// of a shared file to itself).
func TestConcurrentQueriesChargedTheirOwnReads(t *testing.T) {
	dir := t.TempDir()
	body := synth.Traces(synth.Config{Seed: 4, Resources: 3, ScopesPerResource: 2, TotalRecords: 3000})
	writeLake(t, dir, body)
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	id := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	// Alone, on a reader with no file open yet: footers and pages.
	alone, err := newReader(t, dir).Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
	if err != nil || alone.Spans.Len() == 0 || alone.BytesRead == 0 {
		t.Fatalf("alone: %+v, %v", alone, err)
	}
	// A query opens no file larger than what its budget has left (so it
	// never reads past it), and reads a file's trace-id index before it
	// opens the file: the budget is what the query read alone and the
	// largest file.
	var largest int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				largest = max(largest, info.Size())
			}
		}
		return nil
	})
	budget := alone.BytesRead + largest
	if budget >= 20*alone.BytesRead {
		t.Fatalf("budget %d holds the reads of all twenty queries (%d each): the test would show nothing", budget, alone.BytesRead)
	}
	r := newReader(t, dir, func(c *lakeread.Config) { c.MaxBytes = budget })
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			res, err := r.Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
			if err == nil && res.Spans.Len() != alone.Spans.Len() {
				err = errors.New("another number of spans than alone")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a query within its budget alone failed among others: %v (alone it read %d bytes, budget %d)", err, alone.BytesRead, budget)
		}
	}
}

// TestLogsChargeTheirTicket: a logs query charges the records and
// candidates it holds to its ticket while it holds them, gives them back
// when it ends, and stops with the ticket's error past its memory.
func TestLogsChargeTheirTicket(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	body := synth.Logs(synth.Config{Seed: 7, Resources: 3, ScopesPerResource: 2, TotalRecords: 5000, Start: base})
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
	want := plogotlp.NewExportRequest()
	if err := want.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, dir)
	q := lakeread.LogQuery{Start: base.Add(-time.Hour), End: base.Add(2 * time.Hour), Newest: true}
	gc := querybudget.DefaultConfig()
	gc.Memory = 64 << 20
	g, err := querybudget.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := g.Admit(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = r.Logs(querybudget.NewContext(context.Background(), tk), "acme", q, func(*lakeread.LogRecord) bool { n++; return true })
	if err != nil || n != want.Logs().LogRecordCount() {
		t.Fatalf("got %d records, %v; want %d", n, err, want.Logs().LogRecordCount())
	}
	now, peak := tk.Held()
	if now != 0 || peak < 1000*int64(40) {
		t.Fatalf("held %d after the query, peak %d: want 0, and at least a batch of records at the peak", now, peak)
	}
	tk.Done()

	// A ticket that may hold 16 KiB: the query stops with its LimitError.
	gc.MaxQueryMemory, gc.Memory = 16<<10, 1<<20
	small, err := querybudget.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ = small.Admit(context.Background(), "acme")
	defer tk.Done()
	err = r.Logs(querybudget.NewContext(context.Background(), tk), "acme", q, func(*lakeread.LogRecord) bool { return true })
	var le *querybudget.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("over the ticket's memory: %v, want a *querybudget.LimitError", err)
	}
}
