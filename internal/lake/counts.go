package lake

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// CountsKey is the key-value metadata of a logs file (schema version 2)
// that holds its counts: how many records of each service and severity
// the file holds in each minute (docs/format/lake-parquet.md, "Counts").
// A volume or count query over whole minutes adds them up instead of
// reading the file's columns. The writer computes them from the rows it
// writes; compaction adds its inputs' up.
const CountsKey = "wirehouse.counts"

// CountsMinute is the width of a counts granule: records are counted by
// the minute (t-CountsMinute, t] holding their time, t a whole minute
// since the Unix epoch, left-open as LogQL's range windows are.
const CountsMinute = int64(60e9)

// maxMinute bounds a granule's minute, so that its time in nanoseconds
// fits an int64.
const maxMinute = (1<<63-1)/CountsMinute - 1

// countsVersion is the first byte of an encoded Counts: 1 without the
// entries' bytes, 2 with them.
const (
	countsVersion      = 1
	countsVersionBytes = 2
)

// Counts are a logs file's records tallied by service, severity text,
// severity number and minute.
type Counts struct {
	// Names are the service names and severity texts the entries
	// refer to, each once.
	Names []string
	// Entries, sorted by Service, Text, Number and Minute, each key once.
	Entries []CountsEntry
	// HasBytes says the entries' Bytes are the bytes of their records'
	// lines (a logs file's counts written since they carry them; span
	// counts and older logs counts have none).
	HasBytes bool
}

// CountsEntry is how many records of one service and severity fell in
// one minute.
type CountsEntry struct {
	Service, Text int32 // indexes in Counts.Names
	Number        int32 // severity number
	// Minute is the granule's end in minutes since the Unix epoch: the
	// records with time in ((Minute-1)*CountsMinute, Minute*CountsMinute].
	Minute int64
	N      int64
	// Bytes is the bytes of those records' bodies as text (the line Loki's
	// API gives), when Counts.HasBytes.
	Bytes int64
}

// Rows is the number of records the counts hold.
func (c Counts) Rows() int64 {
	var n int64
	for _, e := range c.Entries {
		n += e.N
	}
	return n
}

// TrustedMeta returns pf's value of key (CountsKey, GramsKey) parsed by
// parse, and true, if pf has one, it parses and it accounts for pf's
// rows (rows(value) == pf.NumRows()): only such a value may stand in for
// the file's columns, in a query or a merge.
func TrustedMeta[T any](pf *parquet.File, key string, parse func(string) (T, error), rows func(T) int64) (T, bool) {
	var zero T
	s, ok := pf.Lookup(key)
	if !ok {
		return zero, false
	}
	v, err := parse(s)
	if err != nil || rows(v) != pf.NumRows() {
		return zero, false
	}
	return v, true
}

// MinuteOf returns the granule of time ts, in minutes since the epoch:
// ceil(ts / CountsMinute).
func MinuteOf(ts int64) int64 {
	m := ts / CountsMinute // toward zero: the ceiling when ts < 0
	if ts > 0 && ts%CountsMinute != 0 {
		m++
	}
	return m
}

// countsBuilder tallies rows into Counts.
type countsBuilder struct {
	index  map[string]int32
	names  []string
	counts map[CountsEntry][2]int64 // N and Bytes zero in the key; the value N, Bytes
}

func newCountsBuilder() *countsBuilder {
	return &countsBuilder{index: map[string]int32{}, counts: map[CountsEntry][2]int64{}}
}

func (b *countsBuilder) name(s []byte) int32 {
	if i, ok := b.index[string(s)]; ok {
		return i
	}
	i := int32(len(b.names))
	b.names = append(b.names, string(s))
	b.index[b.names[i]] = i
	return i
}

// add counts n records of the key, of bytes bytes.
func (b *countsBuilder) add(k CountsEntry, n, bytes int64) {
	k.N, k.Bytes = 0, 0
	v := b.counts[k]
	b.counts[k] = [2]int64{v[0] + n, v[1] + bytes}
}

