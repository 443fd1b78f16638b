package lakeload

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/durable"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lease"
	"github.com/wirehouse/wirehouse/internal/quarantine"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Config configures a Loader. Validate reports what is wrong with one;
// zero fields take the defaults New documents.
type Config struct {
	// Dir is the lake's root; with a Bucket, this node's state instead:
	// the intent of the write under way and the files being encoded.
	Dir string
	// Bucket, if set, is where the lake is (an S3 bucket, say), instead
	// of Dir.
	Bucket bucket.Bucket
	// Node, if set, makes this loader one of several nodes writing one
	// Bucket: its files are named after it (lake.NodeName), it publishes
	// its committed spool cursor in the bucket (NodesPrefix) at every
	// pass, and it compacts and prunes only while it holds the bucket's
	// compaction lease (CompactionLease), which needs a
	// bucket.Conditional. It must be lake.ValidNode and unique among the
	// nodes, and must stay with this node's spool.
	Node string
	// CompactGrace is lake.CompactOptions.Grace with a Bucket: how long a
	// merge's inputs stay readable after the swap, for queries under way
	// (on an object store a removed file cannot be read on). Default 2
	// minutes; without a Bucket inputs go at once.
	CompactGrace time.Duration
	Consumer     string // the spool consumer's name
	// Signals are the signals written to the lake: the spool's records
	// of other signals (those kept only to be forwarded) are passed,
	// committed without rows. Default logs and traces; metrics are never
	// written to the lake.
	Signals  []otlpwire.Signal
	MaxDelay time.Duration // the longest a record waits before it is written
	FileSize int64         // lake.WriterConfig.FileSize; 0: the lake's default
	Buffer   int64         // lake.WriterConfig.MaxBuffer; 0: the lake's default
	Logger   *slog.Logger
	// Retention bounds the lake under Dir; the zero value keeps
	// everything.
	Retention lake.Retention
	// PruneEvery is the period of the retention pass; default a minute.
	PruneEvery time.Duration
	// Compact, if set, makes the same pass merge the small files of hour
	// partitions that are over (lake.Compact with its default runs): those
	// an hour plus twice MaxDelay (at least 5 minutes) after they began.
	Compact bool
	// NoIndexes is lake.WriterConfig.NoIndexes: logs files without their
	// counts and body index.
	NoIndexes bool
	// Quarantine keeps the spooled requests the lake cannot store (see
	// Loader). Without one they are only logged and counted.
	Quarantine *quarantine.Dir
	// Drop is the lake writers' lake.WriterConfig.Drop: the rows the
	// delete requests not carried out yet select, left out as they are
	// written (internal/deletes).
	Drop func(sig otlpwire.Signal, tenant string, hour time.Time) lake.RowMatcher
	// EncodeFault is the lake writers' lake.WriterConfig.EncodeFault:
	// tests set it to make rows fail to encode; a server leaves it empty.
	EncodeFault string
	// Registerer, if set, gets the loader's metrics (wirehouse_lake_*).
	Registerer prometheus.Registerer
	// Rewrite, if set, runs in every pass after compaction, when this
	// node may change the lake (it holds the compaction lease, if the
	// bucket has several nodes): the delete requests' rewrites
	// (internal/deletes). Its error is logged.
	Rewrite func(ctx context.Context, p RewritePass) error
}

// RewritePass is what a pass gives Config.Rewrite.
type RewritePass struct {
	// Lock is the lake's write lock: held over each file's swap, so that
	// no write of the loader comes between.
	Lock sync.Locker
	// Hold reports whether this node may still change the lake (its
	// lease); nil for a lake of one node.
	Hold func() bool
	// Options swap a file as compaction swaps them (scratch, grace).
	Options lake.RewriteOptions
	// Cursor is the last spool record of node ("" or this node) whose
	// file is in the lake; false when not known.
	Cursor func(node string) (uint64, bool)
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("lake loader: no lake directory")
	case c.Node != "" && c.Bucket == nil:
		return errors.New("lake loader: a node name without a bucket")
	case c.Node != "" && !lake.ValidNode(c.Node):
		return fmt.Errorf("lake loader: node name %q: want 1 to 63 of [a-z0-9-], not starting with -", c.Node)
	case c.Consumer == "":
		return errors.New("lake loader: no spool consumer name")
	case c.MaxDelay <= 0:
		return errors.New("lake loader: max delay must be positive")
	case slices.ContainsFunc(c.Signals, func(s otlpwire.Signal) bool { return s != otlpwire.SignalLogs && s != otlpwire.SignalTraces }):
		return fmt.Errorf("lake loader: signals %v: the lake stores logs and traces", c.Signals)
	case c.Retention.MaxAge < 0 || c.Retention.MaxSize < 0 || c.PruneEvery < 0:
		return errors.New("lake loader: retention and prune period must not be negative")
	}
	return nil
}

