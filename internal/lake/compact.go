package lake

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// Compaction merges the small files of an hour partition into one, so a
// lake fed a little at a time (a file per partition per max delay) does not
// leave a query a thousand files a day to open.
//
// Only files the lake loader writes take part, named after the spool
// records they hold, <first>-<last>.parquet (20 digits each), and earlier
// merges' outputs, <first>-<last>-c[N].parquet; and only those whose
// records the loader committed. Files of other names (wirehouse ingest's)
// are left as they are.
//
// The merged file has the union of its inputs' columns, the same sort
// (rows stay sorted by service and time), dictionaries where an input had
// one, zstd, statistics, page index and the trace_id bloom filter, and the
// union of their wirehouse.columns metadata. Inputs that disagree on a
// column (its type, or the key it holds) or on the sort, or that cannot be
// read, are not merged; the partition is tried again when its files
// change (with a Memo) or after an hour.
//
// A merge is written in a scratch file (CompactOptions.ScratchDir) and
// checked to hold as many rows as its inputs; then an intent file,
// .compact in the partition, records the output and its inputs (uploaded,
// so durable) before the output is uploaded (on a directory: renamed into
// place) and the inputs removed. After a crash, or an upload whose outcome
// is unknown, the next pass reads the intent: if the output is in place,
// the inputs still there are removed; if not, the merge never happened.
// Nothing is inferred from file names, which a spool that lost its tail
// (fsync policy never) can reuse. Between the upload and the removal a
// reader listing the partition can see rows twice; a Hive-style lake has
// no atomic swap of several files.

// CompactOptions sets when and how a partition is compacted.
type CompactOptions struct {
	// After is how long after its hour ends a partition is left alone:
	// late records still arrive (the loader's max delay). Default 5 min.
	After time.Duration
	// MinFiles is the fewest mergeable files worth merging. Default 4.
	MinFiles int
	// MaxBytes bounds the inputs of one merge (the files of a partition
	// are merged in runs of about equal size, at most this many bytes).
	// parquet-go's merge holds about 16 times a run's bytes in memory
	// (BenchmarkCompact), so the default is 4 MiB: about 80 MB of heap.
	MaxBytes int64
	// Budget bounds a pass: no merge starts after it. Default 10 s; the
	// next pass goes on where this one stopped.
	Budget time.Duration
	// RecoverOnly finishes interrupted compactions and merges nothing:
	// what a loader with compaction switched off still does.
	RecoverOnly bool
	// Lock, if set, is held while a partition is worked on, and released
	// between partitions, so that writes go on during a long pass.
	Lock sync.Locker
	// Memo, if set, remembers partitions that could not be merged, so a
	// pass does not try them again until their files change.
	Memo *CompactMemo
	// ScratchDir is the local directory where a merged file is written
	// before it is uploaded. Compact's default is the lake's root, so
	// that the local bucket moves the file into place with one rename;
	// CompactBucket's is os.TempDir().
	ScratchDir string
	// Nodes are the committed spool cursors of the nodes whose loaders
	// write the bucket (NodeName): a node's files are merged only up to
	// its cursor, and those of a node not in Nodes not at all (it may
	// still rewrite them). Files of no node go by Compact's committed.
	// Each merge takes the files of one node, and keeps its name.
	Nodes map[string]uint64
	// Grace keeps a merge's inputs this long after its output is in
	// place (by the output's time in the bucket): a query that listed the
	// partition before the swap still reads them, while one that lists it
	// after leaves them out (DataFiles). The next pass after it removes
	// them. 0 removes them at once.
	Grace time.Duration
	// Hold, if set, is asked before each merge whether this process may
	// still compact (it holds the lease of a bucket several nodes
	// share); false ends the pass.
	Hold func() bool
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
	if o.Budget <= 0 {
		o.Budget = 10 * time.Second
	}
	o.ScratchDir = scratchDir(o.ScratchDir)
}

// CompactMemo remembers the partitions a merge failed in. Its zero value
// is ready; it is used by one pass at a time.
type CompactMemo struct {
	failed map[string]memoEntry
}

type memoEntry struct {
	files string    // the names and sizes of the run that failed
	at    time.Time // when; retried an hour later anyway
}

// Compacted tells what a Compact pass did.
type Compacted struct {
	Merges   int      // files written
	Inputs   int      // files they replaced
	Rows     int64    // rows in the files written
	Leftover int      // inputs of interrupted compactions removed
	Skipped  []string // partitions whose files could not be merged, and why
}

