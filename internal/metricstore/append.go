package metricstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Result reports what AppendOTLP stored. Accepted and Rejected count OTLP
// data points; a point is rejected when any of its samples is (a histogram
// point whose _count was stored but whose _sum was out of order counts as
// rejected, and its other samples stay stored). Accepted+Rejected is the
// number of data points in the request. Every accepted point is stored,
// but the Duplicates among them, which were already: points of a series
// at a millisecond that holds the same values, stored by an earlier point
// of the request or by an earlier request (see the package documentation,
// "Order and duplicates").
type Result struct {
	Accepted, Rejected int64
	// Duplicates counts the accepted points not stored again because
	// their series holds the same values at their millisecond.
	Duplicates int64
	// Samples is the number of TSDB samples appended, target_info included.
	Samples int64
	// Reasons counts the rejected points by reason, one of the Reason
	// constants. Nil when nothing was rejected.
	Reasons map[string]int64
	// Examples holds, by reason, the labels of one series (or the metric
	// name, for a point rejected before its series' labels were built) a
	// point rejected for that reason was for, cut to 256 bytes. Nil when
	// nothing was rejected.
	Examples map[string]string
}

// Reasons a data point is rejected.
const (
	ReasonTemporality      = "unsupported_temporality"   // delta or unspecified aggregation temporality
	ReasonOutOfOrder       = "out_of_order"              // storage.ErrOutOfOrderSample
	ReasonDuplicate        = "duplicate_timestamp"       // another value at a millisecond that has one (storage.ErrDuplicateSampleForTimestamp)
	ReasonTooOld           = "too_old"                   // storage.ErrTooOldSample
	ReasonOutOfBounds      = "out_of_bounds"             // storage.ErrOutOfBounds: older than the head allows
	ReasonLabelLimit       = "label_limit"               // more labels than Config.LabelLimit
	ReasonInvalidUTF8      = "invalid_utf8"              // a metric name, label name or value is not UTF-8
	ReasonInvalidName      = "invalid_name"              // the metric or a label name cannot be translated
	ReasonHistogramBuckets = "invalid_histogram_buckets" // len(bucket_counts) != len(explicit_bounds)+1
	ReasonInvalidHistogram = "invalid_histogram"         // exponential histogram the TSDB refuses (scale, counts)
	ReasonAppend           = "append_error"              // any other error from the TSDB appender
	ReasonTooFarAhead      = "too_far_in_future"         // a timestamp past now + Config.MaxTimeAhead
	ReasonSeriesLimit      = "series_limit"              // a new series past the tenant's Config.SeriesLimit
)

