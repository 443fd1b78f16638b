package metricstore

import (
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
)

// FuzzScanSegment reads arbitrary bytes as a write-ahead log segment. The
// scan must not panic; when it finds no fault, Prometheus' own reader must
// read the segment, with the tears it found zeroed, to the end without an
// error, and a second scan must find no tear.
func FuzzScanSegment(f *testing.F) {
	dir := f.TempDir()
	w, err := wlog.NewSize(nil, nil, dir, 4*walPageSize, compression.None)
	if err != nil {
		f.Fatal(err)
	}
	for i := range 6 {
		rec := make([]byte, 5000*i+3) // small, then across pages
		for j := range rec {
			rec[j] = byte(i + j)
		}
		if err := w.Log(rec); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	seg, err := os.ReadFile(wlog.SegmentName(dir, 0))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seg)
	f.Add(seg[:len(seg)/2])
	f.Add(seg[:walPageSize+100])
	f.Add([]byte{recFirst, 0, 1, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := filepath.Join(t.TempDir(), "wal")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(d, "00000000")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		tears, fault, err := scanSegment(path)
		if err != nil {
			t.Fatal(err)
		}
		if fault != nil {
			return
		}
		p := &mendPlan{tears: tears}
		if err := p.apply(slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		if _, err := readWAL(t, d); err != nil {
			t.Fatalf("scan found no fault (%d tears), wlog's reader: %v (input %s)", len(tears), err, strconv.Quote(string(b[:min(len(b), 64)])))
		}
		again, fault, err := scanSegment(path)
		if err != nil || fault != nil || len(again) != 0 {
			t.Fatalf("second scan: %d tears, fault %v, err %v", len(again), fault, err)
		}
	})
}
