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

// Config configures an API. Start from DefaultConfig; Validate reports
// what New would refuse.
type Config struct {
	// Timeout bounds a query's run time (default 2m, Prometheus'
	// --query.timeout); a request's own timeout parameter can only lower
	// it. It must be positive.
	Timeout time.Duration
	// MaxSamples bounds the samples one query may hold in memory (default
	// 50,000,000, Prometheus' --query.max-samples). It must be positive.
	MaxSamples int
	// LookbackDelta is how far back an instant selector looks for a
	// sample (default 5m). It must be positive.
	LookbackDelta time.Duration

	// Version, if not empty, is reported by buildinfo as the server's
	// version, with the embedded engine's Prometheus version as
	// prometheusVersion and application "wirehouse". The default, "",
	// reports PrometheusVersion as version, as a Prometheus server does.
	Version string
	// Revision is the revision buildinfo reports (default "").
	Revision string

	// Exemplars, if not nil, serves /api/v1/query_exemplars; the default,
	// nil, answers an empty list.
	Exemplars storage.ExemplarQueryable
	// Metadata, if not nil, serves /api/v1/metadata; the default, nil,
	// answers an empty object.
	Metadata MetadataSource
	// Head and Gatherer, set together, serve /api/v1/status/tsdb, as
	// Prometheus does: Head's statistics by metric name, and the head
	// chunk count, when Head does not give it, from the
	// prometheus_tsdb_head_chunks gauge that Gatherer gathers. By default
	// (both nil) the endpoint is not served.
	Head     HeadStatser
	Gatherer prometheus.Gatherer
	// Admin, if not nil, serves Prometheus' TSDB admin endpoints (what
	// --web.enable-admin-api enables in Prometheus) on Admin:
	// delete_series (tombstones), clean_tombstones, and snapshot into a
	// new directory under SnapshotDir, which is set if and only if Admin
	// is. By default (nil) they answer Prometheus' error when disabled
	// (errorType "unavailable", "admin APIs disabled"), with 503 where
	// Prometheus has 500.
	Admin       AdminDB
	SnapshotDir string

	// Rules, if not nil, gives a tenant's rules for /api/v1/rules and
	// /api/v1/alerts (nil for none); Alertmanagers, if not nil, the
	// Alertmanagers /api/v1/alertmanagers lists. By default both lists
	// are empty, as a Prometheus' without rule files or Alertmanagers.
	Rules         func(tenant string) RulesSource
	Alertmanagers AlertmanagerSource

	// Logger is where query errors are logged; nil, the default,
	// discards.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults: Prometheus' query timeout (2m),
// max samples (50,000,000) and lookback delta (5m); Prometheus' version
// in buildinfo; no exemplars, metadata, TSDB status or admin endpoints;
// no logger.
func DefaultConfig() Config {
	return Config{
		Timeout:       2 * time.Minute,
		MaxSamples:    50_000_000,
		LookbackDelta: 5 * time.Minute,
	}
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Timeout <= 0:
		return fmt.Errorf("promapi: Timeout %v, must be positive", c.Timeout)
	case c.MaxSamples <= 0:
		return fmt.Errorf("promapi: MaxSamples %d, must be positive", c.MaxSamples)
	case c.LookbackDelta <= 0:
		return fmt.Errorf("promapi: LookbackDelta %v, must be positive", c.LookbackDelta)
	case c.Head != nil && c.Gatherer == nil:
		return errors.New("promapi: Head set without Gatherer")
	case c.Head == nil && c.Gatherer != nil:
		return errors.New("promapi: Gatherer set without Head")
	case c.Admin != nil && c.SnapshotDir == "":
		return errors.New("promapi: Admin set without SnapshotDir")
	case c.Admin == nil && c.SnapshotDir != "":
		return errors.New("promapi: SnapshotDir set without Admin")
	}
	return nil
}

// config is a valid Config with its nil Logger set, and the clock.
type config struct {
	Config
	now func() time.Time
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

// HeadStatser gives the cardinality statistics of a TSDB head (those of
// tsdb.Head.Stats), as the request whose context is ctx may see them, and
// the number of head chunks they have, or -1 when the
// prometheus_tsdb_head_chunks gauge gives it. metricstore.Store is one.
type HeadStatser interface {
	HeadStats(ctx context.Context, statsByLabelName string, limit int) (st *tsdb.Stats, chunks int64, err error)
}

// AdminDB is what the admin endpoints change; *tsdb.DB is one, and
// metricstore.Store, whose Delete deletes from the series of the tenant
// ctx carries.
type AdminDB interface {
	Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error
	CleanTombstones() error
	Snapshot(dir string, withHead bool) error
}
