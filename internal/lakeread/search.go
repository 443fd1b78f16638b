package lakeread

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
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
}

// FoundTrace is a trace a search found: its id and the first start and
// last end of its matching spans.
type FoundTrace struct {
	ID         [16]byte
	Start, End time.Time
}

// searchCols are the columns a search reads before it reads whole rows.
var searchCols = []string{"service_name", "name", "start_time", "duration", "trace_id", "status_code"}

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

// searchFile adds the traces of file pf that q matches to found.
func (q *Query) searchFile(pf *parquet.File, found map[[16]byte]*FoundTrace) error {
	idx, err := columnIndexes(pf, searchCols)
	if err != nil {
		return err
	}
	var cols *columns
	if len(q.Attributes) > 0 {
		if cols, err = columnsOf(pf.Schema()); err != nil {
			return err
		}
	}
	vals := make([][]parquet.Value, len(searchCols))
	for _, rg := range pf.RowGroups() {
		if !q.mayMatch(rg, idx) {
			continue
		}
		for i, ci := range idx {
			if vals[i], err = columnValues(rg.ColumnChunks()[ci], vals[i][:0]); err != nil {
				return fmt.Errorf("column %s: %w", searchCols[i], err)
			}
		}
		var rows []int64
		for row := range vals[0] {
			if q.matchesColumns(vals, row) {
				rows = append(rows, int64(row))
			}
		}
		if len(rows) == 0 {
			continue
		}
		if cols != nil {
			kept := make([]int64, 0, len(rows))
			err := readRows(rg, rows, cols, func(i int, sp span) {
				if q.matchesAttributes(&sp) {
					kept = append(kept, rows[i])
				}
			})
			if err != nil {
				return err
			}
			rows = kept
		}
		for _, row := range rows {
			var id [16]byte
			if b := vals[4][row].ByteArray(); len(b) != 32 {
				continue
			} else if _, err := hex.Decode(id[:], b); err != nil {
				continue // no trace id: not findable by id either
			}
			start := time.Unix(0, vals[2][row].Int64()).UTC()
			end := start.Add(time.Duration(vals[3][row].Int64()))
			if t := found[id]; t == nil {
				found[id] = &FoundTrace{ID: id, Start: start, End: end}
			} else {
				t.Start, t.End = minTime(t.Start, start), maxTime(t.End, end)
			}
		}
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

// matchesColumns reports whether row matches q's conditions on the
// search columns.
func (q *Query) matchesColumns(vals [][]parquet.Value, row int) bool {
	if q.Service != "" && string(vals[0][row].ByteArray()) != q.Service {
		return false
	}
	if q.Operation != "" && string(vals[1][row].ByteArray()) != q.Operation {
		return false
	}
	start := vals[2][row].Int64()
	if !q.StartMin.IsZero() && start < q.StartMin.UnixNano() || !q.StartMax.IsZero() && start >= q.StartMax.UnixNano() {
		return false
	}
	d := time.Duration(vals[3][row].Int64())
	if q.DurationMin > 0 && d < q.DurationMin || q.DurationMax > 0 && d > q.DurationMax {
		return false
	}
	return !vals[4][row].IsNull()
}

// matchesAttributes reports whether sp has every attribute of q.
func (q *Query) matchesAttributes(sp *span) bool {
	for k, want := range q.Attributes {
		if k == "error" && want == "true" && string(sp.statusCode) == "STATUS_CODE_ERROR" {
			continue
		}
		if !hasAttribute(sp, k, want) {
			return false
		}
	}
	return true
}

// hasAttribute reports whether sp, its resource or its scope has
// attribute k with text want.
func hasAttribute(sp *span, k, want string) bool {
	for _, a := range sp.attrs {
		if string(a.key) == k && !a.null && string(a.text) == want {
			return true
		}
	}
	for _, obj := range [][]byte{sp.resourceAttrs, sp.scopeAttrs} {
		if v, ok := jsonAttributeText(obj, k); ok && v == want {
			return true
		}
	}
	return false
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

// FoundTraceSpans returns the spans of a trace a search found, read by its
// id in the hours its matching spans cover with an hour's margin each
// side (its other spans may start before or end after them).
func (r *Reader) FoundTraceSpans(ctx context.Context, tenant string, f FoundTrace) (Result, error) {
	return r.Trace(ctx, tenant, f.ID, f.Start.Add(-time.Hour), f.End.Add(time.Hour))
}
