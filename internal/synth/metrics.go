package synth

import (
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Metrics returns an ExportMetricsServiceRequest shaped by cfg, describing a
// Kubernetes cluster of 500 pods on 100 nodes in 10 namespaces with a
// universe of 40 metric names: gauges, monotonic and non-monotonic
// cumulative sums, histograms, exponential histograms and summaries. Each
// data point is a series with 40 attributes (labels). A scope's data points
// are spread over adjacent metric names, at least one of each kind when
// there are six or more points. The result is a new slice.
func Metrics(cfg Config) []byte {
	g := newMetricsGen(cfg, defaultProfile)
	return g.generate(cfg)
}

type metricsGen struct {
	gen
	c        *cluster
	counts   []uint64 // scratch bucket counts
	weights  []float64
	scrapeAt uint64 // time of the scope's data points
}

func newMetricsGen(cfg Config, p profile) *metricsGen {
	return &metricsGen{gen: newGen(cfg, streamMetrics, p), c: getCluster()}
}

func (g *metricsGen) generate(cfg Config) []byte {
	return g.layout(cfg,
		func(int) { g.writeTargetResource() },
		func(int, int) string { return g.writeScope(metricScopes) },
		g.metrics)
}

var metricScopes = []scopeInfo{
	{"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver", "0.130.0", ""},
	{"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/kubeletstatsreceiver", "0.130.0", ""},
	{"go.opentelemetry.io/contrib/instrumentation/runtime", "0.62.0", "https://opentelemetry.io/schemas/1.26.0"},
	{"io.opentelemetry.runtime-telemetry-java17", "2.17.0-alpha", ""},
}

var scrapeJobs = []string{"kubernetes-pods", "kubelet", "cadvisor", "kube-state-metrics", "node-exporter"}

// targetKeys are the resource attributes of a scrape target, most
// important first.
var targetKeys = []string{
	"service.name", "service.instance.id", "k8s.cluster.name", "k8s.node.name",
	"host.name", "server.address", "server.port", "url.scheme", "cloud.provider",
	"cloud.region", "cloud.availability_zone", "k8s.namespace.name", "host.arch", "os.type",
}

// writeTargetResource writes the fields of the Resource of a scrape target
// on a random node.
func (g *metricsGen) writeTargetResource() {
	job := oneOf(&g.gen, scrapeJobs)
	n := &g.c.nodes[g.r.IntN(clusterNodes)]
	port := oneOf(&g.gen, []string{"10250", "9100", "8080", "9090"})
	lo, hi := g.p.resourceAttrs[0], min(g.p.resourceAttrs[1], len(targetKeys))
	count := min(lo+g.r.IntN(hi-lo+1), len(targetKeys))
	e := g.e
	for i, key := range targetKeys[:count] {
		switch i {
		case 0:
			e.kvString(resourceAttributes, key, job)
		case 1:
			g.tmp = append(append(append(g.tmp[:0], n.ip...), ':'), port...)
			if g.copy > 0 {
				g.tmp = strconv.AppendInt(append(g.tmp, '/'), int64(g.copy), 10)
			}
			e.kvStringBytes(resourceAttributes, key, g.tmp)
		case 2:
			e.kvString(resourceAttributes, key, "prod-us-east-1")
		case 3, 4:
			e.kvString(resourceAttributes, key, n.name)
		case 5:
			e.kvString(resourceAttributes, key, n.ip)
		case 6:
			e.kvString(resourceAttributes, key, port)
		case 7:
			e.kvString(resourceAttributes, key, "http")
		case 8:
			e.kvString(resourceAttributes, key, "aws")
		case 9:
			e.kvString(resourceAttributes, key, "us-east-1")
		case 10:
			e.kvString(resourceAttributes, key, n.zone)
		case 11:
			e.kvString(resourceAttributes, key, "monitoring")
		case 12:
			e.kvString(resourceAttributes, key, "amd64")
		case 13:
			e.kvString(resourceAttributes, key, "linux")
		}
	}
}

// seriesStrides step through the pods; all are prime to clusterPods, so a
// metric's first 500 series are distinct pods.
var seriesStrides = []int{7, 13, 31, 37, 41, 43}

// metrics writes the Metric fields of a ScopeMetrics holding n data points.
func (g *metricsGen) metrics(_, _ int, n int) {
	if n <= 0 {
		return
	}
	g.scrapeAt = g.now - uint64(g.r.IntN(1e9))
	if g.jit != nil {
		g.scrapeAt -= uint64(g.jit.IntN(20e6))
	}
	names := len(g.c.metrics)
	nm := min(max((n+24)/25, min(n, int(numKinds))), names)
	first := g.r.IntN(names)
	for j := range nm {
		pts := n / nm
		if j < n%nm {
			pts++
		}
		g.metric((first+j)%names, pts)
	}
}

// metric writes one Metric field with pts data points of metric mi.
func (g *metricsGen) metric(mi, pts int) {
	e := g.e
	def := &g.c.metrics[mi]
	e.begin(scopeContainerRecords)
	e.str(metricName, def.name)
	e.str(metricDescription, def.description)
	e.str(metricUnit, def.unit)
	start, stride := g.r.IntN(clusterPods), oneOf(&g.gen, seriesStrides)
	minMax := g.chance(0.5)
	series := func(k int) (p int, variant int) { return (start + k*stride) % clusterPods, k / clusterPods }
	switch def.kind {
	case kindGauge:
		e.begin(metricGauge)
		for k := range pts {
			p, v := series(k)
			g.numberPoint(mi, p, v)
		}
		e.end()
	case kindSum, kindUpDownSum:
		e.begin(metricSum)
		for k := range pts {
			p, v := series(k)
			g.numberPoint(mi, p, v)
		}
		e.varint(dataTemporality, temporalityCumulative)
		if def.kind == kindSum {
			e.boolAlways(dataIsMonotonic, true)
		}
		e.end()
	case kindHistogram:
		e.begin(metricHistogram)
		for k := range pts {
			p, v := series(k)
			g.histogramPoint(mi, p, v, minMax)
		}
		e.varint(dataTemporality, temporalityCumulative)
		e.end()
	case kindExpHistogram:
		e.begin(metricExponentialHistogram)
		for k := range pts {
			p, v := series(k)
			g.expHistogramPoint(mi, p, v)
		}
		e.varint(dataTemporality, temporalityCumulative)
		e.end()
	case kindSummary:
		e.begin(metricSummary)
		for k := range pts {
			p, v := series(k)
			g.summaryPoint(mi, p, v)
		}
		e.end()
	}
	e.end()
}

// seriesAttrs writes the labels of the series of pod p; variant > 0 makes
// the container label distinct when a metric has more series than pods.
func (g *metricsGen) seriesAttrs(num protowire.Number, p, variant int) {
	labels := &g.c.pods[p].labels
	for i := range g.attrCount(len(seriesKeys), len(seriesKeys)) {
		if i == 2 && variant > 0 {
			g.tmp = append(append(g.tmp[:0], labels[i]...), '-')
			g.tmp = strconv.AppendInt(g.tmp, int64(variant), 10)
			g.e.kvStringBytes(num, seriesKeys[i], g.tmp)
			continue
		}
		g.e.kvString(num, seriesKeys[i], labels[i])
	}
}

// rate returns a stable per-series factor in [0.5, 1.5) for metric mi of pod p.
func rate(mi, p int) float64 {
	x := uint64(mi)*0x9e3779b97f4a7c15 ^ uint64(p)*0xbf58476d1ce4e5b9
	x ^= x >> 31
	x *= 0x94d049bb133111eb
	x ^= x >> 29
	return 0.5 + float64(x>>11)/(1<<53)
}

// elapsed returns the series' start time and its age in seconds.
func (g *metricsGen) elapsed(p int) (start uint64, seconds float64) {
	start = g.base - g.c.pods[p].uptime
	seconds = float64(g.scrapeAt-start) / 1e9
	if g.jit != nil {
		// Up to 0.9 s more, drawn per scrape: counts still grow from one
		// scrape to the next, a second later, by 0.1 to 1.9 seconds' worth.
		seconds += 0.9 * g.jit.Float64()
	}
	return start, seconds
}

// numberPoint writes a NumberDataPoint of a gauge or sum.
func (g *metricsGen) numberPoint(mi, p, variant int) {
	e := g.e
	def := &g.c.metrics[mi]
	e.begin(dataPoints)
	g.seriesAttrs(numberAttributes, p, variant)
	start, secs := g.elapsed(p)
	if def.kind != kindGauge {
		e.fixed64(numberStartTime, start)
	}
	e.fixed64(numberTime, g.scrapeAt)
	noValue := !g.p.fixture && def.kind == kindGauge && g.chance(0.002)
	var v float64
	switch def.kind {
	case kindSum:
		v = def.scale * rate(mi, p) * secs
	default:
		u := g.r.Float64()
		if g.drift {
			d := 0.2 * math.Sin(g.wobble+2*math.Pi*rate(mi, p))
			if g.jit != nil {
				d += 0.1 * (g.jit.Float64() - 0.5)
			}
			u = min(max(u+d, 0), 1)
		}
		v = def.scale * (0.5 + u)
	}
	if !noValue {
		if def.isInt {
			e.fixed64Always(numberAsInt, uint64(int64(v)))
		} else {
			e.doubleAlways(numberAsDouble, v)
		}
	}
	if def.kind == kindSum && def.isInt && g.chance(0.05) {
		g.exemplar(numberExemplars, 0, true)
	}
	if noValue {
		e.varint(numberFlags, 1) // FLAG_NO_RECORDED_VALUE
	}
	e.end()
}

// exemplar writes an Exemplar field num of a data point with value v, or
// the int value 1 if isInt.
func (g *metricsGen) exemplar(num protowire.Number, v float64, isInt bool) {
	e := g.e
	e.begin(num)
	if !g.p.fixture && g.chance(0.3) {
		e.kvString(exemplarFilteredAttributes, "http.route", oneOf(&g.gen, httpRoutes))
	}
	e.fixed64(exemplarTime, g.scrapeAt-uint64(g.r.IntN(15e9)))
	if isInt {
		e.fixed64Always(exemplarAsInt, 1)
	} else {
		e.doubleAlways(exemplarAsDouble, v)
	}
	t, s := g.traceID(), g.spanID()
	e.bytes(exemplarTraceID, t[:])
	e.bytes(exemplarSpanID, s[:])
	e.end()
}

// histogramPoint writes a HistogramDataPoint of a cumulative histogram.
func (g *metricsGen) histogramPoint(mi, p, variant int, minMax bool) {
	e := g.e
	def := &g.c.metrics[mi]
	e.begin(dataPoints)
	g.seriesAttrs(histAttributes, p, variant)
	start, secs := g.elapsed(p)
	e.fixed64(histStartTime, start)
	e.fixed64(histTime, g.scrapeAt)
	count := uint64(rate(mi, p) * 3 * secs)
	e.fixed64(histCount, count)
	e.doubleAlways(histSum, float64(count)*def.scale*(0.8+0.4*g.r.Float64()))
	// Bell-shaped counts on a log scale around def.scale.
	g.weights = g.weights[:0]
	total := 0.0
	for i := range len(def.bounds) + 1 {
		b := def.bounds[min(i, len(def.bounds)-1)]
		if i == len(def.bounds) {
			b *= 4
		}
		d := math.Log(b/def.scale) + g.r.Float64()*0.5
		w := math.Exp(-d * d / 2)
		g.weights = append(g.weights, w)
		total += w
	}
	g.counts = g.counts[:0]
	left := count
	for i, w := range g.weights {
		c := min(uint64(float64(count)*w/total), left)
		if i == len(g.weights)-1 {
			c = left
		}
		g.counts = append(g.counts, c)
		left -= c
	}
	e.packedFixed64(histBucketCounts, g.counts)
	e.packedDouble(histExplicitBounds, def.bounds)
	if g.chance(0.1) {
		g.exemplar(histExemplars, def.scale*(0.5+g.r.Float64()), false)
	}
	if minMax && count > 0 {
		e.doubleAlways(histMin, def.scale*(0.01+0.04*g.r.Float64()))
		e.doubleAlways(histMax, def.scale*(5+20*g.r.Float64()))
	}
	e.end()
}

// expHistogramPoint writes an ExponentialHistogramDataPoint at scale 3.
func (g *metricsGen) expHistogramPoint(mi, p, variant int) {
	const scale = 3
	e := g.e
	def := &g.c.metrics[mi]
	e.begin(dataPoints)
	g.seriesAttrs(expAttributes, p, variant)
	start, secs := g.elapsed(p)
	e.fixed64(expStartTime, start)
	e.fixed64(expTime, g.scrapeAt)
	center := int(math.Floor(math.Log2(def.scale) * (1 << scale)))
	offset := center - 8 - g.r.IntN(4)
	nb := 12 + g.r.IntN(8)
	perSec := rate(mi, p) * 2
	g.counts = g.counts[:0]
	count := uint64(0)
	for i := range nb {
		d := float64(offset+i-center) / 4
		c := uint64(perSec * secs * math.Exp(-d*d/2) / 4)
		g.counts = append(g.counts, c)
		count += c
	}
	zero := uint64(g.r.IntN(3))
	count += zero
	e.fixed64(expCount, count)
	e.doubleAlways(expSum, float64(count)*def.scale*(0.9+0.2*g.r.Float64()))
	e.sint32(expScale, scale)
	e.fixed64(expZeroCount, zero)
	e.begin(expPositive)
	e.sint32(bucketsOffset, int32(offset))
	e.packedVarint(bucketsBucketCounts, g.counts)
	e.end()
	e.begin(expNegative) // the SDKs send empty negative buckets
	e.end()
	if g.chance(0.05) {
		g.exemplar(expExemplars, def.scale*(0.5+g.r.Float64()), false)
	}
	if count > 0 {
		e.doubleAlways(expMin, math.Exp2(float64(offset)/(1<<scale)))
		e.doubleAlways(expMax, math.Exp2(float64(offset+nb)/(1<<scale)))
	}
	e.end()
}

// summaryPoint writes a SummaryDataPoint.
func (g *metricsGen) summaryPoint(mi, p, variant int) {
	e := g.e
	def := &g.c.metrics[mi]
	e.begin(dataPoints)
	g.seriesAttrs(summaryAttributes, p, variant)
	start, secs := g.elapsed(p)
	e.fixed64(summaryStartTime, start)
	e.fixed64(summaryTime, g.scrapeAt)
	count := uint64(rate(mi, p) * secs / 10)
	e.fixed64(summaryCount, count)
	e.double(summarySum, float64(count)*def.scale*(0.9+0.2*g.r.Float64()))
	v := def.scale * (0.2 + 0.2*g.r.Float64())
	for _, q := range def.quantiles {
		e.begin(summaryQuantileValues)
		e.double(quantileQuantile, q)
		e.double(quantileValue, v*(1+4*q*q))
		e.end()
	}
	e.end()
}
