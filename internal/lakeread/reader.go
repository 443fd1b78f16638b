package lakeread

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/bloom"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Config configures a Reader. Start from DefaultConfig and set Bucket.
type Config struct {
	// Bucket holds the lake. It must be set.
	Bucket bucket.Bucket
	// MaxBytes bounds the bytes of Parquet one query reads (footers,
	// bloom filters, pages); past it the query fails with a *LimitError.
	// Default 1 GiB. It must be positive.
	MaxBytes int64
	// MaxSpans bounds the spans one query returns; past it the query
	// fails with a *LimitError. Default 100,000. It must be positive.
	MaxSpans int
	// ReadBufferSize is the size of parquet-go's reads of a file's pages
	// (0: its default, 4 KiB, right for a local disk); on an object store,
	// where each read is a request, larger (256 KiB) means far fewer
	// requests.
	ReadBufferSize int
	// Remote says the bucket is an object store, where every read is a
	// request: files are opened reading ahead (parquet-go's
	// OptimisticRead), their bloom filters loaded with their footers and
	// kept in memory while they stay open, and pages read ahead
	// asynchronously; ReadBufferSize defaults to 256 KiB.
	Remote bool
	// OpenFiles is how many of the lake's files the reader keeps open,
	// their footers parsed, between queries (the least recently used
	// closed past it). Default 256; 0 opens every file every query.
	OpenFiles int
	// OpenFileBytes bounds the memory the open files' parsed footers
	// take (estimated from their encoded size), so that the reader's
	// share of serve's memory ceiling holds whatever the files' shape.
	// Default DefaultOpenFileBytes; negative: no bound.
	OpenFileBytes int64
	// Fresh, if set, gives the spans acknowledged but not in the lake's
	// files yet, so that queries see a span as soon as its request was
	// acknowledged.
	Fresh Fresh
	// NoIndexes makes queries read every file's columns, ignoring what
	// the lake keeps beside them to answer without reading (a logs
	// file's counts): for measuring the indexes and testing that answers
	// do not change with them.
	NoIndexes bool
	// ChunkCacheBytes bounds the column chunks' page readers kept between
	// queries, with the dictionaries they decoded and the last page each
	// read, and the bloom filters read whole (chunkCache), the least
	// recently used dropped past it. Default
	// DefaultChunkCacheBytes; 0 keeps none. Not on an object store
	// (Remote), whose pages are read ahead asynchronously.
	ChunkCacheBytes int64
	// Node is the node whose spool Fresh reads, when several nodes write
	// the lake (lake.NodeName): Fresh's high-water mark applies to this
	// node's files only.
	Node string
}

// DefaultChunkCacheBytes is Config.ChunkCacheBytes' default.
const DefaultChunkCacheBytes = 32 << 20

// DefaultOpenFileBytes is Config.OpenFileBytes's default: the parsed
// footers of about 250 of the loader's spans files, or 25 merged ones.
const DefaultOpenFileBytes = 128 << 20

// DefaultConfig returns the defaults, without a Bucket.
func DefaultConfig() Config {
	return Config{MaxBytes: 1 << 30, MaxSpans: 100_000, OpenFiles: 256, OpenFileBytes: DefaultOpenFileBytes, ChunkCacheBytes: DefaultChunkCacheBytes}
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Bucket == nil:
		return errors.New("lakeread: Bucket not set")
	case c.MaxBytes <= 0:
		return fmt.Errorf("lakeread: MaxBytes %d, must be positive", c.MaxBytes)
	case c.MaxSpans <= 0:
		return fmt.Errorf("lakeread: MaxSpans %d, must be positive", c.MaxSpans)
	case c.OpenFiles < 0:
		return fmt.Errorf("lakeread: OpenFiles %d, must not be negative", c.OpenFiles)
	case c.ChunkCacheBytes < 0:
		return fmt.Errorf("lakeread: ChunkCacheBytes %d, must not be negative", c.ChunkCacheBytes)
	}
	return nil
}

