package lakeread

import (
	"cmp"
	"container/heap"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/spanpoint"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// SpanFilter selects spans by what a spans file holds in plain columns,
// for metrics over spans one at a time (TraceQL metrics of span-local
// filters): no trace is assembled, and only the columns a query needs
// are read.
type SpanFilter struct {
	Start, End time.Time // span start in [Start, End)
	Service    string    // service_name equal to it; "" any
	Name       string    // span name equal to it; "" any
	Kind       int32     // OTLP span kind; -1 any
	Status     int32     // OTLP status code (0 unset, 1 ok, 2 error); -1 any
	MinDur     int64     // duration at least this, nanoseconds
	MaxDur     int64     // duration at most this; 0: no bound
	// Ints are conditions on span attributes of hot integer keys
	// (lake.HotColumn), read from their typed columns: a value sent as
	// another type (a double, a string) is not in the column and does not
	// match. A key that is not hot makes SpanPoints ErrNotColumn.
	Ints []IntCond
	// Need names the fields the caller reads of each point (NeedService
	// and the others); those not named are left zero and not read.
	Need SpanFields
	// Counted says the caller counts spans by whole minutes: a file's
	// points may then come from its span counts (lake.SpanCountsKey), a
	// point for many spans (N) at the start of their minute, when the
	// filter and Need hold only service, kind and status and Start and
	// End are whole minutes.
	Counted bool
}

// fromCounts reports whether f may be answered from span counts.
func (f *SpanFilter) fromCounts() bool {
	minute := func(t time.Time) bool { return t.IsZero() || t.UnixNano()%lake.CountsMinute == 0 }
	return f.Counted && f.Name == "" && f.MinDur == 0 && f.MaxDur == 0 && len(f.Ints) == 0 &&
		f.Need&(NeedName|NeedDuration|NeedTraceID|NeedEnd) == 0 && minute(f.Start) && minute(f.End)
}

// countedPoints gives the points of file pf's span counts that f
// admits, a point for each entry; false if pf has none it can trust.
func (f *SpanFilter) countedPoints(pf *parquet.File, emit func([]SpanPoint) error) (bool, error) {
	c, ok := lake.TrustedMeta(pf, lake.SpanCountsKey, lake.ParseCounts, lake.Counts.Rows)
	if !ok {
		return false, nil
	}
	names := make([][]byte, len(c.Names))
	for i, n := range c.Names {
		names[i] = []byte(n)
	}
	var batch []SpanPoint
	for _, e := range c.Entries {
		kind, status, _ := lake.SpanCountsFields(e.Number)
		pt := SpanPoint{Service: names[e.Service], Kind: kind, Status: status, Start: e.Minute * lake.CountsMinute, N: e.N}
		if f.admits(&pt) {
			batch = append(batch, pt)
		}
	}
	if len(batch) == 0 {
		return true, nil
	}
	return true, emit(batch)
}

// SpanFields are fields of a SpanPoint.
type SpanFields uint8

const (
	NeedService SpanFields = 1 << iota
	NeedName
	NeedKind
	NeedStatus
	NeedDuration
	NeedTraceID
	// NeedEnd reads End (end_time); asked without NeedDuration it stands
	// for Start too, which is then not read (a search wants a span's end
	// alone).
	NeedEnd
)

// IntCond is a condition on a span attribute of integer values: the
// value Op Value, Op one of = != > >= < <=.
type IntCond struct {
	Key   string
	Op    string
	Value int64
}

// holds reports whether v satisfies c (test's answer; a caller testing
// many values resolves the operator once with test).
func (c IntCond) holds(v int64) bool { return c.test()(v) }

// test is holds with the operator resolved once, not a value.
func (c IntCond) test() func(int64) bool {
	x := c.Value
	switch c.Op {
	case "=":
		return func(v int64) bool { return v == x }
	case "!=":
		return func(v int64) bool { return v != x }
	case ">":
		return func(v int64) bool { return v > x }
	case ">=":
		return func(v int64) bool { return v >= x }
	case "<":
		return func(v int64) bool { return v < x }
	case "<=":
		return func(v int64) bool { return v <= x }
	}
	return func(int64) bool { return false }
}

// mayHold reports whether c holds for some value in [lo, hi].
func (c IntCond) mayHold(lo, hi int64) bool {
	switch c.Op {
	case "=":
		return lo <= c.Value && c.Value <= hi
	case "!=":
		return lo != hi || lo != c.Value
	case ">":
		return hi > c.Value
	case ">=":
		return hi >= c.Value
	case "<":
		return lo < c.Value
	case "<=":
		return lo <= c.Value
	}
	return true
}

// ErrNotColumn is returned by SpanPoints for a filter on an attribute
// that has no typed column (not a hot integer key), or with an operator
// it does not know.
var ErrNotColumn = errors.New("lakeread: a span filter on an attribute without a typed column")

// SpanPoint is what SpanPoints gives of a span (spanpoint.Point, which
// traceql/eval aggregates). Service and Name are valid only during the
// call.
type SpanPoint = spanpoint.Point

// ErrVersion1 is returned by SpanPoints for a lake holding version-1
// spans files in the range, which it does not read: the caller then
// reads whole traces.
var ErrVersion1 = errors.New("lakeread: version-1 spans files in the range")

// SpanPoints calls fn with the spans of tenant that f selects, from the
// spool's fresh spans and the lake's files (read a few at a time, one a
// core: fn is called by one goroutine at a time, with batches in no
// particular order). fn's slice is valid only during the call.
func (r *Reader) SpanPoints(ctx context.Context, tenant string, f SpanFilter, fn func([]SpanPoint) error) error {
	_, err := r.NewestSpanPoints(ctx, tenant, f, 0, fn)
	return err
}

// NewestSpanPoints is SpanPoints for a caller that wants the spans that
// end last (a search's newest traces): with n positive and f needing
// NeedEnd, the lake's files are read in order of their latest end (their
// row groups' statistics) and the reading stops once n points given end
// after every file left. Every span f selects that ends after cutoff is
// given; cutoff is math.MinInt64 when every file was read.
func (r *Reader) NewestSpanPoints(ctx context.Context, tenant string, f SpanFilter, n int, fn func([]SpanPoint) error) (cutoff int64, err error) {
	cutoff = math.MinInt64
	for _, c := range f.Ints {
		if _, isInt, ok := lake.HotColumn(c.Key); !ok || !isInt || !(IntCond{Op: c.Op}).known() {
			return cutoff, ErrNotColumn
		}
	}
	if f.Need&NeedEnd == 0 {
		n = 0
	}
	var top endHeap // the n latest ends given
	give := fn
	if n > 0 {
		top = make(endHeap, 0, n)
		give = func(pts []SpanPoint) error {
			for i := range pts {
				top.offer(pts[i].End, n)
			}
			return fn(pts)
		}
	}
	fq := r.newQuery(tenant, f.Start, f.End)
	var batch []SpanPoint
	err = fq.fresh(ctx, func(p []byte) error {
		batch = batch[:0]
		err := eachFreshSpan(p, func(fs *freshSpan) error {
			sp := fs.f
			pt := SpanPoint{Service: []byte(fs.service), Name: sp.Name, Kind: sp.Kind, Status: sp.StatusCode,
				Start: int64(sp.StartTime), Duration: int64(sp.EndTime) - int64(sp.StartTime), End: int64(sp.EndTime)}
			copy(pt.TraceID[:], sp.TraceID)
			if f.admits(&pt) && f.freshInts(sp.Attributes) {
				pt.Name = append([]byte(nil), pt.Name...) // the payload's bytes are the walk's
				batch = append(batch, pt)
			}
			return nil
		})
		if err != nil || len(batch) == 0 {
			return err
		}
		return give(batch)
	})
	if err != nil {
		return cutoff, err
	}
	files, err := fq.list(ctx)
	if err != nil {
		return cutoff, err
	}
	w := filesAtOnce()
	var latest []int64 // with n: each file's latest end, files in that order
	if n > 0 {
		if files, latest, err = fq.byLatestEnd(ctx, &f, files); err != nil {
			return cutoff, err
		}
		w = workers() // checked after each few files
	}
	var mu sync.Mutex // fn is called by one worker at a time
	emit := func(b []SpanPoint) error {
		mu.Lock()
		defer mu.Unlock()
		return give(b)
	}
	for start := 0; start < len(files); start += w {
		if err := ctx.Err(); err != nil {
			return cutoff, err
		}
		if n > 0 && len(top) == n && top[0] > latest[start] {
			return latest[start], nil // the files left end no later
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
		for i, df := range window {
			cf, err := fq.open(ctx, df)
			if err != nil {
				release()
				return cutoff, err
			}
			open[i] = cf // nil: removed since the listing
		}
		err := inParallel(len(window), func(i int) error {
			if open[i] == nil {
				return nil
			}
			if err := f.file(open[i].pf, emit); err != nil {
				return fmt.Errorf("lakeread: read a spans file: %s: %w", window[i].Name, err)
			}
			return nil
		})
		release()
		if err != nil {
			return cutoff, wrapLimit(err)
		}
		if err := fq.charge(); err != nil {
			return cutoff, err
		}
	}
	return cutoff, nil
}

// byLatestEnd returns files ordered by the latest end of the spans f may
// select in each (latest first), and those ends: a file's footer says,
// by its row groups' bounds of service, name, start and end time. A file
// with no row group f may select is left out; one removed since the
// listing too.
func (q *fileQuery) byLatestEnd(ctx context.Context, f *SpanFilter, files []lake.DataFile) ([]lake.DataFile, []int64, error) {
	type fileEnd struct {
		f   lake.DataFile
		end int64
	}
	var kept []fileEnd
	for _, df := range files {
		cf, err := q.open(ctx, df)
		if err != nil {
			return nil, nil, err
		}
		if cf == nil {
			continue
		}
		end, ok, err := f.latestEnd(cf.pf)
		if rerr := q.release(cf); err == nil {
			err = rerr
		}
		if err != nil {
			return nil, nil, fmt.Errorf("lakeread: read a spans file: %s: %w", df.Name, err)
		}
		if ok {
			kept = append(kept, fileEnd{df, end})
		}
	}
	slices.SortStableFunc(kept, func(a, b fileEnd) int { return cmp.Compare(b.end, a.end) })
	out, ends := make([]lake.DataFile, len(kept)), make([]int64, len(kept))
	for i, k := range kept {
		out[i], ends[i] = k.f, k.end
	}
	return out, ends, nil
}

// latestEnd returns the latest end time of the spans of file pf that f
// may select, by the statistics of the row groups that may hold one
// (math.MaxInt64 if one has none: it is read first); false if none may.
// A file that is not a version-2 spans file is math.MaxInt64 too: its
// reading says what it is. A panic of parquet-go on a damaged footer is
// an error.
func (f *SpanFilter) latestEnd(pf *parquet.File) (latest int64, some bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("damaged file: %v", p)
		}
	}()
	if isV1(pf) {
		return math.MaxInt64, true, nil
	}
	if v, ok := pf.Lookup("wirehouse.signal"); ok && v != "traces" {
		return 0, false, nil
	}
	var idx [4]int
	for i, c := range [...]string{"service_name", "name", "start_time", "end_time"} {
		lc, ok := pf.Schema().Lookup(c)
		if !ok {
			return math.MaxInt64, true, nil
		}
		idx[i] = lc.ColumnIndex
	}
	bounds := Query{Service: f.Service, Operation: f.Name, StartMin: f.Start, StartMax: f.End}
	latest = math.MinInt64
	for _, rg := range pf.RowGroups() {
		if !bounds.mayMatch(rg, idx[:3]) {
			continue
		}
		some = true
		b, ok := int64Bounds(rg.ColumnChunks()[idx[3]])
		if !ok {
			return math.MaxInt64, true, nil
		}
		latest = max(latest, b[1])
	}
	return latest, some, nil
}