// intent is the content of a partition's .compact object, JSON: the
// page docs/format/lake-compaction.md describes it.
type intent struct {
	Output string   `json:"output"`
	Inputs []string `json:"inputs"`
}

// Compact finishes the interrupted compactions of the lake at root and
// compacts every partition whose hour ended more than o.After before now,
// merging only files of records up to committed (the loader's spool
// cursor). It must not run while a Writer writes into the partition it
// works on: o.Lock is held per partition (the loader's write lock). A
// merge that fails is reported in Skipped, not as an error; ctx ending
// stops the pass between merges.
func Compact(ctx context.Context, root string, committed uint64, now time.Time, o CompactOptions) (Compacted, error) {
	if o.ScratchDir == "" {
		o.ScratchDir = root
	}
	return CompactBucket(ctx, bucket.NewLocal(root), committed, now, o)
}

// CompactBucket is Compact of the lake in bucket b.
func CompactBucket(ctx context.Context, b bucket.Bucket, committed uint64, now time.Time, o CompactOptions) (Compacted, error) {
	o.defaults()
	var c Compacted
	if ctx.Err() != nil {
		return c, nil
	}
	parts, err := listPartitions(ctx, b)
	if ctx.Err() != nil {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("compact lake: %w", err)
	}
	slices.SortFunc(parts, func(a, b partitionUsage) int { return strings.Compare(a.prefix, b.prefix) })
	// A partition, once started, is finished: its merges are bounded.
	work := context.WithoutCancel(ctx)
	start := time.Now()
	for _, pt := range parts {
		if ctx.Err() != nil || time.Since(start) > o.Budget || o.Hold != nil && !o.Hold() {
			break
		}
		closed := !pt.hour.Add(time.Hour + o.After).After(now)
		if o.Lock != nil {
			o.Lock.Lock()
		}
		err := compactPartition(work, b, pt.partition, committed, closed && !o.RecoverOnly, o, &c, now)
		if o.Lock != nil {
			o.Lock.Unlock()
		}
		if err != nil {
			return c, err
		}
	}
	return c, nil
}

// rangeFile is a loader file, or an earlier merge's, of a partition.
type rangeFile struct {
	name        string
	node        string // NodeName's; "" for a lake of one node
	first, last uint64
	size        int64
}

// listFiles lists the files of partition pt: their sizes by name. The map
// is the caller's.
func listFiles(ctx context.Context, b bucket.Bucket, pt partition) (map[string]int64, map[string]time.Time, error) {
	prefix := pt.dir() + "/"
	files, mod := map[string]int64{}, map[string]time.Time{}
	for a, err := range b.List(ctx, prefix) {
		if err != nil {
			return nil, nil, fmt.Errorf("compact lake: %w", err)
		}
		if file := a.Name[len(prefix):]; !strings.Contains(file, "/") {
			files[file], mod[file] = a.Size, a.ModTime
		}
	}
	return files, mod, nil
}

