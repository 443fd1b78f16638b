package metricstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// TenantRetention removes, for each tenant that retentionOf gives a
// retention of its own (> 0; "" is the default tenant), the samples of
// its series older than that: tombstones over them, then the blocks that
// hold tombstones rewritten without them (tsdb.DB.CleanTombstones), so
// that they leave the disk, not only the answers. A tenant without
// samples older than its retention costs a query and nothing else. A
// retention longer than Config.Retention keeps nothing more: the TSDB
// drops whole blocks past that. It returns the tenants cut.
func (s *Store) TenantRetention(ctx context.Context, retentionOf func(tenant string) time.Duration, now time.Time) (int, error) {
	tenants, err := s.tenantNames(ctx)
	if err != nil {
		return 0, fmt.Errorf("metricstore: tenant retention: %w", err)
	}
	cut := 0
	for _, t := range tenants {
		d := retentionOf(t)
		if d <= 0 {
			continue
		}
		before := now.Add(-d).UnixMilli()
		m := labels.MustNewMatcher(labels.MatchEqual, TenantLabel, t) // "" matches the default tenant's: no TenantLabel
		old, err := s.hasSamplesBefore(ctx, before, m)
		if err != nil {
			return cut, fmt.Errorf("metricstore: tenant retention of %q: %w", t, err)
		}
		if !old {
			continue
		}
		if err := s.db.Delete(ctx, math.MinInt64, before, m); err != nil {
			return cut, fmt.Errorf("metricstore: tenant retention of %q: %w", t, err)
		}
		cut++
	}
	if cut > 0 {
		if err := s.db.CleanTombstones(); err != nil {
			return cut, fmt.Errorf("metricstore: tenant retention: clean tombstones: %w", err)
		}
	}
	return cut, nil
}

// tenantNames lists the tenants the TSDB holds series of, "" (the
// default) first.
func (s *Store) tenantNames(ctx context.Context) ([]string, error) {
	q, err := s.db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	vals, _, err := q.LabelValues(ctx, TenantLabel, nil)
	if err != nil {
		return nil, err
	}
	return append([]string{""}, vals...), nil
}

// hasSamplesBefore reports whether a series m selects has a sample at or
// before t that no tombstone hides.
func (s *Store) hasSamplesBefore(ctx context.Context, t int64, m *labels.Matcher) (bool, error) {
	q, err := s.db.Querier(math.MinInt64, t)
	if err != nil {
		return false, err
	}
	defer q.Close()
	set := q.Select(ctx, false, nil, m)
	var it chunkenc.Iterator
	for set.Next() {
		it = set.At().Iterator(it)
		if typ := it.Next(); typ != chunkenc.ValNone && it.AtT() <= t {
			return true, nil
		}
		if err := it.Err(); err != nil {
			return false, err
		}
	}
	return false, set.Err()
}
