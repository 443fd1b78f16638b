package main

import (
	"encoding/binary"
	"math"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Digest summarizes the data points of some metrics, independently of the
// order in which they arrive: each part is a sum of per-point hashes, so
// the digests of batches add up to the digest of the dataset whatever the
// exporter's concurrency did to their order. Attributes are hashed as a
// set, so an encoding that reorders them still matches.
//
// The parts say what a mismatch lost:
//   - Series: resource attributes, scope name, version and attributes, the
//     metric's name, description, unit, type, temporality and
//     monotonicity, and the point's attributes;
//   - Times: each point's series with its start time and time;
//   - Values: each point's series with its value fields and flags (number
//     values; histogram count, sum, min, max, bounds and bucket counts;
//     exponential histogram scale, zero bucket and both bucket ranges;
//     summary count, sum and quantiles);
//   - Exemplars: each exemplar's series, time, value, ids and filtered
//     attributes.
//
// Schema URLs, dropped-attribute counts and metric metadata are not
// covered: a format that loses them still counts as intact.
type Digest struct {
	Points    int64  `json:"points"`
	Series    uint64 `json:"series"`
	Times     uint64 `json:"times"`
	Values    uint64 `json:"values"`
	Exemplars uint64 `json:"exemplars"`
}

// Add adds o to d.
func (d *Digest) Add(o Digest) {
	d.Points += o.Points
	d.Series += o.Series
	d.Times += o.Times
	d.Values += o.Values
	d.Exemplars += o.Exemplars
}

// Diff names the parts in which got differs from d, the expected digest;
// it returns "" when they are equal.
func (d Digest) Diff(got Digest) string {
	var s string
	add := func(part string, differ bool) {
		if differ {
			if s != "" {
				s += ", "
			}
			s += part
		}
	}
	add("point count", d.Points != got.Points)
	add("series", d.Series != got.Series)
	add("timestamps", d.Times != got.Times)
	add("values", d.Values != got.Values)
	add("exemplars", d.Exemplars != got.Exemplars)
	return s
}

// digester computes digests with reused scratch space. The zero value is
// ready to use; a digester is not safe for concurrent use.
type digester struct {
	buf []byte
}

// Metrics returns the digest of md.
func (h *digester) Metrics(md pmetric.Metrics) Digest {
	var d Digest
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		res := h.attrs(rm.Resource().Attributes())
		sms := rm.ScopeMetrics()
		for j := range sms.Len() {
			sm := sms.At(j)
			sc := sm.Scope()
			h.buf = appendStr(h.buf[:0], sc.Name())
			h.buf = appendStr(h.buf, sc.Version())
			scope := xxhash.Sum64(h.buf) + h.attrs(sc.Attributes())
			ms := sm.Metrics()
			for k := range ms.Len() {
				h.metric(&d, res, scope, ms.At(k))
			}
		}
	}
	return d
}

// metric adds the points of m to d.
func (h *digester) metric(d *Digest, res, scope uint64, m pmetric.Metric) {
	b := appendStr(h.buf[:0], m.Name())
	b = appendStr(b, m.Description())
	b = appendStr(b, m.Unit())
	b = append(b, byte(m.Type()))
	switch m.Type() {
	case pmetric.MetricTypeSum:
		b = append(b, byte(m.Sum().AggregationTemporality()))
		if m.Sum().IsMonotonic() {
			b = append(b, 1)
		}
	case pmetric.MetricTypeHistogram:
		b = append(b, byte(m.Histogram().AggregationTemporality()))
	case pmetric.MetricTypeExponentialHistogram:
		b = append(b, byte(m.ExponentialHistogram().AggregationTemporality()))
	}
	h.buf = b
	metric := xxhash.Sum64(b) ^ res*0x9e3779b97f4a7c15 ^ scope*0xbf58476d1ce4e5b9

	switch m.Type() {
	case pmetric.MetricTypeGauge:
		h.numbers(d, metric, m.Gauge().DataPoints())
	case pmetric.MetricTypeSum:
		h.numbers(d, metric, m.Sum().DataPoints())
	case pmetric.MetricTypeHistogram:
		dps := m.Histogram().DataPoints()
		for i := range dps.Len() {
			p := dps.At(i)
			b := histHead(h, d, metric, p)
			for _, v := range p.ExplicitBounds().AsRaw() {
				b = appendFloat(b, v)
			}
			b = append(b, '|')
			for _, v := range p.BucketCounts().AsRaw() {
				b = binary.LittleEndian.AppendUint64(b, v)
			}
			h.finish(d, b, uint32(p.Flags()), p.Exemplars())
		}
	case pmetric.MetricTypeExponentialHistogram:
		dps := m.ExponentialHistogram().DataPoints()
		for i := range dps.Len() {
			p := dps.At(i)
			b := histHead(h, d, metric, p)
			b = binary.LittleEndian.AppendUint32(b, uint32(p.Scale()))
			b = binary.LittleEndian.AppendUint64(b, p.ZeroCount())
			b = appendFloat(b, p.ZeroThreshold())
			for _, bk := range []pmetric.ExponentialHistogramDataPointBuckets{p.Positive(), p.Negative()} {
				b = binary.LittleEndian.AppendUint32(b, uint32(bk.Offset()))
				for _, v := range bk.BucketCounts().AsRaw() {
					b = binary.LittleEndian.AppendUint64(b, v)
				}
				b = append(b, '|')
			}
			h.finish(d, b, uint32(p.Flags()), p.Exemplars())
		}
	case pmetric.MetricTypeSummary:
		dps := m.Summary().DataPoints()
		for i := range dps.Len() {
			p := dps.At(i)
			b := h.point(d, metric, p.Attributes(), p.StartTimestamp(), p.Timestamp())
			b = binary.LittleEndian.AppendUint64(b, p.Count())
			b = appendFloat(b, p.Sum())
			qs := p.QuantileValues()
			for j := range qs.Len() {
				b = appendFloat(b, qs.At(j).Quantile())
				b = appendFloat(b, qs.At(j).Value())
			}
			h.finish(d, b, uint32(p.Flags()), pmetric.NewExemplarSlice())
		}
	}
}

