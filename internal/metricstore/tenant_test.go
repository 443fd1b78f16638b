package metricstore

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// tenantRequest is a request of a gauge temp{i="0"} of value v, with the
// point attributes extra too, and a counter hits_total of value v with
// one exemplar of value v, at at, from service svc.
func tenantRequest(t testing.TB, at time.Time, v float64, extra map[string]string) []byte {
	t.Helper()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "svc")
	rm.Resource().Attributes().PutStr("host.name", "h1")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	g := ms.AppendEmpty()
	g.SetName("temp")
	g.SetDescription("Temperature.")
	p := g.SetEmptyGauge().DataPoints().AppendEmpty()
	p.Attributes().PutStr("i", "0")
	for k, v := range extra {
		p.Attributes().PutStr(k, v)
	}
	p.SetTimestamp(pcommon.NewTimestampFromTime(at))
	p.SetDoubleValue(v)
	c := ms.AppendEmpty()
	c.SetName("hits")
	sum := c.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	cp := sum.DataPoints().AppendEmpty()
	cp.SetTimestamp(pcommon.NewTimestampFromTime(at))
	cp.SetDoubleValue(v)
	ex := cp.Exemplars().AppendEmpty()
	ex.SetTimestamp(pcommon.NewTimestampFromTime(at))
	ex.SetDoubleValue(v)
	ex.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// selectAll returns the series ms select for the tenant of ctx, by their
// labels, with their float values.
func selectAll(t testing.TB, ctx context.Context, q storage.Querier, sorted bool, ms ...*labels.Matcher) ([]labels.Labels, [][]float64) {
	t.Helper()
	ss := q.Select(ctx, sorted, nil, ms...)
	var (
		lsets  []labels.Labels
		values [][]float64
	)
	for ss.Next() {
		lsets = append(lsets, ss.At().Labels())
		var vs []float64
		it := ss.At().Iterator(nil)
		for it.Next() != 0 {
			_, v := it.At()
			vs = append(vs, v)
		}
		values = append(values, vs)
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	return lsets, values
}

func nameIs(name string) *labels.Matcher {
	return labels.MustNewMatcher(labels.MatchEqual, "__name__", name)
}

// TestTenantIsolation: the default tenant and tenants a and b send the
// same series, each with its own value; b also sends an attribute named
// __tenant__ naming a. Each sees its own series, with its own values and
// no __tenant__ label, and nothing of the others', through Select, label
// names and values, metadata, exemplars and head statistics; and deletes
// its own series only.
func TestTenantIsolation(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.MaxExemplars = 100 })
	defer s.Close()
	now := time.Now().Truncate(time.Second)
	writes := []struct {
		tenant string
		v      float64
		extra  map[string]string
	}{
		{"", 1, nil},
		{"a", 2, nil},
		{"b", 3, map[string]string{"__tenant__": "a", "spoof": "yes"}},
	}
	for _, w := range writes {
		res, err := s.AppendOTLP(context.Background(), w.tenant, tenantRequest(t, now, w.v, w.extra))
		if err != nil || res.Rejected != 0 || res.Accepted != 2 {
			t.Fatalf("tenant %q: %+v, %v", w.tenant, res, err)
		}
	}
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, w := range writes {
		t.Run("tenant="+w.tenant, func(t *testing.T) {
			ctx := tenant.NewContext(context.Background(), w.tenant)
			lsets, values := selectAll(t, ctx, q, true, nameIs("temp"))
			wantLabels := labels.FromStrings("__name__", "temp", "i", "0", "job", "svc")
			if w.extra != nil {
				wantLabels = labels.NewBuilder(wantLabels).Set("spoof", "yes").Labels()
			}
			if len(lsets) != 1 || !labels.Equal(lsets[0], wantLabels) || !slices.Equal(values[0], []float64{w.v}) {
				t.Errorf("temp = %v %v, want %v [%v]", lsets, values, wantLabels, w.v)
			}
			names, _, err := q.LabelNames(ctx, nil)
			if err != nil || slices.Contains(names, TenantLabel) || slices.Contains(names, "spoof") != (w.extra != nil) {
				t.Errorf("label names %v, %v", names, err)
			}
			if vals, _, err := q.LabelValues(ctx, TenantLabel, nil); err != nil || len(vals) != 0 {
				t.Errorf("values of %s: %v, %v", TenantLabel, vals, err)
			}
			if vals, _, err := q.LabelValues(ctx, "__name__", nil); err != nil || !slices.Equal(vals, []string{"hits_total", "target_info", "temp"}) {
				t.Errorf("metric names %v, %v", vals, err)
			}
			md := s.Metadata(ctx, "", -1, -1)
			if len(md) != 3 || md["temp"][0].Help != "Temperature." {
				t.Errorf("metadata %v", md)
			}
			eq, err := s.ExemplarQueryable().ExemplarQuerier(ctx)
			if err != nil {
				t.Fatal(err)
			}
			exs, err := eq.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{nameIs("hits_total")})
			if err != nil || len(exs) != 1 || len(exs[0].Exemplars) != 1 || exs[0].Exemplars[0].Value != w.v || exs[0].SeriesLabels.Has(TenantLabel) {
				t.Errorf("exemplars %v, %v", exs, err)
			}
			st, chunks, err := s.HeadStats(ctx, "__name__", 10)
			if err != nil || st.NumSeries != 3 || chunks != 3 || st.MinTime != now.UnixMilli() || st.MaxTime != now.UnixMilli() {
				t.Fatalf("head stats %+v, %d chunks, %v", st, chunks, err)
			}
			for _, p := range st.IndexPostingStats.LabelValuePairsStats {
				if p.Name == TenantLabel+"=a" || p.Name == TenantLabel+"=b" || p.Count != 1 && p.Name != "job=svc" {
					t.Errorf("head stats pair %+v", p)
				}
			}
		})
	}
	// b deletes its temp series; a's and the default tenant's stay.
	bctx := tenant.NewContext(context.Background(), "b")
	if err := s.Delete(bctx, math.MinInt64, math.MaxInt64, nameIs("temp")); err != nil {
		t.Fatal(err)
	}
	q2, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	for _, w := range writes {
		_, values := selectAll(t, tenant.NewContext(context.Background(), w.tenant), q2, false, nameIs("temp"))
		if got := len(values) == 1 && len(values[0]) == 1; got != (w.tenant != "b") {
			t.Errorf("after b's delete, tenant %q has temp %v", w.tenant, values)
		}
	}
}

