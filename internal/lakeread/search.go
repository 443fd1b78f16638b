package lakeread

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/lake"
)

// Query is a trace search, as Jaeger's finds traces: the traces with at
// least one span that matches every condition set.
type Query struct {
	Service   string // the span's service_name; "" any
	Operation string // the span's name; "" any
	// Attributes the span must have, compared as text: a span, resource
	// or scope attribute whose value's text is the one given. The key
	// "error" with "true" also matches a span whose status is an error,
	// as Jaeger's does.
	Attributes map[string]string
	// StartMin and StartMax bound the span's start: [StartMin,
	// StartMax); a zero one leaves that side open.
	StartMin, StartMax time.Time
	// DurationMin and DurationMax bound its duration; 0 leaves that side
	// open.
	DurationMin, DurationMax time.Duration
	// Limit is the most traces returned, the most recent first (by the
	// start of their latest matching span). Default 20.
	Limit int

	file *parquet.File // the file being searched
}

// FoundTrace is a trace a search found: its id and the first start and
// last end of its matching spans.
type FoundTrace struct {
	ID         [16]byte
	Start, End time.Time
}

// searchCols are the columns a search reads: the first six for every
// search, in that order (mayMatch's statistics use the first three), the
// others for attributes.
var searchCols = []string{"service_name", "name", "start_time", "duration", "trace_id", "status_code",
	"attributes.key_value.key", "attributes.key_value.value", "resource_attributes", "scope_attributes"}

// FindTraces returns the traces of tenant that q matches, most recent
// first. It reads the columns of searchCols of the row groups whose
// statistics do not rule them out, and whole rows only when q has
// attributes. The bytes it reads are bounded as Trace's are.
func (r *Reader) FindTraces(ctx context.Context, tenant string, q Query) ([]FoundTrace, error) {
	if q.Limit <= 0 {
		q.Limit = 20
	}
	found := map[[16]byte]*FoundTrace{}
	fq := r.newQuery(tenant, q.StartMin, q.StartMax)
	if err := fq.fresh(ctx, func(p []byte) error { return q.searchFresh(p, found) }); err != nil {
		return nil, err
	}
	err := fq.eachFile(ctx, false, func(_ lake.DataFile, pf *parquet.File) error {
		return q.searchFile(pf, found)
	})
	if err != nil {
		return nil, err
	}
	out := make([]FoundTrace, 0, len(found))
	for _, t := range found {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b FoundTrace) int {
		return cmp.Or(b.End.Compare(a.End), bytes.Compare(a.ID[:], b.ID[:]))
	})
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// searchFile adds the traces of file pf that q matches to found. It
// reads column by column, each only in the pages that hold rows still in
// the running (the offset index says which): the service's pages first
// (its rows are contiguous: files are sorted by service), then name, time,
// duration, the attributes and last the trace ids of the rows left. No
// whole row is read.
func (q *Query) searchFile(pf *parquet.File, found map[[16]byte]*FoundTrace) error {
	q.file = pf
	idx := make([]int, len(searchCols))
	for i, c := range searchCols {
		lc, ok := pf.Schema().Lookup(strings.Split(c, ".")...)
		if !ok {
			return fmt.Errorf("no column %s", c)
		}
		idx[i] = lc.ColumnIndex
	}
	for _, rg := range pf.RowGroups() {
		if !q.mayMatch(rg, idx) {
			continue
		}
		if err := q.searchRowGroup(rg, idx, found); err != nil {
			return err
		}
	}
	return nil
}