// endHeap is a min-heap (container/heap) of the latest ends offered.
type endHeap []int64

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *endHeap) Pop() any {
	s := *h
	x := s[len(s)-1]
	*h = s[:len(s)-1]
	return x
}

// offer adds end to h if h holds fewer than n or end is later than its
// earliest (which it then replaces).
func (h *endHeap) offer(end int64, n int) {
	switch {
	case len(*h) < n:
		heap.Push(h, end)
	case end > (*h)[0]:
		(*h)[0] = end
		heap.Fix(h, 0)
	}
}

// admits reports whether f selects the span of pt (every field read).
func (f *SpanFilter) admits(pt *SpanPoint) bool {
	return (f.Start.IsZero() || pt.Start >= f.Start.UnixNano()) && (f.End.IsZero() || pt.Start < f.End.UnixNano()) &&
		(f.Service == "" || string(pt.Service) == f.Service) && (f.Name == "" || string(pt.Name) == f.Name) &&
		(f.Kind < 0 || pt.Kind == f.Kind) && (f.Status < 0 || pt.Status == f.Status) &&
		pt.Duration >= f.MinDur && (f.MaxDur == 0 || pt.Duration <= f.MaxDur)
}

// known reports whether c's operator is one holds knows.
func (c IntCond) known() bool {
	switch c.Op {
	case "=", "!=", ">", ">=", "<", "<=":
		return true
	}
	return false
}

