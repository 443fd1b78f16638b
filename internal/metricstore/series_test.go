package metricstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/wirehouse/wirehouse/internal/tenant"
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

// TestSeriesLimitRemoteWrite: the same limit holds for Appendable's
// appenders: tenant a, limited to 3 series, has 2 from OTLP; a remote
// write appender adds 1 more, and a fourth is refused with a
// SeriesLimitError that Prometheus' handler answers 400 for
// (storage.ErrOutOfBounds), counted by reason; samples of series the head
// has are stored; tenant b is not limited.
func TestSeriesLimitRemoteWrite(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := open(t, t.TempDir(), func(c *Config) {
		c.Registerer = reg
		c.SeriesLimit = func(tenant string) int {
			if tenant == "a" {
				return 3
			}
			return 0
		}
	})
	defer s.Close()
	ctx := tenant.NewContext(context.Background(), "a")
	if res, err := s.AppendOTLP(ctx, "a", gaugeSeries(t, 0, 2, t0)); err != nil || res.Accepted != 2 {
		t.Fatalf("OTLP: %+v %v", res, err)
	}
	at := t0.Add(time.Second).UnixMilli()
	rwLabels := func(tn string, ls labels.Labels) error {
		app := s.Appendable().AppenderV2(tenant.NewContext(context.Background(), tn))
		_, err := app.Append(0, ls, 0, at, 1, nil, nil, storage.AOptions{})
		at++
		if err != nil {
			app.Rollback()
			return err
		}
		return app.Commit()
	}
	rw := func(tn string, name string) error { return rwLabels(tn, labels.FromStrings("__name__", name)) }
	if err := rw("a", "third"); err != nil {
		t.Fatalf("the third series: %v", err)
	}
	err := rw("a", "fourth")
	var le *SeriesLimitError
	if !errors.As(err, &le) || le.Limit != 3 || !errors.Is(err, storage.ErrOutOfBounds) {
		t.Fatalf("the fourth series: %v, want a SeriesLimitError of 3 that is ErrOutOfBounds", err)
	}
	if err := rw("a", "third"); err != nil {
		t.Fatalf("the third series again: %v", err)
	}
	// The same series with a label of no value, which the head leaves
	// out, and the tenant's label as sent, kept as it is.
	if err := rwLabels("a", labels.FromStrings("__name__", "third", TenantLabel, "a", "empty", "")); err != nil {
		t.Fatalf("the third series with an empty label: %v", err)
	}
	// A series the head has, written by OTLP (stored labels as the OTLP
	// translation makes them): not refused.
	ls := selectNames(t, s, ctx, "g")
	if len(ls) != 2 {
		t.Fatalf("OTLP series g: %v", ls)
	}
	if err := rwLabels("a", ls[0]); err != nil {
		t.Fatalf("an OTLP series by remote write: %v", err)
	}
	for i := range 10 {
		if err := rw("b", fmt.Sprint("b", i)); err != nil {
			t.Fatalf("tenant b: %v", err)
		}
	}
	if n := counterValue(t, reg, "wirehouse_metricstore_rejected_points_total", ReasonSeriesLimit); n != 1 {
		t.Errorf("rejected series_limit = %v, want 1", n)
	}
}

// selectNames returns the label sets of metric name's series, as tenant
// of ctx sees them.
func selectNames(t *testing.T, s *Store, ctx context.Context, name string) []labels.Labels {
	t.Helper()
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	lsets, _ := selectAll(t, ctx, q, true, nameIs(name))
	return lsets
}

// counterValue is the value of counter family name's series whose
// reason label is reason.
func counterValue(t *testing.T, reg *prometheus.Registry, name, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" && l.GetValue() == reason {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// TestSeriesLimitAfterTruncation: a head truncation that drops a tenant's
// series starts a new Generation for remote write appenders, so that
// internal/promwrite does not give a kept reference of a dropped series
// to Append, which would make the series again unchecked; the series
// dropped no longer count against the limit.
func TestSeriesLimitAfterTruncation(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) {
		c.SeriesLimit = func(string) int { return 2 }
	})
	defer s.Close()
	ctx := tenant.NewContext(context.Background(), "a")
	at := time.Now().Add(-time.Hour).UnixMilli()
	write := func(names ...string) (gen uint64, err error) {
		app := s.Appendable().AppenderV2(ctx)
		gen = app.(interface{ Generation() uint64 }).Generation()
		for _, n := range names {
			if _, err = app.Append(0, labels.FromStrings("__name__", n), 0, at, 1, nil, nil, storage.AOptions{}); err != nil {
				app.Rollback()
				return gen, err
			}
		}
		return gen, app.Commit()
	}
	if gen, err := write("x", "y"); err != nil || gen == 0 {
		t.Fatalf("two series: generation %d, %v", gen, err)
	}
	// The first samples moved the head's minimum time: an epoch starts.
	gen1, _ := write()
	if gen, _ := write(); gen != gen1 {
		t.Fatalf("generation %d then %d with no truncation between", gen1, gen)
	}
	if _, err := write("z"); !errors.Is(err, storage.ErrOutOfBounds) {
		t.Fatalf("a third series: %v, want refused", err)
	}
	at += time.Minute.Milliseconds()
	if err := s.db.Head().Truncate(at); err != nil {
		t.Fatal(err)
	}
	if n := s.db.Head().NumSeries(); n != 0 {
		t.Fatalf("head holds %d series after the truncation, want 0", n)
	}
	gen2, err := write("z", "w")
	if err != nil {
		t.Fatalf("two new series after the others were dropped: %v", err)
	}
	if gen2 == gen1 || gen2 == 0 {
		t.Fatalf("generation %d after a truncation, was %d: kept references would be given again", gen2, gen1)
	}
	if _, err := write("x"); !errors.Is(err, storage.ErrOutOfBounds) {
		t.Fatalf("a dropped series again, past the limit: %v, want refused", err)
	}
}
