package lake

import (
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// How a file is laid out (docs/format/lake-parquet.md lists every column):
//
//   - Fixed columns per signal (logSchema, spanSchema), then one optional
//     column per dynamic attribute column present in the file's rows.
//   - Trace, span and parent span ids are lowercase hex strings (32 and 16
//     characters), null when absent, so they compare with the ids every
//     tracing UI shows; trace_id has a bloom filter.
//   - Dynamic columns keep their type. A column whose values have more than
//     one type in one file is written as strings (resolveKind). Column name
//     collisions are resolved by resolveNames. The original keys are kept
//     in the key-value metadata "wirehouse.columns".
//   - Everything is zstd compressed; string columns of resources, scopes and
//     low-cardinality fields are dictionary encoded.

// buildVersion and buildRevision name the build in each file's created_by.
var buildVersion, buildRevision = func() (string, string) {
	version, revision := "devel", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	return version, revision
}()

// chunkRows is how many values are handed to a column writer at once.
const chunkRows = 4096

// spanPageRows caps the rows of a data page in a spans file (schema
// version 2). A trace by id decodes, in each column, the pages that hold
// its spans: one page per column and service section of the trace. At
// the 64 KiB size cut alone a page held up to ~16k rows of a narrow
// column and 4096 of a wide one (the attribute values: ~400 KB
// uncompressed), and a lookup decompressed most of a file. At 512 rows a
// lookup costs about half the CPU (scripts/trace-lookup-cost.sh,
// BenchmarkTrace) for ~15 % more bytes a span (BenchmarkSpansToParquet);
// searches, which read a service's whole section, are unchanged.
// Logs files keep the size cut alone: their bytes are a goal of their
// own.
const spanPageRows = 512

// spanGroupMinRows is the fewest rows a row group of a spans file (schema
// version 2) holds before it is cut where the service changes: each
// service of at least that many spans gets row groups of its own, so that
// a row group's trace_id bloom filter speaks for one service's spans (a
// trace by id reads only the services that hold the trace, not every
// service whose trace_id page bounds admit its id) and its service_name
// statistics name one service. Smaller services share row groups: each
// costs a footer entry and a page index per column.
const spanGroupMinRows = 2048

// pageSize is the uncompressed size a data page is cut at. Smaller than
// parquet-go's 256 KiB default: pages that stay in cache compress faster
// (BenchmarkLogsToParquet, about 8 % on this machine), at about 2 % more
// bytes.
const pageSize = 64 << 10

// kindMask has bit k set when a column holds a value of Kind k.
type kindMask uint8

// resolveKind returns the Kind a column of mask is written as: its only
// kind, string for strings mixed with JSON text, and string for any other
// mix (a type conflict within one file).
func resolveKind(m kindMask) Kind {
	for k := KindString; k <= KindJSON; k++ {
		if m == 1<<k {
			if k == KindJSON {
				return KindString
			}
			return k
		}
	}
	return KindString
}

// fileCol is one column of a file being written: its schema node and how
// to produce its values for a run of rows. A nested column (a group: a
// list, a map) has a fill per leaf instead (leaves), each producing the
// leaf's values with their repetition and definition levels.
type fileCol struct {
	name   string
	node   parquet.Node
	fill   fillFunc
	leaves []leafCol
	dyn    *Column  // a dynamic column, marked in e.at while filled
	n      int      // rows in dyn's batch
	mask   kindMask // the kinds of dyn's values in the file
}

// fillFunc appends the values of a leaf column for the rows sel, each set
// to column index idx.
//
// Fills grow dst by a zero Value and then assign the new one in place
// (dst[len(dst)-1] = parquet.ByteArrayValue(b)), never
// append(dst, parquet.ByteArrayValue(b)): a parquet.Value has six fields,
// which the compiler keeps in memory, and appended directly a
// constructor's result is stored to a temporary field by field and copied
// into dst 16 bytes at a time, a reload that stalls on store forwarding
// (BenchmarkAppendValue: twice the time per value; ~6 % of serve's CPU on
// a logs load).
type fillFunc func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value

// leafCol is a leaf of a nested fileCol: its path below the column's name
// and its fill.
type leafCol struct {
	path []string
	fill fillFunc
}

// encoder writes batches as Parquet files. Its scratch buffers are reused
// from file to file.
type encoder struct {
	rowGroupRows int
	maxAttrCols  int      // WriterConfig.MaxAttributeColumns; 0 for the default
	noIndexes    bool     // WriterConfig.NoIndexes
	traceFPs     []uint32 // a spans file's trace-id fingerprints, reused
	pageRows     int      // if > 0, the most rows of a data page (the file being written)
	// groupCut, if set, is where the row group starting at sel[start]
	// ends, at or before end (the file being written): serviceCut.
	groupCut func(sel []int32, start, end int) int
	// pageCut, if set, says whether a data page is to end before row
	// rg[i] of the row group rg being written (i > 0): where the service
	// changes in a logs file (logPageCut).
	// Every column is cut, the dictionary-coded ones too: reading a few
	// rows of a page of a whole file's dictionary indexes decodes them
	// all (a version-3 file of 25,500 rows has ~25 such columns).
	pageCut  func(rg []int32, i int) bool
	cuts     []int // where pages end in the row group being written: pageCut's answers
	keys     []sortKey
	timeKeys []timeKey
	ranks    []uint32
	sel      []int32
	vals     []parquet.Value
	text     []byte  // hex ids and converted values of the current chunk
	at       []int32 // at[row] is the index of row's value in the column being filled, or -1
	// logsV3 makes logs files of version 3 (keyPlan); plan is the key
	// columns of the one being written, and beforeGroup, if set, is
	// called with each row group's rows before its columns are filled.
	logsV3      bool
	plan        keyPlan
	beforeGroup func(rg []int32)
}

// mark fills e.at for column c; unmark undoes it.
func (e *encoder) mark(c *Column, n int) {
	if len(e.at) < n {
		e.at = slices.Grow(e.at[:0], n)[:n]
		for i := range e.at {
			e.at[i] = -1
		}
	}
	for i, r := range c.Rows {
		e.at[r] = int32(i)
	}
}

func (e *encoder) unmark(c *Column) {
	for _, r := range c.Rows {
		e.at[r] = -1
	}
}

// kinds returns the kinds of c's values in rows sel of a batch of n rows,
// and how many values those rows hold.
func (e *encoder) kinds(c *Column, sel []int32, n int) (kindMask, int) {
	var m kindMask
	if len(sel) == n { // the file holds every row of the batch
		for _, k := range c.Kinds {
			m |= 1 << k
		}
		return m, len(c.Kinds)
	}
	e.mark(c, n)
	count := 0
	for _, r := range sel {
		if i := e.at[r]; i >= 0 {
			m |= 1 << c.Kinds[i]
			count++
		}
	}
	e.unmark(c)
	return m, count
}

// dynamicCols returns the columns for the dynamic columns with a value in
// rows sel, named by resolveNames, and the metadata that maps names back
// to keys. reserved holds the fixed column names. Past the encoder's
// column limit the columns with fewest values go to the overflow columns
// instead (limitColumns).
func (e *encoder) dynamicCols(cols []*Column, sel []int32, n int, reserved map[string]bool) ([]fileCol, string, error) {
	present := make([]*Column, 0, len(cols))
	masks := make([]kindMask, 0, len(cols))
	counts := make([]int, 0, len(cols))
	for _, c := range cols {
		if m, count := e.kinds(c, sel, n); m != 0 {
			present = append(present, c)
			masks = append(masks, m)
			counts = append(counts, count)
		}
	}
	present, masks, over := limitColumns(present, masks, counts, e.maxColumns())
	names := resolveNames(present, reserved)
	out := make([]fileCol, len(present), len(present)+int(numOrigins))
	meta := make(map[string]columnMeta, len(present)+int(numOrigins))
	for i, c := range present {
		k := resolveKind(masks[i])
		out[i] = fileCol{name: names[i], node: dynamicNode(c, k), fill: dynamicFill(c, k), dyn: c, n: n, mask: masks[i]}
		meta[names[i]] = columnMeta{Origin: originNames[c.Origin], Key: c.Key, Type: kindNames[k]}
	}
	for _, oc := range overflowCols(over, n) {
		out = append(out, oc)
		for o, name := range overflowNames {
			if name == oc.name {
				meta[name] = columnMeta{Origin: originNames[o], Type: overflowType}
			}
		}
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, "", fmt.Errorf("encode column metadata: %w", err)
	}
	return out, string(b), nil
}

// maxColumns is the most attribute columns of one file.
func (e *encoder) maxColumns() int {
	if e.maxAttrCols > 0 {
		return e.maxAttrCols
	}
	return DefaultMaxAttributeColumns
}

// columnMeta is one entry of the "wirehouse.columns" metadata.
type columnMeta struct {
	Origin string `json:"origin"`
	Key    string `json:"key"` // empty for an overflow column
	Type   string `json:"type"`
}

var (
	originNames = [numOrigins]string{"resource", "scope", "record"}
	kindNames   = [...]string{KindString: "string", KindInt: "int64", KindDouble: "double", KindBool: "bool", KindBytes: "bytes", KindJSON: "json"}
)

// resolveNames names the columns: ColumnName of each, and where several
// columns share a name, the columns in order of (origin: resource, scope,
// record; keys without upper-case letters first; key bytes) take the name,
// then name_2, name_3, … skipping names already taken. A name that is a
// fixed column's starts at name_2. So "service.name" keeps
// resource_service_name beside "Service.Name" (resource_service_name_2),
// and "http.method" keeps attr_http_method beside "http_method". The result
// depends only on the set of (origin, key) in the file, not on arrival
// order.
func resolveNames(cols []*Column, reserved map[string]bool) []string {
	order := make([]int, len(cols))
	base := make([]string, len(cols))
	for i, c := range cols {
		order[i] = i
		base[i] = ColumnName(c.Origin, []byte(c.Key))
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(base[a], base[b]); c != 0 {
			return c
		}
		if cols[a].Origin != cols[b].Origin {
			return int(cols[a].Origin) - int(cols[b].Origin)
		}
		if ua, ub := hasUpper(cols[a].Key), hasUpper(cols[b].Key); ua != ub {
			if ub {
				return -1
			}
			return 1
		}
		return cmp.Compare(cols[a].Key, cols[b].Key)
	})
	taken := make(map[string]bool, len(cols))
	for _, i := range order { // every distinct base name is taken first
		if !reserved[base[i]] {
			taken[base[i]] = true
		}
	}
	names := make([]string, len(cols))
	for j, i := range order {
		if j > 0 && base[order[j-1]] == base[i] || reserved[base[i]] {
			for n := 2; ; n++ {
				name := base[i] + "_" + strconv.Itoa(n)
				if !taken[name] && !reserved[name] {
					taken[name] = true
					names[i] = name
					break
				}
			}
			continue
		}
		names[i] = base[i]
	}
	return names
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// dynamicNode is the schema node of a dynamic column written as kind k.
// Resource and scope strings repeat on every row of their resource and are
// dictionary encoded; record strings are when a sample of them repeats.
func dynamicNode(c *Column, k Kind) parquet.Node {
	n := kindNode(k)
	if k != KindInt && k != KindDouble && k != KindBool && k != KindBytes && (c.Origin != OriginRecord || repetitive(c)) {
		n = parquet.Encoded(n, &parquet.RLEDictionary)
	}
	return parquet.Optional(n)
}

// kindNode is the leaf node of a column of values of kind k, unencoded:
// strings and JSON text a STRING.
func kindNode(k Kind) parquet.Node {
	switch k {
	case KindInt:
		return parquet.Int(64)
	case KindDouble:
		return parquet.Leaf(parquet.DoubleType)
	case KindBool:
		return parquet.Leaf(parquet.BooleanType)
	case KindBytes:
		return parquet.Leaf(parquet.ByteArrayType)
	}
	return parquet.String()
}

// repetitive reports whether the first values of a string column repeat
// enough for a dictionary to pay: fewer than half of them distinct.
func repetitive(c *Column) bool {
	n := min(c.Strs.Len(), 256)
	if n < 16 {
		return true
	}
	seen := make(map[string]struct{}, n)
	for i := range n {
		seen[string(c.Strs.At(int(i)))] = struct{}{}
	}
	return len(seen)*2 < n
}

// dynamicFill returns the fill function of a dynamic column, which must
// be marked in e.at: its value in each row of sel, or a null. Values of
// another kind than k (a type conflict) are converted to text by
// appendText.
//
// The fill functions set levels and column index on the appended slot
// with the pointer setters rather than with Value.Level, which copies the
// value in and out and is not inlined: that was 8 % of the Parquet path's
// CPU, and the setters made BenchmarkLogsToParquet 7-13 % faster.
func dynamicFill(c *Column, k Kind) func(*encoder, []parquet.Value, []int32, int) []parquet.Value {
	return func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		null := parquet.Value{}.Level(0, 0, idx)
		for _, r := range sel {
			i := e.at[r]
			if i < 0 {
				dst = append(dst, null)
				continue
			}
			dst = append(dst, parquet.Value{}) // then set in place: see fillFunc
			v := &dst[len(dst)-1]
			switch ck := c.Kinds[i]; {
			case ck == k || k == KindString && ck == KindJSON:
				switch k {
				case KindInt:
					*v = parquet.Int64Value(int64(c.Nums[i]))
				case KindDouble:
					*v = parquet.DoubleValue(math.Float64frombits(c.Nums[i]))
				case KindBool:
					*v = parquet.BooleanValue(c.Nums[i] == 1)
				default:
					*v = parquet.ByteArrayValue(c.Strs.At(int(i)))
				}
			default:
				start := len(e.text)
				e.text = appendText(e.text, ck, c.Nums[i], c.Strs.At(int(i)))
				*v = parquet.ByteArrayValue(e.text[start:len(e.text):len(e.text)])
			}
			v.SetDefinitionLevel(1)
			v.SetColumnIndex(idx)
		}
		return dst
	}
}

