package metricstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// gaugeSeries is a request of one point of each of n series of gauge g,
// from series first on, at at.
func gaugeSeries(t testing.TB, first, n int, at time.Time) []byte {
	md, m := svcMetric("g")
	g := m.SetEmptyGauge()
	for i := first; i < first+n; i++ {
		p := g.DataPoints().AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetDoubleValue(float64(i))
		p.Attributes().PutStr("i", fmt.Sprint(i))
	}
	return marshal(t, md)
}

// TestSeriesLimit: tenant a may hold 5 series in the head: a request of
// 6 new gauge series (no target_info: the resource has no attribute but
// service.name) stores 5 and refuses 1 as ReasonSeriesLimit; later points of the series it has
// are stored, new ones refused, after a reopen too; tenant b and the
// default tenant are not limited.
func TestSeriesLimit(t *testing.T) {
	dir := t.TempDir()
	set := func(c *Config) {
		c.SeriesLimit = func(tenant string) int {
			if tenant == "a" {
				return 5
			}
			return 0
		}
	}
	s := open(t, dir, set)
	ctx := context.Background()
	res, err := s.AppendOTLP(ctx, "a", gaugeSeries(t, 0, 6, t0))
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 5 || res.Reasons[ReasonSeriesLimit] != 1 {
		t.Fatalf("first request: %+v", res)
	}
	// The same series later: stored; one more: refused.
	if res, _ = s.AppendOTLP(ctx, "a", gaugeSeries(t, 0, 5, t0.Add(time.Second))); res.Accepted != 5 || res.Rejected != 0 {
		t.Fatalf("known series: %+v", res)
	}
	if res, _ = s.AppendOTLP(ctx, "a", gaugeSeries(t, 10, 1, t0.Add(time.Second))); res.Reasons[ReasonSeriesLimit] != 1 {
		t.Fatalf("a new series: %+v", res)
	}
	for _, other := range []string{"b", ""} {
		if res, _ = s.AppendOTLP(ctx, other, gaugeSeries(t, 0, 20, t0)); res.Accepted != 20 {
			t.Fatalf("tenant %q: %+v", other, res)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, set)
	defer s.Close()
	if res, _ = s.AppendOTLP(ctx, "a", gaugeSeries(t, 20, 1, t0.Add(2*time.Second))); res.Reasons[ReasonSeriesLimit] != 1 {
		t.Fatalf("a new series after a reopen: %+v", res)
	}
	if res, _ = s.AppendOTLP(ctx, "a", gaugeSeries(t, 0, 5, t0.Add(2*time.Second))); res.Accepted != 5 {
		t.Fatalf("known series after a reopen: %+v", res)
	}
}
