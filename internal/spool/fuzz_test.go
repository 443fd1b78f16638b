package spool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// seedSegment returns a real segment file of a few records.
func seedSegment(t testing.TB, records [][]byte) []byte {
	dir := t.TempDir()
	s, err := Open(config(dir, func(c *Config) { c.Sync = SyncNever }))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range records {
		if _, err := s.Append(otlpwire.Signal(1+i%2), string(bytes.Repeat([]byte{'a' + byte(i)}, i)), time.Unix(int64(i), 0), p); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	return readFile(t, filepath.Join(dir, segName(1)))
}

// readAll reads every record of s through a consumer that is not
// registered (no cursor file, so no fsync), checking that the sequence
// numbers increase.
func readAll(t testing.TB, s *Spool) []Record {
	c := &Consumer{s: s, name: "fuzz"}
	defer c.close()
	var out []Record
	for {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // return at once when there is nothing more
		r, err := c.Next(ctx)
		if errors.Is(err, context.Canceled) {
			return out
		}
		if err != nil {
			t.Fatalf("Next after %d records: %v", len(out), err)
		}
		if len(out) > 0 && r.Seq <= out[len(out)-1].Seq {
			t.Fatalf("seq %d after %d", r.Seq, out[len(out)-1].Seq)
		}
		r.Payload = append([]byte(nil), r.Payload...)
		out = append(out, r)
	}
}

// oldRecordAt reports whether data holds at off a whole record numbered
// below 1, the base of the fuzzed segment: what a recycled file held
// before, which Open cuts without calling it a repair.
func oldRecordAt(t testing.TB, data []byte, off int64) bool {
	path := filepath.Join(t.TempDir(), "old")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r segReader
	r.reset(f, "old")
	var h RecordHeader
	_, _, err = r.record(off, int64(len(data)), &h)
	return err == nil && h.Seq < 1
}

// FuzzOpenSegment writes arbitrary bytes as a segment and opens the
// spool: Open must not fail or panic, must report a repair exactly when
// it cut the file, must leave only valid records, and appending and
// reading back must then work, and survive a reopen without repair.
func FuzzOpenSegment(f *testing.F) {
	one := seedSegment(f, [][]byte{[]byte("hello")})
	f.Add(one)
	f.Add(seedSegment(f, [][]byte{nil, []byte("a"), bytes.Repeat([]byte("xyz"), 100), {0, 1, 2, 3}, []byte("last")}))
	f.Add(one[:len(one)-2])
	f.Add(append(one, one...))                                    // the second copy repeats seq 1
	f.Add(append(one, encodeRecord(f, 0, "a", []byte("old"))...)) // a record of a recycled file's earlier life
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, segName(1))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open(config(dir, func(c *Config) { c.Sync = SyncNever; c.SegmentSize = 1 << 20 }))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		size := fileSize(t, path)
		reps := s.Repairs()
		switch {
		case len(reps) > 1:
			t.Fatalf("repairs %v", reps)
		case len(reps) == 1 && (reps[0].Offset != size || reps[0].Dropped != int64(len(data))-size || reps[0].Segment != segName(1)):
			t.Fatalf("repair %+v, file now %d bytes", *reps[0], size)
		case len(reps) == 0 && size != int64(len(data)) && !oldRecordAt(t, data, size):
			t.Fatalf("file cut from %d to %d bytes without a repair", len(data), size)
		}
		if !bytes.Equal(data[:size], readFile(t, path)) {
			t.Fatal("repair changed the kept bytes")
		}
		got := readAll(t, s)
		st := s.Stats()
		if uint64(len(got)) != st.LastSeq || st.Bytes != size {
			t.Fatalf("%d records, stats %+v", len(got), st)
		}
		for i, r := range got {
			if r.Seq != uint64(i+1) {
				t.Fatalf("record %d has seq %d", i, r.Seq)
			}
		}
		payload := []byte("after repair")
		seq, err := s.Append(otlpwire.SignalTraces, "t", time.Unix(1, 0), payload)
		if err != nil || seq != uint64(len(got)+1) {
			t.Fatalf("Append = %d, %v after %d records", seq, err, len(got))
		}
		again := readAll(t, s)
		if len(again) != len(got)+1 || again[len(got)].Seq != seq || !bytes.Equal(again[len(got)].Payload, payload) {
			t.Fatalf("read back %d records after Append", len(again))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2, err := Open(config(dir, func(c *Config) { c.Sync = SyncNever }))
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if reps := s2.Repairs(); len(reps) != 0 {
			t.Fatalf("repairs after reopening %v", reps)
		}
		if st := s2.Stats(); st.LastSeq != seq {
			t.Fatalf("reopened: stats %+v", st)
		}
	})
}
