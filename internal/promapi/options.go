package promapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

// Option configures an API; New reports invalid values.
type Option func(*config) error

type config struct {
	timeout    time.Duration
	maxSamples int
	lookback   time.Duration
	logger     *slog.Logger
	now        func() time.Time
	revision   string
	version    string // buildinfo's version; PrometheusVersion when ""
	exemplars  storage.ExemplarQueryable
	metadata   MetadataSource
	head       HeadStatser
	gatherer   prometheus.Gatherer
	admin      AdminDB
	snapDir    string
}

// WithTimeout bounds a query's run time (default 2m, Prometheus'
// --query.timeout); a request's own timeout parameter can only lower it.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("query timeout %v: not positive", d)
		}
		c.timeout = d
		return nil
	}
}

// WithMaxSamples bounds the samples one query may hold in memory (default
// 50,000,000, Prometheus' --query.max-samples).
func WithMaxSamples(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("max samples %d: not positive", n)
		}
		c.maxSamples = n
		return nil
	}
}

// WithLookbackDelta sets how far back an instant selector looks for a
// sample (default 5m).
func WithLookbackDelta(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("lookback delta %v: not positive", d)
		}
		c.lookback = d
		return nil
	}
}

// WithLogger sets where query errors are logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("logger: nil")
		}
		c.logger = l
		return nil
	}
}

// WithExemplars serves /api/v1/query_exemplars from eq; without it the
// endpoint answers an empty list.
func WithExemplars(eq storage.ExemplarQueryable) Option {
	return func(c *config) error {
		if eq == nil {
			return errors.New("exemplar queryable: nil")
		}
		c.exemplars = eq
		return nil
	}
}

// MetadataSource gives metric metadata by metric family name, as the
// request whose context is ctx may see it, with the arguments of
// /api/v1/metadata: only the family metric if it is not empty; at most
// limit families if limit >= 0; at most limitPerMetric entries per family
// if limitPerMetric > 0. The API does not retain the result.
// metricstore.Store is one.
type MetadataSource interface {
	Metadata(ctx context.Context, metric string, limit, limitPerMetric int) map[string][]metadata.Metadata
}

// WithMetadata serves /api/v1/metadata from src; without it the endpoint
// answers an empty object.
func WithMetadata(src MetadataSource) Option {
	return func(c *config) error {
		if src == nil {
			return errors.New("metadata source: nil")
		}
		c.metadata = src
		return nil
	}
}

// HeadStatser gives the cardinality statistics of a TSDB head (those of
// tsdb.Head.Stats), as the request whose context is ctx may see them, and
// the number of head chunks they have, or -1 when the
// prometheus_tsdb_head_chunks gauge gives it. metricstore.Store is one.
type HeadStatser interface {
	HeadStats(ctx context.Context, statsByLabelName string, limit int) (st *tsdb.Stats, chunks int64, err error)
}

// WithTSDBStatus serves /api/v1/status/tsdb, as Prometheus does: head's
// statistics by metric name, and the head chunk count, when head does not
// give it, from the prometheus_tsdb_head_chunks gauge that g gathers.
// Without it the endpoint is not served.
func WithTSDBStatus(head HeadStatser, g prometheus.Gatherer) Option {
	return func(c *config) error {
		if head == nil || g == nil {
			return errors.New("tsdb status: nil head or gatherer")
		}
		c.head, c.gatherer = head, g
		return nil
	}
}

// AdminDB is what the admin endpoints change; *tsdb.DB is one, and
// metricstore.Store, whose Delete deletes from the series of the tenant
// ctx carries.
type AdminDB interface {
	Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error
	CleanTombstones() error
	Snapshot(dir string, withHead bool) error
}

// WithAdmin serves Prometheus' TSDB admin endpoints (what
// --web.enable-admin-api enables in Prometheus) on db: delete_series
// (tombstones), clean_tombstones, and snapshot into a new directory under
// snapDir. Without it they answer Prometheus' error when disabled
// (errorType "unavailable", "admin APIs disabled"), with 503 where
// Prometheus has 500.
func WithAdmin(db AdminDB, snapDir string) Option {
	return func(c *config) error {
		if db == nil || snapDir == "" {
			return errors.New("admin: nil database or empty snapshot directory")
		}
		c.admin, c.snapDir = db, snapDir
		return nil
	}
}

// WithVersion makes buildinfo report version as the server's version,
// with the embedded engine's Prometheus version as prometheusVersion and
// application "wirehouse" (default: PrometheusVersion as version, as a
// Prometheus server reports it).
func WithVersion(version string) Option {
	return func(c *config) error { c.version = version; return nil }
}

// WithRevision sets the revision buildinfo reports.
func WithRevision(rev string) Option {
	return func(c *config) error { c.revision = rev; return nil }
}