// Loader moves records from the spool into the lake. It keeps two
// writers: while one is written and committed in the background, the
// other takes the next records, so decoding and Parquet encoding run on
// both cores. Writes and commits stay in spool order: a write starts only
// after the one before it committed.
type Loader struct {
	cfg    Config
	sp     *spool.Spool
	cons   *spool.Consumer
	w      *lake.Writer // takes the records read
	spare  *lake.Writer // the other: idle, or being written while inflight is set
	swapMu sync.Mutex   // held while w and spare are swapped, for Written
	log    *slog.Logger

	inflight chan error // the background write's result; nil when none runs

	first, last uint64             // spool records in w's batches; first 0 when none
	firstAt     time.Time          // when first was read
	stopAt      uint64             // replaying an interrupted write: write when last reaches it
	stopName    string             // ... under this name
	isolateTo   uint64             // after a write that could not be encoded: write records alone up to this one
	split       *otlpwire.Splitter // cuts large records into parts
	took        uint64             // the newest record in a range, read or taken by the tap
	handed      atomic.Uint64      // the newest record read, or taken by the tap
	tapOK       atomic.Bool        // the tap may take records: not replaying, not isolating
	inflightTo  uint64             // the last record of the background write
	skipped     atomic.Int64
	kept        map[uint64]bool // records quarantined by this process

	writeMu sync.Mutex // held by a write and by a retention pass

	// What the lake's files do not hold yet, for Fresh: copies of
	// the records read from the spool since the last write in
	// place, and how far that is.
	freshMu    sync.Mutex
	fresh      []freshRecord
	freshBytes int
	freshMax   int    // FreshMemory; tests lower it
	inLake     uint64 // every file of records up to this one is in place
	consumed   uint64 // the last record read from the spool

	store bucket.Bucket // the lake: Bucket, or the local bucket of Dir
	lease *lease.Lease  // of the bucket's compaction, with a Node

	pruneMu   sync.Mutex
	pruned    lake.Pruned    // removals summed over passes; Kept* of the last pass
	usage     []lake.Usage   // of the last pass; never changed once set
	compacted lake.Compacted // summed over passes, Skipped left out
	memo      lake.CompactMemo
	kick      chan struct{} // Kick: a pass now
}

// Kick asks for a compaction, rewrite and retention pass now rather than
// at the next period (a delete request came); it does not wait for it.
func (l *Loader) Kick() {
	select {
	case l.kick <- struct{}{}:
	default: // one is asked for already
	}
}

// intentFile is where the range being written is recorded.
const intentFile = ".flush"

// NodesPrefix is where, in a bucket several nodes write, each node
// publishes its committed spool cursor (<prefix><node>.json), so that the
// node compacting merges another's files only once that node will never
// write them again. CompactionLease is the lease object of compaction and
// retention. Both start with "_", which DuckDB's, pyarrow's and Spark's
// file discovery pass over.
const (
	NodesPrefix     = "_wirehouse/nodes/"
	CompactionLease = "_wirehouse/compaction.lease"
)

// rangeName is the name of the file of spool records first to last.
func (l *Loader) rangeName(first, last uint64) string {
	return lake.NodeName(l.cfg.Node, lake.RangeName(first, last))
}