// recoverIntent finishes or forgets the merge the intent file of pt
// records, returning the inputs it removed; files are the partition's,
// and lose what it removes.
func recoverIntent(ctx context.Context, b bucket.Bucket, pt partition, files map[string]int64, mod map[string]time.Time, grace time.Duration, now time.Time) (int, error) {
	if _, ok := files[intentFile]; !ok {
		return 0, nil
	}
	r, err := b.Get(ctx, pt.object(intentFile))
	if errors.Is(err, bucket.ErrNotFound) {
		delete(files, intentFile)
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("compact lake: %w", err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return 0, fmt.Errorf("compact lake: %w", err)
	}
	// Only names a merge writes and reads are acted on (parseRange accepts
	// no path separators, "." or ".."), so a damaged intent cannot remove
	// anything else.
	var in intent
	removed := 0
	if json.Unmarshal(data, &in) == nil && isRange(in.Output) {
		if _, ok := files[in.Output]; ok {
			if grace > 0 && now.Sub(mod[in.Output]) < grace {
				return 0, nil // queries may still read the inputs: later
			}
			// The output is in place: finish removing inputs. (If not,
			// the merge did not happen; its scratch file, if a crash left
			// one, is a stale temporary file for Prune.)
			if removed, err = removeInputs(ctx, b, pt, in, files); err != nil {
				return removed, err
			}
		}
	}
	if err := b.Delete(ctx, pt.object(intentFile)); err != nil {
		return removed, fmt.Errorf("compact lake: %w", err)
	}
	delete(files, intentFile)
	return removed, nil
}

// removeInputs removes the inputs of merge in that are still among files,
// returning how many.
func removeInputs(ctx context.Context, b bucket.Bucket, pt partition, in intent, files map[string]int64) (int, error) {
	removed := 0
	for _, name := range in.Inputs {
		if _, ok := files[name]; !ok || name == in.Output || !isRange(name) {
			continue
		}
		if err := b.Delete(ctx, pt.object(name)); err != nil {
			return removed, fmt.Errorf("compact lake: %w", err)
		}
		delete(files, name)
		removed++
	}
	return removed, nil
}

func compactPartition(ctx context.Context, b bucket.Bucket, pt partition, committed uint64, merge bool, o CompactOptions, c *Compacted, now time.Time) error {
	present, mod, err := listFiles(ctx, b, pt)
	if err != nil {
		return err
	}
	n, err := recoverIntent(ctx, b, pt, present, mod, o.Grace, now)
	c.Leftover += n
	if err != nil || !merge {
		return err
	}
	groups := map[string][]rangeFile{} // by node
	for name, size := range present {
		node, first, last, ok := parseFile(name)
		if !ok {
			continue
		}
		limit := committed
		if node != "" {
			var known bool
			if limit, known = o.Nodes[node]; !known {
				continue
			}
		}
		if last > limit {
			continue
		}
		groups[node] = append(groups[node], rangeFile{name: name, node: node, first: first, last: last, size: size})
	}
	for _, node := range slices.Sorted(maps.Keys(groups)) {
		if err := compactRuns(ctx, b, pt, groups[node], present, o, c, now); err != nil {
			return err
		}
	}
	return nil
}

// compactRuns merges files, all of one node, in runs.
func compactRuns(ctx context.Context, b bucket.Bucket, pt partition, files []rangeFile, present map[string]int64, o CompactOptions, c *Compacted, now time.Time) error {
	slices.SortFunc(files, func(a, b rangeFile) int {
		return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.last, b.last), strings.Compare(a.name, b.name))
	})
	dir := pt.dir()
	sizes := make([]int64, len(files))
	for i, f := range files {
		sizes[i] = f.size
	}
	for _, n := range planRuns(sizes, o.MaxBytes) {
		if _, ok := present[intentFile]; ok {
			break // a merge's upload failed: the next pass settles it first
		}
		if o.Hold != nil && !o.Hold() {
			break // the lease is lost: another node may compact now
		}
		run := files[:n]
		files = files[n:]
		if len(run) < o.MinFiles {
			continue
		}
		sig := runSignature(run)
		if o.Memo != nil {
			if m, ok := o.Memo.failed[dir]; ok && m.files == sig && now.Sub(m.at) < time.Hour {
				continue
			}
		}
		rows, why := mergeFiles(ctx, b, o.ScratchDir, pt, run, present, o.Grace > 0)
		if why != "" {
			c.Skipped = append(c.Skipped, dir+": "+why)
			if o.Memo != nil {
				if o.Memo.failed == nil {
					o.Memo.failed = map[string]memoEntry{}
				}
				o.Memo.failed[dir] = memoEntry{files: sig, at: now}
			}
			continue
		}
		c.Merges++
		c.Inputs += len(run)
		c.Rows += rows
	}
	return nil
}

// planRuns cuts files of these sizes, in order, into runs to merge, each
// merged when it has MinFiles files, and returns each run's number of
// files. The runs are of about equal size and at most maxBytes each, so
// that no short run is left over at the end: for the fewest runs r that
// allow it, run k ends at the first file whose end, in the files' running
// total, reaches k/r of the total, which keeps every run within a file of
// total/r. A file larger than maxBytes is a run of its own.
func planRuns(sizes []int64, maxBytes int64) []int {
	var total int64
	for _, n := range sizes {
		total += n
	}
	var plan []int
	for r := max(1, (total+maxBytes-1)/maxBytes); ; r++ {
		plan = plan[:0]
		ok := true
		var cum int64
		for i, k := 0, int64(1); i < len(sizes); k++ {
			end := (total*k + r - 1) / r // k/r of the total, rounded up
			n, size := 0, int64(0)
			for i+n < len(sizes) && (n == 0 || cum+size < end) {
				if n > 0 && size+sizes[i+n] > maxBytes {
					break
				}
				size += sizes[i+n]
				n++
			}
			ok = ok && (cum+size >= end || i+n == len(sizes)) // not cut short by maxBytes
			plan = append(plan, n)
			cum += size
			i += n
		}
		if ok || r >= int64(len(sizes)) {
			return plan
		}
	}
}

