package lake

import (
	"math"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Kind is the type of one attribute value in a column.
type Kind uint8

const (
	KindString Kind = iota + 1
	KindInt
	KindDouble
	KindBool
	KindBytes
	KindJSON // an array or key-value list, rendered as JSON text
)

// Column is one dynamic column: the values of one attribute key from one
// origin, present in some rows. Value i is in row Rows[i] (ascending) with
// kind Kinds[i]; ints, doubles (as IEEE bits) and bools (0/1) are in
// Nums[i], strings, bytes and JSON text in Strs.At(i).
type Column struct {
	Origin Origin
	Key    string // the attribute key as sent
	keyb   []byte // Key's bytes, for the map columns
	// keyv is keyb as a Parquet value, made once: the map columns' key
	// leaf appends it for every pair. A parquet.Value made per pair by
	// ByteArrayValue (six fields, not inlined) is stored field by field
	// and reloaded 16 bytes at a time, a store-forwarding stall.
	keyv parquet.Value
	hot  bool // a hot key of schema version 2 (hotKeys)
	// hotKind is a hot key's column type.
	hotKind Kind
	// The logs file of version 3 being written (keyPlan): whether a
	// row has a value (seen), how many of each column kind (fileN, by
	// kindSlot), the key column's slot (1-based, 0 none); sticky is the
	// type the key's columns have had.
	seen   bool
	fileN  [4]int32
	slot   int32
	sticky Kind
	Rows   []int32
	Kinds  []Kind
	Nums   []uint64
	Strs   Strings
	taken  int32 // 1 + the last row given a value or a null, 0 if none
	gen    uint32
}

// staged is a resource or scope value decoded once and repeated on every
// row of its resource or scope.
type staged struct {
	col *Column
	stagedType
	num uint64
	ref Ref
}

// stagedType is a staged value's kinds, one field of staged: with four
// fields and four words a staged value is kept in registers when Column.stage
// returns it, where five were stored to memory and reloaded at every
// attribute (a store-forwarding stall, ~7 % of staging a log's attributes).
type stagedType struct {
	kind Kind
	vt   otlpwire.ValueType // the AnyValue's kind, which KindJSON does not tell (schema version 2)
}

// add appends a value in row. A second value for the same row (a key
// repeated in one attribute list) is dropped: the first occurrence wins, as
// with pdata's Map.Get.
// Kind 0 records a null (an empty AnyValue), which also takes the row.
func (c *Column) add(row int32, k Kind, num uint64, ref Ref) {
	if c.taken == row+1 {
		return
	}
	c.taken = row + 1
	if k == 0 {
		return
	}
	c.Rows = append(c.Rows, row)
	c.Kinds = append(c.Kinds, k)
	c.Nums = append(c.Nums, num)
	c.Strs.AppendRef(ref)
}

// stage decodes v into a staged value, copying its bytes into the column's
// arena once. scratch is reused for JSON text. An empty AnyValue stages as
// kind 0, a null.
func (c *Column) stage(v otlpwire.Value, scratch *[]byte) (s staged, err error) {
	s.col, s.vt = c, v.Type()
	switch s.vt {
	case otlpwire.ValueEmpty:
		return s, nil
	case otlpwire.ValueString:
		s.kind, s.ref = KindString, c.Strs.store(v.Str())
	case otlpwire.ValueBytes:
		s.kind, s.ref = KindBytes, c.Strs.store(v.Bytes())
	case otlpwire.ValueInt:
		s.kind, s.num = KindInt, uint64(v.Int())
	case otlpwire.ValueDouble:
		s.kind, s.num = KindDouble, math.Float64bits(v.Double())
	case otlpwire.ValueBool:
		s.kind = KindBool
		if v.Bool() {
			s.num = 1
		}
	default:
		*scratch, err = appendJSON((*scratch)[:0], v, 1)
		if err != nil {
			return s, err
		}
		s.kind, s.ref = KindJSON, c.Strs.store(*scratch)
	}
	return s, nil
}

// truncate drops the values in rows >= row.
func (c *Column) truncate(row int32) {
	n := len(c.Rows)
	for n > 0 && c.Rows[n-1] >= row {
		n--
	}
	c.Rows, c.Kinds, c.Nums = c.Rows[:n], c.Kinds[:n], c.Nums[:n]
	c.Strs.spans = c.Strs.spans[:n]
	c.taken = 0
}

// columns indexes the dynamic columns of a batch by origin and key. Columns
// outlive a reset with their capacity and are reactivated when their key
// appears again, so a reused batch allocates nothing for known keys.
type columns struct {
	list  []*Column // active in this batch, in order of first appearance
	index [numOrigins]map[string]*Column
	gen   uint32 // batch generation; a column with another gen is inactive
	known int
}

// maxKnownColumns bounds the columns kept across resets; past it the index
// is dropped at the next reset.
const maxKnownColumns = 1 << 14

func (cs *columns) get(o Origin, key []byte) *Column {
	c := cs.index[o][string(key)] // no allocation for the lookup
	if c == nil {
		if cs.index[o] == nil {
			cs.index[o] = make(map[string]*Column)
		}
		c = &Column{Origin: o, Key: string(key), keyb: []byte(string(key)), gen: cs.gen}
		c.keyv = parquet.ByteArrayValue(c.keyb)
		c.hotKind, c.hot = hotSet[hotKey{origin: o, key: c.Key}]
		cs.index[o][c.Key] = c
		cs.list = append(cs.list, c)
		cs.known++
		return c
	}
	if c.gen != cs.gen {
		c.clear()
		c.gen = cs.gen
		cs.list = append(cs.list, c)
	}
	return c
}

func (c *Column) clear() {
	c.Rows, c.Kinds, c.Nums = c.Rows[:0], c.Kinds[:0], c.Nums[:0]
	c.Strs.Reset()
	c.taken = 0
}

// rollback removes rows >= row and the columns created after the first
// ncols.
func (cs *columns) rollback(row int32, ncols int) {
	for _, c := range cs.list[ncols:] {
		c.clear()
		c.gen = cs.gen - 1 // inactive
	}
	cs.list = cs.list[:ncols]
	for _, c := range cs.list {
		c.truncate(row)
	}
}

func (cs *columns) reset() {
	cs.list = cs.list[:0]
	cs.gen++
	if cs.known > maxKnownColumns {
		for i := range cs.index {
			clear(cs.index[i])
		}
		cs.known = 0
	}
}
