package lake

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/bloom"
)

// GramsRegionKey is the key-value metadata of a logs file whose body
// index (Grams) lies in a region of the file just before its footer
// instead of in GramsKey: its value is the region's length in bytes,
// decimal (docs/format/lake-parquet.md, "Grams region"). A reader finds
// the region from the file's last bytes without decoding the footer, and
// reads only the blocks of the filters a needle's grams select: opening
// a file and decoding its index was most of a needle's time once a
// query's files were more than the reader keeps open.
const GramsRegionKey = "wirehouse.grams.region"

// gramsMagic ends a grams region.
const gramsMagic = "WHG1"

// gramsTrailerLen is the length of a region's trailer: the table's
// length (4 bytes), the filters' length (8), the table's CRC-32C (4) and
// gramsMagic.
const gramsTrailerLen = 20

// ErrNoGramsRegion is returned by ReadGramsTable for a file that has no
// grams region before its footer.
var ErrNoGramsRegion = errors.New("no grams region")

// MarshalGramsRegion encodes g as a grams region. The filters are
// grouped by size (classes of filters of as many blocks); a class of K
// filters of B blocks is B runs, run i holding block i of each of its
// filters in order, then the CRC-32C of the run: a gram's hash picks
// the same block of every filter of a class, so testing it against
// every filter of the class reads one run. Then the table, then the
// trailer.
//
// The table: version, GramLen, the services (count, then each as length
// and bytes), the classes (count, then each as blocks and filters), then
// every entry, class by class: service, Min (zigzag), Max-Min, Rows.
func MarshalGramsRegion(g Grams) []byte {
	order := make([]int, len(g.Entries))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(g.Entries[a].Filter), len(g.Entries[b].Filter)) })
	size := gramsTrailerLen + 16
	for _, e := range g.Entries {
		size += len(e.Filter)*32 + 40
	}
	buf := make([]byte, 0, size)
	type class struct{ blocks, n int }
	var classes []class
	for start := 0; start < len(order); {
		b := len(g.Entries[order[start]].Filter)
		end := start
		for end < len(order) && len(g.Entries[order[end]].Filter) == b {
			end++
		}
		for blk := range b {
			run := len(buf)
			for _, i := range order[start:end] {
				for _, w := range g.Entries[i].Filter[blk] {
					buf = binary.LittleEndian.AppendUint32(buf, uint32(w))
				}
			}
			buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[run:], castagnoli))
		}
		classes = append(classes, class{b, end - start})
		start = end
	}
	filters := len(buf)
	buf = append(buf, gramsVersion, GramLen)
	buf = binary.AppendUvarint(buf, uint64(len(g.Services)))
	for _, s := range g.Services {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(classes)))
	for _, c := range classes {
		buf = binary.AppendUvarint(buf, uint64(c.blocks))
		buf = binary.AppendUvarint(buf, uint64(c.n))
	}
	for _, i := range order {
		e := &g.Entries[i]
		buf = binary.AppendUvarint(buf, uint64(e.Service))
		buf = binary.AppendVarint(buf, e.Min)
		buf = binary.AppendUvarint(buf, uint64(e.Max-e.Min))
		buf = binary.AppendUvarint(buf, uint64(e.Rows))
	}
	table := buf[filters:]
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(table)))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(filters))
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(table, castagnoli))
	return append(buf, gramsMagic...)
}

// GramsTable is the table of a file's grams region: its entries, without
// their filters, which stay in the file until a needle's grams are
// tested (Test).
type GramsTable struct {
	// Services are the service names the entries refer to, each once.
	Services []string
	// Entries, class by class; their Filter is nil.
	Entries []GramsEntry

	classes []gramsClass
	// Bytes is the table's size in memory, roughly.
	Bytes int64
	// RegionLen is the length of the region, in bytes: the value of
	// GramsRegionKey in the file's footer.
	RegionLen int64
}

// gramsClass is a class of filters of blocks blocks: entries
// [first, first+n) of the table, its runs from offset at in the file.
type gramsClass struct {
	blocks, first, n int
	at               int64
}

// runLen is the length of one of the class's runs, CRC included.
func (c *gramsClass) runLen() int64 { return int64(c.n)*32 + 4 }

