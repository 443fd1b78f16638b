package metricstore

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/otlptranslator"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

// Store is an embedded Prometheus TSDB fed with OTLP metrics. It is safe for
// concurrent use.
type Store struct {
	db         *guardedDB // reopened after a WAL write error (guard.go)
	cfg        config
	promoted   map[string]struct{} // promoted attributes; with PromoteAllResourceAttributes, the ignored ones
	metricName otlptranslator.MetricNamer
	cache      seriesCache
	// tenants says whether any series has TenantLabel (tenant.go).
	tenants tenantState
	// cacheMinT is the head's minimum time when the cache was last
	// checked against it (see syncCache).
	cacheMinT atomic.Int64
	// cacheEpoch counts the moves of the head's minimum time syncCache
	// has seen (the first sample, then head truncations; several between
	// two requests count once).
	cacheEpoch atomic.Uint64
	// ledger holds the last sample of the series requests append to,
	// and serializes commits (ledger.go).
	ledger ledger
	// series counts the head's series by tenant, for Config.SeriesLimit
	// (series.go).
	series seriesCounts
	// refs gives the Generation of remote write appenders (tenant.go).
	refs refGens
	// builds counts series label sets built (cache misses), for tests.
	builds atomic.Int64
	meta   metaSet
	states sync.Pool // *appendState
	// report counts and logs the rejected and duplicate points.
	report *report
	// wrap, if set by a test, wraps every appender.
	wrap func(storage.AppenderV2) storage.AppenderV2
}

// Open opens (creating if needed) the TSDB under cfg.Dir with its
// write-ahead log enabled, replays the WAL and starts background
// compaction. An invalid cfg fails with an error wrapping ErrConfig (see
// Validate). Before it opens the TSDB it zeroes the torn records failed
// writes left in the WAL (see the package documentation, "Write errors");
// when the file system has less free space than opening may need it fails
// with a *SpaceError, having changed nothing on disk.
func Open(cfg Config) (*Store, error) { return openStore(cfg, nil) }

// openStore is Open; set, if not nil, changes the derived config first
// (tests: now, recoverEvery).
func openStore(c Config, set func(*config)) (*Store, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	cfg := newConfig(c)
	if set != nil {
		set(&cfg)
	}
	to := tsdb.DefaultOptions()
	to.RetentionDuration = cfg.Retention.Milliseconds()
	to.MaxBytes = cfg.RetentionSize
	to.OutOfOrderTimeWindow = cfg.OutOfOrderWindow.Milliseconds()
	to.MinBlockDuration = cfg.MinBlockDuration.Milliseconds()
	to.MaxBlockDuration = cfg.MaxBlockDuration.Milliseconds()
	to.WALCompression = cfg.WALCompression
	to.EnableSTAsZeroSample = cfg.StartTimestampZeroSamples
	to.EnableExemplarStorage = cfg.exemplars
	to.MaxExemplars = cfg.MaxExemplars
	db, err := openGuarded(cfg.Dir, to, &cfg)
	if err != nil {
		return nil, err
	}
	s := &Store{
		db:         db,
		cfg:        cfg,
		metricName: otlptranslator.MetricNamer{WithMetricSuffixes: true},
		report:     newReport(cfg.Logger, cfg.now),
	}
	if err := db.register(s.report.collectors()...); err != nil {
		db.Close()
		return nil, err
	}
	db.opened = s.reopened
	if len(cfg.promoted) > 0 || cfg.PromoteAllResourceAttributes {
		s.promoted = make(map[string]struct{}, len(cfg.promoted))
		for _, k := range cfg.promoted {
			s.promoted[k] = struct{}{}
		}
	}
	s.cache.init(cfg.SeriesCacheSize)
	return s, nil
}

// syncCache starts a new cache epoch when the head's minimum time has
// moved since the last request, and returns the current epoch. The minimum
// time moves when the head is truncated (after each head compaction, and at
// the first sample), which is when it drops series with no samples left: a
// cached reference to one would let its next sample create it again without
// the checks a new series gets (see AppendOTLP). So an entry whose
// references were taken in an earlier epoch keeps its labels but not its
// references (appendState.current): its next sample validates the request
// and looks the series up by its labels, which finds the series the head
// kept and creates, checked, the ones it dropped. Building the labels again
// would cost far more (one translation of every attribute per series,
// every two hours at Prometheus' block range). Entries not used for a
// whole epoch are dropped then (seriesCache.sweep), by the request that
// starts the epoch: ~0.2 s at a million cached identities, during which
// other requests go on. A reopen of the TSDB starts an epoch too (see
// reopened). The caller holds the DB open (guardedDB.acquire).
func (s *Store) syncCache() uint64 {
	mt := s.db.Head().MinTime()
	if old := s.cacheMinT.Load(); old != mt && s.cacheMinT.CompareAndSwap(old, mt) {
		epoch := s.cacheEpoch.Add(1)
		s.cache.sweep(epoch - 1)
		s.ledger.sweep(epoch)
		return epoch
	}
	return s.cacheEpoch.Load()
}

// reopened starts a cache epoch for db, the TSDB reopened after a write
// error, before any request uses it: its head holds the series of the
// WAL, under the references the WAL gave them, and none of those whose
// series record a failed write lost, whose references it may give to
// other series. The cached references are then all taken in an earlier
// epoch, and no longer used.
func (s *Store) reopened(db *tsdb.DB) {
	s.cacheMinT.Store(db.Head().MinTime())
	s.cacheEpoch.Add(1)
	s.ledger.clear()
}

// Close stops compaction and closes the TSDB, flushing the WAL. Appends must
// have returned, and queriers been closed, before Close is called.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("metricstore: close tsdb: %w", err)
	}
	return nil
}

// DB returns the underlying TSDB, with every tenant's series (see
// TenantLabel); Queryable, ExemplarQueryable and Appendable give a
// tenant's view of it. After a write-ahead log write error the Store
// closes it and opens a new one (see Accepting): DB is for tests and
// tools; a server uses the Store's methods, which follow the reopen.
func (s *Store) DB() *tsdb.DB { return s.db.DB() }

// Accepting reports whether the Store accepts writes now: false from a
// failed write-ahead log write until the TSDB has been reopened, while
// writes fail with ErrUnavailable.
func (s *Store) Accepting() bool { return s.db.accepting() }

// lookbackDelta is the PromQL lookback delta target_info samples are spaced
// for (Prometheus' default): one every half of it.
const lookbackDelta = 5 * time.Minute

// Message describes the rejected points for an OTLP partial success, by
// reason, each with an example series, e.g. `2 points rejected:
// duplicate_timestamp 1 (e.g. {__name__="temp", job="svc"}), out_of_order 1
// (e.g. {__name__="hits_total", job="svc"})`; empty when none was.
func (r Result) Message() string {
	if r.Rejected == 0 {
		return ""
	}
	reasons := slices.Sorted(maps.Keys(r.Reasons))
	var b strings.Builder
	fmt.Fprintf(&b, "%d points rejected:", r.Rejected)
	for i, k := range reasons {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %d", k, r.Reasons[k])
		if ex := r.Examples[k]; ex != "" {
			fmt.Fprintf(&b, " (e.g. %s)", ex)
		}
	}
	return b.String()
}