// freshInts reports whether a fresh span's attributes satisfy f.Ints, as
// the typed columns would: integer values only.
func (f *SpanFilter) freshInts(attrs otlpwire.Attributes) bool {
	for _, c := range f.Ints {
		v, ok, err := attrs.Get(c.Key)
		if err != nil || !ok || v.Type() != otlpwire.ValueInt || !c.holds(v.Int()) {
			return false
		}
	}
	return true
}

// spanPointCols are the columns SpanPoints reads, in SpanPoint's order.
var spanPointCols = []string{"service_name", "name", "kind", "status_code", "start_time", "duration", "trace_id", "end_time"}

// file calls emit with the spans of spans file pf that f selects, a row
// group at a time: the rows narrowed column by column (service, name,
// time, duration, kind, status: the first two by their pages' own data),
// then the fields f needs read for the rows left.
func (f *SpanFilter) file(pf *parquet.File, emit func([]SpanPoint) error) error {
	if isV1(pf) {
		return ErrVersion1
	}
	if v, ok := pf.Lookup("wirehouse.signal"); ok && v != "traces" {
		return nil
	}
	leaves := make([]leaf, len(spanPointCols))
	idx := make([]int, len(spanPointCols))
	for i, c := range spanPointCols {
		lc, ok := pf.Schema().Lookup(c)
		if !ok {
			return fmt.Errorf("no column %s", c)
		}
		leaves[i], idx[i] = leafOf(lc), lc.ColumnIndex
	}
	ints := make([]leaf, len(f.Ints))
	for i, c := range f.Ints {
		name, _, _ := lake.HotColumn(c.Key)
		lc, ok := pf.Schema().Lookup(name)
		if !ok {
			return ErrNotColumn
		}
		ints[i] = leafOf(lc)
	}
	if f.fromCounts() {
		if ok, err := f.countedPoints(pf, emit); ok || err != nil {
			return err
		}
	}
	// The row group bounds of service, name and time (Query.mayMatch's).
	bounds := Query{Service: f.Service, Operation: f.Name, StartMin: f.Start, StartMax: f.End}
	boundsIdx := []int{idx[0], idx[1], idx[4]}
	var batch []SpanPoint
	for _, rg := range pf.RowGroups() {
		if !bounds.mayMatch(rg, boundsIdx) {
			continue
		}
		sel, err := f.rows(rg, leaves, ints)
		if err != nil {
			return err
		}
		if len(sel) == 0 {
			continue
		}
		if batch, err = f.points(rg, leaves, sel, batch[:0]); err != nil {
			return err
		}
		if len(batch) > 0 {
			if err := emit(batch); err != nil {
				return err
			}
		}
	}
	return nil
}

