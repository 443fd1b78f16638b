package metricstore

import (
	"context"
	"errors"
	"fmt"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

// ErrUnavailable is wrapped by the errors of the writes a Store refuses
// after a write to its write-ahead log failed (a full disk, an I/O
// error), and of every use while it reopens its TSDB or once it is
// closed. The refusal is temporary: the Store reopens the TSDB on its own
// once the file system has room (see the package documentation, "Write
// errors"), so a client should retry.
var ErrUnavailable = errors.New("metric store unavailable")

var (
	errWriteFailed = fmt.Errorf("metricstore: a write-ahead log write failed; writes are refused until the TSDB is reopened: %w", ErrUnavailable)
	errReopening   = fmt.Errorf("metricstore: the TSDB is being reopened after a write-ahead log write failed: %w", ErrUnavailable)
	errClosed      = fmt.Errorf("metricstore: closed: %w", ErrUnavailable)
)

// guardedDB is the Store's TSDB, which it closes and opens again after a
// write-ahead log write fails. Its methods are those of *tsdb.DB the Store
// uses, and work on the DB open at the time; a querier, an appender or an
// exemplar selection keeps that DB open until it is closed, committed or
// rolled back, or returns.
//
// Each DB opened is a generation. A commit, in AppendOTLP or an appender
// from AppenderV2, reads the failed-writes counters of the generation's
// WAL and WBL after it returns: Prometheus' wlog increments them inside
// the log's mutex when a Log fails, so a commit that wrote to the log
// after a failed write (behind a torn record, or with samples of a series
// whose series record was lost) sees them and is refused. The first
// refusal marks the generation failed: from then on its writers are
// refused at once, and a goroutine waits for free space (checked every
// retry interval), closes the DB once its users are done, mends the WAL
// (see planMend), and opens it again, its head rebuilt from the WAL so
// that it holds the series and samples the WAL holds and nothing more.
type guardedDB struct {
	dir    string
	opts   tsdb.Options
	log    *slog.Logger
	reg    prometheus.Registerer // nil: the TSDB's metrics are not exported
	every  time.Duration         // recovery retry interval
	opened func(*tsdb.DB)        // called with each reopened DB before it serves
	notify wlog.WriteNotified    // told of WAL writes (remote write's queue managers); may be nil

	mu      sync.RWMutex
	cur     *generation // nil while reopening and once closed
	last    *tsdb.DB    // the DB opened last
	closed  bool
	stop    chan struct{} // closed by Close
	wg      sync.WaitGroup
	reopens atomic.Int64
	metrics []prometheus.Collector // registered with reg
}

// generation is one opened TSDB.
type generation struct {
	db     *tsdb.DB
	reg    *tsdbRegisterer
	users  sync.WaitGroup // queriers, appenders and calls in progress
	failed atomic.Bool    // a write to its WAL or WBL failed
}

// openGuarded opens the TSDB in dir (see guardedDB.open), and registers
// wirehouse_metricstore_accepting and wirehouse_metricstore_reopens_total
// with cfg.Registerer.
func openGuarded(dir string, opts *tsdb.Options, cfg *config) (*guardedDB, error) {
	d := &guardedDB{dir: dir, opts: *opts, log: cfg.Logger, reg: cfg.Registerer, every: cfg.recoverEvery, notify: cfg.WriteNotified, stop: make(chan struct{})}
	g, err := d.open()
	if err != nil {
		return nil, err
	}
	d.cur, d.last = g, g.db
	if d.reg != nil {
		metrics := []prometheus.Collector{
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "wirehouse_metricstore_accepting",
				Help: "1 while the metric store accepts writes; 0 from a failed write-ahead log write (a full disk) until its TSDB is reopened.",
			}, func() float64 {
				if d.accepting() {
					return 1
				}
				return 0
			}),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "wirehouse_metricstore_reopens_total",
				Help: "Reopens of the metric store's TSDB after a write-ahead log write failed.",
			}, func() float64 { return float64(d.reopens.Load()) }),
		}
		if err := d.register(metrics...); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// register registers cs with d's Registerer, if any, for Close to
