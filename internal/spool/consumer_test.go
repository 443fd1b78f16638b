package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestCursorSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	appendN(t, s, 1, 10)
	a, err := s.Consumer("lake")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Consumer("tsdb")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 6; i++ {
		next(t, a, uint64(i))
	}
	if err := a.Commit(4); err != nil { // 5 and 6 read but not committed
		t.Fatal(err)
	}
	if err := a.Commit(2); err != nil || a.Committed() != 4 {
		t.Fatalf("Commit backwards: %v, committed %d", err, a.Committed())
	}
	next(t, b, 1)
	s.Close()

	s = open(t, dir)
	if st := s.Stats(); st.Consumers != 2 {
		t.Fatalf("stats %+v", st)
	}
	if a, err = s.Consumer("lake"); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Consumer("lake"); again != a {
		t.Error("Consumer returned a second handle for one name")
	}
	if a.Committed() != 4 || a.Name() != "lake" {
		t.Fatalf("committed %d", a.Committed())
	}
	next(t, a, 5)
	if b, err = s.Consumer("tsdb"); err != nil {
		t.Fatal(err)
	}
	next(t, b, 1)
}

func TestSegmentDeletion(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 3 * recLen })
	a, err := s.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Consumer("b")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1, 11) // segments 1, 4, 7, 10 (current)
	if err := a.Commit(10); err != nil {
		t.Fatal(err)
	}
	if n := len(segFiles(t, dir)); n != 4 {
		t.Fatalf("%d segments after one consumer committed everything", n)
	}
	if err := b.Commit(5); err != nil { // inside the second segment
		t.Fatal(err)
	}
	if got := segFiles(t, dir); len(got) != 3 || got[0] != segName(4) {
		t.Fatalf("segments %v", got)
	}
	if err := b.Commit(6); err != nil {
		t.Fatal(err)
	}
	if got := segFiles(t, dir); len(got) != 2 || got[0] != segName(7) {
		t.Fatalf("segments %v", got)
	}
	if err := b.Commit(10); err != nil { // the current segment stays
		t.Fatal(err)
	}
	if got := segFiles(t, dir); len(got) != 1 || got[0] != segName(10) {
		t.Fatalf("segments %v", got)
	}
	if err := b.Commit(11); err == nil {
		t.Fatal("Commit beyond the newest record: no error")
	}
	// A consumer that is only on disk holds segments back too.
	appendN(t, s, 11, 14)
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	if c.Committed() != 9 {
		t.Fatalf("new consumer committed %d, want 9 (before the oldest record)", c.Committed())
	}
	s.Close()
	s = open(t, dir, func(c *Config) { c.SegmentSize = 3 * recLen })
	if a, err = s.Consumer("a"); err != nil {
		t.Fatal(err)
	}
	if b, err = s.Consumer("b"); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Consumer{a, b} {
		if err := x.Commit(13); err != nil {
			t.Fatal(err)
		}
	}
	if got := segFiles(t, dir); len(got) != 2 || got[0] != segName(10) {
		t.Fatalf("segments %v (c has not committed)", got)
	}
	if err := s.RemoveConsumer("c"); err != nil {
		t.Fatal(err)
	}
	if got := segFiles(t, dir); len(got) != 1 || got[0] != segName(13) {
		t.Fatalf("segments %v after removing c", got)
	}
	if err := s.RemoveConsumer("c"); err != nil {
		t.Fatalf("removing again: %v", err)
	}
	s.Close()
	s = open(t, dir)
	if st := s.Stats(); st.Consumers != 2 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRemovedConsumer(t *testing.T) {
	s := open(t, t.TempDir())
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveConsumer("c"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Next(context.Background()); !errors.Is(err, ErrConsumerRemoved) {
		t.Fatalf("Next: %v", err)
	}
	if err := c.Commit(1); !errors.Is(err, ErrConsumerRemoved) {
		t.Fatalf("Commit: %v", err)
	}
	if c2, err := s.Consumer("c"); err != nil || c2 == c {
		t.Fatalf("registering again: %v", err)
	}
}

func TestConsumerNames(t *testing.T) {
	s := open(t, t.TempDir())
	for _, name := range []string{"", ".hidden", "a/b", "a b", "..", strings.Repeat("n", MAX_CONSUMER+1), "é"} {
		if _, err := s.Consumer(name); err == nil {
			t.Errorf("Consumer(%q): no error", name)
		}
	}
	for _, name := range []string{"lake", "a.b-c_D9", strings.Repeat("n", MAX_CONSUMER)} {
		if _, err := s.Consumer(name); err != nil {
			t.Errorf("Consumer(%q): %v", name, err)
		}
	}
}

func TestNextBlocks(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.Sync = SyncNever })
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	// ctx ends while waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next on an empty spool: %v", err)
	}
	// An Append wakes a waiting Next, and the record is readable at once
	// although nothing was fsynced.
	got := make(chan Record, 1)
	go func() {
		r, err := c.Next(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("Next returned %d before any Append", r.Seq)
	default:
	}
	appendN(t, s, 1, 2)
	select {
	case r := <-got:
		if r.Seq != 1 {
			t.Fatalf("seq %d", r.Seq)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next not woken by Append")
	}
	// Close wakes a waiting Next with ErrClosed.
	errc := make(chan error, 1)
	go func() {
		_, err := c.Next(context.Background())
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Next after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next not woken by Close")
	}
	if err := c.Commit(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Commit after Close: %v", err)
	}
}

func TestRewind(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.SegmentSize = 2 * recLen })
	appendN(t, s, 1, 8)
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		next(t, c, uint64(i))
	}
	c.Rewind()
	next(t, c, 1)
	if err := c.Commit(3); err != nil {
		t.Fatal(err)
	}
	next(t, c, 4) // after what Next returned, or the cursor if further
	next(t, c, 5)
	c.Rewind()
	next(t, c, 4)
	// A Commit beyond what Next returned moves Next forward.
	if err := c.Commit(6); err != nil {
		t.Fatal(err)
	}
	next(t, c, 7)
}

