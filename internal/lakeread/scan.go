package lakeread

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

// The search's column scans work on a page's encoded data and levels
// rather than on parquet.Values: a dictionary-encoded string is compared
// by its index in the dictionary, an integer read from the page's array.
// That is several times cheaper per value than decoding Values, and a
// search visits millions.

// leaf is a leaf column of a file: its index and maximum levels.
type leaf struct {
	index  int
	maxDef byte
	maxRep byte
}

func leafOf(lc parquet.LeafColumn) leaf {
	return leaf{index: lc.ColumnIndex, maxDef: byte(lc.MaxDefinitionLevel), maxRep: byte(lc.MaxRepetitionLevel)}
}

// scanPages calls visit with each page of column chunk cc that holds a row
// of sel (ascending; nil: every page), and the page's first row.
func scanPages(cc parquet.ColumnChunk, sel []int64, visit func(p parquet.Page, first int64) error) error {
	oi, err := cc.OffsetIndex()
	if sel == nil || err != nil {
		return scanPagesWhere(cc, nil, visit)
	}
	j := 0
	return scanPagesWhere(cc, func(p int) bool {
		end := int64(1) << 62
		if p+1 < oi.NumPages() {
			end = oi.FirstRowIndex(p + 1)
		}
		for j < len(sel) && sel[j] < oi.FirstRowIndex(p) {
			j++
		}
		return j < len(sel) && sel[j] < end
	}, visit)
}

// scanPagesWhere calls visit with each page of column chunk cc that keep
// keeps (by its index), and the page's first row, seeking past the others
// with the chunk's offset index. With keep nil, or without an offset
// index, every page is read, in order.
func scanPagesWhere(cc parquet.ColumnChunk, keep func(page int) bool, visit func(p parquet.Page, first int64) error) error {
	pages := cc.Pages()
	defer pages.Close()
	oi, err := cc.OffsetIndex()
	if keep == nil || err != nil {
		// From the first page: a page reader of the cache (chunkCache)
		// is where its last scan left it.
		if err := pages.SeekToRow(0); err != nil {
			return err
		}
		first := int64(0)
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			err = visit(p, first)
			first += p.NumRows()
			parquet.Release(p)
			if err != nil {
				return err
			}
		}
	}
	for p := range oi.NumPages() {
		if !keep(p) {
			continue
		}
		first := oi.FirstRowIndex(p)
		if err := pages.SeekToRow(first); err != nil {
			return err
		}
		page, err := pages.ReadPage()
		if err != nil {
			return err
		}
		err = visit(page, first)
		parquet.Release(page)
		if err != nil {
			return err
		}
	}
	return nil
}

// eachValue calls fn with each value of column chunk cc in the rows of sel
// (ascending; nil: every row), with its row; a repeated column's values
// come one per element, an empty list's as one null. Values alias page
// buffers: valid only during fn. Only the pages that hold a row of sel
// are read, when the chunk has an offset index.
func eachValue(cc parquet.ColumnChunk, sel []int64, fn func(row int64, v parquet.Value)) error {
	return scanPages(cc, sel, func(p parquet.Page, first int64) error { return pageRowValues(p, first, sel, fn) })
}

