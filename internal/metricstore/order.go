package metricstore

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
)

// Time order within a request.
//
// Prometheus' head appender checks a sample, when it is appended, against
// what its series holds committed only. At the commit it appends the
// samples of the appender in the order they came, and drops, counting them
// only in its own prometheus_tsdb_* metrics, those at or before a sample
// of the same series committed just before: two points of a series at the
// same millisecond, or out of time order, in one request (one appender)
// would both be acknowledged and one of them lost (with an out-of-order
// window, the earlier one is inserted out of order instead, but a second
// one at the same millisecond is still dropped). So the store keeps, per
// series, the last sample it appended in the request (appendState.last):
//
//   - a sample at the same millisecond as it is not appended: the point
//     is rejected as ReasonDuplicate, unless the sample has the same value
//     (a duplicate, not an error: the point counts as accepted and in
//     Result.Duplicates when none of its samples was new);
//   - a sample before it means the request is out of time order: the
//     appender is rolled back and the request appended again, its points
//     recorded as it is walked, then sorted by time (stably: the points of
//     one millisecond stay in request order) and appended in that order,
//     which gives every series its samples in time order. The rule above
//     then keeps the first point of a millisecond, as the TSDB keeps the
//     sample committed first in a millisecond across requests.
//
// The check goes by the series reference Append returns (an entry's cached
// reference when it has one, so a duplicate is not even appended), so
// points of different cache entries that are the same series (the same
// attributes in another order, resources told apart only by attributes
// that are not labels) are caught too. A request in time order, the
// common case, pays one map lookup and one update per sample.

// errResort ends the walk of a request found out of time order.
var errResort = errors.New("metricstore: request out of time order")

// errStale ends an attempt to commit a request after another commit stored
// samples of its series since it looked them up (see ledger.go).
var errStale = errors.New("metricstore: series changed under the request")

// lastSample is a sample of a series: its time and value.
type lastSample struct {
	t     int64
	v     uint64               // float bits
	h     *histogram.Histogram // or the native histogram
	other bool                 // or a float histogram, equal to nothing appended here
}

// maxKeptLast is the most series a request's buffers are kept for, for
// the next request: appendState.last's table holds up to twice as many
// slots (512 KiB), a bigger one is let go.
const maxKeptLast = 1 << 14

// oooKey is a sample appended out of order: its series and time.
type oooKey struct {
	ref storage.SeriesRef
	t   int64
}

// follows reports whether a sample at t of series ref (labels ls; gen,
// the ledger's before it was appended, see ledger.go) comes
// at or before the last sample of ref, the request's or, the first time,
// the head's (see ledger.go), and so must not be appended: as a duplicate
// of it (a.curExact), as another value at its millisecond (a.curFailed,
// ReasonDuplicate), or before the request's own last (a.resort while the
// request is walked in its own order; ReasonOutOfOrder, which a sorted
// request cannot meet, when it is replayed). A sample before the head's
// last is left to the appender to refuse, unless an out-of-order window
// would take it; see beforeLast.
func (a *appendState) follows(ref storage.SeriesRef, ls labels.Labels, led *ledgerHint, gen uint64, t int64, v float64, h *histogram.Histogram) bool {
	m := a.mark(ref, gen, led)
	if !m.has || t > m.last.t {
		return false
	}
	switch {
	case t < m.last.t && !m.own:
		return a.beforeLast(ref, ls, sampleOf(t, v, h))
	case t < m.last.t && !a.replaying:
		a.resort = true
	case t < m.last.t:
		a.fail(ReasonOutOfOrder)
	case sameSample(m.last, sampleOf(t, v, h)):
		a.curExact = true
	default:
		a.fail(ReasonDuplicate)
	}
	return true
}

// beforeLast decides a sample s of series ref before the last one the
// head holds. The series may hold one at its millisecond: a retried
// request is made of such. A sample with its value is a duplicate;
// another value is rejected as ReasonDuplicate, as at the last sample (an
// out-of-order insert would drop it silently). A sample at a free
// millisecond is left to the appender, which inserts it (within an
// out-of-order window) or refuses it (out of order, out of bounds, too
// old). The sample is looked up in what the request appended out of
// order, then in the TSDB (a query: at most maxLookups per request; past
// them the appender decides alone).
func (a *appendState) beforeLast(ref storage.SeriesRef, ls labels.Labels, s lastSample) bool {
	prev, ok := a.ooo[oooKey{ref, s.t}]
	if !ok {
		if prev, ok = a.storedAt(ls, s.t); !ok {
			return false
		}
	}
	if sameSample(prev, s) {
		a.curExact = true
	} else {
		a.fail(ReasonDuplicate)
	}
	return true
}

