package receiver

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// metrics are the receiver's self-observability series, named after the
// Collector's receiver metrics where one exists.
type metrics struct {
	requests *prometheus.CounterVec   // signal, transport, outcome, reason
	accepted *prometheus.CounterVec   // signal, transport
	refused  *prometheus.CounterVec   // signal, transport, reason
	size     *prometheus.HistogramVec // signal, transport
	duration *prometheus.HistogramVec // signal, transport

	by [len(otlpwire.Signals) + 1][numTransports]*transportMetrics // by otlpwire.Signal
}

// transportMetrics are the series of one signal and transport, resolved
// once so the request path does no label lookups on success.
type transportMetrics struct {
	okRequests      prometheus.Counter
	partialRequests prometheus.Counter
	accepted        prometheus.Counter
	size            prometheus.Observer
	duration        prometheus.Observer
}

type transport uint8

const (
	transportGRPC transport = iota
	transportHTTP
	transportLoki // Loki's push API (HTTP)
	numTransports
)

func (t transport) String() string {
	switch t {
	case transportGRPC:
		return "grpc"
	case transportLoki:
		return "loki"
	}
	return "http"
}

func newMetrics(reg prometheus.Registerer, b *budget) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_receiver_requests_total",
			Help: "Export requests by signal, transport, outcome (accepted, partial, refused) and refusal reason.",
		}, []string{"signal", "transport", "outcome", "reason"}),
		accepted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_receiver_accepted_records_total",
			Help: "Data points, log records or spans acknowledged to the client.",
		}, []string{"signal", "transport"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_receiver_refused_records_total",
			Help: "Data points, log records or spans refused, by reason. Records of requests too malformed to count are not included; see wirehouse_receiver_requests_total.",
		}, []string{"signal", "transport", "reason"}),
		size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:                        "wirehouse_receiver_request_size_bytes",
			Help:                        "Decompressed size of export requests that reached validation.",
			Buckets:                     prometheus.ExponentialBuckets(256, 4, 10),
			NativeHistogramBucketFactor: 1.1,
		}, []string{"signal", "transport"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:                        "wirehouse_receiver_request_duration_seconds",
			Help:                        "Time from the start of a request's handling to its response, including the sinks.",
			Buckets:                     prometheus.ExponentialBuckets(25e-6, 2, 18),
			NativeHistogramBucketFactor: 1.1,
		}, []string{"signal", "transport"}),
	}
	inflight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "wirehouse_receiver_inflight_bytes",
		Help: "Bytes held by requests in flight (bodies, decompressed bodies, transcoded JSON).",
	}, func() float64 { return float64(b.used.Load()) })
	limit := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "wirehouse_receiver_inflight_bytes_limit",
		Help: "The configured maximum of wirehouse_receiver_inflight_bytes.",
	})
	limit.Set(float64(b.max))
	if reg != nil {
		reg.MustRegister(m.requests, m.accepted, m.refused, m.size, m.duration, inflight, limit)
	}
	for _, s := range otlpwire.Signals {
		for t := range numTransports {
			if t == transportLoki && s != otlpwire.SignalLogs {
				continue // Loki's push carries logs alone
			}
			sl, tl := s.String(), t.String()
			m.by[s][t] = &transportMetrics{
				okRequests:      m.requests.WithLabelValues(sl, tl, "accepted", ""),
				partialRequests: m.requests.WithLabelValues(sl, tl, "partial", "partial"),
				accepted:        m.accepted.WithLabelValues(sl, tl),
				size:            m.size.WithLabelValues(sl, tl),
				duration:        m.duration.WithLabelValues(sl, tl),
			}
			// Create the refusal series up front so dashboards see zeros.
			for k := pipeline.KindBadData; k <= pipeline.KindInternal; k++ {
				m.requests.WithLabelValues(sl, tl, "refused", k.String())
				m.refused.WithLabelValues(sl, tl, k.String())
			}
			m.refused.WithLabelValues(sl, tl, "partial")
		}
	}
	return m
}

// observe records one finished request. size < 0 means the body was never
// decoded; records is 0 when it could not be counted.
func (m *metrics) observe(s otlpwire.Signal, t transport, start time.Time, size, records int, out pipeline.Outcome, err *pipeline.Error) {
	tm := m.by[s][t]
	tm.duration.Observe(time.Since(start).Seconds())
	if size >= 0 {
		tm.size.Observe(float64(size))
	}
	sl, tl := s.String(), t.String()
	switch {
	case err != nil:
		m.requests.WithLabelValues(sl, tl, "refused", err.Kind.String()).Inc()
		if records > 0 {
			m.refused.WithLabelValues(sl, tl, err.Kind.String()).Add(float64(records))
		}
	case out.Rejected > 0:
		tm.partialRequests.Inc()
		tm.accepted.Add(float64(int64(records) - out.Rejected))
		m.refused.WithLabelValues(sl, tl, "partial").Add(float64(out.Rejected))
	default:
		tm.okRequests.Inc()
		tm.accepted.Add(float64(records))
	}
}
