package lake

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// AppendError is returned by Writer.Append when request Index of the call
// is malformed; Err is the decoding error (an *otlpwire.Error or wrapping
// one). No row of the call was kept.
type AppendError struct {
	Index int
	Err   error
}

func (e *AppendError) Error() string { return fmt.Sprintf("request %d: %v", e.Index, e.Err) }
func (e *AppendError) Unwrap() error { return e.Err }

// ErrClosed is returned by a Writer's methods after Close.
var ErrClosed = errors.New("lake writer closed")

// ErrEncode is wrapped by the error of a flush whose rows could not be
// encoded as Parquet (a bug or a limit of the encoder, never the storage):
// writing the same rows again fails again. Before returning it, the flush
// removes the files it had put in the lake, so none of its
// rows is in the lake and the caller may write them again, in smaller
// sets, under other names.
var ErrEncode = errors.New("rows cannot be encoded as Parquet")

// Stats are a Writer's totals since it was created.
type Stats struct {
	Files    int   // Parquet files written (put in the lake)
	Rows     int64 // rows in those files
	BytesIn  int64 // protobuf bytes of the requests appended
	BytesOut int64 // bytes of those files
	Dropped  int64 // rows WriterConfig.Drop left out
}

// Writer buffers the rows of each signal and tenant in memory and writes
// them as Parquet files under its Dir (or into its Bucket):
//
//	<Dir>/<signal>/tenant=<tenant>/date=YYYY-MM-DD/hour=HH/<id>.parquet
//
// partitioned by the record's time (a log's timestamp, else its observed
// timestamp; a span's start time; else the time it was appended), in UTC
// (partition.go has the layout). A batch is written when its rows would
// make a file of about FileSize, when the requests in it reach
// MaxBuffer, when its first row is older than MaxAge, and on Flush and
// Close. Each file is encoded into a hidden scratch file,
// .<id>.parquet.<random>.tmp in Dir (or ScratchDir), and then uploaded, which on a
// directory means synced and renamed into its partition (scratch.go), so
// no reader ever sees a partial file; a crash can leave only such hidden
// temporary files, which Prune removes.
//
// A Writer is safe for concurrent use; appends and writes are serialized.
type Writer struct {
	scratch string        // where files are encoded
	bucket  bucket.Bucket // where they go
	local   *bucket.Local // bucket, when it is the local bucket of Dir
	cfg     config

	mu      sync.Mutex
	batches map[batchKey]*batch
	enc     encoder
	renamed []string // names of the files the flush under way put in the bucket
	stats   Stats
	ratio   float64 // Parquet bytes per protobuf byte of the files written so far
	closed  bool
}

type batchKey struct {
	sig    otlpwire.Signal
	tenant string
}

// batch is the rows of one signal and tenant waiting to be written.
type batch struct {
	logs     LogRows
	spans    SpanRows
	bytesIn  int64
	first    time.Time // when the first row was appended
	fallback int64     // partition hour of rows without a usable time
}

func (b *batch) len(sig otlpwire.Signal) int {
	if sig == otlpwire.SignalLogs {
		return b.logs.Len()
	}
	return b.spans.Len()
}

// NewWriter validates cfg and returns a Writer that writes under
// cfg.Dir, creating it if needed, or into cfg.Bucket, encoding in
// cfg.ScratchDir.
func NewWriter(cfg WriterConfig) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	w := &Writer{scratch: cfg.Dir, bucket: cfg.Bucket, cfg: config{WriterConfig: cfg}, batches: map[batchKey]*batch{}, ratio: 0.1}
	if w.bucket == nil {
		w.local = bucket.NewLocal(cfg.Dir)
		w.bucket = w.local
	} else {
		w.scratch = scratchDir(cfg.ScratchDir)
	}
	if err := makeScratchDir(w.scratch); err != nil {
		return nil, fmt.Errorf("new lake writer: %w", err)
	}
	w.enc.rowGroupRows = cfg.RowGroupRows
	w.enc.maxAttrCols = cfg.MaxAttributeColumns
	w.enc.noIndexes = cfg.NoIndexes
	w.enc.logsV3 = cfg.SchemaVersion == 0 || cfg.SchemaVersion == 3
	return w, nil
}

