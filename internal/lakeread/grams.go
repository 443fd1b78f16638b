package lakeread

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
)

// narrowByGrams narrows q, for one file with body index g, to the
// blocks of rows that may hold each of q's needles (narrowEntries).
func narrowByGrams(g *lake.Grams, q *LogQuery) (nq *LogQuery, skip bool) {
	nq, skip, _ = narrowEntries(g.Services, g.Entries, q, func(hashes []uint64, alive []bool) error {
		for i, a := range alive {
			if a {
				alive[i] = g.Entries[i].MayHold(hashes)
			}
		}
		return nil
	})
	return nq, skip
}

// gramNeedles returns the gram hashes of each of q's needles of
// lake.GramLen bytes or more (Contains, and the literals every match of
// a Matches holds), kept in q: not for a q that goroutines share.
func gramNeedles(q *LogQuery) [][]uint64 {
	if q.needlesSet {
		return q.needles
	}
	var needles [][]uint64
	for _, c := range q.Contains {
		if h := lake.AppendGramHashes(nil, c); len(h) > 0 {
			needles = append(needles, h)
		}
	}
	for _, lits := range q.literals {
		for _, c := range lits {
			if h := lake.AppendGramHashes(nil, c); len(h) > 0 {
				needles = append(needles, h)
			}
		}
	}
	q.needles, q.needlesSet = needles, true
	return needles
}