// pageRowValues calls fn with the values of page p, whose first row is
// first, in the rows of sel (nil: all), as decoded parquet.Values. When
// sel's rows in the page are one run (a trace's spans), the run is
// sliced out of the page and only its values are decoded.
func pageRowValues(p parquet.Page, first int64, sel []int64, fn func(int64, parquet.Value)) error {
	end := first + p.NumRows()
	j, _ := slices.BinarySearch(sel, first)
	runs, k := 0, j
	for ; sel != nil && k < len(sel) && sel[k] < end && runs <= maxSlicedRuns; k++ {
		if k == j || sel[k] != sel[k-1]+1 {
			runs++
		}
	}
	if sel == nil || runs > maxSlicedRuns {
		return allRowValues(p, first, sel, fn)
	}
	var buf []parquet.Value
	for j < len(sel) && sel[j] < end {
		run := int64(1)
		for j+int(run) < len(sel) && sel[j+int(run)] == sel[j]+run && sel[j+int(run)] < end {
			run++
		}
		vals, err := pageValues(p.Slice(sel[j]-first, sel[j]-first+run), buf)
		if err != nil {
			return err
		}
		buf = vals
		row := sel[j] - 1
		for _, v := range vals {
			if v.RepetitionLevel() == 0 {
				row++
			}
			if row >= sel[j]+run {
				return fmt.Errorf("page of %d rows from row %d: a value past rows %d to %d", p.NumRows(), first, sel[j], sel[j]+run-1)
			}
			fn(row, v)
		}
		j += int(run)
	}
	return nil
}

// maxSlicedRuns is the most runs of rows pageRowValues slices out of a
// page rather than decode all of it: one, a trace's spans. Slicing a
// repeated page walks its levels from the start, so several runs cost
// several walks (a search's matches spread over a page were slower
// sliced: compare-trace-reads.sh, 2026-11-29).
const maxSlicedRuns = 1

// allRowValues is pageRowValues decoding every value of the page.
func allRowValues(p parquet.Page, first int64, sel []int64, fn func(int64, parquet.Value)) error {
	buf := make([]parquet.Value, 1024)
	row := first - 1
	j := 0
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
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// pageValues appends every value of page p to buf.
func pageValues(p parquet.Page, buf []parquet.Value) ([]parquet.Value, error) {
	n := int(p.NumValues())
	buf = slices.Grow(buf[:0], n)[:n]
	got := 0
	vr := p.Values()
	for got < n {
		k, err := vr.ReadValues(buf[got:])
		got += k
		if err == io.EOF || k == 0 && err == nil {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return buf[:got], nil
}

// walkPage calls fn with each value slot of page p, whose first row is
// first, in the rows of sel (nil: all): its row, its place in the row, and
// its index among the page's non-null values (-1 for a null or an empty
// list).
func walkPage(p parquet.Page, first int64, l leaf, sel []int64, fn func(row int64, at, k int)) {
	rep, def := p.RepetitionLevels(), p.DefinitionLevels()
	n := int(p.NumValues())
	if rep == nil && sel != nil {
		walkFlat(def, n, first, l.maxDef, sel, fn)
		return
	}
	row, at, k := first-1, 0, 0
	j := 0
	for i := range n {
		if rep == nil || rep[i] == 0 {
			row++
			at = 0
		} else {
			at++
		}
		present := def == nil || def[i] == l.maxDef
		if sel != nil {
			for j < len(sel) && sel[j] < row {
				j++
			}
			if j == len(sel) {
				return
			}
			if sel[j] != row {
				if present {
					k++
				}
				continue
			}
		}
		if present {
			fn(row, at, k)
			k++
		} else {
			fn(row, at, -1)
		}
	}
}

// walkFlat is walkPage of the rows sel of a page of a column that is
// not repeated (a value a row; def its definition levels, nil if
// required): it visits only the rows of sel, counting the non-null
// values before each in one tight pass over def.
func walkFlat(def []byte, n int, first int64, maxDef byte, sel []int64, fn func(row int64, at, k int)) {
	j, _ := slices.BinarySearch(sel, first)
	k, at := 0, 0
	for ; j < len(sel) && sel[j] < first+int64(n); j++ {
		i := int(sel[j] - first)
		if def == nil {
			fn(sel[j], 0, i)
			continue
		}
		for ; at < i; at++ {
			if def[at] == maxDef {
				k++
			}
		}
		if def[i] == maxDef {
			fn(sel[j], 0, k)
		} else {
			fn(sel[j], 0, -1)
		}
	}
}

// stringEq returns a test of whether the non-null value k of page p is
// want, and false if no value of the page can be (want not in its
// dictionary).
func stringEq(p parquet.Page, want string) (func(k int) bool, bool) {
	data := p.Data()
	if d := p.Dictionary(); d != nil && data.Kind() == encoding.Int32 {
		w := int32(-1)
		for i := range int32(d.Len()) {
			if string(d.Index(i).ByteArray()) == want {
				w = i
				break
			}
		}
		if w < 0 {
			return nil, false
		}
		idx := data.Int32()
		return func(k int) bool { return idx[k] == w }, true
	}
	if data.Kind() != encoding.ByteArray {
		return func(int) bool { return false }, true
	}
	b, offs := data.ByteArray()
	wb := []byte(want)
	return func(k int) bool { return k+1 < len(offs) && bytes.Equal(b[offs[k]:offs[k+1]], wb) }, true
}

// int64At returns the non-null values of page p, if it holds int64s.
func int64At(p parquet.Page) ([]int64, bool) {
	data := p.Data()
	if data.Kind() != encoding.Int64 {
		return nil, false
	}
	return data.Int64(), true
}

// rowsWhereString returns the rows of sel (nil: all) whose value in
// column l of row group rg is want.
func rowsWhereString(rg parquet.RowGroup, l leaf, sel []int64, want string) ([]int64, error) {
	var out []int64
	err := scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		eq, any := stringEq(p, want)
		if !any {
			return nil
		}
		walkPage(p, first, l, sel, func(row int64, _, k int) {
			if k >= 0 && eq(k) && (len(out) == 0 || out[len(out)-1] != row) {
				out = append(out, row)
			}
		})
		return nil
	})
	return out, err
}

// rowsWhereInt returns the rows of sel (nil: all) whose value in int64
// column l of row group rg passes keep.
func rowsWhereInt(rg parquet.RowGroup, l leaf, sel []int64, keep func(int64) bool) ([]int64, error) {
	var out []int64
	var ks []int32
	err := scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		vals, ok := int64At(p)
		if !ok {
			return nil
		}
		// A flat page: a slot a row, no walk of its levels a value.
		if sel != nil {
			var j0 int
			var flat bool
			if j0, ks, flat = flatSlots(p, first, l, sel, ks[:0]); flat {
				for i, k := range ks {
					if k >= 0 && int(k) < len(vals) && keep(vals[k]) {
						out = append(out, sel[j0+i])
					}
				}
				return nil
			}
		}
		walkPage(p, first, l, sel, func(row int64, _, k int) {
			if k >= 0 && k < len(vals) && keep(vals[k]) {
				out = append(out, row)
			}
		})
		return nil
	})
	return out, err
}

