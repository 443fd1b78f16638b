package metricstore

import (
	"errors"
	"fmt"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/util/compression"
)

// ErrConfig is wrapped by every error Validate, and so Open, returns.
var ErrConfig = errors.New("invalid metricstore config")

// Config configures a Store. Start from DefaultConfig and set Dir;
// Validate reports what Open would refuse.
type Config struct {
	// Dir is the TSDB's directory, created if needed. It must be set.
	Dir string

	// Retention is how long samples are kept; 0 keeps them until the
	// size limit applies. The default is 15 days, as in Prometheus.
	Retention time.Duration
	// RetentionSize caps the bytes of persisted blocks (plus WAL and head
	// chunks); 0, the default, sets no cap.
	RetentionSize int64
	// OutOfOrderWindow accepts samples up to this much older than the
	// newest sample of the head. The default, 0, rejects every
	// out-of-order sample.
	OutOfOrderWindow time.Duration

	// MinBlockDuration and MaxBlockDuration bound the duration of TSDB
	// blocks, in whole milliseconds. MinBlockDuration must be at least a
	// minute and MaxBlockDuration at least MinBlockDuration;
	// MaxBlockDuration 0 derives it from the retention as Prometheus does
	// (10%, at most 31 days). The default is 2h and derived.
	MinBlockDuration, MaxBlockDuration time.Duration
	// WALCompression is the compression of WAL records: "snappy" (the
	// default, as in Prometheus), "zstd" or "none".
	WALCompression compression.Type

	// PromotedResourceAttributes are the resource attributes copied onto
	// every series of the resource as labels (names sanitized), as
	// Prometheus' otlp.promote_resource_attributes does. A data point
	// attribute of the same label name wins. Names are trimmed of spaces;
	// an empty or repeated name is an error, as in Prometheus'
	// configuration. The default promotes none.
	PromotedResourceAttributes []string
	// PromoteAllResourceAttributes copies every resource attribute except
	// those named in IgnoredResourceAttributes onto every series of the
	// resource as labels, as Prometheus' otlp.promote_all_resource_attributes
	// with ignore_resource_attributes does. It excludes
	// PromotedResourceAttributes; IgnoredResourceAttributes needs it.
	// Ignored names are trimmed and checked as promoted ones are.
	PromoteAllResourceAttributes bool
	IgnoredResourceAttributes    []string

	// MaxTimeAhead is how far past the current time a sample or exemplar
	// may be: later samples are refused (ReasonTooFarAhead), later
	// exemplars dropped. The default is Prometheus' 10 minutes; 0 accepts
	// any time.
	MaxTimeAhead time.Duration
	// MaxExemplars is how many exemplars the TSDB keeps, in one circular
	// buffer over all series, as Prometheus' exemplar-storage feature with
	// --storage.tsdb.max-exemplars does; exemplars are written to the WAL
	// with their samples. The default, 0, stores none, as Prometheus does
	// without the feature: reading and storing them costs about 10% of
	// ingest throughput on the Kubernetes set, where 1 point in 20
	// carries one.
	MaxExemplars int64
	// ScopeLabels sets whether the instrumentation scope becomes the
	// labels otel_scope_name, otel_scope_version, otel_scope_schema_url
	// and otel_scope_<attribute> (Prometheus' otlp.promote_scope_metadata).
	// The default is true. Scopes with an empty name add no labels.
	ScopeLabels bool
	// StartTimestampZeroSamples sets whether a point's start timestamp is
	// stored as a zero sample before it (Prometheus' created-timestamp
	// zero ingestion, tsdb.Options.EnableSTAsZeroSample). The default,
	// false, ignores start timestamps.
	StartTimestampZeroSamples bool
	// RefuseDelta refuses every point of a sum, histogram or exponential
	// histogram with delta temporality (ReasonTemporality), as Prometheus'
	// OTLP endpoint does without its delta support. The default, false,
	// stores them as cumulative series, as the Collector's
	// deltatocumulative processor makes them (see the package
	// documentation, "Delta temporality").
	RefuseDelta bool
	// DeltaMaxStale is how long, in the points' own time, a delta series
	// is continued after its last stored point: a delta point later than
	// that starts its cumulative series again from its own value, as the
	// deltatocumulative processor's max_stale drops a stream's state. The
	// default is the processor's 5 minutes; it must be positive unless
	// RefuseDelta.
	DeltaMaxStale time.Duration
	// LabelLimit rejects the data points whose series would have more
	// than this many labels, __name__ included (as Prometheus' scrape
	// label_limit, applied per series; Prometheus' OTLP receiver has no
	// limit). 0 sets no limit; the default is 128, which a 1,000-label
	// series meets as a clear per-point refusal rather than an index
	// entry.
	LabelLimit int
	// SeriesLimit, if set, gives the most series a tenant ("" the
	// default) may have in the head (0: no limit): past it a point that
	// would create a series is refused (ReasonSeriesLimit), as Mimir's
	// max_global_series_per_user; a sample of Appendable's appenders
	// (remote write, the rules' results) that would is refused with a
	// SeriesLimitError. Called once per request or appender.
	SeriesLimit func(tenant string) int
	// SeriesCacheSize bounds the entries of the series reference cache;
	// when it is full it is emptied. The default is 1<<20 entries; it must
	// be positive.
	SeriesCacheSize int

	// WriteNotified, if set, is told after each write to the TSDB's
	// write-ahead log (tsdb.DB.SetWriteNotified), as Prometheus tells its
	// remote storage, whose queue managers read the WAL in Dir/wal.
	WriteNotified wlog.WriteNotified

	// Registerer, if not nil, gets the TSDB's own metrics
	// (prometheus_tsdb_*: head series, samples appended, WAL,
	// compactions), again after each reopen (see ErrUnavailable), and the
	// Store's: wirehouse_metricstore_accepting (1, or 0 while writes are
	// refused after a write-ahead log write failed),
	// wirehouse_metricstore_reopens_total,
	// wirehouse_metricstore_rejected_points_total{reason} (the points
	// AppendOTLP rejected, by Reason constant) and
	// wirehouse_metricstore_duplicate_points_total (the points it
	// accepted without storing them again, see Result.Duplicates). The
	// default is none.
	Registerer prometheus.Registerer
	// Logger is the logger of the TSDB and of the Store, which warns of
	// rejected points at most once per reason every 10 s, with an example
	// series and the points rejected since its last line. The default,
	// nil, discards.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults, without a Dir: those of Prometheus
// (15 days' retention, 2h blocks, snappy WAL compression, 10 minutes
// ahead at most, no exemplars, no promoted resource attributes) but scope
// labels on and a 128-label limit; a series cache of 1<<20 entries.
func DefaultConfig() Config {
	return Config{
		Retention:        15 * 24 * time.Hour,
		MinBlockDuration: 2 * time.Hour,
		WALCompression:   compression.Snappy,
		ScopeLabels:      true,
		LabelLimit:       128,
		SeriesCacheSize:  1 << 20,
		MaxTimeAhead:     10 * time.Minute,
		DeltaMaxStale:    5 * time.Minute,
	}
}

// Validate reports the first field of c that Open would refuse, in an
// error wrapping ErrConfig.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return fmt.Errorf("%w: Dir not set", ErrConfig)
	case c.Retention < 0:
		return fmt.Errorf("%w: Retention %v is negative", ErrConfig, c.Retention)
	case c.RetentionSize < 0:
		return fmt.Errorf("%w: RetentionSize %d is negative", ErrConfig, c.RetentionSize)
	case c.OutOfOrderWindow < 0:
		return fmt.Errorf("%w: OutOfOrderWindow %v is negative", ErrConfig, c.OutOfOrderWindow)
	case c.MinBlockDuration < time.Minute:
		return fmt.Errorf("%w: MinBlockDuration %v below 1m", ErrConfig, c.MinBlockDuration)
	case c.MaxBlockDuration != 0 && c.MaxBlockDuration < c.MinBlockDuration:
		return fmt.Errorf("%w: MaxBlockDuration %v below MinBlockDuration %v", ErrConfig, c.MaxBlockDuration, c.MinBlockDuration)
	case c.MinBlockDuration%time.Millisecond != 0 || c.MaxBlockDuration%time.Millisecond != 0:
		return fmt.Errorf("%w: MinBlockDuration and MaxBlockDuration must be whole milliseconds", ErrConfig)
	case c.WALCompression != compression.Snappy && c.WALCompression != compression.Zstd && c.WALCompression != compression.None:
		return fmt.Errorf("%w: unknown WALCompression %q", ErrConfig, c.WALCompression)
	case c.PromoteAllResourceAttributes && len(c.PromotedResourceAttributes) > 0:
		return fmt.Errorf("%w: PromoteAllResourceAttributes excludes PromotedResourceAttributes (use IgnoredResourceAttributes)", ErrConfig)
	case !c.PromoteAllResourceAttributes && len(c.IgnoredResourceAttributes) > 0:
		return fmt.Errorf("%w: IgnoredResourceAttributes needs PromoteAllResourceAttributes", ErrConfig)
	case c.MaxTimeAhead < 0:
		return fmt.Errorf("%w: MaxTimeAhead %v is negative", ErrConfig, c.MaxTimeAhead)
	case c.MaxExemplars < 0:
		return fmt.Errorf("%w: MaxExemplars %d is negative", ErrConfig, c.MaxExemplars)
	case c.LabelLimit < 0:
		return fmt.Errorf("%w: LabelLimit %d is negative", ErrConfig, c.LabelLimit)
	case !c.RefuseDelta && c.DeltaMaxStale <= 0:
		return fmt.Errorf("%w: DeltaMaxStale %v not positive", ErrConfig, c.DeltaMaxStale)
	case c.SeriesCacheSize <= 0:
		return fmt.Errorf("%w: SeriesCacheSize %d not positive", ErrConfig, c.SeriesCacheSize)
	}
	if _, err := attributeList(c.PromotedResourceAttributes, "PromotedResourceAttributes"); err != nil {
		return err
	}
	_, err := attributeList(c.IgnoredResourceAttributes, "IgnoredResourceAttributes")
	return err
}

