package metricstore

import (
	"math"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/value"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// defaultZeroThreshold is the zero threshold Prometheus gives every
// translated exponential histogram (OTLP's zero_threshold is not used yet).
const defaultZeroThreshold = 1e-128

// nativeHistogram is Prometheus' exponentialToNativeHistogram for a
// cumulative point: a new integer native histogram, scaled down to schema 8
// when finer, or nil when the scale is below histogram.ExponentialSchemaMin.
// The result is new: the TSDB keeps it until the commit.
func (a *appendState) nativeHistogram(f *otlpwire.ExponentialHistogramDataPointFields) (*histogram.Histogram, error) {
	scale := f.Scale
	if scale < histogram.ExponentialSchemaMin {
		return nil, nil
	}
	var scaleDown int32
	if scale > histogram.ExponentialSchemaMax {
		scaleDown = scale - histogram.ExponentialSchemaMax
		scale = histogram.ExponentialSchemaMax
	}
	var err error
	if a.counts, err = f.Positive.BucketCounts.AppendTo(a.counts[:0]); err != nil {
		return nil, err
	}
	pSpans, pDeltas := convertBucketsLayout(a.counts, f.Positive.Offset, scaleDown)
	if a.counts, err = f.Negative.BucketCounts.AppendTo(a.counts[:0]); err != nil {
		return nil, err
	}
	nSpans, nDeltas := convertBucketsLayout(a.counts, f.Negative.Offset, scaleDown)
	h := &histogram.Histogram{
		// Counter reset detection is left to the TSDB, as in Prometheus.
		CounterResetHint: histogram.UnknownCounterReset,
		Schema:           scale,
		ZeroThreshold:    defaultZeroThreshold,
		ZeroCount:        f.ZeroCount,
		PositiveSpans:    pSpans,
		PositiveBuckets:  pDeltas,
		NegativeSpans:    nSpans,
		NegativeBuckets:  nDeltas,
	}
	if f.Flags&flagNoRecordedValue != 0 {
		h.Sum = math.Float64frombits(value.StaleNaN)
		h.Count = value.StaleNaN
	} else {
		if f.HasSum {
			h.Sum = f.Sum
		}
		h.Count = f.Count
	}
	return h, nil
}

// convertBucketsLayout is Prometheus' convertBucketsLayout with
// adjustOffset (storage/remote/otlptranslator/prometheusremotewrite,
// Apache-2.0, itself from client_golang's makeBuckets): dense OTLP buckets
// to sparse spans and deltas, merging 2^scaleDown buckets into one and
// shifting the index by one (OTLP bucket 0 is (1, base], Prometheus'
// (base^-1, 1]).
func convertBucketsLayout(bucketCounts []uint64, offset, scaleDown int32) ([]histogram.Span, []int64) {
	if len(bucketCounts) == 0 {
		return nil, nil
	}
	var (
		spans     []histogram.Span
		deltas    []int64
		count     int64
		prevCount int64
	)
	appendDelta := func(count int64) {
		spans[len(spans)-1].Length++
		deltas = append(deltas, count-prevCount)
		prevCount = count
	}
	bucketIdx := offset>>scaleDown + 1
	lastIdx := bucketIdx - 1
	spans = append(spans, histogram.Span{Offset: offset>>scaleDown + 1})
	appendBucket := func() {
		gap := bucketIdx - lastIdx - 1
		if gap > 2 {
			spans = append(spans, histogram.Span{Offset: gap})
		} else {
			for range gap {
				appendDelta(0)
			}
		}
		appendDelta(count)
		lastIdx = bucketIdx
	}
	for i := range bucketCounts {
		next := (int32(i)+offset)>>scaleDown + 1
		if bucketIdx == next {
			count += int64(bucketCounts[i])
			continue
		}
		if count != 0 {
			appendBucket()
		}
		count = int64(bucketCounts[i])
		bucketIdx = next
	}
	appendBucket()
	return spans, deltas
}
