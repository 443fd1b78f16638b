package lake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// Schema version 3, of logs files only (traces files stay version 2):
// the columns of version 2, but a record attribute key that is frequent
// in a file gets a typed column of its own there, attr_<key> (ColumnName,
// resolveNames), and its values of that column's type are kept only
// there, not also in the attributes map; so are the values of the hot
// keys' types in the hot columns. The map keeps the rest (rare keys,
// values of another type, empty values), attribute_types the signature
// of what the map keeps, and the key-value metadata "wirehouse.columns"
// names every column that holds record attributes outside the map. A row's
// attributes are the map's and those columns' (its order across columns
// is not kept).
//
// Why: the map's values, one key after another in one column, compress
// 2.9x; a column a key compresses as VictoriaLogs' column a field does,
// and a filter on one key reads one small column, by its dictionary
// (docs/BENCHMARKS.md, "Disk: what the attributes map costs").

// LogsSchemaVersion is the version of the logs files a Writer writes by
// default; its traces files are SchemaVersion 2.
const LogsSchemaVersion = 3

// ColumnsKey is the key-value metadata naming a file's attribute
// columns (version 1, and version 3 logs): a JSON object of column name
// to {"origin", "key", "type"}.
const ColumnsKey = "wirehouse.columns"

const (
	// keyColumnShare: a key gets a column in a file when at least
	// 1/keyColumnShare of its rows hold a value of the column's type.
	keyColumnShare = 32
	// maxKeyColumns is the most key columns of a file (hot columns
	// aside): the most frequent keys get them.
	maxKeyColumns = 64
)

// columnKinds are the kinds a key column may have, in the order a tie
// between them is broken.
var columnKinds = [...]Kind{KindString, KindInt, KindDouble, KindBool}

// physicalKinds are the physical types of the column kinds, by kindSlot.
var physicalKinds = [...]parquet.Kind{parquet.ByteArray, parquet.Int64, parquet.Double, parquet.Boolean}

// kindSlot is k's index in Column.fileN, -1 for a kind no column has.
func kindSlot(k Kind) int {
	switch k {
	case KindString:
		return 0
	case KindInt:
		return 1
	case KindDouble:
		return 2
	case KindBool:
		return 3
	}
	return -1
}

// keyPlan is the key columns of the logs file being written: chosen
// by planKeyColumns, filled a row group at a time.
type keyPlan struct {
	a       *attrRows
	cols    []*Column // by slot - 1
	kinds   []Kind
	names   []string
	touched []*Column
	// pairs[j] are the indexes in a.pairs of the values of column j in
	// the current row group, in row order; cur[j] is the next to fill.
	pairs [][]uint32
	cur   []int
}

// inColumn reports whether pair p is written to a column of the file
// (a key column or a hot column), not to the map.
func (k *keyPlan) inColumn(p *staged) bool {
	c := p.col
	if c.slot > 0 {
		return k.kinds[c.slot-1] == p.kind
	}
	return c.hot && c.hotKind == p.kind && c.Origin == OriginRecord
}

// planKeyColumns chooses the key columns of a file of rows sel of a:
// each key (hot keys aside) with a value of one type in at least
// 1/keyColumnShare of the rows, the most frequent maxKeyColumns. A key
// keeps the type it was first given a column as (Column.sticky), so the
// files of one hour agree and merge. reserved are the fixed columns'
// names.
func (e *encoder) planKeyColumns(a *attrRows, sel []int32, reserved map[string]bool) *keyPlan {
	k := &e.plan
	*k = keyPlan{a: a, touched: k.touched[:0], cols: k.cols[:0], kinds: k.kinds[:0], pairs: k.pairs, cur: k.cur[:0]}
	for _, r := range sel {
		pr := a.rowPairs[r]
		for i := pr.lo; i < pr.hi; i++ {
			p := &a.pairs[i]
			c := p.col
			if c.hot {
				continue
			}
			s := kindSlot(p.kind)
			if s < 0 {
				continue
			}
			if !c.seen {
				c.seen = true
				k.touched = append(k.touched, c)
			}
			c.fileN[s]++
		}
	}
	type cand struct {
		c    *Column
		kind Kind
		n    int32
	}
	var cands []cand
	for _, c := range k.touched {
		kind := c.sticky
		if kind == 0 {
			best := int32(0)
			for s, ck := range columnKinds {
				if c.fileN[s] > best {
					best, kind = c.fileN[s], ck
				}
			}
		}
		n := c.fileN[kindSlot(kind)]
		if n > 0 && int(n)*keyColumnShare >= len(sel) {
			cands = append(cands, cand{c, kind, n})
		}
	}
	slices.SortFunc(cands, func(x, y cand) int {
		if x.n != y.n {
			return cmp.Compare(y.n, x.n)
		}
		return cmp.Compare(x.c.Key, y.c.Key)
	})
	cands = cands[:min(len(cands), maxKeyColumns)]
	for i, cd := range cands {
		cd.c.slot = int32(i + 1)
		cd.c.sticky = cd.kind
		k.cols = append(k.cols, cd.c)
		k.kinds = append(k.kinds, cd.kind)
	}
	k.names = resolveNames(k.cols, reserved)
	for len(k.pairs) < len(k.cols) {
		k.pairs = append(k.pairs, nil)
	}
	k.cur = append(k.cur, make([]int, len(k.cols))...)
	return k
}

