package lake

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/bloom"
)

// gramsRow is what a file's body index covers of a row, read back by
// parquet-go.
type gramsRow struct {
	Time    int64   `parquet:"timestamp"`
	Body    *string `parquet:"body,optional"`
	Service string  `parquet:"service_name"`
}

// checkGrams fails unless the body index of the Parquet file at p
// covers each of its rows (read back by parquet-go) once, in an entry of
// its service whose range holds its timestamp and whose filter holds
// every gram of its body.
func checkGrams(t *testing.T, p string) (entries int) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pf.Lookup(GramsKey); ok {
		t.Fatalf("%s: the index in %s, not in a region", p, GramsKey)
	}
	if _, ok := pf.Lookup(GramsRegionKey); !ok {
		t.Fatalf("%s: no %s", p, GramsRegionKey)
	}
	g, ok := FileGrams(pf, bytes.NewReader(b), int64(len(b)))
	if !ok {
		t.Fatalf("%s: no body index read", p)
	}
	var read int64
	table, err := ReadGramsTable(bytes.NewReader(b), int64(len(b)), &read)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	if g.Rows() != pf.NumRows() {
		t.Fatalf("%s: the index covers %d rows, the file holds %d", p, g.Rows(), pf.NumRows())
	}
	rows := make([]gramsRow, pf.NumRows())
	if n, err := parquet.NewGenericReader[gramsRow](pf).Read(rows); int64(n) != pf.NumRows() {
		t.Fatalf("%s: read %d rows of %d: %v", p, n, pf.NumRows(), err)
	}
	var hashes []uint64
	for i, row := range rows {
		body := ""
		if row.Body != nil {
			body = *row.Body
		}
		hashes = AppendGramHashes(hashes[:0], []byte(body))
		held := false
		for _, e := range g.Entries {
			if g.Services[e.Service] == row.Service && e.Min <= row.Time && row.Time <= e.Max && e.MayHold(hashes) {
				held = true
				break
			}
		}
		if !held {
			t.Fatalf("%s: row %d (%s, %d, %q): no entry of the index holds it", p, i, row.Service, row.Time, body)
		}
		// The table's test, reading runs of the region, answers as the
		// filters do, entry by entry.
		if i%97 == 0 {
			checkTableTest(t, fmt.Sprintf("%s: row %d", p, i), table, b, hashes, g)
		}
	}
	return len(g.Entries)
}

// TestFoldIsSmallerFilter: a filter folded k times holds the same bits
// as one of 1/2^k the blocks with the same keys inserted, which is what
// lets the writer size a block's filter after filling it.
func TestFoldIsSmallerFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, keys := range []int{0, 1, 10, 300, 5000} {
		big := make(bloom.SplitBlockFilter, 1024)
		hs := make([]uint64, keys)
		for i := range hs {
			hs[i] = r.Uint64()
		}
		big.InsertBulk(hs)
		folded := fold(big)
		small := make(bloom.SplitBlockFilter, len(folded))
		small.InsertBulk(hs)
		if !bytes.Equal(folded.Bytes(), small.Bytes()) {
			t.Fatalf("%d keys: the filter folded to %d blocks differs from one of %d blocks", keys, len(folded), len(small))
		}
		if keys >= 300 {
			set := 0
			for _, x := range folded.Bytes() {
				for ; x != 0; x &= x - 1 {
					set++
				}
			}
			if share := float64(set) / float64(len(folded)*256); share > gramsFill || share < gramsFill/4 {
				t.Errorf("%d keys: %d blocks with %.2f of their bits set, want about %.2f", keys, len(folded), share, gramsFill)
			}
		}
		for _, h := range hs {
			if !folded.Check(h) {
				t.Fatalf("%d keys: key %x lost by folding", keys, h)
			}
		}
	}
}

