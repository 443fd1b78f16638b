package metricstore

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// samplesByTenant counts the samples the TSDB answers, by tenant.
func samplesByTenant(t *testing.T, s *Store) map[string]int {
	t.Helper()
	q, err := s.db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	out := map[string]int{}
	set := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".+"))
	var it chunkenc.Iterator
	for set.Next() {
		it = set.At().Iterator(it)
		for it.Next() != chunkenc.ValNone {
			out[set.At().Labels().Get(TenantLabel)]++
		}
	}
	return out
}

// TestTenantRetention: tenant a's 1-hour retention removes its samples
// of 3 hours ago, not its recent ones, nor b's or the default tenant's,
// whose retention is the store's; a second pass finds nothing to do.
func TestTenantRetention(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	now := time.Now().Truncate(time.Second)
	ctx := context.Background()
	for _, at := range []time.Time{now.Add(-3 * time.Hour), now} {
		for _, tenant := range []string{"a", "b", ""} {
			if res, err := s.AppendOTLP(ctx, tenant, gaugeSeries(t, 0, 2, at)); err != nil || res.Accepted != 2 {
				t.Fatalf("%q at %v: %+v %v", tenant, at, res, err)
			}
		}
	}
	if got := samplesByTenant(t, s); got["a"] != 4 || got["b"] != 4 || got[""] != 4 {
		t.Fatalf("before: %v", got)
	}
	retention := func(tenant string) time.Duration {
		if tenant == "a" {
			return time.Hour
		}
		return 0
	}
	n, err := s.TenantRetention(ctx, retention, now)
	if err != nil || n != 1 {
		t.Fatalf("retention: %d tenants cut, %v", n, err)
	}
	if got := samplesByTenant(t, s); got["a"] != 2 || got["b"] != 4 || got[""] != 4 {
		t.Fatalf("after: %v, want a's two recent samples and all of b's and the default's", got)
	}
	if n, err := s.TenantRetention(ctx, retention, now); err != nil || n != 0 {
		t.Fatalf("second pass: %d tenants cut, %v", n, err)
	}
	// The default tenant by its own retention.
	if n, err := s.TenantRetention(ctx, func(tenant string) time.Duration {
		if tenant == "" {
			return time.Hour
		}
		return 0
	}, now); err != nil || n != 1 {
		t.Fatalf("default tenant: %d, %v", n, err)
	}
	if got := samplesByTenant(t, s); got["a"] != 2 || got["b"] != 4 || got[""] != 2 {
		t.Fatalf("after the default tenant's: %v", got)
	}
}