func runSignature(run []rangeFile) string {
	var b strings.Builder
	for _, f := range run {
		fmt.Fprintf(&b, "%s:%d;", f.name, f.size)
	}
	return b.String()
}

// inputFile is an open input of a merge.
type inputFile struct {
	obj  bucket.Object
	pf   *parquet.File
	meta map[string]columnMeta
}

// mergeFiles merges run into one file of partition pt, written in scratch
// first, and returns its rows, or why it did not: every failure, reading
// the inputs or writing the output, leaves the partition as it was (but
// for an intent whose output's upload failed, which the next pass
// settles). files are the partition's, updated with what it changes.
func mergeFiles(ctx context.Context, b bucket.Bucket, scratch string, pt partition, run []rangeFile, files map[string]int64, keepInputs bool) (rows int64, why string) {
	inputs := make([]inputFile, 0, len(run))
	defer func() {
		for _, in := range inputs {
			in.obj.Close()
		}
	}()
	defer func() {
		if r := recover(); r != nil { // parquet-go on a corrupt input
			rows, why = 0, fmt.Sprintf("merge panicked: %v", r)
		}
	}()
	var want int64
	for _, rf := range run {
		obj, err := b.Open(ctx, pt.object(rf.name))
		if err != nil {
			return 0, err.Error()
		}
		pf, err := parquet.OpenFile(obj, obj.Size())
		if err != nil {
			obj.Close()
			return 0, fmt.Sprintf("%s: %v", rf.name, err)
		}
		in := inputFile{obj: obj, pf: pf}
		if v, ok := pf.Lookup("wirehouse.columns"); ok {
			if err := json.Unmarshal([]byte(v), &in.meta); err != nil {
				obj.Close()
				return 0, fmt.Sprintf("%s: wirehouse.columns: %v", rf.name, err)
			}
		}
		inputs = append(inputs, in)
		want += pf.NumRows()
	}
	schema, meta, sorting, why := unionSchema(inputs)
	if why != "" {
		return 0, why
	}
	var groups []parquet.RowGroup
	for _, in := range inputs {
		groups = append(groups, in.pf.RowGroups()...)
	}
	merged, err := parquet.MergeRowGroups(groups, schema, parquet.SortingRowGroupConfig(parquet.SortingColumns(sorting...)))
	if err != nil {
		return 0, fmt.Sprintf("merge: %v", err)
	}
	signal, _ := inputs[0].pf.Lookup("wirehouse.signal")
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return 0, err.Error()
	}
	kv := map[string]string{
		"wirehouse.signal":  signal,
		"wirehouse.columns": string(metaJSON),
	}
	if v, ok := inputs[0].pf.Lookup(SchemaVersionKey); ok {
		kv[SchemaVersionKey] = v // the same in every input (unionSchema)
	}
	// Counts add up; the body index's blocks are found by service and
	// time, not row, so the inputs' blocks serve the merge as they are.
	if v, ok := mergedMeta(inputs, CountsKey, ParseCounts, Counts.Rows, MergeCounts, Counts.Marshal); ok {
		kv[CountsKey] = v
	}
	if v, ok := mergedMeta(inputs, SpanCountsKey, ParseCounts, Counts.Rows, MergeCounts, Counts.Marshal); ok {
		kv[SpanCountsKey] = v
	}
	var region []byte
	if g, ok := mergedGrams(inputs); ok {
		region = MarshalGramsRegion(g)
		kv[GramsRegionKey] = strconv.Itoa(len(region))
	}
	name, err := outputName(run, files)
	if err != nil {
		return 0, err.Error()
	}
	it := intent{Output: name}
	for _, rf := range run {
		it.Inputs = append(it.Inputs, rf.name)
	}
	n, err := swapIn(ctx, b, scratch, pt, it, files, merged, schema, sorting, kv, region, want, keepInputs)
	if err != nil {
		return 0, err.Error()
	}
	return n, ""
}

