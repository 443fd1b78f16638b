package serve

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/tracemetrics"
)

// TraceMetricsConfig sets the span metrics and service graph made from
// the spans as they arrive (internal/tracemetrics), into the metric store:
// on by default on a node that stores traces and metrics.
type TraceMetricsConfig struct {
	Enabled bool `yaml:"enabled"`
	// FlushInterval is how often the series are written (the
	// connectors' metrics_flush_interval).
	FlushInterval time.Duration `yaml:"flush_interval"`
	// Dimensions are extra span-metric labels: span attributes, else
	// resource attributes, of these names.
	Dimensions []string `yaml:"dimensions"`
	// MaxSeries, MaxGraphSeries and MaxEdges bound each tenant's state
	// (tracemetrics.Config).
	MaxSeries      int           `yaml:"max_series"`
	MaxGraphSeries int           `yaml:"max_graph_series"`
	MaxEdges       int           `yaml:"max_edges"`
	EdgeTTL        time.Duration `yaml:"edge_ttl"`
	// Exemplars gives the span-metric points exemplars of the spans they
	// counted (trace and span id, duration), at most
	// MaxExemplarsPerPoint a point a flush, as the spanmetrics
	// connector's exemplars setting does; metrics.max_exemplars must keep
	// some. Off by default, as in the connector.
	Exemplars            bool `yaml:"exemplars"`
	MaxExemplarsPerPoint int  `yaml:"max_exemplars_per_point"`
}

// generator is c's configuration of the generator (its instance id
// aside).
func (c TraceMetricsConfig) generator() tracemetrics.Config {
	tc := tracemetrics.DefaultConfig()
	tc.Dimensions, tc.MaxSeries, tc.MaxGraphSeries, tc.MaxEdges, tc.EdgeTTL = c.Dimensions, c.MaxSeries, c.MaxGraphSeries, c.MaxEdges, c.EdgeTTL
	tc.Exemplars, tc.MaxExemplarsPerPoint = c.Exemplars, c.MaxExemplarsPerPoint
	return tc
}

// dependencies are lake tenant t's calls between services over a window,
// from the service graph in the metric store, for Jaeger's APIs.
func (s *Server) dependencies(ctx context.Context, t string, start, end time.Time) ([]tracemetrics.Dependency, error) {
	if t == s.cfg.Lake.Tenant {
		t = "" // the metric store's name of the default tenant
	}
	return tracemetrics.Dependencies(tenant.NewContext(ctx, t), s.metrics.Queryable(), start, end)
}

// traceMetricsConsumer is the generator's spool consumer.
const traceMetricsConsumer = "tracemetrics"

// openTraceMetrics makes the generator when it is on and this node stores
// traces and metrics; else it removes its spool cursor, so that it holds
// no segment back.
func (s *Server) openTraceMetrics() error {
	c := s.cfg.TraceMetrics
	if !c.Enabled || !s.cfg.Store.Traces || !s.cfg.Store.Metrics {
		for _, name := range s.spool.ConsumerNames() {
			if name == traceMetricsConsumer {
				if err := s.spool.RemoveConsumer(name); err != nil {
					return fmt.Errorf("remove the trace metrics' spool cursor: %w", err)
				}
			}
		}
		return nil
	}
	tc := c.generator()
	tc.InstanceID = s.lakeNode
	if tc.InstanceID == "" {
		id, err := nodeID(s.cfg.DataDir)
		if err != nil {
			return err
		}
		tc.InstanceID = id
	}
	g, err := tracemetrics.New(tc, time.Now())
	if err != nil {
		return fmt.Errorf("trace_metrics: %w", err)
	}
	cons, err := s.spool.Consumer(traceMetricsConsumer)
	if err != nil {
		return err
	}
	stat := func(name, help string, f func(tracemetrics.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f(g.Stats())) })
	}
	for _, c := range []prometheus.Collector{
		stat("wirehouse_tracemetrics_spans_total", "Spans counted into span metrics and the service graph.", func(st tracemetrics.Stats) uint64 { return st.Spans }),
		stat("wirehouse_tracemetrics_overflow_spans_total", "Spans of a new dimension set past trace_metrics.max_series, counted in the tenant's overflow series.", func(st tracemetrics.Stats) uint64 { return st.Overflow }),
		stat("wirehouse_tracemetrics_graph_dropped_edges_total", "Service-graph edges of a new series past trace_metrics.max_graph_series, not counted.", func(st tracemetrics.Stats) uint64 { return st.GraphDropped }),
		stat("wirehouse_tracemetrics_unpaired_spans_dropped_total", "Spans that would have opened an edge past trace_metrics.max_edges, not paired.", func(st tracemetrics.Stats) uint64 { return st.EdgesDropped }),
		stat("wirehouse_tracemetrics_expired_edges_total", "Edges past their TTL: made virtual-node edges, or dropped (a server span whose client never came).", func(st tracemetrics.Stats) uint64 { return st.Expired }),
	} {
		if err := s.reg.Register(c); err != nil {
			return fmt.Errorf("register trace metrics' metrics: %w", err)
		}
	}
	s.traceMetrics = func(ctx context.Context) error {
		return g.Run(ctx, cons, c.FlushInterval, func(t string, req []byte) error {
			if t == s.cfg.Lake.Tenant {
				t = "" // the metric store's name of the default tenant
			}
			res, err := s.metrics.AppendOTLP(context.Background(), t, req)
			if err != nil && !errors.Is(err, context.Canceled) {
				s.log.Error("trace metrics: the metric store refused a flush; it is written again at the next", "tenant", t, "err", err)
			} else if res.Rejected > 0 {
				s.log.Warn("trace metrics: points refused by the metric store", "tenant", t, "detail", res.Message())
			}
			return err
		})
	}
	return nil
}