// TestSeekInLargeSegment: Next finds a cursor deep in a segment through
// the segment index.
func TestSeekInLargeSegment(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	const n = 5000 // 720 KB: index entries every 256 KiB
	appendN(t, s, 1, n+1)
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{1800, 1821, 4000, n} {
		if err := c.Commit(seq - 1); err != nil {
			t.Fatal(err)
		}
		c.Rewind()
		next(t, c, seq)
	}
	s.Close()
	s = open(t, dir)
	if c, err = s.Consumer("c"); err != nil {
		t.Fatal(err)
	}
	if len(s.segs[0].index) != 3 {
		t.Errorf("index %v", s.segs[0].index)
	}
	c.Rewind()
	next(t, c, n)
}

func TestRemoveWakesNext(t *testing.T) {
	s := open(t, t.TempDir())
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Next(context.Background())
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := s.RemoveConsumer("c"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrConsumerRemoved) {
			t.Fatalf("Next: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Next not woken by RemoveConsumer")
	}
}

// TestNextChecksCRC: a record damaged after Open is reported by Next.
func TestNextChecksCRC(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	appendN(t, s, 1, 4)
	patchFile(t, filepath.Join(dir, segName(1)), recLen+44, 0xff)
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	next(t, c, 1)
	_, err = c.Next(context.Background())
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != recLen || ce.Segment != segName(1) || !errors.Is(err, ErrChecksum) {
		t.Fatalf("Next: %v", err)
	}
}

// TestStickyError: once the segment cannot be written, and a partial
// write cannot be undone, every Append fails.
func TestStickyError(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.Sync = SyncNever })
	appendN(t, s, 1, 2)
	s.mu.Lock()
	s.f.Close() // writes and the truncation that would undo them fail
	s.mu.Unlock()
	_, err1 := s.Append(otlpwire.SignalLogs, "", time.Time{}, nil)
	_, err2 := s.Append(otlpwire.SignalLogs, "", time.Time{}, nil)
	if err1 == nil || err2 == nil || !strings.Contains(err2.Error(), "could not be undone") {
		t.Fatalf("Append errors %v, %v", err1, err2)
	}
}

