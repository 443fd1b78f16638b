package querybudget

import "github.com/prometheus/client_golang/prometheus"

// metrics are the gate's series: none carries a tenant (the operator's
// /metrics would name every tenant).
type metrics struct {
	running, waiting, tails, memory prometheus.Gauge
	admitted, canceled              prometheus.Counter
	refused                         *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) metrics {
	m := metrics{
		running: prometheus.NewGauge(prometheus.GaugeOpts{Name: "wirehouse_queries_running",
			Help: "Queries admitted and not ended, all read APIs together."}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "wirehouse_queries_waiting",
			Help: "Queries waiting for a slot or memory."}),
		tails: prometheus.NewGauge(prometheus.GaugeOpts{Name: "wirehouse_query_tails_open",
			Help: "Live tails (Loki /tail WebSockets) open."}),
		memory: prometheus.NewGauge(prometheus.GaugeOpts{Name: "wirehouse_query_memory_reserved_bytes",
			Help: "Bytes of the queries' memory budget reserved or borrowed by running queries."}),
		admitted: prometheus.NewCounter(prometheus.CounterOpts{Name: "wirehouse_queries_admitted_total",
			Help: "Queries admitted."}),
		canceled: prometheus.NewCounter(prometheus.CounterOpts{Name: "wirehouse_queries_canceled_total",
			Help: "Queries that ended, or stopped waiting, because their client went away."}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wirehouse_queries_refused_total",
			Help: "Queries and tails refused or stopped by the query budget, by reason."}, []string{"reason"}),
	}
	for _, r := range []string{"concurrency", "tenant concurrency", "memory", "query memory", "tails", "tenant tails"} {
		m.refused.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.running, m.waiting, m.tails, m.memory, m.admitted, m.canceled, m.refused)
	}
	return m
}
