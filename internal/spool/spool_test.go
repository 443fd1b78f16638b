package spool

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestRoundTrip(t *testing.T) {
	for _, p := range []SyncPolicy{SyncAlways, SyncInterval, SyncNever} {
		t.Run("sync="+p.String(), func(t *testing.T) {
			s := open(t, t.TempDir(), func(c *Config) { c.Sync = p })
			recv := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
			big := payloadOf(3, 100<<10) // written with two system calls
			in := []struct {
				sig     otlpwire.Signal
				tenant  string
				recv    time.Time
				payload []byte
			}{
				{otlpwire.SignalLogs, "acme", recv, []byte("hello")},
				{otlpwire.SignalTraces, "", time.Time{}, nil},
				{otlpwire.SignalLogs, strings.Repeat("t", MAX_TENANT), recv, big},
			}
			for i, r := range in {
				buf := append([]byte(nil), r.payload...)
				seq, err := s.Append(r.sig, r.tenant, r.recv, buf)
				if err != nil || seq != uint64(i+1) {
					t.Fatalf("Append %d = %d, %v", i, seq, err)
				}
				clear(buf) // the caller may reuse the payload
			}
			c, err := s.Consumer("lake")
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range in {
				got, err := c.Next(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if got.Seq != uint64(i+1) || got.Signal != r.sig || got.Tenant != r.tenant ||
					!got.Received.Equal(r.recv) || !bytes.Equal(got.Payload, r.payload) {
					t.Errorf("record %d = %v %v %q %v %d bytes", i, got.Seq, got.Signal, got.Tenant, got.Received, len(got.Payload))
				}
			}
			st := s.Stats()
			if st.FirstSeq != 1 || st.LastSeq != 3 || st.Appends != 3 || st.Segments != 1 || st.Consumers != 1 {
				t.Errorf("stats %+v", st)
			}
			if fi := fileSize(t, filepath.Join(s.dir, segName(1))); fi != st.Bytes {
				t.Errorf("file %d bytes, stats %d", fi, st.Bytes)
			}
		})
	}
}

// TestRecordEncoding pins the on-disk format of a record.
func TestRecordEncoding(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if _, err := s.Append(otlpwire.SignalTraces, "ab", time.Unix(0, 0x0102030405060708), []byte{0xca, 0xfe, 0x01}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	got := readFile(t, filepath.Join(dir, "00000000000000000001.seg"))
	want := unhex(t, `
		00000001                type RECORD_OTLP_PROTOBUF
		0000000000000001        seq 1
		00000002                signal SIGNAL_TRACES
		00000002 61620000       tenant "ab", padded
		0102030405060708        received_unix_nano
		00000003                payload_length
		b1caeec2                crc
		cafe01                  payload, not padded`)
	if !bytes.Equal(got, want) {
		t.Fatalf("segment\n got %x\nwant %x", got, want)
	}
	// The crc is that of the payload followed by the header before it.
	crcInput := append(want[len(want)-3:len(want):len(want)], want[:len(want)-7]...)
	if crc := crc32.Checksum(crcInput, crc32.MakeTable(crc32.Castagnoli)); crc != 0xb1caeec2 {
		t.Errorf("crc %08x", crc)
	}
}

// unhex decodes hex written as words, ignoring everything after the
// first two words of a line that is not hex (comments).
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.Split(s, "\n") {
		for _, w := range strings.Fields(line) {
			b, err := hex.DecodeString(w)
			if err != nil {
				break
			}
			out = append(out, b...)
		}
	}
	return out
}

func TestReopenContinuesSequence(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 1000 })
	appendN(t, s, 1, 30)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	s = open(t, dir, func(c *Config) { c.SegmentSize = 1000 })
	if r := s.Repairs(); len(r) != 0 {
		t.Fatalf("repairs %v", r)
	}
	appendN(t, s, 30, 50)
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 50; i++ {
		next(t, c, uint64(i))
	}
	if st := s.Stats(); st.Segments < 5 || st.LastSeq != 49 || st.FirstSeq != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestOpenLocked(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if _, err := Open(config(dir)); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second Open: %v", err)
	}
	s.Close()
	open(t, dir)
}

func TestSegmentSize(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 1000 })
	// 100-byte payloads plus 44-byte headers: 6 records (864 bytes) fit
	// in 1000 bytes, the 7th starts a new segment.
	appendN(t, s, 1, 14)
	if _, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, payloadOf(14, 5000)); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 15, 16)
	got := strings.Join(segFiles(t, dir), " ")
	want := strings.Join([]string{segName(1), segName(7), segName(13), segName(14), segName(15)}, " ")
	if got != want {
		t.Fatalf("segments\n got %s\nwant %s", got, want)
	}
	if n := fileSize(t, filepath.Join(dir, segName(1))); n != 6*144 {
		t.Errorf("first segment %d bytes", n)
	}
	if n := fileSize(t, filepath.Join(dir, segName(14))); n != 5000+36 {
		t.Errorf("oversized record's segment %d bytes", n)
	}
}