// TestScan: Scan reads the records of a range in order, with their
// payloads, moves no consumer, stops at the newest record when it began,
// passes over records deleted as every consumer committed them, and ends
// at fn's error.
func TestScan(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 3 * recLen })
	appendN(t, s, 1, 20)
	c, err := s.Consumer("lake")
	if err != nil {
		t.Fatal(err)
	}
	scan := func(from, to uint64) []uint64 {
		t.Helper()
		var got []uint64
		err := s.Scan(context.Background(), from, to, func(r Record) error {
			if !bytes.Equal(r.Payload, payloadOf(int(r.Seq), 100)) || r.Tenant != fmt.Sprint("tenant-", r.Seq%3) {
				t.Errorf("record %d: wrong payload or tenant %q", r.Seq, r.Tenant)
			}
			got = append(got, r.Seq)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	seqs := func(from, to uint64) []uint64 {
		var out []uint64
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	for _, r := range [][2]uint64{{1, 19}, {5, 9}, {0, 3}, {18, 1 << 62}, {25, 30}, {9, 5}} {
		want := seqs(max(r[0], 1), min(r[1], 19))
		if got := scan(r[0], r[1]); !slices.Equal(got, want) {
			t.Errorf("Scan(%d, %d) = %v, want %v", r[0], r[1], got, want)
		}
	}
	if c.Committed() != 0 {
		t.Errorf("Scan moved a consumer to %d", c.Committed())
	}
	for i := 1; i <= 10; i++ {
		next(t, c, uint64(i))
	}
	if err := c.Commit(10); err != nil {
		t.Fatal(err)
	}
	if got := scan(1, 19); len(got) == 0 || got[len(got)-1] != 19 || got[0] == 1 {
		t.Errorf("after deletion: %v, want the records left, up to 19", got)
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Scan(context.Background(), 11, 19, func(Record) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("fn's error: %v after %d records", err, n)
	}
}

// TestTap: records a consumer's tap takes are never returned by Next
// (until Rewind); the others are, in order. A record every consumer took
// is not kept in memory; one another consumer did not take is.
func TestTap(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.TailBytes = 1 << 20 })
	a, err := s.Consumer("a")
	if err != nil {
		t.Fatal(err)
	}
	// As the contract asks, the tap takes a record only when a has been
	// given every record before it; busy makes it decline.
	var handed uint64
	busy := false
	var got []uint64
	a.SetTap(func(r Record) bool {
		if busy || r.Seq != handed+1 {
			return false
		}
		if !bytes.Equal(r.Payload, payloadOf(int(r.Seq), 100)) {
			t.Errorf("tap: record %d's payload differs", r.Seq)
		}
		handed = r.Seq
		got = append(got, r.Seq)
		return true
	})
	appendN(t, s, 1, 4)
	busy = true
	appendN(t, s, 4, 7) // 4 declined, hence 5 and 6 too
	busy = false
	if !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("tap took %v, want [1 2 3]", got)
	}
	for seq := uint64(4); seq <= 6; seq++ {
		if r := next(t, a, seq); !r.Kept {
			t.Fatalf("record %d, not taken, was not kept in memory", seq)
		}
		handed = seq
	}
	appendN(t, s, 7, 8) // taken: a has been given 1..6
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if r, err := a.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next returned record %d (err %v); the tap took every record", r.Seq, err)
	}
	if st := s.Stats(); st.Tapped != 4 {
		t.Fatalf("Tapped %d, want 4 (a is the only consumer)", st.Tapped)
	}
	// Another consumer without a tap: records are kept in memory for it.
	b, err := s.Consumer("b")
	if err != nil {
		t.Fatal(err)
	}
	if r := next(t, b, 1); r.Kept {
		t.Fatal("record 1 was kept in memory although every consumer took it")
	}
	for seq := uint64(2); seq <= 7; seq++ {
		next(t, b, seq)
	}
	appendN(t, s, 8, 10) // a's tap takes 8 and 9, b's copy is kept
	if st := s.Stats(); st.Tapped != 4 {
		t.Fatalf("Tapped %d with a consumer that took nothing, want 4", st.Tapped)
	}
	if r := next(t, b, 8); !r.Kept {
		t.Fatal("record 8, which b did not take, was not kept in memory")
	}
	// Rewind forgets what the tap took.
	a.SetTap(nil)
	a.Rewind()
	for seq := uint64(1); seq <= 9; seq++ {
		next(t, a, seq)
	}
	appendN(t, s, 10, 11)
	next(t, a, 10) // no tap: nothing taken
}