// counts returns what b tallied, entries sorted.
func (b *countsBuilder) result() Counts {
	c := Counts{Names: b.names, Entries: make([]CountsEntry, 0, len(b.counts))}
	for k, v := range b.counts {
		k.N, k.Bytes = v[0], v[1]
		c.Entries = append(c.Entries, k)
	}
	slices.SortFunc(c.Entries, cmpCountsEntry)
	return c
}

func cmpCountsEntry(a, b CountsEntry) int {
	switch {
	case a.Service != b.Service:
		return int(a.Service - b.Service)
	case a.Text != b.Text:
		return int(a.Text - b.Text)
	case a.Number != b.Number:
		if a.Number < b.Number {
			return -1
		}
		return 1
	case a.Minute != b.Minute:
		if a.Minute < b.Minute {
			return -1
		}
		return 1
	}
	return 0
}

// logCounts tallies rows sel of r: the counts of the file they make.
func logCounts(r *LogRows, sel []int32) Counts {
	b := newCountsBuilder()
	var (
		lastS, lastT []byte
		svc, text    int32 = -1, -1
	)
	b.tally(sel, func(i int32) (CountsEntry, bool) {
		ts := r.Time[i]
		if ts == 0 {
			ts = r.ObservedTime[i] // as readers take a record's time
		}
		s, t := r.ServiceName.At(int(i)), r.SeverityText.At(int(i))
		if svc < 0 || string(s) != string(lastS) {
			svc, lastS = b.name(s), s
		}
		if text < 0 || string(t) != string(lastT) {
			text, lastT = b.name(t), t
		}
		return CountsEntry{Service: svc, Text: text, Number: r.SeverityNumber[i], Minute: MinuteOf(ts), Bytes: int64(len(r.Body.At(int(i))))}, true
	})
	c := b.result()
	c.HasBytes = true
	return c
}

// tally adds the rows sel by their keys (key's, with the row's bytes in
// Bytes; false stops, and tally reports it), a run of rows with one key
// at a time.
func (b *countsBuilder) tally(sel []int32, key func(i int32) (CountsEntry, bool)) bool {
	var cur CountsEntry
	var run, bytes int64
	for _, i := range sel {
		k, ok := key(i)
		if !ok {
			return false
		}
		kb := k.Bytes
		k.Bytes = 0
		if k != cur {
			if run > 0 {
				b.add(cur, run, bytes)
			}
			cur, run, bytes = k, 0, 0
		}
		run++
		bytes += kb
	}
	if run > 0 {
		b.add(cur, run, bytes)
	}
	return true
}

// MergeCounts adds the counts of several files up: those of the file
// that holds all their rows.
func MergeCounts(in ...Counts) Counts {
	b := newCountsBuilder()
	hasBytes := len(in) > 0
	for _, c := range in {
		hasBytes = hasBytes && c.HasBytes
		ids := make([]int32, len(c.Names))
		for i, n := range c.Names {
			ids[i] = b.name([]byte(n))
		}
		for _, e := range c.Entries {
			e.Service, e.Text = ids[e.Service], ids[e.Text]
			b.add(e, e.N, e.Bytes)
		}
	}
	c := b.result()
	c.HasBytes = hasBytes // bytes known of every input, or of none
	if !hasBytes {
		for i := range c.Entries {
			c.Entries[i].Bytes = 0
		}
	}
	return c
}

