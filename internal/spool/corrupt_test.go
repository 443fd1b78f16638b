package spool

import (
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Five test records of 144 bytes each (44-byte header, 100-byte payload)
// make the first segment; the last record starts at offset 576.
const (
	recLen  = 144
	lastOff = 4 * recLen
)

func truncateFile(t testing.TB, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func patchFile(t testing.TB, path string, off int64, b ...byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t testing.TB, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// encodeRecord returns a valid record with the given sequence number.
func encodeRecord(t testing.TB, seq uint64, tenant string, payload []byte) []byte {
	h := RecordHeader{Type: RECORD_OTLP_PROTOBUF, Seq: seq, Signal: SIGNAL_LOGS, Tenant: tenant, PayloadLength: uint32(len(payload))}
	b, err := appendHeader(nil, &h, crc32.Checksum(payload, castagnoli))
	if err != nil {
		t.Fatal(err)
	}
	return append(b, payload...)
}

func TestTornTail(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, path string)
		off    int64 // where the segment is cut
		err    error
		kept   int // records left
	}{
		{"mid header", func(t *testing.T, p string) { truncateFile(t, p, lastOff+20) }, lastOff, ErrTorn, 4},
		{"one header byte", func(t *testing.T, p string) { truncateFile(t, p, lastOff+1) }, lastOff, ErrTorn, 4},
		{"mid payload", func(t *testing.T, p string) { truncateFile(t, p, lastOff+50) }, lastOff, ErrTorn, 4},
		{"payload byte missing", func(t *testing.T, p string) { truncateFile(t, p, 5*recLen-1) }, lastOff, ErrTorn, 4},
		{"garbage after", func(t *testing.T, p string) { appendFile(t, p, []byte("garbage!")) }, 5 * recLen, ErrHeader, 5},
		{"zeros after", func(t *testing.T, p string) { appendFile(t, p, make([]byte, 4096)) }, 5 * recLen, ErrHeader, 5},
		{"payload bit flip", func(t *testing.T, p string) { patchFile(t, p, 2*recLen+44+7, 0xff) }, 2 * recLen, ErrChecksum, 2},
		{"crc bit flip", func(t *testing.T, p string) { patchFile(t, p, recLen+40, 0) }, recLen, ErrChecksum, 1},
		{"tenant bit flip", func(t *testing.T, p string) { patchFile(t, p, recLen+20, 'T') }, recLen, ErrChecksum, 1},
		{"bad signal", func(t *testing.T, p string) { patchFile(t, p, 3*recLen+15, 9) }, 3 * recLen, ErrHeader, 3},
		{"bad record type", func(t *testing.T, p string) { patchFile(t, p, 3*recLen+3, 2) }, 3 * recLen, ErrHeader, 3},
		{"tenant too long", func(t *testing.T, p string) { patchFile(t, p, 3*recLen+19, 200) }, 3 * recLen, ErrHeader, 3},
		{"huge payload length", func(t *testing.T, p string) { patchFile(t, p, 3*recLen+36, 0x7f, 0xff, 0xff, 0xff) }, 3 * recLen, ErrHeader, 3},
		{"payload past the end", func(t *testing.T, p string) { patchFile(t, p, 3*recLen+36, 0, 0, 1, 0) }, 3 * recLen, ErrTorn, 3},
		{"sequence skips", func(t *testing.T, p string) { appendFile(t, p, encodeRecord(t, 9, "x", []byte("valid crc"))) }, 5 * recLen, ErrHeader, 5},
		{"sequence repeats", func(t *testing.T, p string) { appendFile(t, p, encodeRecord(t, 5, "x", nil)) }, 5 * recLen, ErrHeader, 5},
		{"all garbage", func(t *testing.T, p string) { patchFile(t, p, 0, 0xde, 0xad) }, 0, ErrHeader, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir)
			appendN(t, s, 1, 6)
			s.Close()
			path := filepath.Join(dir, segName(1))
			before := fileSize(t, path)
			c.damage(t, path)
			damaged := fileSize(t, path)

			s = open(t, dir)
			reps := s.Repairs()
			if len(reps) != 1 {
				t.Fatalf("repairs %v", reps)
			}
			r := reps[0]
			if r.Segment != segName(1) || r.Offset != c.off || r.Dropped != damaged-c.off || !errors.Is(r.Err, c.err) {
				t.Fatalf("repair %+v (%v), want offset %d, %v", *r, r, c.off, c.err)
			}
			if n := fileSize(t, path); n != c.off {
				t.Fatalf("file %d bytes after repair, want %d (was %d)", n, c.off, before)
			}
			// Appending continues after the last good record.
			appendN(t, s, c.kept+1, 8)
			cons, err := s.Consumer("c")
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < 8; i++ {
				next(t, cons, uint64(i))
			}
			s.Close()
			s = open(t, dir)
			if reps := s.Repairs(); len(reps) != 0 {
				t.Fatalf("repairs after reopening %v", reps)
			}
			if st := s.Stats(); st.LastSeq != 7 || st.FirstSeq != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestCorruptMiddleSegment: a bad record in a segment other than the
// last loses the rest of that segment only.
func TestCorruptMiddleSegment(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 3 * recLen })
	appendN(t, s, 1, 10) // segments 1-3, 4-6, 7-9
	s.Close()
	patchFile(t, filepath.Join(dir, segName(4)), recLen+44, 0xff) // record 5

	s = open(t, dir, func(c *Config) { c.SegmentSize = 3 * recLen })
	reps := s.Repairs()
	if len(reps) != 1 || reps[0].Segment != segName(4) || reps[0].Offset != recLen || reps[0].Dropped != 2*recLen {
		t.Fatalf("repairs %v", reps)
	}
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{1, 2, 3, 4, 7, 8, 9} {
		next(t, c, seq)
	}
	appendN(t, s, 10, 11)
	next(t, c, 10)
	// Rewinding into the gap starts at the next retained record.
	if err := c.Commit(4); err != nil {
		t.Fatal(err)
	}
	c.Rewind()
	next(t, c, 7)
}

// TestEmptyAndForeignFiles: an empty segment, files that are not
// segments, and a stale temporary cursor.
func TestEmptyAndForeignFiles(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 2 * recLen })
	appendN(t, s, 1, 5)
	s.Close()
	for name, content := range map[string]string{
		segName(3):                 "", // cut to nothing by a crash
		"notes.txt":                "hello",
		"123.seg":                  "short name",
		"c.cursor" + ".tmp":        "half-written",
		"bad name!.cursor":         "ignored",
		"00000000000000000000.seg": "zero base",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s = open(t, dir, func(c *Config) { c.SegmentSize = 2 * recLen })
	if reps := s.Repairs(); len(reps) != 0 {
		t.Fatalf("repairs %v", reps)
	}
	if _, err := os.Stat(filepath.Join(dir, "c.cursor.tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary cursor left: %v", err)
	}
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	next(t, c, 1)
	next(t, c, 2)
	appendN(t, s, 3, 6)
	for i := 3; i < 6; i++ {
		next(t, c, uint64(i))
	}
}

