package lakeread

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
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
	// ErrorStatus keeps only spans whose status is an error (the
	// status_code column alone, no attribute).
	ErrorStatus bool
	// StartMin and StartMax bound the span's start: [StartMin,
	// StartMax); a zero one leaves that side open.
	StartMin, StartMax time.Time
	// DurationMin and DurationMax bound its duration; 0 leaves that side
	// open.
	DurationMin, DurationMax time.Duration
	// Limit is the most traces returned, the most recent first (by the
	// start of their latest matching span). Default 20.
	Limit int
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
	err := fq.eachFile(ctx, func(_ lake.DataFile, pf *parquet.File) error {
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
	if isV1(pf) {
		return q.searchV1(pf, found)
	}
	leaves := make([]leaf, len(searchCols))
	idx := make([]int, len(searchCols))
	for i, c := range searchCols {
		lc, ok := pf.Schema().Lookup(strings.Split(c, ".")...)
		if !ok {
			return fmt.Errorf("no column %s", c)
		}
		leaves[i], idx[i] = leafOf(lc), lc.ColumnIndex
	}
	var kth limitEnd
	for _, rg := range pf.RowGroups() {
		if !q.mayMatch(rg, idx) || q.enough(rg, idx, found, &kth) {
			continue
		}
		if err := q.searchRowGroup(pf, rg, leaves, found); err != nil {
			return err
		}
	}
	return nil
}

func (q *Query) searchRowGroup(pf *parquet.File, rg parquet.RowGroup, leaves []leaf, found map[[16]byte]*FoundTrace) error {
	var sel []int64 // nil: every row
	var err error
	done := func(what string) bool {
		if err != nil {
			err = fmt.Errorf("column %s: %w", what, err)
		}
		return err != nil || sel != nil && len(sel) == 0
	}
	if q.Service != "" {
		if sel, err = rowsWhereString(rg, leaves[0], sel, q.Service); done("service_name") || sel == nil {
			return err
		}
	}
	if q.Operation != "" {
		if sel, err = rowsWhereString(rg, leaves[1], sel, q.Operation); done("name") || sel == nil {
			return err
		}
	}
	if q.ErrorStatus {
		if sel, err = rowsWhereString(rg, leaves[5], sel, "STATUS_CODE_ERROR"); done("status_code") || sel == nil {
			return err
		}
	}
	if !q.StartMin.IsZero() || !q.StartMax.IsZero() {
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		if !q.StartMin.IsZero() {
			lo = q.StartMin.UnixNano()
		}
		if !q.StartMax.IsZero() {
			hi = q.StartMax.UnixNano()
		}
		if sel, err = rowsWhereInt(rg, leaves[2], sel, func(t int64) bool { return t >= lo && t < hi }); done("start_time") || sel == nil {
			return err
		}
	}
	if q.DurationMin > 0 || q.DurationMax > 0 {
		lo, hi := int64(q.DurationMin), int64(math.MaxInt64)
		if q.DurationMax > 0 {
			hi = int64(q.DurationMax)
		}
		if sel, err = rowsWhereInt(rg, leaves[3], sel, func(d int64) bool { return d >= lo && d <= hi }); done("duration") || sel == nil {
			return err
		}
	}
	if sel == nil {
		sel = make([]int64, rg.NumRows())
		for i := range sel {
			sel[i] = int64(i)
		}
	}
	for k, want := range q.Attributes {
		if sel, err = q.withAttribute(pf, rg, leaves, sel, k, want); err != nil || len(sel) == 0 {
			return err
		}
	}
	// The rows left: their trace ids, start times and durations.
	ccs := rg.ColumnChunks()
	ids := make([][16]byte, len(sel))
	has := make([]bool, len(sel))
	starts := make([]int64, len(sel))
	durs := make([]int64, len(sel))
	var sc selScan
	err = sc.bytes(ccs[leaves[4].index], leaves[4], sel, nil, func(i int, b []byte) {
		if len(b) == 32 {
			if _, err := hex.Decode(ids[i][:], b); err == nil {
				has[i] = true
			}
		}
	})
	if err == nil {
		err = sc.ints(ccs[leaves[2].index], leaves[2], sel, func(i int, v int64) { starts[i] = v })
	}
	if err == nil {
		err = sc.ints(ccs[leaves[3].index], leaves[3], sel, func(i int, v int64) { durs[i] = v })
	}
	if err != nil {
		return err
	}
	for i, id := range ids {
		if !has[i] {
			continue // no trace id: not findable by id either
		}
		start := time.Unix(0, starts[i]).UTC()
		end := start.Add(time.Duration(durs[i]))
		if t := found[id]; t == nil {
			found[id] = &FoundTrace{ID: id, Start: start, End: end}
		} else {
			t.Start, t.End = minTime(t.Start, start), maxTime(t.End, end)
		}
	}
	return nil
}

// withAttribute returns the rows of sel (not nil) whose span, resource or
// scope has attribute k with text want (the key "error" with "true" also
// matches an error status, as Jaeger's does).
func (q *Query) withAttribute(pf *parquet.File, rg parquet.RowGroup, leaves []leaf, sel []int64, k, want string) ([]int64, error) {
	var matched [][]int64
	if k == "error" && want == "true" {
		rows, err := rowsWhereString(rg, leaves[5], sel, "STATUS_CODE_ERROR")
		if err != nil {
			return nil, err
		}
		matched = append(matched, rows)
	}
	if hot, isInt, found := lake.HotColumn(k); found {
		// A hot key: its typed column, rather than the whole map. (A
		// value sent with the other type than the semantic conventions'
		// is in the map alone, and not found here.)
		lc, has := pf.Schema().Lookup(hot)
		if !has {
			return nil, fmt.Errorf("no column %s", hot)
		}
		var rows []int64
		var err error
		if isInt {
			n, perr := strconv.ParseInt(want, 10, 64)
			if perr == nil {
				rows, err = rowsWhereInt(rg, leafOf(lc), sel, func(v int64) bool { return v == n })
			}
		} else {
			rows, err = rowsWhereString(rg, leafOf(lc), sel, want)
		}
		if err != nil {
			return nil, err
		}
		matched = append(matched, rows)
	} else {
		rows, err := mapRows(rg, leaves[6], leaves[7], sel, k, want)
		if err != nil {
			return nil, err
		}
		matched = append(matched, rows)
	}
	// The resource's and the scope's, for the rows not matched yet.
	test := func(obj []byte) bool {
		t, found := jsonAttributeText(obj, k)
		return found && t == want
	}
	for _, col := range []int{8, 9} {
		rest := without(sel, matched...)
		if len(rest) == 0 {
			break
		}
		rows, err := rowsWhereJSON(rg, leaves[col], rest, test)
		if err != nil {
			return nil, err
		}
		matched = append(matched, rows)
	}
	return union(sel, matched...), nil
}

// mapRows returns the rows of sel whose attribute map (key and value
// leaves) has key k with value want: the keys' leaf is read for the
// places of k, then the values' leaf at those places.
func mapRows(rg parquet.RowGroup, keys, vals leaf, sel []int64, k, want string) ([]int64, error) {
	type place struct {
		row int64
		at  int
	}
	var at []place
	err := scanPages(rg.ColumnChunks()[keys.index], sel, func(p parquet.Page, first int64) error {
		eq, any := stringEq(p, k)
		if !any {
			return nil
		}
		walkPage(p, first, keys, sel, func(row int64, i, k int) {
			if k >= 0 && eq(k) {
				at = append(at, place{row, i})
			}
		})
		return nil
	})
	if err != nil || len(at) == 0 {
		return nil, err
	}
	rows := make([]int64, 0, len(at))
	for _, a := range at {
		if len(rows) == 0 || rows[len(rows)-1] != a.row {
			rows = append(rows, a.row)
		}
	}
	var out []int64
	j := 0
	err = scanPages(rg.ColumnChunks()[vals.index], rows, func(p parquet.Page, first int64) error {
		eq, any := stringEq(p, want)
		walkPage(p, first, vals, rows, func(row int64, i, k int) {
			for j < len(at) && (at[j].row < row || at[j].row == row && at[j].at < i) {
				j++
			}
			if any && j < len(at) && at[j].row == row && at[j].at == i && k >= 0 && eq(k) &&
				(len(out) == 0 || out[len(out)-1] != row) {
				out = append(out, row)
			}
		})
		return nil
	})
	return out, err
}

// without returns the rows of sel in none of sets (each ascending).
func without(sel []int64, sets ...[]int64) []int64 {
	in := map[int64]bool{}
	for _, s := range sets {
		for _, r := range s {
			in[r] = true
		}
	}
	var out []int64
	for _, r := range sel {
		if !in[r] {
			out = append(out, r)
		}
	}
	return out
}

// union returns the rows of sel in any of sets.
func union(sel []int64, sets ...[]int64) []int64 {
	in := map[int64]bool{}
	for _, s := range sets {
		for _, r := range s {
			in[r] = true
		}
	}
	var out []int64
	for _, r := range sel {
		if in[r] {
			out = append(out, r)
		}
	}
	return out
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

// enough reports whether found holds Limit traces that end no earlier
// than any span of row group rg can (its latest start plus its longest
// duration, from the statistics): then rg cannot change which traces are
// the most recent Limit, and need not be read. Files come newest hour
// first, so a search of common spans reads the last hour's alone.
func (q *Query) enough(rg parquet.RowGroup, idx []int, found map[[16]byte]*FoundTrace, kth *limitEnd) bool {
	if len(found) < q.Limit {
		return false
	}
	st, ok1 := int64Bounds(rg.ColumnChunks()[idx[2]])
	du, ok2 := int64Bounds(rg.ColumnChunks()[idx[3]])
	if !ok1 || !ok2 {
		return false
	}
	latest := time.Unix(0, st[1]).Add(time.Duration(du[1]))
	return !kth.of(found, q.Limit).Before(latest)
}

// limitEnd is the Limit-th latest end of the traces found, worked out
// again only when more traces were found since (an end only grows, so an
// old answer is never later than the true one: enough stays right).
// Counting the found traces for every row group cost a search of a
// structural query, with 20,000 candidates, a fifth of its CPU.
type limitEnd struct {
	n   int // len(found) when worked out
	end time.Time
}

func (l *limitEnd) of(found map[[16]byte]*FoundTrace, limit int) time.Time {
	// Worked out again when found has doubled: some pruning lost, the
	// sorts cost twice the last one's at most.
	if l.n == 0 || len(found) >= 2*l.n {
		ends := make([]int64, 0, len(found))
		for _, t := range found {
			ends = append(ends, t.End.UnixNano())
		}
		slices.Sort(ends)
		l.n, l.end = len(found), time.Unix(0, ends[len(ends)-limit])
	}
	return l.end
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
