package lake

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// countsRow is what a file's counts tally of a row, read back by
// parquet-go.
type countsRow struct {
	Time     int64  `parquet:"timestamp"`
	Observed int64  `parquet:"observed_timestamp"`
	Number   int32  `parquet:"severity_number"`
	Text     string `parquet:"severity_text"`
	Service  string `parquet:"service_name"`
	Body     string `parquet:"body"`
}

type countsKey struct {
	svc, text string
	num       int32
	minute    int64
}

// tallyFile counts the rows of the Parquet file at p, and the bytes of
// their bodies, by service, severity and minute, reading them back with
// parquet-go, and returns them with the file's own counts (which must
// carry bytes).
func tallyFile(t *testing.T, p string) (fromRows, fromMeta map[countsKey][2]int64) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	fromRows = map[countsKey][2]int64{}
	r := parquet.NewGenericReader[countsRow](pf)
	rows := make([]countsRow, pf.NumRows())
	if n, err := r.Read(rows); int64(n) != pf.NumRows() {
		t.Fatalf("%s: read %d rows of %d: %v", p, n, pf.NumRows(), err)
	}
	for _, row := range rows {
		ts := row.Time
		if ts == 0 {
			ts = row.Observed
		}
		// The minute (m-1, m] of the time, by time arithmetic.
		m := time.Unix(0, ts).Truncate(time.Minute)
		if !m.Equal(time.Unix(0, ts)) {
			m = m.Add(time.Minute)
		}
		k := countsKey{row.Service, row.Text, row.Number, m.Unix() / 60}
		fromRows[k] = [2]int64{fromRows[k][0] + 1, fromRows[k][1] + int64(len(row.Body))}
	}
	v, ok := pf.Lookup(CountsKey)
	if !ok {
		t.Fatalf("%s: no %s", p, CountsKey)
	}
	c, err := ParseCounts(v)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if !c.HasBytes {
		t.Fatalf("%s: counts without bytes", p)
	}
	fromMeta = map[countsKey][2]int64{}
	for _, e := range c.Entries {
		k := countsKey{c.Names[e.Service], c.Names[e.Text], e.Number, e.Minute}
		fromMeta[k] = [2]int64{fromMeta[k][0] + e.N, fromMeta[k][1] + e.Bytes}
	}
	return fromRows, fromMeta
}

// TestIndexesWrittenAndMerged: every logs file the writer writes, and
// the file compaction merges them into, holds counts equal to a tally of
// its rows read back by parquet-go, and a body index that covers its
// rows (checkGrams: no row a needle's grams would miss).
func TestIndexesWrittenAndMerged(t *testing.T) {
	root := t.TempDir()
	cfg := DefaultWriterConfig()
	cfg.Dir, cfg.Clock, cfg.ManualFlush = root, func() time.Time { return testNow }, true
	w := newTestWriter(t, cfg)
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	for i := range 5 {
		start := hour.Add(time.Duration(5+7*i) * time.Minute)
		if _, err := w.Append(otlpwire.SignalLogs, "acme", synth.Logs(synth.Config{Seed: int64(i), Start: start, Resources: 3, ScopesPerResource: 2, TotalRecords: 3000})); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(uint64(10*i+1), uint64(10*i+5))); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "logs", "tenant=acme", "date=2030-05-01", "hour=10")
	check := func(when string, want int) {
		t.Helper()
		names := dirNames(t, dir)
		if len(names) != want {
			t.Fatalf("%s: files %v, want %d", when, names, want)
		}
		for _, n := range names {
			if !strings.HasSuffix(n, ".parquet") {
				continue
			}
			rows, meta := tallyFile(t, filepath.Join(dir, n))
			if len(rows) < 10 {
				t.Fatalf("%s: %s: %d counts: the test compares little", when, n, len(rows))
			}
			if !maps.Equal(rows, meta) {
				t.Errorf("%s: %s: counts %v, its rows %v", when, n, meta, rows)
			}
			if e := checkGrams(t, filepath.Join(dir, n)); e < 3 {
				t.Fatalf("%s: %s: %d blocks in the body index: the test checks little", when, n, e)
			}
		}
	}
	check("written", 5)
	c, err := Compact(context.Background(), root, 50, hour.Add(2*time.Hour), CompactOptions{})
	if err != nil || c.Merges != 1 {
		t.Fatalf("Compact = %+v, %v; want one merge", c, err)
	}
	check("merged", 1)
}

// TestParseCountsRefuses: a value damaged in any way is refused, not
// read as other counts.
func TestParseCountsRefuses(t *testing.T) {
	b := newCountsBuilder()
	b.add(CountsEntry{Service: b.name([]byte("a")), Text: b.name([]byte("INFO")), Number: 9, Minute: 29_000_000}, 3, 120)
	b.add(CountsEntry{Service: b.name([]byte("b")), Text: b.name([]byte("INFO")), Number: 9, Minute: 29_000_001}, 1, 40)
	c := b.result()
	c.HasBytes = true
	good := c.Marshal()
	if got, err := ParseCounts(good); err != nil || !equalCounts(got, c) {
		t.Fatalf("ParseCounts(Marshal(c)) = %+v, %v; want %+v", got, err, c)
	}
	bad := map[string]string{
		"empty":      "",
		"not base64": "!" + good[1:],
		"truncated":  good[:len(good)-2],
		"longer":     good + "AA",
		"version":    sealed([]byte{2}),
		"bit flip":   flipBit(good, 20),
		"no entries": good[:4],
	}
	for name, v := range bad {
		if got, err := ParseCounts(v); err == nil {
			t.Errorf("%s: ParseCounts(%q) = %+v, want an error", name, v, got)
		}
	}
}

// equalCounts compares two Counts.
func equalCounts(a, b Counts) bool {
	if a.HasBytes != b.HasBytes || len(a.Names) != len(b.Names) || len(a.Entries) != len(b.Entries) {
		return false
	}
	for i := range a.Names {
		if a.Names[i] != b.Names[i] {
			return false
		}
	}
	for i := range a.Entries {
		if a.Entries[i] != b.Entries[i] {
			return false
		}
	}
	return true
}

// FuzzParseCounts: ParseCounts never panics on any payload (sealed with
// a right checksum); what it accepts has
// entries in order, indexes in range and encodes back to a value that
// parses the same.
func FuzzParseCounts(f *testing.F) {
	b := newCountsBuilder()
	for i := range 50 {
		b.add(CountsEntry{Service: b.name([]byte{'s', byte('a' + i%3)}), Text: b.name([]byte{'t', byte('a' + i%5)}), Number: int32(i % 7), Minute: 29_000_000 + int64(i%11)}, int64(i+1), int64(40*i))
	}
	c := b.result()
	f.Add(payload(c.Marshal()))
	c.HasBytes = true
	f.Add(payload(c.Marshal()))
	f.Add(payload((&Counts{}).Marshal()))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseCounts(sealed(raw))
		if err != nil {
			return
		}
		for i, e := range c.Entries {
			if int(e.Service) >= len(c.Names) || int(e.Text) >= len(c.Names) || e.Service < 0 || e.Text < 0 || e.N <= 0 {
				t.Fatalf("entry %d %+v out of range", i, e)
			}
			if i > 0 && cmpCountsEntry(c.Entries[i-1], e) >= 0 {
				t.Fatalf("entry %d out of order", i)
			}
		}
		again, err := ParseCounts(c.Marshal())
		if err != nil || !equalCounts(again, c) {
			t.Fatalf("re-encoded counts parse as %+v, %v; want %+v", again, err, c)
		}
	})
}