// narrowEntries narrows q, for one file whose body index has entries
// (blocks of rows) naming services, to the blocks that may hold each of
// q's needles (gramNeedles): their services and timestamp ranges
// (LogQuery.within). test clears alive[i] for each entry i whose filter
// lacks one of hashes (the grams of one needle); it is called only with
// the entries q's services and range keep alive. skip: no block may,
// and the file need not be read. q itself comes back when no needle is
// long enough, or when the blocks that may hold the needles are half
// the file or more (reading it all costs about as much).
func narrowEntries(services []string, entries []lake.GramsEntry, q *LogQuery, test func(hashes []uint64, alive []bool) error) (nq *LogQuery, skip bool, err error) {
	needles := gramNeedles(q)
	if len(needles) == 0 {
		return q, false, nil
	}
	lo, hi := q.Start.UnixNano(), q.End.UnixNano()
	keep := make([]int8, len(services)) // 0 unknown, 1 kept, -1 not
	alive := make([]bool, len(entries))
	var total int64
	for i := range entries {
		e := &entries[i]
		total += e.Rows
		if keep[e.Service] == 0 {
			keep[e.Service] = -1
			if q.Service == nil || q.Service(services[e.Service]) {
				keep[e.Service] = 1
			}
		}
		// A timestamp of 0 is a record timed by its observed time,
		// which may be in range.
		alive[i] = keep[e.Service] > 0 && (e.Min <= 0 || e.Max >= lo && e.Min < hi)
	}
	for _, h := range needles {
		if !slices.Contains(alive, true) {
			break
		}
		if err := test(h, alive); err != nil {
			return nil, false, err
		}
	}
	found := make([]bool, len(services))
	var (
		spans [][2]int64
		rows  int64
	)
	for i, a := range alive {
		if a {
			e := &entries[i]
			found[e.Service] = true
			spans = append(spans, [2]int64{e.Min, e.Max})
			rows += e.Rows
		}
	}
	if len(spans) == 0 {
		return nil, true, nil
	}
	if rows*2 >= total {
		return q, false, nil
	}
	slices.SortFunc(spans, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	merged := spans[:1]
	for _, s := range spans[1:] {
		if last := &merged[len(merged)-1]; s[0] <= last[1] {
			last[1] = max(last[1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	kept := map[string]bool{}
	for i, f := range found {
		if f {
			kept[services[i]] = true
		}
	}
	out := *q
	out.Service = func(s string) bool { return kept[s] } // kept by q.Service already
	out.within = merged
	out.withinRows = rows
	return &out, false, nil
}

// inSpans reports whether v lies in one of spans (sorted, disjoint,
// inclusive).
func inSpans(spans [][2]int64, v int64) bool {
	i, _ := slices.BinarySearchFunc(spans, v, func(s [2]int64, v int64) int {
		switch {
		case s[1] < v:
			return -1
		case s[0] > v:
			return 1
		}
		return 0
	})
	return i < len(spans) && spans[i][0] <= v && v <= spans[i][1]
}

// rowsWithin returns the rows of sel (nil: all rows of rg) whose value
// of int64 column l (the timestamp) lies in one of spans; nil if none.
// A page whose index bounds meet no span is not read, nor one whose
// bounds lie in one span (all its rows kept).
func rowsWithin(rg parquet.RowGroup, l leaf, sel []int64, spans [][2]int64) ([]int64, error) {
	cc := rg.ColumnChunks()[l.index]
	n := rg.NumRows()
	keep, decode := []int64{}, []int64{}
	ci, err := cc.ColumnIndex()
	indexed := err == nil && pageRows(cc, n, sel, func(p int, first, end int64) {
		if p < ci.NumPages() && !ci.NullPage(p) && ci.NullCount(p) == 0 {
			mn, mx := ci.MinValue(p).Int64(), ci.MaxValue(p).Int64()
			i, _ := slices.BinarySearchFunc(spans, mn, func(s [2]int64, v int64) int {
				if s[1] < v {
					return -1
				}
				return 1
			}) // the first span ending at or after mn
			switch {
			case i == len(spans) || spans[i][0] > mx:
				return // no span meets the page
			case spans[i][0] <= mn && mx <= spans[i][1]:
				keep = rowsIn(keep, sel, first, end)
				return
			}
		}
		decode = rowsIn(decode, sel, first, end)
	})
	if !indexed {
		keep, decode = keep[:0], sel
	}
	if decode == nil || len(decode) > 0 {
		err = eachInt(rg, l, decode, func(row, v int64) {
			if inSpans(spans, v) {
				keep = append(keep, row)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	slices.Sort(keep)
	return keep, nil
}

// requiredLiterals returns substrings that every match of re holds: the
// case-sensitive literals among the top-level terms of its expression (a
// concatenation, captures unwrapped); none if it has none it can tell.
func requiredLiterals(re *regexp.Regexp) [][]byte {
	t, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil
	}
	t = t.Simplify()
	for t.Op == syntax.OpCapture {
		t = t.Sub[0]
	}
	terms := []*syntax.Regexp{t}
	if t.Op == syntax.OpConcat {
		terms = t.Sub
	}
	var out [][]byte
	for _, s := range terms {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		if s.Op == syntax.OpLiteral && s.Flags&syntax.FoldCase == 0 && len(s.Rune) > 0 {
			out = append(out, []byte(string(s.Rune)))
		}
	}
	return out
}

// GramsTablesBytes bounds the grams tables a Reader keeps (gramsTables):
// about 40 bytes a block of 1,024 logs, so the tables of 200 M logs.
const GramsTablesBytes = 8 << 20

// countsMemoBytes bounds the logs files' counts a Reader keeps
// (Reader.counts): about 30 bytes a service, severity and minute of a
// file, so those of ~100 M logs of the synthetic load.
const countsMemoBytes = 4 << 20

// IndexCacheBytes is the most the indexes a Reader keeps of files it
// has no open (grams tables, counts, trace-id indexes, span names,
// resource and span attribute values) hold, for the memory ceiling.
const IndexCacheBytes = GramsTablesBytes + countsMemoBytes + TraceIDsMemoBytes + NamesMemoBytes + ResValuesMemoBytes + SpanValuesMemoBytes

// FillingCacheBytes is the part of DefaultOpenFileBytes and
// IndexCacheBytes that fills with the lake's files as queries read them
// (open files' footers, trace-id indexes, span names, attribute values):
// serve's soft memory limit leaves it out and follows HeldBytes instead,
// so that ingest's garbage is collected as tightly as before the caches
// fill.
const FillingCacheBytes = DefaultOpenFileBytes + TraceIDsMemoBytes + NamesMemoBytes + ResValuesMemoBytes + SpanValuesMemoBytes

// HeldBytes is what the caches of FillingCacheBytes hold now.
func (r *Reader) HeldBytes() int64 {
	return r.files.held() + r.traceIDs.held() + r.names.held() + r.resValues.held() + r.spanValues.held()
}

// countsSize is what counts c cost countsMemoBytes.
func countsSize(c *lake.Counts) int64 {
	n := int64(len(c.Entries))*int64(unsafe.Sizeof(lake.CountsEntry{})) + 64
	for _, s := range c.Names {
		n += int64(len(s)) + 16
	}
	return n
}

// gramsOpenFiles is how many of the files whose tables it keeps
// gramsTables also keeps open, for their runs: opening a file for each
// needle was a fifth of a rare needle's time over 10 M logs.
const gramsOpenFiles = 1024

// gramsTables keeps the tables of logs files' grams regions
// (lake.GramsTable), read once each, so that a needle tests a file's
// blocks reading only the runs its grams pick, without opening the
// file: a query over more files than the reader keeps open (OpenFiles)
// opened and decoded each file's index again, which was most of a rare
// needle's time over 10 M logs. A table is admitted while the tables
// kept are under max bytes and kept until a listing no longer shows its
// file (keepOnly): a query over more files than fit neither evicts the
// tables of the files kept nor is slower than reading its own. The
// first gramsOpenFiles tables keep their file open too, shared by the
// queries (ReadAt on it is safe for concurrent use), closed when the
// last query holding it lets go after the table is dropped. A nil table
// is a file with no region (or a damaged one): read as before. Safe for
// concurrent use; the tables are shared and never changed.
type gramsTables struct {
	mu   sync.Mutex
	max  int64
	used int64
	open int // entries with an object
	m    map[fileKey]*gramsEntry
	gone map[bucket.Object]*gramsEntry // dropped, their object still held
}

// gramsEntry is a kept table, and its file if kept open.
type gramsEntry struct {
	t       *lake.GramsTable
	obj     bucket.Object // nil: opened for each use
	refs    int           // queries holding obj
	dropped bool          // out of the map: obj closed at refs 0
}

// noTableBytes is what a file without a table costs the bound.
const noTableBytes = 64

func (e *gramsEntry) bytes() int64 {
	if e.t == nil {
		return noTableBytes
	}
	return e.t.Bytes
}

// get returns the table kept for k, and its open file (nil if none is
// kept open), held until release.
func (c *gramsTables) get(k fileKey) (t *lake.GramsTable, obj bucket.Object, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return nil, nil, false
	}
	if e.obj != nil {
		e.refs++
	}
	return e.t, e.obj, true
}

// release lets go of the open file of k's table that get gave.
func (c *gramsTables) release(k fileKey, obj bucket.Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if ok && e.obj == obj {
		e.refs--
		return
	}
	// Dropped meanwhile: find it among the dropped by its object.
	if d, ok := c.gone[obj]; ok {
		d.refs--
		if d.refs == 0 {
			delete(c.gone, obj)
			obj.Close()
		}
	}
}

// put keeps table t of k, and obj (its open file) if under
// gramsOpenFiles; kept reports whether it took obj: then the caller
// holds it, as get's, until release, and must not close it.
func (c *gramsTables) put(k fileKey, t *lake.GramsTable, obj bucket.Object) (kept bool) {
	e := &gramsEntry{t: t}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok || c.used+e.bytes() > c.max {
		return false
	}
	if c.m == nil {
		c.m = map[fileKey]*gramsEntry{}
	}
	if t != nil && obj != nil && c.open < gramsOpenFiles {
		e.obj, e.refs, kept = obj, 1, true
		c.open++
	}
	c.m[k] = e
	c.used += e.bytes()
	return kept
}

// keepOnly drops the tables of files under prefix not in listed.
func (c *gramsTables) keepOnly(prefix string, listed map[fileKey]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if strings.HasPrefix(k.name, prefix) && !listed[k] {
			c.dropLocked(k, e)
		}
	}
}

// close drops every table.
func (c *gramsTables) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		c.dropLocked(k, e)
	}
}

func (c *gramsTables) dropLocked(k fileKey, e *gramsEntry) {
	delete(c.m, k)
	c.used -= e.bytes()
	if e.obj == nil {
		return
	}
	c.open--
	if e.refs == 0 {
		e.obj.Close()
		return
	}
	if c.gone == nil {
		c.gone = map[bucket.Object]*gramsEntry{}
	}
	c.gone[e.obj] = e
}

// gramsAnswer is what a file's grams region answers of a query before
// the file is opened (gramsFirst).
type gramsAnswer struct {
	ok   bool      // the region answered; if not, the file is read as before
	skip bool      // no block of the file may hold the needles: not opened
	q    *LogQuery // the query narrowed to the blocks that may
}

// gramsFirst narrows q for logs file f by the file's grams region before
// the file is opened (narrowEntries): it reads the region's table (or
// takes it from the reader's) and the runs of filters q's needles' grams
// pick, charging the bytes to fq's budget. A table read is trusted once
// the file's footer names a region of its length and the file holds the
// rows the table covers (regionFits). The region does not answer
// (ok false) without a needle, without a region or with a damaged one,
// with the indexes off and on an object store (Remote, where a read is
// a request): the caller reads the file as before.
func (r *Reader) gramsFirst(ctx context.Context, fq *fileQuery, f lake.DataFile, q *LogQuery) (a gramsAnswer, err error) {
	if r.cfg.NoIndexes || r.cfg.Remote || len(gramNeedles(q)) == 0 {
		return gramsAnswer{}, nil
	}
	var read int64
	defer func() {
		if fq.budget.left.Add(-read) < 0 && err == nil {
			a, err = gramsAnswer{}, &LimitError{What: "bytes read", Limit: r.cfg.MaxBytes}
		}
	}()
	t, obj, done, err := r.regionTable(ctx, f, &read)
	switch {
	case errors.Is(err, bucket.ErrNotFound):
		return gramsAnswer{ok: true, skip: true}, nil // removed by compaction or retention since the listing
	case err != nil:
		return gramsAnswer{}, wrapLimit(fmt.Errorf("lakeread: read %s: %w", f.Name, err))
	case t == nil:
		return gramsAnswer{}, nil
	}
	defer done()
	nq, skip, err := narrowEntries(t.Services, t.Entries, q, func(hashes []uint64, alive []bool) error {
		return t.Test(obj, hashes, alive, &read)
	})
	if err != nil {
		return gramsAnswer{}, nil // a damaged run: the file is read as before, its bodies scanned
	}
	return gramsAnswer{ok: true, skip: skip, q: nq}, nil
}

// regionTable returns the table of file f's grams region, kept by the
// reader or read now (adding the bytes to *read), and an object reading
// f, held until done. t nil: f has no region, or a damaged one, and is
// read as before.
func (r *Reader) regionTable(ctx context.Context, f lake.DataFile, read *int64) (t *lake.GramsTable, obj bucket.Object, done func(), err error) {
	k := keyOf(f)
	t, obj, known := r.tables.get(k)
	switch {
	case known && t == nil:
		return nil, nil, nil, nil
	case obj != nil:
		return t, obj, func() { r.tables.release(k, obj) }, nil
	}
	if obj, err = r.cfg.Bucket.Open(ctx, f.Name); err != nil {
		return nil, nil, nil, err
	}
	closeObj := func() { obj.Close() }
	if known {
		return t, obj, closeObj, nil
	}
	t, err = lake.ReadGramsTable(obj, obj.Size(), read)
	if err == nil {
		err = regionFits(obj, t, read)
	}
	if err != nil {
		obj.Close()
		if errors.Is(err, lake.ErrNoGramsRegion) || errors.Is(err, lake.ErrMalformed) {
			r.tables.put(k, nil, nil)
			return nil, nil, nil, nil
		}
		return nil, nil, nil, err
	}
	if r.tables.put(k, t, obj) {
		return t, obj, func() { r.tables.release(k, obj) }, nil // the table's now, held for this query
	}
	return t, obj, closeObj, nil
}

// regionFits checks that table t belongs to the file obj reads: its
// footer (decoded once here, without page indexes or filters: the
// region keeps it small) names a grams region of t's length, and the
// file holds the rows t covers. An error wrapping lake.ErrMalformed
// says it does not.
func regionFits(obj bucket.Object, t *lake.GramsTable, read *int64) error {
	var n atomic.Int64
	pf, err := parquet.OpenFile(countingReader{obj, &n}, obj.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	*read += n.Load()
	if err != nil {
		return fmt.Errorf("%w: %w", lake.ErrMalformed, err)
	}
	if v, _ := pf.Lookup(lake.GramsRegionKey); v != strconv.FormatInt(t.RegionLen, 10) || pf.NumRows() != t.Rows() {
		return fmt.Errorf("%w: the grams region does not fit its file", lake.ErrMalformed)
	}
	return nil
}