// storedAt looks the sample of series ls at t up in the TSDB, within
// maxLookups.
func (a *appendState) storedAt(ls labels.Labels, t int64) (lastSample, bool) {
	if a.db == nil || a.lookups >= maxLookups {
		return lastSample{}, false
	}
	a.lookups++
	return storedAt(a.ctx, a.db, ls, t)
}

// storedBefore reports whether a sample the appender refused with err,
// before its series' last or the head's range, is at a millisecond the
// TSDB holds (a duplicate, a.curExact, or another value,
// ReasonDuplicate), for a series the request had no reference to, which
// follows could not check before it was appended.
func (a *appendState) storedBefore(ls labels.Labels, t int64, v float64, h *histogram.Histogram, err error) bool {
	if !errors.Is(err, storage.ErrOutOfOrderSample) && !errors.Is(err, storage.ErrTooOldSample) && !errors.Is(err, storage.ErrOutOfBounds) {
		return false
	}
	prev, ok := a.storedAt(ls, t)
	switch {
	case !ok:
		return false
	case sameSample(prev, sampleOf(t, v, h)):
		a.curExact = true
	default:
		a.fail(ReasonDuplicate)
	}
	return true
}

// maxLookups bounds the samples before their series' last a request looks
// up in the TSDB (see beforeLast).
const maxLookups = 4096

// note records a sample appended to ref: the request's last of it if
// after the last one known, else one appended out of order.
func (a *appendState) note(ref storage.SeriesRef, t int64, v float64, h *histogram.Histogram) {
	m := a.mark(ref, 0, nil) // follows made it
	s := sampleOf(t, v, h)
	if !m.has || t > m.last.t {
		m.last, m.has, m.own, m.inOrder = s, true, true, true
	} else {
		if a.ooo == nil {
			a.ooo = make(map[oooKey]lastSample)
		}
		a.ooo[oooKey{ref, t}] = s
		m.outOrder = true
	}
}

// mark returns the request's mark of series ref, made from the ledger
// (gen: the ledger's before the sample was appended; led: the series'
// hint, if known) the first time. It points into a.marks, valid until the
// next new mark.
func (a *appendState) mark(ref storage.SeriesRef, gen uint64, led *ledgerHint) *seriesMark {
	if a.markRef == ref && a.markRef != 0 {
		return &a.marks[a.markIdx]
	}
	i, ok := a.last.get(ref)
	if !ok {
		// Grown by a zero mark and then assigned in place: a seriesMark
		// is kept in memory, and appending lookup's result directly
		// copies it through a temporary (see lake's fillFunc).
		i = int32(len(a.marks))
		a.marks = append(a.marks, seriesMark{})
		a.marks[i] = a.s.ledger.lookup(ref, a.epoch, gen, &a.head, led)
		a.marks[i].ref = ref
		a.last.put(ref, i)
	}
	a.markRef, a.markIdx = ref, i
	return &a.marks[i]
}

func (a *appendState) fail(reason string) {
	if a.curFailed == "" {
		a.curFailed = reason
	}
}

// A pendingPoint is a point recorded by the sorted pass: its entry, time
// (ms), samples (pendS[lo:hi]), and the metadata its family gets if it
// creates a series (pendMeta[meta], -1 for none). A target_info sample is
// a point of its own.
type pendingPoint struct {
	e      *cacheEntry
	t      int64
	lo, hi int32
	meta   int32
	target bool
}

type pendingSample struct {
	slot       int32
	exLo, exHi int32 // its exemplars, pendEx[exLo:exHi]
	st         int64
	v          float64
	h          *histogram.Histogram
}

// startSorted starts the sorted pass over a request whose first walk met
// points out of time order: the walk is done again (the cache now has the
// series the first one created), recording the points rather than
// appending them, and replay appends them. What the first walk counted
// goes; what it checked, created and queued (metadata) stays.
func (a *appendState) startSorted() {
	a.again()
	a.recording = true
}

// again starts the walk of the request over, for the sorted pass or for a
// new attempt (see ledger.go): what the walk counted goes; what it
// checked, created and queued (metadata) stays.
func (a *appendState) again() {
	a.res = Result{}
	a.last.clear()
	clear(a.marks)
	a.marks, a.markRef = a.marks[:0], 0
	clear(a.ooo)
	clear(a.seenTarget)
	a.deltaOwn = nil
	a.resort, a.recording, a.replaying = false, false, false
	a.cur, a.fresh, a.refsChanged, a.curTarget = nil, false, false, false
	a.pend, a.pendS, a.pendEx, a.pendMeta = a.pend[:0], a.pendS[:0], a.pendEx[:0], a.pendMeta[:0]
}

