package lakeread

import (
	"cmp"
	"regexp"
	"regexp/syntax"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/lake"
)

// narrowByGrams narrows q, for one file with body index g, to the
// blocks of rows that may hold each of q's needles of lake.GramLen bytes
// or more (Contains, and the literals every match of a Matches holds):
// their services and timestamp ranges (LogQuery.within). skip: no block
// may, and the file need not be read.
// q itself comes back when no needle is long enough, or when the blocks
// that may hold the needles are half the file or more (reading it all
// costs about as much).
func narrowByGrams(g *lake.Grams, q *LogQuery) (nq *LogQuery, skip bool) {
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
	if len(needles) == 0 {
		return q, false
	}
	lo, hi := q.Start.UnixNano(), q.End.UnixNano()
	keep := make([]int8, len(g.Services)) // 0 unknown, 1 kept, -1 not
	found := make([]bool, len(g.Services))
	var (
		spans [][2]int64
		rows  int64
		total int64
	)
next:
	for i := range g.Entries {
		e := &g.Entries[i]
		total += e.Rows
		if keep[e.Service] == 0 {
			keep[e.Service] = -1
			if q.Service == nil || q.Service(g.Services[e.Service]) {
				keep[e.Service] = 1
			}
		}
		// A timestamp of 0 is a record timed by its observed time,
		// which may be in range.
		if keep[e.Service] < 0 || e.Min > 0 && (e.Max < lo || e.Min >= hi) {
			continue
		}
		for _, h := range needles {
			if !e.MayHold(h) {
				continue next
			}
		}
		found[e.Service] = true
		spans = append(spans, [2]int64{e.Min, e.Max})
		rows += e.Rows
	}
	if len(spans) == 0 {
		return nil, true
	}
	if rows*2 >= total {
		return q, false
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
	services := map[string]bool{}
	for i, f := range found {
		if f {
			services[g.Services[i]] = true
		}
	}
	out := *q
	out.Service = func(s string) bool { return services[s] } // kept by q.Service already
	out.within = merged
	out.withinRows = rows
	return &out, false
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
