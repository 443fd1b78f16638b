package forward

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/xdrgen"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestGeneratedUpToDate regenerates acked_xdr.go in memory and fails if
// the checked-in file differs: run go generate ./internal/forward to fix.
func TestGeneratedUpToDate(t *testing.T) {
	src, err := os.ReadFile("acked.x")
	if err != nil {
		t.Fatal(err)
	}
	want, err := xdrgen.Compile("forward", []xdrgen.Source{{Name: "acked.x", Text: string(src)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("acked_xdr.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("acked_xdr.go is stale; run go generate ./internal/forward")
	}
}

// exampleAcked is the example of docs/format/forward-acked.md.
var exampleAcked = AckedFile{
	Type: ACKED_RANGES, Destination: "gw", Cursor: 100, MaxReceivedUnixNano: 1_700_000_000_000_000_000,
	Routing: 0x0123456789abcdef,
	Done:    []SeqRange{{First: 103, Last: 104}},
	Endpoints: []EndpointAcked{
		{Endpoint: "10.0.0.1:4317", Ranges: []SeqRange{{First: 101, Last: 101}, {First: 103, Last: 106}}},
		{Endpoint: "10.0.0.2:4317", Ranges: []SeqRange{{First: 102, Last: 104}}},
	},
}

// TestAckedFormatPage holds docs/format/forward-acked.md to the code:
// the hex of its example is what encodeAcked makes of exampleAcked, and
// decodes back to it.
func TestAckedFormatPage(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "docs", "format", "forward-acked.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```hex\n(.*?)```").FindSubmatch(page)
	if m == nil {
		t.Fatal("no ```hex block in the page")
	}
	var digits strings.Builder
	for line := range strings.Lines(string(m[1])) {
		line, _, _ = strings.Cut(line, "#") // comments
		digits.WriteString(strings.Join(strings.Fields(line), ""))
	}
	fromPage, err := hex.DecodeString(digits.String())
	if err != nil {
		t.Fatal(err)
	}
	ex := exampleAcked
	b, err := encodeAcked(&ex)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromPage, b) {
		t.Errorf("the page's example differs from the encoding:\npage %x\ncode %x", fromPage, b)
	}
	f, err := decodeAcked(fromPage)
	if err != nil {
		t.Fatal(err)
	}
	ex.Crc = f.Crc
	if !reflect.DeepEqual(*f, ex) {
		t.Errorf("the page's example decodes to %+v, want %+v", *f, ex)
	}
	for _, name := range []string{"MAX_DESTINATION", "MAX_ENDPOINT_NAME", "MAX_ACKED_ENDPOINTS", "MAX_RANGES", "forward-<name>.acked"} {
		if !bytes.Contains(page, []byte(name)) {
			t.Errorf("the page does not mention %s", name)
		}
	}
}

// TestLoadAcked: a file written is read back; one that is damaged, of
// another destination, ahead of the cursor or out of order is refused.
func TestLoadAcked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "forward-gw.acked")
	if rs, err := loadAcked(path, "gw", 100); rs != nil || err != nil {
		t.Fatalf("no file: %v, %v", rs, err)
	}
	good, _ := encodeAcked(&exampleAcked)
	os.WriteFile(path, good, 0o644)
	rs, err := loadAcked(path, "gw", 100)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(0, exampleAcked.MaxReceivedUnixNano)
	for _, c := range []struct {
		seq                   uint64
		received              time.Time
		done, ep1, ep2, other bool
	}{
		{101, at, false, true, false, false},
		{102, at, false, false, true, false},
		{103, at, true, true, true, false},
		{105, time.Time{}, false, true, false, false},
		{107, at, false, false, false, false},
	} {
		if got := rs.isDone(c.seq, c.received); got != c.done {
			t.Errorf("isDone(%d) = %v", c.seq, got)
		}
		for ep, want := range map[string]bool{"10.0.0.1:4317": c.ep1, "10.0.0.2:4317": c.ep2, "10.0.0.3:4317": c.other} {
			if got := rs.applies(c.seq, c.received) && rs.delivered(ep, exampleAcked.Routing, c.seq); got != want {
				t.Errorf("delivered(%s, %d) = %v", ep, c.seq, got)
			}
		}
	}
	if rs.delivered("10.0.0.1:4317", exampleAcked.Routing+1, 101) {
		t.Error("delivered under another routing")
	}
	if rs.applies(103, at.Add(time.Nanosecond)) {
		t.Error("a record received after every one the file speaks of (a number given again after a power loss) is taken for one of them")
	}

	bad := func(name string, f func(*AckedFile) []byte, committed uint64) {
		t.Helper()
		ex := exampleAcked
		ex.Endpoints = slices.Clone(ex.Endpoints)
		os.WriteFile(path, f(&ex), 0o644)
		if rs, err := loadAcked(path, "gw", committed); rs != nil || err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	enc := func(f *AckedFile) []byte { b, _ := encodeAcked(f); return b }
	bad("flipped bit", func(f *AckedFile) []byte { b := enc(f); b[20] ^= 1; return b }, 100)
	bad("torn", func(f *AckedFile) []byte { return enc(f)[:30] }, 100)
	bad("other destination", func(f *AckedFile) []byte { f.Destination = "other"; return enc(f) }, 100)
	bad("cursor behind the file (repaired, or a consumer made again)", enc, 99)
	bad("out of order", func(f *AckedFile) []byte {
		f.Endpoints[0] = EndpointAcked{Endpoint: "x", Ranges: []SeqRange{{103, 104}, {101, 102}}}
		return enc(f)
	}, 100)
	bad("at the cursor", func(f *AckedFile) []byte { f.Done = []SeqRange{{100, 101}}; return enc(f) }, 100)
}

