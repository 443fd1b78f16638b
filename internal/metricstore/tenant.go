package metricstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/tsdb/index"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// TenantLabel is the reserved label that keeps tenants apart in the one
// TSDB: the series of tenant t carry TenantLabel="t", those of the default
// tenant ("") none. It is set on write from the tenant of the request
// (AppendOTLP's argument, the context of Appendable's appenders), never
// from what a client sends: an OTLP attribute whose name translates to it
// is dropped, a remote-written label of that name replaced or removed.
// Reads (Queryable, ExemplarQueryable, Metadata, HeadStats, Delete) match
// the label of the tenant in their context and take it out of what they
// return, so that a tenant sees its series as an untenanted store would
// show them. This is prom-label-proxy's model (its injectproxy adds the
// tenant's matcher to every selector), inside the server.
const TenantLabel = "__tenant__"

// tenantState says whether any series may carry TenantLabel: until one
// can, the default tenant's label queries without selectors take the
// TSDB's index as they are, as before tenants (see tenantLabels).
type tenantState struct {
	mu      sync.Mutex  // held while looking on disk
	checked atomic.Bool // looked on disk
	any     atomic.Bool
}

// seen records that a tenant is about to write: it is called before the
// tenant's first series can exist, and any stays set.
func (t *tenantState) seen() { t.any.Store(true) }

// anyTenant reports whether a series with TenantLabel may exist: one was
// in the TSDB when first looked for (until a look succeeds, every call
// answers yes), or a tenant other than the default has written since.
// Once true it stays true, so a false after a read means that no tenant's
// series existed while it ran.
func (s *Store) anyTenant() bool {
	if !s.tenants.checked.Load() {
		s.tenants.mu.Lock()
		defer s.tenants.mu.Unlock()
		if !s.tenants.checked.Load() {
			found, err := s.tenantSeries()
			if err != nil {
				return true
			}
			if found {
				s.tenants.seen()
			}
			s.tenants.checked.Store(true)
		}
	}
	return s.tenants.any.Load()
}

// tenantSeries reports whether the TSDB holds a series with TenantLabel.
func (s *Store) tenantSeries() (bool, error) {
	q, err := s.db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return false, err
	}
	defer q.Close()
	vals, _, err := q.LabelValues(context.Background(), TenantLabel, nil)
	return len(vals) > 0, err
}

// defaultTenantMatcher selects the default tenant's series: those without
// TenantLabel.
var defaultTenantMatcher = labels.MustNewMatcher(labels.MatchEqual, TenantLabel, "")

// scope returns ms restricted to tenant t's series, or false when they
// can select none of them. A tenant sees its series without TenantLabel,
// so its own matchers on that name are decided against the empty value:
// one that matches it is dropped, one that does not selects nothing, as
// in an untenanted store. Then TenantLabel="t" is added. ms is not
// changed.
func scope(t string, ms []*labels.Matcher) ([]*labels.Matcher, bool) {
	out := make([]*labels.Matcher, 0, len(ms)+1)
	for _, m := range ms {
		if m.Name != TenantLabel {
			out = append(out, m)
			continue
		}
		if !m.Matches("") {
			return nil, false
		}
	}
	if t == "" {
		return append(out, defaultTenantMatcher), true
	}
	return append(out, labels.MustNewMatcher(labels.MatchEqual, TenantLabel, t)), true
}

// withoutTenant returns ls without TenantLabel, built with b; ls itself
// when it has none.
func withoutTenant(b *labels.Builder, ls labels.Labels) labels.Labels {
	if !ls.Has(TenantLabel) {
		return ls
	}
	b.Reset(ls)
	b.Del(TenantLabel)
	return b.Labels()
}

// Queryable returns the TSDB for PromQL, the query API and remote read, as
// the tenant each call's context carries (tenant.FromContext; "" when it
// carries none) sees it: Select, LabelNames and LabelValues find only the
// tenant's series (see TenantLabel), shown without TenantLabel. Series
// selected with sortSeries come sorted as shown.
//
// For the default tenant, series need no relabelling; its LabelNames and
// LabelValues without matchers read the index as they are while no
// tenant's series exist, and otherwise go through the series (as a
// query with a selector does), which costs in proportion to them.
func (s *Store) Queryable() storage.SampleAndChunkQueryable { return tenantQueryable{s} }