// Reader reads spans from a lake. It is safe for concurrent use.
type Reader struct {
	cfg     Config
	files   *fileCache
	chunks  *chunkCache // nil: none
	names   *nameCache
	tags    *tagCache // traces files' attribute names
	streams *streamCache
	tables  *gramsTables
	counts  *boundedMemo[*lake.Counts] // logs files' counts, parsed once
	// traceIDs are spans files' trace-id indexes (nil: a file has none).
	traceIDs *boundedMemo[*lake.TraceIDs]
	// resValues are spans files' resource attribute values by key.
	resValues *boundedMemo[map[string][]TagValue]
	// spanValues are spans files' span attribute values by key, each key
	// read when first asked.
	spanValues *boundedMemo[map[string]spanKeyValues]
	listed     listings // unchanged hour partitions' listings
}

// New returns a Reader of cfg.
func New(cfg Config) (*Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Reader{cfg: cfg, files: newFileCache(cfg.OpenFiles, cmp.Or(cfg.OpenFileBytes, DefaultOpenFileBytes)), names: &nameCache{max: NamesMemoBytes, size: namesSize}, tags: &tagCache{m: map[fileKey]map[TagScope][]string{}}, streams: &streamCache{m: map[fileKey][][2]string{}},
		tables: &gramsTables{max: GramsTablesBytes}, counts: &boundedMemo[*lake.Counts]{max: countsMemoBytes, size: countsSize},
		traceIDs:   &boundedMemo[*lake.TraceIDs]{max: TraceIDsMemoBytes, size: traceIDsSize},
		resValues:  &boundedMemo[map[string][]TagValue]{max: ResValuesMemoBytes, size: resValuesSize},
		spanValues: &boundedMemo[map[string]spanKeyValues]{max: SpanValuesMemoBytes, size: spanValuesSize}}
	if cfg.ChunkCacheBytes > 0 && !cfg.Remote {
		buf := int64(cfg.ReadBufferSize)
		if buf <= 0 {
			buf = int64(parquet.DefaultFileConfig().ReadBufferSize)
		}
		r.chunks = newChunkCache(cfg.ChunkCacheBytes, buf)
		r.files.onClose = r.chunks.dropFile
	}
	return r, nil
}

// Close closes the files the reader keeps open. Queries under way finish;
// later ones open their files again.
func (r *Reader) Close() error {
	r.files.close()
	r.tables.close()
	return nil
}

// LimitError is the error of a query past one of Config's limits.
type LimitError struct {
	What  string // "bytes read" or "spans"
	Limit int64
}

// TooLarge says the query is past a limit of its own (readapi.TooLarge).
func (e *LimitError) TooLarge() bool { return true }

func (e *LimitError) Error() string {
	return fmt.Sprintf("lakeread: query past its limit of %d %s", e.Limit, e.What)
}

// Result is what a query found and what it cost.
type Result struct {
	Spans        *Spans
	FilesOpened  int   // files whose footer was read
	FilesSkipped int   // of a schema version this reader does not know
	FilesPassed  int   // not opened: their trace-id index holds none of the ids
	RowGroups    int   // row groups whose trace_id bloom filter passed
	BytesRead    int64 // of Parquet
}

// Trace returns the spans of the trace id of tenant in the partitions of
// the hours that overlap [start, end) (a zero start or end leaves that
// side open). A file that cannot be read fails the query, naming it.
func (r *Reader) Trace(ctx context.Context, tenant string, id [16]byte, start, end time.Time) (Result, error) {
	spans, res, err := r.Traces(ctx, tenant, [][16]byte{id}, start, end)
	res.Spans = spans[0]
	return res, err
}

