package metricstore

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/util/compression"
)

// ErrOption is wrapped by every error Open returns for an invalid option.
var ErrOption = errors.New("invalid metricstore option")

// Option configures a Store. Options are applied in order by Open, which
// returns the first error.
type Option func(*config) error

// config holds every setting; defaultConfig sets the defaults and Validate
// checks the combination.
type config struct {
	retention       time.Duration
	retentionBytes  int64
	oooWindow       time.Duration
	minBlock        time.Duration
	maxBlock        time.Duration // 0: derived from retention
	walCompression  compression.Type
	promoted        []string // with promoteAll, the attributes not promoted
	promoteAll      bool
	scopeLabels     bool
	startTimestamps bool
	labelLimit      int
	seriesCacheSize int
	maxExemplars    int64
	exemplars       bool // maxExemplars > 0
	maxAhead        time.Duration
	now             func() time.Time
	logger          *slog.Logger
	reg             prometheus.Registerer
	recoverEvery    time.Duration // after a WAL write error, how often to retry reopening
}

func defaultConfig() config {
	return config{
		retention:       15 * 24 * time.Hour,
		minBlock:        2 * time.Hour,
		walCompression:  compression.Snappy,
		scopeLabels:     true,
		labelLimit:      128,
		seriesCacheSize: 1 << 20,
		maxAhead:        10 * time.Minute,
		now:             time.Now,
		logger:          slog.New(slog.DiscardHandler),
		recoverEvery:    time.Second,
	}
}

// Validate checks the combination of settings and fills in derived
// defaults.
func (c *config) Validate() error {
	if c.maxBlock == 0 {
		// As Prometheus does: 10% of the retention, at most 31 days, at
		// least the minimum block duration.
		c.maxBlock = min(c.retention/10, 31*24*time.Hour)
		if c.retention == 0 {
			c.maxBlock = 31 * 24 * time.Hour
		}
		c.maxBlock = max(c.maxBlock, c.minBlock)
	}
	if c.maxBlock < c.minBlock {
		return fmt.Errorf("%w: max block duration %v below min block duration %v", ErrOption, c.maxBlock, c.minBlock)
	}
	return nil
}

// WithRetention sets how long samples are kept; 0 keeps them until the
// size limit applies. The default is 15 days, as in Prometheus.
func WithRetention(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: negative retention %v", ErrOption, d)
		}
		c.retention = d
		return nil
	}
}

// WithRetentionSize caps the bytes of persisted blocks (plus WAL and head
// chunks); 0, the default, sets no cap.
func WithRetentionSize(bytes int64) Option {
	return func(c *config) error {
		if bytes < 0 {
			return fmt.Errorf("%w: negative retention size %d", ErrOption, bytes)
		}
		c.retentionBytes = bytes
		return nil
	}
}

// WithOutOfOrderWindow accepts samples up to d older than the newest sample
// of the head. The default, 0, rejects every out-of-order sample.
func WithOutOfOrderWindow(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: negative out-of-order window %v", ErrOption, d)
		}
		c.oooWindow = d
		return nil
	}
}

// WithBlockDuration sets the minimum and maximum duration of TSDB blocks.
// min must be at least a minute and max at least min; max 0 derives it from
// the retention as Prometheus does (10%, at most 31 days). The default is
// 2h and derived.
func WithBlockDuration(min, max time.Duration) Option {
	return func(c *config) error {
		if min < time.Minute {
			return fmt.Errorf("%w: min block duration %v below 1m", ErrOption, min)
		}
		if max != 0 && max < min {
			return fmt.Errorf("%w: max block duration %v below min block duration %v", ErrOption, max, min)
		}
		if min%time.Millisecond != 0 || max%time.Millisecond != 0 {
			return fmt.Errorf("%w: block durations must be whole milliseconds", ErrOption)
		}
		c.minBlock, c.maxBlock = min, max
		return nil
	}
}

// WithWALCompression sets the compression of WAL records: "snappy" (the
// default, as in Prometheus), "zstd" or "none".
func WithWALCompression(t compression.Type) Option {
	return func(c *config) error {
		switch t {
		case compression.Snappy, compression.Zstd, compression.None:
			c.walCompression = t
			return nil
		}
		return fmt.Errorf("%w: unknown WAL compression %q", ErrOption, t)
	}
}