// ExemplarQueryable returns the stored exemplars for querying, as the
// tenant of the context ExemplarQuerier is given sees them (see
// Queryable), or nil when the Store keeps none (MaxExemplars 0).
func (s *Store) ExemplarQueryable() storage.ExemplarQueryable {
	if !s.cfg.exemplars {
		return nil
	}
	return tenantExemplars{s}
}

type tenantQueryable struct{ s *Store }

func (q tenantQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	in, err := q.s.db.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	return tenantQuerier{tenantLabels{q.s, in}, in}, nil
}

func (q tenantQueryable) ChunkQuerier(mint, maxt int64) (storage.ChunkQuerier, error) {
	in, err := q.s.db.ChunkQuerier(mint, maxt)
	if err != nil {
		return nil, err
	}
	return tenantChunkQuerier{tenantLabels{q.s, in}, in}, nil
}

// tenantLabels answers LabelNames and LabelValues for the tenant of
// their context.
type tenantLabels struct {
	s *Store
	q storage.LabelQuerier
}

func (l tenantLabels) Close() error { return l.q.Close() }

// unscoped reports whether a label query for tenant t with matchers ms
// may first try the index as it is: the default tenant's, without
// matchers, while no tenant has series. The caller checks anyTenant
// again after the query.
func (l tenantLabels) unscoped(t string, ms []*labels.Matcher) bool {
	return t == "" && len(ms) == 0 && !l.s.anyTenant()
}

func (l tenantLabels) LabelValues(ctx context.Context, name string, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	if name == TenantLabel {
		return nil, nil, nil // no tenant sees it
	}
	t := tenant.FromContext(ctx)
	if l.unscoped(t, ms) {
		vals, ws, err := l.q.LabelValues(ctx, name, hints)
		if err != nil || !l.s.anyTenant() {
			return vals, ws, err
		}
	}
	scoped, ok := scope(t, ms)
	if !ok {
		return nil, nil, nil
	}
	return l.q.LabelValues(ctx, name, hints, scoped...)
}

func (l tenantLabels) LabelNames(ctx context.Context, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	t := tenant.FromContext(ctx)
	if l.unscoped(t, ms) {
		names, ws, err := l.q.LabelNames(ctx, hints, ms...)
		if err != nil || !l.s.anyTenant() {
			return names, ws, err
		}
	}
	scoped, ok := scope(t, ms)
	if !ok {
		return nil, nil, nil
	}
	h := hints
	if t != "" && hints != nil && hints.Limit > 0 {
		// TenantLabel is one of the names, taken out below.
		more := *hints
		more.Limit++
		h = &more
	}
	names, ws, err := l.q.LabelNames(ctx, h, scoped...)
	if i := slices.Index(names, TenantLabel); i >= 0 {
		names = slices.Delete(slices.Clone(names), i, i+1)
	}
	if hints != nil && hints.Limit > 0 && len(names) > hints.Limit {
		names = names[:hints.Limit]
	}
	return names, ws, err
}

type tenantQuerier struct {
	tenantLabels
	sel storage.Querier
}

func (q tenantQuerier) Select(ctx context.Context, sortSeries bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	t := tenant.FromContext(ctx)
	scoped, ok := scope(t, ms)
	if !ok {
		return storage.EmptySeriesSet()
	}
	set := q.sel.Select(ctx, sortSeries, hints, scoped...)
	if t == "" {
		return set // the default tenant's series have no TenantLabel
	}
	return newStrippedSet(set, sortSeries, func(s storage.Series, ls labels.Labels) storage.Series {
		return strippedSeries{s, ls}
	})
}

type tenantChunkQuerier struct {
	tenantLabels
	sel storage.ChunkQuerier
}