func (q *Query) searchRowGroup(rg parquet.RowGroup, idx []int, found map[[16]byte]*FoundTrace) error {
	ccs := rg.ColumnChunks()
	var sel []int64 // nil: every row
	keep := func(col int, pred func(parquet.Value) bool) error {
		var kept []int64
		err := eachValue(ccs[idx[col]], sel, func(row int64, v parquet.Value) {
			if pred(v) {
				kept = append(kept, row)
			}
		})
		sel = kept
		if err != nil {
			return fmt.Errorf("column %s: %w", searchCols[col], err)
		}
		return nil
	}
	if q.Service != "" {
		if err := keep(0, func(v parquet.Value) bool { return string(v.ByteArray()) == q.Service }); err != nil || len(sel) == 0 {
			return err
		}
	}
	if q.Operation != "" {
		if err := keep(1, func(v parquet.Value) bool { return string(v.ByteArray()) == q.Operation }); err != nil || len(sel) == 0 {
			return err
		}
	}
	if !q.StartMin.IsZero() || !q.StartMax.IsZero() {
		err := keep(2, func(v parquet.Value) bool {
			t := v.Int64()
			return (q.StartMin.IsZero() || t >= q.StartMin.UnixNano()) && (q.StartMax.IsZero() || t < q.StartMax.UnixNano())
		})
		if err != nil || len(sel) == 0 {
			return err
		}
	}
	if q.DurationMin > 0 || q.DurationMax > 0 {
		err := keep(3, func(v parquet.Value) bool {
			d := time.Duration(v.Int64())
			return (q.DurationMin <= 0 || d >= q.DurationMin) && (q.DurationMax <= 0 || d <= q.DurationMax)
		})
		if err != nil || len(sel) == 0 {
			return err
		}
	}
	if sel == nil && len(q.Attributes) > 0 {
		sel = make([]int64, rg.NumRows())
		for i := range sel {
			sel[i] = int64(i)
		}
	}
	for k, want := range q.Attributes {
		var err error
		if sel, err = q.withAttribute(ccs, idx, sel, k, want); err != nil || len(sel) == 0 {
			return err
		}
	}
	// The rows left: their trace ids, start times and durations.
	ids := make(map[int64][16]byte, len(sel))
	starts := make(map[int64]int64, len(sel))
	durs := make(map[int64]int64, len(sel))
	err := eachValue(ccs[idx[4]], sel, func(row int64, v parquet.Value) {
		var id [16]byte
		if b := v.ByteArray(); !v.IsNull() && len(b) == 32 {
			if _, err := hex.Decode(id[:], b); err == nil {
				ids[row] = id
			}
		}
	})
	if err == nil {
		err = eachValue(ccs[idx[2]], sel, func(row int64, v parquet.Value) { starts[row] = v.Int64() })
	}
	if err == nil {
		err = eachValue(ccs[idx[3]], sel, func(row int64, v parquet.Value) { durs[row] = v.Int64() })
	}
	if err != nil {
		return err
	}
	for row, id := range ids { // no trace id: not findable by id either
		start := time.Unix(0, starts[row]).UTC()
		end := start.Add(time.Duration(durs[row]))
		if t := found[id]; t == nil {
			found[id] = &FoundTrace{ID: id, Start: start, End: end}
		} else {
			t.Start, t.End = minTime(t.Start, start), maxTime(t.End, end)
		}
	}
	return nil
}