// AppendOTLP stores the metrics of an encoded ExportMetricsServiceRequest
// for tenant, translated as Prometheus' OTLP endpoint translates them (see
// the package documentation), in one TSDB appender, and commits it: the
// default tenant's ("") series are labelled as Prometheus labels them,
// another tenant's also carry TenantLabel (see Queryable). On success every
// accepted sample is in the WAL. Rejected points make a partial success,
// not an error. The points are stored in time order, the first of a
// series' millisecond kept (see the package documentation, "Order and
// duplicates"): a request whose walk meets a point of a series before one
// it appended is rolled back and appended again, sorted. A malformed request, a cancelled ctx or a failed commit
// return an error, and then none of the request's samples is stored (a
// cancelled or failed one may leave series it created, without samples,
// until the head drops them; a malformed one leaves none, see below). req
// is not retained.
//
// req need not have passed otlpwire's Validate: AppendOTLP refuses what
// Validate refuses, with an error wrapping Validate's *otlpwire.Error, and
// checks as part of its walk where it can. A request whose points all go
// to known series (the steady state) is checked piece by piece:
// resources and scopes the first time their exact bytes are seen, point
// attributes by the series cache, whose entries stand for attribute bytes
// that were checked, and the rest (exemplars, metadata, points refused
// before the lookup) explicitly. Before a request creates its first series
// (a cache miss, or a cached series none of whose samples was stored yet)
// it is validated whole, so that a refused request leaves no series
// behind: the TSDB keeps the series an appender created even when it is
// rolled back. Whenever the head is truncated the cached series lose their
// references (see syncCache), so a series the head dropped then counts as
// new again. (A request under way while the head drops series, or, with an
// out-of-order window, a series dropped by the out-of-order compaction
// after the truncation, can still be created again without that check.)
//
// After a write to the WAL failed, this commit's or another's, AppendOTLP
// refuses every request with an error wrapping ErrUnavailable, even one
// whose commit succeeded, until the TSDB has been reopened (see the
// package documentation, "Write errors").
func (s *Store) AppendOTLP(ctx context.Context, tenant string, req []byte) (Result, error) {
	g, err := s.db.acquireWriter()
	if err != nil {
		return Result{}, err
	}
	if tenant != "" {
		s.tenants.seen() // before the tenant's first series exists
	}
	epoch := s.syncCache()
	a, _ := s.states.Get().(*appendState)
	if a == nil {
		a = newAppendState()
	}
	a.epoch = epoch
	defer func() {
		a.reset()
		s.states.Put(a)
	}()
	a.s = s
	a.tenant = tenant
	if s.cfg.SeriesLimit != nil {
		a.seriesLimit = s.cfg.SeriesLimit(tenant)
	}
	a.req = otlpwire.MetricsRequest(req)
	a.notAfter = math.MaxInt64
	if s.cfg.MaxTimeAhead > 0 {
		a.notAfter = s.cfg.now().Add(s.cfg.MaxTimeAhead).UnixMilli()
	}
	// The series the request created stay in the head whatever happens
	// next (cached by reference, so no later sample creates them again):
	// their metadata is recorded in any case. A malformed request created
	// none (see above).
	defer a.recordMeta()
	err = a.attempt(ctx, g, false)
	if errors.Is(err, errStale) {
		// Another commit stored samples of the request's series since
		// it looked them up: append it again, against the ledger as it
		// is now, with no commit in between (ledger.go).
		s.ledger.commit.Lock()
		defer s.ledger.commit.Unlock()
		if g, err = s.db.acquireWriter(); err != nil {
			return Result{}, err
		}
		a.again()
		a.epoch = s.syncCache()
		err = a.attempt(ctx, g, true)
	}
	if err != nil {
		return Result{}, err
	}
	s.report.observe(tenant, &a.res)
	return a.res, nil
}

// attempt appends the request with an appender of g, which it takes over,
// and commits it, holding the ledger's mutex across its check of the
// ledger and the commit (locked: the caller holds it). It fails with
// errStale, having rolled back, when another commit stored samples of the
// request's series since it looked them up.
func (a *appendState) attempt(ctx context.Context, g *generation, locked bool) error {
	s := a.s
	app := s.db.appender(ctx, g)
	defer app.release()
	a.setAppender(app)
	a.db, a.ctx, a.head.db = g.db, ctx, g.db
	a.gen0 = s.ledger.gen.Load()
	defer a.head.close()
	err := a.request(ctx, a.req)
	if errors.Is(err, errResort) {
		// Points of a series out of time order: the commit would drop
		// the later ones. Roll back and append the request again, every
		// point in time order (order.go).
		if err := a.app.Rollback(); err != nil {
			return storeError("roll back", err)
		}
		g, gerr := s.db.acquireWriter()
		if gerr != nil {
			return gerr
		}
		app := s.db.appender(ctx, g)
		defer app.release()
		a.setAppender(app)
		a.head.close()
		a.db, a.head.db = g.db, g.db
		a.startSorted()
		if err = a.request(ctx, a.req); err == nil {
			a.replay()
		}
	}
	if err != nil {
		_ = a.app.Rollback()
		return refine(a.req, err)
	}
	if !locked {
		s.ledger.commit.Lock()
		defer s.ledger.commit.Unlock()
	}
	l := &s.ledger
	if !l.current(a.gen0, a.marks, &a.shardOrder) {
		if err := a.app.Rollback(); err != nil {
			return storeError("roll back", err)
		}
		return errStale
	}
	gen := l.begin()
	defer l.publish(gen)
	if err := a.app.Commit(); err != nil {
		l.committedMarks(a.marks, gen, false, &a.shardOrder) // what it stored is not known
		return storeError("commit", err)
	}
	l.committedMarks(a.marks, gen, true, &a.shardOrder)
	return nil
}

// setAppender makes app, wrapped by the Store's wrap if set, the
// appender of the request.
func (a *appendState) setAppender(app storage.AppenderV2) {
	a.app = app
	if a.s.wrap != nil {
		a.app = a.s.wrap(a.app)
	}
}

