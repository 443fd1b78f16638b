package readapi

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/wirehouse/wirehouse/internal/querybudget"
)

// Limits are the bounds every read API obeys, set once by serve from its
// configuration (limits.queries) and handed to each API, so that a cap
// is written in one place and the next API cannot forget it.
type Limits struct {
	// Timeout bounds a query's run (readapi.Admit puts it on the
	// query's context). Default 2 minutes, as Prometheus' and Loki's.
	Timeout time.Duration
	// MaxTraces bounds the traces a trace search returns, whatever its
	// limit (Jaeger's HTTP API and remote storage, Tempo). Default 1000.
	MaxTraces int
	// MaxLines bounds a log query's limit. Default 5000, as Loki's
	// max_entries_limit_per_query.
	MaxLines int
	// MaxSeries bounds the series of a LogQL metric query. Default
	// 10,000.
	MaxSeries int
	// MaxBytesRead bounds the Parquet bytes one query reads. Default 1
	// GiB.
	MaxBytesRead int64
}

// DefaultLimits returns the defaults.
func DefaultLimits() Limits {
	return Limits{Timeout: 2 * time.Minute, MaxTraces: 1000, MaxLines: 5000, MaxSeries: 10_000, MaxBytesRead: 1 << 30}
}

// Validate reports the first limit that is not positive.
func (l Limits) Validate() error {
	switch {
	case l.Timeout <= 0:
		return fmt.Errorf("readapi: Timeout %v, must be positive", l.Timeout)
	case l.MaxTraces <= 0 || l.MaxLines <= 0 || l.MaxSeries <= 0 || l.MaxBytesRead <= 0:
		return fmt.Errorf("readapi: MaxTraces %d, MaxLines %d, MaxSeries %d and MaxBytesRead %d must be positive", l.MaxTraces, l.MaxLines, l.MaxSeries, l.MaxBytesRead)
	}
	return nil
}

// CheckRange refuses, as a bad request, a query over start to end longer
// than its tenant's maximum range (the query's ticket's,
// querybudget.TenantLimits.MaxRange), with Loki's wording for
// max_query_length. Without a ticket or a bound it accepts any range.
func CheckRange(ctx context.Context, start, end time.Time) error {
	limit := querybudget.FromContext(ctx).MaxRange()
	if limit <= 0 || end.Sub(start) <= limit {
		return nil
	}
	return Errorf(KindBadRequest, "the query time range exceeds the limit (query length: %s, limit: %s)",
		model.Duration(end.Sub(start)), model.Duration(limit))
}