// New validates cfg, opens the lake writers and the spool consumer and
// reads an interrupted write's intent, if any. PruneEvery defaults to a
// minute, Logger to none.
func New(sp *spool.Spool, cfg Config) (*Loader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.PruneEvery == 0 {
		cfg.PruneEvery = time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	var cond bucket.Conditional
	if cfg.Node != "" {
		var ok bool
		if cond, ok = cfg.Bucket.(bucket.Conditional); !ok {
			return nil, errors.New("lake loader: several nodes need a bucket with conditional writes")
		}
	}
	wc := lake.DefaultWriterConfig()
	wc.Dir, wc.ManualFlush, wc.MaxAge, wc.EncodeFault = cfg.Dir, true, cfg.MaxDelay, cfg.EncodeFault
	wc.NoIndexes, wc.Drop = cfg.NoIndexes, cfg.Drop
	store := bucket.Bucket(bucket.NewLocal(cfg.Dir))
	if cfg.Bucket != nil {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("lake loader: %w", err)
		}
		wc.Dir, wc.Bucket, wc.ScratchDir, store = "", cfg.Bucket, cfg.Dir, cfg.Bucket
	}
	if cfg.FileSize > 0 {
		wc.FileSize = cfg.FileSize
	}
	if cfg.Buffer > 0 {
		wc.MaxBuffer = cfg.Buffer
	}
	w, err := lake.NewWriter(wc)
	if err != nil {
		return nil, err
	}
	spare, err := lake.NewWriter(wc)
	if err != nil {
		return nil, err
	}
	cons, err := sp.Consumer(cfg.Consumer)
	if err != nil {
		return nil, fmt.Errorf("lake loader: %w", err)
	}
	l := &Loader{cfg: cfg, sp: sp, cons: cons, w: w, spare: spare, log: cfg.Logger, kept: map[uint64]bool{}, store: store, kick: make(chan struct{}, 1)}
	if cond != nil {
		if l.lease, err = lease.New(cond, CompactionLease, cfg.Node); err != nil {
			return nil, fmt.Errorf("lake loader: %w", err)
		}
	}
	l.inLake, l.consumed, l.freshMax = cons.Committed(), cons.Committed(), FreshMemory
	first, last, ok, err := readIntent(filepath.Join(cfg.Dir, intentFile))
	if err != nil {
		return nil, err
	}
	if ok && first == cons.Committed()+1 {
		l.stopAt, l.stopName = last, l.rangeName(first, last)
		if end := sp.Stats().LastSeq; end < last {
			l.stopAt = end // the spool lost the rest; rewrite what remains
		}
		l.log.Info("replaying an interrupted lake write", "first", first, "last", last)
		if l.stopAt < first { // nothing of it left to replay
			l.stopAt, l.stopName = 0, ""
			os.Remove(filepath.Join(cfg.Dir, intentFile))
		}
	}
	if cfg.Registerer != nil {
		if err := l.register(cfg.Registerer); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// register registers the loader's metrics with reg; they are read when
// scraped.
func (l *Loader) register(reg prometheus.Registerer) error {
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	for _, c := range []prometheus.Collector{
		gauge("wirehouse_lake_committed_seq", "Last spool record written to the lake and committed.", func() float64 { return float64(l.Committed()) }),
		gauge("wirehouse_lake_lag_records", "Spooled records not yet written to the lake.", func() float64 {
			last, done := l.sp.Stats().LastSeq, l.Committed()
			return float64(last - min(last, done))
		}),
		counter("wirehouse_lake_files_total", "Parquet files written since start.", func() float64 { return float64(l.Written().Files) }),
		counter("wirehouse_lake_rows_total", "Rows written to Parquet since start.", func() float64 { return float64(l.Written().Rows) }),
		counter("wirehouse_lake_bytes_total", "Bytes of Parquet written since start.", func() float64 { return float64(l.Written().BytesOut) }),
		counter("wirehouse_lake_deleted_rows_total", "Rows left out as they were written to Parquet since start: records a delete request not yet carried out selects.", func() float64 { return float64(l.Written().Dropped) }),
		counter("wirehouse_lake_refused_records_total", "Spooled requests the lake could not store, kept in the quarantine directory instead (logged).", func() float64 { return float64(l.Skipped()) }),
		gauge("wirehouse_lake_size_bytes", "Bytes of the lake's Parquet files, at the last retention pass (every minute).", func() float64 { return float64(l.Pruned().Kept) }),
		gauge("wirehouse_lake_parquet_files", "The lake's Parquet files, at the last retention pass (every minute).", func() float64 { return float64(l.Pruned().KeptFiles) }),
		counter("wirehouse_lake_retention_partitions_removed_total", "Hour partitions removed by --lake-retention or --lake-retention-size since start.", func() float64 { return float64(l.Pruned().Partitions) }),
		counter("wirehouse_lake_retention_bytes_removed_total", "Parquet bytes removed by retention since start.", func() float64 { return float64(l.Pruned().Bytes) }),
		counter("wirehouse_lake_compacted_files_total", "Small Parquet files merged by compaction since start.", func() float64 { return float64(l.Compacted().Inputs) }),
		gauge("wirehouse_lake_compaction_lease_held", "1 while this node holds the compaction lease of a lake several nodes share (always 0 for a lake of one node, which needs none).", func() float64 {
			if l.lease != nil && l.lease.Held() {
				return 1
			}
			return 0
		}),
		counter("wirehouse_lake_compaction_files_written_total", "Parquet files compaction wrote since start.", func() float64 { return float64(l.Compacted().Merges) }),
		usageCollector{l},
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register lake loader metrics: %w", err)
		}
	}
	return nil
}

// Usage returns the lake's Parquet files and bytes by signal and tenant
// at the last retention pass (nil before the first, and on a node that
// does not hold the compaction lease of a shared lake). The slice is
// shared: the caller must not change it.
func (l *Loader) Usage() []lake.Usage {
	l.pruneMu.Lock()
	defer l.pruneMu.Unlock()
	return l.usage
}

// usageCollector exports Usage as gauges labelled by signal and tenant.
type usageCollector struct{ l *Loader }

var (
	usageBytesDesc = prometheus.NewDesc("wirehouse_lake_usage_bytes",
		"Bytes of the lake's Parquet files by signal and tenant, at the last retention pass (every minute).", []string{"signal", "tenant"}, nil)
	usageFilesDesc = prometheus.NewDesc("wirehouse_lake_usage_files",
		"The lake's Parquet files by signal and tenant, at the last retention pass (every minute).", []string{"signal", "tenant"}, nil)
)

func (usageCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- usageBytesDesc
	ch <- usageFilesDesc
}

func (c usageCollector) Collect(ch chan<- prometheus.Metric) {
	for _, u := range c.l.Usage() {
		ch <- prometheus.MustNewConstMetric(usageBytesDesc, prometheus.GaugeValue, float64(u.Bytes), u.Signal, u.Tenant)
		ch <- prometheus.MustNewConstMetric(usageFilesDesc, prometheus.GaugeValue, float64(u.Files), u.Signal, u.Tenant)
	}
}

// Run loads until ctx ends. Rows not yet written when it returns stay in
// the spool, uncommitted, for the next run.
func (l *Loader) Run(ctx context.Context) error {
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { l.pruneLoop(pctx) })
	defer wg.Wait()
	defer stop()
	tick := min(l.cfg.MaxDelay/4, time.Second)
	l.took = l.cons.Committed()
	l.handed.Store(l.took)
	l.setTapOK()
	l.cons.SetTap(l.tap)
	defer l.cons.SetTap(nil)
	for {
		wait, cancel := context.WithTimeout(ctx, tick)
		rec, err := l.cons.Next(wait)
		cancel()
		l.absorb()
		switch {
		case err == nil:
			if rec.Seq > l.took {
				l.took = rec.Seq
				l.handed.Store(rec.Seq) // the tap cannot have moved it: rec was not taken
			}
			if len(rec.Payload) > largeRecord && l.isolateTo == 0 && l.stores(rec.Signal) {
				if !l.writeLarge(ctx, rec) {
					return nil
				}
				continue
			}
			l.add(rec)
			if l.isolateTo != 0 {
				if !l.writeAlone(ctx, rec) {
					return nil
				}
				continue
			}
			if l.caughtUp(rec.Seq) {
				// Nothing more to read: rest a moment rather than be woken
				// by every single append, which on a small machine costs
				// the receiver latency. The lake's delay is counted in
				// seconds; this is milliseconds.
				select {
				case <-ctx.Done():
				case <-time.After(idlePause):
				}
			}
		case ctx.Err() != nil:
			l.shutdown()
			return nil
		case errors.Is(err, context.DeadlineExceeded):
		default:
			return fmt.Errorf("lake loader: read spool: %w", err)
		}
		l.poll()
		if l.first == 0 {
			continue
		}
		if l.stopAt != 0 {
			if l.last < l.stopAt {
				continue // a replay writes only at the interrupted write's end
			}
			if !l.writeNow(ctx) {
				return nil
			}
			continue
		}
		// A range of only refused records, or of records of signals the
		// lake does not store (a gateway's), has no rows to make the
		// writer due; it is committed within a second, so that it holds
		// no spool segment back.
		idle := l.w.Buffered() == 0 && time.Since(l.firstAt) >= min(l.cfg.MaxDelay, passDelay)
		if idle || l.w.Due() {
			if !l.writeBehind(ctx) {
				return nil
			}
		}
	}
}