// storeError is the error of a failed commit or rollback: as it is when
// it wraps ErrUnavailable, else wrapped with what failed.
func storeError(what string, err error) error {
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("metricstore: %s: %w", what, err)
}

// request appends the metrics of req, checking ctx before each resource.
func (a *appendState) request(ctx context.Context, req otlpwire.MetricsRequest) error {
	return req.Walk(otlpwire.MetricVisitor{
		ResourceMetrics: func(rm otlpwire.ResourceMetrics) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return a.resourceMetrics(rm)
		},
		ScopeMetrics:       func(sm otlpwire.ScopeMetrics) error { return a.scopeMetrics(sm) },
		Metric:             func(m otlpwire.Metric) error { return a.metric(m) },
		ResourceMetricsEnd: func(otlpwire.ResourceMetrics) error { return a.resourceEnd() },
	})
}

// resourceMetrics starts a resource: its attributes, and an empty time
// range for its points.
func (a *appendState) resourceMetrics(rm otlpwire.ResourceMetrics) error {
	r, err := rm.Resource()
	if err != nil {
		return err
	}
	if _, err := rm.SchemaURL(); err != nil {
		return err
	}
	if err := a.setResource(r); err != nil {
		return err
	}
	a.minT, a.maxT = math.MaxUint64, 0
	return nil
}

// scopeMetrics starts a scope of the current resource.
func (a *appendState) scopeMetrics(sm otlpwire.ScopeMetrics) error {
	sc, err := sm.Scope()
	if err != nil {
		return err
	}
	url, err := sm.SchemaURL()
	if err != nil {
		return err
	}
	return a.setScope(sc, url)
}

// resourceEnd ends a resource whose metrics are appended: its target_info
// samples, if it had points, or errResort if they were out of time order.
func (a *appendState) resourceEnd() error {
	if a.minT <= a.maxT {
		if err := a.targetInfo(); err != nil {
			return err
		}
		if a.resort {
			return errResort
		}
	}
	return nil
}

func (a *appendState) metric(m otlpwire.Metric) error {
	mf := &a.mf
	if err := m.Read(mf); err != nil {
		return err
	}
	if err := mf.Metadata.Validate(); err != nil {
		return err
	}
	a.setMetric()
	a.delta = false
	switch mf.Type {
	case otlpwire.MetricTypeSum, otlpwire.MetricTypeHistogram, otlpwire.MetricTypeExponentialHistogram:
		switch {
		case mf.AggregationTemporality == aggregationCumulative:
		case mf.AggregationTemporality == aggregationDelta && !a.s.cfg.RefuseDelta:
			a.delta = true
		default:
			// Unspecified temporality; or delta refused, as
			// Prometheus' OTLP endpoint refuses it unless its
			// experimental native delta support is on.
			a.metricReject = ReasonTemporality
		}
	}
	switch mf.Type {
	case otlpwire.MetricTypeGauge, otlpwire.MetricTypeSum:
		return mf.NumberDataPoints().Each(a.numberPoint)
	case otlpwire.MetricTypeHistogram:
		return mf.HistogramDataPoints().Each(a.histogramPoint)
	case otlpwire.MetricTypeExponentialHistogram:
		return mf.ExponentialHistogramDataPoints().Each(a.expHistogramPoint)
	case otlpwire.MetricTypeSummary:
		return mf.SummaryDataPoints().Each(a.summaryPoint)
	}
	return nil
}

// staleOr returns the staleness marker for a point with the
// no-recorded-value flag (stale), else v.
func staleOr(stale bool, v float64) float64 {
	if stale {
		return staleNaN
	}
	return v
}

const (
	aggregationDelta      = 1
	aggregationCumulative = 2
	flagNoRecordedValue   = 1
)

var staleNaN = math.Float64frombits(value.StaleNaN)

// convertTimestamp is Prometheus' convertTimeStamp: ns to ms, truncated.
func convertTimestamp(ns uint64) int64 { return int64(ns) / 1_000_000 }

func (a *appendState) seeTime(t uint64) {
	a.minT = min(a.minT, t)
	a.maxT = max(a.maxT, t)
}

// admit records a point's time and reports whether its metric takes
// points; if not, the point is counted as rejected for the metric's reason.
func (a *appendState) admit(t uint64) bool {
	a.seeTime(t)
	if a.metricReject != "" {
		a.reject(a.metricReject)
		return false
	}
	return true
}