// TestParseGramsRefuses: a damaged index is refused.
func TestParseGramsRefuses(t *testing.T) {
	b := newGramsBuilder()
	b.add([]byte("a"), 10, []byte("hello world"))
	b.add([]byte("b"), 20, []byte("cache miss for key session:0badf00d"))
	g := b.result()
	good := g.Marshal()
	got, err := ParseGrams(good)
	if err != nil || len(got.Entries) != 2 || got.Rows() != 2 || !got.Entries[1].MayHold(AppendGramHashes(nil, []byte("0badf00d"))) {
		t.Fatalf("ParseGrams(Marshal(g)) = %+v, %v", got, err)
	}
	if got.Entries[0].MayHold(AppendGramHashes(nil, []byte("0badf00d"))) && got.Entries[0].MayHold(AppendGramHashes(nil, []byte("session"))) {
		t.Errorf("the first block holds the second's grams: the filter refuses nothing")
	}
	raw := make([]byte, 0, 64)
	raw = append(raw, gramsVersion, GramLen)
	raw = binary.AppendUvarint(raw, 1)
	raw = append(raw, 1, 'a')
	raw = binary.AppendUvarint(raw, 1) // one entry, no bytes for it
	for name, v := range map[string]string{
		"empty":      "",
		"truncated":  good[:len(good)-3],
		"longer":     good + "AAAA",
		"version":    sealed([]byte{2, GramLen}),
		"gram":       sealed([]byte{gramsVersion, 3}),
		"bit flip":   flipBit(good, 100),
		"no entry":   encodeRaw(raw),
		"not base64": "*" + good[1:],
	} {
		if got, err := ParseGrams(v); err == nil {
			t.Errorf("%s: ParseGrams = %+v, want an error", name, got)
		}
	}
}

func encodeRaw(b []byte) string { return sealed(b) }

// FuzzParseGrams: ParseGrams never panics on any payload (sealed with a
// right checksum, so the fuzzer reaches the parser); what it accepts encodes back
// to a value that parses the same.
func FuzzParseGrams(f *testing.F) {
	b := newGramsBuilder()
	for i := range 40 {
		b.add([]byte{'s', byte('a' + i%3)}, int64(i*1000), []byte("GET /api/v1/orders/"+strings.Repeat("x", i)))
	}
	g := b.result()
	f.Add(payload(g.Marshal()))
	f.Add(payload((&Grams{}).Marshal()))
	f.Fuzz(func(t *testing.T, raw []byte) {
		g, err := ParseGrams(sealed(raw))
		if err != nil {
			return
		}
		for i, e := range g.Entries {
			if int(e.Service) >= len(g.Services) || e.Service < 0 || e.Rows <= 0 || e.Max < e.Min || len(e.Filter) == 0 {
				t.Fatalf("entry %d out of range: %+v", i, e)
			}
			e.MayHold([]uint64{1, 2, 3})
		}
		again, err := ParseGrams(g.Marshal())
		if err != nil || again.Marshal() != g.Marshal() {
			t.Fatalf("re-encoded grams parse as %+v, %v", again, err)
		}
	})
}

// flipBit returns the value v with one bit of its decoded bytes flipped.
func flipBit(v string, bit int) string {
	b, err := base64.RawStdEncoding.DecodeString(v)
	if err != nil {
		panic(err)
	}
	b[bit/8%len(b)] ^= 1 << (bit % 8)
	return base64.RawStdEncoding.EncodeToString(b)
}