func (q tenantChunkQuerier) Select(ctx context.Context, sortSeries bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.ChunkSeriesSet {
	t := tenant.FromContext(ctx)
	scoped, ok := scope(t, ms)
	if !ok {
		return storage.EmptyChunkSeriesSet()
	}
	set := q.sel.Select(ctx, sortSeries, hints, scoped...)
	if t == "" {
		return set
	}
	return newStrippedSet(set, sortSeries, func(s storage.ChunkSeries, ls labels.Labels) storage.ChunkSeries {
		return strippedChunkSeries{s, ls}
	})
}

type strippedSeries struct {
	storage.Series
	lset labels.Labels
}

func (s strippedSeries) Labels() labels.Labels { return s.lset }

type strippedChunkSeries struct {
	storage.ChunkSeries
	lset labels.Labels
}

func (s strippedChunkSeries) Labels() labels.Labels { return s.lset }

// seriesSet is storage.SeriesSet or storage.ChunkSeriesSet.
type seriesSet[S storage.Labels] interface {
	Next() bool
	At() S
	Err() error
	Warnings() annotations.Annotations
}

// strippedSet shows the series of a set without TenantLabel. Taking one
// label out of every series can change their order (a series with a label
// named before TenantLabel may come after one without it), so when the
// set must be sorted it reads the whole set at the first Next and sorts
// it; the series it keeps stay iterable, as the SeriesSet contract has
// them.
type strippedSet[S storage.Labels] struct {
	in     seriesSet[S]
	wrap   func(S, labels.Labels) S
	b      *labels.Builder
	sorted bool
	read   bool // sorted: all was filled
	all    []S
	cur    S
}

func newStrippedSet[S storage.Labels](in seriesSet[S], sorted bool, wrap func(S, labels.Labels) S) *strippedSet[S] {
	return &strippedSet[S]{in: in, wrap: wrap, b: labels.NewBuilder(labels.EmptyLabels()), sorted: sorted}
}

func (s *strippedSet[S]) strip(x S) S { return s.wrap(x, withoutTenant(s.b, x.Labels())) }

func (s *strippedSet[S]) Next() bool {
	if !s.sorted {
		if !s.in.Next() {
			return false
		}
		s.cur = s.strip(s.in.At())
		return true
	}
	if !s.read {
		s.read = true
		for s.in.Next() {
			s.all = append(s.all, s.strip(s.in.At()))
		}
		slices.SortStableFunc(s.all, func(x, y S) int { return labels.Compare(x.Labels(), y.Labels()) })
	}
	if len(s.all) == 0 {
		return false
	}
	s.cur, s.all = s.all[0], s.all[1:]
	return true
}

func (s *strippedSet[S]) At() S                             { return s.cur }
func (s *strippedSet[S]) Err() error                        { return s.in.Err() }
func (s *strippedSet[S]) Warnings() annotations.Annotations { return s.in.Warnings() }

type tenantExemplars struct{ s *Store }

func (e tenantExemplars) ExemplarQuerier(ctx context.Context) (storage.ExemplarQuerier, error) {
	q, err := e.s.db.ExemplarQuerier(ctx)
	if err != nil {
		return nil, err
	}
	return tenantExemplarQuerier{q, tenant.FromContext(ctx)}, nil
}

type tenantExemplarQuerier struct {
	q      storage.ExemplarQuerier
	tenant string
}

func (q tenantExemplarQuerier) Select(start, end int64, matchers ...[]*labels.Matcher) ([]exemplar.QueryResult, error) {
	sets := make([][]*labels.Matcher, 0, len(matchers))
	for _, ms := range matchers {
		if scoped, ok := scope(q.tenant, ms); ok {
			sets = append(sets, scoped)
		}
	}
	if len(sets) == 0 {
		return nil, nil
	}
	res, err := q.q.Select(start, end, sets...)
	if err != nil || q.tenant == "" {
		return res, err
	}
	b := labels.NewBuilder(labels.EmptyLabels())
	for i := range res {
		res[i].SeriesLabels = withoutTenant(b, res[i].SeriesLabels)
	}
	return res, nil
}

// Appendable returns the TSDB for Prometheus' remote write handler: the
// appenders it gives write for the tenant of the context they are made
// with (tenant.FromContext), whose TenantLabel they set on every series,
// or, for the default tenant, take off; the tenant's label, whatever the
// client sent. They append exemplars apart too
// (storage.ExemplarAppenderV2), as the handler needs.
func (s *Store) Appendable() storage.AppendableV2 { return tenantAppendable{s} }

type tenantAppendable struct{ s *Store }

func (a tenantAppendable) AppenderV2(ctx context.Context) storage.AppenderV2 {
	t := tenant.FromContext(ctx)
	if t != "" {
		a.s.tenants.seen() // before the tenant's first series exists
	}
	app := &tenantAppender{AppenderV2: a.s.db.AppenderV2(ctx), s: a.s, tenant: t, b: labels.NewBuilder(labels.EmptyLabels())}
	if _, ok := app.AppenderV2.(*guardedAppender); ok { // the DB held open, as syncCache wants
		app.epoch = a.s.syncCache()
		app.gen = a.s.refs.of(app.epoch)
		if a.s.cfg.SeriesLimit != nil {
			app.limit = a.s.cfg.SeriesLimit(t)
		}
	}
	return app
}

// refGenerations numbers the Generations of appenders in the process.
var refGenerations atomic.Uint64

// refGens gives the appenders of each series cache epoch a Generation of
// their own.
type refGens struct {
	mu    sync.Mutex
	epoch uint64
	gen   uint64
}

// of returns the Generation of the appenders of cache epoch epoch: new in
// the process at each epoch, which a TSDB reopened starts too (reopened),
// and a head truncation (syncCache), after which a kept reference may
// name a series the head dropped: given to Append it would make the
// series again without the checks of a new one (the series limit).
// Appenders of an older epoch made after a newer one's get a new
// Generation too, so their references are not kept past them.
func (r *refGens) of(epoch uint64) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gen == 0 || r.epoch != epoch {
		r.epoch, r.gen = epoch, refGenerations.Add(1)
	}
	return r.gen
}

