package tracemetrics

import (
	"errors"
	"fmt"
	"time"
)

// The connectors' default histogram bounds: span durations in
// milliseconds, service-graph latencies in seconds.
var (
	SpanBoundsMs   = []float64{2, 4, 6, 8, 10, 50, 100, 200, 400, 800, 1000, 1400, 2000, 5000, 10000, 15000}
	GraphBoundsSec = []float64{0.002, 0.004, 0.006, 0.008, 0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1, 1.4, 2, 5, 10, 15}
)

// Config configures a Generator. Start from DefaultConfig; New calls
// Validate.
type Config struct {
	// Dimensions are extra span-metric labels: each the value of a span
	// attribute of that name, else of a resource attribute, else absent.
	Dimensions []string
	// InstanceID is the collector.instance.id of every span-metric
	// series ("" leaves it out).
	InstanceID string
	// MaxSeries bounds a tenant's span-metric series (calls and
	// duration share one: 20 series in the store, with the histogram's
	// buckets); past it, new dimension sets are counted in one overflow
	// series. Default 2,000 (40,000 series in the store).
	MaxSeries int
	// MaxGraphSeries bounds a tenant's service-graph series (client,
	// server, connection type, failed: about 40 series in the store);
	// past it, new ones are dropped and counted. Default 1,000.
	MaxGraphSeries int
	// MaxEdges bounds a tenant's unpaired edges; past it, a span that
	// would open one is not paired, and is counted. Default 10,000 (the
	// connector's store holds 1,000).
	MaxEdges int
	// EdgeTTL is how long an edge waits for its other span before it
	// becomes a virtual-node edge (the connector's store.ttl, 2s).
	EdgeTTL time.Duration
	// VirtualNodePeerAttributes name, in order, the client span
	// attribute whose value is the server of an unpaired client edge
	// (the connector's default: peer.service, db.name, db.system).
	VirtualNodePeerAttributes []string
	// Exemplars, as the spanmetrics connector's exemplars.enabled, gives
	// each span-metric point (calls and duration) exemplars of the spans
	// counted since its last write: their trace and span ids and their
	// duration in milliseconds, at most MaxExemplarsPerPoint of them (the
	// connector's max_per_data_point, 5), timed at the write. The metric
	// store keeps them only if its exemplar storage is on. Off by default,
	// as in the connector.
	Exemplars            bool
	MaxExemplarsPerPoint int
}

// DefaultConfig returns the connectors' defaults and the bounds above.
func DefaultConfig() Config {
	return Config{
		MaxSeries:                 2_000,
		MaxGraphSeries:            1_000,
		MaxEdges:                  10_000,
		EdgeTTL:                   2 * time.Second,
		VirtualNodePeerAttributes: []string{"peer.service", "db.name", "db.system"},
		MaxExemplarsPerPoint:      5,
	}
}

// Validate reports the first setting New would refuse.
func (c Config) Validate() error {
	switch {
	case c.MaxSeries <= 0 || c.MaxGraphSeries <= 0 || c.MaxEdges <= 0:
		return errors.New("tracemetrics: max_series, max_graph_series and max_edges must be positive")
	case c.EdgeTTL <= 0:
		return errors.New("tracemetrics: the edge TTL must be positive")
	case c.Exemplars && c.MaxExemplarsPerPoint <= 0:
		return errors.New("tracemetrics: max exemplars per point must be positive")
	case len(c.VirtualNodePeerAttributes) > 64:
		return errors.New("tracemetrics: at most 64 virtual node peer attributes")
	}
	for _, d := range c.Dimensions {
		switch d {
		case "", "service.name", "span.name", "span.kind", "status.code", "collector.instance.id":
			return fmt.Errorf("tracemetrics: dimension %q: empty or one of the connector's own", d)
		}
	}
	return nil
}