// unregister.
func (d *guardedDB) register(cs ...prometheus.Collector) error {
	if d.reg == nil {
		return nil
	}
	for _, c := range cs {
		if err := d.reg.Register(c); err != nil {
			return fmt.Errorf("metricstore: register metrics: %w", err)
		}
		d.metrics = append(d.metrics, c)
	}
	return nil
}

// open checks the free space, mends the write logs and opens the TSDB.
// When the free space is short of what the mending plan says Prometheus'
// repair may rewrite, plus openReserve, it returns a *SpaceError having
// changed nothing.
func (d *guardedDB) open() (*generation, error) {
	plan, err := planMend(d.dir)
	if err != nil {
		return nil, fmt.Errorf("metricstore: read the write-ahead log: %w", err)
	}
	if err := checkSpace(d.dir, openReserve+plan.repairBytes()); err != nil {
		return nil, fmt.Errorf("metricstore: %w", err)
	}
	if err := plan.apply(d.log); err != nil {
		return nil, fmt.Errorf("metricstore: mend the write-ahead log: %w", err)
	}
	reg := &tsdbRegisterer{next: d.reg}
	opts := d.opts
	db, err := tsdb.Open(d.dir, d.log, reg, &opts, nil)
	if err != nil {
		reg.unregisterAll()
		return nil, fmt.Errorf("metricstore: open tsdb %s: %w", d.dir, err)
	}
	if d.notify != nil {
		db.SetWriteNotified(d.notify)
	}
	g := &generation{db: db, reg: reg}
	if len(reg.failed) == 0 {
		// Without it no write error would be seen (a Prometheus or
		// client_golang upgrade renamed it, or changed Desc.String).
		g.close()
		return nil, fmt.Errorf("metricstore: open tsdb %s: the WAL registered no %s counter", d.dir, "prometheus_tsdb_wal_writes_failed_total")
	}
	return g, nil
}

// acquire returns the generation open now, in use until users.Done.
func (d *guardedDB) acquire() (*generation, error) {
	d.mu.RLock()
	g, closed := d.cur, d.closed
	if g != nil {
		g.users.Add(1)
	}
	d.mu.RUnlock()
	switch {
	case g != nil:
		return g, nil
	case closed:
		return nil, errClosed
	}
	return nil, errReopening
}

// acquireWriter is acquire for a write: it refuses a failed generation.
func (d *guardedDB) acquireWriter() (*generation, error) {
	g, err := d.acquire()
	if err != nil {
		return nil, err
	}
	if g.failed.Load() {
		g.users.Done()
		return nil, errWriteFailed
	}
	return g, nil
}

// accepting reports whether writes are accepted now.
func (d *guardedDB) accepting() bool {
	d.mu.RLock()
	g := d.cur
	d.mu.RUnlock()
	return g != nil && !g.failed.Load()
}

// settle returns what a write on g that returned err answers: err, or, if
// a write to g's WAL or WBL has failed by now, an error wrapping
// ErrUnavailable (and err), g then failed.
func (d *guardedDB) settle(g *generation, err error) error {
	if !g.failed.Load() && g.reg.failedWrites() == 0 {
		return err
	}
	d.fail(g)
	if err != nil {
		return fmt.Errorf("%w: %w", errWriteFailed, err)
	}
	return errWriteFailed
}

// fail marks g failed and, the first time, starts its recovery.
func (d *guardedDB) fail(g *generation) {
	if !g.failed.CompareAndSwap(false, true) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.cur != g {
		return
	}
	d.log.Error("metricstore: a write-ahead log write failed; metrics are refused (503) until the TSDB is reopened, retried every interval once the file system has room",
		"dir", d.dir, "interval", d.every)
	d.wg.Add(1)
	go d.recover(g)
}

