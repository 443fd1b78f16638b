package lakeread

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// LogCountQuery selects log records for CountLogs as LogQuery does, and
// says how to tally them.
type LogCountQuery struct {
	// Start, End, Service and Contains select records as LogQuery's.
	Start, End time.Time
	Service    func(string) bool
	Contains   [][]byte
	// Bucket maps a record's time to its bucket's (any int64 the caller
	// chooses, e.g. the end of the step interval holding it): records
	// are counted per bucket. It must not be nil, and must not decrease
	// as t grows: a page of records whose first and last times share a
	// bucket is counted whole, from its index.
	Bucket func(t int64) int64
	// Severity counts by severity too; without it, every count's
	// severity is empty and the severity columns are not read.
	Severity bool
	// Bytes sums the bytes of the records' lines too (LogCount.Bytes),
	// from the files' counts alone: a file whose counts carry no bytes, or
	// do not answer the buckets whole (a bucket edge inside a minute), or
	// a query with Contains, makes CountLogs ErrNoByteCounts.
	Bytes bool

	// inOne, when set by countFile, says every record of the file being
	// read lies in [Start, End) and in bucket one (its counts' minutes
	// say so): the time columns are not read.
	inOne bool
	one   int64
}

// LogCount is how many records of a service and severity fell in a
// bucket.
type LogCount struct {
	Service        string
	SeverityText   string
	SeverityNumber int32
	Bucket         int64
	N              int64
	Bytes          int64 // of their lines, with LogCountQuery.Bytes
}

// ErrNoByteCounts is CountLogs' error for a LogCountQuery.Bytes that the
// files' counts cannot answer: the caller reads the lines instead.
var ErrNoByteCounts = errors.New("lakeread: the logs files' counts do not answer the bytes asked")

// countKey is a tally's key: the service's and severity text's indexes
// in the tally's names, the severity number and the bucket.
type countKey struct {
	svc, text, num int32
	bucket         int64
}

// tally counts records by service, severity and bucket, interning names.
type tally struct {
	names     []string
	nameBytes int64
	index     map[string]int32
	counts    map[countKey]int64
	bytes     map[countKey]int64 // of the lines, when the query asks
}

func newTally() *tally {
	return &tally{index: map[string]int32{}, counts: map[countKey]int64{}, bytes: map[countKey]int64{}}
}

// add adds o's counts to t.
func (t *tally) add(o *tally) {
	ids := make([]int32, len(o.names))
	for i, n := range o.names {
		ids[i] = t.name([]byte(n))
	}
	for k, n := range o.counts {
		b := o.bytes[k]
		k.svc, k.text = ids[k.svc], ids[k.text]
		t.counts[k] += n
		if b != 0 {
			t.bytes[k] += b
		}
	}
}

// name returns b's index in t.names, adding it once.
func (t *tally) name(b []byte) int32 {
	if i, ok := t.index[string(b)]; ok {
		return i
	}
	s := string(b)
	t.nameBytes += int64(len(s))
	i := int32(len(t.names))
	t.names = append(t.names, s)
	t.index[s] = i
	return i
}