// tenantAppender labels every series it appends to with its tenant. It
// commits under the ledger's mutex, and marks the series it stored
// samples of in the ledger, to be read from the head again, so that a
// concurrent OTLP request to one of them is appended again (ledger.go).
type tenantAppender struct {
	storage.AppenderV2
	s       *Store
	tenant  string
	b       *labels.Builder
	touched []storage.SeriesRef
	// limit is the tenant's Config.SeriesLimit (0: none), epoch the
	// series cache epoch it is counted in, gen its Generation (0 when
	// the store refuses writes).
	limit int
	epoch uint64
	gen   uint64
}

func (a *tenantAppender) Commit() error {
	l := &a.s.ledger
	l.commit.Lock()
	defer l.commit.Unlock()
	gen := l.begin()
	defer l.publish(gen)
	err := a.AppenderV2.Commit()
	var order []int32
	l.committedRefs(a.touched, gen, &order)
	a.touched = nil
	return err
}

// Generation identifies the TSDB this appender writes to and its head's
// series cache epoch (see refGens.of): a series reference Append
// returned, once committed, may be given to a later appender of the same
// tenant (its series carry the tenant) and the same Generation, and to no
// other. 0 means none may be kept (the store refuses writes).
func (a *tenantAppender) Generation() uint64 { return a.gen }

func (a *tenantAppender) Rollback() error {
	a.touched = nil
	return a.AppenderV2.Rollback()
}

// relabel returns ls with TenantLabel as the tenant has it.
func (a *tenantAppender) relabel(ls labels.Labels) labels.Labels {
	if a.tenant == "" {
		return withoutTenant(a.b, ls)
	}
	if ls.Get(TenantLabel) == a.tenant {
		return ls
	}
	a.b.Reset(ls)
	a.b.Set(TenantLabel, a.tenant)
	return a.b.Labels()
}

func (a *tenantAppender) Append(ref storage.SeriesRef, ls labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AppendV2Options) (storage.SeriesRef, error) {
	return a.AppendRelabeled(ref, a.relabel(ls), st, t, v, h, fh, opts)
}

// Relabel returns ls as this appender stores it: with the tenant's label
// for a tenant, without any for the default one. The result depends on
// the tenant only, so a caller may keep it for the appenders of the same
// tenant, and give it to AppendRelabeled.
func (a *tenantAppender) Relabel(ls labels.Labels) labels.Labels { return a.relabel(ls) }

// AppendRelabeled is Append for labels Relabel returned for this tenant,
// which it stores as they are.
//
// A sample that would create a series past the tenant's series limit is
// refused with a SeriesLimitError, and counted.
func (a *tenantAppender) AppendRelabeled(ref storage.SeriesRef, ls labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AppendV2Options) (storage.SeriesRef, error) {
	if ref == 0 && a.limit > 0 && !a.admit(ls) {
		a.s.report.refuse(a.tenant, ReasonSeriesLimit, ls)
		return 0, &SeriesLimitError{Limit: a.limit}
	}
	ref, err := a.AppenderV2.Append(ref, ls, st, t, v, h, fh, opts)
	if ref != 0 {
		a.touched = append(a.touched, ref)
	}
	return ref, err
}