// rows returns the rows of rg that f selects (nil and no error: none).
func (f *SpanFilter) rows(rg parquet.RowGroup, leaves, ints []leaf) ([]int64, error) {
	var sel []int64 // nil: every row so far
	var err error
	none := func() bool { return err != nil || sel != nil && len(sel) == 0 }
	// A row group of one service (files are cut where it changes) or one
	// name, its statistics say, is not read for it.
	if f.Service != "" && !onlyValue(rg.ColumnChunks()[leaves[0].index], f.Service) {
		if sel, err = rowsWhereString(rg, leaves[0], sel, f.Service); none() || sel == nil {
			return nil, err
		}
	}
	if f.Name != "" && !onlyValue(rg.ColumnChunks()[leaves[1].index], f.Name) {
		if sel, err = rowsWhereString(rg, leaves[1], sel, f.Name); none() || sel == nil {
			return nil, err
		}
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !f.Start.IsZero() {
		lo = f.Start.UnixNano()
	}
	if !f.End.IsZero() {
		hi = f.End.UnixNano()
	}
	// A row group whose spans all start in the range (its statistics
	// say) is not read for it: the range is most often hours of whole
	// row groups.
	if inside, ok := int64Bounds(rg.ColumnChunks()[leaves[4].index]); ok && inside[0] >= lo && inside[1] < hi {
		if sel == nil {
			sel = allRows(rg.NumRows())
		}
	} else if sel, err = rowsWhereInt(rg, leaves[4], sel, func(t int64) bool { return t >= lo && t < hi }); none() || sel == nil {
		return nil, err
	}
	if f.MinDur > 0 || f.MaxDur > 0 {
		maxDur := int64(math.MaxInt64)
		if f.MaxDur > 0 {
			maxDur = f.MaxDur
		}
		if sel, err = rowsWhereInt(rg, leaves[5], sel, func(d int64) bool { return d >= f.MinDur && d <= maxDur }); none() || sel == nil {
			return nil, err
		}
	}
	for i, c := range f.Ints {
		// A row group whose values of the key all fail (its statistics
		// say; a chunk of nulls alone has none and fails too) is not read.
		if b, ok := int64Bounds(rg.ColumnChunks()[ints[i].index]); ok && !c.mayHold(b[0], b[1]) {
			return nil, nil
		}
		if sel, err = rowsWhereInt(rg, ints[i], sel, c.test()); none() {
			return nil, err
		}
	}
	if f.Kind >= 0 {
		if sel, err = rowsWhereEnum(rg, leaves[2], sel, spanKinds, f.Kind); none() {
			return nil, err
		}
	}
	if f.Status >= 0 {
		if sel, err = rowsWhereEnum(rg, leaves[3], sel, statusCodes, f.Status); none() {
			return nil, err
		}
	}
	return sel, nil
}

// onlyValue reports whether every row of column chunk cc holds want, as
// its statistics say: no nulls, and its least and greatest values want.
func onlyValue(cc parquet.ColumnChunk, want string) bool {
	b, ok := cc.(interface {
		Bounds() (min, max parquet.Value, ok bool)
		NullCount() int64
	})
	if !ok || cc.Type().Kind() != parquet.ByteArray || b.NullCount() != 0 {
		return false
	}
	lo, hi, ok := b.Bounds()
	return ok && !lo.IsNull() && !hi.IsNull() && string(lo.ByteArray()) == want && string(hi.ByteArray()) == want
}

// allRows is rows 0 to n-1.
func allRows(n int64) []int64 {
	sel := make([]int64, n)
	for i := range sel {
		sel[i] = int64(i)
	}
	return sel
}

// int64Bounds are the least and greatest values of an int64 column chunk,
// from its statistics; false without them.
func int64Bounds(cc parquet.ColumnChunk) ([2]int64, bool) {
	b, ok := cc.(interface {
		Bounds() (min, max parquet.Value, ok bool)
	})
	if !ok || cc.Type().Kind() != parquet.Int64 {
		return [2]int64{}, false
	}
	lo, hi, ok := b.Bounds()
	if !ok || lo.IsNull() || hi.IsNull() {
		return [2]int64{}, false
	}
	return [2]int64{lo.Int64(), hi.Int64()}, true
}

// rowsWhereEnum returns the rows of sel (not nil) whose enum column (the
// names of names, or a number as text) holds want.
func rowsWhereEnum(rg parquet.RowGroup, l leaf, sel []int64, names map[string]int32, want int32) ([]int64, error) {
	var out []int64
	var bad error
	err := eachValue(rg.ColumnChunks()[l.index], sel, func(row int64, v parquet.Value) {
		n, err := enumOf(names, v.ByteArray())
		if err != nil {
			bad = err
		}
		if n == want {
			out = append(out, row)
		}
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// points appends to dst the fields f needs of rows sel of rg.
func (f *SpanFilter) points(rg parquet.RowGroup, leaves []leaf, sel []int64, dst []SpanPoint) ([]SpanPoint, error) {
	base := len(dst)
	// No clearing: every field f needs is written in every point (nulls
	// too), and one query's batches never hold the others.
	dst = slices.Grow(dst, len(sel))[:base+len(sel)]
	pts := dst[base:]
	ccs := rg.ColumnChunks()
	var bad error
	var err error
	// Services and names repeat (a row group is mostly one service's):
	// each distinct one is copied once.
	in := interner{}
	var sc selScan
	eachBytes := func(l leaf, keep bool, fn func(pt *SpanPoint, b []byte)) error {
		intern := in.intern
		if !keep {
			intern = nil
		}
		return sc.bytes(ccs[l.index], l, sel, intern, func(i int, b []byte) { fn(&pts[i], b) })
	}
	eachInt := func(l leaf, fn func(pt *SpanPoint, v int64)) error {
		return sc.ints(ccs[l.index], l, sel, func(i int, v int64) { fn(&pts[i], v) })
	}
	if f.Need&NeedService != 0 {
		err = eachBytes(leaves[0], true, func(pt *SpanPoint, b []byte) { pt.Service = b })
	}
	if err == nil && f.Need&NeedName != 0 {
		err = eachBytes(leaves[1], true, func(pt *SpanPoint, b []byte) { pt.Name = b })
	}
	if err == nil && f.Need&NeedKind != 0 {
		err = eachBytes(leaves[2], false, func(pt *SpanPoint, b []byte) {
			n, e := enumOf(spanKinds, b)
			if e != nil {
				bad = e
			}
			pt.Kind = n
		})
	}
	if err == nil && f.Need&NeedStatus != 0 {
		err = eachBytes(leaves[3], false, func(pt *SpanPoint, b []byte) {
			n, e := enumOf(statusCodes, b)
			if e != nil {
				bad = e
			}
			pt.Status = n
		})
	}
	if err == nil && (f.Need&NeedEnd == 0 || f.Need&NeedDuration != 0) {
		err = eachInt(leaves[4], func(pt *SpanPoint, v int64) { pt.Start = v })
	}
	if err == nil && f.Need&NeedEnd != 0 {
		err = eachInt(leaves[7], func(pt *SpanPoint, v int64) { pt.End = v })
	}
	if err == nil && f.Need&NeedDuration != 0 {
		err = eachInt(leaves[5], func(pt *SpanPoint, v int64) { pt.Duration = v })
	}
	if err == nil && f.Need&NeedTraceID != 0 {
		err = eachBytes(leaves[6], false, func(pt *SpanPoint, b []byte) {
			pt.TraceID = [16]byte{}
			if len(b) == 32 {
				hex.Decode(pt.TraceID[:], b)
			}
		})
	}
	if err == nil {
		err = bad
	}
	return dst, err
}