// rowsWhereJSON returns the rows of sel (nil: all) whose value in column l
// (JSON text, dictionary-encoded as the lake writes resource and scope
// attributes) passes test, tested once per dictionary entry.
func rowsWhereJSON(rg parquet.RowGroup, l leaf, sel []int64, test func([]byte) bool) ([]int64, error) {
	var out []int64
	seen := map[string]bool{} // test's answers of plain values
	err := scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		data := p.Data()
		var pass func(k int) bool
		if d := p.Dictionary(); d != nil && data.Kind() == encoding.Int32 {
			idx := data.Int32()
			memo := map[int32]bool{}
			pass = func(k int) bool {
				r, ok := memo[idx[k]]
				if !ok {
					r = test(d.Index(idx[k]).ByteArray())
					memo[idx[k]] = r
				}
				return r
			}
		} else if data.Kind() == encoding.ByteArray {
			// Plain pages repeat a few objects (a resource's, a
			// scope's) row after row: each tested once.
			b, offs := data.ByteArray()
			pass = func(k int) bool {
				if k+1 >= len(offs) {
					return false
				}
				v := b[offs[k]:offs[k+1]]
				if r, ok := seen[string(v)]; ok {
					return r
				}
				r := test(v)
				if len(seen) < 4096 {
					seen[string(v)] = r
				}
				return r
			}
		} else {
			return nil
		}
		walkPage(p, first, l, sel, func(row int64, _, k int) {
			if k >= 0 && pass(k) {
				out = append(out, row)
			}
		})
		return nil
	})
	return out, err
}