// TestTenantMatchers: a tenant's own matchers on __tenant__ are decided
// against the empty value it sees, so they cannot reach another tenant.
func TestTenantMatchers(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	now := time.Now().Truncate(time.Second)
	for _, tn := range []string{"a", "b"} {
		if _, err := s.AppendOTLP(context.Background(), tn, tenantRequest(t, now, 1, nil)); err != nil {
			t.Fatal(err)
		}
	}
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := tenant.NewContext(context.Background(), "a")
	for _, tc := range []struct {
		name string
		m    *labels.Matcher
		want int
	}{
		{"equal other", labels.MustNewMatcher(labels.MatchEqual, TenantLabel, "b"), 0},
		{"equal own", labels.MustNewMatcher(labels.MatchEqual, TenantLabel, "a"), 0},
		{"regexp any", labels.MustNewMatcher(labels.MatchRegexp, TenantLabel, ".+"), 0},
		{"empty", labels.MustNewMatcher(labels.MatchEqual, TenantLabel, ""), 1},
		{"not other", labels.MustNewMatcher(labels.MatchNotEqual, TenantLabel, "b"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lsets, _ := selectAll(t, ctx, q, false, nameIs("temp"), tc.m)
			if len(lsets) != tc.want {
				t.Errorf("%v selects %v, want %d series", tc.m, lsets, tc.want)
			}
			names, _, err := q.LabelNames(ctx, nil, nameIs("temp"), tc.m)
			if err != nil || (len(names) > 0) != (tc.want > 0) {
				t.Errorf("label names %v, %v", names, err)
			}
		})
	}
}