// wait waits for dur and reports whether the store is still open.
func (d *guardedDB) wait(dur time.Duration) bool {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-d.stop:
		return false
	case <-t.C:
		return true
	}
}

// headChunkReserve is the room kept per head series for what closing the
// TSDB writes: the full head chunks Prometheus has not written to disk
// yet (it does once a minute). A chunk of 120 samples takes about 200
// bytes for typical series (1.4 bytes a sample), and 31 bytes of header;
// a series taking fewer than two samples a second has at most one.
const headChunkReserve = 512

// recover replaces the failed generation g with a new one: once the file
// system has room for what closing it writes (openReserve, and
// headChunkReserve a head series: Prometheus panics when it cannot write
// a head chunk), it takes g out of service, waits for its users, closes
// it, and opens the TSDB again until that succeeds, backing off up to a
// minute between failed opens (each reads the whole WAL).
func (d *guardedDB) recover(g *generation) {
	defer d.wg.Done()
	for {
		if !d.wait(d.every) {
			return
		}
		err := checkSpace(d.dir, openReserve+headChunkReserve*g.db.Head().NumSeries())
		if err == nil {
			break
		}
		d.log.Debug("metricstore: waiting for free space to reopen the TSDB", "err", err)
	}
	d.mu.Lock()
	if d.closed || d.cur != g {
		d.mu.Unlock()
		return
	}
	d.cur = nil
	d.mu.Unlock()
	g.users.Wait()
	if err := g.db.Close(); err != nil {
		d.log.Warn("metricstore: closing the TSDB after a write error", "err", err)
	}
	g.reg.unregisterAll()
	for backoff := d.every; ; backoff = min(2*backoff, max(d.every, time.Minute)) {
		select {
		case <-d.stop:
			return
		default:
		}
		ng, err := d.open()
		if err == nil {
			d.mu.Lock()
			if d.closed {
				d.mu.Unlock()
				ng.close()
				return
			}
			if d.opened != nil {
				d.opened(ng.db)
			}
			d.cur, d.last = ng, ng.db
			d.mu.Unlock()
			d.reopens.Add(1)
			d.log.Info("metricstore: reopened the TSDB after a write-ahead log write error; accepting metrics again", "dir", d.dir)
			return
		}
		d.log.Error("metricstore: reopening the TSDB after a write error failed; retrying", "err", err, "in", backoff)
		if !d.wait(backoff) {
			return
		}
	}
}

// close closes the generation's DB and unregisters its metrics.
func (g *generation) close() error {
	err := g.db.Close()
	g.reg.unregisterAll()
	return err
}

// Close stops a recovery under way, waits for the users of the open DB,
// and closes it.
func (d *guardedDB) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	g := d.cur
	d.cur = nil
	d.mu.Unlock()
	close(d.stop)
	d.wg.Wait()
	for _, c := range d.metrics {
		d.reg.Unregister(c)
	}
	if g == nil {
		return nil
	}
	g.users.Wait()
	return g.close()
}

// DB returns the TSDB opened last (closed, while a reopen is under way).
func (d *guardedDB) DB() *tsdb.DB {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.last
}

// Head returns the head of the TSDB opened last. Its index and
// statistics are in memory, so they stay readable after a reopen closes
// it.
func (d *guardedDB) Head() *tsdb.Head { return d.DB().Head() }

// Querier returns a querier of the DB open now, which stays open until
// the querier is closed.
func (d *guardedDB) Querier(mint, maxt int64) (storage.Querier, error) {
	g, err := d.acquire()
	if err != nil {
		return nil, err
	}
	q, err := g.db.Querier(mint, maxt)
	if err != nil {
		g.users.Done()
		return nil, err
	}
	return &heldQuerier{Querier: q, release: g.users.Done}, nil
}

