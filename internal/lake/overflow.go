package lake

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"math"
	"slices"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// DefaultMaxAttributeColumns is the most attribute columns a file gets
// by default (WriterConfig.MaxAttributeColumns). Parquet readers handle a
// few thousand columns, but every column costs a column chunk, a page
// index and footer metadata, and parquet-go cannot write more than 32,767
// leaves at all: a request with 70,000 distinct keys must still make a
// file.
const DefaultMaxAttributeColumns = 1000

// Overflow columns: one per origin, present in a file only when its
// attribute keys were more than the column limit. Each holds, per row, a
// JSON object of the attributes of that origin that did not get a column
// of their own, so no attribute is lost. Their names are always reserved,
// so an attribute key never takes them.
var overflowNames = [numOrigins]string{
	OriginResource: "resource_attributes_overflow",
	OriginScope:    "scope_attributes_overflow",
	OriginRecord:   "attributes_overflow",
}

// overflowType is the "wirehouse.columns" type of an overflow column.
const overflowType = "json_object"

// limitColumns splits the present columns of a file into those that keep
// a column of their own (at most max) and the rest, for the overflow
// columns. The kept are the resource's service.name (rows are sorted by
// it), then the columns with the most values in the file, then by origin
// and key, so the choice depends only on the file's rows. counts[i] is
// the number of values of present[i]. Both results keep present's order.
func limitColumns(present []*Column, masks []kindMask, counts []int, max int) (kept []*Column, keptMasks []kindMask, over []*Column) {
	if len(present) <= max {
		return present, masks, nil
	}
	order := make([]int, len(present))
	for i := range order {
		order[i] = i
	}
	isService := func(c *Column) bool { return c.Origin == OriginResource && c.Key == "service.name" }
	slices.SortFunc(order, func(a, b int) int {
		if sa, sb := isService(present[a]), isService(present[b]); sa != sb {
			if sa {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(counts[b], counts[a]); c != 0 {
			return c
		}
		if present[a].Origin != present[b].Origin {
			return int(present[a].Origin) - int(present[b].Origin)
		}
		return cmp.Compare(present[a].Key, present[b].Key)
	})
	keep := make([]bool, len(present))
	for _, i := range order[:max] {
		keep[i] = true
	}
	for i, c := range present {
		if keep[i] {
			kept = append(kept, c)
			keptMasks = append(keptMasks, masks[i])
		} else {
			over = append(over, c)
		}
	}
	return kept, keptMasks, over
}

// overflow is the attributes of one origin without a column of their own
// in the file being written, indexed by row: the values of row r are
// ents[off[r]:off[r+1]], in key order.
type overflow struct {
	cols []*Column
	off  []int32
	ents []overflowEnt
}

type overflowEnt struct {
	col, i int32 // cols[col].Rows[i] is the row
}

// overflowCols returns the overflow columns of the file for the columns
// in over (a batch of n rows), one per origin that has any.
func overflowCols(over []*Column, n int) []fileCol {
	var by [numOrigins][]*Column
	for _, c := range over {
		by[c.Origin] = append(by[c.Origin], c)
	}
	var out []fileCol
	for o, cols := range by {
		if len(cols) == 0 {
			continue
		}
		slices.SortFunc(cols, func(a, b *Column) int { return cmp.Compare(a.Key, b.Key) })
		ov := &overflow{cols: cols, off: make([]int32, n+1)}
		total := 0
		for _, c := range cols { // count the values of each row
			for _, r := range c.Rows {
				ov.off[r+1]++
			}
			total += len(c.Rows)
		}
		for r := 1; r <= n; r++ {
			ov.off[r] += ov.off[r-1]
		}
		ov.ents = make([]overflowEnt, total)
		next := slices.Clone(ov.off[:n])
		for ci, c := range cols { // place them, in key order within a row
			for i, r := range c.Rows {
				ov.ents[next[r]] = overflowEnt{int32(ci), int32(i)}
				next[r]++
			}
		}
		out = append(out, fileCol{name: overflowNames[o], node: parquet.Optional(parquet.String()), fill: ov.fill})
	}
	return out
}

// fill writes each row's overflow attributes as a JSON object, keys as
// sent, values as appendJSON writes them; null for a row with none.
func (ov *overflow) fill(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
	null := parquet.Value{}.Level(0, 0, idx)
	for _, r := range sel {
		ents := ov.ents[ov.off[r]:ov.off[r+1]]
		if len(ents) == 0 {
			dst = append(dst, null)
			continue
		}
		start := len(e.text)
		e.text = append(e.text, '{')
		for j, en := range ents {
			if j > 0 {
				e.text = append(e.text, ',')
			}
			c := ov.cols[en.col]
			e.text = appendJSONString(e.text, []byte(c.Key))
			e.text = append(e.text, ':')
			e.text = appendJSONValue(e.text, c.Kinds[en.i], c.Nums[en.i], c.Strs.At(int(en.i)))
		}
		e.text = append(e.text, '}')
		dst = append(dst, parquet.Value{})
		dst[len(dst)-1] = parquet.ByteArrayValue(e.text[start:len(e.text):len(e.text)])
		dst[len(dst)-1].SetDefinitionLevel(1)
		dst[len(dst)-1].SetColumnIndex(idx)
	}
	return dst
}

// appendJSONValue appends a column value as JSON, as appendJSON writes
// the AnyValue it came from.
func appendJSONValue(dst []byte, k Kind, num uint64, s []byte) []byte {
	switch k {
	case KindInt:
		return strconv.AppendInt(dst, int64(num), 10)
	case KindDouble:
		f := math.Float64frombits(num)
		switch {
		case math.IsNaN(f):
			return append(dst, `"NaN"`...)
		case math.IsInf(f, 1):
			return append(dst, `"Infinity"`...)
		case math.IsInf(f, -1):
			return append(dst, `"-Infinity"`...)
		}
		n := len(dst)
		dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
		if !bytes.ContainsAny(dst[n:], ".eE") {
			dst = append(dst, ".0"...) // a double, not an int, to a reader
		}
		return dst
	case KindBool:
		return strconv.AppendBool(dst, num == 1)
	case KindBytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, s)
		return append(dst, '"')
	case KindJSON:
		return append(dst, s...)
	}
	return appendJSONString(dst, s)
}
