package lake

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/parquet-go/parquet-go/bloom"
)

// GramsKey is the key-value metadata of a logs file (schema version 2)
// that holds its body index: for each block of up to GramsBlockRows rows
// of one service, the block's range of timestamp values and a Parquet
// split-block bloom filter of the 4-byte substrings (grams) of its
// bodies (docs/format/lake-parquet.md, "Grams"). A needle (LogQL's |=,
// a substring) of GramLen bytes or more can be in a block only if each
// of its grams is in the block's filter: a query reads only the rows of
// the blocks that may hold it, and no file whose blocks all refuse it.
const GramsKey = "wirehouse.grams"

// GramLen is the length of an indexed substring.
const GramLen = 4

// GramsBlockRows is the most rows a block of the index covers.
const GramsBlockRows = 1024

// gramsVersion is the first byte of an encoded Grams.
const gramsVersion = 1

// gramsFill is the share of a filter's bits set that the writer folds
// a filter down to at most: a gram not in the block passes with
// probability about gramsFill^8 (3 %), a needle of n grams about 3 %^n.
const gramsFill = 0.65

// Grams is a logs file's body index.
type Grams struct {
	// Services are the service names the entries refer to, each once.
	Services []string
	// Entries, one a block, in no particular order.
	Entries []GramsEntry
}

// GramsEntry is one block of rows of one service: its rows' timestamp
// values (the column's, 0 for a record without a time) lie in [Min, Max].
type GramsEntry struct {
	Service  int32 // index in Grams.Services
	Min, Max int64
	Rows     int64
	Filter   bloom.SplitBlockFilter // of the grams' GramHash
}

// GramHash is the hash of the gram b[:GramLen] in a filter.
func GramHash(b []byte) uint64 {
	return bloom.XXH64{}.Sum64Uint32(binary.LittleEndian.Uint32(b))
}

// AppendGramHashes appends to dst the hashes of needle's grams (none if
// it is shorter than GramLen, when the index cannot help), each once.
func AppendGramHashes(dst []uint64, needle []byte) []uint64 {
	start := len(dst)
next:
	for i := 0; i+GramLen <= len(needle); i++ {
		h := GramHash(needle[i:])
		for _, x := range dst[start:] {
			if x == h {
				continue next
			}
		}
		dst = append(dst, h)
	}
	return dst
}

// MayHold reports whether the block may hold a body with every gram
// hashed in hashes.
func (e *GramsEntry) MayHold(hashes []uint64) bool {
	for _, h := range hashes {
		if !e.Filter.Check(h) {
			return false
		}
	}
	return true
}

// gramsBuilder makes the index of rows given service run by service
// run, block by block.
type gramsBuilder struct {
	g        Grams
	index    map[string]int32
	grams    []uint32
	hashes   []uint64
	scratch  bloom.SplitBlockFilter
	cur      GramsEntry
	open     bool
	lastName []byte
}

func newGramsBuilder() *gramsBuilder { return &gramsBuilder{index: map[string]int32{}} }

// add adds a row: its service, timestamp value and body.
func (b *gramsBuilder) add(service []byte, ts int64, body []byte) {
	if !b.open || b.cur.Rows == GramsBlockRows || string(service) != string(b.lastName) {
		b.flush()
		i, ok := b.index[string(service)]
		if !ok {
			i = int32(len(b.g.Services))
			b.g.Services = append(b.g.Services, string(service))
			b.index[b.g.Services[i]] = i
		}
		b.lastName = append(b.lastName[:0], service...)
		b.cur, b.open = GramsEntry{Service: i, Min: ts, Max: ts}, true
	}
	b.cur.Rows++
	b.cur.Min, b.cur.Max = min(b.cur.Min, ts), max(b.cur.Max, ts)
	for i := 0; i+GramLen <= len(body); i++ {
		b.grams = append(b.grams, binary.LittleEndian.Uint32(body[i:]))
	}
}

// flush ends the open block: its filter is made of the grams gathered,
// in a filter large enough for all of them as distinct, then folded.
func (b *gramsBuilder) flush() {
	if !b.open {
		return
	}
	b.open = false
	n := max(1, 1<<bits.Len64(uint64(len(b.grams))*12/256)) // 12 bits a gram, a power of two blocks
	if cap(b.scratch) < n {
		b.scratch = make(bloom.SplitBlockFilter, n)
	}
	f := b.scratch[:n]
	f.Reset()
	if cap(b.hashes) < len(b.grams) {
		b.hashes = make([]uint64, len(b.grams))
	}
	h := b.hashes[:len(b.grams)]
	bloom.XXH64{}.MultiSum64Uint32(h, b.grams)
	f.InsertBulk(h)
	b.grams = b.grams[:0]
	b.cur.Filter = fold(f)
	b.g.Entries = append(b.g.Entries, b.cur)
}

// fold returns a copy of f halved as many times as keeps its share of
// bits set at most gramsFill. Halving ORs blocks 2i and 2i+1 into i:
// parquet-go picks a key's block as (h>>32)*n>>32, so the result is
// the filter of n/2 blocks with the same keys.
func fold(f bloom.SplitBlockFilter) bloom.SplitBlockFilter {
	set := 0
	for i := range f {
		for _, w := range f[i] {
			set += bits.OnesCount32(uint32(w))
		}
	}
	p := float64(set) / float64(len(f)*256)
	k := 0 // halvings: the share after k is 1-(1-p)^(2^k)
	for len(f)>>(k+1) >= 1 && 1-math.Pow(1-p, float64(int(2)<<k)) <= gramsFill {
		k++
	}
	out := make(bloom.SplitBlockFilter, len(f)>>k)
	for i := range f {
		o := &out[i>>k]
		for w := range o {
			o[w] |= f[i][w]
		}
	}
	return out
}

