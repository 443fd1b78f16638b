package watch

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		if err := os.WriteFile(p, []byte("one"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w := New(time.Minute, a, b)
	if err := w.Mark(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if w.Changed(now) {
		t.Error("changed right after Mark")
	}
	// A new file renamed over b, with another size.
	if err := os.WriteFile(b+".new", []byte("three"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(b+".new", b); err != nil {
		t.Fatal(err)
	}
	if w.Changed(now.Add(time.Second)) {
		t.Error("looked again within the interval")
	}
	if !w.Changed(now.Add(2 * time.Minute)) {
		t.Error("rename over b not seen")
	}
	if err := w.Mark(); err != nil {
		t.Fatal(err)
	}
	// Same size, new modification time.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(a, later, later); err != nil {
		t.Fatal(err)
	}
	if !w.Changed(now.Add(4 * time.Minute)) {
		t.Error("touched a not seen")
	}
	// A file that disappeared counts as changed, and Mark fails on it.
	w.Mark()
	os.Remove(a)
	if !w.Changed(now.Add(6 * time.Minute)) {
		t.Error("removed a not seen")
	}
	if err := w.Mark(); err == nil {
		t.Error("Mark of a missing file succeeded")
	}
}

// TestSameSizeAndTime: a file renamed over another of the same size and
// modification time (cp -p, install -p) is a change.
func TestSameSizeAndTime(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	stamp := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, p := range []string{a, a + ".new"} {
		if err := os.WriteFile(p, []byte("same"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, stamp, stamp); err != nil {
			t.Fatal(err)
		}
	}
	w := New(0, a)
	if err := w.Mark(); err != nil {
		t.Fatal(err)
	}
	if w.Changed(time.Now()) {
		t.Fatal("changed without a change")
	}
	if err := os.Rename(a+".new", a); err != nil {
		t.Fatal(err)
	}
	if !w.Changed(time.Now()) {
		t.Error("a file renamed over with the same size and time not seen")
	}
}