// tap is the loader's spool tap: a record of a signal the lake does not
// store (a gateway's, forwarded only) is taken as it is appended while
// the loader has been given every record before it, so that the spool
// need not keep it in memory for the loader to read and pass over. The
// Run loop adds what the tap took to its range (absorb).
func (l *Loader) tap(rec spool.Record) bool {
	if l.stores(rec.Signal) || !l.tapOK.Load() {
		return false
	}
	return l.handed.CompareAndSwap(rec.Seq-1, rec.Seq)
}

// absorb adds the records the tap took since the last call to the range
// being gathered, as records without rows.
func (l *Loader) absorb() {
	h := l.handed.Load()
	if h <= l.took || l.stopAt != 0 || l.isolateTo != 0 {
		return
	}
	if l.first == 0 {
		l.first, l.firstAt = l.took+1, time.Now()
	}
	l.last, l.took = h, h
}

// setTapOK lets the tap take records unless an interrupted write is
// being replayed or records are being isolated: both write ranges the
// Run loop reads one by one.
func (l *Loader) setTapOK() { l.tapOK.Store(l.stopAt == 0 && l.isolateTo == 0) }

// passDelay is the longest a range without rows waits to be committed.
const passDelay = time.Second

// idlePause is how long the loader rests when it has read every record.
const idlePause = 20 * time.Millisecond

// caughtUp reports whether seq is the newest spooled record.
func (l *Loader) caughtUp(seq uint64) bool { return l.sp.Stats().LastSeq <= seq }

// shutdown writes what is buffered so it is queryable now rather than
// after the next start's replay, unless an earlier write failed (then
// committing a later range would skip it).
func (l *Loader) shutdown() {
	if err := l.wait(); err != nil {
		return
	}
	if l.first == 0 || l.stopAt != 0 || l.isolateTo != 0 {
		return
	}
	if err := l.write(l.w, l.first, l.last, l.rangeName(l.first, l.last)); err != nil {
		l.log.Error("lake write at shutdown failed; the spool keeps the records", "err", err)
	}
}

// wait waits for the background write, if any, and returns its error.
func (l *Loader) wait() error {
	if l.inflight == nil {
		return nil
	}
	err := <-l.inflight
	l.inflight = nil
	return err
}

// poll takes the result of a background write that has ended, so that
// one whose rows could not be encoded is isolated at once rather than at
// the next write.
func (l *Loader) poll() {
	if l.inflight == nil {
		return
	}
	select {
	case err := <-l.inflight:
		l.inflight = nil
		if errors.Is(err, lake.ErrEncode) {
			l.isolate(l.inflightTo)
		}
	default:
	}
}

// writeBehind hands the current writer to a background write and
// continues with the spare one. It returns false when ctx ended while a
// write was being retried.
func (l *Loader) writeBehind(ctx context.Context) bool {
	if err := l.wait(); err != nil {
		if errors.Is(err, lake.ErrEncode) {
			l.isolate(l.inflightTo)
			return true
		}
		return false // only ctx ends a retrying write
	}
	w, first, last := l.w, l.first, l.last
	l.swapMu.Lock()
	l.w, l.spare = l.spare, w
	l.swapMu.Unlock()
	l.first, l.last, l.inflightTo = 0, 0, last
	done := make(chan error, 1)
	l.inflight = done
	go func() { done <- l.writeRetrying(ctx, w, first, last, l.rangeName(first, last)) }()
	return true
}

// writeNow writes the current writer in the foreground: the replay of an
// interrupted write.
func (l *Loader) writeNow(ctx context.Context) bool {
	if err := l.wait(); err != nil {
		if errors.Is(err, lake.ErrEncode) {
			l.isolate(l.inflightTo)
			return true
		}
		return false
	}
	name := l.stopName
	if err := l.writeRetrying(ctx, l.w, l.first, l.last, name); errors.Is(err, lake.ErrEncode) {
		l.isolate(l.last)
		return true
	} else if err != nil {
		return false
	}
	l.first, l.last, l.stopAt, l.stopName = 0, 0, 0, ""
	l.setTapOK()
	return true
}

// isolate handles a write whose rows could not be encoded (the write
// removed what it had renamed into place, and committed nothing): every
// buffered row is dropped, reading goes back to the first uncommitted
// record, and the records up to last are written one at a time
// (writeAlone), so that the one that cannot be written is found, kept in
// the quarantine, and passed.
func (l *Loader) isolate(last uint64) {
	l.log.Warn("a lake write could not be encoded; writing its records one at a time",
		"first", l.cons.Committed()+1, "last", last)
	l.w.Discard()
	l.spare.Discard()
	l.first, l.last, l.stopAt, l.stopName = 0, 0, 0, ""
	l.isolateTo = last
	l.setTapOK() // before Rewind, which also forgets what the tap took
	l.cons.Rewind()
}