// Traces is Trace of several trace ids in one walk over the files: it
// returns their spans in the order of ids (empty for one not found), and
// what the walk cost (Result.Spans nil). MaxSpans bounds the spans of all.
func (r *Reader) Traces(ctx context.Context, tenant string, ids [][16]byte, start, end time.Time) ([]*Spans, Result, error) {
	var res Result
	out := make([]*Spans, len(ids))
	byID := make(map[[16]byte]*Spans, len(ids))
	hexIDs := make([][]byte, len(ids))
	hashes := make([]uint64, len(ids)) // of hexIDs, for the bloom filters: once, not once a row group
	for i, id := range ids {
		if byID[id] == nil {
			byID[id] = &Spans{}
		}
		out[i] = byID[id]
		hexIDs[i] = hex.AppendEncode(nil, id[:])
		hashes[i] = bloom.XXH64{}.Sum64(hexIDs[i])
	}
	// The spans found are charged to the query's ticket (querybudget)
	// as they come; the caller holds them, so they stay charged until
	// the query ends.
	tk := querybudget.FromContext(ctx)
	var charged int64
	var chargeErr error
	total := func() int {
		n := 0
		var size int64
		for _, s := range byID {
			n += s.Len()
			size += s.Size()
		}
		if size > charged {
			if err := tk.Charge(size - charged); err != nil {
				chargeErr = err
			}
			charged = size
		}
		return n
	}
	q := r.newQuery(tenant, start, end)
	q.stats = &res
	err := q.fresh(ctx, func(p []byte) error {
		if err := tracesInFresh(p, byID); err != nil {
			return err
		}
		if total() > r.cfg.MaxSpans {
			return &LimitError{What: "spans", Limit: int64(r.cfg.MaxSpans)}
		}
		return chargeErr
	})
	if err != nil {
		return out, res, wrapLimit(err)
	}
	files, err := q.list(ctx)
	if err != nil {
		return out, res, err
	}
	// A file's trace-id index, where it has one, names the ids it may
	// hold: the others are not looked for there, and a file that may hold
	// none is not opened.
	var mine []int // indexes into ids of those file f may hold
	var fIDs [][16]byte
	var fHex [][]byte
	var fHashes []uint64
	for _, f := range files {
		var read int64
		var idx *lake.TraceIDs
		if !r.cfg.NoIndexes {
			idx, err = r.fileTraceIDs(ctx, f, &read)
		}
		if errors.Is(err, bucket.ErrNotFound) {
			err = nil
			continue // removed by compaction or retention since the listing, as q.open has it
		}
		if q.budget.left.Add(-read) < 0 {
			err = &LimitError{What: "bytes read", Limit: r.cfg.MaxBytes}
		}
		if err != nil {
			return out, res, wrapLimit(fmt.Errorf("lakeread: read %s: %w", f.Name, err))
		}
		fIDs, fHex, fHashes = ids, hexIDs, hashes
		if idx != nil {
			mine = mine[:0]
			for i, h := range hashes {
				if idx.MayHold(h) {
					mine = append(mine, i)
				}
			}
			if len(mine) == 0 {
				res.FilesPassed++
				continue
			}
			fIDs, fHex, fHashes = make([][16]byte, len(mine)), make([][]byte, len(mine)), make([]uint64, len(mine))
			for k, i := range mine {
				fIDs[k], fHex[k], fHashes[k] = ids[i], hexIDs[i], hashes[i]
			}
		}
		err = q.file(ctx, f, func(f lake.DataFile, pf *parquet.File) error {
			if err := r.tracesInFile(pf, fIDs, fHex, fHashes, byID, &res); err != nil {
				return err
			}
			if total() > r.cfg.MaxSpans {
				return &LimitError{What: "spans", Limit: int64(r.cfg.MaxSpans)}
			}
			return chargeErr
		})
		if err != nil {
			break
		}
	}
	res.BytesRead = r.cfg.MaxBytes - q.budget.left.Load()
	return out, res, err
}