// Marshal encodes c as the value of CountsKey: base64 (standard, no
// padding) of a version byte, the names (count, then each as length and
// bytes) and the entries (count, then each as service, text, number,
// minute less the previous entry's, N and, in version 2 (HasBytes),
// Bytes; unsigned or zigzag varints), then the CRC-32C of those bytes.
func (c Counts) Marshal() string {
	buf := []byte{countsVersion}
	if c.HasBytes {
		buf[0] = countsVersionBytes
	}
	buf = binary.AppendUvarint(buf, uint64(len(c.Names)))
	for _, n := range c.Names {
		buf = binary.AppendUvarint(buf, uint64(len(n)))
		buf = append(buf, n...)
	}
	buf = binary.AppendUvarint(buf, uint64(len(c.Entries)))
	var prev int64
	for _, e := range c.Entries {
		buf = binary.AppendUvarint(buf, uint64(e.Service))
		buf = binary.AppendUvarint(buf, uint64(e.Text))
		buf = binary.AppendVarint(buf, int64(e.Number))
		buf = binary.AppendVarint(buf, e.Minute-prev)
		buf = binary.AppendUvarint(buf, uint64(e.N))
		if c.HasBytes {
			buf = binary.AppendUvarint(buf, uint64(e.Bytes))
		}
		prev = e.Minute
	}
	return sealed(buf)
}

// castagnoli is the CRC-32C table that seals counts and grams values.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sealed returns the base64 (standard, no padding) of buf and its
// CRC-32C, little-endian.
func sealed(buf []byte) string {
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
	return base64.RawStdEncoding.EncodeToString(buf)
}

// unseal decodes a value sealed made, checking its CRC-32C.
func unseal(s string) ([]byte, error) {
	buf, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if len(buf) < 4 {
		return nil, ErrMalformed
	}
	body, sum := buf[:len(buf)-4], binary.LittleEndian.Uint32(buf[len(buf)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrMalformed)
	}
	return body, nil
}

// ErrMalformed is wrapped by the error of a malformed counts or grams
// value or grams region: a reader falls back to the columns.
var ErrMalformed = errors.New("malformed value")

// ParseCounts decodes a value of CountsKey. It checks every index, that
// the entries are sorted with each key once and every N positive, so a
// reader may trust a parsed value's shape (not that it matches the file:
// compare Rows with the file's rows).
func ParseCounts(s string) (Counts, error) {
	buf, err := unseal(s)
	if err != nil {
		return Counts{}, fmt.Errorf("parse counts: %w", err)
	}
	if len(buf) == 0 || buf[0] != countsVersion && buf[0] != countsVersionBytes {
		return Counts{}, fmt.Errorf("parse counts: %w: unknown version", ErrMalformed)
	}
	d := countsDecoder{buf: buf[1:]}
	c := Counts{Names: d.strings(), HasBytes: buf[0] == countsVersionBytes}
	ne := d.uvarint(uint64(len(d.buf)) / 5) // an entry takes 5 bytes at least
	if ne > 0 && len(c.Names) == 0 {
		d.err = ErrMalformed
	}
	c.Entries = make([]CountsEntry, 0, ne)
	var prev int64
	for range ne {
		e := CountsEntry{
			Service: int32(d.uvarint(uint64(len(c.Names) - 1))),
			Text:    int32(d.uvarint(uint64(len(c.Names) - 1))),
			Number:  int32(d.varint(-1<<31, 1<<31-1)),
		}
		e.Minute = prev + d.varint(-maxMinute, maxMinute)
		e.N = int64(d.uvarint(1 << 50))
		if c.HasBytes {
			e.Bytes = int64(d.uvarint(1 << 62))
		}
		if d.err == nil && (e.Minute < -maxMinute || e.Minute > maxMinute) {
			d.err = ErrMalformed
		}
		if d.err != nil {
			break
		}
		if e.N == 0 || len(c.Entries) > 0 && cmpCountsEntry(c.Entries[len(c.Entries)-1], e) >= 0 {
			return Counts{}, fmt.Errorf("parse counts: %w: entry %d out of order or empty", ErrMalformed, len(c.Entries))
		}
		c.Entries = append(c.Entries, e)
		prev = e.Minute
	}
	if d.err == nil && len(d.buf) != 0 {
		d.err = ErrMalformed
	}
	if d.err != nil {
		return Counts{}, fmt.Errorf("parse counts: %w", d.err)
	}
	return c, nil
}

