package lake

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/wirehouse/wirehouse/internal/durable"
)

// Compaction merges the small files of an hour partition into one, so a
// lake fed a little at a time (a file per partition per max delay) does not
// leave a query a thousand files a day to open.
//
// Only files the lake loader names after the spool records they hold,
// <first>-<last>.parquet (20 digits each), take part, and only those
// whose records are committed: their names say which records they hold,
// so the merged file is named after the range it covers,
// <first of the first>-<last of the last>.parquet, and any file whose range
// lies inside another file's range is an input of an interrupted compaction
// that wrote its output: it is removed. Files of other names (wirehouse
// ingest's) are left as they are.
//
// The merged file has the union of its inputs' columns, the same sort
// (rows stay sorted by service and time), dictionaries where an input had
// one, zstd, statistics, page index and the trace_id bloom filter, and the
// union of their wirehouse.columns metadata. Inputs that disagree on a
// column (its type, or the key it holds) or on the sort are not merged.
// The output is written under a temporary name, checked to hold as many
// rows as its inputs, synced and renamed into place; then the inputs are
// removed. Between the rename and the removal a reader listing the
// partition can see rows twice; a Hive-style lake has no atomic swap of
// several files.

// CompactOptions sets when a partition is compacted.
type CompactOptions struct {
	// After is how long after its hour ends a partition is left alone:
	// late records still arrive (the loader's max delay). Default 5 min.
	After time.Duration
	// MinFiles is the fewest mergeable files worth merging. Default 4.
	MinFiles int
	// MaxBytes bounds the inputs of one merge (the files of a partition
	// are merged in runs of at most this many bytes). parquet-go's merge
	// holds about 16 times a run's bytes in memory (BenchmarkCompact and
	// a heap sampled during a merge), so the default is 4 MiB: about 70 MB
	// of heap, and a quiet hour's 60 files of a few hundred KB each
	// become a handful.
	MaxBytes int64
}

func (o *CompactOptions) defaults() {
	if o.After <= 0 {
		o.After = 5 * time.Minute
	}
	if o.MinFiles < 2 {
		o.MinFiles = 4
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 4 << 20
	}
}

// Compacted tells what a Compact pass did.
type Compacted struct {
	Merges   int      // files written
	Inputs   int      // files they replaced
	Rows     int64    // rows in the files written
	Leftover int      // inputs of interrupted compactions removed
	Skipped  []string // partitions whose files could not be merged, and why
}

// Compact compacts every partition of the lake at root whose hour ended
// more than o.After before now, merging only files of records up to
// committed (the loader's spool cursor). Like Prune, it must not run while
// a Writer writes into the lake; the loader holds one lock over both.
func Compact(root string, committed uint64, now time.Time, o CompactOptions) (Compacted, error) {
	o.defaults()
	var c Compacted
	parts, _, err := partitions(root, time.Time{}) // no stale-temp removal here
	if err != nil {
		return c, err
	}
	for _, pt := range parts {
		if pt.hour.Add(time.Hour + o.After).After(now) {
			continue
		}
		if err := compactPartition(pt.dir, committed, o, &c); err != nil {
			return c, err
		}
	}
	return c, nil
}

// rangeFile is a loader file of a partition.
type rangeFile struct {
	name        string
	first, last uint64
	size        int64
}

// parseRange parses <first>-<last>.parquet, 20 digits each.
func parseRange(name string) (first, last uint64, ok bool) {
	base, isParquet := strings.CutSuffix(name, ".parquet")
	a, z, found := strings.Cut(base, "-")
	if !isParquet || !found || len(a) != 20 || len(z) != 20 {
		return 0, 0, false
	}
	first, err1 := strconv.ParseUint(a, 10, 64)
	last, err2 := strconv.ParseUint(z, 10, 64)
	if err1 != nil || err2 != nil || first == 0 || last < first {
		return 0, 0, false
	}
	return first, last, true
}