// done forgets the plan's marks on the columns.
func (k *keyPlan) done() {
	for _, c := range k.touched {
		c.seen, c.fileN, c.slot = false, [4]int32{}, 0
	}
	k.a = nil
}

// group lists, for each key column, its values in the rows rg (a row
// group), in order.
func (k *keyPlan) group(rg []int32) {
	for j := range k.cols {
		k.pairs[j], k.cur[j] = k.pairs[j][:0], 0
	}
	a := k.a
	for _, r := range rg {
		pr := a.rowPairs[r]
		for i := pr.lo; i < pr.hi; i++ {
			p := &a.pairs[i]
			if s := p.col.slot; s > 0 && k.kinds[s-1] == p.kind {
				k.pairs[s-1] = append(k.pairs[s-1], i)
			}
		}
	}
}

// repetitive reports whether the first values of key column j in rows
// sel repeat enough for a dictionary to pay: fewer than half of at most
// 256 distinct (always for bools, which need none).
func (k *keyPlan) repetitive(j int, sel []int32) bool {
	seen := map[string]struct{}{}
	seenN := map[uint64]struct{}{}
	n := 0
	c := k.cols[j]
	for _, r := range sel {
		pr := k.a.rowPairs[r]
		for i := pr.lo; i < pr.hi && n < 256; i++ {
			p := &k.a.pairs[i]
			if p.col != c || p.kind != k.kinds[j] {
				continue
			}
			n++
			if p.kind == KindString {
				seen[string(c.Strs.at(p.ref))] = struct{}{}
			} else {
				seenN[p.num] = struct{}{}
			}
		}
		if n >= 256 {
			break
		}
	}
	if n < 16 {
		return true
	}
	return (len(seen)+len(seenN))*2 < n
}

// column is the fileCol of key column j: the value of each row that has
// one of its type, else null.
func (k *keyPlan) column(j int, sel []int32) fileCol {
	kind := k.kinds[j]
	n := kindNode(kind)
	if kind != KindBool && k.repetitive(j, sel) {
		n = parquet.Encoded(n, &parquet.RLEDictionary)
	}
	a := k.a
	return fileCol{name: k.names[j], node: parquet.Optional(n), fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		null := parquet.Value{}.Level(0, 0, idx)
		vals, cur := k.pairs[j], k.cur[j]
		for _, r := range sel {
			pr := a.rowPairs[r]
			if cur == len(vals) || vals[cur] < pr.lo || vals[cur] >= pr.hi {
				dst = append(dst, null)
				continue
			}
			p := &a.pairs[vals[cur]]
			cur++
			dst = append(dst, parquet.Value{}) // then set in place: see fillFunc
			v := &dst[len(dst)-1]
			switch kind {
			case KindInt:
				*v = parquet.Int64Value(int64(p.num))
			case KindDouble:
				*v = parquet.DoubleValue(math.Float64frombits(p.num))
			case KindBool:
				*v = parquet.BooleanValue(p.num == 1)
			default:
				*v = parquet.ByteArrayValue(p.col.Strs.at(p.ref))
			}
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(idx)
		}
		k.cur[j] = cur
		return dst
	}}
}

