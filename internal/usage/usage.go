// Package usage counts, per signal and service.name, the records and the
// resource bytes wirehouse serve stored, for /metrics.
//
// Its Sink goes last in each signal's list of sinks (pipeline.Sinks), after
// the stores, so that it counts only requests they accepted: a request a
// store refused, which the client sends again, is counted once, when it is
// stored. It keeps none of the data.
package usage

import (
	"context"
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// DefaultMaxServices is DefaultConfig's bound on distinct service.name
// values tracked per signal; further services are counted as
// OtherService.
const DefaultMaxServices = 1000

// Config configures a Sink. Start from DefaultConfig; Validate reports
// what New would refuse.
type Config struct {
	// Registerer, if not nil, gets the sink's counters
	// (wirehouse_sink_records_total and
	// wirehouse_sink_resource_bytes_total); the default is none.
	Registerer prometheus.Registerer
	// MaxServices bounds the distinct services counted per signal
	// (default DefaultMaxServices); it must be positive.
	MaxServices int
}

// DefaultConfig returns the defaults: DefaultMaxServices, no registerer.
func DefaultConfig() Config {
	return Config{MaxServices: DefaultMaxServices}
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	if c.MaxServices <= 0 {
		return fmt.Errorf("usage: MaxServices %d, must be positive", c.MaxServices)
	}
	return nil
}

// Series names for resources without service.name and for services past
// the bound.
const (
	UnknownService = "unknown_service"
	OtherService   = "__other__"
)

// Sink counts records and resource bytes per signal and service.name.
type Sink struct {
	records *prometheus.CounterVec
	bytes   *prometheus.CounterVec
	max     int

	mu       sync.RWMutex
	services [len(otlpwire.Signals) + 1]map[string]*counters // by otlpwire.Signal
}

type counters struct {
	records, bytes prometheus.Counter
}

// New validates cfg and returns a sink whose counters are registered with
// cfg.Registerer, if set.
func New(cfg Config) (*Sink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sink{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_sink_records_total",
			Help: "Records (data points, log records, spans) accepted and stored, by signal and service.name.",
		}, []string{"signal", "service"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_sink_resource_bytes_total",
			Help: "Encoded size of the resource containers (ResourceLogs, ResourceSpans, ResourceMetrics) accepted and stored, by signal and service.name.",
		}, []string{"signal", "service"}),
		max: cfg.MaxServices,
	}
	for i := range s.services {
		s.services[i] = make(map[string]*counters)
	}
	if reg := cfg.Registerer; reg != nil {
		if err := reg.Register(s.records); err != nil {
			return nil, fmt.Errorf("register sink metrics: %w", err)
		}
		if err := reg.Register(s.bytes); err != nil {
			return nil, fmt.Errorf("register sink metrics: %w", err)
		}
	}
	return s, nil
}

// Consume counts req per resource and keeps nothing. It refuses, as
// invalid, only a request it cannot walk, which the receiver's validation
// (or the first sink's) has already refused.
func (s *Sink) Consume(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
	var err error
	switch req.Signal {
	case otlpwire.SignalLogs:
		for rl, e := range otlpwire.LogsRequest(req.Body).ResourceLogs() {
			if err = s.add(req.Signal, rl, e, rl.Resource, rl.LogRecordCount); err != nil {
				break
			}
		}
	case otlpwire.SignalTraces:
		for rs, e := range otlpwire.TracesRequest(req.Body).ResourceSpans() {
			if err = s.add(req.Signal, rs, e, rs.Resource, rs.SpanCount); err != nil {
				break
			}
		}
	case otlpwire.SignalMetrics:
		for rm, e := range otlpwire.MetricsRequest(req.Body).ResourceMetrics() {
			if err = s.add(req.Signal, rm, e, rm.Resource, rm.DataPointCount); err != nil {
				break
			}
		}
	default:
		err = fmt.Errorf("unknown signal %d", req.Signal)
	}
	if err != nil {
		return pipeline.Outcome{}, fmt.Errorf("count %s: %w: %w", req.Signal, pipeline.ErrInvalid, err)
	}
	return pipeline.Outcome{}, nil
}

func (s *Sink) add(sig otlpwire.Signal, container []byte, iterErr error, resource func() (otlpwire.Resource, error), count func() (int, error)) error {
	if iterErr != nil {
		return iterErr
	}
	res, err := resource()
	if err != nil {
		return err
	}
	service, err := res.ServiceName()
	if err != nil {
		return err
	}
	n, err := count()
	if err != nil {
		return err
	}
	c := s.counters(sig, service)
	c.records.Add(float64(n))
	c.bytes.Add(float64(len(container)))
	return nil
}

// counters returns the counters of service (nil or empty: UnknownService),
// creating them while the signal has fewer than max services.
func (s *Sink) counters(sig otlpwire.Signal, service []byte) *counters {
	m := s.services[sig]
	s.mu.RLock()
	c := m[string(service)] // no allocation for the lookup
	s.mu.RUnlock()
	if c != nil {
		return c
	}
	name := string(service)
	if name == "" {
		name = UnknownService
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c = m[string(service)]; c != nil {
		return c
	}
	if len(m) >= s.max {
		if c = m[OtherService]; c != nil {
			return c
		}
		name = OtherService
		service = []byte(OtherService)
	}
	c = &counters{
		records: s.records.WithLabelValues(sig.String(), name),
		bytes:   s.bytes.WithLabelValues(sig.String(), name),
	}
	m[string(service)] = c
	return c
}

var _ pipeline.Sink = (*Sink)(nil)