func compactPartition(dir string, committed uint64, o CompactOptions, c *Compacted) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("compact lake: %w", err)
	}
	var files []rangeFile
	for _, e := range entries {
		first, last, ok := parseRange(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, rangeFile{name: e.Name(), first: first, last: last, size: info.Size()})
	}
	// Widest first among equal starts, so containment is one pass.
	slices.SortFunc(files, func(a, b rangeFile) int {
		if a.first != b.first {
			return cmp.Compare(a.first, b.first)
		}
		return cmp.Compare(b.last, a.last)
	})
	kept := files[:0]
	for _, f := range files {
		if len(kept) > 0 && f.last <= kept[len(kept)-1].last {
			// Inside the previous file's range: an input of a compaction
			// whose output is in place.
			if err := os.Remove(filepath.Join(dir, f.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("compact lake: %w", err)
			}
			c.Leftover++
			continue
		}
		kept = append(kept, f)
	}
	files = kept
	// Only committed records; a merge never spans a file it cannot take.
	for i, f := range files {
		if f.last > committed {
			files = files[:i]
			break
		}
	}
	// Runs of about equal size, at most MaxBytes each (so no short run is
	// left over), each merged when it has MinFiles files.
	var total int64
	for _, f := range files {
		total += f.size
	}
	runs := max(1, (total+o.MaxBytes-1)/o.MaxBytes)
	target := (total + runs - 1) / runs
	for len(files) > 0 {
		n, size := 0, int64(0)
		for n < len(files) && size < target && (n == 0 || size+files[n].size <= o.MaxBytes) {
			size += files[n].size
			n++
		}
		run := files[:n]
		files = files[n:]
		if len(run) < o.MinFiles {
			continue
		}
		rows, why, err := mergeFiles(dir, run)
		if err != nil {
			return err
		}
		if why != "" {
			c.Skipped = append(c.Skipped, dir+": "+why)
			continue
		}
		c.Merges++
		c.Inputs += len(run)
		c.Rows += rows
	}
	return nil
}

// inputFile is an open input of a merge.
type inputFile struct {
	f    *os.File
	pf   *parquet.File
	meta map[string]columnMeta
}

// mergeFiles merges run into one file of dir. why is set, and nothing
// changed, when the inputs cannot be merged.
func mergeFiles(dir string, run []rangeFile) (rows int64, why string, err error) {
	inputs := make([]inputFile, 0, len(run))
	defer func() {
		for _, in := range inputs {
			in.f.Close()
		}
	}()
	var want int64
	for _, rf := range run {
		f, err := os.Open(filepath.Join(dir, rf.name))
		if err != nil {
			return 0, "", fmt.Errorf("compact lake: %w", err)
		}
		pf, err := parquet.OpenFile(f, rf.size)
		if err != nil {
			f.Close()
			return 0, fmt.Sprintf("%s: %v", rf.name, err), nil
		}
		in := inputFile{f: f, pf: pf}
		if v, ok := pf.Lookup("wirehouse.columns"); ok {
			if err := json.Unmarshal([]byte(v), &in.meta); err != nil {
				f.Close()
				return 0, fmt.Sprintf("%s: wirehouse.columns: %v", rf.name, err), nil
			}
		}
		inputs = append(inputs, in)
		want += pf.NumRows()
	}
	schema, meta, sorting, why := unionSchema(inputs)
	if why != "" {
		return 0, why, nil
	}
	var groups []parquet.RowGroup
	for _, in := range inputs {
		groups = append(groups, in.pf.RowGroups()...)
	}
	merged, err := parquet.MergeRowGroups(groups, schema, parquet.SortingRowGroupConfig(parquet.SortingColumns(sorting...)))
	if err != nil {
		return 0, fmt.Sprintf("merge: %v", err), nil
	}
	signal, _ := inputs[0].pf.Lookup("wirehouse.signal")
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return 0, "", fmt.Errorf("compact lake: %w", err)
	}
	opts := append(writerOptions(schema, sorting, map[string]string{
		"wirehouse.signal":  signal,
		"wirehouse.columns": string(metaJSON),
	}), parquet.MaxRowsPerRowGroup(128<<10))
	name := RangeName(run[0].first, run[len(run)-1].last) + ".parquet"
	tmp := filepath.Join(dir, "."+name+".tmp")
	out, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, "", fmt.Errorf("compact lake: %w", err)
	}
	w := parquet.NewGenericWriter[any](out, opts...)
	_, err = w.WriteRowGroup(merged) // its count is the last row group's
	if err == nil {
		err = w.Close()
	}
	var n int64
	if err == nil {
		// What a reader will see: the footer of the file as written.
		n, err = footerRows(out)
	}
	if err == nil && n != want {
		err = fmt.Errorf("merged file holds %d rows, its inputs %d", n, want)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return 0, "", fmt.Errorf("compact lake %s: %w", filepath.Join(dir, name), err)
	}
	if err := durable.SyncDir(dir); err != nil {
		return 0, "", fmt.Errorf("compact lake: %w", err)
	}
	for _, rf := range run {
		if err := os.Remove(filepath.Join(dir, rf.name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return n, "", fmt.Errorf("compact lake: %w", err)
		}
	}
	if err := durable.SyncDir(dir); err != nil {
		return n, "", fmt.Errorf("compact lake: %w", err)
	}
	return n, "", nil
}