// histPoint is what classic and exponential histogram points share.
type histPoint interface {
	Attributes() pcommon.Map
	StartTimestamp() pcommon.Timestamp
	Timestamp() pcommon.Timestamp
	Count() uint64
	HasSum() bool
	Sum() float64
	HasMin() bool
	Min() float64
	HasMax() bool
	Max() float64
}

// histHead counts histogram point p like point and appends its count,
// sum, min and max.
func histHead[P histPoint](h *digester, d *Digest, metric uint64, p P) []byte {
	b := h.point(d, metric, p.Attributes(), p.StartTimestamp(), p.Timestamp())
	b = binary.LittleEndian.AppendUint64(b, p.Count())
	b = appendOptFloat(b, p.HasSum(), p.Sum())
	b = appendOptFloat(b, p.HasMin(), p.Min())
	return appendOptFloat(b, p.HasMax(), p.Max())
}

// numbers adds the number data points dps of a metric to d.
func (h *digester) numbers(d *Digest, metric uint64, dps pmetric.NumberDataPointSlice) {
	for i := range dps.Len() {
		p := dps.At(i)
		b := h.point(d, metric, p.Attributes(), p.StartTimestamp(), p.Timestamp())
		b = append(b, byte(p.ValueType()))
		switch p.ValueType() {
		case pmetric.NumberDataPointValueTypeInt:
			b = binary.LittleEndian.AppendUint64(b, uint64(p.IntValue()))
		case pmetric.NumberDataPointValueTypeDouble:
			b = appendFloat(b, p.DoubleValue())
		}
		h.finish(d, b, uint32(p.Flags()), p.Exemplars())
	}
}

// point counts a point of metric with attributes attrs in d, adds its
// series and times, and returns h.buf holding the series hash, ready for
// the value fields.
func (h *digester) point(d *Digest, metric uint64, attrs pcommon.Map, start, ts pcommon.Timestamp) []byte {
	series := metric ^ h.attrs(attrs)*0x94d049bb133111eb
	d.Points++
	d.Series += mix(series)
	b := binary.LittleEndian.AppendUint64(h.buf[:0], series)
	b = binary.LittleEndian.AppendUint64(b, uint64(start))
	b = binary.LittleEndian.AppendUint64(b, uint64(ts))
	d.Times += xxhash.Sum64(b)
	return b[:8]
}

// finish adds the value hash of b (the series hash and the value fields)
// and flags, and the point's exemplars, to d.
func (h *digester) finish(d *Digest, b []byte, flags uint32, exs pmetric.ExemplarSlice) {
	b = binary.LittleEndian.AppendUint32(b, flags)
	d.Values += xxhash.Sum64(b)
	series := binary.LittleEndian.Uint64(b)
	for i := range exs.Len() {
		e := exs.At(i)
		b = binary.LittleEndian.AppendUint64(b[:0], series)
		b = binary.LittleEndian.AppendUint64(b, uint64(e.Timestamp()))
		b = append(b, byte(e.ValueType()))
		if e.ValueType() == pmetric.ExemplarValueTypeInt {
			b = binary.LittleEndian.AppendUint64(b, uint64(e.IntValue()))
		} else {
			b = appendFloat(b, e.DoubleValue())
		}
		t, s := e.TraceID(), e.SpanID()
		b = append(b, t[:]...)
		b = append(b, s[:]...)
		h.buf = b
		d.Exemplars += xxhash.Sum64(b) + h.attrs(e.FilteredAttributes())
	}
	h.buf = b
}

// attrs returns the hash of a set of attributes: the sum of the hashes of
// its key-value pairs, so their order does not matter. It uses h.buf.
func (h *digester) attrs(m pcommon.Map) uint64 {
	var sum uint64
	for k, v := range m.All() {
		b := appendStr(h.buf[:0], k)
		b = appendValue(b, v)
		h.buf = b
		sum += xxhash.Sum64(b)
	}
	return sum
}

// appendValue appends the type and contents of v.
func appendValue(b []byte, v pcommon.Value) []byte {
	b = append(b, byte(v.Type()))
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return appendStr(b, v.Str())
	case pcommon.ValueTypeInt:
		return binary.LittleEndian.AppendUint64(b, uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		return appendFloat(b, v.Double())
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return append(b, 1)
		}
		return append(b, 0)
	case pcommon.ValueTypeBytes:
		return appendStr(b, string(v.Bytes().AsRaw()))
	case pcommon.ValueTypeSlice, pcommon.ValueTypeMap:
		return appendStr(b, v.AsString())
	}
	return b
}

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendFloat(b []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
}

func appendOptFloat(b []byte, ok bool, f float64) []byte {
	if !ok {
		return append(b, 0)
	}
	return appendFloat(append(b, 1), f)
}

// mix scrambles a hash so that sums of related hashes do not cancel.
func mix(x uint64) uint64 {
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return x
}
