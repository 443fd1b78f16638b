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
	db         *tsdb.DB
	cfg        config
	promoted   map[string]struct{} // promoted attributes; with cfg.promoteAll, the ignored ones
	metricName otlptranslator.MetricNamer
	cache      seriesCache
	// cacheMinT is the head's minimum time when the cache was last
	// checked against it (see syncCache).
	cacheMinT atomic.Int64
	// cacheEpoch counts the moves of the head's minimum time syncCache
	// has seen (the first sample, then head truncations; several between
	// two requests count once).
	cacheEpoch atomic.Uint64
	// builds counts series label sets built (cache misses), for tests.
	builds atomic.Int64
	meta   metaSet
	states sync.Pool // *appendState
	// wrap, if set by a test, wraps every appender.
	wrap func(storage.AppenderV2) storage.AppenderV2
}

// Open opens (creating if needed) the TSDB under dir with its write-ahead
// log enabled, replays the WAL and starts background compaction. Invalid
// options fail with an error wrapping ErrOption.
func Open(dir string, opts ...Option) (*Store, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	to := tsdb.DefaultOptions()
	to.RetentionDuration = cfg.retention.Milliseconds()
	to.MaxBytes = cfg.retentionBytes
	to.OutOfOrderTimeWindow = cfg.oooWindow.Milliseconds()
	to.MinBlockDuration = cfg.minBlock.Milliseconds()
	to.MaxBlockDuration = cfg.maxBlock.Milliseconds()
	to.WALCompression = cfg.walCompression
	to.EnableSTAsZeroSample = cfg.startTimestamps
	cfg.exemplars = cfg.maxExemplars > 0
	to.EnableExemplarStorage = cfg.exemplars
	to.MaxExemplars = cfg.maxExemplars
	db, err := tsdb.Open(dir, cfg.logger, cfg.reg, to, nil)
	if err != nil {
		return nil, fmt.Errorf("metricstore: open tsdb %s: %w", dir, err)
	}
	s := &Store{
		db:         db,
		cfg:        cfg,
		metricName: otlptranslator.MetricNamer{WithMetricSuffixes: true},
	}
	if len(cfg.promoted) > 0 || cfg.promoteAll {
		s.promoted = make(map[string]struct{}, len(cfg.promoted))
		for _, k := range cfg.promoted {
			s.promoted[k] = struct{}{}
		}
	}
	s.cache.init(cfg.seriesCacheSize)
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
// other requests go on.
func (s *Store) syncCache() uint64 {
	mt := s.db.Head().MinTime()
	if old := s.cacheMinT.Load(); old != mt && s.cacheMinT.CompareAndSwap(old, mt) {
		epoch := s.cacheEpoch.Add(1)
		s.cache.sweep(epoch - 1)
		return epoch
	}
	return s.cacheEpoch.Load()
}

// Close stops compaction and closes the TSDB, flushing the WAL. Appends must
// have returned before Close is called.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("metricstore: close tsdb: %w", err)
	}
	return nil
}

// Queryable returns the TSDB as a storage.Queryable for PromQL and the
// query API.
func (s *Store) Queryable() storage.Queryable { return s.db }

// DB returns the underlying TSDB.
func (s *Store) DB() *tsdb.DB { return s.db }

// ExemplarQueryable returns the stored exemplars for querying, or nil when
// the Store keeps none (WithMaxExemplars(0)).
func (s *Store) ExemplarQueryable() storage.ExemplarQueryable {
	if !s.cfg.exemplars {
		return nil
	}
	return s.db
}

// lookbackDelta is the PromQL lookback delta target_info samples are spaced
// for (Prometheus' default): one every half of it.
const lookbackDelta = 5 * time.Minute

// Message describes the rejected points for an OTLP partial success, e.g.
// "12 points rejected: out_of_order 10, duplicate 2"; empty when none was.
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
	}
	return b.String()
}
