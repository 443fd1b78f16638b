package lakeread

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/lake"
)

// TraceIDsMemoBytes bounds the spans files' trace-id indexes a Reader
// keeps (Reader.traceIDs): 4 bytes a trace of a file, so those of about
// 8 M traces (40 M spans of the synthetic load). A file past the bound
// has its region read again at each lookup.
const TraceIDsMemoBytes = 32 << 20

// traceIDsSize is what a file's trace-id index costs TraceIDsMemoBytes;
// a file known to have none costs a little too.
func traceIDsSize(t *lake.TraceIDs) int64 {
	if t == nil {
		return 64
	}
	return t.Bytes() + 64
}

// fileTraceIDs returns the trace-id index of spans file f (lake's
// TraceIDsRegionKey), kept by the reader or read now, adding the bytes
// read to *read; nil if f has none or a damaged one, which the caller
// then searches by its bloom filters as before. An error is one of
// reading the file (bucket.ErrNotFound: removed since the listing).
func (r *Reader) fileTraceIDs(ctx context.Context, f lake.DataFile, read *int64) (t *lake.TraceIDs, err error) {
	k := keyOf(f)
	if t, ok := r.traceIDs.get(k); ok {
		return t, nil
	}
	obj, err := r.cfg.Bucket.Open(ctx, f.Name)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	defer func() {
		if p := recover(); p != nil { // parquet-go on a damaged footer
			t, err = nil, fmt.Errorf("%w: damaged file: %v", lake.ErrMalformed, p)
		}
		if errors.Is(err, lake.ErrNoTraceIDsRegion) || errors.Is(err, lake.ErrMalformed) {
			r.traceIDs.put(k, nil)
			t, err = nil, nil
		}
	}()
	t, err = lake.ReadTraceIDs(obj, obj.Size(), read)
	if err == nil {
		err = traceIDsFit(obj, obj.Size(), t, read)
	}
	if err != nil {
		return nil, err
	}
	r.traceIDs.put(k, t)
	return t, nil
}

// traceIDsFit checks that index t belongs to the file of size bytes that
// obj reads: its footer (decoded here, without page indexes or filters)
// names a trace-id region of t's length. An error wrapping
// lake.ErrMalformed says it does not.
func traceIDsFit(obj interface {
	ReadAt([]byte, int64) (int, error)
}, size int64, t *lake.TraceIDs, read *int64) error {
	var n atomic.Int64
	pf, err := parquet.OpenFile(countingReader{obj, &n}, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	*read += n.Load()
	if err != nil {
		return fmt.Errorf("%w: %w", lake.ErrMalformed, err)
	}
	if v, _ := pf.Lookup(lake.TraceIDsRegionKey); v != strconv.FormatInt(t.RegionLen, 10) {
		return fmt.Errorf("%w: the trace-id region does not fit its file", lake.ErrMalformed)
	}
	return nil
}