// swapIn writes rows (of schema, sorted by sorting, with the key-value
// metadata kv and, if not nil, region spliced in as kv names it) into
// the output of intent it in a scratch file, checks that it holds want
// rows, and swaps it in for the intent's inputs: the intent uploaded,
// then the output, then the inputs removed, and the intent (unless
// keepInputs: a later pass removes them after the grace period). A spans
// file gets a trace-id index made from its rows. files are partition
// pt's, updated with what it changes. An error before the intent's
// upload leaves the partition as it was; after it, the next pass
// settles the intent.
func swapIn(ctx context.Context, b bucket.Bucket, scratch string, pt partition, it intent, files map[string]int64,
	rows parquet.RowGroup, schema *parquet.Schema, sorting []parquet.SortingColumn, kv map[string]string,
	region []byte, want int64, keepInputs bool) (int64, error) {
	name := it.Output
	out, err := createScratch(scratch, name)
	if err != nil {
		return 0, err
	}
	defer removeScratch(out)
	signal := kv["wirehouse.signal"]
	w := parquet.NewGenericWriter[any](out, append(writerOptions(schema, sorting, kv), parquet.MaxRowsPerRowGroup(128<<10))...)
	// A spans file's trace-id index is made from the merged rows, so a
	// merge of files written without one has one.
	var fps *[]uint32
	if _, ok := schema.Lookup("trace_id"); ok && signal == "traces" {
		fps = new([]uint32)
	}
	err = writePaged(w, rows, signal == "traces", schema, fps) // pages and row groups as the Writer cuts them
	if err == nil && fps != nil {
		region = MarshalTraceIDsRegion(*fps)
		w.SetKeyValueMetadata(TraceIDsRegionKey, strconv.Itoa(len(region)))
	}
	if err == nil {
		err = w.Close()
	}
	var n, size int64
	if err == nil {
		size, err = out.Seek(0, io.SeekEnd)
	}
	if err == nil && region != nil {
		size, err = SpliceRegion(out, region)
	}
	if err == nil {
		// What a reader will see: the footer of the file as written.
		n, err = footerRows(out, size)
	}
	if err == nil && n != want {
		err = fmt.Errorf("the file holds %d rows, its inputs %d", n, want)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", name, err)
	}
	// The intent first, then the output: from here a crash is finished
	// by the next pass.
	data, err := json.Marshal(it)
	if err == nil {
		err = b.Upload(ctx, pt.object(intentFile), bytes.NewReader(data))
	}
	if err != nil {
		return 0, fmt.Errorf("write the intent: %w", err)
	}
	files[intentFile] = int64(len(data))
	if err := uploadScratch(ctx, b, pt.object(name), out.Name()); err != nil {
		// Whether the output is in place is unknown (an upload can fail
		// after storing it): the intent stays for the next pass to look.
		return 0, fmt.Errorf("upload %s: %w", name, err)
	}
	files[name] = size
	if keepInputs {
		return n, nil // a later pass removes them, after the grace period
	}
	if _, err := removeInputs(ctx, b, pt, it, files); err != nil {
		return n, nil // uploaded: the next pass finishes from the intent
	}
	if err := b.Delete(ctx, pt.object(intentFile)); err != nil {
		return n, nil // likewise
	}
	delete(files, intentFile)
	return n, nil
}

// mergedMeta returns the value of key (a logs file's counts or body
// index) for the merge of inputs: merge of theirs, encoded, if each
// input has one a reader can trust (TrustedMeta); otherwise the merge has
// none, and readers read its columns.
func mergedMeta[T any](inputs []inputFile, key string, parse func(string) (T, error), rows func(T) int64, merge func(...T) T, encode func(T) string) (string, bool) {
	all := make([]T, 0, len(inputs))
	for _, in := range inputs {
		v, ok := TrustedMeta(in.pf, key, parse, rows)
		if !ok {
			return "", false
		}
		all = append(all, v)
	}
	return encode(merge(all...)), true
}

// mergedGrams is the body index of the merge of inputs: their indexes'
// entries (FileGrams); false if one has none it can trust.
func mergedGrams(inputs []inputFile) (Grams, bool) {
	all := make([]Grams, 0, len(inputs))
	for _, in := range inputs {
		g, ok := FileGrams(in.pf, in.obj, in.obj.Size())
		if !ok {
			return Grams{}, false
		}
		all = append(all, g)
	}
	return MergeGrams(all...), true
}

