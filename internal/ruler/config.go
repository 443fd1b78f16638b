package ruler

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"

	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// TenantLabel is the label an alert of a tenant other than the default
// one carries in its notifications, valued with the tenant.
const TenantLabel = "tenant"

// Files are a tenant's rule files, as globs (filepath.Match's syntax).
type Files struct {
	// PromQL are files in Prometheus' rule format.
	PromQL []string
	// LogQL are files in Loki's ruler format: Prometheus' rule format,
	// each expr a LogQL metric query.
	LogQL []string
}

// Config configures a Ruler. Start from DefaultConfig; New calls Validate.
type Config struct {
	// Tenants maps each tenant ("" is the default one) to its files.
	Tenants map[string]Files
	// Interval is the evaluation interval of groups that set none
	// (Prometheus' global evaluation_interval; default 1m).
	Interval time.Duration
	// WatchEvery is how often the files are looked at for a change
	// (default 5s; a change reloads them all).
	WatchEvery time.Duration
	// OutageTolerance, ForGracePeriod and ResendDelay are Prometheus'
	// --rules.alert.* flags (defaults 1h, 10m, 1m).
	OutageTolerance, ForGracePeriod, ResendDelay time.Duration

	// Alerting holds the Alertmanagers alerts go to and their relabeling
	// (its AlertingConfig and GlobalConfig.ExternalLabels); nil sends
	// none.
	Alerting *promconfig.Config
	// ExternalURL prefixes alerts' generator URLs (the web UI's address).
	ExternalURL string

	// Queryable and Appendable are the metric store, read and written for
	// the tenant of the context (metricstore.Store's Queryable and
	// Appendable). Engine runs PromQL. All three must be set.
	Queryable  storage.Queryable
	Appendable storage.AppendableV2
	Engine     *promql.Engine
	// Logs runs LogQL; nil refuses LogQL files. DefaultLakeTenant is the
	// default tenant's name in the lake (its tenant= partition), which
	// its LogQL rules read.
	Logs              *eval.Engine
	DefaultLakeTenant string
	// Gate is the query budget every evaluation is admitted into; nil
	// admits all.
	Gate *querybudget.Gate

	Registerer prometheus.Registerer // nil: a registry of its own
	Logger     *slog.Logger          // nil: discards
}

// DefaultConfig returns Prometheus' defaults: rules evaluated every
// minute, alerts resent every minute, a 1h outage tolerance and a 10m
// grace period for `for` after a restart; files looked at every 5s.
func DefaultConfig() Config {
	return Config{
		Interval:        time.Minute,
		WatchEvery:      5 * time.Second,
		OutageTolerance: time.Hour,
		ForGracePeriod:  10 * time.Minute,
		ResendDelay:     time.Minute,
	}
}

// Validate reports the first setting New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Interval <= 0:
		return errors.New("ruler: the evaluation interval must be positive")
	case c.WatchEvery <= 0:
		return errors.New("ruler: the watch interval must be positive")
	case c.OutageTolerance <= 0 || c.ForGracePeriod < 0 || c.ResendDelay <= 0:
		return errors.New("ruler: the outage tolerance and resend delay must be positive, the grace period not negative")
	case c.Queryable == nil || c.Appendable == nil || c.Engine == nil:
		return errors.New("ruler: the metric store and the PromQL engine must be set")
	}
	for t, f := range c.Tenants {
		if t != "" && !tenant.Valid(t) {
			return fmt.Errorf("ruler: tenant %q: not a valid tenant name", t)
		}
		if len(f.LogQL) > 0 && c.Logs == nil {
			return fmt.Errorf("ruler: tenant %q: LogQL rule files, but no LogQL engine (is the lake off?)", t)
		}
		for _, g := range append(append([]string(nil), f.PromQL...), f.LogQL...) {
			if _, err := filepath.Match(g, ""); err != nil {
				return fmt.Errorf("ruler: tenant %q: rule files %q: %w", t, g, err)
			}
		}
	}
	return nil
}