// appendText renders a value as the string a conflicting column holds:
// ints in decimal, doubles in the shortest form that reads back the same
// (NaN, +Inf, -Inf as strconv writes them), bools as true or false, bytes
// in standard base64, strings and JSON text as they are.
func appendText(dst []byte, k Kind, num uint64, s []byte) []byte {
	switch k {
	case KindInt:
		return strconv.AppendInt(dst, int64(num), 10)
	case KindDouble:
		return strconv.AppendFloat(dst, math.Float64frombits(num), 'g', -1, 64)
	case KindBool:
		return strconv.AppendBool(dst, num == 1)
	case KindBytes:
		return base64.StdEncoding.AppendEncode(dst, s)
	}
	return append(dst, s...)
}

// Fixed column helpers. Each returns a fileCol whose fill reads one field
// of the batch by row number.

func int64Col(name string, get func(r int32) int64) fileCol {
	return fileCol{name: name, node: parquet.Int(64), fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.Int64Value(get(r))
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

func int32Col(name string, s []int32) fileCol {
	return fileCol{name: name, node: parquet.Int(32), fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.Int32Value(s[r])
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

func uint32Col(name string, s []uint32) fileCol {
	return fileCol{name: name, node: parquet.Uint(32), fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.Int32Value(int32(s[r]))
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// stringCol is a required string column; dict chooses dictionary encoding.
func stringCol(name string, s *Strings, dict bool) fileCol {
	node := parquet.String()
	if dict {
		node = parquet.Encoded(node, &parquet.RLEDictionary)
	}
	return fileCol{name: name, node: node, fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.ByteArrayValue(s.At(int(r)))
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// idCol is an optional column of ids as lowercase hex; an empty id is null.
func idCol(name string, s *Strings) fileCol {
	return fileCol{name: name, node: parquet.Optional(parquet.String()), fill: func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		null := parquet.Value{}.Level(0, 0, idx)
		for _, r := range sel {
			id := s.At(int(r))
			if len(id) == 0 {
				dst = append(dst, null)
				continue
			}
			start := len(e.text)
			e.text = hex.AppendEncode(e.text, id)
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.ByteArrayValue(e.text[start:len(e.text):len(e.text)])
			dst[len(dst)-1].SetDefinitionLevel(1)
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// writeFile writes the rows sel (in that order) as one Parquet file to out.
// cols are the fixed then dynamic columns; sorting names the columns the
// rows are sorted by; meta is added as key-value metadata.
func (e *encoder) writeFile(out io.Writer, cols []fileCol, sel []int32, sorting []parquet.SortingColumn, meta map[string]string) error {
	group := make(parquet.Group, len(cols))
	for _, c := range cols {
		if _, dup := group[c.name]; dup {
			return fmt.Errorf("write parquet: column %q twice", c.name)
		}
		if c.leaves != nil {
			group[c.name] = c.node // leaves compressed by the writer's default
		} else {
			group[c.name] = parquet.Compressed(c.node, zstdCodec)
		}
	}
	schema := parquet.NewSchema("wirehouse", group)
	w := parquet.NewGenericWriter[any](out, writerOptions(schema, sorting, meta)...)
	// The writer orders columns as the schema does (by name); map ours.
	type leafWrite struct {
		name string
		fill fillFunc
		col  *fileCol
		idx  int
	}
	var leaves []leafWrite
	for i := range cols {
		c := &cols[i]
		paths, fills := [][]string{nil}, []fillFunc{c.fill}
		if c.leaves != nil {
			paths, fills = paths[:0], fills[:0]
			for _, l := range c.leaves {
				paths, fills = append(paths, l.path), append(fills, l.fill)
			}
		}
		for j, p := range paths {
			path := append([]string{c.name}, p...)
			lc, ok := schema.Lookup(path...)
			if !ok {
				return fmt.Errorf("write parquet: column %q missing from schema", strings.Join(path, "."))
			}
			leaves = append(leaves, leafWrite{strings.Join(path, "."), fills[j], c, lc.ColumnIndex})
		}
	}
	if len(leaves) != len(schema.Columns()) {
		return fmt.Errorf("write parquet: %d leaves filled, the schema has %d", len(leaves), len(schema.Columns()))
	}
	writers := w.ColumnWriters()
	for g := 0; g < len(sel); {
		end := min(g+e.rowGroupRows, len(sel))
		if e.groupCut != nil {
			end = e.groupCut(sel, g, end)
		}
		rg := sel[g:end]
		g = end
		if e.beforeGroup != nil {
			e.beforeGroup(rg)
		}
		e.cuts = e.cuts[:0]
		if e.pageCut != nil {
			for i := 1; i < len(rg); i++ {
				if e.pageCut(rg, i) {
					e.cuts = append(e.cuts, i)
				}
			}
		}
		for _, l := range leaves {
			if err := e.writeColumn(writers[l.idx], l.col, l.name, l.fill, rg, l.idx, e.cuts); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("write parquet row group: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write parquet: %w", err)
	}
	clear(e.vals[:cap(e.vals)]) // drop references to the batch's arenas
	return nil
}

// writerOptions are the options of every lake file, written by the Writer
// or by compaction: schema, zstd, created_by, the sort, the page size, a
// bloom filter on trace_id if the schema has one, and meta as key-value
// metadata. Page bounds go to the page index (ColumnIndex) and the column
// chunks' statistics only, not also to every data page header, the older
// place that readers with a page index do not use: parquet-go computes a
// page's bounds once per place, and the second pass was ~4 % of the
// Parquet path's CPU in a profile (BenchmarkLogsToParquet ~2 % faster
// without it).
func writerOptions(schema *parquet.Schema, sorting []parquet.SortingColumn, meta map[string]string) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		schema,
		parquet.Compression(zstdCodec),
		parquet.CreatedBy("wirehouse", buildVersion, buildRevision),
		parquet.SortingWriterConfig(parquet.SortingColumns(sorting...)),
		parquet.PageBufferSize(pageSize),
		parquet.DataPageStatistics(false),
	}
	if _, ok := schema.Lookup("trace_id"); ok {
		opts = append(opts, parquet.BloomFilters(parquet.SplitBlockFilter(10, "trace_id")))
	}
	// The leaves of maps and lists (schema version 2) have no page
	// bounds: nothing is pruned by the bounds of attribute keys, values or
	// event names, and computing them was ~10 % of writing a file.
	for _, path := range schema.Columns() {
		if len(path) > 1 {
			opts = append(opts, parquet.SkipPageBounds(path...))
		}
	}
	for k, v := range meta {
		opts = append(opts, parquet.KeyValueMetadata(k, v))
	}
	return opts
}

// writeColumn writes the leaf name (filled by fill) of column c of the
// rows rg to cw in chunks, ending a page before each row of rg at cuts.
func (e *encoder) writeColumn(cw *parquet.ColumnWriter, c *fileCol, name string, fill fillFunc, rg []int32, idx int, cuts []int) error {
	if c.dyn != nil {
		e.mark(c.dyn, c.n)
		defer e.unmark(c.dyn)
	}
	step := chunkRows
	if e.pageRows > 0 {
		step = min(step, e.pageRows)
	}
	for k := 0; k < len(rg); {
		end := min(k+step, len(rg))
		cut := e.pageRows > 0
		if len(cuts) > 0 && cuts[0] <= end {
			end, cut, cuts = cuts[0], true, cuts[1:]
		}
		chunk := rg[k:end]
		k = end
		e.text = e.text[:0]
		e.vals = fill(e, e.vals[:0], chunk, idx)
		if _, err := cw.WriteRowValues(e.vals); err != nil {
			return fmt.Errorf("write parquet column %s: %w", name, err)
		}
		// The writer cuts a page at the size limit by itself; the row
		// cap and the cuts end one here (a no-op if it was just cut).
		if cut {
			if err := cw.Flush(); err != nil {
				return fmt.Errorf("write parquet column %s: %w", name, err)
			}
		}
	}
	return nil
}

// sortKey orders rows: by partition hour, then service name rank, then
// trace id (spans of schema version 2: id, then time, then arrival), else
// time, then arrival.
type sortKey struct {
	hi  uint64 // hour<<32 | service rank
	id0 uint64 // the trace id's first and last 8 bytes, big-endian; 0 for logs and v1
	id1 uint64
	t   int64
	row int32
}

func cmpKeys(a, b sortKey) int {
	// Field by field, stopping at the first that differs (cmp.Or would
	// compare them all: this runs n log n times a flush).
	switch {
	case a.hi != b.hi:
		return cmp.Compare(a.hi, b.hi)
	case a.id0 != b.id0:
		return cmp.Compare(a.id0, b.id0)
	case a.id1 != b.id1:
		return cmp.Compare(a.id1, b.id1)
	case a.t != b.t:
		return cmp.Compare(a.t, b.t)
	}
	return cmp.Compare(a.row, b.row)
}

// A timeKey is a sortKey without the trace id, for batches sorted
// without one (logs, spans of schema version 1). Its three fields stay in
// registers through the sort's comparisons and moves, where sortKey's
// five are copied through memory and reloaded (a store-forwarding stall:
// ~3 % of serve's CPU on a logs load went to sorting sortKeys).
type timeKey struct {
	hi  uint64
	t   int64
	row int32
}

func cmpTimeKeys(a, b timeKey) int {
	switch {
	case a.hi != b.hi:
		return cmp.Compare(a.hi, b.hi)
	case a.t != b.t:
		return cmp.Compare(a.t, b.t)
	}
	return cmp.Compare(a.row, b.row)
}

// order sorts the n rows of a batch by (hour, service name, trace id,
// time, arrival), trace ids (raw, 16 bytes or empty) only if ids is not
// nil, and returns the sort keys and the row numbers in that order, both
// owned by e and valid until the next call. hour gives a row's partition
// hour.
//
// Spans of one trace and service are thus next to each other, in runs of
// trace ids that a page's or row group's trace_id bounds narrow down: a
// reader of a trace by id reads the pages that may hold it, and its rows
// in one stretch, rather than every page (as Tempo orders its blocks).
func (e *encoder) order(n int, services *Strings, ids *Strings, times []int64, hour func(int32) int64) ([]sortKey, []int32) {
	e.ranks = serviceRanks(services, e.ranks)
	e.keys, e.sel = e.keys[:0], e.sel[:0]
	if ids == nil {
		e.timeKeys = e.timeKeys[:0]
		for r := range int32(n) {
			e.timeKeys = append(e.timeKeys, timeKey{hi: uint64(hour(r))<<32 | uint64(e.ranks[r]), t: times[r], row: r})
		}
		slices.SortFunc(e.timeKeys, cmpTimeKeys)
		for _, k := range e.timeKeys {
			e.keys = append(e.keys, sortKey{hi: k.hi, t: k.t, row: k.row})
			e.sel = append(e.sel, k.row)
		}
		return e.keys, e.sel
	}
	for r := range int32(n) {
		k := sortKey{hi: uint64(hour(r))<<32 | uint64(e.ranks[r]), t: times[r], row: r}
		if id := ids.At(int(r)); len(id) == 16 {
			k.id0, k.id1 = binary.BigEndian.Uint64(id), binary.BigEndian.Uint64(id[8:])
		}
		e.keys = append(e.keys, k)
	}
	slices.SortFunc(e.keys, cmpKeys)
	for _, k := range e.keys {
		e.sel = append(e.sel, k.row)
	}
	return e.keys, e.sel
}

// serviceRanks gives each row the rank of its service name among the
// batch's distinct names (0 for none). Rows of one resource share one
// arena reference, so the map is consulted once per resource.
func serviceRanks(s *Strings, dst []uint32) []uint32 {
	dst = dst[:0]
	distinct := map[string]uint32{}
	refs := make([]strSpan, 0, 16)
	for i, sp := range s.spans {
		if i > 0 && sp == s.spans[i-1] {
			continue
		}
		if _, ok := distinct[string(s.At(i))]; !ok {
			distinct[string(s.At(i))] = 0
			refs = append(refs, sp)
		}
	}
	names := make([]string, 0, len(distinct))
	for k := range distinct {
		names = append(names, k)
	}
	slices.Sort(names)
	for i, k := range names {
		distinct[k] = uint32(i)
	}
	var last strSpan
	var rank uint32
	for i, sp := range s.spans {
		if i == 0 || sp != last {
			rank, last = distinct[string(s.At(i))], sp
		}
		dst = append(dst, rank)
	}
	return dst
}