// outputName names the merge of run: <first>-<last>-c.parquet, or -c2,
// -c3, … when that name is among files (an input's, say).
func outputName(run []rangeFile, files map[string]int64) (string, error) {
	last := run[0].last
	for _, rf := range run {
		last = max(last, rf.last)
	}
	for i := 1; i < 1000; i++ {
		if name := mergeName(run[0].node, run[0].first, last, i); !hasKey(files, name) {
			return name, nil
		}
	}
	return "", errors.New("no free name for the merged file")
}

func hasKey(m map[string]int64, k string) bool {
	_, ok := m[k]
	return ok
}

// footerRows is the row count the footer of the Parquet file r of size
// bytes states.
func footerRows(r io.ReaderAt, size int64) (int64, error) {
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, fmt.Errorf("reopen merged file: %w", err)
	}
	return pf.NumRows(), nil
}

// unionSchema is the schema of the merged file: every input column, the
// same type and key in every input that has it, dictionary encoded (or
// DELTA_BINARY_PACKED) where an input's was; and the inputs' common
// sort. why says what disagrees.
func unionSchema(inputs []inputFile) (*parquet.Schema, map[string]columnMeta, []parquet.SortingColumn, string) {
	type col struct {
		field parquet.Field
		dict  bool
		delta bool
	}
	cols := map[string]*col{}
	nested := map[string]parquet.Node{}
	meta := map[string]columnMeta{}
	var signal, schemaVersion string
	var sorting []parquet.SortingColumn
	for i, in := range inputs {
		sig, _ := in.pf.Lookup("wirehouse.signal")
		if i == 0 {
			signal = sig
		} else if sig != signal {
			return nil, nil, nil, fmt.Sprintf("signals %q and %q", signal, sig)
		}
		version, _ := in.pf.Lookup(SchemaVersionKey)
		if i == 0 {
			schemaVersion = version
		} else if version != schemaVersion {
			return nil, nil, nil, fmt.Sprintf("schema versions %q and %q", schemaVersion, version)
		}
		dict, delta := encodedColumns(in.pf.Metadata())
		for _, f := range in.pf.Schema().Fields() {
			if !f.Leaf() {
				node, ok := nestedNodes[f.Name()]
				if !ok || version == "" || !slices.Equal(signature(node(), f.Name(), nil), signature(f, f.Name(), nil)) {
					return nil, nil, nil, fmt.Sprintf("column %s is not a leaf", f.Name())
				}
				nested[f.Name()] = node()
				continue
			}
			c, ok := cols[f.Name()]
			if !ok {
				cols[f.Name()] = &col{field: f, dict: dict[f.Name()], delta: delta[f.Name()]}
				continue
			}
			if c.field.Type().String() != f.Type().String() || c.field.Optional() != f.Optional() || c.field.Repeated() != f.Repeated() {
				return nil, nil, nil, fmt.Sprintf("column %s is %s in one file, %s in another", f.Name(), c.field.Type(), f.Type())
			}
			c.dict = c.dict || dict[f.Name()]
			c.delta = c.delta || delta[f.Name()]
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
	attrs := 0
	for _, m := range meta {
		if m.Type != overflowType {
			attrs++
		}
	}
	if attrs > DefaultMaxAttributeColumns {
		return nil, nil, nil, fmt.Sprintf("%d attribute columns together, more than a file may have (%d)", attrs, DefaultMaxAttributeColumns)
	}
	group := make(parquet.Group, len(cols))
	for name, c := range cols {
		n := parquet.Leaf(c.field.Type())
		switch {
		case c.dict:
			n = parquet.Encoded(n, &parquet.RLEDictionary)
		case c.delta:
			n = parquet.Encoded(n, &parquet.DeltaBinaryPacked)
		}
		if c.field.Optional() {
			n = parquet.Optional(n)
		}
		group[name] = parquet.Compressed(n, zstdCodec)
	}
	for name, n := range nested {
		group[name] = n
	}
	return parquet.NewSchema("wirehouse", group), meta, sorting, ""
}

// signature describes the structure of node: each leaf's path, type and
// repetition, and each group's repetition, without encodings or
// compression, to compare a file's nested column with the writer's.
func signature(node parquet.Node, path string, out []string) []string {
	rep := "required"
	switch {
	case node.Optional():
		rep = "optional"
	case node.Repeated():
		rep = "repeated"
	}
	if node.Leaf() {
		return append(out, path+" "+rep+" "+node.Type().String())
	}
	out = append(out, path+" "+rep+" group")
	for _, f := range node.Fields() {
		out = signature(f, path+"."+f.Name(), out)
	}
	return out
}

func sameSorting(a, b parquet.SortingColumn) bool {
	return slices.Equal(a.Path(), b.Path()) && a.Descending() == b.Descending() && a.NullsFirst() == b.NullsFirst()
}

// encodedColumns names the top-level columns some row group of a file
// stored with a dictionary (dict), and those stored DELTA_BINARY_PACKED
// (delta): a merge keeps both.
func encodedColumns(md *format.FileMetaData) (dict, delta map[string]bool) {
	dict, delta = map[string]bool{}, map[string]bool{}
	for _, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			if len(cc.MetaData.PathInSchema) == 0 {
				continue
			}
			name := cc.MetaData.PathInSchema[0]
			if slices.Contains(cc.MetaData.Encoding, format.RLEDictionary) || slices.Contains(cc.MetaData.Encoding, format.PlainDictionary) {
				dict[name] = true
			}
			if slices.Contains(cc.MetaData.Encoding, format.DeltaBinaryPacked) {
				delta[name] = true
			}
		}
	}
	return dict, delta
}

