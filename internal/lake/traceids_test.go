package lake

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// wantFingerprints is the trace-id region docs/format/lake-parquet.md
// describes for file f, worked out from its rows with another XXH64
// implementation: the high 32 bits of XXH64 of each non-null trace_id
// value, distinct and ascending.
func wantFingerprints(t *testing.T, f *lakeFile) []uint32 {
	t.Helper()
	var out []uint32
	for _, row := range f.rows {
		v, ok := f.value(row, "trace_id")
		if !ok || v.IsNull() {
			continue
		}
		out = append(out, uint32(xxhash.Sum64(v.ByteArray())>>32))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkRegion reads file f's trace-id region and holds it to the rows
// and to the footer's key.
func checkRegion(t *testing.T, f *lakeFile) {
	t.Helper()
	data, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	got, err := ReadTraceIDs(bytes.NewReader(data), int64(len(data)), &read)
	if err != nil {
		t.Fatalf("%s: %v", f.path, err)
	}
	want := wantFingerprints(t, f)
	if len(want) == 0 {
		t.Fatalf("%s: no trace id: the test compares nothing", f.path)
	}
	if !slices.Equal(got.fps, want) {
		t.Fatalf("%s: %d fingerprints, want %d", f.path, len(got.fps), len(want))
	}
	if v, _ := f.file.Lookup(TraceIDsRegionKey); v != strconv.FormatInt(got.RegionLen, 10) || got.RegionLen != int64(4*len(want)+12) {
		t.Fatalf("%s: %s = %q, region of %d bytes", f.path, TraceIDsRegionKey, v, got.RegionLen)
	}
	if read >= int64(len(data)) && len(data) > 64<<10 {
		t.Errorf("%s: read %d bytes of %d to find the region", f.path, read, len(data))
	}
}

// TestTraceIDsRegion: every spans file the writer writes (schema
// version 2) and every merge compaction writes, of version-2 files and of
// version-1 files that have none, holds the fingerprints of exactly its
// trace ids as the format page defines them; logs files and files written
// without indexes have no region; a damaged region is reported malformed,
// never read as another set.
func TestTraceIDsRegion(t *testing.T) {
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, version := range []int{1, 2} {
		root := t.TempDir()
		cfg := testConfig(root)
		cfg.ManualFlush, cfg.SchemaVersion = true, version
		w := newTestWriter(t, cfg)
		for i := range 4 {
			start := hour.Add(time.Duration(5+10*i) * time.Minute)
			if _, err := w.Append(otlpwire.SignalTraces, "acme", synth.Traces(synth.Config{Seed: int64(i), Start: start, Resources: 3, ScopesPerResource: 2, TotalRecords: 400})); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Append(otlpwire.SignalLogs, "acme", synth.SeedLogs(synth.Config{Seed: int64(i), Start: start, Resources: 2, ScopesPerResource: 1, TotalRecords: 50})); err != nil {
				t.Fatal(err)
			}
			if err := w.FlushAs(RangeName(uint64(10*i+1), uint64(10*i+5))); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		tracesDir := filepath.Join(root, "traces", "tenant=acme", "date=2030-05-01", "hour=10")
		logsDir := filepath.Join(root, "logs", "tenant=acme", "date=2030-05-01", "hour=10")
		written := readLake(t, tracesDir)
		if len(written) != 4 {
			t.Fatalf("version %d: %d spans files, want 4", version, len(written))
		}
		for _, f := range written {
			if version == 2 {
				checkRegion(t, f)
				continue
			}
			data, _ := os.ReadFile(f.path)
			var read int64
			if _, err := ReadTraceIDs(bytes.NewReader(data), int64(len(data)), &read); !errors.Is(err, ErrNoTraceIDsRegion) {
				t.Fatalf("version 1 %s: %v, want ErrNoTraceIDsRegion", f.path, err)
			}
		}
		for _, f := range readLake(t, logsDir) {
			data, _ := os.ReadFile(f.path)
			var read int64
			if _, err := ReadTraceIDs(bytes.NewReader(data), int64(len(data)), &read); !errors.Is(err, ErrNoTraceIDsRegion) {
				t.Fatalf("logs file %s: %v, want ErrNoTraceIDsRegion", f.path, err)
			}
		}
		c, err := Compact(context.Background(), root, 100, hour.Add(2*time.Hour), CompactOptions{})
		if err != nil || c.Merges != 2 {
			t.Fatalf("version %d: Compact = %+v, %v", version, c, err)
		}
		merged := readLake(t, tracesDir)
		if len(merged) != 1 || !strings.HasSuffix(merged[0].path, "-c.parquet") {
			t.Fatalf("version %d: after compaction %d files", version, len(merged))
		}
		checkRegion(t, merged[0])
	}
}

// TestTraceIDsRegionDamaged: a region whose bytes changed, whose
// fingerprints do not ascend or whose count runs past the file is
// malformed; a file without the trailer's magic has none; the writer's
// NoIndexes writes none.
func TestTraceIDsRegionDamaged(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.SchemaVersion = 2
	w := newTestWriter(t, cfg)
	if _, err := w.Append(otlpwire.SignalTraces, "acme", synth.Traces(synth.Config{Seed: 3, Resources: 2, ScopesPerResource: 1, TotalRecords: 200})); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := readLake(t, filepath.Join(root, "traces"))
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	good, err := os.ReadFile(files[0].path)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(len(good)) - 8 - int64(binary.LittleEndian.Uint32(good[len(good)-8:])) // the footer's start
	read := func(data []byte) error {
		var n int64
		_, err := ReadTraceIDs(bytes.NewReader(data), int64(len(data)), &n)
		return err
	}
	if err := read(good); err != nil {
		t.Fatal(err)
	}
	damage := map[string]func(b []byte){
		"a fingerprint's byte": func(b []byte) { b[end-13] ^= 0x40 },
		"the checksum":         func(b []byte) { b[end-8] ^= 1 },
		"a count past the file": func(b []byte) {
			binary.LittleEndian.PutUint32(b[end-12:], 1<<30)
		},
		"fingerprints out of order": func(b []byte) {
			count := int64(binary.LittleEndian.Uint32(b[end-12:]))
			body := b[end-12-4*count : end-12]
			copy(body[:4], body[len(body)-4:])
			binary.LittleEndian.PutUint32(b[end-8:], crc32.Checksum(body, castagnoli))
		},
	}
	for name, fn := range damage {
		b := slices.Clone(good)
		fn(b)
		if err := read(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	b := slices.Clone(good)
	b[end-1] = 'X'
	if err := read(b); !errors.Is(err, ErrNoTraceIDsRegion) {
		t.Errorf("magic changed: %v, want ErrNoTraceIDsRegion", err)
	}

	root = t.TempDir()
	cfg = testConfig(root)
	cfg.SchemaVersion, cfg.NoIndexes = 2, true
	w = newTestWriter(t, cfg)
	if _, err := w.Append(otlpwire.SignalTraces, "acme", synth.Traces(synth.Config{Seed: 3, Resources: 2, ScopesPerResource: 1, TotalRecords: 200})); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files = readLake(t, filepath.Join(root, "traces"))
	data, _ := os.ReadFile(files[0].path)
	if err := read(data); !errors.Is(err, ErrNoTraceIDsRegion) {
		t.Errorf("NoIndexes: %v, want ErrNoTraceIDsRegion", err)
	}
	if _, ok := files[0].file.Lookup(TraceIDsRegionKey); ok {
		t.Errorf("NoIndexes: the footer names a trace-id region")
	}
}

// FuzzReadTraceIDs: no bytes make ReadTraceIDs panic, and what it
// accepts is a region as the format page says: ascending fingerprints,
// 4 bytes each and a 12-byte trailer. Seeded with a real spans file's end.
func FuzzReadTraceIDs(f *testing.F) {
	region := MarshalTraceIDsRegion([]uint32{9, 3, 3, 1 << 31})
	footer := []byte("footer bytes")
	file := append(append(append([]byte("PAR1"), region...), footer...), 0, 0, 0, 0, 'P', 'A', 'R', '1')
	binary.LittleEndian.PutUint32(file[len(file)-8:], uint32(len(footer)))
	f.Add(file)
	f.Add(append([]byte("PAR1"), MarshalTraceIDsRegion(nil)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		var read int64
		got, err := ReadTraceIDs(bytes.NewReader(data), int64(len(data)), &read)
		if err != nil {
			if !errors.Is(err, ErrNoTraceIDsRegion) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("error of neither kind: %v", err)
			}
			return
		}
		if got.RegionLen != int64(4*got.Len()+12) || !slices.IsSorted(got.fps) || len(slices.Compact(slices.Clone(got.fps))) != got.Len() {
			t.Fatalf("accepted a region of %d bytes holding %v", got.RegionLen, got.fps)
		}
	})
}
