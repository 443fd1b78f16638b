package lakeread

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestRowsContaining: the page-wide search keeps exactly the rows a test
// of each value keeps, on random values over a small alphabet (needles
// that cross value boundaries, repeat in a value, or end a page), with
// nulls and empty values, every row or a subset of rows, plain pages and
// dictionary pages.
func TestRowsContaining(t *testing.T) {
	type row struct {
		Body *string `parquet:"body,optional"`
	}
	type dictRow struct {
		Body *string `parquet:"body,optional,dict"`
	}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		n := 1 + r.IntN(3000)
		rows := make([]row, n)
		for i := range rows {
			switch r.IntN(10) {
			case 0: // null
			case 1:
				s := ""
				rows[i].Body = &s
			default:
				b := make([]byte, r.IntN(12))
				for j := range b {
					b[j] = "abc"[r.IntN(3)]
				}
				s := string(b)
				rows[i].Body = &s
			}
		}
		var buf bytes.Buffer
		if round%2 == 0 {
			w := parquet.NewGenericWriter[row](&buf, parquet.PageBufferSize(1+r.IntN(4096)))
			if _, err := w.Write(rows); err != nil || w.Close() != nil {
				t.Fatal(err)
			}
		} else {
			drows := make([]dictRow, n)
			for i := range rows {
				drows[i].Body = rows[i].Body
			}
			w := parquet.NewGenericWriter[dictRow](&buf, parquet.PageBufferSize(1+r.IntN(4096)))
			if _, err := w.Write(drows); err != nil || w.Close() != nil {
				t.Fatal(err)
			}
		}
		pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		lc, _ := pf.Schema().Lookup("body")
		l := leafOf(lc)
		var sel []int64
		if round%3 == 1 {
			for i := range int64(n) {
				if r.IntN(3) == 0 {
					sel = append(sel, i)
				}
			}
		}
		for _, needle := range []string{"a", "ab", "abc", "cab", "bb", "ccc", "abcabc"} {
			var want []int64
			for i, x := range rows {
				if x.Body != nil && bytes.Contains([]byte(*x.Body), []byte(needle)) && (sel == nil || slices.Contains(sel, int64(i))) {
					want = append(want, int64(i))
				}
			}
			var got []int64
			base := int64(0)
			for _, rg := range pf.RowGroups() {
				var rsel []int64
				if sel != nil {
					for _, s := range sel {
						if s >= base && s < base+rg.NumRows() {
							rsel = append(rsel, s-base)
						}
					}
					if len(rsel) == 0 {
						base += rg.NumRows()
						continue
					}
				}
				rr, err := rowsContaining(rg, l, rsel, []byte(needle))
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range rr {
					got = append(got, x+base)
				}
				base += rg.NumRows()
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, needle %q, sel %v: %d rows, want %d", round, needle, sel != nil, len(got), len(want))
			}
		}
	}
}
