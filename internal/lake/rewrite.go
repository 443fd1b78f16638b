package lake

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// Rewriting files without some of their rows (a delete request's): a
// merge (compact.go) of the files of a partition that hold rows to
// remove, each without them. The output, written in a scratch file and
// checked to hold the rows kept, is named as a merge of the inputs'
// records (<first>-<last>-c[N].parquet); the intent (.compact) names it
// and the inputs before it is uploaded, so a reader listing the
// partition counts the inputs or the output, never both (DataFiles), and
// a crash is finished or forgotten by the next compaction pass
// (recoverIntent). One swap a partition: with a grace period, a second
// would wait for the first's. The output has the input's columns,
// sort and page layout, a new trace-id index for spans, and neither the
// counts nor the body index of logs (they would count the rows removed):
// readers read its columns instead.

// ErrIntentPending is RewriteFiles' error while an earlier merge or
// rewrite of the partition keeps its intent (its inputs are kept for the
// grace period): the file is rewritten at a later pass.
var ErrIntentPending = errors.New("lake: the partition has a merge or rewrite in progress")

// RewriteOptions sets how RewriteFiles swaps files.
type RewriteOptions struct {
	// ScratchDir is where the output is written before it is uploaded
	// (os.TempDir() if empty).
	ScratchDir string
	// Grace keeps the input this long after the output is in place, as
	// CompactOptions.Grace: a later compaction pass removes it.
	Grace time.Duration
	// Now is the time the grace of an earlier swap is measured at.
	Now time.Time
}

// Rewritten tells what RewriteFiles did.
type Rewritten struct {
	Rows, Removed int64  // the rows of the files that had rows to remove, and those removed
	Output        string // the output's object name, "" when none was written
}

