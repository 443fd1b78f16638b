package lakeread

import (
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestRowsOfServices: the rows a service filter keeps are the rows whose
// service passes it, whether a page holds one service (taken or left on
// its index bounds alone), several, or one whose name is too long for
// its bounds to be whole; a page of one short name is not read.
func TestRowsOfServices(t *testing.T) {
	long := strings.Repeat("x", boundsTruncatedAt+4)
	// Pages of these services, in this order: one service each, but for
	// the mixed ones.
	pages := [][]string{
		{"ad", "ad", "ad"}, {"cart", "cart"}, {"cart", "checkout", "checkout"}, {"checkout"},
		{long + "a", long + "a"}, {long + "b"}, {"email", "frontend", "frontend"}, {"zz"},
	}
	var svcs []string
	for _, p := range pages {
		svcs = append(svcs, p...)
	}
	for _, dict := range []bool{false, true} {
		var node parquet.Node = parquet.String()
		if dict {
			node = parquet.Encoded(node, &parquet.RLEDictionary)
		}
		pf := stringColumnFile(t, "service_name", node, pages, func(w *parquet.Writer) error {
			for _, cw := range w.ColumnWriters() {
				if err := cw.Flush(); err != nil { // ends the page
					return err
				}
			}
			return nil
		})
		rg := pf.RowGroups()[0]
		if oi, err := rg.ColumnChunks()[0].OffsetIndex(); err != nil || oi.NumPages() != len(pages) {
			t.Fatalf("dictionary %v: %d pages (%v), want %d", dict, oi.NumPages(), err, len(pages))
		}
		lc, _ := pf.Schema().Lookup("service_name")
		for _, keepNames := range [][]string{
			nil, {"ad"}, {"checkout"}, {"cart", "email"}, {long + "a"}, {long + "b", "zz"},
			{"ad", "cart", "checkout", long + "a", long + "b", "email", "frontend", "zz"}, {"frontend"},
		} {
			tested := map[string]int{}
			keep := func(b []byte) bool { tested[string(b)]++; return slices.Contains(keepNames, string(b)) }
			rows, all, err := rowsOfServices(rg, leafOf(lc), keep)
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			for i, s := range svcs {
				if slices.Contains(keepNames, s) {
					want = append(want, int64(i))
				}
			}
			got := rows
			if all {
				got = nil
				for i := range svcs {
					got = append(got, int64(i))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("dictionary %v, keep %q: rows %v (all %v), want %v", dict, keepNames, rows, all, want)
			}
			if all && len(want) != len(svcs) {
				t.Errorf("keep %q: all, want %d of %d rows", keepNames, len(want), len(svcs))
			}
			// The pages of one short name are taken or left on their
			// bounds: their name tested once, not once a row.
			if !dict && tested["ad"] != 1 {
				t.Errorf("keep %q: ad tested %d times, want once (from the page index)", keepNames, tested["ad"])
			}
		}
	}
}
