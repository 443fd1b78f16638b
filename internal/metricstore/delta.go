package metricstore

import (
	"math"
	"slices"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/value"
)

// Delta temporality: a point of a delta sum, histogram or exponential
// histogram is stored as the next sample of its cumulative series, the
// series' last stored sample plus the point (see the package
// documentation, "Delta temporality"). The last sample is the one the
// ledger knows (ledger.go), so a concurrent commit to the series makes the
// request stale and it is appended again against the new last sample:
// the state is the TSDB itself, and a restart, a dropped ledger entry or
// a cache miss only costs a read of the head.

// maxExpBuckets is the most buckets one side (positive or negative) of an
// accumulated exponential histogram spans: past it the sum is scaled down,
// as the deltatocumulative processor does (its maxBuckets).
const maxExpBuckets = 160

// lastOf returns the last sample stored for series cs of the current
// point (the request's own, when it appended one), false if there is
// none, it is a staleness marker, or it is older than t by more than
// DeltaMaxStale (the series starts again).
func (a *appendState) lastOf(cs *cachedSeries, t int64) (lastSample, bool) {
	if cs.lset.IsEmpty() {
		return lastSample{}, false
	}
	var s lastSample
	ok := false
	if a.deltaOwn != nil {
		s, ok = a.deltaOwn[cs.lset.Hash()]
	}
	if !ok {
		gen := a.s.ledger.gen.Load() // before the head is read (ledger.lookup)
		ref := cs.ref
		if ref == 0 {
			// A series the entry has no reference to yet may be in
			// the head (after a restart, a new cache epoch).
			if ref = a.head.refOf(a.ctx, cs.lset, a.s.ledger.gen.Load); ref == 0 {
				return lastSample{}, false
			}
		}
		m := a.mark(ref, gen, cs.led)
		s, ok = m.last, m.has
	}
	switch {
	case !ok || s.other:
		return lastSample{}, false
	case s.h != nil && value.IsStaleNaN(s.h.Sum):
		return lastSample{}, false
	case s.h == nil && value.IsStaleNaN(math.Float64frombits(s.v)):
		return lastSample{}, false
	case s.t < t-a.s.cfg.DeltaMaxStale.Milliseconds():
		return lastSample{}, false
	}
	return s, true
}

// noteDelta records a cumulative sample computed for series cs while the
// request is recorded for its sorted pass, when nothing is appended yet:
// the next point of the series in the request adds to it.
func (a *appendState) noteDelta(cs *cachedSeries, s lastSample) {
	if !a.recording {
		return // the ledger's mark holds what the request appended
	}
	if a.deltaOwn == nil {
		a.deltaOwn = make(map[uint64]lastSample)
	}
	a.deltaOwn[cs.lset.Hash()] = s
}

// deltaNumber returns the cumulative value of a delta sum point of entry e
// at t (ms) with value v, and the start to store (the point's, st, when
// it starts the series; 0 when it continues it). False when the point is
// refused: at or before the series' last sample (ReasonOutOfOrder).
func (a *appendState) deltaNumber(e *cacheEntry, st, t int64, v float64, stale bool) (float64, int64, bool) {
	cs := &e.series[0]
	last, ok := a.lastOf(cs, t)
	switch {
	case ok && t <= last.t:
		a.rejectOf(ReasonOutOfOrder, e)
		return 0, 0, false
	case stale:
		return staleNaN, 0, true
	case ok:
		v, st = math.Float64frombits(last.v)+v, 0
	}
	a.noteDelta(cs, sampleOf(t, v, nil))
	return v, st, true
}

// deltaHistogram sets a.base to the last sample of each series of a delta
// histogram point of entry e at t (ms), zero for a point that starts its
// series, and reports whether the series had a _sum at it (a cumulative
// sum goes on only while every point has one, as in the
// deltatocumulative processor). The series start again when a _bucket
// series has no sample at the time of _count's last (its bounds
// changed). False when the point is refused (ReasonOutOfOrder).
func (a *appendState) deltaHistogram(e *cacheEntry, t int64) (fresh, hasSum, ok bool) {
	a.base = slices.Grow(a.base[:0], len(e.series))[:len(e.series)]
	clear(a.base)
	count, ok := a.lastOf(&e.series[histCount], t)
	if !ok {
		return true, true, true
	}
	if t <= count.t {
		a.rejectOf(ReasonOutOfOrder, e)
		return false, false, false
	}
	for i := range e.series {
		cs := &e.series[i]
		if cs.lset.IsEmpty() {
			continue // a +Inf bound
		}
		s, ok := a.lastOf(cs, t)
		switch {
		case ok && s.t == count.t && s.h == nil:
			a.base[i] = math.Float64frombits(s.v)
		case i == histSum:
			hasSum = false
			continue
		default:
			clear(a.base)
			return true, true, true
		}
		if i == histSum {
			hasSum = true
		}
	}
	return false, hasSum, true
}

// noteHistogram records the cumulative samples of a histogram point for
// the sorted pass (see noteDelta).
func (a *appendState) noteHistogram(e *cacheEntry, slot int, t int64, v float64) {
	if a.recording && !e.series[slot].lset.IsEmpty() {
		a.noteDelta(&e.series[slot], sampleOf(t, v, nil))
	}
}