// fileQuery is one query's walk over the lake's files: its tenant and
// time range, its byte budget, and what it counts.
type fileQuery struct {
	r          *Reader
	tenant     string
	start, end time.Time
	budget     *byteBudget
	stats      *Result         // counts FilesOpened and FilesSkipped, if not nil
	signal     otlpwire.Signal // whose files: traces, or logs
	charged    []chargeFrom    // open files and their read counts when opened
	// through bounds the files read, if bounded: a file of records past
	// it holds records the query had from its Fresh source.
	through uint64
	bounded bool
}

func (r *Reader) newQuery(tenant string, start, end time.Time) *fileQuery {
	q := &fileQuery{r: r, tenant: tenant, start: start, end: end, budget: &byteBudget{}, signal: otlpwire.SignalTraces}
	q.budget.left.Store(r.cfg.MaxBytes)
	return q
}

// eachFile calls fn with every version-2 traces file of the tenant in the
// partitions that overlap the time range, opened (its footer read, or
// kept open from an earlier query: fileCache) within the budget. A file
// removed since the
// listing is skipped, as are version-1 files (counted); an error fn
// returns, or a panic of parquet-go on a damaged file, ends the walk with
// an error naming the file.
//
// Files come newest hour first, so that a search that has its most recent
// traces can pass over older hours.
func (q *fileQuery) eachFile(ctx context.Context, fn func(lake.DataFile, *parquet.File) error) error {
	files, err := q.list(ctx)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := q.file(ctx, f, fn); err != nil {
			return err
		}
	}
	return nil
}

// list returns the files eachFile walks, newest hour first; files the
// listing no longer shows (compacted, pruned) leave the reader's caches.
// A range of at most maxListedHours lists its hour partitions alone, not
// the tenant's whole tree (which grows with the retention).
func (q *fileQuery) list(ctx context.Context) ([]lake.DataFile, error) {
	prefixes := []string{lake.TenantPrefix(q.signal, q.tenant)}
	keep := q.r.keepOnly
	hourly := !q.start.IsZero() && !q.end.IsZero() && q.end.Sub(q.start) <= maxListedHours*time.Hour
	if hourly {
		prefixes = prefixes[:0]
		for h := q.start.UTC().Truncate(time.Hour); h.Before(q.end); h = h.Add(time.Hour) {
			prefixes = append(prefixes, lake.HourPrefix(q.signal, q.tenant, h))
		}
	} else if hours, ok, err := hourPrefixes(ctx, q.r.cfg.Bucket, prefixes[0]); err != nil {
		return nil, fmt.Errorf("lakeread: %w", err)
	} else if ok {
		// A bucket that tells its directories: the tenant's hours one
		// by one, each listing kept while unchanged; the caches keep
		// what the whole tenant's listing shows (a pruned hour's files
		// leave them).
		prefixes, hourly = hours, true
		whole := map[fileKey]bool{}
		tenant := lake.TenantPrefix(q.signal, q.tenant)
		defer func() { q.r.keepOnly(tenant, whole) }()
		keep = func(_ string, listed map[fileKey]bool) { maps.Copy(whole, listed) }
	}
	var files []lake.DataFile
	for _, prefix := range prefixes {
		list := func() ([]lake.DataFile, error) { return lake.DataFiles(ctx, q.r.cfg.Bucket, prefix) }
		var all []lake.DataFile
		var err error
		if hourly {
			all, err = q.r.listed.hour(ctx, q.r.cfg.Bucket, list, prefix)
		} else {
			all, err = list()
		}
		if err != nil {
			return nil, fmt.Errorf("lakeread: %w", err)
		}
		listed := map[fileKey]bool{}
		for _, f := range all {
			if f.Tenant != q.tenant {
				continue
			}
			listed[keyOf(f)] = true
			if !overlaps(f.Hour, q.start, q.end) || q.bounded && f.Node == q.r.cfg.Node && f.First > q.through {
				continue
			}
			files = append(files, f)
		}
		keep(prefix, listed)
	}
	slices.SortStableFunc(files, func(a, b lake.DataFile) int { return b.Hour.Compare(a.Hour) })
	return files, nil
}