// beginPending records the start of a point of a.cur, and the metadata of
// its family if it may create a series.
func (a *appendState) beginPending() {
	meta := int32(-1)
	for _, cs := range a.cur.series {
		if cs.ref == 0 && !cs.lset.IsEmpty() {
			if m, ok := a.family(); ok {
				meta = int32(len(a.pendMeta))
				a.pendMeta = append(a.pendMeta, m)
			}
			break
		}
	}
	n := int32(len(a.pendS))
	a.pend = append(a.pend, pendingPoint{e: a.cur, lo: n, hi: n, meta: meta, target: a.curTarget})
}

// record records a sample of the current point; each target_info sample
// becomes a point of its own.
func (a *appendState) record(slot int, st, t int64, v float64, h *histogram.Histogram) {
	p := &a.pend[len(a.pend)-1]
	if p.target && p.hi > p.lo {
		a.pend = append(a.pend, pendingPoint{e: p.e, lo: p.hi, hi: p.hi, meta: p.meta, target: true})
		p = &a.pend[len(a.pend)-1]
	}
	p.t = t
	lo := int32(len(a.pendEx))
	a.pendEx = append(a.pendEx, a.ex...)
	a.ex = nil
	a.pendS = append(a.pendS, pendingSample{slot: int32(slot), st: st, v: v, h: h, exLo: lo, exHi: int32(len(a.pendEx))})
	p.hi = int32(len(a.pendS))
}

// replay appends the recorded points in time order, those of one
// millisecond in request order, and counts them as the first walk would.
// A point's entry is taken again from the cache, where an earlier point of
// it may have left the references it took.
func (a *appendState) replay() {
	slices.SortStableFunc(a.pend, func(x, y pendingPoint) int { return cmp.Compare(x.t, y.t) })
	a.recording, a.replaying = false, true
	defer func() { a.replaying = false }()
	for i := range a.pend {
		p := &a.pend[i]
		e, fresh := p.e, false
		if c := a.s.cache.getKey(e.key); c != nil && c.epoch == a.epoch && c.shape == e.shape && len(c.series) == len(e.series) {
			e = c
		} else {
			// Dropped from the cache since: store it again, a copy of
			// its own (p.e may be an entry other requests hold, which
			// nothing may change).
			c := *e
			c.series = append([]cachedSeries(nil), e.series...)
			e, fresh = &c, true
		}
		a.curTarget, a.curMeta = p.target, int(p.meta)
		a.beginPoint(e)
		a.fresh = fresh
		for _, ps := range a.pendS[p.lo:p.hi] {
			a.ex = nil
			if ps.exHi > ps.exLo {
				a.ex = a.pendEx[ps.exLo:ps.exHi]
			}
			a.sample(int(ps.slot), ps.st, p.t, ps.v, ps.h)
		}
		if p.target {
			a.endTarget()
		} else {
			a.endPoint()
		}
		a.curTarget = false
	}
}

// pendingBuffers returns the sorted pass's buffers emptied, for the next
// request: nil instead of one grown past maxKeptLast, and without the
// references they held.
func (a *appendState) pendingBuffers() ([]pendingPoint, []pendingSample, []exemplar.Exemplar, []familyMeta) {
	pend, pendS, pendEx, pendMeta := a.pend, a.pendS, a.pendEx, a.pendMeta
	clear(pend)
	clear(pendS)
	clear(pendEx)
	clear(pendMeta)
	if cap(pendS) > maxKeptLast {
		pend, pendS, pendEx, pendMeta = nil, nil, nil, nil
	}
	return pend[:0], pendS[:0], pendEx[:0], pendMeta[:0]
}

// maxExample bounds the length of a rejected point's example.
const maxExample = 256

// example describes the series of a rejected point of entry e, for
// Result.Examples: the labels of its first series, without TenantLabel
// (the tenant's own series are shown to it), or, for a point rejected
// before its labels were built, its metric's name and job.
func (a *appendState) example(e *cacheEntry) string {
	var ls labels.Labels
	if e != nil {
		for _, cs := range e.series {
			if !cs.lset.IsEmpty() {
				ls = cs.lset
				break
			}
		}
	}
	if ls.IsEmpty() {
		name := a.name
		if a.metricName() != "" {
			name = validString(a.mf.Name) // not translatable: as sent
		}
		b := labels.NewScratchBuilder(2)
		b.Add(labels.MetricName, name)
		if r, err := a.resourceCtx(); err == nil && r == "" && a.job != "" {
			b.Add("job", a.job)
		}
		b.Sort()
		ls = b.Labels()
	}
	if a.tenant != "" {
		ls = labels.NewBuilder(ls).Del(TenantLabel).Labels()
	}
	s := ls.String()
	if len(s) > maxExample {
		s = strings.ToValidUTF8(s[:maxExample], "") + "…"
	}
	return validString([]byte(s))
}