// ChunkQuerier is Querier for chunks.
func (d *guardedDB) ChunkQuerier(mint, maxt int64) (storage.ChunkQuerier, error) {
	g, err := d.acquire()
	if err != nil {
		return nil, err
	}
	q, err := g.db.ChunkQuerier(mint, maxt)
	if err != nil {
		g.users.Done()
		return nil, err
	}
	return &heldChunkQuerier{ChunkQuerier: q, release: g.users.Done}, nil
}

type heldQuerier struct {
	storage.Querier
	release func()
	once    sync.Once
}

func (q *heldQuerier) Close() error {
	err := q.Querier.Close()
	q.once.Do(q.release)
	return err
}

type heldChunkQuerier struct {
	storage.ChunkQuerier
	release func()
	once    sync.Once
}

func (q *heldChunkQuerier) Close() error {
	err := q.ChunkQuerier.Close()
	q.once.Do(q.release)
	return err
}

// ExemplarQuerier returns an exemplar querier whose each Select reads the
// DB open at the time.
func (d *guardedDB) ExemplarQuerier(ctx context.Context) (storage.ExemplarQuerier, error) {
	return guardedExemplars{d, ctx}, nil
}

type guardedExemplars struct {
	d   *guardedDB
	ctx context.Context
}

func (e guardedExemplars) Select(start, end int64, ms ...[]*labels.Matcher) ([]exemplar.QueryResult, error) {
	g, err := e.d.acquire()
	if err != nil {
		return nil, err
	}
	defer g.users.Done()
	q, err := g.db.ExemplarQuerier(e.ctx)
	if err != nil {
		return nil, err
	}
	return q.Select(start, end, ms...)
}

// Delete is tsdb.DB's Delete on the DB open now. It writes tombstones to
// the WAL, so it is refused, and can fail the DB, as a commit.
func (d *guardedDB) Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error {
	g, err := d.acquireWriter()
	if err != nil {
		return err
	}
	defer g.users.Done()
	return d.settle(g, g.db.Delete(ctx, mint, maxt, ms...))
}

// CleanTombstones is tsdb.DB's CleanTombstones on the DB open now.
func (d *guardedDB) CleanTombstones() error {
	g, err := d.acquire()
	if err != nil {
		return err
	}
	defer g.users.Done()
	return g.db.CleanTombstones()
}

// Snapshot is tsdb.DB's Snapshot of the DB open now.
func (d *guardedDB) Snapshot(dir string, withHead bool) error {
	g, err := d.acquire()
	if err != nil {
		return err
	}
	defer g.users.Done()
	return g.db.Snapshot(dir, withHead)
}

// AppenderV2 returns an appender of the DB open now, which stays open
// until the appender is committed or rolled back; its Commit answers as
// settle does. While the DB is failed or reopening, the appender refuses
// every call with an error wrapping ErrUnavailable.
func (d *guardedDB) AppenderV2(ctx context.Context) storage.AppenderV2 {
	g, err := d.acquireWriter()
	if err != nil {
		return refusedAppender{err}
	}
	return d.appender(ctx, g)
}

// appender returns an appender of g, which takes over the caller's use of
// g.
func (d *guardedDB) appender(ctx context.Context, g *generation) *guardedAppender {
	return &guardedAppender{AppenderV2: g.db.AppenderV2(ctx), d: d, g: g}
}

// guardedAppender is an appender of one generation.
type guardedAppender struct {
	storage.AppenderV2
	d    *guardedDB
	g    *generation
	done bool
}

// release ends the appender's use of its generation, once; without a
// Commit or Rollback (a panic), the head appender is left as it is.
func (a *guardedAppender) release() {
	if !a.done {
		a.done = true
		a.g.users.Done()
	}
}

func (a *guardedAppender) AppendExemplars(ref storage.SeriesRef, ls labels.Labels, es []exemplar.Exemplar) (storage.SeriesRef, error) {
	ea, ok := a.AppenderV2.(storage.ExemplarAppenderV2)
	if !ok {
		return 0, fmt.Errorf("metricstore: append exemplars: %T cannot", a.AppenderV2)
	}
	return ea.AppendExemplars(ref, ls, es)
}