// ReadGramsTable reads the table of the grams region of the file of
// size bytes that r reads: ErrNoGramsRegion if it has none, an error
// wrapping ErrMalformed if its table is damaged. It reads the file's
// last 8 bytes and the bytes before its footer, up to readAhead (more if
// the table is longer), and counts the bytes it read in *read.
func ReadGramsTable(r io.ReaderAt, size int64, read *int64) (*GramsTable, error) {
	var tail [8]byte
	if size < 8+gramsTrailerLen+4 {
		return nil, ErrNoGramsRegion
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, fmt.Errorf("read grams table: %w", err)
	}
	*read += 8
	if string(tail[4:]) != "PAR1" {
		return nil, ErrNoGramsRegion
	}
	end := size - 8 - int64(binary.LittleEndian.Uint32(tail[:4])) // the footer's start
	if end < 4+gramsTrailerLen {
		return nil, ErrNoGramsRegion
	}
	n := min(end-4, gramsReadAhead)
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, end-n); err != nil {
		return nil, fmt.Errorf("read grams table: %w", err)
	}
	*read += n
	tr := buf[n-gramsTrailerLen:]
	if string(tr[16:]) != gramsMagic {
		return nil, ErrNoGramsRegion
	}
	tableLen := int64(binary.LittleEndian.Uint32(tr))
	filtersLen := binary.LittleEndian.Uint64(tr[4:])
	regionLen := uint64(tableLen) + filtersLen + gramsTrailerLen
	if filtersLen > math.MaxInt64/2 || regionLen > uint64(end-4) {
		return nil, fmt.Errorf("read grams table: %w: region of %d bytes in %d", ErrMalformed, regionLen, end)
	}
	if tableLen+gramsTrailerLen > n {
		buf = make([]byte, tableLen+gramsTrailerLen)
		if _, err := r.ReadAt(buf, end-int64(len(buf))); err != nil {
			return nil, fmt.Errorf("read grams table: %w", err)
		}
		*read += int64(len(buf))
	}
	table := buf[len(buf)-gramsTrailerLen-int(tableLen) : len(buf)-gramsTrailerLen]
	if crc32.Checksum(table, castagnoli) != binary.LittleEndian.Uint32(tr[12:]) {
		return nil, fmt.Errorf("read grams table: %w: checksum mismatch", ErrMalformed)
	}
	t, err := parseGramsTable(table, end-int64(regionLen), int64(filtersLen))
	if err != nil {
		return nil, fmt.Errorf("read grams table: %w", err)
	}
	t.RegionLen = int64(regionLen)
	return t, nil
}

// gramsReadAhead is how many bytes before a file's footer ReadGramsTable
// reads at first: the tables of the loader's files fit (a few hundred
// bytes for 25,000 logs).
const gramsReadAhead = 4 << 10

// parseGramsTable decodes table, of a region whose filters start at
// offset at in the file and are filtersLen bytes, checking every index
// and length.
func parseGramsTable(table []byte, at, filtersLen int64) (*GramsTable, error) {
	if len(table) < 2 || table[0] != gramsVersion || table[1] != GramLen {
		return nil, fmt.Errorf("%w: unknown version", ErrMalformed)
	}
	d := countsDecoder{buf: table[2:]}
	t := &GramsTable{Services: d.strings()}
	nc := d.uvarint(uint64(len(d.buf)))
	var total int64
	start := at
	for range nc {
		c := gramsClass{blocks: int(d.uvarint(1 << 24)), n: int(d.uvarint(uint64(len(d.buf)) / 4))} // an entry takes 4 bytes at least
		if d.err == nil && (c.blocks == 0 || c.n == 0) {
			d.err = ErrMalformed
		}
		if d.err != nil {
			break
		}
		c.first, c.at = int(total), at
		total += int64(c.n)
		if total > int64(len(table)) || at-start > filtersLen {
			d.err = ErrMalformed
			break
		}
		at += int64(c.blocks) * c.runLen()
		t.classes = append(t.classes, c)
	}
	if d.err == nil && (at-start != filtersLen || total > int64(len(d.buf))/4 || total > 0 && len(t.Services) == 0) {
		d.err = ErrMalformed
	}
	if d.err != nil {
		return nil, d.err
	}
	t.Entries = make([]GramsEntry, 0, total)
	for range total {
		e := d.gramsEntry(len(t.Services))
		if d.err == nil && e.Rows == 0 {
			d.err = ErrMalformed
		}
		if d.err != nil {
			break
		}
		t.Entries = append(t.Entries, e)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.err = ErrMalformed
	}
	if d.err != nil {
		return nil, d.err
	}
	t.Bytes = int64(len(t.Entries))*int64(unsafeEntrySize) + int64(len(t.classes))*48 + 64
	for _, s := range t.Services {
		t.Bytes += int64(len(s)) + 16
	}
	return t, nil
}

// unsafeEntrySize is a GramsEntry's size in memory.
const unsafeEntrySize = 64

// Rows is the number of rows the table covers.
func (t *GramsTable) Rows() int64 {
	var n int64
	for _, e := range t.Entries {
		n += e.Rows
	}
	return n
}