// Append appends the rows of reqs, each an encoded Export*ServiceRequest
// of sig, to the tenant's batch: all of them or, when one is malformed,
// none (the error is an *AppendError). It returns the number of rows
// added. It then writes the batch if it is full or old; a write error is
// returned after the rows were added, which stay buffered for a retry.
func (w *Writer) Append(sig otlpwire.Signal, tenantName string, reqs ...[]byte) (int, error) {
	return w.AppendReceived(sig, tenantName, time.Time{}, reqs...)
}

// AppendReceived is Append for requests received at a known time: rows
// without a usable time of their own are partitioned by the received time
// of the first request of their batch rather than by the clock, so a
// replay partitions them the same way. A zero received means now.
func (w *Writer) AppendReceived(sig otlpwire.Signal, tenantName string, received time.Time, reqs ...[]byte) (int, error) {
	if sig != otlpwire.SignalLogs && sig != otlpwire.SignalTraces {
		return 0, fmt.Errorf("lake append: unknown %v", sig)
	}
	if !tenant.Valid(tenantName) {
		return 0, fmt.Errorf("lake append: tenantName %q: want 1 to 128 of [A-Za-z0-9._-]", tenantName)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, ErrClosed
	}
	key := batchKey{sig, tenantName}
	b := w.batches[key]
	if b == nil {
		b = &batch{}
		v2 := w.cfg.SchemaVersion != 1
		b.logs.keepPairs, b.spans.keepPairs = v2, v2
		w.batches[key] = b
	}
	n0 := b.len(sig)
	ncols := len(b.logs.cols.list)
	if sig == otlpwire.SignalTraces {
		ncols = len(b.spans.cols.list)
	}
	var in int64
	for i, req := range reqs {
		// Files written by old exporters may use the deprecated field 1000
		// (see otlpwire.MigrateDeprecated; serve's receiver migrated
		// already, and this finds nothing to do).
		if migrated, ok := otlpwire.MigrateDeprecated(nil, req); ok {
			req = migrated
		}
		err := appendRows(b, sig, req)
		if err != nil {
			if sig == otlpwire.SignalLogs {
				b.logs.truncate(n0, ncols)
			} else {
				b.spans.truncate(n0, ncols)
			}
			return 0, &AppendError{Index: i, Err: err}
		}
		in += int64(len(req))
	}
	added := b.len(sig) - n0
	if added == 0 {
		return 0, nil
	}
	now := w.cfg.Clock()
	if n0 == 0 {
		if received.IsZero() {
			received = now
		}
		b.first = now
		b.fallback = received.UnixNano() / 3600e9
	}
	b.bytesIn += in
	if !w.cfg.ManualFlush && w.due(b, now) {
		return added, w.writeBatch(key, b, "")
	}
	return added, nil
}

// appendRows decodes req into b's rows. A panic while decoding (a bug: the
// decoder checks every length and type) is returned as an error, so that
// one request cannot stop a server that replays it at every start.
func appendRows(b *batch, sig otlpwire.Signal, req []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decode rows: panic: %v", r)
		}
	}()
	if sig == otlpwire.SignalLogs {
		return b.logs.AppendLogs(req)
	}
	return b.spans.AppendTraces(req)
}

// due reports whether batch b reached its size, buffer or age limit.
func (w *Writer) due(b *batch, now time.Time) bool {
	return b.bytesIn > 0 && (float64(b.bytesIn)*w.ratio >= float64(w.cfg.FileSize) || b.bytesIn >= w.cfg.MaxBuffer || now.Sub(b.first) >= w.cfg.MaxAge)
}

// Due reports whether any batch reached its size, buffer or age limit:
// with ManualFlush, the caller's cue to FlushAs.
func (w *Writer) Due() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.cfg.Clock()
	for _, b := range w.batches {
		if w.due(b, now) {
			return true
		}
	}
	return false
}

// Buffered is the number of rows waiting in memory.
func (w *Writer) Buffered() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for k, b := range w.batches {
		n += b.len(k.sig)
	}
	return n
}

// FlushAs writes every buffered row, naming each file name.parquet in its
// partition; a file of that name already there (from an earlier attempt at
// the same rows) is replaced atomically. name is 1 to 128 of
// [A-Za-z0-9._-] and must not be reused for other rows.
func (w *Writer) FlushAs(name string) error {
	if !tenant.Valid(name) {
		return fmt.Errorf("lake flush: file name %q: want 1 to 128 of [A-Za-z0-9._-]", name)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	return w.flushAll(name)
}

// FlushOld writes every batch whose first row is older than the max age.
// A server calls it from a ticker so quiet tenants are written too.
func (w *Writer) FlushOld() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cfg.ManualFlush {
		return nil
	}
	now := w.cfg.Clock()
	var errs []error
	for key, b := range w.sortedBatches() {
		if b.len(key.sig) > 0 && now.Sub(b.first) >= w.cfg.MaxAge {
			errs = append(errs, w.writeBatch(key, b, ""))
		}
	}
	return errors.Join(errs...)
}