// deltaExp returns the cumulative native histogram of a delta exponential
// histogram point of entry e at t (ms), d being the point's own (which it
// may change), and whether it starts its series. A nil histogram with
// true is one no schema holds (ReasonInvalidHistogram); false, the point
// is refused (ReasonOutOfOrder).
func (a *appendState) deltaExp(e *cacheEntry, t int64, d *histogram.Histogram) (*histogram.Histogram, bool, bool) {
	cs := &e.series[0]
	last, ok := a.lastOf(cs, t)
	switch {
	case ok && t <= last.t:
		a.rejectOf(ReasonOutOfOrder, e)
		return nil, false, false
	case value.IsStaleNaN(d.Sum):
		return d, false, true
	case ok && last.h == nil:
		ok = false // a float sample: the series was something else
	}
	fresh := !ok
	if ok {
		d = addNative(last.h, d)
		if d == nil {
			return nil, false, true
		}
	}
	a.noteDelta(cs, sampleOf(t, 0, d))
	return d, fresh, true
}

// expBuckets is one side of an exponential histogram, dense: counts[i] is
// the count of the bucket of OTLP index off+i (Prometheus' index off+i+1).
type expBuckets struct {
	off    int
	counts []uint64
}

// expand returns the buckets of spans and deltas (an integer native
// histogram's, at schema from) scaled down to schema to, dense, without
// leading or trailing empty buckets.
func expand(spans []histogram.Span, deltas []int64, from, to int32) expBuckets {
	shift := from - to
	var b expBuckets
	idx, k, count := int32(0), 0, int64(0)
	first := true
	for _, sp := range spans {
		idx += sp.Offset
		for range sp.Length {
			count += deltas[k]
			k++
			if count != 0 {
				j := int((idx - 1) >> shift) // OTLP index, scaled down
				if first {
					b.off, first = j, false
				}
				for len(b.counts) <= j-b.off {
					b.counts = append(b.counts, 0)
				}
				b.counts[j-b.off] += uint64(count)
			}
			idx++
		}
	}
	return b
}

// lower and upper are the range of OTLP indexes b spans, upper exclusive.
func (b expBuckets) lower() int { return b.off }
func (b expBuckets) upper() int { return b.off + len(b.counts) }

// limitScale returns the schema, at most s, at which the buckets of x and
// y, both at s, span no more than maxExpBuckets: the deltatocumulative
// processor's rule (halving the range's ends, as integers, until it fits).
func limitScale(s int32, x, y expBuckets) int32 {
	if len(x.counts) == 0 && len(y.counts) == 0 {
		return s
	}
	lo, up := x.lower(), x.upper()
	switch {
	case len(x.counts) == 0:
		lo, up = y.lower(), y.upper()
	case len(y.counts) != 0:
		lo, up = min(lo, y.lower()), max(up, y.upper())
	}
	for up-lo > maxExpBuckets {
		lo /= 2
		up /= 2
		s--
	}
	return s
}

// downscale returns b scaled down by shift schemas.
func (b expBuckets) downscale(shift int32) expBuckets {
	if shift == 0 || len(b.counts) == 0 {
		return b
	}
	out := expBuckets{off: b.off >> shift}
	for i, c := range b.counts {
		j := (b.off+i)>>shift - out.off
		for len(out.counts) <= j {
			out.counts = append(out.counts, 0)
		}
		out.counts[j] += c
	}
	return out
}

// plus returns the bucket-wise sum of b and o.
func (b expBuckets) plus(o expBuckets) expBuckets {
	switch {
	case len(o.counts) == 0:
		return b
	case len(b.counts) == 0:
		return o
	}
	lo, up := min(b.lower(), o.lower()), max(b.upper(), o.upper())
	out := expBuckets{off: lo, counts: make([]uint64, up-lo)}
	for i, c := range b.counts {
		out.counts[b.off+i-lo] += c
	}
	for i, c := range o.counts {
		out.counts[o.off+i-lo] += c
	}
	return out
}

// addNative returns the sum of last and d, integer native histograms
// translated from OTLP (see nativeHistogram), as a new one: at the lower
// of their schemas, scaled down further while either side would span more
// than maxExpBuckets, as the deltatocumulative processor adds exponential
// histograms. Nil when that goes below histogram.ExponentialSchemaMin.
func addNative(last, d *histogram.Histogram) *histogram.Histogram {
	s := min(last.Schema, d.Schema)
	lp := expand(last.PositiveSpans, last.PositiveBuckets, last.Schema, s)
	dp := expand(d.PositiveSpans, d.PositiveBuckets, d.Schema, s)
	ln := expand(last.NegativeSpans, last.NegativeBuckets, last.Schema, s)
	dn := expand(d.NegativeSpans, d.NegativeBuckets, d.Schema, s)
	to := min(limitScale(s, lp, dp), limitScale(s, ln, dn))
	if to < histogram.ExponentialSchemaMin {
		return nil
	}
	shift := s - to
	pos := lp.downscale(shift).plus(dp.downscale(shift))
	neg := ln.downscale(shift).plus(dn.downscale(shift))
	h := &histogram.Histogram{
		CounterResetHint: histogram.UnknownCounterReset,
		Schema:           to,
		ZeroThreshold:    last.ZeroThreshold,
		ZeroCount:        last.ZeroCount + d.ZeroCount,
		Count:            last.Count + d.Count,
		Sum:              last.Sum + d.Sum,
	}
	if len(pos.counts) > 0 {
		h.PositiveSpans, h.PositiveBuckets = convertBucketsLayout(pos.counts, int32(pos.off), 0)
	}
	if len(neg.counts) > 0 {
		h.NegativeSpans, h.NegativeBuckets = convertBucketsLayout(neg.counts, int32(neg.off), 0)
	}
	return h
}
