package loadgen

import (
	"hash/maphash"
	"math"
	"strconv"

	"github.com/prometheus/otlptranslator"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// family is what one Prometheus metric name should hold after an OTLP run:
// its series and its samples, by hash.
type family struct {
	series  map[uint64]struct{}
	samples map[[2]uint64]struct{} // series hash, timestamp in ms
}

// expectation derives, independently of the store, the Prometheus series
// and samples that Prometheus' OTLP rules make of OTLP metrics: names by
// otlptranslator with unit and type suffixes; gauges and sums one series
// each; classic histograms _bucket (one per finite bound, and +Inf), _sum
// when present and _count; summaries one series per quantile, _sum and
// _count; exponential histograms one native-histogram series. Points
// flagged no-recorded-value become stale markers, which queries do not
// count, and delta temporality (which the generators do not make; the
// store makes it cumulative, refusing points out of order) is left out.
type expectation struct {
	namer    otlptranslator.MetricNamer
	seed     maphash.Seed
	families map[string]*family
	key      []byte
	first    int64 // ms; -1 before any point
	last     int64

	mf otlpwire.MetricFields
	nf otlpwire.NumberDataPointFields
	hf otlpwire.HistogramDataPointFields
	ef otlpwire.ExponentialHistogramDataPointFields
	sf otlpwire.SummaryDataPointFields
}

func newExpectation() *expectation {
	return &expectation{
		namer:    otlptranslator.MetricNamer{WithMetricSuffixes: true},
		seed:     maphash.MakeSeed(),
		families: map[string]*family{},
		first:    -1,
		last:     -1,
	}
}

// add adds the points of an acknowledged request.
func (x *expectation) add(req otlpwire.MetricsRequest) error {
	return walkMetrics(req, &x.mf, func(ids string) error {
		mf := &x.mf
		m := otlptranslator.Metric{Name: string(mf.Name), Unit: string(mf.Unit)}
		const cumulative = 2
		switch mf.Type {
		case otlpwire.MetricTypeGauge:
			m.Type = otlptranslator.MetricTypeGauge
		case otlpwire.MetricTypeSum:
			if mf.AggregationTemporality != cumulative {
				return nil
			}
			m.Type = otlptranslator.MetricTypeNonMonotonicCounter
			if mf.IsMonotonic {
				m.Type = otlptranslator.MetricTypeMonotonicCounter
			}
		case otlpwire.MetricTypeHistogram:
			if mf.AggregationTemporality != cumulative {
				return nil
			}
			m.Type = otlptranslator.MetricTypeHistogram
		case otlpwire.MetricTypeExponentialHistogram:
			if mf.AggregationTemporality != cumulative {
				return nil
			}
			m.Type = otlptranslator.MetricTypeExponentialHistogram
		case otlpwire.MetricTypeSummary:
			m.Type = otlptranslator.MetricTypeSummary
		default:
			return nil
		}
		name, err := x.namer.Build(m)
		if err != nil {
			return nil // the store refuses it too
		}
		switch mf.Type {
		case otlpwire.MetricTypeGauge, otlpwire.MetricTypeSum:
			return mf.NumberDataPoints().Each(func(p otlpwire.NumberDataPoint) error {
				f := &x.nf
				if err := p.Read(f); err != nil {
					return err
				}
				if f.Flags&1 != 0 {
					return nil
				}
				return x.point(name, "", ids, f.Attributes, f.Time)
			})
		case otlpwire.MetricTypeHistogram:
			return mf.HistogramDataPoints().Each(func(p otlpwire.HistogramDataPoint) error {
				f := &x.hf
				if err := p.Read(f); err != nil {
					return err
				}
				if f.Flags&1 != 0 {
					return nil
				}
				nb, err := f.ExplicitBounds.Len()
				if err != nil {
					return err
				}
				nc, err := f.BucketCounts.Len()
				if err != nil {
					return err
				}
				if !(nb == 0 && nc == 0) && nc != nb+1 {
					return nil // refused: counts do not match bounds
				}
				for b, err := range f.ExplicitBounds.All() {
					if err != nil {
						return err
					}
					if !math.IsInf(b, 1) {
						if err := x.point(name+"_bucket", "le="+strconv.FormatFloat(b, 'g', -1, 64), ids, f.Attributes, f.Time); err != nil {
							return err
						}
					}
				}
				if err := x.point(name+"_bucket", "le=+Inf", ids, f.Attributes, f.Time); err != nil {
					return err
				}
				if f.HasSum {
					if err := x.point(name+"_sum", "", ids, f.Attributes, f.Time); err != nil {
						return err
					}
				}
				return x.point(name+"_count", "", ids, f.Attributes, f.Time)
			})
		case otlpwire.MetricTypeExponentialHistogram:
			return mf.ExponentialHistogramDataPoints().Each(func(p otlpwire.ExponentialHistogramDataPoint) error {
				f := &x.ef
				if err := p.Read(f); err != nil {
					return err
				}
				if f.Flags&1 != 0 {
					return nil
				}
				return x.point(name, "", ids, f.Attributes, f.Time)
			})
		case otlpwire.MetricTypeSummary:
			return mf.SummaryDataPoints().Each(func(p otlpwire.SummaryDataPoint) error {
				f := &x.sf
				if err := p.Read(f); err != nil {
					return err
				}
				if f.Flags&1 != 0 {
					return nil
				}
				err := f.QuantileValues.Each(func(q otlpwire.ValueAtQuantile) error {
					quantile, _, err := q.Read()
					if err != nil {
						return err
					}
					return x.point(name, "quantile="+strconv.FormatFloat(quantile, 'g', -1, 64), ids, f.Attributes, f.Time)
				})
				if err != nil {
					return err
				}
				if err := x.point(name+"_sum", "", ids, f.Attributes, f.Time); err != nil {
					return err
				}
				return x.point(name+"_count", "", ids, f.Attributes, f.Time)
			})
		}
		return nil
	})
}

// point adds one sample at t (ns) of the series of family name with the
// resource and scope ids, the point's attributes and an extra label.
func (x *expectation) point(name, extra, ids string, attrs otlpwire.Attributes, t uint64) error {
	k, err := pointKey([]byte(ids), attrs)
	if err != nil {
		return err
	}
	x.key = append(append(append(x.key[:0], k...), 0), extra...)
	h := maphash.Bytes(x.seed, x.key)
	f := x.families[name]
	if f == nil {
		f = &family{series: map[uint64]struct{}{}, samples: map[[2]uint64]struct{}{}}
		x.families[name] = f
	}
	ms := int64(t / 1e6)
	f.series[h] = struct{}{}
	f.samples[[2]uint64{h, uint64(ms)}] = struct{}{}
	if x.first < 0 || ms < x.first {
		x.first = ms
	}
	x.last = max(x.last, ms)
	return nil
}

// distinct counts the data points of OTLP metrics requests that are
// distinct by series and millisecond: what a TSDB can store of them, one
// sample per series and millisecond (the first point of a millisecond; a
// later one is the same sample again or refused). A point's series is its
// metric (name, unit, type), its resource's and scope's identity as
// walkMetrics gives it, and its attributes (Prometheus' translation labels
// a series with nothing else).
type distinct struct {
	seed maphash.Seed
	seen map[[2]uint64]struct{} // series hash, ms
	n    int64
	key  []byte
	mf   otlpwire.MetricFields
}

func newDistinct() *distinct {
	return &distinct{seed: maphash.MakeSeed(), seen: map[[2]uint64]struct{}{}}
}

// add counts the points of req.
func (d *distinct) add(req otlpwire.MetricsRequest) error {
	var (
		nf otlpwire.NumberDataPointFields
		hf otlpwire.HistogramDataPointFields
		ef otlpwire.ExponentialHistogramDataPointFields
		sf otlpwire.SummaryDataPointFields
	)
	return walkMetrics(req, &d.mf, func(ids string) error {
		mf := &d.mf
		metric := string(mf.Name) + "\x00" + string(mf.Unit) + "\x00" + strconv.Itoa(int(mf.Type)) + "\x00" + ids
		var err error
		switch mf.Type {
		case otlpwire.MetricTypeGauge, otlpwire.MetricTypeSum:
			err = mf.NumberDataPoints().Each(func(p otlpwire.NumberDataPoint) error {
				if err := p.Read(&nf); err != nil {
					return err
				}
				return d.point(metric, nf.Attributes, nf.Time)
			})
		case otlpwire.MetricTypeHistogram:
			err = mf.HistogramDataPoints().Each(func(p otlpwire.HistogramDataPoint) error {
				if err := p.Read(&hf); err != nil {
					return err
				}
				return d.point(metric, hf.Attributes, hf.Time)
			})
		case otlpwire.MetricTypeExponentialHistogram:
			err = mf.ExponentialHistogramDataPoints().Each(func(p otlpwire.ExponentialHistogramDataPoint) error {
				if err := p.Read(&ef); err != nil {
					return err
				}
				return d.point(metric, ef.Attributes, ef.Time)
			})
		case otlpwire.MetricTypeSummary:
			err = mf.SummaryDataPoints().Each(func(p otlpwire.SummaryDataPoint) error {
				if err := p.Read(&sf); err != nil {
					return err
				}
				return d.point(metric, sf.Attributes, sf.Time)
			})
		}
		return err
	})
}

func (d *distinct) point(metric string, attrs otlpwire.Attributes, t uint64) error {
	k, err := pointKey([]byte(metric), attrs)
	if err != nil {
		return err
	}
	d.key = append(d.key[:0], k...)
	key := [2]uint64{maphash.Bytes(d.seed, d.key), t / 1e6}
	if _, ok := d.seen[key]; !ok {
		d.seen[key] = struct{}{}
		d.n++
	}
	return nil
}