// writePaged writes the rows of rg to w as the Writer cuts a file's pages
// and row groups, which WriteRowGroup would cut at the size and row
// limits alone: a spans file (traces) gets a data page cut after each
// spanPageRows rows and a row group cut where the service changes once
// it holds spanGroupMinRows rows (serviceCut); a logs file a data page
// cut where the service changes (as the encoder's pageCut). The writer's
// size and row limits cut them too. With fps not nil, it appends there
// the fingerprints (TraceIDFingerprint) of the rows' trace_id values.
func writePaged(w *parquet.GenericWriter[any], rg parquet.RowGroup, traces bool, schema *parquet.Schema, fps *[]uint32) error {
	svcCol, traceCol := -1, -1
	if lc, ok := schema.Lookup("service_name"); ok {
		svcCol = lc.ColumnIndex
	}
	if lc, ok := schema.Lookup("trace_id"); ok && fps != nil {
		traceCol = lc.ColumnIndex
	}
	service := func(row parquet.Row) []byte {
		for _, v := range row {
			if v.Column() == svcCol {
				return v.ByteArray()
			}
		}
		return nil
	}
	var lastID []byte // the last trace id fingerprinted: rows come sorted by it within a service
	fingerprint := func(row parquet.Row) {
		for _, v := range row {
			if v.Column() == traceCol {
				if id := v.ByteArray(); !v.IsNull() && len(id) > 0 && !bytes.Equal(id, lastID) {
					lastID = append(lastID[:0], id...)
					*fps = append(*fps, TraceIDFingerprint(TraceIDHash(id)))
				}
				return
			}
		}
	}
	rows := rg.Rows()
	defer rows.Close()
	bufRows := chunkRows
	if traces {
		bufRows = spanPageRows
	}
	buf := make([]parquet.Row, bufRows)
	var prev []byte // the service of the last row written
	groupRows := 0  // rows in the row group being written
	started := false
	// write writes part, then ends the columns' pages if cut.
	write := func(part []parquet.Row, cut bool) error {
		if len(part) > 0 {
			if _, err := w.WriteRows(part); err != nil {
				return err
			}
			groupRows += len(part)
		}
		if !cut {
			return nil
		}
		for _, cw := range w.ColumnWriters() {
			if err := cw.Flush(); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		n, err := 0, error(nil)
		for n < len(buf) && err == nil { // a read may stop short of a page
			var k int
			k, err = rows.ReadRows(buf[n:])
			n += k
		}
		from := 0
		for i := range n {
			if traceCol >= 0 {
				fingerprint(buf[i])
			}
			s := service(buf[i])
			changed := started && !bytes.Equal(s, prev)
			switch {
			case traces && changed && groupRows+i-from >= spanGroupMinRows:
				if werr := write(buf[from:i], true); werr != nil {
					return werr
				}
				if ferr := w.Flush(); ferr != nil { // ends the row group
					return ferr
				}
				from, groupRows = i, 0
			case !traces && changed:
				if werr := write(buf[from:i], true); werr != nil {
					return werr
				}
				from = i
			}
			prev, started = append(prev[:0], s...), true
		}
		if werr := write(buf[from:n], traces); werr != nil {
			return werr
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