// freeFiles lists the names of the consumed segment files kept for reuse.
func freeFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+freeSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRecycledSegments: consumed segment files are kept (at most
// maxFree) and written over as new segments; readers get every record
// right, and after Close the files hold only their own records.
func TestRecycledSegments(t *testing.T) {
	dir := t.TempDir()
	set := func(c *Config) { c.SegmentSize = 3 * recLen }
	s := open(t, dir, set)
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1, 10) // segments 1, 4, 7
	old := map[string]os.FileInfo{}
	for _, name := range segFiles(t, dir) {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		old[name] = fi
	}
	for seq := uint64(1); seq <= 9; seq++ {
		next(t, c, seq)
	}
	if err := c.Commit(9); err != nil {
		t.Fatal(err)
	}
	if n := len(freeFiles(t, dir)); n != 2 {
		t.Fatalf("%d free files after consuming two segments, want 2", n)
	}
	appendN(t, s, 10, 18) // segments 10, 13, 16: two of them recycled
	reused := 0
	for _, name := range []string{segName(10), segName(13), segName(16)} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range old {
			if os.SameFile(fi, o) {
				reused++
			}
		}
	}
	if reused != 2 {
		t.Fatalf("%d new segments written over consumed files, want 2", reused)
	}
	for seq := uint64(10); seq <= 17; seq++ {
		next(t, c, seq) // payloads checked
	}
	s.Close()
	// Every file now holds its own records and nothing else.
	for _, name := range segFiles(t, dir) {
		base, _ := parseSegName(name)
		if n := fileSize(t, filepath.Join(dir, name)); n != int64(min(3, 18-int(base)))*recLen {
			t.Errorf("%s: %d bytes, want %d", name, n, int64(min(3, 18-int(base)))*recLen)
		}
	}
	s = open(t, dir, set)
	if r := s.Repairs(); len(r) != 0 {
		t.Fatalf("repairs after a clean close: %v", r)
	}
	if c, err = s.Consumer("c"); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(10); seq <= 17; seq++ {
		next(t, c, seq)
	}
	// No more than maxFree are kept.
	appendN(t, s, 18, 18+3*(maxFree+3))
	if err := c.Commit(s.Stats().LastSeq); err != nil {
		t.Fatal(err)
	}
	if n := len(freeFiles(t, dir)); n != maxFree {
		t.Fatalf("%d free files, want %d", n, maxFree)
	}
}

// TestFullDeletesFreeFiles: the files kept for reuse count against
// MaxBytes and are deleted before an append is refused.
func TestFullDeletesFreeFiles(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 3 * recLen; c.MaxBytes = 9 * recLen })
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1, 10) // segments 1, 4, 7: the limit
	if err := c.Commit(9); err != nil {
		t.Fatal(err)
	}
	if n := len(freeFiles(t, dir)); n != 2 {
		t.Fatalf("%d free files, want 2", n)
	}
	appendN(t, s, 10, 11) // over the limit with the free files: they go
	if st := s.Stats(); st.Full != 0 {
		t.Fatalf("an append was refused: %+v", st)
	}
	if n := len(freeFiles(t, dir)); n != 0 {
		t.Fatalf("%d free files left at the size limit", n)
	}
	var total int64
	for _, name := range append(segFiles(t, dir), freeFiles(t, dir)...) {
		total += fileSize(t, filepath.Join(dir, filepath.Base(name)))
	}
	if total > 9*recLen {
		t.Fatalf("%d bytes of files, over the limit of %d", total, 9*recLen)
	}
}