// keepOnly drops from the reader's caches the files under prefix that
// are not listed.
func (r *Reader) keepOnly(prefix string, listed map[fileKey]bool) {
	r.files.keepOnly(prefix, listed)
	r.names.keepOnly(prefix, listed)
	r.tags.keepOnly(prefix, listed)
	r.streams.keepOnly(prefix, listed)
	r.tables.keepOnly(prefix, listed)
	r.counts.keepOnly(prefix, listed)
	r.traceIDs.keepOnly(prefix, listed)
	r.resValues.keepOnly(prefix, listed)
	r.spanValues.keepOnly(prefix, listed)
}

// maxListedHours is the longest range whose hour partitions are listed
// one by one; a longer or open range lists the tenant's tree.
const maxListedHours = 48

func keyOf(f lake.DataFile) fileKey { return fileKey{f.Name, f.Size, f.ModTime} }

func (q *fileQuery) file(ctx context.Context, f lake.DataFile, fn func(lake.DataFile, *parquet.File) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("lakeread: read %s: damaged file: %v", f.Name, p)
		}
	}()
	cf, err := q.open(ctx, f)
	if err != nil || cf == nil {
		return err
	}
	defer func() {
		if rerr := q.release(cf); err == nil {
			err = rerr
		}
	}()
	pf := cf.pf
	if v, ok := pf.Lookup(lake.SchemaVersionKey); ok && v != "1" && v != "2" && v != "3" {
		if q.stats != nil {
			q.stats.FilesSkipped++ // a later version than this reader knows
		}
		return nil
	}
	if err := fn(f, pf); err != nil {
		return wrapLimit(fmt.Errorf("lakeread: %s: %w", f.Name, err))
	}
	return nil
}

// open opens file f (or takes it from the reader's open files) for the
// query, until release; nil if it was removed since the listing.
func (q *fileQuery) open(ctx context.Context, f lake.DataFile) (*cachedFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cf, hit, err := q.r.files.get(keyOf(f), func(read *atomic.Int64) (bucket.Object, *parquet.File, error) {
		obj, err := q.r.cfg.Bucket.Open(ctx, f.Name)
		if err != nil {
			return nil, nil, err
		}
		if obj.Size() > q.budget.left.Load() {
			obj.Close()
			return nil, nil, &LimitError{What: "bytes read", Limit: q.r.cfg.MaxBytes}
		}
		opts := []parquet.FileOption{parquet.SkipPageIndex(true)}
		n := q.r.cfg.ReadBufferSize
		if q.r.cfg.Remote {
			n = cmp.Or(n, 256<<10)
			opts = append(opts, parquet.OptimisticRead(true), parquet.PrefetchBloomFilters(true), parquet.FileReadMode(parquet.ReadModeAsync))
		}
		if n > 0 {
			opts = append(opts, parquet.ReadBufferSize(n))
		}
		pf, err := parquet.OpenFile(countingReader{obj, read}, obj.Size(), opts...)
		if err != nil {
			obj.Close()
			return nil, nil, err
		}
		return obj, pf, nil
	})
	if errors.Is(err, bucket.ErrNotFound) {
		return nil, nil // removed by compaction or retention since the listing
	}
	if err != nil {
		return nil, wrapLimit(fmt.Errorf("lakeread: read %s: %w", f.Name, err))
	}
	if q.stats != nil {
		q.stats.FilesOpened++
	}
	// The bytes this query reads through the file are charged to its
	// budget at release: the copy is its alone meanwhile (fileCache), so
	// they are its own reads, never another query's.
	from := int64(0)
	if hit {
		from = cf.read.Load()
	}
	q.charged = append(q.charged, chargeFrom{cf, from})
	return cf, nil
}