// RewriteFiles replaces data files of one partition and one node (a
// loader's or a merge's: range-named), objects, with one file without
// the rows match returns for each: their indexes in the file, counting
// from 0 across its row groups in order, ascending. match reads each file
// as opened (pf, over r of size bytes). Files none of whose rows match
// are left as they are; if every row of the others matches, they are
// deleted and nothing is written. A file that is gone (rewritten or
// merged since it was listed) is passed over. The output, their kept rows
// merged in the lake's sort, is swapped for them as a merge is. The
// caller holds the lake's write lock over the partition, and, for a
// bucket several nodes write, its compaction lease.
func RewriteFiles(ctx context.Context, b bucket.Bucket, objects []string, o RewriteOptions, match func(pf *parquet.File, r io.ReaderAt, size int64) ([]int64, error)) (res Rewritten, err error) {
	if len(objects) == 0 {
		return res, nil
	}
	var pt partition
	var node string
	for i, object := range objects {
		p, file, ok := parseObject(object)
		n, _, _, isRange := parseFile(file)
		if !ok || !isRange || i > 0 && (p.dir() != pt.dir() || n != node) {
			return res, fmt.Errorf("rewrite %s: not a loader's or a merge's file of %s", object, pt.dir())
		}
		pt, node = p, n
	}
	files, mod, err := listFiles(ctx, b, pt)
	if err != nil {
		return res, err
	}
	if _, err := recoverIntent(ctx, b, pt, files, mod, o.Grace, o.Now); err != nil {
		return res, err
	}
	if _, ok := files[intentFile]; ok {
		return res, ErrIntentPending
	}
	defer func() {
		if r := recover(); r != nil { // parquet-go on a corrupt file
			res, err = Rewritten{}, fmt.Errorf("rewrite %s: panic: %v", pt.dir(), r)
		}
	}()
	var (
		inputs []inputFile
		run    []rangeFile
		groups []parquet.RowGroup
		whole  []string // inputs every row of which goes
	)
	defer func() {
		for _, in := range inputs {
			in.obj.Close()
		}
	}()
	for _, object := range objects {
		_, file, _ := parseObject(object)
		if _, ok := files[file]; !ok {
			continue
		}
		obj, err := b.Open(ctx, object)
		if errors.Is(err, bucket.ErrNotFound) {
			continue
		}
		if err != nil {
			return res, fmt.Errorf("rewrite %s: %w", object, err)
		}
		pf, err := parquet.OpenFile(obj, obj.Size())
		if err != nil {
			obj.Close()
			return res, fmt.Errorf("rewrite %s: %w", object, err)
		}
		drop, err := match(pf, obj, obj.Size())
		if err == nil && (!slices.IsSorted(drop) || len(drop) > 0 && (drop[0] < 0 || drop[len(drop)-1] >= pf.NumRows())) {
			err = errors.New("rows to drop out of order or range")
		}
		if err != nil || len(drop) == 0 {
			obj.Close()
			if err != nil {
				return res, fmt.Errorf("rewrite %s: %w", object, err)
			}
			continue
		}
		drop = slices.Compact(drop)
		res.Rows += pf.NumRows()
		res.Removed += int64(len(drop))
		if int64(len(drop)) == pf.NumRows() {
			whole = append(whole, file)
		}
		in := inputFile{obj: obj, pf: pf}
		if v, ok := pf.Lookup("wirehouse.columns"); ok {
			if err := json.Unmarshal([]byte(v), &in.meta); err != nil {
				return res, fmt.Errorf("rewrite %s: wirehouse.columns: %w", object, err)
			}
		}
		inputs = append(inputs, in)
		_, first, last, _ := parseFile(file)
		run = append(run, rangeFile{name: file, node: node, first: first, last: last, size: obj.Size()})
		groups = append(groups, droppingRowGroup{RowGroup: parquet.MultiRowGroup(pf.RowGroups()...), drop: drop})
	}
	switch {
	case len(inputs) == 0:
		return res, nil
	case len(whole) == len(inputs):
		// Every row of every file goes: they go, one by one (a reader
		// sees each whole or not at all, and none holds a row that
		// stays).
		for _, file := range whole {
			if err := b.Delete(ctx, pt.object(file)); err != nil {
				return res, fmt.Errorf("rewrite %s: %w", pt.object(file), err)
			}
		}
		return res, nil
	}
	schema, meta, sorting, why := unionSchema(inputs)
	if why != "" {
		return res, fmt.Errorf("rewrite %s: %s", pt.dir(), why)
	}
	merged, err := parquet.MergeRowGroups(groups, schema, parquet.SortingRowGroupConfig(parquet.SortingColumns(sorting...)))
	if err != nil {
		return res, fmt.Errorf("rewrite %s: merge: %w", pt.dir(), err)
	}
	signal, _ := inputs[0].pf.Lookup("wirehouse.signal")
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return res, err
	}
	kv := map[string]string{"wirehouse.signal": signal, "wirehouse.columns": string(metaJSON)}
	if v, ok := inputs[0].pf.Lookup(SchemaVersionKey); ok {
		kv[SchemaVersionKey] = v
	}
	slices.SortFunc(run, func(a, b rangeFile) int { return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.last, b.last)) })
	name, err := outputName(run, files)
	if err != nil {
		return res, fmt.Errorf("rewrite %s: %w", pt.dir(), err)
	}
	it := intent{Output: name}
	for _, rf := range run {
		it.Inputs = append(it.Inputs, rf.name)
	}
	if _, err := swapIn(ctx, b, scratchDir(o.ScratchDir), pt, it, files, merged, schema, sorting, kv, nil, res.Rows-res.Removed, o.Grace > 0); err != nil {
		return res, fmt.Errorf("rewrite %s: %w", pt.dir(), err)
	}
	res.Output = pt.object(name)
	return res, nil
}

// droppingRowGroup is a row group without the rows at the indexes drop
// holds (ascending), for writePaged, which reads it with Rows alone.
type droppingRowGroup struct {
	parquet.RowGroup
	drop []int64
}

func (g droppingRowGroup) NumRows() int64 { return g.RowGroup.NumRows() - int64(len(g.drop)) }

func (g droppingRowGroup) Rows() parquet.Rows {
	return &droppingRows{Rows: g.RowGroup.Rows(), drop: g.drop}
}

type droppingRows struct {
	parquet.Rows
	drop []int64 // the indexes still ahead
	at   int64   // the index of the next row read
}

// ReadRows reads rows, leaving out those to drop; it returns no rows only
// at the end (or on an error).
func (r *droppingRows) ReadRows(rows []parquet.Row) (int, error) {
	for {
		n, err := r.Rows.ReadRows(rows)
		kept := 0
		for i := range n {
			if len(r.drop) > 0 && r.drop[0] == r.at {
				r.drop = r.drop[1:]
			} else {
				rows[kept], rows[i] = rows[i], rows[kept]
				kept++
			}
			r.at++
		}
		if kept > 0 || err != nil || n == 0 {
			return kept, err
		}
	}
}
