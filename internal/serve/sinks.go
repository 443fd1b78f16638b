package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/quarantine"
	"github.com/wirehouse/wirehouse/internal/spoolsink"
	"github.com/wirehouse/wirehouse/internal/usage"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// sinks returns each signal's sinks, stores first: the metric store for
// metrics, the spool (then the lake, or a forward destination) for logs,
// traces and forwarded metrics, and after them the per-service usage
// counters, which so count only what was stored, per tenant (see
// tenantUsage). A signal this node neither stores nor forwards is refused
// record by record (a partial success), never dropped silently.
func (s *Server) sinks() (pipeline.Sinks, error) {
	u, err := s.tenantUsage()
	if err != nil {
		return pipeline.Sinks{}, err
	}
	ss, err := spoolsink.New(s.spool, s.cfg.Lake.Tenant)
	if err != nil {
		return pipeline.Sinks{}, err
	}
	var out pipeline.Sinks
	for _, sig := range otlpwire.Signals {
		var sinks []pipeline.Sink
		stored := s.cfg.Store.Logs
		switch sig {
		case otlpwire.SignalTraces:
			stored = s.cfg.Store.Traces
		case otlpwire.SignalMetrics:
			stored = s.cfg.Store.Metrics
			if stored {
				// The store validates metrics as it walks them (see
				// AppendOTLP), so it is marked Validating and the
				// receiver does not walk them twice.
				sinks = append(sinks, pipeline.Validating(pipeline.SinkFunc(s.consumeMetrics)))
			}
		}
		if sig != otlpwire.SignalMetrics && stored || s.cfg.forwarded(sig) {
			sinks = append(sinks, ss)
		}
		if len(sinks) == 0 {
			sinks = append(sinks, refuseSink(sig))
		} else {
			sinks = append(sinks, u)
		}
		switch sig {
		case otlpwire.SignalLogs:
			out.Logs = sinks
		case otlpwire.SignalTraces:
			out.Traces = sinks
		default:
			out.Metrics = sinks
		}
	}
	return out, nil
}

// tenantUsage returns the per-service usage counters
// (wirehouse_sink_records_total, wirehouse_sink_resource_bytes_total),
// one usage.Sink per tenant, each bounded to limits.max_services per
// signal: the default tenant's series carry no tenant label, as in the
// metric store (a token naming lake.tenant is the default tenant's: bearer.Tokens.SetDefaultTenant), so that without tokens nothing
// differs; another tenant's carry tenant="<name>", so the status page
// shows a token its own tenant's services alone. A tenant's counters are
// made at its first request; tenants come from the OTLP tokens file.
func (s *Server) tenantUsage() (pipeline.Sink, error) {
	def, err := usage.New(usage.Config{Registerer: s.reg, MaxServices: s.cfg.Limits.MaxServices})
	if err != nil {
		return nil, err
	}
	// The tenants' counters share the default tenant's names with one
	// label more, which a registry takes only from a collector that
	// describes nothing (unchecked).
	tenants := &collectorSet{}
	if err := s.reg.Register(tenants); err != nil {
		return nil, fmt.Errorf("register sink metrics: %w", err)
	}
	tu := &tenantSinks{def: def, max: s.cfg.Limits.MaxServices, reg: tenants, log: s.log, sinks: map[string]*usage.Sink{}}
	return pipeline.SinkFunc(func(ctx context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		return tu.of(req.Tenant).Consume(ctx, req)
	}), nil
}

// tenantSinks holds each tenant's usage counters.
type tenantSinks struct {
	def *usage.Sink // the default tenant's
	max int
	reg prometheus.Registerer
	log *slog.Logger

	mu    sync.RWMutex
	sinks map[string]*usage.Sink // by tenant
}

// of returns tenant's sink ("" the default tenant's), made at its first
// request. Should making one fail (it cannot: each tenant's labels differ),
// the request is counted as the default tenant's and the failure logged.
func (ts *tenantSinks) of(tenant string) *usage.Sink {
	if tenant == "" {
		return ts.def
	}
	ts.mu.RLock()
	u := ts.sinks[tenant]
	ts.mu.RUnlock()
	if u != nil {
		return u
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if u = ts.sinks[tenant]; u != nil {
		return u
	}
	u, err := usage.New(usage.Config{MaxServices: ts.max,
		Registerer: prometheus.WrapRegistererWith(prometheus.Labels{"tenant": tenant}, ts.reg)})
	if err != nil {
		ts.log.Error("usage counters of a tenant; counting it as the default tenant", "tenant", tenant, "err", err)
		return ts.def
	}
	ts.sinks[tenant] = u
	return u
}

// collectorSet is a prometheus.Registerer whose collectors it collects as
// one unchecked collector (its Describe sends nothing): registered in a
// registry, their metrics are gathered with the registry's, though they
// share names with its own collectors' and differ in label names.
type collectorSet struct {
	mu sync.Mutex
	cs []prometheus.Collector
}

func (c *collectorSet) Register(col prometheus.Collector) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cs = append(c.cs, col)
	return nil
}

func (c *collectorSet) MustRegister(cs ...prometheus.Collector) {
	for _, col := range cs {
		c.Register(col) //nolint:errcheck // never fails
	}
}

func (c *collectorSet) Unregister(prometheus.Collector) bool { return false }

func (c *collectorSet) Describe(chan<- *prometheus.Desc) {}

func (c *collectorSet) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	cs := append([]prometheus.Collector(nil), c.cs...)
	c.mu.Unlock()
	for _, col := range cs {
		col.Collect(ch)
	}
}

// refuseSink refuses every record of a signal this node neither stores
// nor forwards, as an OTLP partial success: the client learns that its
// records were not kept, and the receiver counts them refused.
func refuseSink(sig otlpwire.Signal) pipeline.Sink {
	msg := "this wirehouse node neither stores nor forwards " + sig.String()
	return pipeline.SinkFunc(func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		return pipeline.Outcome{Rejected: int64(req.Records), Message: msg}, nil
	})
}

// consumeMetrics stores a metrics request in the metric store, for the
// tenant the request's credentials name.
func (s *Server) consumeMetrics(ctx context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
	res, err := s.metrics.AppendOTLP(ctx, req.Tenant, req.Body)
	var we *otlpwire.Error
	if errors.As(err, &we) {
		return pipeline.Outcome{}, err // malformed: the receiver answers 400
	}
	if err != nil {
		return pipeline.Outcome{}, fmt.Errorf("store metrics: %v: %w", err, pipeline.ErrUnavailable)
	}
	return pipeline.Outcome{Rejected: res.Rejected, Message: res.Message()}, nil
}

// receiverQuarantine keeps the requests a sink panicked on (see
// receiver.Config.Quarantine) in the data directory's quarantine, each under
// a new id.
type receiverQuarantine struct{ d *quarantine.Dir }

func (q receiverQuarantine) Quarantine(req *pipeline.Request, cause error) error {
	now := time.Now()
	_, err := q.d.Put(quarantine.Entry{Signal: req.Signal.String(), Tenant: req.Tenant, Source: "receiver",
		ID: fmt.Sprintf("%s-%016x", now.UTC().Format("20060102T150405.000000000Z"), rand.Uint64()), Received: now,
		Records: req.Records, Payload: req.Body, Err: cause})
	return err
}