func TestAppendErrors(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.MaxBytes = 1000 })
	cases := []struct {
		name    string
		sig     otlpwire.Signal
		tenant  string
		payload []byte
		is      error
	}{
		{"signal 0", 0, "", nil, nil},
		{"signal 4", 4, "", nil, nil},
		{"long tenant", otlpwire.SignalLogs, strings.Repeat("x", MAX_TENANT+1), nil, nil},
		{"over the spool", otlpwire.SignalLogs, "", make([]byte, 1000), ErrTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := s.Append(c.sig, c.tenant, time.Time{}, c.payload); err == nil || c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("Append: %v", err)
			}
		})
	}
	if seq, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, nil); seq != 1 || err != nil {
		t.Fatalf("after errors: %d, %v", seq, err)
	}
}

func TestConfig(t *testing.T) {
	for name, set := range map[string]func(*Config){
		"no dir":          func(c *Config) { c.Dir = "" },
		"segment 0":       func(c *Config) { c.SegmentSize = 0 },
		"negative max":    func(c *Config) { c.MaxBytes = -1 },
		"policy 7":        func(c *Config) { c.Sync = 7 },
		"negative period": func(c *Config) { c.SyncInterval = -time.Second },
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Open(config(t.TempDir(), set)); err == nil {
				t.Error("no error")
			}
		})
	}
	for _, p := range []SyncPolicy{SyncAlways, SyncInterval, SyncNever} {
		if q, err := ParseSyncPolicy(p.String()); q != p || err != nil {
			t.Errorf("ParseSyncPolicy(%v) = %v, %v", p, q, err)
		}
	}
	if _, err := ParseSyncPolicy("sometimes"); err == nil {
		t.Error("ParseSyncPolicy(sometimes): no error")
	}
	if otlpwire.SignalLogs.String() != "logs" || otlpwire.SignalTraces.String() != "traces" || otlpwire.Signal(9).String() != "Signal(9)" {
		t.Error("Signal.String")
	}
}

func TestFull(t *testing.T) {
	dir := t.TempDir()
	// 144-byte records, 4 per segment, at most 8 records' worth of disk.
	s := open(t, dir, func(c *Config) { c.SegmentSize = 600; c.MaxBytes = 8 * 144 })
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1, 9)
	if _, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, payloadOf(9, 100)); !errors.Is(err, ErrFull) {
		t.Fatalf("Append over the limit: %v", err)
	}
	if st := s.Stats(); st.Full != 1 || st.Bytes != 8*144 {
		t.Errorf("stats %+v", st)
	}
	// Consuming the first segment frees room for 4 records.
	for i := 1; i <= 4; i++ {
		next(t, c, uint64(i))
	}
	if err := c.Commit(4); err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 9, 13)
	if _, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, payloadOf(13, 100)); !errors.Is(err, ErrFull) {
		t.Fatalf("Append over the limit again: %v", err)
	}
	// Consuming everything, the current segment included: the full spool
	// rolled to a new segment, so all of it can go.
	for i := 5; i <= 12; i++ {
		next(t, c, uint64(i))
	}
	if err := c.Commit(12); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, payloadOf(13, 100)); err != nil {
		t.Fatalf("Append after consuming: %v", err)
	}
	if st := s.Stats(); st.Segments != 1 || st.Bytes != 136 || st.FirstSeq != 13 {
		t.Errorf("stats %+v", st)
	}
	if got := segFiles(t, dir); len(got) != 1 || got[0] != segName(13) {
		t.Errorf("segments %v", got)
	}
}

// TestFullSmallerThanSegment: a limit below the segment size still
// recovers, because a full spool starts a new segment.
func TestFullSmallerThanSegment(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.MaxBytes = 3 * 144 })
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	seq := 1
	for round := 0; round < 5; round++ {
		for {
			_, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, payloadOf(seq, 100))
			if errors.Is(err, ErrFull) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			seq++
		}
		for r := c.Committed() + 1; r < uint64(seq); r++ {
			next(t, c, r)
		}
		if err := c.Commit(uint64(seq - 1)); err != nil {
			t.Fatal(err)
		}
	}
	if seq != 16 {
		t.Errorf("appended %d records in 5 rounds of 3", seq-1)
	}
}

func TestNoConsumerKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 300; c.MaxBytes = 6 * 144 })
	appendN(t, s, 1, 7)
	if _, err := s.Append(otlpwire.SignalLogs, "", time.Time{}, payloadOf(7, 100)); !errors.Is(err, ErrFull) {
		t.Fatalf("got %v", err)
	}
	if n := len(segFiles(t, dir)); n != 4 { // 3 full and a new empty current one
		t.Errorf("%d segments", n)
	}
	// A consumer registered now starts at the oldest record.
	c, err := s.Consumer("late")
	if err != nil {
		t.Fatal(err)
	}
	next(t, c, 1)
}

// TestGroupCommit: under SyncAlways, concurrent Appends share fsyncs.
func TestGroupCommit(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.Sync = SyncAlways })
	const writers, each = 8, 50
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := s.Append(otlpwire.SignalLogs, "t", time.Time{}, payloadOf(i, 1000)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	st := s.Stats()
	t.Logf("%d appends, %d fsync batches", st.Appends, st.Syncs)
	if st.Appends != writers*each || st.Syncs == 0 || st.Syncs >= st.Appends {
		t.Errorf("stats %+v", st)
	}
}

func TestIntervalSyncs(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.Sync = SyncInterval; c.SyncInterval = time.Millisecond })
	appendN(t, s, 1, 2)
	deadline := time.Now().Add(5 * time.Second)
	for s.Stats().Syncs == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no fsync within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestConcurrent: appenders and a consumer at once (run with -race).
func TestConcurrent(t *testing.T) {
	for _, p := range []SyncPolicy{SyncAlways, SyncNever} {
		t.Run("sync="+p.String(), func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, func(c *Config) { c.SegmentSize = 8 << 10; c.Sync = p })
			c, err := s.Consumer("c")
			if err != nil {
				t.Fatal(err)
			}
			const writers, each = 4, 200
			var wg sync.WaitGroup
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < each; i++ {
						p := payloadOf(w*each+i, 10+i%500)
						p[0] = byte(w)
						if _, err := s.Append(otlpwire.SignalLogs, "t", time.Time{}, p); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var last uint64
			for n := 0; n < writers*each; n++ {
				r, err := c.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if r.Seq != last+1 {
					t.Fatalf("seq %d after %d", r.Seq, last)
				}
				last = r.Seq
				if n%64 == 0 {
					if err := c.Commit(r.Seq); err != nil {
						t.Fatal(err)
					}
				}
			}
			wg.Wait()
			if err := c.Commit(last); err != nil {
				t.Fatal(err)
			}
			if st := s.Stats(); st.Segments != 1 || st.LastSeq != writers*each {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestMetricsRecordsAndBytesAfter(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 600 })
	c, err := s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	payload := payloadOf(1, 100)
	for range 9 {
		if _, err := s.Append(otlpwire.SignalMetrics, "t", time.Time{}, payload); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := c.Next(context.Background())
	if err != nil || rec.Signal != otlpwire.SignalMetrics || !bytes.Equal(rec.Payload, payload) {
		t.Fatalf("Next: %+v, %v", rec, err)
	}
	st := s.Stats()
	if got := s.BytesAfter(0); got != st.Bytes {
		t.Errorf("BytesAfter(0) = %d, want every segment's %d", got, st.Bytes)
	}
	if got := s.BytesAfter(st.LastSeq); got != 0 {
		t.Errorf("BytesAfter(last) = %d, want 0", got)
	}
	// Records of 100 bytes of payload and a 40-byte header, 4 to a
	// segment: after record 4 come segments 2 and 3, whole.
	if got, want := s.BytesAfter(4), st.Bytes-4*(int64(len(payload))+40); got != want {
		t.Errorf("BytesAfter(4) = %d, want %d", got, want)
	}
	// Reopened, the records keep their signal.
	s.Close()
	s = open(t, dir)
	c, err = s.Consumer("c")
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := c.Next(context.Background()); err != nil || rec.Signal != otlpwire.SignalMetrics {
		t.Fatalf("after reopening: %+v, %v", rec, err)
	}
}

// TestTailPausedBehindConsumers: once every consumer reads behind the
// records kept in memory, the spool stops keeping copies (they would be
// dropped before being read) and starts again when one has caught up; a
// consumer that keeps up is served from memory whatever another one does.
func TestTailPausedBehindConsumers(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.TailBytes = 400 }) // four records
	lag, err := s.Consumer("lag")
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, s, 1, 11)
	s.mu.Lock()
	kept := len(s.tail)
	s.mu.Unlock()
	if kept != 0 {
		t.Fatalf("%d records kept in memory behind the only consumer, want none", kept)
	}
	for seq := uint64(1); seq <= 10; seq++ {
		if r := next(t, lag, seq); r.Kept {
			t.Fatalf("record %d read from memory, kept while the consumer lagged", seq)
		}
	}
	appendN(t, s, 11, 13) // caught up: kept again
	for seq := uint64(11); seq <= 12; seq++ {
		if r := next(t, lag, seq); !r.Kept {
			t.Fatalf("record %d, appended after the consumer caught up, not kept in memory", seq)
		}
	}

	// A second consumer that never reads does not stop the tail for one
	// that keeps up, and the memory stays bounded.
	if _, err := s.Consumer("idle"); err != nil {
		t.Fatal(err)
	}
	for i := 13; i <= 40; i++ {
		appendN(t, s, i, i+1)
		if r := next(t, lag, uint64(i)); !r.Kept {
			t.Fatalf("record %d not read from memory by the consumer that keeps up", i)
		}
	}
	s.mu.Lock()
	kept, n := len(s.tail), s.tailBytes
	s.mu.Unlock()
	if kept == 0 || n > 400 {
		t.Fatalf("%d records, %d bytes kept, want some, at most 400 bytes", kept, n)
	}
}