// release ends the query's use of cf, charging its reads to the budget.
func (q *fileQuery) release(cf *cachedFile) error {
	before := int64(0)
	for i, c := range q.charged {
		if c.cf == cf {
			before = c.from
			q.charged = append(q.charged[:i], q.charged[i+1:]...)
			break
		}
	}
	q.r.files.release(cf)
	if q.budget.left.Add(-(cf.read.Load() - before)) < 0 {
		return &LimitError{What: "bytes read", Limit: q.r.cfg.MaxBytes}
	}
	return nil
}

// columnIndexes returns the column indexes of the top-level columns
// named names.
func columnIndexes(pf *parquet.File, names []string) ([]int, error) {
	idx := make([]int, len(names))
	for i, c := range names {
		lc, ok := pf.Schema().Lookup(c)
		if !ok {
			return nil, fmt.Errorf("no column %s", c)
		}
		idx[i] = lc.ColumnIndex
	}
	return idx, nil
}

// overlaps reports whether the partition of hour overlaps [start, end).
func overlaps(hour, start, end time.Time) bool {
	if !start.IsZero() && !hour.Add(time.Hour).After(start) {
		return false
	}
	return end.IsZero() || hour.Before(end)
}

// byteBudget counts down the bytes a query may still read.
type byteBudget struct{ left atomic.Int64 }