// Flush writes every buffered row.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushAll("")
}

// flushAll writes every batch, under name if not empty. When a batch
// cannot be encoded (ErrEncode), the files this call put in the lake are
// removed again.
func (w *Writer) flushAll(name string) error {
	var errs []error
	w.renamed = w.renamed[:0]
	for key, b := range w.sortedBatches() {
		if b.len(key.sig) > 0 {
			errs = append(errs, w.writeBatch(key, b, name))
		}
	}
	err := errors.Join(errs...)
	if errors.Is(err, ErrEncode) {
		for _, name := range w.renamed {
			if rerr := w.store().Delete(context.Background(), name); rerr != nil {
				err = errors.Join(err, fmt.Errorf("remove a file of the failed flush: %w", rerr))
			}
		}
	}
	if err != nil {
		w.renamed = w.renamed[:0]
	}
	return err
}

// Flushed returns the paths of the files the last flush wrote (none if it
// failed): Dir joined with their names. With a Bucket it returns nil:
// they are not files; FlushedNames names them. The slice is the caller's.
func (w *Writer) Flushed() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.local == nil {
		return nil
	}
	paths := make([]string, 0, len(w.renamed))
	for _, name := range w.renamed {
		if p, err := w.local.Path(name); err == nil {
			paths = append(paths, p)
		}
	}
	return paths
}

// FlushedNames returns the names in the bucket of the files the last flush
// wrote (none if it failed). The slice is the caller's.
func (w *Writer) FlushedNames() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.renamed)
}

// store is the bucket files go to: in tests that set noSync, the local
// bucket without its fsyncs.
func (w *Writer) store() bucket.Bucket {
	if w.cfg.noSync && w.local != nil {
		return w.local.WithoutSync()
	}
	return w.bucket
}

// Discard drops every buffered row without writing it.
func (w *Writer) Discard() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, b := range w.batches {
		b.bytesIn = 0
		if key.sig == otlpwire.SignalLogs {
			b.logs.Reset()
		} else {
			b.spans.Reset()
		}
	}
}

// sortedBatches yields the batches in a fixed order.
func (w *Writer) sortedBatches() iter.Seq2[batchKey, *batch] {
	keys := make([]batchKey, 0, len(w.batches))
	for k := range w.batches {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b batchKey) int {
		if a.sig != b.sig {
			return int(a.sig) - int(b.sig)
		}
		return cmp.Compare(a.tenant, b.tenant)
	})
	return func(yield func(batchKey, *batch) bool) {
		for _, k := range keys {
			if !yield(k, w.batches[k]) {
				return
			}
		}
	}
}

// Close writes every buffered row (with ManualFlush it drops them);
// the Writer is then unusable.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	if w.cfg.ManualFlush {
		return nil
	}
	return w.flushAll("")
}

