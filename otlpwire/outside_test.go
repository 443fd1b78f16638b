package otlpwire_test

import (
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Every iterator, Each and packed view, ranged over as a caller in another
// package writes it: the loop bodies capture and update local variables,
// which is what made the closures escape before (a function value handed
// to a generic function of another package is assumed to escape).
// TestZeroAllocs covers the walks, counts, splits and hashes; this covers
// the parts of the API those walks do not reach.

func valueSum(v otlpwire.Value) int {
	n := 0
	switch v.Type() {
	case otlpwire.ValueArray:
		for e, err := range v.Array().All() {
			if err != nil {
				return -1
			}
			n += valueSum(e) + 1
		}
	case otlpwire.ValueKVList:
		for kv, err := range v.KVList().All() {
			if err != nil {
				return -1
			}
			n += len(kv.Key) + valueSum(kv.Value)
		}
	case otlpwire.ValueString:
		n += len(v.Str())
	}
	return n
}

func attrSum(a otlpwire.Attributes) int {
	n := 0
	for kv, err := range a.All() {
		if err != nil {
			return -1
		}
		n += len(kv.Key) + valueSum(kv.Value)
	}
	return n
}

// pointsOutside reads every point kind with Each and All, the packed
// buckets and bounds, quantiles and exemplars.
func pointsOutside(in []byte) (int, error) {
	n := 0
	var mf otlpwire.MetricFields
	var hf otlpwire.HistogramDataPointFields
	var ef otlpwire.ExponentialHistogramDataPointFields
	var sf otlpwire.SummaryDataPointFields
	var xf otlpwire.ExemplarFields
	var nf otlpwire.NumberDataPointFields
	for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
		if err != nil {
			return 0, err
		}
		for sm, err := range rm.ScopeMetrics() {
			if err != nil {
				return 0, err
			}
			for m, err := range sm.Metrics() {
				if err != nil {
					return 0, err
				}
				if err := m.Read(&mf); err != nil {
					return 0, err
				}
				n++
				n += attrSum(mf.Metadata)
				err := mf.NumberDataPoints().Each(func(p otlpwire.NumberDataPoint) error {
					if err := p.Read(&nf); err != nil {
						return err
					}
					n += attrSum(nf.Attributes)
					return nf.Exemplars.Each(func(x otlpwire.Exemplar) error {
						n++
						return x.Read(&xf)
					})
				})
				if err != nil {
					return 0, err
				}
				for p, err := range mf.HistogramDataPoints().All() {
					if err != nil {
						return 0, err
					}
					if err := p.Read(&hf); err != nil {
						return 0, err
					}
					for c, err := range hf.BucketCounts.All() {
						if err != nil {
							return 0, err
						}
						n += int(c & 1)
					}
					for b, err := range hf.ExplicitBounds.All() {
						if err != nil {
							return 0, err
						}
						n += int(b) & 1
					}
					for x, err := range hf.Exemplars.All() {
						if err != nil {
							return 0, err
						}
						if err := x.Read(&xf); err != nil {
							return 0, err
						}
						n += attrSum(xf.FilteredAttributes)
					}
				}
				for p, err := range mf.ExponentialHistogramDataPoints().All() {
					if err != nil {
						return 0, err
					}
					if err := p.Read(&ef); err != nil {
						return 0, err
					}
					for c, err := range ef.Positive.BucketCounts.All() {
						if err != nil {
							return 0, err
						}
						n += int(c & 1)
					}
				}
				err = mf.SummaryDataPoints().Each(func(p otlpwire.SummaryDataPoint) error {
					if err := p.Read(&sf); err != nil {
						return err
					}
					for q, err := range sf.QuantileValues.All() {
						if err != nil {
							return err
						}
						_, v, err := q.Read()
						if err != nil {
							return err
						}
						n += int(v) & 1
					}
					return nil
				})
				if err != nil {
					return 0, err
				}
			}
		}
	}
	return n, nil
}

// spansOutside reads every span's events and links.
func spansOutside(in []byte) (int, error) {
	n := 0
	var sf otlpwire.SpanFields
	var ef otlpwire.SpanEventFields
	var lf otlpwire.SpanLinkFields
	for rs, err := range otlpwire.TracesRequest(in).ResourceSpans() {
		if err != nil {
			return 0, err
		}
		for ss, err := range rs.ScopeSpans() {
			if err != nil {
				return 0, err
			}
			for sp, err := range ss.Spans() {
				if err != nil {
					return 0, err
				}
				if err := sp.Read(&sf); err != nil {
					return 0, err
				}
				n++
				err := sf.Events.Each(func(e otlpwire.SpanEvent) error {
					if err := e.Read(&ef); err != nil {
						return err
					}
					n += attrSum(ef.Attributes)
					return nil
				})
				if err != nil {
					return 0, err
				}
				for l, err := range sf.Links.All() {
					if err != nil {
						return 0, err
					}
					if err := l.Read(&lf); err != nil {
						return 0, err
					}
					n += attrSum(lf.Attributes)
				}
			}
		}
	}
	return n, nil
}

func TestZeroAllocsOutside(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	for _, s := range []otlpwire.Signal{otlpwire.SignalMetrics, otlpwire.SignalTraces} {
		for i, in := range allocInputs(s) {
			walk := pointsOutside
			if s == otlpwire.SignalTraces {
				walk = spansOutside
			}
			n, err := walk(in)
			if err != nil {
				t.Fatalf("signal=%s input %d: %v", s, i, err)
			}
			if n == 0 {
				t.Fatalf("signal=%s input %d: the walk read nothing", s, i)
			}
			if a := testing.AllocsPerRun(20, func() { _, _ = walk(in) }); a != 0 {
				t.Errorf("signal=%s input %d: %v allocs per walk from outside the package, want 0", s, i, a)
			}
		}
	}
}