func (a *appendState) numberPoint(p otlpwire.NumberDataPoint) error {
	f := &a.np
	if err := p.Read(f); err != nil {
		return err
	}
	a.attrsChecked = false
	if err := a.checkExemplars(f.Exemplars); err != nil {
		return err
	}
	if err := a.numberSamples(f); err != nil {
		return err
	}
	if a.resort {
		return errResort
	}
	return a.settle(f.Attributes)
}

func (a *appendState) numberSamples(f *otlpwire.NumberDataPointFields) error {
	if !a.admit(f.Time) {
		return nil
	}
	e, err := a.entry(kindNumber, f.Attributes, nil)
	if err != nil || e == nil {
		return err
	}
	var v float64
	switch f.ValueType {
	case otlpwire.PointValueInt:
		v = float64(f.Int)
	case otlpwire.PointValueDouble:
		v = f.Double
	}
	st, t := convertTimestamp(f.StartTime), convertTimestamp(f.Time)
	stale := f.Flags&flagNoRecordedValue != 0
	if a.delta && a.mf.Type == otlpwire.MetricTypeSum {
		var ok bool
		if v, st, ok = a.deltaNumber(e, st, t, v, stale); !ok {
			return nil
		}
	} else {
		v = staleOr(stale, v)
	}
	a.beginPoint(e)
	if a.mf.Type == otlpwire.MetricTypeSum {
		// Prometheus keeps the exemplars of sums, not of gauges.
		if err := a.readExemplars(f.Exemplars); err != nil {
			return err
		}
		a.ex = sortedExemplars(a.exAll)
	}
	a.sample(0, st, t, v, nil)
	a.endPoint()
	return nil
}

func (a *appendState) histogramPoint(p otlpwire.HistogramDataPoint) error {
	f := &a.hp
	if err := p.Read(f); err != nil {
		return err
	}
	a.attrsChecked = false
	if err := a.checkExemplars(f.Exemplars); err != nil {
		return err
	}
	if err := a.histogramSamples(f); err != nil {
		return err
	}
	if a.resort {
		return errResort
	}
	return a.settle(f.Attributes)
}

func (a *appendState) histogramSamples(f *otlpwire.HistogramDataPointFields) error {
	if !a.admit(f.Time) {
		return nil
	}
	var err error
	if a.bounds, err = f.ExplicitBounds.AppendTo(a.bounds[:0]); err != nil {
		return err
	}
	if a.counts, err = f.BucketCounts.AppendTo(a.counts[:0]); err != nil {
		return err
	}
	if !(len(a.counts) == 0 && len(a.bounds) == 0) && len(a.counts) != len(a.bounds)+1 {
		a.reject(ReasonHistogramBuckets)
		return nil
	}
	a.shape = a.shape[:0]
	for _, b := range a.bounds {
		a.shape = binary.LittleEndian.AppendUint64(a.shape, math.Float64bits(b))
	}
	e, err := a.entry(kindHistogram, f.Attributes, a.shape)
	if err != nil || e == nil {
		return err
	}
	stale := f.Flags&flagNoRecordedValue != 0
	st, t := convertTimestamp(f.StartTime), convertTimestamp(f.Time)
	hasSum := f.HasSum
	if a.delta {
		fresh, lastSum, ok := a.deltaHistogram(e, t)
		if !ok {
			return nil
		}
		hasSum = hasSum && lastSum
		if !fresh {
			st = 0
		}
	}
	if err := a.readExemplars(f.Exemplars); err != nil {
		return err
	}
	a.beginPoint(e)
	if hasSum {
		a.histSample(histSum, st, t, f.Sum, stale)
	}
	a.histSample(histCount, st, t, float64(f.Count), stale)
	var cum uint64
	next := 0 // exemplars go, in their wire order, to the first bucket that holds them
	for i := 0; i < len(a.bounds) && i < len(a.counts); i++ {
		cum += a.counts[i]
		if math.IsInf(a.bounds[i], 1) {
			continue // le="+Inf" comes from count
		}
		a.exBucket = a.exBucket[:0]
		for ; next < len(a.exAll) && a.exAll[next].Value <= a.bounds[i]; next++ {
			a.exBucket = append(a.exBucket, a.exAll[next])
		}
		a.ex = sortedExemplars(a.exBucket)
		a.histSample(histBucket0+i, st, t, float64(cum), stale)
	}
	a.ex = sortedExemplars(a.exAll[next:])
	a.histSample(histInf, st, t, float64(f.Count), stale)
	a.endPoint()
	return nil
}