// Stats returns the totals so far.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// writeBatch sorts the batch by (hour, service, time; trace id before time
// for spans of schema version 2), writes one file per
// hour and empties the batch. On error the batch is kept: files already
// put in the lake stay, and the rows are written again by the next
// flush (a retry can duplicate them; it never loses them).
func (w *Writer) writeBatch(key batchKey, b *batch, name string) error {
	var (
		n        int
		times    []int64
		services *Strings
		ids      *Strings // trace ids to order by (spans of schema version 2)
		hourOf   func(r int32) int64
	)
	if key.sig == otlpwire.SignalLogs {
		n, times, services = b.logs.Len(), b.logs.Time, &b.logs.ServiceName
		hourOf = func(r int32) int64 {
			if h, ok := partitionHour(b.logs.Time[r]); ok {
				return h
			}
			if h, ok := partitionHour(b.logs.ObservedTime[r]); ok {
				return h
			}
			return b.fallback
		}
	} else {
		n, times, services = b.spans.Len(), b.spans.StartTime, &b.spans.ServiceName
		if b.spans.keepPairs {
			ids = &b.spans.TraceID
		}
		hourOf = func(r int32) int64 {
			if h, ok := partitionHour(b.spans.StartTime[r]); ok {
				return h
			}
			return b.fallback
		}
	}
	keys, sel := w.enc.order(n, services, ids, times, hourOf)
	var out int64
	for start := 0; start < n; {
		end := start + 1
		for end < n && keys[end].hi>>32 == keys[start].hi>>32 {
			end++
		}
		size, rows, err := w.writePartition(key, b, int64(keys[start].hi>>32), sel[start:end], n, name)
		if err != nil {
			return err
		}
		out += size
		w.stats.Dropped += int64(end - start - rows)
		if rows > 0 {
			w.stats.Files++
			w.stats.Rows += int64(rows)
		}
		start = end
	}
	w.stats.BytesIn += b.bytesIn
	w.stats.BytesOut += out
	if b.bytesIn > 0 && out > 0 {
		w.ratio = max(float64(out)/float64(b.bytesIn), 0.01)
	}
	b.bytesIn = 0
	if key.sig == otlpwire.SignalLogs {
		b.logs.Reset()
	} else {
		b.spans.Reset()
	}
	return nil
}

// partitionHour is the hour since the Unix epoch of a time in ns, ok false
// for a zero, negative or absurd (past 2100) time.
func partitionHour(ns int64) (int64, bool) {
	const maxNs = 4102444800 * 1e9 // 2100-01-01T00:00:00Z
	if ns <= 0 || ns >= maxNs {
		return 0, false
	}
	return ns / 3600e9, true
}

// writePartition writes rows sel of the batch as one file of the hour's
// partition, named name.parquet (or an autoID's), and returns its size
// and rows: none, and no file, when Drop leaves none.
func (w *Writer) writePartition(key batchKey, b *batch, hour int64, sel []int32, n int, name string) (int64, int, error) {
	if w.cfg.Drop != nil {
		if m := w.cfg.Drop(key.sig, key.tenant, time.Unix(hour*3600, 0).UTC()); m != nil {
			if sel = w.dropRows(key.sig, b, sel, n, m); len(sel) == 0 {
				return 0, 0, nil
			}
		}
	}
	id := name
	if id == "" {
		id = autoID(w.cfg.Clock(), rand.Uint64())
	}
	obj := partitionOf(key.sig, key.tenant, hour).object(parquetFile(id))
	f, err := createScratch(w.scratch, parquetFile(id))
	if err != nil {
		return 0, 0, fmt.Errorf("write lake file %s: %w", obj, err)
	}
	defer removeScratch(f)
	cw := &countingWriter{w: bufio.NewWriterSize(f, 1<<20)}
	region, err := w.encode(cw, key.sig, b, sel, n)
	if err != nil && cw.err == nil { // not the file's fault
		err = fmt.Errorf("%w: %w", ErrEncode, err)
	}
	if err == nil {
		err = cw.w.Flush()
	}
	size := cw.n
	if err == nil && region != nil {
		size, err = SpliceRegion(f, region)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = uploadScratch(context.Background(), w.store(), obj, f.Name())
	}
	if err != nil {
		return 0, 0, fmt.Errorf("write lake file %s: %w", obj, err)
	}
	w.renamed = append(w.renamed, obj)
	return size, len(sel), nil
}

// encode writes the rows sel of the batch as Parquet to out, and returns
// the index region (grams or trace ids) to place before its footer
// (nil: none). A panic in the encoder (parquet-go panics on some limits)
// is returned as an error.
func (w *Writer) encode(out io.Writer, sig otlpwire.Signal, b *batch, sel []int32, n int) (region []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("encode parquet: panic: %v", r)
		}
	}()
	if m := w.cfg.EncodeFault; m != "" {
		for _, r := range sel {
			if sig == otlpwire.SignalLogs && string(b.logs.Body.At(int(r))) == m || sig == otlpwire.SignalTraces && string(b.spans.Name.At(int(r))) == m {
				return nil, fmt.Errorf("encode parquet: injected fault: row %q", m)
			}
		}
	}
	if sig == otlpwire.SignalLogs {
		return w.enc.writeLogs(out, &b.logs, sel)
	}
	return w.enc.writeSpans(out, &b.spans, sel)
}

// countingWriter counts the bytes written and keeps the first error of
// the file under it, which tells a file system error from an encoder's.
type countingWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}
