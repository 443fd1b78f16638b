package serve

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/quarantine"
	"github.com/wirehouse/wirehouse/internal/spoolsink"
	"github.com/wirehouse/wirehouse/internal/usage"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// sinks returns each signal's sinks, stores first: the metric store for
// metrics, the spool (then the lake, or a forward destination) for logs,
// traces and forwarded metrics, and after them the per-service usage
// counters, which so count only what was stored. A signal this node
// neither stores nor forwards is refused record by record (a partial
// success), never dropped silently.
func (s *Server) sinks() (pipeline.Sinks, error) {
	u, err := usage.New(usage.Config{Registerer: s.reg, MaxServices: s.cfg.Limits.MaxServices})
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
	res, err := s.metrics.AppendOTLP(ctx, s.metricsTenant(req.Tenant), req.Body)
	var we *otlpwire.Error
	if errors.As(err, &we) {
		return pipeline.Outcome{}, err // malformed: the receiver answers 400
	}
	if err != nil {
		return pipeline.Outcome{}, fmt.Errorf("store metrics: %v: %w", err, pipeline.ErrUnavailable)
	}
	return pipeline.Outcome{Rejected: res.Rejected, Message: res.Message()}, nil
}

// metricsTenant is the metric store's name of tenant t, a token's: the
// default tenant (a token naming none, or naming lake.tenant, whose data
// the lake keeps in the default partition) is "", whose series carry no
// tenant label, so that without tokens nothing differs.
func (s *Server) metricsTenant(t string) string {
	if t == s.cfg.Lake.Tenant {
		return ""
	}
	return t
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