// countsDecoder reads varints, keeping the first error.
type countsDecoder struct {
	buf []byte
	err error
}

// uvarint reads an unsigned varint no greater than max.
func (d *countsDecoder) uvarint(max uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 || v > max || len(d.buf) == 0 {
		d.err = ErrMalformed
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// strings reads a count, as a uvarint, and that many strings (bytes).
func (d *countsDecoder) strings() []string {
	n := d.uvarint(uint64(len(d.buf)))
	out := make([]string, 0, n)
	for range n {
		b := d.bytes()
		if d.err != nil {
			break
		}
		out = append(out, string(b))
	}
	return out
}

// bytes reads a length, as a uvarint, and that many bytes.
func (d *countsDecoder) bytes() []byte {
	l := d.uvarint(uint64(len(d.buf)))
	if d.err != nil {
		return nil
	}
	if l > uint64(len(d.buf)) {
		d.err = ErrMalformed
		return nil
	}
	b := d.buf[:l]
	d.buf = d.buf[l:]
	return b
}

// varint reads a signed varint in [lo, hi].
func (d *countsDecoder) varint(lo, hi int64) int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.buf)
	if n <= 0 || v < lo || v > hi {
		d.err = ErrMalformed
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

// SpanCountsKey is the key-value metadata of a spans file (schema
// version 2) that holds its span counts: how many spans of each service,
// kind, status code and root-ness start in each minute, in the encoding
// of CountsKey (docs/format/lake-parquet.md, "Span counts"). A TraceQL
// rate() or count_over_time() over whole minutes filtered and split by
// those fields adds them up instead of reading the file's columns. The
// writer computes them from the rows it writes; compaction adds its
// inputs' up. A file with a kind or status code past what Number packs
// has none.
const SpanCountsKey = "wirehouse.spancounts"

// SpanMinuteOf returns the span-counts granule of a span starting at ts:
// the minute [m, m+1) since the Unix epoch holding it (floor, right-open
// as TraceQL's steps).
func SpanMinuteOf(ts int64) int64 {
	m := ts / CountsMinute
	if ts < 0 && ts%CountsMinute != 0 {
		m--
	}
	return m
}

// SpanCountsNumber packs a span's kind (OTLP's number, 0 to 7), status
// code (0 to 3) and whether it is a root (no parent span id) into a span
// counts entry's Number: kind + 8*status + 32*root; false for a kind or
// code it cannot hold.
func SpanCountsNumber(kind, status int32, root bool) (int32, bool) {
	if kind < 0 || kind > 7 || status < 0 || status > 3 {
		return 0, false
	}
	n := kind + 8*status
	if root {
		n += 32
	}
	return n, true
}

// SpanCountsFields unpacks a span counts entry's Number (SpanCountsNumber).
func SpanCountsFields(n int32) (kind, status int32, root bool) {
	return n & 7, n >> 3 & 3, n&32 != 0
}

// spanCounts tallies rows sel of r: the span counts of the file they
// make; false if a row's kind or status code does not pack.
func spanCounts(r *SpanRows, sel []int32) (Counts, bool) {
	b := newCountsBuilder()
	none := b.name(nil) // Text: spans counts have none
	var lastS []byte
	svc := int32(-1)
	ok := b.tally(sel, func(i int32) (CountsEntry, bool) {
		s := r.ServiceName.At(int(i))
		if svc < 0 || string(s) != string(lastS) {
			svc, lastS = b.name(s), s
		}
		n, ok := SpanCountsNumber(r.Kind[i], r.StatusCode[i], len(r.ParentSpanID.At(int(i))) == 0)
		return CountsEntry{Service: svc, Text: none, Number: n, Minute: SpanMinuteOf(r.StartTime[i])}, ok
	})
	if !ok {
		return Counts{}, false
	}
	return b.result(), true
}