// admit reports whether the appender may append to series ls, stored
// labels: yes when the head has it, or when the tenant is under its
// series limit (then counted, see seriesCounts).
func (a *tenantAppender) admit(ls labels.Labels) bool {
	g, ok := a.AppenderV2.(*guardedAppender)
	if !ok {
		return true // a refused appender: its Append answers
	}
	ls = ls.WithoutEmpty() // as the head keeps a series' labels
	if ref, _ := g.GetRef(ls, ls.Hash()); ref != 0 {
		return true
	}
	return a.s.series.admit(g.g.db, a.epoch, a.tenant, a.limit)
}

// SeriesLimitError refuses a remote-written sample that would create a
// series past its tenant's Config.SeriesLimit. It is also
// storage.ErrOutOfBounds (errors.Is), the class of errors Prometheus'
// remote write handler answers 400 for, so that senders drop the sample
// rather than retry it, as they do when Mimir answers a series over
// max_global_series_per_user.
type SeriesLimitError struct {
	Limit int // the tenant's limit
}

func (e *SeriesLimitError) Error() string {
	return fmt.Sprintf("per-tenant series limit of %d exceeded (max_active_series): new series refused", e.Limit)
}

// Is reports whether target is storage.ErrOutOfBounds.
func (e *SeriesLimitError) Is(target error) bool { return target == storage.ErrOutOfBounds }

// SeriesOnly reports that the error refuses one series, not the request:
// internal/promwrite stores the request's other series.
func (e *SeriesLimitError) SeriesOnly() bool { return true }

func (a *tenantAppender) AppendExemplars(ref storage.SeriesRef, ls labels.Labels, es []exemplar.Exemplar) (storage.SeriesRef, error) {
	ea, ok := a.AppenderV2.(storage.ExemplarAppenderV2)
	if !ok {
		return 0, fmt.Errorf("metricstore: append exemplars: %T cannot", a.AppenderV2)
	}
	return ea.AppendExemplars(ref, a.relabel(ls), es)
}

// Delete marks with tombstones the samples from mint to maxt of the series
// ms select among those of the tenant ctx carries (see Queryable), for
// Prometheus' delete_series admin endpoint.
func (s *Store) Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error {
	scoped, ok := scope(tenant.FromContext(ctx), ms)
	if !ok {
		return nil
	}
	if err := s.db.Delete(ctx, mint, maxt, scoped...); err != nil {
		return fmt.Errorf("metricstore: delete series: %w", err)
	}
	return nil
}

// CleanTombstones removes the deleted samples of every tenant from disk.
// It is for the default tenant's administrators: the query API refuses it
// to the others.
func (s *Store) CleanTombstones() error {
	if err := s.db.CleanTombstones(); err != nil {
		return fmt.Errorf("metricstore: clean tombstones: %w", err)
	}
	return nil
}

// Snapshot writes the blocks, and the head if withHead, of every tenant
// into dir. It is for the default tenant's administrators: the query API
// refuses it to the others.
func (s *Store) Snapshot(dir string, withHead bool) error {
	if err := s.db.Snapshot(dir, withHead); err != nil {
		return fmt.Errorf("metricstore: snapshot: %w", err)
	}
	return nil
}