// tracesInFile adds the spans of the traces ids (hexIDs, in hex) in file
// pf to byID: for each row group, the ids its bloom filter admits, their
// rows found in the trace_id pages that may hold them, then those rows
// read in one pass.
func (r *Reader) tracesInFile(pf *parquet.File, ids [][16]byte, hexIDs [][]byte, hashes []uint64, byID map[[16]byte]*Spans, res *Result) error {
	var dec decoder
	var traceCol int
	var cols []int // the columns a span is decoded from; nil: read whole rows (version 1)
	if isV1(pf) {
		var err error
		if dec, traceCol, err = decoderOf(pf); err != nil {
			return err
		}
	} else {
		c, err := columnsOf(pf.Schema())
		if err != nil {
			return err
		}
		dec, traceCol = c.decode, c.traceID
		for i, r := range c.roles {
			if r != roleNone {
				cols = append(cols, i)
			}
		}
	}
	type hit struct {
		row int64
		id  int
	}
	var hits []hit
	for _, rg := range pf.RowGroups() {
		hits = hits[:0]
		var want [][]byte // the ids the bloom filter admits
		var which []int
		for i, h := range hexIDs {
			ok, err := r.chunks.mayHoldHashed(rg.ColumnChunks()[traceCol], h, hashes[i])
			if err != nil {
				return fmt.Errorf("bloom filter: %w", err)
			}
			if ok {
				want, which = append(want, h), append(which, i)
			}
		}
		if len(want) == 0 {
			continue
		}
		res.RowGroups++
		rg = r.chunks.rowGroup(rg) // its pages read through the cache
		cc := rg.ColumnChunks()[traceCol]
		err := matchingRows(cc, want, func(row int64, w int) { hits = append(hits, hit{row, which[w]}) })
		if err != nil {
			return fmt.Errorf("trace_id: %w", err)
		}
		if len(hits) == 0 {
			continue
		}
		slices.SortFunc(hits, func(a, b hit) int { return cmp.Compare(a.row, b.row) })
		rows := make([]int64, len(hits))
		for i, h := range hits {
			rows[i] = h.row
		}
		add := func(i int, sp span) { byID[ids[hits[i].id]].add(sp) }
		if cols == nil {
			err = readRows(rg, rows, dec, add)
		} else {
			err = readColumns(rg, rows, cols, dec, add)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// wrapLimit returns the *LimitError in err's chain, if any, else err: a
// query past its budget says so, whatever parquet-go wrapped it in.
func wrapLimit(err error) error {
	var le *LimitError
	if errors.As(err, &le) {
		return le
	}
	return err
}

// matchingRows calls fn with each row of a column chunk of hex trace ids
// that holds one of ids, with the index of that id. With a page index,
// only the pages whose bounds admit one of ids are read, each once: the
// writer orders a service's spans by trace id, so that is about one page
// per service in the row group and id.
func matchingRows(cc parquet.ColumnChunk, ids [][]byte, fn func(row int64, id int)) error {
	var keep func(int) bool // nil without a column index: every page
	if ci, err := cc.ColumnIndex(); err == nil {
		keep = func(p int) bool {
			return p >= ci.NumPages() || !ci.NullPage(p) && slices.ContainsFunc(ids, func(id []byte) bool {
				return mayHold(ci.MinValue(p).ByteArray(), ci.MaxValue(p).ByteArray(), id)
			})
		}
	}
	// trace_id is a top-level column: a value is there at definition
	// level 1 when it is optional.
	top := leaf{maxDef: 1}
	return scanPagesWhere(cc, keep, func(p parquet.Page, first int64) error {
		for i, id := range ids {
			eq, any := stringEq(p, string(id))
			if !any {
				continue
			}
			walkPage(p, first, top, nil, func(row int64, _, k int) {
				if k >= 0 && eq(k) {
					fn(row, i)
				}
			})
		}
		return nil
	})
}

// mayHold reports whether a page with bounds min and max (either may be
// truncated: a prefix of the true bound) may hold id.
func mayHold(min, max, id []byte) bool {
	if bytes.Compare(min, id) > 0 {
		return false
	}
	if len(max) <= len(id) {
		return bytes.Compare(id[:len(max)], max) <= 0
	}
	return bytes.Compare(id, max) <= 0
}

// readRows decodes the rows of rg (ascending) and calls fn with each,
// with its index in rows. It loads the offset index of every column
// chunk first, so that a seek reads the page holding the row rather than
// every page before it, and reads each run of consecutive rows in one go.
func readRows(rg parquet.RowGroup, rows []int64, dec decoder, fn func(int, span)) error {
	if len(rows) == 0 {
		return nil
	}
	for _, cc := range rg.ColumnChunks() {
		cc.OffsetIndex() //nolint:errcheck // without one, seeks read from the chunk's start
	}
	rr := rg.Rows()
	defer rr.Close()
	buf := make([]parquet.Row, min(len(rows), 64))
	for i := 0; i < len(rows); {
		run := 1
		for i+run < len(rows) && run < len(buf) && rows[i+run] == rows[i]+int64(run) {
			run++
		}
		if err := rr.SeekToRow(rows[i]); err != nil {
			return fmt.Errorf("seek to row %d: %w", rows[i], err)
		}
		for got := 0; got < run; {
			n, err := rr.ReadRows(buf[got:run])
			got += n
			if got < run && (err != nil || n == 0) {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("read row %d: %w", rows[i]+int64(got), err)
			}
		}
		for j := range run {
			sp, err := dec(buf[j].Clone())
			if err != nil {
				return fmt.Errorf("row %d: %w", rows[i+j], err)
			}
			fn(i+j, sp)
		}
		i += run
	}
	return nil
}

// readColumns decodes the rows of rg (ascending) and calls fn with each,
// with its index in rows, as readRows does, but reads the row group column
// by column: only the columns in cols (ascending; the others are left
// out of the rows), and in each only the pages that hold one of rows (by
// the offset index). A trace's spans sit together in a row group sorted by
// trace id, so that is about one page per column, where the row reader
// seeks every column, the hot-key columns too, at every run of rows.
func readColumns(rg parquet.RowGroup, rows []int64, cols []int, dec decoder, fn func(int, span)) error {
	if len(rows) == 0 {
		return nil
	}
	ccs := rg.ColumnChunks()
	for _, c := range cols {
		if c >= len(ccs) {
			return fmt.Errorf("column %d of %d", c, len(ccs))
		}
	}
	// The columns are read in parallel (inParallel), each into values of
	// its own by row, then put together in the columns' order.
	byCol := make([][][]parquet.Value, len(cols))
	err := inParallel(len(cols), func(ci int) error {
		c := cols[ci]
		vals := make([][]parquet.Value, len(rows))
		var arena []byte // the rows' byte arrays, copied out of the pages
		j := 0
		err := eachValue(ccs[c], rows, func(row int64, v parquet.Value) {
			for rows[j] < row {
				j++
			}
			// Values alias the page, which goes back to parquet-go after
			// it: byte arrays are copied to the arena (a slice taken
			// before the arena grows keeps its old array).
			if k := v.Kind(); !v.IsNull() && (k == parquet.ByteArray || k == parquet.FixedLenByteArray) {
				off := len(arena)
				arena = append(arena, v.ByteArray()...)
				b := arena[off:len(arena):len(arena)]
				nv := parquet.ByteArrayValue(b)
				if k == parquet.FixedLenByteArray {
					nv = parquet.FixedLenByteArrayValue(b)
				}
				v = nv.Level(v.RepetitionLevel(), v.DefinitionLevel(), c)
			}
			vals[j] = append(vals[j], v)
		})
		if err != nil {
			return fmt.Errorf("column %d: %w", c, err)
		}
		byCol[ci] = vals
		return nil
	})
	if err != nil {
		return err
	}
	out := make([]parquet.Row, len(rows))
	for j := range out {
		n := 0
		for _, vals := range byCol {
			n += len(vals[j])
		}
		out[j] = make(parquet.Row, 0, n)
		for _, vals := range byCol {
			out[j] = append(out[j], vals[j]...)
		}
	}
	for i, row := range out {
		sp, err := dec(row)
		if err != nil {
			return fmt.Errorf("row %d: %w", rows[i], err)
		}
		fn(i, sp)
	}
	return nil
}

// decoder decodes a row of a traces file into a span.
type decoder func(parquet.Row) (span, error)

// decoderOf returns the row decoder of pf's schema version and the index
// of its trace_id column.
func decoderOf(pf *parquet.File) (decoder, int, error) {
	if isV1(pf) {
		c, err := v1ColumnsOf(pf)
		if err != nil {
			return nil, 0, err
		}
		return c.decode, c.traceID, nil
	}
	c, err := columnsOf(pf.Schema())
	if err != nil {
		return nil, 0, err
	}
	return c.decode, c.traceID, nil
}

// eachRow decodes every row of pf and calls fn with it: the full scan of
// a version-1 file.
func eachRow(pf *parquet.File, fn func(*span) error) error {
	dec, _, err := decoderOf(pf)
	if err != nil {
		return err
	}
	buf := make([]parquet.Row, 256)
	for _, rg := range pf.RowGroups() {
		rr := rg.Rows()
		for {
			n, rerr := rr.ReadRows(buf)
			for _, row := range buf[:n] {
				sp, err := dec(row.Clone())
				if err != nil {
					rr.Close()
					return err
				}
				if err := fn(&sp); err != nil {
					rr.Close()
					return err
				}
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rr.Close()
				return rerr
			}
		}
		rr.Close()
	}
	return nil
}

// charge charges the reads through the files the query holds since it
// took them (or last charged) to its budget.
func (q *fileQuery) charge() error {
	for i := range q.charged {
		c := &q.charged[i]
		now := c.cf.read.Load()
		q.budget.left.Add(-(now - c.from))
		c.from = now
	}
	if q.budget.left.Load() < 0 {
		return &LimitError{What: "bytes read", Limit: q.r.cfg.MaxBytes}
	}
	return nil
}

// chargeFrom is a file a query holds and its read count when it took it.
type chargeFrom struct {
	cf   *cachedFile
	from int64
}