// writeAlone writes and commits record rec, the only one in l.w, in a
// file of its own; if it cannot be encoded, it is quarantined and
// committed without rows. It returns false when ctx ended first.
func (l *Loader) writeAlone(ctx context.Context, rec spool.Record) bool {
	name := l.rangeName(rec.Seq, rec.Seq)
	err := l.writeRetrying(ctx, l.w, rec.Seq, rec.Seq, name)
	if errors.Is(err, lake.ErrEncode) {
		l.w.Discard()
		if !l.keep(ctx, rec, err) {
			return false
		}
		err = l.writeRetrying(ctx, l.w, rec.Seq, rec.Seq, name) // commits it, without rows
	}
	if err != nil {
		return false
	}
	l.first, l.last = 0, 0
	if rec.Seq >= l.isolateTo {
		l.isolateTo = 0
		l.setTapOK()
		l.log.Info("lake writes resumed after isolating a record that could not be encoded", "seq", rec.Seq)
	}
	return true
}

// A spooled request larger than largeRecord is written on its own, in
// parts of at most partBytes of protobuf (cut on the wire by
// otlpwire.Splitter), each flushed before the next is decoded, so that the
// rows of one large request never fill the loader's memory. Both are
// constants, not settings: a replay must cut a request into the same
// parts to write them under the same names.
const (
	largeRecord = 8 << 20
	partBytes   = 4 << 20
)

// writeLarge writes what is buffered, then record rec alone, in parts
// named <seq>-<seq>-p<N>, and commits it. Its intent names <seq>-<seq>, so
// a replay after a crash rewrites the same parts. It returns false when
// ctx ended first.
func (l *Loader) writeLarge(ctx context.Context, rec spool.Record) bool {
	if err := l.wait(); errors.Is(err, lake.ErrEncode) {
		l.isolate(l.inflightTo) // rec is read again after the isolated range
		return true
	} else if err != nil {
		return false
	}
	l.stopAt, l.stopName = 0, "" // a replayed range ends before rec: parts are written only here
	l.setTapOK()
	if l.first != 0 {
		first, last := l.first, l.last
		err := l.writeRetrying(ctx, l.w, first, last, l.rangeName(first, last))
		if errors.Is(err, lake.ErrEncode) {
			l.isolate(last)
			return true
		} else if err != nil {
			return false
		}
		l.first, l.last = 0, 0
	}
	if l.split == nil {
		l.split, _ = otlpwire.NewSplitter(otlpwire.WithMaxBytes(partBytes)) // a valid option
	}
	name := l.rangeName(rec.Seq, rec.Seq)
	for {
		err := l.writeParts(rec, name)
		if err == nil {
			break
		}
		l.w.Discard()
		var derr *decodeError
		if errors.As(err, &derr) || errors.Is(err, lake.ErrEncode) {
			if !l.keep(ctx, rec, err) {
				return false
			}
			break // committed below without rows
		}
		l.log.Error("lake write failed; retrying", "first", rec.Seq, "last", rec.Seq, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(min(l.cfg.MaxDelay/4, time.Second)):
		}
	}
	return l.writeRetrying(ctx, l.w, rec.Seq, rec.Seq, name) == nil // the intent, no rows, the commit
}

// decodeError is a part of a large record the lake cannot decode.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return "decode for the lake: " + e.err.Error() }
func (e *decodeError) Unwrap() error { return e.err }

// writeParts writes the parts of rec under lake.PartName, after its
// intent (name, rec's range).
// On failure it removes the parts it wrote, so that none of rec's rows is
// in the lake.
func (l *Loader) writeParts(rec spool.Record, name string) (err error) {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	if err := writeIntent(filepath.Join(l.cfg.Dir, intentFile), name); err != nil {
		return err
	}
	var written []string
	defer func() {
		if err != nil {
			for _, name := range written {
				l.store.Delete(context.Background(), name) //nolint:errcheck // a part left is rewritten by the retry, under its name
			}
		}
	}()
	sig := otlpwire.SignalLogs
	parts := l.split.SplitLogs(otlpwire.LogsRequest(rec.Payload))
	if rec.Signal == otlpwire.SignalTraces {
		sig = otlpwire.SignalTraces
		tparts := l.split.SplitTraces(otlpwire.TracesRequest(rec.Payload))
		parts = func(yield func(otlpwire.LogsRequest, error) bool) {
			for p, err := range tparts {
				if !yield(otlpwire.LogsRequest(p), err) {
					return
				}
			}
		}
	}
	n := 0
	for part, perr := range parts {
		if perr != nil {
			return &decodeError{perr}
		}
		if _, err := l.w.AppendReceived(sig, rec.Tenant, rec.Received, part); err != nil {
			return &decodeError{err}
		}
		if err := l.w.FlushAs(lake.NodeName(l.cfg.Node, lake.PartName(rec.Seq, rec.Seq, n))); err != nil {
			return err
		}
		written = append(written, l.w.FlushedNames()...)
		n++
	}
	return nil
}

// writeRetrying writes until it succeeds, the rows cannot be encoded
// (lake.ErrEncode: writing them again cannot help) or ctx ends.
func (l *Loader) writeRetrying(ctx context.Context, w *lake.Writer, first, last uint64, name string) error {
	tick := min(l.cfg.MaxDelay/4, time.Second)
	for {
		err := l.write(w, first, last, name)
		if err == nil || errors.Is(err, lake.ErrEncode) {
			return err
		}
		l.log.Error("lake write failed; retrying", "first", first, "last", last, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(tick):
		}
	}
}