// TestCommitOutOfOrder delivers the records in flight in a random order,
// part by part on two endpoints, committing after each: the cursor is
// always the end of the delivered prefix, never past a record with a
// part not delivered, and the file lists exactly what was delivered after
// it, in full and per endpoint.
func TestCommitOutOfOrder(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := spool.DefaultConfig()
		cfg.Dir = t.TempDir()
		sp, err := spool.Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		const n = 40
		for range n {
			if _, err := sp.Append(otlpwire.SignalLogs, "", time.Now(), []byte{}); err != nil {
				t.Fatal(err)
			}
		}
		d, err := New(sp, Config{Name: "gw", Resolver: Static{"a:1", "b:1"}})
		if err != nil {
			t.Fatal(err)
		}
		d.gen, d.routing = 1, 42
		a, b := &endpoint{name: "a:1"}, &endpoint{name: "b:1"}
		old := time.Now().Add(-time.Minute) // held back long enough for the file
		var parts []testPart
		for seq := uint64(1); seq <= n; seq++ {
			r := &record{first: seq, seq: seq, since: old, received: old, gen: 1}
			for _, ep := range []*endpoint{a, b} {
				for range rng.IntN(3) { // 0 to 2 parts on each
					r.parts++
					r.shareOf(ep).n++
					parts = append(parts, testPart{r, ep})
				}
			}
			d.pending = append(d.pending, r)
		}
		rng.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		for i := 0; ; i++ {
			if err := d.commitDone(false); err != nil {
				t.Fatal(err)
			}
			// What the cursor and the file should say now.
			var want uint64
			for seq := uint64(1); seq <= n; seq++ {
				if !delivered(parts[i:], seq, nil) {
					break
				}
				want = seq
			}
			if got := d.Committed(); got != want {
				t.Fatalf("seed %d, after %d parts: cursor %d, want %d", seed, i, got, want)
			}
			rs, err := loadAcked(d.ackedPath, "gw", want)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			for seq := want + 1; seq <= n; seq++ {
				at := old
				if got, w := rs.isDone(seq, at), delivered(parts[i:], seq, nil); got != w {
					t.Fatalf("seed %d, after %d parts: record %d done %v, want %v", seed, i, seq, got, w)
				}
				for _, ep := range []*endpoint{a, b} {
					if !slices.ContainsFunc(d.pending, func(r *record) bool {
						return r.seq == seq && slices.ContainsFunc(r.at, func(s share) bool { return s.ep == ep })
					}) {
						continue // no part there: none on a restart either
					}
					got := rs.isDone(seq, at) || rs.applies(seq, at) && rs.delivered(ep.name, 42, seq)
					if w := delivered(parts[i:], seq, ep); got != w {
						t.Fatalf("seed %d, after %d parts: record %d on %s %v, want %v", seed, i, seq, ep.name, got, w)
					}
				}
			}
			if i == len(parts) {
				break
			}
			d.release([]*record{parts[i].r}, parts[i].ep)
		}
		if d.Committed() != n {
			t.Fatalf("seed %d: cursor %d at the end", seed, d.Committed())
		}
		d.Close()
		sp.Close()
	}
}

// testPart is a part of record r on ep.
type testPart struct {
	r  *record
	ep *endpoint
}

// delivered reports whether no part of record seq (on ep, or anywhere if
// ep is nil) is among those left.
func delivered(left []testPart, seq uint64, ep *endpoint) bool {
	for _, p := range left {
		if p.r.seq == seq && (ep == nil || p.ep == ep) {
			return false
		}
	}
	return true
}