// TestRecycledSegmentAfterCrash: a crash leaves a recycled current
// segment with its earlier records past the new ones. Open keeps every
// new record and cuts the rest: whole old records (same sizes) silently,
// a cut into an old record (other sizes) as a reported repair.
func TestRecycledSegmentAfterCrash(t *testing.T) {
	for _, tc := range []struct {
		name       string
		oldPayload int
		repair     bool
	}{
		{"old records whole", 100, false},
		{"cut into an old record", 130, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			set := func(c *Config) { c.SegmentSize = 40 * recLen; c.Sync = SyncNever }
			s := open(t, dir, set)
			c, err := s.Consumer("c")
			if err != nil {
				t.Fatal(err)
			}
			// First life: segments 1 and 41, of oldPayload-byte records.
			var last uint64
			for i := 1; i <= 60; i++ {
				if last, err = s.Append(otlpwire.SignalLogs, fmt.Sprint("tenant-", i%3), time.Unix(int64(i), 0), payloadOf(i, tc.oldPayload)); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Commit(last); err != nil {
				t.Fatal(err)
			}
			if len(freeFiles(t, dir)) == 0 {
				t.Fatal("no consumed file kept for reuse")
			}
			// Second life: 100-byte records until five of them are at
			// the start of a recycled file.
			current := func() *segment {
				s.mu.Lock()
				defer s.mu.Unlock()
				return s.segs[len(s.segs)-1]
			}
			for !current().reused || current().last < current().base+4 {
				seq := s.Stats().LastSeq + 1
				if _, err := s.Append(otlpwire.SignalLogs, fmt.Sprint("tenant-", seq%3), time.Unix(int64(seq), 0), payloadOf(int(seq), 100)); err != nil {
					t.Fatal(err)
				}
			}
			first, cur := current().base, current().name
			// The crash: the files as they are now, copied before Close.
			crash := t.TempDir()
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), segSuffix) || strings.HasSuffix(e.Name(), cursorSuffix) || strings.HasSuffix(e.Name(), freeSuffix) {
					if err := os.WriteFile(filepath.Join(crash, e.Name()), readFile(t, filepath.Join(dir, e.Name())), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			if n := fileSize(t, filepath.Join(crash, cur)); n <= 5*recLen {
				t.Fatalf("the recycled segment has %d bytes: no old records past the new ones", n)
			}
			s2 := open(t, crash, set)
			if got := len(s2.Repairs()) > 0; got != tc.repair {
				t.Fatalf("repairs %v, want a repair: %v", s2.Repairs(), tc.repair)
			}
			c2, err := s2.Consumer("c")
			if err != nil {
				t.Fatal(err)
			}
			if err := c2.Commit(first - 1); err != nil {
				t.Fatal(err)
			}
			for i := uint64(0); i < 5; i++ {
				next(t, c2, first+i)
			}
			if st := s2.Stats(); st.LastSeq != first+4 {
				t.Fatalf("last seq %d after the crash, want %d", st.LastSeq, first+4)
			}
			if seq, err := s2.Append(otlpwire.SignalLogs, "t", time.Now(), payloadOf(0, 10)); err != nil || seq != first+5 {
				t.Fatalf("append after the crash: seq %d, %v", seq, err)
			}
		})
	}
}

// TestCommitAheadWhileRecycling: a consumer whose cursor is committed
// past the segment Next is about to read from its open file (so that the
// segment is collected, and its file recycled and written over, before
// the read) gets the next record after its cursor, not an error.
func TestCommitAheadWhileRecycling(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.SegmentSize = 4 * recLen; c.Sync = SyncNever; c.TailBytes = 0 })
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1, 2)
	next(t, c, 1)        // segment 1's file is open, its one record read
	appendN(t, s, 2, 10) // segments 1 (full), 5, 9
	once := false
	testHookRead = func() {
		if once {
			return
		}
		once = true
		if err := c.Commit(8); err != nil { // segments 1 and 5 go, kept for reuse
			t.Error(err)
		}
		appendN(t, s, 10, 21) // 13 and 17 are written over them
	}
	defer func() { testHookRead = nil }()
	next(t, c, 9) // read from segment 9: segment 1's file holds 17-20 now
	if !once {
		t.Fatal("the hook did not run")
	}
	for seq := uint64(10); seq <= 20; seq++ {
		next(t, c, seq)
	}
}
