package synth

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// Payload is a metric payload of the metric-server comparison: a stream of
// requests over a fixed set of series whose timestamps move forward one
// round at a time, as periodic exporters send.
type Payload int

// The payloads. Every series belongs to a target (a resource) of 100
// series.
const (
	// PayloadGauge: a gauge with few labels: 2 resource attributes
	// (service.name, service.instance.id) and 2 point attributes.
	PayloadGauge Payload = iota + 1
	// PayloadRich: a gauge with 20 resource attributes and 10 point
	// attributes, for servers that promote them all to labels.
	PayloadRich
	// PayloadHistogram: a cumulative classic histogram with 16 explicit
	// bounds (17 buckets) and 2 resource and 2 point attributes.
	PayloadHistogram
)

// SeriesPerTarget is the number of series that share a resource.
const SeriesPerTarget = 100

// String returns "gauge", "rich" or "histogram", the names ParsePayload
// accepts.
func (p Payload) String() string {
	switch p {
	case PayloadGauge:
		return "gauge"
	case PayloadRich:
		return "rich"
	case PayloadHistogram:
		return "histogram"
	}
	return fmt.Sprintf("Payload(%d)", int(p))
}

// ParsePayload parses "gauge", "rich" or "histogram".
func ParsePayload(s string) (Payload, error) {
	for _, p := range []Payload{PayloadGauge, PayloadRich, PayloadHistogram} {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("synth: unknown payload %q (want gauge, rich or histogram)", s)
}

// SeriesConfig shapes a stream of SeriesRequests.
type SeriesConfig struct {
	Payload Payload
	// Series is the number of distinct series, visited in order, round
	// after round. Values below 1 count as 1.
	Series int
	// Batch is the number of data points per request. Values below 1
	// count as 1.
	Batch int
	// Start is the time of the first round; each later round is one
	// second later.
	Start time.Time
	Order Order
}

// SeriesRequest returns request n (from 0) of the stream cfg describes, an
// ExportMetricsServiceRequest: points n×Batch to n×Batch+Batch-1 of the
// sequence in which point i is series i mod Series at Start plus i div
// Series seconds. So every series gets one point per round, with strictly
// increasing timestamps, and a request never repeats a sample of another.
// Consecutive points of one target share a ResourceMetrics. The same cfg
// and n give the same bytes; the result is a new slice.
func SeriesRequest(cfg SeriesConfig, n int64) []byte {
	series, batch := int64(max(cfg.Series, 1)), int64(max(cfg.Batch, 1))
	e := newEncoder(cfg.Order)
	start := uint64(cfg.Start.UnixNano())
	first := n * batch
	for i := first; i < first+batch; {
		s := i % series
		target := s / SeriesPerTarget
		// The run of points of this target (and this round).
		end := min(first+batch, i-s+min((target+1)*SeriesPerTarget, series))
		round := i / series
		ts := start + uint64(round)*1e9

		e.begin(requestResources)
		e.begin(resourceContainerResource)
		writeSeriesResource(e, cfg.Payload, int(target))
		e.end()
		e.begin(resourceContainerScopes)
		e.begin(scopeContainerScope)
		e.str(scopeName, "github.com/wirehouse/wirehouse/internal/synth")
		e.str(scopeVersion, "1.0.0")
		e.end()
		e.begin(scopeContainerRecords)
		switch cfg.Payload {
		case PayloadHistogram:
			e.str(metricName, "http.server.request.duration")
			e.str(metricDescription, "Duration of HTTP server requests.")
			e.str(metricUnit, "s")
			e.begin(metricHistogram)
			for j := i; j < end; j++ {
				writeHistogramPoint(e, int(j%series), round, start, ts)
			}
			e.varint(dataTemporality, temporalityCumulative)
			e.end()
		default:
			e.str(metricName, "system.cpu.utilization")
			e.str(metricDescription, "CPU utilization, by core and state.")
			e.str(metricUnit, "1")
			e.begin(metricGauge)
			for j := i; j < end; j++ {
				s := int(j % series)
				e.begin(dataPoints)
				writeSeriesPointAttrs(e, numberAttributes, cfg.Payload, s)
				e.fixed64(numberTime, ts)
				e.doubleAlways(numberAsDouble, 0.5+0.45*math.Sin(float64(round)/10+float64(s)))
				e.end()
			}
			e.end()
		}
		e.end() // Metric
		e.end() // ScopeMetrics
		e.end() // ResourceMetrics
		i = end
	}
	return e.finish()
}

// seriesResourceKeys are the resource attributes of PayloadRich, the
// first two those of every payload.
var seriesResourceKeys = [20]string{
	"service.name", "service.instance.id", "service.namespace", "service.version",
	"deployment.environment.name", "host.name", "host.id", "host.arch", "os.type",
	"cloud.provider", "cloud.region", "cloud.availability_zone", "cloud.account.id",
	"k8s.cluster.name", "k8s.namespace.name", "k8s.node.name", "k8s.deployment.name",
	"k8s.pod.name", "k8s.pod.uid", "container.name",
}

// writeSeriesResource writes the attributes of target t.
func writeSeriesResource(e *encoder, p Payload, t int) {
	app := "app-" + strconv.Itoa(t%10)
	e.kvString(resourceAttributes, seriesResourceKeys[0], app)
	e.kvString(resourceAttributes, seriesResourceKeys[1], fmt.Sprintf("%s-%04d", app, t))
	if p != PayloadRich {
		return
	}
	zone := "us-east-1" + string(rune('a'+t%3))
	node := fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", t%16, t%250)
	pod := fmt.Sprintf("%s-7d9f8b6c5-%05d", app, t)
	for i, v := range []string{
		"shop", "1." + strconv.Itoa(t%4) + ".0", "production",
		node, fmt.Sprintf("i-%016x", uint64(t)*0x9e3779b97f4a7c15), "amd64", "linux",
		"aws", "us-east-1", zone, "123456789012",
		"prod-us-east-1", "ns-" + strconv.Itoa(t%5), node, app,
		pod, fmt.Sprintf("%08x-0000-4000-8000-%012x", t, t), app,
	} {
		e.kvString(resourceAttributes, seriesResourceKeys[i+2], v)
	}
}

var (
	seriesMethods = []string{"GET", "POST", "PUT", "DELETE"}
	seriesRoutes  = []string{"/", "/api/v1/orders", "/api/v1/orders/{id}", "/api/v1/cart", "/healthz"}
	seriesCodes   = []int64{200, 201, 204, 404, 500}
)

// writeSeriesPointAttrs writes the attributes of series s (unique within
// its target) as field num.
func writeSeriesPointAttrs(e *encoder, num protowire.Number, p Payload, s int) {
	j := s % SeriesPerTarget
	switch p {
	case PayloadRich:
		e.kvString(num, "http.request.method", seriesMethods[j%4])
		e.kvString(num, "http.route", seriesRoutes[j/4%5])
		e.kvInt(num, "http.response.status_code", seriesCodes[j/20%5])
		e.kvString(num, "url.scheme", "https")
		e.kvString(num, "network.protocol.version", "1.1")
		e.kvString(num, "server.address", "shop.example.com")
		e.kvInt(num, "server.port", 443)
		e.kvString(num, "user_agent.original", "okhttp/4.12.0")
		e.kvString(num, "client.region", "eu-west-"+strconv.Itoa(j%3+1))
		e.kvInt(num, "series.id", int64(j))
	case PayloadHistogram:
		e.kvString(num, "http.route", seriesRoutes[j%5])
		e.kvInt(num, "series.id", int64(j))
	default:
		e.kvString(num, "cpu", "cpu"+strconv.Itoa(j%16))
		e.kvInt(num, "series.id", int64(j))
	}
}

// seriesBounds are the explicit bounds of PayloadHistogram, in seconds.
var seriesBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 15, 30}

// writeHistogramPoint writes the data point of histogram series s in
// round r: cumulative since start minus an hour, growing every round.
func writeHistogramPoint(e *encoder, s int, r int64, start, ts uint64) {
	e.begin(dataPoints)
	writeSeriesPointAttrs(e, histAttributes, PayloadHistogram, s)
	e.fixed64(histStartTime, start-3600e9)
	e.fixed64(histTime, ts)
	counts := make([]uint64, len(seriesBounds)+1)
	var total uint64
	var sum float64
	for b := range counts {
		// A bell over the buckets, peaking at a bucket that depends on s.
		d := float64(b - 4 - s%5)
		c := uint64(float64(r+1) * 20 * math.Exp(-d*d/4))
		counts[b] = c
		total += c
		if b < len(seriesBounds) {
			sum += float64(c) * seriesBounds[b] * 0.7
		} else {
			sum += float64(c) * 40
		}
	}
	e.fixed64Always(histCount, total)
	e.doubleAlways(histSum, sum)
	e.packedFixed64(histBucketCounts, counts)
	e.packedDouble(histExplicitBounds, seriesBounds)
	e.end()
}