func TestCorruptCursor(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	appendN(t, s, 1, 5)
	c, err := s.Consumer("lake")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(3); err != nil {
		t.Fatal(err)
	}
	s.Close()
	patchFile(t, filepath.Join(dir, "lake.cursor"), 12, 0xff) // in the committed number

	s = open(t, dir)
	reps := s.Repairs()
	if len(reps) != 1 || reps[0].Segment != "lake.cursor" || !errors.Is(reps[0], ErrChecksum) {
		t.Fatalf("repairs %v", reps)
	}
	c, err = s.Consumer("lake")
	if err != nil {
		t.Fatal(err)
	}
	if c.Committed() != 0 {
		t.Fatalf("committed %d after repair", c.Committed())
	}
	next(t, c, 1) // delivered again: at least once
	s.Close()
	if s = open(t, dir); len(s.Repairs()) != 0 {
		t.Fatalf("repaired cursor not rewritten: %v", s.Repairs())
	}
}

// TestCommittedBeyondLoss: records lost after their consumer committed
// them (a power failure under SyncInterval) do not get their numbers
// reused, or the consumer would skip the new records.
func TestCommittedBeyondLoss(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	appendN(t, s, 1, 6)
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(5); err != nil {
		t.Fatal(err)
	}
	s.Close()
	truncateFile(t, filepath.Join(dir, segName(1)), 2*recLen+10) // lose 3-5

	s = open(t, dir)
	if reps := s.Repairs(); len(reps) != 1 {
		t.Fatalf("repairs %v", reps)
	}
	seq, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, payloadOf(6, 100))
	if err != nil || seq != 6 {
		t.Fatalf("Append = %d, %v; want 6", seq, err)
	}
	if c, err = s.Consumer("c"); err != nil {
		t.Fatal(err)
	}
	next(t, c, 6)
	s.Close()
	s = open(t, dir)
	if reps := s.Repairs(); len(reps) != 0 {
		t.Fatalf("repairs %v", reps)
	}
	// Records 1 and 2 were committed: their segment is gone.
	if st := s.Stats(); st.LastSeq != 6 || st.FirstSeq != 6 || st.Segments != 1 {
		t.Fatalf("stats %+v", st)
	}
}