// CountLogs counts the log records of tenant that q selects (the lake's
// files and the spool's records not in files yet, as Logs reads them) by
// service, severity and q.Bucket of their time, and calls fn with each
// non-zero count, in no order; fn returns false to stop. It reads the
// time, service, severity and (for Contains) body columns alone and
// decodes no record: what a volume or count query needs. The bytes read
// are bounded as Logs' are; the tally's memory is charged to the query's
// ticket.
func (r *Reader) CountLogs(ctx context.Context, tenant string, q LogCountQuery, fn func(LogCount) bool) error {
	if q.Start.IsZero() || q.End.IsZero() || q.Bucket == nil {
		return fmt.Errorf("lakeread: a logs count needs a start, an end and a bucket")
	}
	fq := r.newQuery(tenant, q.Start, q.End)
	fq.signal = otlpwire.SignalLogs
	tk := querybudget.FromContext(ctx)
	t := newTally()
	var charged int64
	defer func() { tk.Release(charged) }()
	// charge charges the tally's growth: a map entry and a name's bytes,
	// roughly.
	charge := func() error {
		n := int64(len(t.counts))*48 + int64(len(t.names))*32 + t.nameBytes
		if n <= charged {
			return nil
		}
		if err := tk.Charge(n - charged); err != nil {
			return err
		}
		charged = n
		return nil
	}
	if q.Bytes && len(q.Contains) > 0 {
		return ErrNoByteCounts
	}
	lq := LogQuery{Start: q.Start, End: q.End, Service: q.Service, Contains: q.Contains, Fields: FieldSeverity}
	if q.Bytes {
		lq.Fields |= FieldLine
	}
	err := fq.fresh(ctx, func(p []byte) error {
		return freshLogs(p, &lq, func(rec *LogRecord) {
			k := countKey{svc: t.name([]byte(rec.Service)), text: t.name([]byte(rec.SeverityText)), num: rec.SeverityNumber, bucket: q.Bucket(rec.Time)}
			t.counts[k]++
			if q.Bytes {
				t.bytes[k] += int64(len(rec.Line))
			}
		})
	})
	if err != nil {
		return err
	}
	if err := charge(); err != nil {
		return err
	}
	files, err := fq.list(ctx)
	if err != nil {
		return err
	}
	// Files are read a few at a time (filesAtOnce), one a core, each
	// into a tally of its own, added to t in the files' order; their
	// grams regions, if q has needles, first (gramsFirst, needleQ).
	needleQ := LogQuery{Start: q.Start, End: q.End, Service: q.Service, Contains: q.Contains}
	w := filesAtOnce()
	for start := 0; start < len(files); start += w {
		if err := ctx.Err(); err != nil {
			return err
		}
		window := files[start:min(start+w, len(files))]
		open := make([]*cachedFile, len(window))
		release := func() {
			for _, cf := range open {
				if cf != nil {
					fq.release(cf)
				}
			}
		}
		pres := make([]gramsAnswer, len(window))
		tallies := make([]*tally, len(window))
		for i, f := range window {
			// Counts kept from an earlier query answer the file
			// without opening it when they answer it whole.
			if c, ok := r.counts.get(keyOf(f)); ok && !r.cfg.NoIndexes && len(q.Contains) == 0 && (!q.Bytes || c.HasBytes) {
				if noneInRange(c, q.Start.UnixNano(), q.End.UnixNano(), q.Service) {
					continue
				}
				ft := newTally()
				if rest, ok := countFromCounts(c, &q, ft); ok && len(rest) == 0 {
					tallies[i] = ft
					continue
				}
			}
			if len(q.Contains) > 0 {
				pre, err := r.gramsFirst(ctx, fq, f, &needleQ)
				if err != nil {
					release()
					return err
				}
				if pre.skip {
					continue // no block may hold the needles: not opened
				}
				pres[i] = pre
			}
			cf, err := fq.open(ctx, f)
			if err != nil {
				release()
				return err
			}
			open[i] = cf // nil: removed since the listing; else one worker's alone
		}
		err := inParallel(len(window), func(i int) error {
			if open[i] == nil {
				return nil
			}
			tallies[i] = newTally()
			if err := r.countFile(open[i], &q, pres[i], tallies[i]); err != nil {
				return fmt.Errorf("lakeread: read a logs file: %s: %w", window[i].Name, err)
			}
			return nil
		})
		release()
		if err != nil {
			return err
		}
		for _, wt := range tallies {
			if wt != nil {
				t.add(wt)
			}
		}
		if err := fq.charge(); err != nil {
			return err
		}
		if err := charge(); err != nil {
			return err
		}
	}
	for k, n := range t.counts {
		if !fn(LogCount{Service: t.names[k.svc], SeverityText: t.names[k.text], SeverityNumber: k.num, Bucket: k.bucket, N: n, Bytes: t.bytes[k]}) {
			return nil
		}
	}
	return nil
}