// footerRows is the row count the footer of the Parquet file f states.
func footerRows(f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, fmt.Errorf("reopen merged file: %w", err)
	}
	return pf.NumRows(), nil
}

// RangeName is the name, without .parquet, of the files the lake loader
// writes of the spool records first to last: both in 20 digits.
func RangeName(first, last uint64) string { return fmt.Sprintf("%020d-%020d", first, last) }

// unionSchema is the schema of the merged file: every input column, the
// same type and key in every input that has it, dictionary encoded where
// an input's was; and the inputs' common sort. why says what disagrees.
func unionSchema(inputs []inputFile) (*parquet.Schema, map[string]columnMeta, []parquet.SortingColumn, string) {
	type col struct {
		field parquet.Field
		dict  bool
	}
	cols := map[string]*col{}
	meta := map[string]columnMeta{}
	var signal string
	var sorting []parquet.SortingColumn
	for i, in := range inputs {
		sig, _ := in.pf.Lookup("wirehouse.signal")
		if i == 0 {
			signal = sig
		} else if sig != signal {
			return nil, nil, nil, fmt.Sprintf("signals %q and %q", signal, sig)
		}
		dict := dictionaryColumns(in.pf.Metadata())
		for _, f := range in.pf.Schema().Fields() {
			if !f.Leaf() {
				return nil, nil, nil, fmt.Sprintf("column %s is not a leaf", f.Name())
			}
			c, ok := cols[f.Name()]
			if !ok {
				cols[f.Name()] = &col{field: f, dict: dict[f.Name()]}
				continue
			}
			if c.field.Type().String() != f.Type().String() || c.field.Optional() != f.Optional() || c.field.Repeated() != f.Repeated() {
				return nil, nil, nil, fmt.Sprintf("column %s is %s in one file, %s in another", f.Name(), c.field.Type(), f.Type())
			}
			c.dict = c.dict || dict[f.Name()]
		}
		for name, m := range in.meta {
			if prev, ok := meta[name]; ok && prev != m {
				return nil, nil, nil, fmt.Sprintf("column %s holds %s %q (%s) in one file, %s %q (%s) in another", name, prev.Origin, prev.Key, prev.Type, m.Origin, m.Key, m.Type)
			}
			meta[name] = m
		}
		var s []parquet.SortingColumn
		for j, rg := range in.pf.RowGroups() {
			if j == 0 {
				s = rg.SortingColumns()
			} else if !slices.EqualFunc(rg.SortingColumns(), s, sameSorting) {
				return nil, nil, nil, "row groups sorted differently"
			}
		}
		if i == 0 {
			sorting = s
		} else if !slices.EqualFunc(s, sorting, sameSorting) {
			return nil, nil, nil, "files sorted differently"
		}
	}
	group := make(parquet.Group, len(cols))
	for name, c := range cols {
		n := parquet.Leaf(c.field.Type())
		if c.dict {
			n = parquet.Encoded(n, &parquet.RLEDictionary)
		}
		if c.field.Optional() {
			n = parquet.Optional(n)
		}
		group[name] = parquet.Compressed(n, zstdCodec)
	}
	return parquet.NewSchema("wirehouse", group), meta, sorting, ""
}

func sameSorting(a, b parquet.SortingColumn) bool {
	return slices.Equal(a.Path(), b.Path()) && a.Descending() == b.Descending() && a.NullsFirst() == b.NullsFirst()
}

// dictionaryColumns names the columns some row group of a file stored
// with a dictionary.
func dictionaryColumns(md *format.FileMetaData) map[string]bool {
	out := map[string]bool{}
	for _, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			if len(cc.MetaData.PathInSchema) == 0 {
				continue
			}
			if slices.Contains(cc.MetaData.Encoding, format.RLEDictionary) || slices.Contains(cc.MetaData.Encoding, format.PlainDictionary) {
				out[cc.MetaData.PathInSchema[0]] = true
			}
		}
	}
	return out
}