// payload is what a sealed value seals: its bytes without the checksum.
func payload(v string) []byte {
	b, err := unseal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checkTableTest fails unless table's Test, reading the runs of the
// region in file, keeps alive exactly the entries whose filter in g
// (the same index read whole, in the table's order) holds hashes.
func checkTableTest(t *testing.T, what string, table *GramsTable, file []byte, hashes []uint64, g Grams) {
	t.Helper()
	alive := make([]bool, len(table.Entries))
	for i := range alive {
		alive[i] = true
	}
	var read int64
	if err := table.Test(bytes.NewReader(file), hashes, alive, &read); err != nil {
		t.Fatal(err)
	}
	for i, e := range g.Entries {
		if alive[i] != e.MayHold(hashes) {
			t.Fatalf("%s: entry %d: the region's test says %v, its filter %v", what, i, alive[i], e.MayHold(hashes))
		}
	}
}

// regionFile returns a file holding region before a footer of footer
// bytes, as the writer lays them out (SpliceRegion).
func regionFile(region []byte, footer int) []byte {
	b := append([]byte("PAR1"), region...)
	b = append(b, make([]byte, footer)...)
	b = binary.LittleEndian.AppendUint32(b, uint32(footer))
	return append(b, "PAR1"...)
}

// TestGramsRegionRoundTrip: an index read back from its region is the
// index written (filters, services, entries); its table's Test answers as
// each entry's filter does; a region a file does not end with is not
// found.
func TestGramsRegionRoundTrip(t *testing.T) {
	b := newGramsBuilder()
	for i := range 5000 {
		b.add([]byte{'s', byte('a' + i/1500)}, int64(i*1000), []byte(fmt.Sprintf("GET /api/v1/orders/%d took %dms %s", i*7919%10007, i%97, strings.Repeat("x", i%13))))
	}
	g := b.result()
	sizes := map[int]bool{}
	for _, e := range g.Entries {
		sizes[len(e.Filter)] = true
	}
	if len(sizes) < 2 {
		t.Fatalf("filters of %d sizes: the test covers one class", len(sizes))
	}
	for _, footer := range []int{0, 100, 10000} {
		file := regionFile(MarshalGramsRegion(g), footer)
		got, err := ReadGrams(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{} // by service and range: the filters' bytes
		key := func(svc string, e GramsEntry) string { return fmt.Sprint(svc, e.Min, e.Max, e.Rows) }
		for _, e := range g.Entries {
			k := key(g.Services[e.Service], e)
			want[k] = append(want[k], string(e.Filter.Bytes()))
		}
		for _, e := range got.Entries {
			k := key(got.Services[e.Service], e)
			if len(want[k]) == 0 || want[k][0] != string(e.Filter.Bytes()) {
				t.Fatalf("footer %d: entry %s read back differs", footer, k)
			}
			want[k] = want[k][1:]
		}
		if len(got.Entries) != len(g.Entries) {
			t.Fatalf("footer %d: %d entries read back, %d written", footer, len(got.Entries), len(g.Entries))
		}
		var read int64
		table, err := ReadGramsTable(bytes.NewReader(file), int64(len(file)), &read)
		if err != nil {
			t.Fatal(err)
		}
		for _, needle := range []string{"orders/1", "took 5ms", "xxxxxxxx", "absent!", "GET /api"} {
			checkTableTest(t, fmt.Sprintf("needle %q", needle), table, file, AppendGramHashes(nil, []byte(needle)), got)
		}
	}
	plain := regionFile(nil, 50)
	if _, err := ReadGramsTable(bytes.NewReader(plain), int64(len(plain)), new(int64)); !errors.Is(err, ErrNoGramsRegion) {
		t.Fatalf("a file without a region: %v, want ErrNoGramsRegion", err)
	}
}

// FuzzGramsRegion: a file whose region is filters then a table given by
// the fuzzer (the table's checksum right, so that the parser is reached)
// never panics ReadGramsTable, Test or ReadGrams; an index read whole
// writes a region that reads back the same.
func FuzzGramsRegion(f *testing.F) {
	// Small seeds: the fuzzer minimizes each input it finds new, and
	// minimizing one of a few kilobytes stalls it for minutes.
	b := newGramsBuilder()
	for i := range 60 {
		b.add([]byte{'s', byte('a' + i/20)}, int64(i*1000), []byte(fmt.Sprintf("GET /api/v1/orders/%d %s", i, strings.Repeat("x", i%7))))
	}
	for _, g := range []Grams{b.result(), {}} {
		region := MarshalGramsRegion(g)
		tr := region[len(region)-gramsTrailerLen:]
		tableLen := int(binary.LittleEndian.Uint32(tr))
		filters := len(region) - gramsTrailerLen - tableLen
		f.Add(region[:filters], region[filters:filters+tableLen], uint64(0x1234567890abcdef))
	}
	f.Fuzz(func(t *testing.T, filters, table []byte, h uint64) {
		region := append(slices.Clone(filters), table...)
		region = binary.LittleEndian.AppendUint32(region, uint32(len(table)))
		region = binary.LittleEndian.AppendUint64(region, uint64(len(filters)))
		region = binary.LittleEndian.AppendUint32(region, crc32.Checksum(table, castagnoli))
		region = append(region, gramsMagic...)
		file := regionFile(region, 7)
		var read int64
		tbl, err := ReadGramsTable(bytes.NewReader(file), int64(len(file)), &read)
		if err != nil {
			return
		}
		alive := make([]bool, len(tbl.Entries))
		for i := range alive {
			alive[i] = true
		}
		_ = tbl.Test(bytes.NewReader(file), []uint64{h, h >> 7, ^h}, alive, &read)
		g, err := ReadGrams(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			return
		}
		again := regionFile(MarshalGramsRegion(g), 3)
		g2, err := ReadGrams(bytes.NewReader(again), int64(len(again)))
		if err != nil || g2.Rows() != g.Rows() || len(g2.Entries) != len(g.Entries) {
			t.Fatalf("read back: %d entries, %v; want %d", len(g2.Entries), err, len(g.Entries))
		}
	})
}