// TestTail: with TailBytes, consumers that keep up read the newest
// records from memory and the others from the files, interleaved at
// random (records of random sizes, some larger than the tail, segments
// rolling over, Rewind, a second consumer far behind, a reopen), and
// every record read is the one appended, in order.
func TestTail(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, func(c *Config) { c.SegmentSize = 4 << 10; c.TailBytes = 3 << 10 })
	rng := rand.New(rand.NewPCG(1, 2))
	type appended struct {
		sig     otlpwire.Signal
		tenant  string
		at      time.Time
		payload []byte
	}
	var all []appended
	add := func() {
		n := rng.IntN(1500)
		a := appended{otlpwire.Signal(1 + rng.IntN(3)), fmt.Sprint("t", rng.IntN(3)), time.Unix(int64(len(all)+1), 0).UTC(), payloadOf(len(all)+1, n)}
		if _, err := s.Append(a.sig, a.tenant, a.at, a.payload); err != nil {
			t.Fatal(err)
		}
		all = append(all, a)
	}
	var kept []Record // Kept records, held past the next Next
	check := func(c *Consumer, r Record) {
		t.Helper()
		a := all[r.Seq-1]
		if r.Signal != a.sig || r.Tenant != a.tenant || !r.Received.Equal(a.at) || !bytes.Equal(r.Payload, a.payload) {
			t.Fatalf("%s: record %d differs from the one appended", c.Name(), r.Seq)
		}
		if r.Kept {
			kept = append(kept, r)
		}
	}
	fast, err := s.Consumer("fast")
	if err != nil {
		t.Fatal(err)
	}
	slow, err := s.Consumer("slow")
	if err != nil {
		t.Fatal(err)
	}
	var fastSeq, slowSeq uint64
	for range 3000 {
		switch k := rng.IntN(10); {
		case k < 5:
			add()
		case k < 8 && fastSeq < uint64(len(all)):
			fastSeq++
			check(fast, next(t, fast, fastSeq))
			if rng.IntN(20) == 0 {
				if err := fast.Commit(fastSeq); err != nil {
					t.Fatal(err)
				}
			}
			if rng.IntN(50) == 0 {
				fast.Rewind()
				fastSeq = fast.Committed()
			}
		case k == 9 && slowSeq < uint64(len(all)):
			slowSeq++
			check(slow, next(t, slow, slowSeq))
		}
	}
	reads := fastSeq + slowSeq
	if h := s.tailHits.Load(); h == 0 || h >= reads {
		t.Fatalf("%d of %d reads from memory: want some, not all", h, reads)
	}
	// Every record read from memory says so, and its payload, held all
	// along, is still the one appended.
	if uint64(len(kept)) != s.tailHits.Load() {
		t.Fatalf("%d records Kept, %d read from memory", len(kept), s.tailHits.Load())
	}
	for _, r := range kept {
		if !bytes.Equal(r.Payload, all[r.Seq-1].payload) {
			t.Fatalf("Kept record %d changed after later reads", r.Seq)
		}
	}
	t.Logf("%d of %d reads from memory", s.tailHits.Load(), reads)
	s.Close()
	s = open(t, dir, func(c *Config) { c.SegmentSize = 4 << 10; c.TailBytes = 3 << 10 })
	fast, err = s.Consumer("fast")
	if err != nil {
		t.Fatal(err)
	}
	for seq := fast.Committed() + 1; seq <= uint64(len(all)); seq++ {
		check(fast, next(t, fast, seq))
	}
	add()
	check(fast, next(t, fast, uint64(len(all))))
}