// WithPromotedResourceAttributes copies the named resource attributes onto
// every series of the resource as labels (names sanitized), as Prometheus'
// otlp.promote_resource_attributes does. A data point attribute of the same
// label name wins. Names are trimmed of spaces; an empty or repeated name
// is an error, as in Prometheus' configuration. The default promotes none.
func WithPromotedResourceAttributes(keys ...string) Option {
	return func(c *config) error {
		ks, err := attributeList(keys, "promoted")
		if err != nil {
			return err
		}
		c.promoted = ks
		c.promoteAll = false
		return nil
	}
}

// attributeList trims the names in keys and refuses empty and repeated
// ones; what says which list it is, for errors.
func attributeList(keys []string, what string) ([]string, error) {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, fmt.Errorf("%w: empty %s resource attribute", ErrOption, what)
		}
		if slices.Contains(out, k) {
			return nil, fmt.Errorf("%w: %s resource attribute %q given twice", ErrOption, what, k)
		}
		out = append(out, k)
	}
	return out, nil
}

// WithPromoteAllResourceAttributes copies every resource attribute except
// those named in ignore onto every series of the resource as labels, as
// Prometheus' otlp.promote_all_resource_attributes with
// ignore_resource_attributes does. It replaces
// WithPromotedResourceAttributes.
func WithPromoteAllResourceAttributes(ignore ...string) Option {
	return func(c *config) error {
		ks, err := attributeList(ignore, "ignored")
		if err != nil {
			return err
		}
		c.promoteAll = true
		c.promoted = ks
		return nil
	}
}

// WithMaxTimeAhead sets how far past the current time a sample or
// exemplar may be: later samples are refused (ReasonTooFarAhead), later
// exemplars dropped. The default is Prometheus' 10 minutes; 0 accepts any
// time.
func WithMaxTimeAhead(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("%w: max time ahead %v is negative", ErrOption, d)
		}
		c.maxAhead = d
		return nil
	}
}

// WithMaxExemplars sets how many exemplars the TSDB keeps, in one
// circular buffer over all series, as Prometheus' exemplar-storage feature
// with --storage.tsdb.max-exemplars does; exemplars are written to the WAL
// with their samples. The default, 0, stores none, as Prometheus does
// without the feature: reading and storing them costs about 10% of ingest
// throughput on the Kubernetes set, where 1 point in 20 carries one.
func WithMaxExemplars(n int64) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: max exemplars %d is negative", ErrOption, n)
		}
		c.maxExemplars = n
		return nil
	}
}

// WithScopeLabels sets whether the instrumentation scope becomes the labels
// otel_scope_name, otel_scope_version, otel_scope_schema_url and
// otel_scope_<attribute> (Prometheus' otlp.promote_scope_metadata). The
// default is true. Scopes with an empty name add no labels.
func WithScopeLabels(on bool) Option {
	return func(c *config) error {
		c.scopeLabels = on
		return nil
	}
}

// WithStartTimestampZeroSamples sets whether a point's start timestamp is
// stored as a zero sample before it (Prometheus' created-timestamp zero
// ingestion, tsdb.Options.EnableSTAsZeroSample). The default, false,
// ignores start timestamps.
func WithStartTimestampZeroSamples(on bool) Option {
	return func(c *config) error {
		c.startTimestamps = on
		return nil
	}
}

// WithLabelLimit rejects the data points whose series would have more than
// n labels, __name__ included (as Prometheus' scrape label_limit, applied
// per series; Prometheus' OTLP receiver has no limit). 0 sets no limit; the
// default is 128, which a 1,000-label series meets as a clear per-point
// refusal rather than an index entry.
func WithLabelLimit(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("%w: negative label limit %d", ErrOption, n)
		}
		c.labelLimit = n
		return nil
	}
}

// WithSeriesCacheSize bounds the entries of the series reference cache; when
// it is full it is emptied. The default is 1<<20 entries; n must be positive.
func WithSeriesCacheSize(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("%w: series cache size %d not positive", ErrOption, n)
		}
		c.seriesCacheSize = n
		return nil
	}
}

// WithRegisterer registers the TSDB's own metrics (prometheus_tsdb_*:
// head series, samples appended, WAL, compactions) with reg, again after
// each reopen (see ErrUnavailable), and the Store's:
// wirehouse_metricstore_accepting (1, or 0 while writes are refused after
// a write-ahead log write failed) and wirehouse_metricstore_reopens_total.
// Default none.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(c *config) error {
		if reg == nil {
			return fmt.Errorf("%w: nil registerer", ErrOption)
		}
		c.reg = reg
		return nil
	}
}

// WithLogger sets the logger of the TSDB. The default discards.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrOption)
		}
		c.logger = l
		return nil
	}
}