// result ends the last block and returns the index.
func (b *gramsBuilder) result() Grams {
	b.flush()
	return b.g
}

// logGrams makes the index of rows sel of r, in that order.
func logGrams(r *LogRows, sel []int32) Grams {
	b := newGramsBuilder()
	for _, i := range sel {
		b.add(r.ServiceName.At(int(i)), r.Time[i], r.Body.At(int(i)))
	}
	return b.result()
}

// MergeGrams returns the index of a file holding the rows of files with
// indexes in: their entries, service names merged.
func MergeGrams(in ...Grams) Grams {
	var out Grams
	index := map[string]int32{}
	for _, g := range in {
		ids := make([]int32, len(g.Services))
		for i, s := range g.Services {
			j, ok := index[s]
			if !ok {
				j = int32(len(out.Services))
				out.Services = append(out.Services, s)
				index[s] = j
			}
			ids[i] = j
		}
		for _, e := range g.Entries {
			e.Service = ids[e.Service]
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// Rows is the number of rows the index covers.
func (g Grams) Rows() int64 {
	var n int64
	for _, e := range g.Entries {
		n += e.Rows
	}
	return n
}

// Marshal encodes g as the value of GramsKey: base64 (standard, no
// padding) of a version byte, GramLen as a byte, the services (count,
// then each as length and bytes) and the entries (count, then each as
// service, Min (zigzag), Max-Min, Rows, the filter's 32-byte blocks and
// their bytes, little-endian words), then the CRC-32C of those bytes.
func (g Grams) Marshal() string {
	size := 16
	for _, s := range g.Services {
		size += len(s) + 2
	}
	for _, e := range g.Entries {
		size += 40 + len(e.Filter)*32
	}
	buf := append(make([]byte, 0, size), gramsVersion, GramLen)
	buf = binary.AppendUvarint(buf, uint64(len(g.Services)))
	for _, s := range g.Services {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(g.Entries)))
	for _, e := range g.Entries {
		buf = binary.AppendUvarint(buf, uint64(e.Service))
		buf = binary.AppendVarint(buf, e.Min)
		buf = binary.AppendUvarint(buf, uint64(e.Max-e.Min))
		buf = binary.AppendUvarint(buf, uint64(e.Rows))
		buf = binary.AppendUvarint(buf, uint64(len(e.Filter)))
		for _, blk := range e.Filter {
			for _, w := range blk {
				buf = binary.LittleEndian.AppendUint32(buf, uint32(w))
			}
		}
	}
	return sealed(buf)
}

// gramsEntry reads an entry's service (one of services), Min, Max-Min
// and Rows, checking that Max does not overflow.
func (d *countsDecoder) gramsEntry(services int) GramsEntry {
	e := GramsEntry{Service: int32(d.uvarint(uint64(services - 1)))}
	e.Min = d.varint(math.MinInt64, math.MaxInt64)
	width := d.uvarint(math.MaxUint64)
	e.Max = e.Min + int64(width)
	if d.err == nil && (width > math.MaxInt64 || e.Max < e.Min) {
		d.err = ErrMalformed
	}
	e.Rows = int64(d.uvarint(1 << 40))
	return e
}

// ParseGrams decodes a value of GramsKey, checking every index and
// length (not that it matches the file: compare Rows with the file's
// rows).
func ParseGrams(s string) (Grams, error) {
	buf, err := unseal(s)
	if err != nil {
		return Grams{}, fmt.Errorf("parse grams: %w", err)
	}
	if len(buf) < 2 || buf[0] != gramsVersion || buf[1] != GramLen {
		return Grams{}, fmt.Errorf("parse grams: %w: unknown version", ErrMalformed)
	}
	d := countsDecoder{buf: buf[2:]}
	g := Grams{Services: d.strings()}
	ne := d.uvarint(uint64(len(d.buf)) / 37) // an entry takes 37 bytes at least
	if ne > 0 && len(g.Services) == 0 {
		d.err = ErrMalformed
	}
	g.Entries = make([]GramsEntry, 0, ne)
	// Every filter in one array, so that each is aligned; allocated once,
	// for the most blocks the rest of the value can hold (growing it block
	// by block was 40 % of parsing a file's index).
	blocks := make([]bloom.Block, 0, len(d.buf)/32)
	spans := make([][2]int, 0, ne)
	for range ne {
		e := d.gramsEntry(len(g.Services))
		nb := d.uvarint(uint64(len(d.buf)) / 32)
		if d.err == nil && (nb == 0 || e.Rows == 0 || nb > uint64(len(d.buf))/32) {
			d.err = ErrMalformed
		}
		if d.err != nil {
			break
		}
		spans = append(spans, [2]int{len(blocks), len(blocks) + int(nb)})
		for range nb {
			var blk bloom.Block
			for w := range blk {
				blk[w] = bloom.Word(binary.LittleEndian.Uint32(d.buf[4*w:]))
			}
			blocks = append(blocks, blk)
			d.buf = d.buf[32:]
		}
		g.Entries = append(g.Entries, e)
	}
	if d.err == nil && len(d.buf) != 0 {
		d.err = ErrMalformed
	}
	if d.err != nil {
		return Grams{}, fmt.Errorf("parse grams: %w", d.err)
	}
	for i := range g.Entries {
		g.Entries[i].Filter = bloom.SplitBlockFilter(blocks[spans[i][0]:spans[i][1]:spans[i][1]])
	}
	return g, nil
}