// GetRef is the head appender's, for a series' reference by its labels
// (0 when the head has none).
func (a *guardedAppender) GetRef(ls labels.Labels, hash uint64) (storage.SeriesRef, labels.Labels) {
	if g, ok := a.AppenderV2.(storage.GetRef); ok {
		return g.GetRef(ls, hash)
	}
	return 0, ls
}

func (a *guardedAppender) Commit() error {
	defer a.release()
	return a.d.settle(a.g, a.AppenderV2.Commit())
}

// Rollback rolls back; Prometheus' appender then writes the series it
// created to the WAL, which can fail the generation too.
func (a *guardedAppender) Rollback() error {
	defer a.release()
	return a.d.settle(a.g, a.AppenderV2.Rollback())
}

// refusedAppender refuses every call with its error.
type refusedAppender struct{ err error }

func (a refusedAppender) Append(storage.SeriesRef, labels.Labels, int64, int64, float64, *histogram.Histogram, *histogram.FloatHistogram, storage.AppendV2Options) (storage.SeriesRef, error) {
	return 0, a.err
}

func (a refusedAppender) AppendExemplars(storage.SeriesRef, labels.Labels, []exemplar.Exemplar) (storage.SeriesRef, error) {
	return 0, a.err
}

func (a refusedAppender) Commit() error   { return a.err }
func (a refusedAppender) Rollback() error { return nil }

// Failed-writes counters of Prometheus' write logs, by the names their
// registerers give them (wlog.NewSize's prefixes).
var failedWritesDescs = []string{
	`Desc{fqName: "prometheus_tsdb_wal_writes_failed_total",`,
	`Desc{fqName: "prometheus_tsdb_out_of_order_wbl_writes_failed_total",`,
}

// tsdbRegisterer is the Registerer given to tsdb.Open: it registers with
// next (if not nil) and keeps what it registered, for unregisterAll to
// take out before a reopen registers the new DB's metrics, and the
// failed-writes counters of the WAL and WBL. A counter is a Metric that
// collects itself, so the Metric collected at registration reads its
// current value, without a Collect (which the prefix wrapper wlog
// registers through makes a goroutine each time).
type tsdbRegisterer struct {
	next prometheus.Registerer

	mu     sync.Mutex
	all    []prometheus.Collector
	failed []prometheus.Metric
}

func (r *tsdbRegisterer) Register(c prometheus.Collector) error {
	if r.next != nil {
		if err := r.next.Register(c); err != nil {
			return err
		}
	}
	watch := false
	descs := make(chan *prometheus.Desc)
	go func() {
		c.Describe(descs)
		close(descs)
	}()
	for desc := range descs {
		s := desc.String()
		for _, prefix := range failedWritesDescs {
			watch = watch || strings.HasPrefix(s, prefix)
		}
	}
	var counter prometheus.Metric
	if watch {
		ch := make(chan prometheus.Metric, 1) // a counter collects one Metric
		c.Collect(ch)
		counter = <-ch
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, c)
	if counter != nil {
		r.failed = append(r.failed, counter)
	}
	return nil
}

func (r *tsdbRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *tsdbRegisterer) Unregister(c prometheus.Collector) bool {
	if r.next == nil {
		return true
	}
	return r.next.Unregister(c)
}

// unregisterAll unregisters from next everything registered.
func (r *tsdbRegisterer) unregisterAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next != nil {
		for _, c := range r.all {
			r.next.Unregister(c)
		}
	}
	r.all, r.failed = nil, nil
}

// failedWrites returns the sum of the failed-writes counters.
func (r *tsdbRegisterer) failedWrites() float64 {
	r.mu.Lock()
	cs := r.failed
	r.mu.Unlock()
	var n float64
	for _, c := range cs {
		var m dto.Metric
		if err := c.Write(&m); err == nil {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}