// stringTest returns a test of whether the non-null value k of page p
// passes keep, called once per dictionary entry for a dictionary page; nil
// if the page holds no strings.
func stringTest(p parquet.Page, keep func([]byte) bool) func(k int) bool {
	data := p.Data()
	if d := p.Dictionary(); d != nil && data.Kind() == encoding.Int32 {
		idx := data.Int32()
		memo := make([]int8, d.Len()) // 0 untested, 1 pass, -1 not
		return func(k int) bool {
			i := idx[k]
			if memo[i] == 0 {
				memo[i] = -1
				if keep(d.Index(i).ByteArray()) {
					memo[i] = 1
				}
			}
			return memo[i] == 1
		}
	}
	if data.Kind() != encoding.ByteArray {
		return nil
	}
	b, offs := data.ByteArray()
	return func(k int) bool { return k+1 < len(offs) && keep(b[offs[k]:offs[k+1]]) }
}

// stringMask is stringTest for a test giving bits: the bits of the
// non-null value k of page p; nil if the page is not of strings. Not
// the base of stringTest: the extra call per value made body scans ~8 %
// slower (BenchmarkNeedle/frequent,_no_index).
func stringMask(p parquet.Page, test func([]byte) uint64) func(k int) uint64 {
	data := p.Data()
	if d := p.Dictionary(); d != nil && data.Kind() == encoding.Int32 {
		idx := data.Int32()
		memo := make([]uint64, d.Len())
		tested := make([]bool, d.Len())
		return func(k int) uint64 {
			i := idx[k]
			if !tested[i] {
				tested[i], memo[i] = true, test(d.Index(i).ByteArray())
			}
			return memo[i]
		}
	}
	if data.Kind() != encoding.ByteArray {
		return nil
	}
	b, offs := data.ByteArray()
	return func(k int) uint64 {
		if k+1 < len(offs) {
			return test(b[offs[k]:offs[k+1]])
		}
		return 0
	}
}

// eachString calls fn with each non-null value of string column l of rg
// in the rows of sel (nil: all), from the pages' encoded data (no
// parquet.Value per value). The bytes alias page buffers.
func eachString(rg parquet.RowGroup, l leaf, sel []int64, fn func(row int64, b []byte)) error {
	return eachSlot(rg, l, sel, func(row int64, _ int, b []byte, null bool) {
		if !null {
			fn(row, b)
		}
	})
}

// eachSlot calls fn with each value slot of string column l of rg in the
// rows of sel (nil: all): its row, its place in the row (a repeated
// column's element), and its bytes, or null (a null value, or an empty
// list's one slot). The bytes alias page buffers.
func eachSlot(rg parquet.RowGroup, l leaf, sel []int64, fn func(row int64, at int, b []byte, null bool)) error {
	return scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		data := p.Data()
		var get func(k int) []byte
		if d := p.Dictionary(); d != nil && data.Kind() == encoding.Int32 {
			idx := data.Int32()
			vals := make([][]byte, d.Len())
			for i := range vals {
				vals[i] = d.Index(int32(i)).ByteArray()
			}
			get = func(k int) []byte { return vals[idx[k]] }
		} else if data.Kind() == encoding.ByteArray {
			b, offs := data.ByteArray()
			get = func(k int) []byte { return b[offs[k]:offs[k+1]] }
		} else {
			return nil
		}
		walkPage(p, first, l, sel, func(row int64, at, k int) {
			if k >= 0 {
				fn(row, at, get(k), false)
			} else {
				fn(row, at, nil, true)
			}
		})
		return nil
	})
}