// histSample appends a sample of the current histogram point to slot: a
// staleness marker for a stale point; for a delta point, v added to the
// series' last (delta.go).
func (a *appendState) histSample(slot int, st, t int64, v float64, stale bool) {
	switch {
	case stale:
		v = staleNaN
	case a.delta:
		v += a.base[slot]
		a.noteHistogram(a.cur, slot, t, v)
	}
	a.sample(slot, st, t, v, nil)
}

func (a *appendState) summaryPoint(p otlpwire.SummaryDataPoint) error {
	f := &a.sp
	if err := p.Read(f); err != nil {
		return err
	}
	a.attrsChecked = false
	if err := a.summarySamples(f); err != nil {
		return err
	}
	if a.resort {
		return errResort
	}
	return a.settle(f.Attributes)
}

// summarySamples reads the quantiles before admit: they are part of what
// Validate checks, whether or not the point is stored.
func (a *appendState) summarySamples(f *otlpwire.SummaryDataPointFields) error {
	a.quantiles = a.quantiles[:0]
	a.shape = a.shape[:0]
	for q, err := range f.QuantileValues.All() {
		if err != nil {
			return err
		}
		quantile, v, err := q.Read()
		if err != nil {
			return err
		}
		a.quantiles = append(a.quantiles, v)
		a.shape = binary.LittleEndian.AppendUint64(a.shape, math.Float64bits(quantile))
	}
	if !a.admit(f.Time) {
		return nil
	}
	e, err := a.entry(kindSummary, f.Attributes, a.shape)
	if err != nil || e == nil {
		return err
	}
	stale := f.Flags&flagNoRecordedValue != 0
	st, t := convertTimestamp(f.StartTime), convertTimestamp(f.Time)
	a.beginPoint(e)
	a.sample(sumSum, st, t, staleOr(stale, f.Sum), nil)
	a.sample(sumCount, st, t, staleOr(stale, float64(f.Count)), nil)
	for i, v := range a.quantiles {
		a.sample(sumQuantile0+i, st, t, staleOr(stale, v), nil)
	}
	a.endPoint()
	return nil
}

func (a *appendState) expHistogramPoint(p otlpwire.ExponentialHistogramDataPoint) error {
	f := &a.ep
	if err := p.Read(f); err != nil {
		return err
	}
	// The bucket counts are packed varints, which Read does not walk.
	if _, err := f.Positive.BucketCounts.Len(); err != nil {
		return err
	}
	if _, err := f.Negative.BucketCounts.Len(); err != nil {
		return err
	}
	a.attrsChecked = false
	if err := a.checkExemplars(f.Exemplars); err != nil {
		return err
	}
	if err := a.expHistogramSamples(f); err != nil {
		return err
	}
	if a.resort {
		return errResort
	}
	return a.settle(f.Attributes)
}

func (a *appendState) expHistogramSamples(f *otlpwire.ExponentialHistogramDataPointFields) error {
	if !a.admit(f.Time) {
		return nil
	}
	h, err := a.nativeHistogram(f)
	if err != nil {
		return err
	}
	if h == nil {
		a.reject(ReasonInvalidHistogram)
		return nil
	}
	e, err := a.entry(kindExpHistogram, f.Attributes, nil)
	if err != nil || e == nil {
		return err
	}
	st, t := convertTimestamp(f.StartTime), convertTimestamp(f.Time)
	if a.delta {
		var fresh, ok bool
		if h, fresh, ok = a.deltaExp(e, t, h); !ok {
			return nil
		}
		if h == nil {
			a.rejectOf(ReasonInvalidHistogram, e)
			return nil
		}
		if !fresh {
			st = 0
		}
	}
	if err := a.readExemplars(f.Exemplars); err != nil {
		return err
	}
	a.beginPoint(e)
	a.ex = sortedExemplars(a.exAll)
	a.sample(0, st, t, 0, h)
	a.endPoint()
	return nil
}

// checkExemplars validates a point's exemplars, before anything reads
// them (their filtered attributes may nest without bound).
func (a *appendState) checkExemplars(ex otlpwire.List[otlpwire.Exemplar]) error {
	if a.validated {
		return nil
	}
	return ex.Each(otlpwire.Exemplar.Validate)
}

