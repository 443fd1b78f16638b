package forward

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the counters every destination of a process shares, with
// a destination label; the queue and ring gauges are each destination's.
type metrics struct {
	requests *prometheus.CounterVec // destination, endpoint, outcome: sent, retried, failed
	probes   *prometheus.CounterVec // destination, endpoint, outcome: answered, unanswered
	records  *prometheus.CounterVec // destination, signal, outcome: sent, rejected, refused, skipped
	bytes    *prometheus.CounterVec // destination, endpoint
	member   *prometheus.GaugeVec   // destination, endpoint: 1 while on the ring
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_forward_requests_total",
			Help: "Export requests sent to downstream endpoints, by outcome: sent (accepted, maybe in part), retried (a retryable failure; sent again), failed (refused for good; its records dropped).",
		}, []string{"destination", "endpoint", "outcome"}),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_forward_probes_total",
			Help: "Empty export requests sent to an endpoint that stopped answering, to find when it is back, by outcome: answered (its retries then go at once), unanswered.",
		}, []string{"destination", "endpoint", "outcome"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_forward_records_total",
			Help: "Log records, spans and data points forwarded, by outcome: sent (accepted downstream), rejected (refused by a downstream partial success), refused (in a request refused for good, or that could not be routed), skipped (delivered before a restart, after the cursor, so not sent again).",
		}, []string{"destination", "signal", "outcome"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_forward_sent_bytes_total",
			Help: "Bytes of export requests (before compression) accepted by each endpoint.",
		}, []string{"destination", "endpoint"}),
		member: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "wirehouse_forward_ring_member",
			Help: "1 for each endpoint on a destination's consistent-hash ring.",
		}, []string{"destination", "endpoint"}),
	}
	if reg == nil {
		return m
	}
	m.requests = register(reg, m.requests)
	m.probes = register(reg, m.probes)
	m.records = register(reg, m.records)
	m.bytes = register(reg, m.bytes)
	m.member = register(reg, m.member)
	return m
}

// register registers c, or returns the collector registered before
// under its name (by another destination of the process).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
	}
	return c
}