// withAttribute returns the rows of sel (not nil) whose span, resource or scope has
// attribute k with text want (the key "error" with "true" also matches an
// error status, as Jaeger's does).
func (q *Query) withAttribute(ccs []parquet.ColumnChunk, idx []int, sel []int64, k, want string) ([]int64, error) {
	ok := map[int64]bool{}
	if k == "error" && want == "true" {
		err := eachValue(ccs[idx[5]], sel, func(row int64, v parquet.Value) {
			if string(v.ByteArray()) == "STATUS_CODE_ERROR" {
				ok[row] = true
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if hot, isInt, found := lake.HotColumn(k); found {
		// A hot key: its typed column, rather than the whole map. (A
		// value sent with the other type than the semantic conventions'
		// is in the map alone, and not found here.)
		lc, has := q.file.Schema().Lookup(hot)
		if !has {
			return nil, fmt.Errorf("no column %s", hot)
		}
		var buf []byte
		err := eachValue(ccs[lc.ColumnIndex], sel, func(row int64, v parquet.Value) {
			if v.IsNull() {
				return
			}
			if isInt {
				buf = strconv.AppendInt(buf[:0], v.Int64(), 10)
			} else {
				buf = append(buf[:0], v.ByteArray()...)
			}
			if string(buf) == want {
				ok[row] = true
			}
		})
		if err != nil {
			return nil, err
		}
		return q.resourceOrScope(ccs, idx, sel, k, want, ok)
	}
	// The span's attributes: the key and value leaves of the map, read
	// one after the other; an entry is (row, its place in the row).
	type entry struct {
		row int64
		at  int
	}
	var hits []entry
	at, last := 0, int64(-1)
	place := func(row int64) int {
		if row != last {
			at, last = 0, row
		} else {
			at++
		}
		return at
	}
	err := eachValue(ccs[idx[6]], sel, func(row int64, v parquet.Value) {
		if j := place(row); !v.IsNull() && string(v.ByteArray()) == k {
			hits = append(hits, entry{row, j})
		}
	})
	if err != nil || len(hits) == 0 {
		if err != nil {
			return nil, err
		}
		return q.resourceOrScope(ccs, idx, sel, k, want, ok)
	}
	rows := make([]int64, 0, len(hits))
	for _, h := range hits {
		if len(rows) == 0 || rows[len(rows)-1] != h.row {
			rows = append(rows, h.row)
		}
	}
	i := 0
	last = -1
	err = eachValue(ccs[idx[7]], rows, func(row int64, v parquet.Value) {
		j := place(row)
		for i < len(hits) && (hits[i].row < row || hits[i].row == row && hits[i].at < j) {
			i++
		}
		if i < len(hits) && hits[i].row == row && hits[i].at == j && !v.IsNull() && string(v.ByteArray()) == want {
			ok[row] = true
		}
	})
	if err != nil {
		return nil, err
	}
	return q.resourceOrScope(ccs, idx, sel, k, want, ok)
}

// resourceOrScope adds to ok the rows of sel not in it whose resource or
// scope has attribute k with text want, and returns the rows of sel in
// ok.
func (q *Query) resourceOrScope(ccs []parquet.ColumnChunk, idx []int, sel []int64, k, want string, ok map[int64]bool) ([]int64, error) {
	for _, col := range []int{8, 9} {
		var rest []int64
		for _, r := range sel {
			if !ok[r] {
				rest = append(rest, r)
			}
		}
		if len(rest) == 0 {
			break
		}
		err := eachValue(ccs[idx[col]], rest, func(row int64, v parquet.Value) {
			if t, found := jsonAttributeText(v.ByteArray(), k); found && t == want {
				ok[row] = true
			}
		})
		if err != nil {
			return nil, err
		}
	}
	out := sel[:0:0]
	for _, r := range sel {
		if ok[r] {
			out = append(out, r)
		}
	}
	return out, nil
}

// eachValue calls fn with each value of column chunk cc in the rows of sel
// (ascending; nil: every row), with its row; a repeated column's values
// come one per element, an empty list's as one null. Values alias page
// buffers: valid only during fn. Only the pages that hold a row of sel
// are read, when the chunk has an offset index.
func eachValue(cc parquet.ColumnChunk, sel []int64, fn func(row int64, v parquet.Value)) error {
	pages := cc.Pages()
	defer pages.Close()
	oi, err := cc.OffsetIndex()
	if err != nil || sel == nil {
		return pageValues(pages, -1, 0, sel, fn)
	}
	j := 0
	for p := range oi.NumPages() {
		first := oi.FirstRowIndex(p)
		end := cc.NumValues() + 1<<62 // past the last row
		if p+1 < oi.NumPages() {
			end = oi.FirstRowIndex(p + 1)
		}
		for j < len(sel) && sel[j] < first {
			j++
		}
		if j == len(sel) {
			return nil
		}
		if sel[j] >= end {
			continue
		}
		if err := pages.SeekToRow(first); err != nil {
			return err
		}
		if err := pageValues(pages, 1, first, sel[j:], fn); err != nil {
			return err
		}
	}
	return nil
}

// pageValues reads n pages (n < 0: to the end) from pages, whose first row
// is first, calling fn with the values of the rows of sel (nil: all).
func pageValues(pages parquet.Pages, n int, first int64, sel []int64, fn func(int64, parquet.Value)) error {
	buf := make([]parquet.Value, 1024)
	row := first - 1
	j := 0
	for ; n != 0; n-- {
		p, err := pages.ReadPage()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		vr := p.Values()
		for {
			k, err := vr.ReadValues(buf)
			for _, v := range buf[:k] {
				if v.RepetitionLevel() == 0 {
					row++
				}
				if sel == nil {
					fn(row, v)
					continue
				}
				for j < len(sel) && sel[j] < row {
					j++
				}
				if j < len(sel) && sel[j] == row {
					fn(row, v)
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(p)
				return err
			}
		}
		parquet.Release(p)
	}
	return nil
}

// mayMatch reports whether the row group's statistics allow a match:
// service_name, name and start_time bounds.
func (q *Query) mayMatch(rg parquet.RowGroup, idx []int) bool {
	type bounded interface {
		Bounds() (min, max parquet.Value, ok bool)
	}
	bounds := func(i int) (parquet.Value, parquet.Value, parquet.Type, bool) {
		cc := rg.ColumnChunks()[idx[i]]
		b, ok := cc.(bounded)
		if !ok {
			return parquet.Value{}, parquet.Value{}, nil, false
		}
		min, max, ok := b.Bounds()
		return min, max, cc.Type(), ok
	}
	within := func(i int, v string) bool {
		min, max, typ, ok := bounds(i)
		if !ok {
			return true
		}
		x := parquet.ByteArrayValue([]byte(v))
		return typ.Compare(min, x) <= 0 && typ.Compare(x, max) <= 0
	}
	if q.Service != "" && !within(0, q.Service) || q.Operation != "" && !within(1, q.Operation) {
		return false
	}
	if min, max, _, ok := bounds(2); ok {
		if !q.StartMax.IsZero() && min.Int64() >= q.StartMax.UnixNano() {
			return false
		}
		if !q.StartMin.IsZero() && max.Int64() < q.StartMin.UnixNano() {
			return false
		}
	}
	return true
}

// jsonAttributeText returns the text of key's value in a JSON object of
// attributes: a string as it is, any other value as its JSON.
func jsonAttributeText(obj []byte, key string) (string, bool) {
	if len(obj) == 0 {
		return "", false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return "", false
	}
	v, ok := m[key]
	if !ok {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	return string(v), true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// FoundTracesSpans returns the spans of the traces a search found, in
// its order, read in one walk by their ids in the hours their matching
// spans cover with an hour's margin each side (their other spans may
// start before or end after them).
func (r *Reader) FoundTracesSpans(ctx context.Context, tenant string, found []FoundTrace) ([]*Spans, error) {
	if len(found) == 0 {
		return nil, nil
	}
	ids := make([][16]byte, len(found))
	start, end := found[0].Start, found[0].End
	for i, f := range found {
		ids[i] = f.ID
		start, end = minTime(start, f.Start), maxTime(end, f.End)
	}
	spans, _, err := r.Traces(ctx, tenant, ids, start.Add(-time.Hour), end.Add(time.Hour))
	return spans, err
}