// meta is the wirehouse.columns metadata of a version-3 logs file: its
// key columns and its record hot columns.
func (k *keyPlan) meta() (string, error) {
	m := make(map[string]columnMeta, len(k.cols)+len(hotKeys))
	for j, c := range k.cols {
		m[k.names[j]] = columnMeta{Origin: originNames[OriginRecord], Key: c.Key, Type: kindNames[k.kinds[j]]}
	}
	for _, h := range hotKeys {
		if h.origin == OriginRecord {
			m[ColumnName(h.origin, []byte(h.key))] = columnMeta{Origin: originNames[OriginRecord], Key: h.key, Type: kindNames[h.kind]}
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode column metadata: %w", err)
	}
	return string(b), nil
}

// logColumnsV3 are the columns of a logs file of version 3 for rows sel
// of a: version 2's (cols, changed in place), with the map and its type
// signature holding only what no column holds, and the key columns of
// plan k.
func logColumnsV3(cols []fileCol, a *attrRows, k *keyPlan, sel []int32) []fileCol {
	for i := range cols {
		switch cols[i].name {
		case "attributes":
			cols[i] = mapColV3(a, k)
		case "attribute_types":
			cols[i] = typesColV3(a, k)
		}
	}
	for j := range k.cols {
		cols = append(cols, k.column(j, sel))
	}
	return cols
}

// mapColV3 is the attribute map of every row without the pairs a column
// holds.
func mapColV3(a *attrRows, k *keyPlan) fileCol {
	fill := func(value bool) fillFunc {
		return func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
			for _, r := range sel {
				pr := a.rowPairs[r]
				j := 0
				for i := pr.lo; i < pr.hi; i++ {
					p := &a.pairs[i]
					if k.inColumn(p) {
						continue
					}
					rep := min(j, 1)
					j++
					if value {
						dst = e.pairValue(dst, *p, rep, 2, idx)
					} else {
						dst = append(dst, p.col.keyv)
						dst[len(dst)-1].SetRepetitionLevel(rep)
						dst[len(dst)-1].SetDefinitionLevel(1)
						dst[len(dst)-1].SetColumnIndex(idx)
					}
				}
				if j == 0 {
					dst = append(dst, parquet.Value{})
					dst[len(dst)-1].SetColumnIndex(idx)
				}
			}
			return dst
		}
	}
	return fileCol{name: "attributes", node: mapNode(), leaves: []leafCol{
		{path: []string{"key_value", "key"}, fill: fill(false)},
		{path: []string{"key_value", "value"}, fill: fill(true)},
	}}
}

// typesColV3 is the type signature of what each row's map holds.
func typesColV3(a *attrRows, k *keyPlan) fileCol {
	node := parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	return fileCol{name: "attribute_types", node: node, fill: func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			pr := a.rowPairs[r]
			start := len(e.text)
			for i := pr.lo; i < pr.hi; i++ {
				if p := &a.pairs[i]; !k.inColumn(p) {
					e.text = append(e.text, typeChars[p.vt])
				}
			}
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.ByteArrayValue(e.text[start:len(e.text):len(e.text)])
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// A KeyColumn is a column of a version-3 logs file that holds record
// attribute Key's values of one Kind (KindString, KindInt, KindDouble or
// KindBool) in place of the map: a key column or a hot column.
type KeyColumn struct {
	Name string
	Key  string
	Kind Kind
}

// KeyColumns returns the key and hot columns a logs file's metadata
// (ColumnsKey) names, by name; none for a file of another version. A
// column it names that the schema lacks, or of an unknown type, is an
// error (ErrMalformed): its values would be lost to a reader.
func KeyColumns(pf *parquet.File) ([]KeyColumn, error) {
	if v, _ := pf.Lookup(SchemaVersionKey); v != "3" {
		return nil, nil
	}
	s, ok := pf.Lookup(ColumnsKey)
	if !ok {
		return nil, nil
	}
	var m map[string]columnMeta
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, ColumnsKey, err)
	}
	out := make([]KeyColumn, 0, len(m))
	for name, cm := range m {
		k := Kind(0)
		for kk, n := range kindNames {
			if n == cm.Type && n != "" {
				k = Kind(kk)
			}
		}
		if cm.Origin != originNames[OriginRecord] || kindSlot(k) < 0 {
			return nil, fmt.Errorf("%w: %s: column %s holds %s %s", ErrMalformed, ColumnsKey, name, cm.Origin, cm.Type)
		}
		lc, ok := pf.Schema().Lookup(name)
		if !ok {
			return nil, fmt.Errorf("%w: %s names column %s, which the file lacks", ErrMalformed, ColumnsKey, name)
		}
		if want := physicalKinds[kindSlot(k)]; lc.Node.Type().Kind() != want || !lc.Node.Leaf() || lc.Node.Repeated() || lc.MaxRepetitionLevel != 0 {
			return nil, fmt.Errorf("%w: column %s is %v, not a column of %s", ErrMalformed, name, lc.Node.Type(), cm.Type)
		}
		out = append(out, KeyColumn{Name: name, Key: cm.Key, Kind: k})
	}
	slices.SortFunc(out, func(a, b KeyColumn) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}
