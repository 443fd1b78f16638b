package lakeread_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestListingsSeeChanges: a query over an hour whose listing the reader
// keeps sees a file added to the hour; and a file added within the
// racy window of the listing's directory time is seen even if the file
// system's clock left that time as it was (forced back here).
func TestListingsSeeChanges(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	add := func(seed int64) {
		writeLogsLake(t, dir, synth.Logs(synth.Config{Seed: seed, Resources: 1, ScopesPerResource: 1, TotalRecords: 50, Start: base.Add(10 * time.Minute)}))
	}
	hourDir := filepath.Join(dir, "logs", "tenant=acme", "date=2026-05-01", "hour=10")
	r := newReader(t, dir)
	count := func() int {
		n := 0
		err := r.Logs(context.Background(), "acme", lakeread.LogQuery{Start: base, End: base.Add(time.Hour)}, func(*lakeread.LogRecord) bool { n++; return true })
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	add(1)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(hourDir, old, old); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 50 {
		t.Fatalf("%d records, want 50", n)
	}
	add(2) // the directory's time changes: listed again
	if n := count(); n != 100 {
		t.Fatalf("after a second file: %d records, want 100", n)
	}
	// A third file in the same tick of a coarse clock: the directory's
	// time stays what it was when the second file's listing was made.
	fi, err := os.Stat(hourDir)
	if err != nil {
		t.Fatal(err)
	}
	add(3)
	if err := os.Chtimes(hourDir, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 150 {
		t.Fatalf("after a third file in the listing's tick: %d records, want 150", n)
	}
}