// HeadStats gives the head's cardinality statistics as the tenant ctx
// carries sees them (Prometheus' /api/v1/status/tsdb): the top limit
// values of statsByLabelName by series, label names by values and value
// bytes, label pairs by series, and the number of head chunks, or -1 when
// the head's prometheus_tsdb_head_chunks gauge tells it.
//
// While no tenant has series, the default tenant gets the head's own
// statistics (tsdb.Head.Stats, and -1). Otherwise they are counted from
// the tenant's head series alone, read through the head's index (as Stats
// reads its postings, it costs in proportion to them), without
// TenantLabel; minTime and maxTime are then those of the tenant's head
// chunks (an empty head's when it has none).
func (s *Store) HeadStats(ctx context.Context, statsByLabelName string, limit int) (*tsdb.Stats, int64, error) {
	t := tenant.FromContext(ctx)
	head := s.db.Head()
	if t == "" && !s.anyTenant() {
		st := head.Stats(statsByLabelName, limit)
		if !s.anyTenant() {
			return st, -1, nil
		}
	}
	ir, err := head.Index()
	if err != nil {
		return nil, 0, fmt.Errorf("metricstore: head stats: %w", err)
	}
	defer ir.Close()
	cr, err := head.Chunks()
	if err != nil {
		return nil, 0, fmt.Errorf("metricstore: head stats: %w", err)
	}
	defer cr.Close()
	m := defaultTenantMatcher
	if t != "" {
		m = labels.MustNewMatcher(labels.MatchEqual, TenantLabel, t)
	}
	p, err := tsdb.PostingsForMatchers(ctx, ir, m)
	if err != nil {
		return nil, 0, fmt.Errorf("metricstore: head stats: %w", err)
	}
	var (
		sb     labels.ScratchBuilder
		chks   []chunks.Meta
		pairs  = map[string]map[string]uint64{} // name → value → series
		st     = &tsdb.Stats{MinTime: math.MaxInt64, MaxTime: math.MinInt64}
		nchunk int64
	)
	for p.Next() {
		if st.NumSeries%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, 0, err
			}
		}
		if err := ir.Series(p.At(), &sb, &chks); err != nil {
			continue // gone since the postings were read
		}
		st.NumSeries++
		nchunk += int64(len(chks))
		for _, c := range chks {
			st.MinTime = min(st.MinTime, c.MinTime)
			st.MaxTime = max(st.MaxTime, chunkMaxTime(cr, c, st.MaxTime, head.MaxTime()))
		}
		sb.Labels().Range(func(l labels.Label) {
			if l.Name == TenantLabel {
				return
			}
			vals := pairs[l.Name]
			if vals == nil {
				vals = map[string]uint64{}
				pairs[l.Name] = vals
			}
			vals[l.Value]++
		})
	}
	if err := p.Err(); err != nil {
		return nil, 0, fmt.Errorf("metricstore: head stats: %w", err)
	}
	st.IndexPostingStats = postingsStats(pairs, statsByLabelName, limit)
	return st, nchunk, nil
}

// chunkMaxTime is the time of the last sample of head chunk c. The index
// gives the open chunk's as math.MaxInt64; it is read from the chunk then,
// unless it cannot be later than known, the latest so far, as when known
// is the head's latest, headMax.
func chunkMaxTime(cr tsdb.ChunkReader, c chunks.Meta, known, headMax int64) int64 {
	if c.MaxTime != math.MaxInt64 {
		return c.MaxTime
	}
	if known >= headMax {
		return c.MinTime
	}
	if wc, ok := cr.(tsdb.ChunkReaderWithCopy); ok {
		if _, _, maxt, err := wc.ChunkOrIterableWithCopy(c); err == nil {
			return maxt
		}
	}
	return c.MinTime
}

// postingsStats is index.MemPostings.Stats over the label pairs of some
// series, each with its number of series; ties are in name order.
func postingsStats(pairs map[string]map[string]uint64, statsByLabelName string, limit int) *index.PostingsStats {
	var metrics, names, sizes, byPair []index.Stat
	ps := &index.PostingsStats{}
	for n, vals := range pairs {
		names = append(names, index.Stat{Name: n, Count: uint64(len(vals))})
		ps.NumLabelPairs += len(vals)
		var size uint64
		for v, series := range vals {
			if n == statsByLabelName {
				metrics = append(metrics, index.Stat{Name: v, Count: series})
			}
			byPair = append(byPair, index.Stat{Name: n + "=" + v, Count: series})
			size += labels.SizeOfLabels(n, v, series)
		}
		sizes = append(sizes, index.Stat{Name: n, Count: size})
	}
	top := func(s []index.Stat) []index.Stat {
		slices.SortFunc(s, func(x, y index.Stat) int {
			return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Name, y.Name))
		})
		return s[:min(len(s), limit)]
	}
	ps.CardinalityMetricsStats = top(metrics)
	ps.CardinalityLabelStats = top(names)
	ps.LabelValueStats = top(sizes)
	ps.LabelValuePairsStats = top(byPair)
	return ps
}