// config is a valid Config with what Open derives from it, and settings
// only tests change.
type config struct {
	Config
	// promoted holds the trimmed names of PromotedResourceAttributes, or
	// with PromoteAllResourceAttributes those of IgnoredResourceAttributes.
	promoted     []string
	exemplars    bool             // MaxExemplars > 0
	now          func() time.Time // the current time, for MaxTimeAhead
	recoverEvery time.Duration    // after a WAL write error, how often to retry reopening
}

// newConfig derives the config of a valid c: the trimmed attribute names,
// the maximum block duration if 0 and the logger if nil.
func newConfig(c Config) config {
	if c.MaxBlockDuration == 0 {
		// As Prometheus does: 10% of the retention, at most 31 days, at
		// least the minimum block duration.
		c.MaxBlockDuration = min(c.Retention/10, 31*24*time.Hour)
		if c.Retention == 0 {
			c.MaxBlockDuration = 31 * 24 * time.Hour
		}
		c.MaxBlockDuration = max(c.MaxBlockDuration, c.MinBlockDuration)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	names := c.PromotedResourceAttributes
	if c.PromoteAllResourceAttributes {
		names = c.IgnoredResourceAttributes
	}
	promoted, _ := attributeList(names, "") // checked by Validate
	return config{
		Config:       c,
		promoted:     promoted,
		exemplars:    c.MaxExemplars > 0,
		now:          time.Now,
		recoverEvery: time.Second,
	}
}

// attributeList trims the names in keys and refuses empty and repeated
// ones; field names the Config field, for errors.
func attributeList(keys []string, field string) ([]string, error) {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, fmt.Errorf("%w: empty name in %s", ErrConfig, field)
		}
		if slices.Contains(out, k) {
			return nil, fmt.Errorf("%w: %s names %q twice", ErrConfig, field, k)
		}
		out = append(out, k)
	}
	return out, nil
}
