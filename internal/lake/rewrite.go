package lake

import (
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

// Rewriting a file without some of its rows (a delete request's): the
// same swap as a merge's (compact.go), of one input, whose rows are
// streamed through as they are (already in the lake's sort), so memory
// is the writer's, whatever the file's size (a merge holds about 16
// times its inputs: it is only for small files). The output, written in
// a scratch file and checked to hold the rows kept, is named as a merge
// of the input's records (<first>-<last>-c[N].parquet); the intent
// (.compact) names it and the input before it is uploaded, so a reader
// listing the partition counts the input or the output, never both
// (DataFiles), and a crash is finished or forgotten by the next
// compaction pass (recoverIntent). The output has the input's columns,
// sort and page layout, a new trace-id index for spans, and neither the
// counts nor the body index of logs (they would count the rows removed):
// readers read its columns instead. A partition holds one intent at a
// time: with a grace period, its next file waits for the swap before.

// ErrIntentPending is RewriteFile's error while an earlier merge or
// rewrite of the partition keeps its intent (its inputs are kept for the
// grace period): the file is rewritten later.
var ErrIntentPending = errors.New("lake: the partition has a merge or rewrite in progress")

// RewriteOptions sets how RewriteFile swaps a file.
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

// Rewritten tells what RewriteFile did.
type Rewritten struct {
	Rows, Removed int64  // the file's rows, and those removed
	Output        string // the output's object name, "" when none was written
}

// A RowMatcher returns the indexes of the rows of a Parquet file (pf,
// read over r of size bytes) that it selects, counting from 0 across the
// file's row groups in order, ascending.
type RowMatcher func(pf *parquet.File, r io.ReaderAt, size int64) ([]int64, error)

// RewriteFile replaces the data file object, a loader's or a merge's
// (range-named) file of a partition of the lake in b, with one without
// the rows match returns: their indexes in the file, counting from 0
// across its row groups in order, ascending. match reads the file as
// opened (pf, over r of size bytes). No row matched: nothing changes. All
// of them: the file is deleted. A file that is gone (rewritten or merged
// since it was listed) is not an error: Rewritten is zero. The caller
// holds the lake's write lock over the partition, and, for a bucket
// several nodes write, its compaction lease.
func RewriteFile(ctx context.Context, b bucket.Bucket, object string, o RewriteOptions, match RowMatcher) (res Rewritten, err error) {
	pt, file, ok := parseObject(object)
	node, first, last, isRange := parseFile(file)
	if !ok || !isRange {
		return res, fmt.Errorf("rewrite %s: not a loader's or a merge's file", object)
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
	if _, ok := files[file]; !ok {
		return res, nil
	}
	obj, err := b.Open(ctx, object)
	if errors.Is(err, bucket.ErrNotFound) {
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("rewrite %s: %w", object, err)
	}
	defer obj.Close()
	defer func() {
		if r := recover(); r != nil { // parquet-go on a corrupt file
			res, err = Rewritten{}, fmt.Errorf("rewrite %s: panic: %v", object, r)
		}
	}()
	pf, err := parquet.OpenFile(obj, obj.Size())
	if err != nil {
		return res, fmt.Errorf("rewrite %s: %w", object, err)
	}
	res.Rows = pf.NumRows()
	drop, err := match(pf, obj, obj.Size())
	if err == nil && (!slices.IsSorted(drop) || len(drop) > 0 && (drop[0] < 0 || drop[len(drop)-1] >= res.Rows)) {
		err = errors.New("rows to drop out of order or range")
	}
	if err != nil {
		return res, fmt.Errorf("rewrite %s: %w", object, err)
	}
	drop = slices.Compact(drop)
	res.Removed = int64(len(drop))
	switch {
	case res.Removed == 0:
		return res, nil
	case res.Removed == res.Rows:
		// Every row goes: the file goes, at once for a reader.
		if err := b.Delete(ctx, object); err != nil {
			return res, fmt.Errorf("rewrite %s: %w", object, err)
		}
		return res, nil
	}
	in := inputFile{obj: obj, pf: pf}
	if v, ok := pf.Lookup("wirehouse.columns"); ok {
		if err := json.Unmarshal([]byte(v), &in.meta); err != nil {
			return res, fmt.Errorf("rewrite %s: wirehouse.columns: %w", object, err)
		}
	}
	schema, meta, sorting, why := unionSchema([]inputFile{in})
	if why != "" {
		return res, fmt.Errorf("rewrite %s: %s", object, why)
	}
	signal, _ := pf.Lookup("wirehouse.signal")
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return res, err
	}
	kv := map[string]string{"wirehouse.signal": signal, "wirehouse.columns": string(metaJSON)}
	if v, ok := pf.Lookup(SchemaVersionKey); ok {
		kv[SchemaVersionKey] = v
	}
	name, err := outputName([]rangeFile{{name: file, node: node, first: first, last: last}}, files)
	if err != nil {
		return res, fmt.Errorf("rewrite %s: %w", object, err)
	}
	rows := droppingRowGroup{RowGroup: parquet.MultiRowGroup(pf.RowGroups()...), drop: drop}
	it := intent{Output: name, Inputs: []string{file}}
	if _, err := swapIn(ctx, b, scratchDir(o.ScratchDir), pt, it, files, rows, schema, sorting, kv, nil, res.Rows-res.Removed, o.Grace > 0); err != nil {
		return res, fmt.Errorf("rewrite %s: %w", object, err)
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
