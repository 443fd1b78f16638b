package synth

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// metric writes the fields of a Metric: one of the five kinds, or no data.
func (g *randGen) metric() {
	e := g.e
	g.str(metricName)
	g.str(metricDescription)
	g.str(metricUnit)
	kind := g.r.IntN(6)
	if kind < 5 {
		e.begin([...]protowire.Number{metricGauge, metricSum, metricHistogram, metricExponentialHistogram, metricSummary}[kind])
		g.unknowns()
		for range g.r.IntN(4) {
			e.begin(dataPoints)
			g.unknowns()
			switch kind {
			case 0, 1:
				g.numberPoint()
			case 2:
				g.histogramPoint()
			case 3:
				g.expHistogramPoint()
			case 4:
				g.summaryPoint()
			}
			g.unknowns()
			e.end()
		}
		if kind == 1 || kind == 2 || kind == 3 {
			g.varint(dataTemporality, uint64(g.r.IntN(3)))
		}
		if kind == 1 {
			if write, zero := g.presence(); write {
				e.boolAlways(dataIsMonotonic, !zero && g.chance(0.5))
			}
		}
		g.unknowns()
		e.end()
	}
	g.attrs(metricMetadata, 2, 0)
}

// exemplars writes 0-2 Exemplar fields num.
func (g *randGen) exemplars(num protowire.Number) {
	e := g.e
	for range g.r.IntN(3) {
		e.begin(num)
		g.unknowns()
		g.attrs(exemplarFilteredAttributes, 2, 0)
		g.fixed64(exemplarTime, g.timestamp())
		switch g.r.IntN(3) {
		case 0:
			e.doubleAlways(exemplarAsDouble, g.float())
		case 1:
			e.fixed64Always(exemplarAsInt, uint64(g.int64()))
		}
		g.id(exemplarTraceID, 16)
		g.id(exemplarSpanID, 8)
		g.unknowns()
		e.end()
	}
}

func (g *randGen) numberPoint() {
	e := g.e
	g.attrs(numberAttributes, 4, 0)
	g.fixed64(numberStartTime, g.timestamp())
	g.fixed64(numberTime, g.timestamp())
	switch g.r.IntN(3) {
	case 0:
		e.doubleAlways(numberAsDouble, g.float())
	case 1:
		e.fixed64Always(numberAsInt, uint64(g.int64()))
	}
	g.exemplars(numberExemplars)
	g.varint(numberFlags, uint64(g.r.IntN(2)))
}

func (g *randGen) histogramPoint() {
	e := g.e
	g.attrs(histAttributes, 4, 0)
	g.fixed64(histStartTime, g.timestamp())
	g.fixed64(histTime, g.timestamp())
	g.fixed64(histCount, g.r.Uint64()>>g.r.IntN(64))
	if g.chance(0.6) {
		e.doubleAlways(histSum, g.float())
	}
	n := g.r.IntN(6)
	counts := make([]uint64, n)
	for i := range counts {
		counts[i] = g.r.Uint64() >> g.r.IntN(64)
	}
	g.packedOrEmpty(histBucketCounts, func() { e.packedFixed64(histBucketCounts, counts) }, n)
	bounds := make([]float64, max(n-1, 0))
	for i := range bounds {
		bounds[i] = g.float()
	}
	g.packedOrEmpty(histExplicitBounds, func() { e.packedDouble(histExplicitBounds, bounds) }, len(bounds))
	g.exemplars(histExemplars)
	g.varint(histFlags, uint64(g.r.IntN(2)))
	if g.chance(0.5) {
		e.doubleAlways(histMin, g.float())
	}
	if g.chance(0.5) {
		e.doubleAlways(histMax, g.float())
	}
}

// packedOrEmpty runs write, or sometimes writes field num as an empty packed
// field when there are no elements.
func (g *randGen) packedOrEmpty(num protowire.Number, write func(), n int) {
	if n == 0 && g.chance(0.3) {
		g.e.bytesAlways(num, nil)
		return
	}
	write()
}

func (g *randGen) expHistogramPoint() {
	e := g.e
	g.attrs(expAttributes, 4, 0)
	g.fixed64(expStartTime, g.timestamp())
	g.fixed64(expTime, g.timestamp())
	g.fixed64(expCount, g.r.Uint64()>>g.r.IntN(64))
	if g.chance(0.6) {
		e.doubleAlways(expSum, g.float())
	}
	if write, zero := g.presence(); zero {
		e.varintAlways(expScale, 0)
	} else if write {
		e.sint32(expScale, int32(g.r.IntN(31)-10))
	}
	g.fixed64(expZeroCount, uint64(g.r.IntN(100)))
	for _, num := range []protowire.Number{expPositive, expNegative} {
		if g.chance(0.2) {
			continue
		}
		e.begin(num)
		g.unknowns()
		if write, zero := g.presence(); zero {
			e.varintAlways(bucketsOffset, 0)
		} else if write {
			e.sint32(bucketsOffset, int32(g.r.IntN(2001)-1000))
		}
		counts := make([]uint64, g.r.IntN(8))
		for i := range counts {
			counts[i] = g.r.Uint64() >> g.r.IntN(64)
		}
		g.packedOrEmpty(bucketsBucketCounts, func() { e.packedVarint(bucketsBucketCounts, counts) }, len(counts))
		g.unknowns()
		e.end()
	}
	g.varint(expFlags, uint64(g.r.IntN(2)))
	g.exemplars(expExemplars)
	if g.chance(0.5) {
		e.doubleAlways(expMin, g.float())
	}
	if g.chance(0.5) {
		e.doubleAlways(expMax, g.float())
	}
	g.double(expZeroThreshold, math.Abs(g.float()))
}

func (g *randGen) summaryPoint() {
	e := g.e
	g.attrs(summaryAttributes, 4, 0)
	g.fixed64(summaryStartTime, g.timestamp())
	g.fixed64(summaryTime, g.timestamp())
	g.fixed64(summaryCount, g.r.Uint64()>>g.r.IntN(64))
	g.double(summarySum, g.float())
	for range g.r.IntN(4) {
		e.begin(summaryQuantileValues)
		g.unknowns()
		g.double(quantileQuantile, g.r.Float64())
		g.double(quantileValue, g.float())
		g.unknowns()
		e.end()
	}
	g.varint(summaryFlags, uint64(g.r.IntN(2)))
}