// settle finishes validating a point as otlpwire's Validate would: its
// attributes, unless entry saw them (they are new only for a point
// rejected before the lookup).
func (a *appendState) settle(attrs otlpwire.Attributes) error {
	if a.attrsChecked || a.validated {
		return nil
	}
	return attrs.Validate()
}

// validateAll validates the whole request once, before its first new
// series is created.
func (a *appendState) validateAll() error {
	if a.validated {
		return nil
	}
	if err := a.req.Validate(); err != nil {
		return err
	}
	a.validated = true
	return nil
}

// refine returns the error of a failed walk: for a malformed request,
// Validate's, whose path locates the fault in the whole request (the walk's
// own errors are relative to the part it was reading).
func refine(req otlpwire.MetricsRequest, err error) error {
	var we *otlpwire.Error
	if !errors.As(err, &we) {
		return err
	}
	if verr := req.Validate(); verr != nil {
		err = verr
	}
	return fmt.Errorf("metricstore: invalid request: %w", err)
}

// targetInfo appends the target_info samples of the current resource, as
// Prometheus' addResourceTargetInfo: one every half lookback delta from the
// earliest point's timestamp, and one at the latest. Unlike Prometheus, the
// samples are limited to the last targetInfoMaxSpan before the latest
// timestamp, so that a request with a point at the epoch cannot make
// millions of them.
func (a *appendState) targetInfo() error {
	e, err := a.targetEntry()
	if err != nil || e == nil {
		return err
	}
	earliest := time.Unix(0, int64(a.minT))
	latest := time.Unix(0, int64(a.maxT))
	if latest.Sub(earliest) > targetInfoMaxSpan {
		earliest = latest.Add(-targetInfoMaxSpan)
	}
	a.curTarget = true // before beginPoint, which records it when sorting
	a.beginPoint(e)
	for ts := earliest; ts.Before(latest); ts = ts.Add(lookbackDelta / 2) {
		a.targetSample(e, ts.UnixMilli())
	}
	a.targetSample(e, latest.UnixMilli())
	a.endTarget()
	a.curTarget = false
	return nil
}

const targetInfoMaxSpan = 24 * time.Hour

type targetKey struct {
	hash uint64
	t    int64
}

func (a *appendState) targetSample(e *cacheEntry, t int64) {
	k := targetKey{e.hash, t}
	if _, ok := a.seenTarget[k]; ok {
		return
	}
	a.seenTarget[k] = struct{}{}
	a.sample(0, 0, t, 1, nil)
}

// beginPoint starts the samples of one data point of entry e.
func (a *appendState) beginPoint(e *cacheEntry) {
	a.cur = e
	a.curFailed = ""
	a.refsChanged = false
	a.curStored, a.curExact = false, false
	if a.recording {
		a.beginPending()
	}
}

// sample appends one sample to slot of the current entry, unless it is
// at or before a sample this request appended to the same series (see
// order.go); when sorting, it records it for replay instead.
func (a *appendState) sample(slot int, st, t int64, v float64, h *histogram.Histogram) {
	if a.recording {
		a.record(slot, st, t, v, h)
		return
	}
	cs := &a.cur.series[slot]
	if !a.s.cfg.StartTimestampZeroSamples {
		st = 0
	}
	if t > a.notAfter {
		// As Prometheus' OTLP endpoint: one sample from a wrong clock
		// would move the head past every current sample.
		a.ex = nil
		if a.curFailed == "" {
			a.curFailed = ReasonTooFarAhead
		}
		return
	}
	gen := a.s.ledger.gen.Load() // before the sample is appended
	if cs.ref != 0 && a.follows(cs.ref, cs.lset, cs.led, gen, t, v, h) {
		a.ex = nil
		return
	}
	if cs.ref == 0 && a.seriesLimit > 0 && !a.admitSeries(cs.lset) {
		a.ex = nil
		a.fail(ReasonSeriesLimit)
		return
	}
	a.ex = withinTime(a.ex, a.notAfter)
	created := cs.ref == 0
	ref, err := a.app.Append(cs.ref, cs.lset, st, t, v, h, nil, storage.AOptions{Exemplars: a.ex})
	a.ex = nil
	// A partial error is about exemplars only (out of order, too many
	// labels): the sample is written, and, as in Prometheus' OTLP
	// endpoint, the exemplars are let go.
	if err != nil && !isPartial(err) {
		if a.storedBefore(cs.lset, t, v, h, err) {
			return
		}
		if a.curFailed == "" {
			a.curFailed = appendReason(err, h != nil)
		}
		return
	}
	if ref == cs.ref || !a.follows(ref, cs.lset, cs.led, gen, t, v, h) {
		// Not after a sample of its series this request appended
		// (checked above, or now for the reference Append found): the
		// commit stores it.
		a.note(ref, t, v, h)
		a.res.Samples++
		a.curStored = true
	}
	if created {
		a.familyCreated()
	}
	if ref != cs.ref {
		if !a.refsChanged && !a.fresh {
			// Entries in the cache are immutable: copy before updating.
			c := *a.cur
			c.series = append([]cachedSeries(nil), c.series...)
			a.cur = &c
			cs = &a.cur.series[slot]
		}
		a.refsChanged = true
		cs.ref = ref
	}
}