// add appends one record to the writer. A record the lake refuses (the
// receiver validated it, so this is a bug or a version skew) is kept in
// the quarantine, and still part of the range.
func (l *Loader) add(rec spool.Record) {
	if !l.stores(rec.Signal) {
		// Part of the range, without rows.
		if l.first == 0 {
			l.first, l.firstAt = rec.Seq, time.Now()
		}
		l.last = rec.Seq
		return
	}
	var sig otlpwire.Signal
	switch rec.Signal {
	case otlpwire.SignalLogs:
		sig = otlpwire.SignalLogs
	case otlpwire.SignalTraces:
		sig = otlpwire.SignalTraces
	}
	if _, err := l.w.AppendReceived(sig, rec.Tenant, rec.Received, rec.Payload); err != nil {
		l.keep(context.Background(), rec, fmt.Errorf("decode for the lake: %w", err))
	}
	if l.first == 0 {
		l.first, l.firstAt = rec.Seq, time.Now()
	}
	l.last = rec.Seq
	l.noteRead(rec)
}

// stores reports whether records of sig go to the lake.
func (l *Loader) stores(sig otlpwire.Signal) bool {
	if l.cfg.Signals == nil {
		return sig == otlpwire.SignalLogs || sig == otlpwire.SignalTraces
	}
	return slices.Contains(l.cfg.Signals, sig)
}

// freshRecord is a traces record read from the spool whose files are not
// in place yet.
type freshRecord struct {
	seq     uint64
	signal  otlpwire.Signal
	tenant  string
	payload []byte // the spool's kept copy (spool.Record.Kept); never changed
}

// FreshMemory bounds the bytes of fresh records a Loader keeps in memory
// (copies the spool kept, which may outlive its tail); past it the oldest
// are dropped, and Fresh reads them from the spool (which keeps every
// record until its files are in place).
const FreshMemory = 16 << 20

// noteRead records that rec was read: its payload is kept for Fresh
// until its files are in place, if the spool kept it in memory (Kept),
// whose copy is then shared. A record read from the file is not copied:
// the kept records stay a consecutive run up to the last one read, so it
// drops them, and Fresh reads them all from the spool instead. The spool
// stops keeping records while the loader lags behind what it keeps, and
// then this one holds no payload either.
func (l *Loader) noteRead(rec spool.Record) {
	l.freshMu.Lock()
	defer l.freshMu.Unlock()
	if rec.Seq <= l.consumed {
		return // read again (a rewind): kept already
	}
	l.consumed = rec.Seq
	if !rec.Kept || len(rec.Payload) > l.freshMax {
		clear(l.fresh)
		l.fresh, l.freshBytes = l.fresh[:0], 0
		return
	}
	l.fresh = append(l.fresh, freshRecord{seq: rec.Seq, signal: rec.Signal, tenant: rec.Tenant, payload: rec.Payload})
	l.freshBytes += len(rec.Payload)
	for l.freshBytes > l.freshMax {
		l.freshBytes -= len(l.fresh[0].payload)
		l.fresh = l.fresh[1:]
	}
}

// noteInLake records that every file of the records up to last is in
// place, dropping their fresh copies.
func (l *Loader) noteInLake(last uint64) {
	l.freshMu.Lock()
	defer l.freshMu.Unlock()
	if last <= l.inLake {
		return
	}
	l.inLake = last
	i := 0
	for i < len(l.fresh) && l.fresh[i].seq <= last {
		l.freshBytes -= len(l.fresh[i].payload)
		i++
	}
	l.fresh = append(l.fresh[:0:0], l.fresh[i:]...)
}

// Fresh calls fn with the payload of each request of signal sig and
// tenant acknowledged but not yet in the lake's files, and returns the
// lake's high-water mark: every file of spool records up to through is in
// place, and files of later records (a write under way, or one a crash
// interrupted, being replayed) hold records fn was given, so readers pass
// them over (lake.DataFile.First > through). The records the loader read
// last come from memory when the spool kept them (up to FreshMemory
// bytes; see noteRead), the others from the spool (spool.Scan). The
// payload is valid only during fn.
func (l *Loader) Fresh(ctx context.Context, sig otlpwire.Signal, tenant string, fn func(payload []byte) error) (through uint64, err error) {
	l.freshMu.Lock()
	through, consumed := l.inLake, l.consumed
	memFrom := consumed + 1
	if len(l.fresh) > 0 {
		memFrom = l.fresh[0].seq
	}
	var mine []freshRecord
	for _, r := range l.fresh {
		if r.signal == sig && r.tenant == tenant {
			mine = append(mine, r)
		}
	}
	l.freshMu.Unlock()
	fromSpool := func(rec spool.Record) error {
		if rec.Signal != sig || rec.Tenant != tenant {
			return nil
		}
		return fn(rec.Payload)
	}
	// Read but no longer in memory, then in memory, then not read yet.
	if err := l.sp.Scan(ctx, through+1, memFrom-1, fromSpool); err != nil {
		return through, err
	}
	for _, r := range mine {
		if err := ctx.Err(); err != nil {
			return through, err // the query was canceled
		}
		if err := fn(r.payload); err != nil {
			return through, err
		}
	}
	return through, l.sp.Scan(ctx, consumed+1, math.MaxUint64, fromSpool)
}

