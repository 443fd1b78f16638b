package lake

import (
	"bufio"
	"fmt"
	"os"
	"slices"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// dropRows returns sel without the rows m selects in them, encoded as
// writePartition would encode them (in sel's order, so a file's row i is
// sel[i]) in a scratch file; sel itself when m selects none, or when
// the encoding or m fails. sel is not changed.
func (w *Writer) dropRows(sig otlpwire.Signal, b *batch, sel []int32, n int, m RowMatcher) []int32 {
	f, err := createScratch(w.scratch, "drop.parquet")
	if err != nil {
		return sel
	}
	defer removeScratch(f)
	defer f.Close()
	cw := &countingWriter{w: bufio.NewWriterSize(f, 1<<20)}
	region, err := w.encode(cw, sig, b, sel, n)
	if err != nil || cw.w.Flush() != nil {
		return sel
	}
	size := cw.n
	if region != nil { // the file whole, its index region too
		if size, err = SpliceRegion(f, region); err != nil {
			return sel
		}
	}
	drop, err := matchFile(f, size, m)
	if err != nil || len(drop) == 0 || !slices.IsSorted(drop) || drop[0] < 0 || drop[len(drop)-1] >= int64(len(sel)) {
		return sel
	}
	drop = slices.Compact(drop)
	kept := make([]int32, 0, len(sel)-len(drop))
	for i, r := range sel {
		if len(drop) > 0 && drop[0] == int64(i) {
			drop = drop[1:]
			continue
		}
		kept = append(kept, r)
	}
	return kept
}

// matchFile runs m over the Parquet file f of size bytes; a panic in
// parquet-go is an error.
func matchFile(f *os.File, size int64, m RowMatcher) (rows []int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("match rows: panic: %v", r)
		}
	}()
	pf, err := parquet.OpenFile(f, size)
	if err != nil {
		return nil, err
	}
	return m(pf, f, size)
}