// Test clears alive[i] (one per entry) for each entry whose filter lacks
// one of hashes: the block of each class that a hash picks is read from
// r, one run for all the class's entries, and only while some entry of
// the class is alive. It adds the bytes read to *read. A run whose
// checksum does not match is an error wrapping ErrMalformed.
func (t *GramsTable) Test(r io.ReaderAt, hashes []uint64, alive []bool, read *int64) error {
	if len(alive) != len(t.Entries) {
		return fmt.Errorf("test grams: %d alive for %d entries", len(alive), len(t.Entries))
	}
	var buf []byte
	for ci := range t.classes {
		c := &t.classes[ci]
		live := alive[c.first : c.first+c.n]
		for _, h := range hashes {
			if !slices.Contains(live, true) {
				break
			}
			blk := int64(uint64(uint32(h>>32)) * uint64(c.blocks) >> 32) // the block parquet-go's filter picks
			if cap(buf) < int(c.runLen()) {
				buf = make([]byte, c.runLen())
			}
			run := buf[:c.runLen()]
			if _, err := r.ReadAt(run, c.at+blk*c.runLen()); err != nil {
				return fmt.Errorf("test grams: %w", err)
			}
			*read += int64(len(run))
			body := run[:len(run)-4]
			if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(run[len(body):]) {
				return fmt.Errorf("test grams: %w: checksum mismatch", ErrMalformed)
			}
			for k := range live {
				if live[k] {
					var b bloom.Block
					for w := range b {
						b[w] = bloom.Word(binary.LittleEndian.Uint32(body[32*k+4*w:]))
					}
					live[k] = b.Check(uint32(h))
				}
			}
		}
	}
	return nil
}

// ReadGrams reads the whole grams region of a file (ReadGramsTable, then
// every run) as Grams, the entries in the table's order.
func ReadGrams(r io.ReaderAt, size int64) (Grams, error) {
	var read int64
	t, err := ReadGramsTable(r, size, &read)
	if err != nil {
		return Grams{}, err
	}
	return t.readFilters(r)
}

// readFilters reads every run of the table's region.
func (t *GramsTable) readFilters(r io.ReaderAt) (Grams, error) {
	g := Grams{Services: t.Services, Entries: slices.Clone(t.Entries)}
	blocks := make([]bloom.Block, 0, len(t.Entries)*4)
	spans := make([][2]int, len(t.Entries))
	for ci := range t.classes {
		c := &t.classes[ci]
		buf := make([]byte, int64(c.blocks)*c.runLen())
		if _, err := r.ReadAt(buf, c.at); err != nil {
			return Grams{}, fmt.Errorf("read grams: %w", err)
		}
		base := len(blocks)
		blocks = slices.Grow(blocks, c.blocks*c.n)[:base+c.blocks*c.n]
		for i := range c.blocks {
			run := buf[int64(i)*c.runLen() : int64(i+1)*c.runLen()]
			body := run[:len(run)-4]
			if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(run[len(body):]) {
				return Grams{}, fmt.Errorf("read grams: %w: checksum mismatch", ErrMalformed)
			}
			for k := range c.n {
				b := &blocks[base+k*c.blocks+i]
				for w := range b {
					b[w] = bloom.Word(binary.LittleEndian.Uint32(body[32*k+4*w:]))
				}
			}
		}
		for k := range c.n {
			spans[c.first+k] = [2]int{base + k*c.blocks, base + (k+1)*c.blocks}
		}
	}
	for i := range g.Entries {
		s := spans[i]
		g.Entries[i].Filter = bloom.SplitBlockFilter(blocks[s[0]:s[1]:s[1]])
	}
	return g, nil
}

// FileGrams returns the body index of logs file pf, of size bytes read
// by r: its grams region, else its GramsKey value; false if it has
// neither, or one that is damaged or does not cover the file's rows.
func FileGrams(pf *parquet.File, r io.ReaderAt, size int64) (Grams, bool) {
	if v, ok := pf.Lookup(GramsRegionKey); ok {
		var read int64
		t, err := ReadGramsTable(r, size, &read)
		if err != nil || v != strconv.FormatInt(t.RegionLen, 10) || t.Rows() != pf.NumRows() {
			return Grams{}, false
		}
		g, err := t.readFilters(r)
		if err != nil {
			return Grams{}, false
		}
		return g, true
	}
	return TrustedMeta(pf, GramsKey, ParseGrams, Grams.Rows)
}

// SpliceRegion writes region into file f, a Parquet file written
// whole, just before its footer, and returns the file's new size.
// Offsets in the footer point before the footer, so they hold.
func SpliceRegion(f *os.File, region []byte) (int64, error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, fmt.Errorf("splice grams region: %w", err)
	}
	var tail [8]byte
	if size < 8 {
		return 0, fmt.Errorf("splice grams region: a file of %d bytes", size)
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return 0, fmt.Errorf("splice grams region: %w", err)
	}
	start := size - 8 - int64(binary.LittleEndian.Uint32(tail[:4]))
	if string(tail[4:]) != "PAR1" || start < 4 {
		return 0, fmt.Errorf("splice grams region: not a Parquet file")
	}
	footer := make([]byte, size-start)
	if _, err := f.ReadAt(footer, start); err != nil {
		return 0, fmt.Errorf("splice grams region: %w", err)
	}
	if _, err := f.WriteAt(region, start); err != nil {
		return 0, fmt.Errorf("splice grams region: %w", err)
	}
	if _, err := f.WriteAt(footer, start+int64(len(region))); err != nil {
		return 0, fmt.Errorf("splice grams region: %w", err)
	}
	return size + int64(len(region)), nil
}
