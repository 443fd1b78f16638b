package forward

import (
	"context"
	"time"
)

// An endpoint that stops answering (connection refused, reset or timed
// out) has its workers back off, up to RetryMax, each holding the oldest
// batches; the cursor cannot pass them. So that they go as soon as the
// endpoint is back, rather than when their backoff ends, the first
// failure without an answer starts a probe: every ProbeEvery an empty
// export request (valid OTLP; its server answers it as any other), which
// over gRPC first resets the connection's own backoff and waits for the
// connection (up to ProbeEvery) rather than failing at once. The
// first answer, the probe's or a worker's, closes the endpoint's up
// channel, which the waiting workers select on: they send at once,
// their backoff started again.

// upSignal returns the channel closed when the endpoint next answers
// after a failure. Taken before an attempt, so that an answer during
// the attempt ends the wait after it.
func (ep *endpoint) upSignal() <-chan struct{} {
	ep.upMu.Lock()
	defer ep.upMu.Unlock()
	return ep.up
}

// answered records that the endpoint answered a request (accepted or
// refused it): if it was failing, the workers waiting to retry go now.
func (ep *endpoint) answered() {
	ep.upMu.Lock()
	defer ep.upMu.Unlock()
	if !ep.failing {
		return
	}
	ep.failing = false
	close(ep.up)
	ep.up = make(chan struct{})
	ep.d.log.Info("forward: the endpoint answers again; its retries go now", "endpoint", ep.name)
}

// unanswered records that a request to the endpoint went unanswered,
// and starts the probe if it is not running. Called by a worker, so
// that the endpoint's wait group is not at zero.
func (ep *endpoint) unanswered() {
	ep.upMu.Lock()
	defer ep.upMu.Unlock()
	ep.failing = true
	if ep.probing || ep.ctx.Err() != nil {
		return
	}
	ep.probing = true
	ep.wg.Go(ep.probe)
}

// probe asks the endpoint every ProbeEvery whether it answers, until it
// does (or another request found it answering), or the endpoint stops.
func (ep *endpoint) probe() {
	d := ep.d
	t := time.NewTicker(d.cfg.ProbeEvery)
	defer t.Stop()
	for {
		select {
		case <-ep.ctx.Done():
			return
		case <-t.C:
		}
		ep.upMu.Lock()
		if !ep.failing {
			ep.probing = false
			ep.upMu.Unlock()
			return
		}
		ep.upMu.Unlock()
		// Waiting for a connection up to ProbeEvery: an endpoint back
		// meanwhile is found as soon as it accepts one.
		ctx, cancel := context.WithTimeout(ep.ctx, min(d.cfg.Timeout, d.cfg.ProbeEvery))
		res := ep.exp.probe(ctx, d.cfg.Signals[0])
		cancel()
		d.m.probes.WithLabelValues(d.cfg.Name, ep.name, probeOutcome(res)).Inc()
		if res.err == nil || !res.retryable || res.after > 0 {
			// An answer: a refusal, or a request to wait, is one too.
			ep.upMu.Lock()
			ep.probing = false
			ep.upMu.Unlock()
			ep.answered()
			return
		}
	}
}

func probeOutcome(res result) string {
	if res.err == nil || !res.retryable || res.after > 0 {
		return "answered"
	}
	return "unanswered"
}