// TestTenantRemoteWrite: Appendable's appenders write for the tenant of
// their context, whatever __tenant__ label the client sends; exemplars
// appended apart go to the tenant's series.
func TestTenantRemoteWrite(t *testing.T) {
	s := open(t, t.TempDir(), func(c *Config) { c.MaxExemplars = 100 })
	defer s.Close()
	now := time.Now().UnixMilli()
	writes := []struct {
		tenant, sent string
		v            float64
	}{{"", "a", 1}, {"a", "b", 2}, {"b", "", 3}}
	for _, w := range writes {
		app := s.Appendable().AppenderV2(tenant.NewContext(context.Background(), w.tenant))
		ls := labels.FromStrings("__name__", "rw", "job", "j")
		if w.sent != "" {
			ls = labels.FromStrings("__name__", "rw", TenantLabel, w.sent, "job", "j")
		}
		ref, err := app.Append(0, ls, 0, now, w.v, nil, nil, storage.AOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ex := exemplar.Exemplar{Labels: labels.FromStrings("trace_id", "ab"), Value: w.v, Ts: now, HasTs: true}
		if _, err := app.(storage.ExemplarAppenderV2).AppendExemplars(ref, ls, []exemplar.Exemplar{ex}); err != nil {
			t.Fatal(err)
		}
		if err := app.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, w := range writes {
		t.Run("tenant="+w.tenant, func(t *testing.T) {
			ctx := tenant.NewContext(context.Background(), w.tenant)
			lsets, values := selectAll(t, ctx, q, false, nameIs("rw"))
			if len(lsets) != 1 || lsets[0].String() != `{__name__="rw", job="j"}` || !slices.Equal(values[0], []float64{w.v}) {
				t.Errorf("rw = %v %v, want value %v", lsets, values, w.v)
			}
			eq, err := s.ExemplarQueryable().ExemplarQuerier(ctx)
			if err != nil {
				t.Fatal(err)
			}
			exs, err := eq.Select(math.MinInt64, math.MaxInt64, []*labels.Matcher{nameIs("rw")})
			if err != nil || len(exs) != 1 || len(exs[0].Exemplars) != 1 || exs[0].Exemplars[0].Value != w.v {
				t.Errorf("exemplars %v, %v", exs, err)
			}
		})
	}
}

// TestTenantSortedSelect: taking __tenant__ out can reorder series (one
// with a label named between __name__ and __tenant__ sorts before one
// without it only while both have __tenant__), so a sorted Select sorts
// again, as remote read's streamed answer and merges need.
func TestTenantSortedSelect(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	ctx := tenant.NewContext(context.Background(), "a")
	app := s.Appendable().AppenderV2(ctx)
	now := time.Now().UnixMilli()
	for _, ls := range []labels.Labels{
		labels.FromStrings("__name__", "m"),
		labels.FromStrings("__name__", "m", "__s__", "x"),
		labels.FromStrings("__name__", "m", "z", "1"),
	} {
		if _, err := app.Append(0, ls, 0, now, 1, nil, nil, storage.AOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	lsets, _ := selectAll(t, ctx, q, true, nameIs("m"))
	if len(lsets) != 3 || !slices.IsSortedFunc(lsets, labels.Compare) {
		t.Errorf("sorted select: %v", lsets)
	}
	cq, err := s.Queryable().ChunkQuerier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer cq.Close()
	cs := cq.Select(ctx, true, nil, nameIs("m"))
	var clsets []labels.Labels
	for cs.Next() {
		clsets = append(clsets, cs.At().Labels())
	}
	if cs.Err() != nil || !slices.EqualFunc(clsets, lsets, labels.Equal) {
		t.Errorf("sorted chunk select: %v, %v; want %v", clsets, cs.Err(), lsets)
	}
}

// TestTenantLabelLimit: the tenant label does not count toward
// Config.LabelLimit: a tenant's series may have as many labels as the
// default tenant's.
func TestTenantLabelLimit(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	// temp has __name__, i and job; target_info __name__, job and
	// host_name.
	s := open(t, t.TempDir(), func(c *Config) { c.LabelLimit = 3 })
	defer s.Close()
	for _, tn := range []string{"", "a"} {
		res, err := s.AppendOTLP(context.Background(), tn, tenantRequest(t, now, 1, nil))
		if err != nil || res.Rejected != 0 {
			t.Errorf("tenant %q: %+v, %v", tn, res, err)
		}
	}
}

// TestTenantLabelNamesLimit: a tenant's label names cut to a limit are
// the first ones it sees, __tenant__ not among them, one more than the
// limit asked as the query API asks to tell a cut.
func TestTenantLabelNamesLimit(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	if _, err := s.AppendOTLP(context.Background(), "a", tenantRequest(t, time.Now(), 1, nil)); err != nil {
		t.Fatal(err)
	}
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ctx := tenant.NewContext(context.Background(), "a")
	all, _, err := q.LabelNames(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for limit := 1; limit <= len(all); limit++ {
		got, _, err := q.LabelNames(ctx, &storage.LabelHints{Limit: limit})
		if err != nil || !slices.Equal(got, all[:limit]) {
			t.Errorf("limit %d: %v, %v; want %v", limit, got, err, all[:limit])
		}
	}
}

// TestTenantDefaultView: while no tenant has written, the default tenant's
// label queries read the index as before and head statistics are the
// head's own; once a tenant has series, also after a restart, they leave
// the tenant's out.
func TestTenantDefaultView(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().Truncate(time.Second)
	s := open(t, dir)
	if _, err := s.AppendOTLP(context.Background(), "", tenantRequest(t, now, 1, nil)); err != nil {
		t.Fatal(err)
	}
	if st, chunks, err := s.HeadStats(context.Background(), "__name__", 10); err != nil || chunks != -1 || st.NumSeries != 3 {
		t.Errorf("untenanted head stats %+v, %d chunks, %v; want the head's, -1", st, chunks, err)
	}
	if _, err := s.AppendOTLP(context.Background(), "a", tenantRequest(t, now, 2, map[string]string{"only_a": "x"})); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store, when string) {
		t.Helper()
		q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		ctx := context.Background()
		if names, _, err := q.LabelNames(ctx, nil); err != nil || slices.Contains(names, "only_a") || slices.Contains(names, TenantLabel) {
			t.Errorf("%s: default label names %v, %v", when, names, err)
		}
		if vals, _, err := q.LabelValues(ctx, "only_a", nil); err != nil || len(vals) != 0 {
			t.Errorf("%s: default values of only_a %v, %v", when, vals, err)
		}
		if st, chunks, err := s.HeadStats(ctx, "__name__", 10); err != nil || st.NumSeries != 3 || chunks != 3 {
			t.Errorf("%s: default head stats %+v, %d chunks, %v", when, st, chunks, err)
		}
	}
	check(s, "running")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	check(s, "reopened")
}