// keep puts a record the lake cannot store into the quarantine, logs and
// counts it, once per record and process. A quarantine that cannot be
// written (a full disk) is retried until it succeeds or ctx ends, when
// keep returns false: the record must then stay uncommitted.
func (l *Loader) keep(ctx context.Context, rec spool.Record, cause error) bool {
	if l.kept[rec.Seq] {
		return true
	}
	records := 0
	if rec.Signal == otlpwire.SignalLogs {
		records, _ = otlpwire.LogsRequest(rec.Payload).LogRecordCount()
	} else {
		records, _ = otlpwire.TracesRequest(rec.Payload).SpanCount()
	}
	path := ""
	if q := l.cfg.Quarantine; q != nil {
		for {
			var err error
			path, err = q.Put(quarantine.Entry{Signal: rec.Signal.String(), Tenant: rec.Tenant, Source: "lake",
				ID: "spool-" + strconv.FormatUint(rec.Seq, 10), Received: rec.Received, Records: records,
				Payload: rec.Payload, Err: cause})
			if err == nil {
				break
			}
			l.log.Error("cannot quarantine a spooled record the lake cannot store; retrying", "seq", rec.Seq, "err", err)
			select {
			case <-ctx.Done():
				return false
			case <-time.After(time.Second):
			}
		}
	}
	l.kept[rec.Seq] = true
	l.skipped.Add(1)
	l.log.Error("the lake cannot store a spooled request; kept in the quarantine", "seq", rec.Seq,
		"signal", rec.Signal.String(), "tenant", rec.Tenant, "records", records, "file", path, "err", cause)
	return true
}

// write writes w's rows, the spool records first to last, under name and
// commits them.
func (l *Loader) write(w *lake.Writer, first, last uint64, name string) error {
	l.writeMu.Lock()
	defer l.writeMu.Unlock()
	intent := filepath.Join(l.cfg.Dir, intentFile)
	if err := writeIntent(intent, name); err != nil {
		return err
	}
	if err := w.FlushAs(name); err != nil {
		return err
	}
	l.noteInLake(last)
	if err := l.cons.Commit(last); err != nil {
		return fmt.Errorf("commit spool cursor: %w", err)
	}
	if err := os.Remove(intent); err != nil {
		return fmt.Errorf("remove lake intent: %w", err)
	}
	return nil
}

// pruneLoop runs a retention pass at once and then every PruneEvery until
// ctx ends.
func (l *Loader) pruneLoop(ctx context.Context) {
	t := time.NewTicker(l.cfg.PruneEvery)
	defer t.Stop()
	for {
		l.prune(ctx)
		select {
		case <-l.kick:
		case <-ctx.Done():
			if l.lease != nil { // let another node compact at once
				rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if err := l.lease.Release(rctx); err != nil {
					l.log.Warn("cannot release the lake's compaction lease; it expires by itself", "err", err)
				}
				cancel()
			}
			return
		case <-t.C:
		}
	}
}

// prune runs one compaction and retention pass. Compaction takes the
// write lock partition by partition, so writes go on during a long pass;
// retention, which is quick, holds it throughout. Compaction goes first,
// so that the size retention goes by and the lake's size on /metrics are
// those of the files that stay. With compaction off, interrupted
// compactions are still finished.
func (l *Loader) prune(ctx context.Context) {
	o := lake.CompactOptions{
		After:       max(2*l.cfg.MaxDelay, 5*time.Minute),
		RecoverOnly: !l.cfg.Compact,
		Lock:        &l.writeMu,
		Memo:        &l.memo,
		ScratchDir:  l.cfg.Dir,
	}
	if l.cfg.Bucket != nil {
		o.Grace = cmp.Or(l.cfg.CompactGrace, 2*time.Minute)
	}
	if l.lease != nil {
		// One of several nodes: publish how far this one committed, and
		// compact and prune only with the lease.
		if err := l.publish(ctx); err != nil {
			l.log.Warn("cannot publish this node's lake cursor; retrying at the next pass", "err", err)
		}
		held, err := l.lease.Acquire(ctx)
		if err != nil {
			l.log.Warn("cannot reach the lake's compaction lease; retrying at the next pass", "err", err)
		}
		if !held {
			return
		}
		nodes, err := l.nodes(ctx)
		if err != nil {
			l.log.Warn("cannot read the nodes' lake cursors; compacting none of their files", "err", err)
		}
		o.Nodes, o.Hold = nodes, l.lease.Held
	}
	c, cerr := lake.CompactBucket(ctx, l.store, l.cons.Committed(), time.Now(), o)
	if l.cfg.Rewrite != nil && (l.lease == nil || l.lease.Held()) {
		nodes := o.Nodes
		p := RewritePass{Lock: &l.writeMu, Hold: o.Hold,
			Options: lake.RewriteOptions{ScratchDir: l.cfg.Dir, Grace: o.Grace, Now: time.Now()},
			Cursor: func(node string) (uint64, bool) {
				if node == "" || node == l.cfg.Node {
					return l.cons.Committed(), true
				}
				at, ok := nodes[node]
				return at, ok
			}}
		if err := l.cfg.Rewrite(ctx, p); err != nil {
			l.log.Error("lake rewrite pass failed; retrying at the next", "err", err)
		}
	}
	l.writeMu.Lock()
	var p lake.Pruned
	var usage []lake.Usage
	var err error
	if l.cfg.Bucket == nil {
		p, usage, err = lake.PruneUsage(ctx, bucket.NewLocal(l.cfg.Dir), l.cfg.Retention, time.Now())
	} else if l.lease == nil || l.lease.Held() {
		var swept int
		swept, err = bucket.NewLocal(l.cfg.Dir).Sweep(ctx, time.Now().Add(-time.Hour))
		if err == nil {
			p, usage, err = lake.PruneUsage(ctx, l.store, l.cfg.Retention, time.Now())
		}
		p.Temps += swept
	}
	l.writeMu.Unlock()
	l.noteCompaction(c, cerr)
	l.pruneMu.Lock()
	l.pruned.Partitions += p.Partitions
	l.pruned.Files += p.Files
	l.pruned.Bytes += p.Bytes
	l.pruned.Temps += p.Temps
	if err == nil {
		l.pruned.Kept, l.pruned.KeptFiles, l.usage = p.Kept, p.KeptFiles, usage
	}
	l.pruneMu.Unlock()
	if err != nil {
		l.log.Error("lake retention pass failed; retrying at the next", "err", err)
		return
	}
	if p.Partitions > 0 || p.Temps > 0 {
		l.log.Info("lake retention removed old data", "partitions", p.Partitions, "files", p.Files,
			"bytes", p.Bytes, "temp_files", p.Temps, "lake_bytes", p.Kept)
	}
}