// eachInt calls fn with each non-null value of int32 or int64 column l of
// rg in the rows of sel (nil: all), from the pages' encoded data.
func eachInt(rg parquet.RowGroup, l leaf, sel []int64, fn func(row int64, v int64)) error {
	return scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		data := p.Data()
		var get func(k int) int64
		switch data.Kind() {
		case encoding.Int64:
			v := data.Int64()
			get = func(k int) int64 { return v[k] }
		case encoding.Int32:
			v := data.Int32()
			if d := p.Dictionary(); d != nil { // indexes into the dictionary's values
				get = func(k int) int64 {
					if x := d.Index(v[k]); x.Kind() == parquet.Int32 {
						return int64(x.Int32())
					} else {
						return x.Int64()
					}
				}
				break
			}
			get = func(k int) int64 { return int64(v[k]) }
		default:
			return fmt.Errorf("column %d: %v pages, not integers", l.index, data.Kind())
		}
		walkPage(p, first, l, sel, func(row int64, _, k int) {
			if k >= 0 {
				fn(row, get(k))
			}
		})
		return nil
	})
}

// eachDouble calls fn with each non-null value of double column l of rg
// in the rows of sel (nil: all), from the pages' encoded data.
func eachDouble(rg parquet.RowGroup, l leaf, sel []int64, fn func(row int64, v float64)) error {
	return scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		data := p.Data()
		var get func(k int) float64
		switch data.Kind() {
		case encoding.Double:
			v := data.Double()
			get = func(k int) float64 { return v[k] }
		case encoding.Int32:
			d := p.Dictionary()
			if d == nil {
				return fmt.Errorf("column %d: int32 pages without a dictionary, not doubles", l.index)
			}
			v := data.Int32()
			get = func(k int) float64 { return d.Index(v[k]).Double() }
		default:
			return fmt.Errorf("column %d: %v pages, not doubles", l.index, data.Kind())
		}
		walkPage(p, first, l, sel, func(row int64, _, k int) {
			if k >= 0 {
				fn(row, get(k))
			}
		})
		return nil
	})
}

// eachBool calls fn with each non-null value of boolean column l of rg
// in the rows of sel (nil: all), from the pages' bits.
func eachBool(rg parquet.RowGroup, l leaf, sel []int64, fn func(row int64, v bool)) error {
	return scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		data := p.Data()
		if data.Kind() != encoding.Boolean {
			return fmt.Errorf("column %d: %v pages, not booleans", l.index, data.Kind())
		}
		bits := data.Boolean()
		walkPage(p, first, l, sel, func(row int64, _, k int) {
			if k >= 0 && k/8 < len(bits) {
				fn(row, bits[k/8]>>(k%8)&1 != 0)
			}
		})
		return nil
	})
}

// flatSlots appends to ks, for each row of sel in page p (whose first
// row is first) of column l, the index of its value among the page's
// non-null values (-1: null), and returns the index in sel of the page's
// first row of sel; false (nothing appended) for a repeated column, which
// walkPage walks.
func flatSlots(p parquet.Page, first int64, l leaf, sel []int64, ks []int32) (int, []int32, bool) {
	if p.RepetitionLevels() != nil {
		return 0, ks, false
	}
	j0, _ := slices.BinarySearch(sel, first)
	walkFlat(p.DefinitionLevels(), int(p.NumValues()), first, l.maxDef, sel, func(_ int64, _, k int) { ks = append(ks, int32(k)) })
	return j0, ks, true
}

// int64Getter returns the k-th non-null value of an int64 page: from its
// data (int64At), else (a dictionary page) from its dictionary; nil for a
// page of neither.
func int64Getter(p parquet.Page) func(k int) int64 {
	if v, ok := int64At(p); ok {
		return func(k int) int64 { return v[k] }
	}
	data := p.Data()
	if d := p.Dictionary(); d != nil && data.Kind() == encoding.Int32 {
		idx := data.Int32()
		return func(k int) int64 { return d.Index(idx[k]).Int64() }
	}
	return nil
}