// countFile adds the records of open file cf that q selects to t; pre
// is what the file's grams region answered of q's needles, if it did.
func (r *Reader) countFile(cf *cachedFile, q *LogCountQuery, pre gramsAnswer, t *tally) error {
	pf := cf.pf
	if !logsFile(pf) {
		return nil // version 1 logs are not read by this API
	}
	c := cf.logCounts()
	if c != nil {
		r.counts.put(cf.key, c)
	}
	if c != nil && !r.cfg.NoIndexes && noneInRange(c, q.Start.UnixNano(), q.End.UnixNano(), q.Service) {
		return nil
	}
	if q.Bytes {
		// From the counts alone, whole.
		if c == nil || !c.HasBytes || r.cfg.NoIndexes {
			return ErrNoByteCounts
		}
		if rest, ok := countFromCounts(c, q, t); !ok || len(rest) > 0 {
			return ErrNoByteCounts
		}
		return nil
	}
	if c != nil && !r.cfg.NoIndexes && len(q.Contains) == 0 {
		if rest, ok := countFromCounts(c, q, t); ok {
			// The minutes the counts do not answer alone: read.
			for _, iv := range rest {
				qi := *q
				qi.Start, qi.End = time.Unix(0, iv[0]), time.Unix(0, iv[1])
				if err := countRowGroups(pf, &qi, t); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if c != nil && !r.cfg.NoIndexes {
		if b, ok := fileInOneBucket(c, q); ok {
			qc := *q
			qc.inOne, qc.one = true, b
			q = &qc
		}
	}
	if pre.ok {
		return countRowGroupsOf(pf, q, pre.q, t)
	}
	if g := cf.logGrams(); g != nil && !r.cfg.NoIndexes && len(q.Contains) > 0 {
		lq, skip := narrowByGrams(g, &LogQuery{Start: q.Start, End: q.End, Service: q.Service, Contains: q.Contains})
		if skip {
			return nil
		}
		return countRowGroupsOf(pf, q, lq, t)
	}
	return countRowGroups(pf, q, t)
}

// fileInOneBucket reports whether every record of the file of counts c
// has its time in [q.Start, q.End) and in one bucket of q's, and which:
// the counts' minutes bound the times of all its records (a record timed
// by its observed time included, which the timestamp column's page
// bounds cannot: they hold its 0).
func fileInOneBucket(c *lake.Counts, q *LogCountQuery) (int64, bool) {
	if len(c.Entries) == 0 {
		return 0, false
	}
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, e := range c.Entries {
		end := e.Minute * lake.CountsMinute // the minute's records: (end - CountsMinute, end]
		first, last = min(first, end-lake.CountsMinute+1), max(last, end)
	}
	if first < q.Start.UnixNano() || last >= q.End.UnixNano() {
		return 0, false
	}
	b := q.Bucket(first)
	return b, q.Bucket(last) == b
}

// noneInRange reports whether counts c (a file's) hold no record of a
// service q selects (nil: any) whose time may lie in [lo, hi): the file
// need not be read. A record timed by its observed time (timestamp 0)
// puts the file's timestamp bounds at 0, so they cannot tell; its
// minute in the counts can.
func noneInRange(c *lake.Counts, lo, hi int64, service func(string) bool) bool {
	kept := keptServices(c, service)
	for _, e := range c.Entries {
		last := e.Minute * lake.CountsMinute
		if last < lo || last-lake.CountsMinute+1 >= hi {
			continue
		}
		if kept(e.Service) {
			return false
		}
	}
	return true
}

// keptServices returns whether counts c's name i is a service that
// service accepts (nil: every one), asking service once per name.
func keptServices(c *lake.Counts, service func(string) bool) func(i int32) bool {
	keep := make([]int8, len(c.Names)) // by name: 0 unknown, 1 kept, -1 not
	return func(i int32) bool {
		if keep[i] == 0 {
			keep[i] = -1
			if service == nil || service(c.Names[i]) {
				keep[i] = 1
			}
		}
		return keep[i] > 0
	}
}

// maxCountsRest is how many stretches of minutes a file's counts may
// leave to read (those a step boundary or the query's ends cut) before
// countFromCounts gives the whole file to the column reads: a grid
// aligned to whole minutes leaves none, or the two ends.
const maxCountsRest = 4

// countFromCounts adds to t what a file's counts c answer of q: the
// minutes that lie whole in q's range and in one bucket of it. It
// returns the time ranges [start, end) of the other minutes in range,
// which the caller counts from the file's columns; false (and nothing
// added) if they are more than maxCountsRest stretches, as for a grid
// not on whole minutes.
func countFromCounts(c *lake.Counts, q *LogCountQuery, t *tally) (rest [][2]int64, ok bool) {
	lo, hi := q.Start.UnixNano(), q.End.UnixNano()
	keep := make([]bool, len(c.Names)) // by name: a service q selects
	for i, n := range c.Names {
		keep[i] = q.Service == nil || q.Service(n)
	}
	// span returns minute m's times [first, last] and whether they meet
	// q's range; whole: they lie in it and in one bucket.
	span := func(m int64) (first, last int64, in, whole bool) {
		last = m * lake.CountsMinute
		first = last - lake.CountsMinute + 1
		if last < lo || first >= hi {
			return first, last, false, false
		}
		return first, last, true, first >= lo && last < hi && q.Bucket(first) == q.Bucket(last)
	}
	var cut []int64 // minutes in range, not whole
	for _, e := range c.Entries {
		if !keep[e.Service] {
			continue
		}
		if _, _, in, whole := span(e.Minute); in && !whole {
			cut = append(cut, e.Minute)
		}
	}
	slices.Sort(cut)
	cut = slices.Compact(cut)
	for _, m := range cut {
		first, last, _, _ := span(m)
		first, end := max(first, lo), min(last+1, hi)
		if n := len(rest); n > 0 && rest[n-1][1] == first {
			rest[n-1][1] = end // the minute before's stretch
			continue
		}
		if len(rest) == maxCountsRest {
			return nil, false
		}
		rest = append(rest, [2]int64{first, end})
	}
	empty := t.name(nil)
	svcs := make([]int32, len(c.Names))
	for i := range svcs {
		svcs[i] = -1
	}
	for _, e := range c.Entries {
		if !keep[e.Service] {
			continue
		}
		first, _, _, whole := span(e.Minute)
		if !whole {
			continue
		}
		if svcs[e.Service] < 0 {
			svcs[e.Service] = t.name([]byte(c.Names[e.Service]))
		}
		k := countKey{svc: svcs[e.Service], text: empty, bucket: q.Bucket(first)}
		if q.Severity {
			k.text, k.num = t.name([]byte(c.Names[e.Text])), e.Number
		}
		t.counts[k] += e.N
		if q.Bytes {
			t.bytes[k] += e.Bytes
		}
	}
	return rest, true
}

// countRowGroups adds the records of pf that q selects to t, row group by
// row group, reading the filter columns first, then time, service and
// severity of the rows they keep: a page whose index shows one bucket
// (times) or one name (services) is not read, and consecutive rows of
// one key are counted as a run.
func countRowGroups(pf *parquet.File, q *LogCountQuery, t *tally) error {
	return countRowGroupsOf(pf, q, &LogQuery{Start: q.Start, End: q.End, Service: q.Service, Contains: q.Contains}, t)
}

// countRowGroupsOf is countRowGroups with the rows filtered by filter's
// Service, Contains and within (narrowByGrams').
func countRowGroupsOf(pf *parquet.File, q *LogCountQuery, filter *LogQuery, t *tally) error {
	leaves, err := leavesOf(pf, logCols)
	if err != nil {
		return err
	}
	lo, hi := q.Start.UnixNano(), q.End.UnixNano()
	// By row of the row group: bucket (noBucket: not counted), service
	// name, severity text and number; from a pool, as a query over many
	// files would make ~20 bytes of garbage a row of each.
	sc, _ := countScratchPool.Get().(*countScratch)
	if sc == nil {
		sc = &countScratch{}
	}
	defer countScratchPool.Put(sc)
	bkts, svcs, texts, nums := sc.bkts, sc.svcs, sc.texts, sc.nums
	defer func() { sc.bkts, sc.svcs, sc.texts, sc.nums = bkts, svcs, texts, nums }()
	empty, unknown := t.name(nil), t.name([]byte("unknown_service"))
	for _, rg := range pf.RowGroups() {
		sel, none, err := filterRows(rg, leaves, nil, filter)
		if err != nil {
			return err
		}
		if none {
			continue
		}
		n := int(rg.NumRows())
		bkts, svcs, texts, nums = resize(bkts, n), resize(svcs, n), resize(texts, n), resize(nums, n)
		for i := range n {
			bkts[i], svcs[i], texts[i], nums[i] = noBucket, unknown, empty, 0
		}
		if q.inOne {
			eachRowIn(sel, 0, int64(n), func(row int64) { bkts[row] = q.one })
		} else if err := rowBuckets(rg, leaves, sel, lo, hi, q.Bucket, bkts); err != nil {
			return err
		}
		// Names and severities of the rows in range alone.
		total, counted := n, 0
		if sel != nil {
			total = len(sel)
		}
		eachRowIn(sel, 0, int64(n), func(row int64) {
			if bkts[row] != noBucket {
				counted++
			}
		})
		if counted == 0 {
			continue
		}
		if counted < total {
			sel = rowsCounted(bkts, sel, counted)
		}
		if err := rowNames(rg, leaves[lcService], sel, t, svcs); err != nil {
			return err
		}
		if q.Severity {
			err = rowNames(rg, leaves[lcSeverityText], sel, t, texts)
			if err == nil {
				err = eachInt(rg, leaves[lcSeverityNumber], sel, func(row int64, v int64) { nums[row] = int32(v) })
			}
			if err != nil {
				return err
			}
		}
		var (
			cur countKey
			run int64
		)
		add := func(row int64) {
			b := bkts[row]
			if b == noBucket {
				return
			}
			if k := (countKey{svc: svcs[row], text: texts[row], num: nums[row], bucket: b}); k != cur {
				if run > 0 {
					t.counts[cur] += run
				}
				cur, run = k, 0
			}
			run++
		}
		if sel == nil {
			for row := range int64(n) {
				add(row)
			}
		} else {
			for _, row := range sel {
				add(row)
			}
		}
		if run > 0 {
			t.counts[cur] += run
		}
	}
	return nil
}

// countScratch holds countRowGroupsOf's arrays by row between calls.
type countScratch struct {
	bkts              []int64
	svcs, texts, nums []int32
}

var countScratchPool sync.Pool // of *countScratch

// rowsCounted returns the rows of sel (nil: all rows of bkts) that have
// a bucket, n of them.
func rowsCounted(bkts []int64, sel []int64, n int) []int64 {
	out := make([]int64, 0, n)
	if sel == nil {
		for row, b := range bkts {
			if b != noBucket {
				out = append(out, int64(row))
			}
		}
		return out
	}
	for _, row := range sel {
		if bkts[row] != noBucket {
			out = append(out, row)
		}
	}
	return out
}

// noBucket marks a row not counted: its time is outside the query's.
const noBucket = math.MinInt64

// pageRows calls fn with each page of column chunk cc (by its offset
// index) that holds a row of sel (nil: all of the chunk's n rows): its
// index and its rows [first, end); false if cc has no offset index.
func pageRows(cc parquet.ColumnChunk, n int64, sel []int64, fn func(page int, first, end int64)) bool {
	oi, err := cc.OffsetIndex()
	if err != nil {
		return false
	}
	j := 0
	for p := range oi.NumPages() {
		first, end := oi.FirstRowIndex(p), n
		if p+1 < oi.NumPages() {
			end = oi.FirstRowIndex(p + 1)
		}
		if sel != nil {
			for j < len(sel) && sel[j] < first {
				j++
			}
			if j == len(sel) || sel[j] >= end {
				continue
			}
		}
		fn(p, first, end)
	}
	return true
}

// eachRowIn calls fn with each row of sel (nil: every row) in [first,
// end).
func eachRowIn(sel []int64, first, end int64, fn func(row int64)) {
	if sel == nil {
		for r := first; r < end; r++ {
			fn(r)
		}
		return
	}
	i, _ := slices.BinarySearch(sel, first)
	for ; i < len(sel) && sel[i] < end; i++ {
		fn(sel[i])
	}
}

// rowsIn appends to out the rows of sel (nil: every row) in [first, end).
func rowsIn(out, sel []int64, first, end int64) []int64 {
	eachRowIn(sel, first, end, func(r int64) { out = append(out, r) })
	return out
}

// rowsToRead returns the rows of sel (nil: all of column chunk cc's n
// rows) in the pages that whole does not take from the page index alone
// (whole(p, ci, first, end) reports whether it took page p, its rows
// [first, end), from index ci): sel itself if it took none, and done
// if it took every one. Without a page index, every row is to read.
func rowsToRead(cc parquet.ColumnChunk, n int64, sel []int64, whole func(p int, ci parquet.ColumnIndex, first, end int64) bool) (decode []int64, done bool) {
	ci, err := cc.ColumnIndex()
	if err != nil {
		return sel, false
	}
	var rest [][2]int64 // the pages to read: their rows [first, end)
	took := false
	ok := pageRows(cc, n, sel, func(p int, first, end int64) {
		if p < ci.NumPages() && !ci.NullPage(p) && ci.NullCount(p) == 0 && whole(p, ci, first, end) {
			took = true
			return
		}
		rest = append(rest, [2]int64{first, end})
	})
	if !ok || !took {
		return sel, false
	}
	if len(rest) == 0 {
		return nil, true
	}
	decode = []int64{}
	for _, r := range rest {
		decode = rowsIn(decode, sel, r[0], r[1])
	}
	return decode, false
}

// rowBuckets sets out[row] to the bucket of each row of sel (nil: all)
// whose time is in [lo, hi). A page of the time column whose index bounds
// lie in one bucket (or outside the range) is not read.
func rowBuckets(rg parquet.RowGroup, leaves []leaf, sel []int64, lo, hi int64, bucket func(int64) int64, out []int64) error {
	decode, done := rowsToRead(rg.ColumnChunks()[leaves[lcTime].index], rg.NumRows(), sel, func(p int, ci parquet.ColumnIndex, first, end int64) bool {
		min, max := ci.MinValue(p).Int64(), ci.MaxValue(p).Int64()
		switch {
		case min > 0 && (max < lo || min >= hi):
			return true // every row out of the range (out[row] stays noBucket)
		case min > 0 && min >= lo && max < hi && bucket(min) == bucket(max):
			b := bucket(min)
			eachRowIn(sel, first, end, func(r int64) { out[r] = b })
			return true
		}
		return false
	})
	if done {
		return nil
	}
	var zero []int64
	set := func(row, ts int64) {
		if ts >= lo && ts < hi {
			out[row] = bucket(ts)
		}
	}
	if one := bucket(lo); one == bucket(hi-1) {
		// One bucket for the whole range (an instant query's): a
		// row's time says only whether it is in it.
		set = func(row, ts int64) {
			if ts >= lo && ts < hi {
				out[row] = one
			}
		}
	}
	err := eachInt(rg, leaves[lcTime], decode, func(row int64, v int64) {
		if v != 0 {
			set(row, v)
		} else {
			zero = append(zero, row) // no time: its observed time
		}
	})
	if err == nil && len(zero) > 0 {
		err = eachInt(rg, leaves[lcObserved], zero, set)
	}
	return err
}

// rowNames sets out[row] to the index in t of the value of string column
// l in each row of sel (nil: all) that has one. A page whose index bounds
// are one name, whole (shorter than the bounds' truncation), and no null
// is not read; a dictionary page's names are looked up once per entry.
func rowNames(rg parquet.RowGroup, l leaf, sel []int64, t *tally, out []int32) error {
	cc := rg.ColumnChunks()[l.index]
	decode, done := rowsToRead(cc, rg.NumRows(), sel, func(p int, ci parquet.ColumnIndex, first, end int64) bool {
		min, max := ci.MinValue(p).ByteArray(), ci.MaxValue(p).ByteArray()
		if !bytes.Equal(min, max) || len(min) >= boundsTruncatedAt {
			return false
		}
		k := t.name(min)
		eachRowIn(sel, first, end, func(r int64) { out[r] = k })
		return true
	})
	if done {
		return nil
	}
	return scanPages(cc, decode, func(p parquet.Page, first int64) error {
		data := p.Data()
		var get func(k int) int32
		if d := p.Dictionary(); d != nil && data.Kind() == encoding.Int32 {
			idx := data.Int32()
			ids := make([]int32, d.Len())
			for i := range ids {
				ids[i] = -1
			}
			get = func(k int) int32 {
				i := idx[k]
				if ids[i] < 0 {
					ids[i] = t.name(d.Index(i).ByteArray())
				}
				return ids[i]
			}
		} else if data.Kind() == encoding.ByteArray {
			b, offs := data.ByteArray()
			get = func(k int) int32 { return t.name(b[offs[k]:offs[k+1]]) }
		} else {
			return nil
		}
		walkPage(p, first, l, decode, func(row int64, _, k int) {
			if k >= 0 {
				out[row] = get(k)
			}
		})
		return nil
	})
}

// boundsTruncatedAt is the length at which the lake's writer (parquet-go's
// default) truncates a string page's index bounds: a bound shorter than
// it is a whole value.
const boundsTruncatedAt = 16

// resize returns s with length n, reusing its array when it is large
// enough.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
