package lakeread

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// MatchLogRows returns the rows of logs file pf whose records match, by
// their index in the file (counted across its row groups in order),
// ascending: q's filters (its time range, services and line filters;
// its other fields are not used) are tested on the columns first, then
// match on each record left, decoded whole. For a delete request's
// rewrite (lake.RewriteFile), which must find every matching row: match
// must test the whole selection again, as the column filters only narrow.
// A file this package does not read (not a logs file of schema version
// 2 or 3) is an error.
func MatchLogRows(pf *parquet.File, q LogQuery, match func(*LogRecord) bool) ([]int64, error) {
	if !logsFile(pf) {
		return nil, fmt.Errorf("lakeread: not a logs file of a version this reader knows")
	}
	q.literals = make([][][]byte, len(q.Matches))
	for i, re := range q.Matches {
		q.literals[i] = requiredLiterals(re)
	}
	q.AttrValues, q.AttrNames, q.within = nil, nil, nil
	leaves, err := leavesOf(pf, logCols)
	if err != nil {
		return nil, err
	}
	keys, err := keyLeaves(pf)
	if err != nil {
		return nil, err
	}
	var out []int64
	var first int64 // the index of the row group's first row
	for _, rg := range pf.RowGroups() {
		n := rg.NumRows()
		sel, none, err := filterRows(rg, leaves, keys, &q)
		if err != nil {
			return nil, err
		}
		if !none {
			if sel == nil {
				sel = make([]int64, n)
				for i := range sel {
					sel[i] = int64(i)
				}
			}
			// In batches: a row group may hold 128k records, too many
			// to decode at once within the memory ceiling.
			for lo := 0; lo < len(sel); lo += fileBatch {
				part := sel[lo:min(lo+fileBatch, len(sel))]
				recs, err := decodeLogs(rg, leaves, keys, part, AllLogFields)
				if err != nil {
					return nil, err
				}
				for i, r := range recs {
					if match(r) {
						out = append(out, first+part[i])
					}
				}
			}
		}
		first += n
	}
	return out, nil
}

// spanKey is what MatchSpanRows reads of a span row.
type spanKey struct {
	TraceID *string `parquet:"trace_id,optional"`
	Service string  `parquet:"service_name"`
	Start   int64   `parquet:"start_time"`
}

// MatchSpanRows returns the rows of the spans file r whose span match
// selects (by its trace id, hex, "" for none; its service; its start, ns),
// by their index in the file, ascending: for a delete request's rewrite
// (lake.RewriteFile).
func MatchSpanRows(r io.ReaderAt, match func(traceID, service string, start int64) bool) ([]int64, error) {
	rd := parquet.NewGenericReader[spanKey](r)
	defer rd.Close()
	buf := make([]spanKey, 1024)
	var out []int64
	var at int64
	for {
		n, err := rd.Read(buf)
		for i := range n {
			id := ""
			if buf[i].TraceID != nil {
				id = *buf[i].TraceID
			}
			if match(id, buf[i].Service, buf[i].Start) {
				out = append(out, at)
			}
			at++
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("lakeread: read spans: %w", err)
		}
	}
}