// recordMeta records the metadata familyCreated queued.
func (a *appendState) recordMeta() {
	for _, m := range a.newMeta {
		a.s.meta.record(a.tenant, m.family, m.md)
	}
}

// familyCreated queues the metadata of the current entry's family, whose
// series the last sample created (so a point whose samples are all
// refused gives none), to be recorded when the request ends.
func (a *appendState) familyCreated() {
	if a.replaying {
		if a.curMeta >= 0 {
			a.queueMeta(a.pendMeta[a.curMeta])
		}
		return
	}
	if m, ok := a.family(); ok {
		a.queueMeta(m)
	}
}

// family returns the family and metadata of the current entry, or false
// for a metric without a name (whose entries have no series).
func (a *appendState) family() (familyMeta, bool) {
	fam, md := "target_info", targetInfoMetadata
	if !a.curTarget {
		if a.metricName() != "" {
			return familyMeta{}, false // no entry has series for a metric without a name
		}
		fam, md = a.name, a.metricMetadata()
	}
	return familyMeta{fam, md}, true
}

// queueMeta queues m to be recorded when the request ends.
func (a *appendState) queueMeta(m familyMeta) {
	if n := len(a.newMeta); n > 0 && a.newMeta[n-1] == m {
		return
	}
	a.newMeta = append(a.newMeta, m)
}

// isPartial reports whether err is a *storage.AppendPartialError.
func isPartial(err error) bool {
	var partial *storage.AppendPartialError
	return errors.As(err, &partial)
}

// endPoint counts the current point and stores its entry if it is new, a
// copy from an earlier epoch, or its references changed. A point none of
// whose samples was stored, because each was a duplicate of one stored
// before it, counts as accepted and as a duplicate.
func (a *appendState) endPoint() {
	switch {
	case a.recording:
	case a.curFailed != "":
		a.reject(a.curFailed)
	default:
		a.res.Accepted++
		if a.curExact && !a.curStored {
			a.res.Duplicates++
		}
	}
	a.endTarget()
}

func (a *appendState) endTarget() {
	if a.refsChanged || a.fresh {
		a.s.cache.put(a.cur, a.epoch)
	}
	a.cur, a.fresh, a.refsChanged = nil, false, false
}

// reject counts a rejected point of the current entry, if any.
func (a *appendState) reject(reason string) { a.rejectOf(reason, a.cur) }

// rejectOf counts a rejected point of entry e (nil: none built yet),
// keeping an example of the reason (see example).
func (a *appendState) rejectOf(reason string, e *cacheEntry) {
	a.res.Rejected++
	if a.res.Reasons == nil {
		a.res.Reasons = make(map[string]int64)
		a.res.Examples = make(map[string]string)
	}
	a.res.Reasons[reason]++
	if _, ok := a.res.Examples[reason]; !ok {
		a.res.Examples[reason] = a.example(e)
	}
}

func appendReason(err error, isHistogram bool) string {
	switch {
	case errors.Is(err, storage.ErrOutOfOrderSample):
		return ReasonOutOfOrder
	case errors.Is(err, storage.ErrDuplicateSampleForTimestamp):
		return ReasonDuplicate
	case errors.Is(err, storage.ErrTooOldSample):
		return ReasonTooOld
	case errors.Is(err, storage.ErrOutOfBounds):
		return ReasonOutOfBounds
	case isHistogram:
		return ReasonInvalidHistogram
	}
	return ReasonAppend
}