// nodeCursor is what a node publishes at NodesPrefix.
type nodeCursor struct {
	Node      string    `json:"node"`
	Committed uint64    `json:"committed"`
	Time      time.Time `json:"time"`
}

// publish writes this node's committed cursor to the bucket.
func (l *Loader) publish(ctx context.Context) error {
	data, err := json.Marshal(nodeCursor{Node: l.cfg.Node, Committed: l.cons.Committed(), Time: time.Now().UTC()})
	if err != nil {
		return err
	}
	return l.store.Upload(ctx, NodesPrefix+l.cfg.Node+".json", bytes.NewReader(data))
}

// nodes reads the cursors the nodes published; this node's is its own
// committed cursor. On an error it returns this node's alone.
func (l *Loader) nodes(ctx context.Context) (map[string]uint64, error) {
	nodes := map[string]uint64{l.cfg.Node: l.cons.Committed()}
	var errs []error
	for a, err := range l.store.List(ctx, NodesPrefix) {
		if err != nil {
			return map[string]uint64{l.cfg.Node: l.cons.Committed()}, err
		}
		node, ok := strings.CutSuffix(strings.TrimPrefix(a.Name, NodesPrefix), ".json")
		if !ok || node == l.cfg.Node || !lake.ValidNode(node) {
			continue
		}
		r, err := l.store.Get(ctx, a.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var c nodeCursor
		err = json.NewDecoder(io.LimitReader(r, 4096)).Decode(&c)
		r.Close()
		if err != nil || c.Node != node {
			errs = append(errs, fmt.Errorf("node cursor %s: malformed", a.Name))
			continue
		}
		nodes[node] = c.Committed
	}
	return nodes, errors.Join(errs...)
}

// noteCompaction counts and logs what a compaction pass did.
func (l *Loader) noteCompaction(c lake.Compacted, err error) {
	l.pruneMu.Lock()
	l.compacted.Merges += c.Merges
	l.compacted.Inputs += c.Inputs
	l.compacted.Rows += c.Rows
	l.compacted.Leftover += c.Leftover
	l.pruneMu.Unlock()
	if err != nil {
		l.log.Error("lake compaction failed; retrying at the next pass", "err", err)
	}
	for _, s := range c.Skipped {
		l.log.Warn("lake compaction skipped a partition", "why", s)
	}
	if c.Merges > 0 || c.Leftover > 0 {
		l.log.Info("lake compaction merged small files", "files_written", c.Merges, "files_merged", c.Inputs,
			"rows", c.Rows, "leftovers_removed", c.Leftover)
	}
}

// Compacted returns what compaction did since the loader started
// (Skipped left out).
func (l *Loader) Compacted() lake.Compacted {
	l.pruneMu.Lock()
	defer l.pruneMu.Unlock()
	return l.compacted
}

// Pruned returns what retention removed since the loader started
// (partitions, files, bytes, temporary files) and the lake's Parquet files
// and bytes at the last pass (Kept, KeptFiles; zero before the first).
func (l *Loader) Pruned() lake.Pruned {
	l.pruneMu.Lock()
	defer l.pruneMu.Unlock()
	return l.pruned
}

// Close waits for a background write, then drops what is buffered (it is
// still in the spool) and closes the writers.
func (l *Loader) Close() error {
	l.wait()
	return errors.Join(l.w.Close(), l.spare.Close())
}

// Written returns the lake files, rows and bytes written so far.
func (l *Loader) Written() lake.Stats {
	l.swapMu.Lock()
	w, spare := l.w, l.spare
	l.swapMu.Unlock()
	a, b := w.Stats(), spare.Stats()
	return lake.Stats{Files: a.Files + b.Files, Rows: a.Rows + b.Rows, BytesIn: a.BytesIn + b.BytesIn, BytesOut: a.BytesOut + b.BytesOut,
		Dropped: a.Dropped + b.Dropped}
}

// Committed is the last spool record written to the lake and committed.
func (l *Loader) Committed() uint64 { return l.cons.Committed() }

// Skipped is the number of spooled records the lake could not store
// (kept in the quarantine, when there is one).
func (l *Loader) Skipped() int64 { return l.skipped.Load() }

func writeIntent(path, name string) error {
	if err := durable.WriteFile(path, []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("lake intent: %w", err)
	}
	return nil
}

// readIntent reads the range of an interrupted write; ok is false when
// there is none.
func readIntent(path string) (first, last uint64, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("read lake intent: %w", err)
	}
	rng := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(rng, '.'); i >= 0 {
		rng = rng[i+1:] // a node's name: <node>.<first>-<last>
	}
	a, z, found := strings.Cut(rng, "-")
	first, err1 := strconv.ParseUint(a, 10, 64)
	last, err2 := strconv.ParseUint(z, 10, 64)
	if !found || err1 != nil || err2 != nil || first == 0 || last < first {
		return 0, 0, false, fmt.Errorf("read lake intent %s: malformed %q", path, b)
	}
	return first, last, true, nil
}