// selScan reads typed values of a column chunk in the rows of a
// selection (sorted rows of a row group) without making parquet.Values:
// from each page's data, a slot per row of the selection (flatSlots), a
// dictionary's entries decoded once. Its buffers are reused between
// calls; not safe for concurrent use.
type selScan struct {
	ks []int32
}

// each calls fn with the index in sel of each row of sel and the index of
// its value among its page's non-null values (-1: null), after page has
// seen the page; rows in order.
func (sc *selScan) each(cc parquet.ColumnChunk, l leaf, sel []int64, page func(p parquet.Page) error, fn func(i, k int)) error {
	ci := 0
	return scanPages(cc, sel, func(p parquet.Page, first int64) error {
		if err := page(p); err != nil {
			return err
		}
		var j0 int
		var flat bool
		if j0, sc.ks, flat = flatSlots(p, first, l, sel, sc.ks[:0]); flat {
			for i, k := range sc.ks {
				fn(j0+i, int(k))
			}
			return nil
		}
		walkPage(p, first, l, sel, func(row int64, _, k int) {
			for ci < len(sel) && sel[ci] < row {
				ci++
			}
			if ci < len(sel) && sel[ci] == row {
				fn(ci, k)
			}
		})
		return nil
	})
}

// bytes calls fn with the index in sel of each row of sel and its value
// in byte array column cc (nil for a null). With intern, values are
// passed through it (a dictionary's once an entry) and fn may keep
// them; without, they are valid during the call only.
func (sc *selScan) bytes(cc parquet.ColumnChunk, l leaf, sel []int64, intern func([]byte) []byte, fn func(i int, b []byte)) error {
	var get func(k int) []byte
	var dict parquet.Dictionary
	var byIdx [][]byte
	return sc.each(cc, l, sel, func(p parquet.Page) error {
		data := p.Data()
		d := p.Dictionary()
		if (d == nil || data.Kind() != encoding.Int32) && data.Kind() != encoding.ByteArray {
			return fmt.Errorf("read column %s: a page of %v, not byte arrays", cc.Type(), data.Kind())
		}
		switch {
		case d != nil && data.Kind() == encoding.Int32 && intern == nil:
			idx := data.Int32()
			get = func(k int) []byte { return d.Index(idx[k]).ByteArray() }
		case d != nil && data.Kind() == encoding.Int32:
			if d != dict { // a row group's pages share its dictionary
				dict, byIdx = d, make([][]byte, d.Len())
			}
			idx := data.Int32()
			get = func(k int) []byte {
				x := idx[k]
				if byIdx[x] == nil {
					byIdx[x] = intern(d.Index(x).ByteArray())
				}
				return byIdx[x]
			}
		case intern == nil:
			get = bytesAt(p)
		default:
			raw := bytesAt(p)
			get = func(k int) []byte { return intern(raw(k)) }
		}
		return nil
	}, func(i, k int) {
		if k >= 0 {
			fn(i, get(k))
		} else {
			fn(i, nil)
		}
	})
}

// ints calls fn with the index in sel of each row of sel and its value in
// int64 column cc (0 for a null).
func (sc *selScan) ints(cc parquet.ColumnChunk, l leaf, sel []int64, fn func(i int, v int64)) error {
	var vals []int64
	var get func(k int) int64
	return sc.each(cc, l, sel, func(p parquet.Page) error {
		var ok bool
		if vals, ok = int64At(p); !ok {
			if get = int64Getter(p); get == nil {
				return fmt.Errorf("read column %s: a page not of int64s", cc.Type())
			}
		}
		return nil
	}, func(i, k int) {
		switch {
		case k < 0:
			fn(i, 0)
		case vals != nil:
			fn(i, vals[k])
		default:
			fn(i, get(k))
		}
	})
}

// interner copies each distinct byte string once.
type interner map[string][]byte

func (in interner) intern(b []byte) []byte {
	if c, ok := in[string(b)]; ok {
		return c
	}
	c := append([]byte(nil), b...)
	in[string(c)] = c
	return c
}
