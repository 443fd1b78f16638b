package forward

import (
	"context"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// endpoint is one member of the ring: the batch the reader fills, the
// batches waiting for a worker, and the workers that send them.
type endpoint struct {
	d    *Destination
	name string
	exp  exporter

	mu      sync.Mutex
	cond    sync.Cond
	open    map[batchKey]*batch // being filled by routing, one per signal (and tenant); taken whole by an idle worker
	ready   []*batch            // full, waiting for a worker
	sending int                 // workers sending a batch
	closed  bool

	// Recovery (probe.go), under upMu: up is closed, and replaced, when
	// the endpoint answers again after a failure; the workers waiting
	// out a backoff wait on it too.
	upMu    sync.Mutex
	up      chan struct{}
	failing bool // a request failed for want of an answer, and none succeeded since
	probing bool // the probe is running

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newEndpoint(d *Destination, name string, exp exporter) *endpoint {
	ep := &endpoint{d: d, name: name, exp: exp, open: map[batchKey]*batch{}, up: make(chan struct{})}
	ep.cond.L = &ep.mu
	ep.ctx, ep.cancel = context.WithCancel(context.Background())
	for range d.cfg.Workers {
		ep.wg.Go(ep.work)
	}
	return ep
}

// batchKey says which records a batch may join: one signal, and one
// tenant when tenants are sent.
type batchKey struct {
	sig    otlpwire.Signal
	tenant string
}

// openFor returns the open batch for a part of sig and tenant, sealing
// it first if it is full. Records of other signals (or tenants) have
// batches of their own, so that a mixed spool still makes full
// requests. ep.mu is held.
func (ep *endpoint) openFor(sig otlpwire.Signal, tenant string, byTenant bool, maxBytes int) *batch {
	k := batchKey{sig: sig}
	if byTenant {
		k.tenant = tenant
	}
	b := ep.open[k]
	if b != nil && len(b.body) >= maxBytes {
		ep.ready = append(ep.ready, b)
		b = nil
	}
	if b == nil {
		b = getBatch(sig, tenant, maxBytes)
		ep.open[k] = b
	}
	return b
}

// stop makes the workers return; batches queued or being sent stay, for
// drain.
func (ep *endpoint) stop() {
	ep.mu.Lock()
	ep.closed = true
	ep.cond.Broadcast()
	ep.mu.Unlock()
	ep.cancel()
}

func (ep *endpoint) wait() { ep.wg.Wait() }

// take waits for a batch: the oldest full one, else an open one if no
// other worker is sending (so that, while one request is in flight, the
// parts routed meanwhile gather into one larger request rather than
// each going out alone); nil once the endpoint stops.
func (ep *endpoint) take() *batch {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	for {
		if ep.closed {
			return nil
		}
		if len(ep.ready) > 0 {
			b := ep.ready[0]
			ep.ready[0] = nil
			ep.ready = ep.ready[1:]
			ep.sending++
			return b
		}
		if ep.sending == 0 {
			for k, b := range ep.open {
				if len(b.recs) > 0 {
					delete(ep.open, k)
					ep.sending++
					return b
				}
			}
		}
		ep.cond.Wait()
	}
}

// drain returns and forgets every batch of a stopped endpoint that holds
// parts; the empty ones go back to the pool.
func (ep *endpoint) drain() []*batch {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	bs := ep.ready
	for _, b := range ep.open {
		if len(b.recs) > 0 {
			bs = append(bs, b)
		} else {
			putBatch(b)
		}
	}
	ep.ready, ep.open = nil, map[batchKey]*batch{}
	return bs
}

// work sends batches until the endpoint stops.
func (ep *endpoint) work() {
	for {
		b := ep.take()
		if b == nil {
			return
		}
		ok := ep.send(b)
		ep.mu.Lock()
		ep.sending--
		if !ok {
			ep.ready = append([]*batch{b}, ep.ready...)
			ep.mu.Unlock()
			return
		}
		ep.cond.Signal() // an open batch may go now
		ep.mu.Unlock()
	}
}

// send delivers one batch, retrying until it is accepted, refused for
// good, or the endpoint stops (false: the batch was not delivered).
// Between attempts it backs off, but a failure the server did not answer
// (no Retry-After or RetryInfo) starts the endpoint's probe, and the wait
// ends, and the backoff starts again from RetryInitial, as soon as the
// probe or any other request finds the endpoint answering again.
func (ep *endpoint) send(b *batch) bool {
	d := ep.d
	for attempt := 0; ; attempt++ {
		up := ep.upSignal()
		ctx, cancel := context.WithTimeout(ep.ctx, d.cfg.Timeout)
		res := ep.exp.export(ctx, b.sig, b.tenant, b.body)
		cancel()
		switch {
		case res.err == nil:
			ep.answered()
			res.rejected = min(res.rejected, int64(b.count)) // a server cannot refuse more than it got
			d.m.requests.WithLabelValues(d.cfg.Name, ep.name, "sent").Inc()
			d.m.bytes.WithLabelValues(d.cfg.Name, ep.name).Add(float64(len(b.body)))
			d.m.records.WithLabelValues(d.cfg.Name, b.sig.String(), "sent").Add(float64(int64(b.count) - res.rejected))
			if res.rejected > 0 {
				d.m.records.WithLabelValues(d.cfg.Name, b.sig.String(), "rejected").Add(float64(res.rejected))
				d.log.Warn("forward: the endpoint rejected records (partial success)", "endpoint", ep.name,
					"signal", b.sig.String(), "rejected", res.rejected, "message", res.msg)
			}
			d.done(b, ep, true)
			return true
		case ep.ctx.Err() != nil:
			return false
		case !res.retryable:
			ep.answered()
			d.m.requests.WithLabelValues(d.cfg.Name, ep.name, "failed").Inc()
			d.m.records.WithLabelValues(d.cfg.Name, b.sig.String(), "refused").Add(float64(b.count))
			d.log.Error("forward: the endpoint refused a request for good; its records are dropped", "endpoint", ep.name,
				"signal", b.sig.String(), "records", b.count, "bytes", len(b.body), "err", res.err)
			// The transport may still be reading a body the server
			// refused before it had it all: not reused.
			d.done(b, ep, false)
			return true
		}
		d.m.requests.WithLabelValues(d.cfg.Name, ep.name, "retried").Inc()
		wait := d.backoff(attempt, res.after)
		if attempt == 0 || attempt%10 == 9 {
			d.log.Warn("forward: export failed; retrying", "endpoint", ep.name, "signal", b.sig.String(),
				"attempt", attempt+1, "wait", wait, "err", res.err)
		}
		if res.after > 0 {
			up = nil // the server asked for the wait: it is kept
		} else {
			ep.unanswered()
		}
		t := time.NewTimer(wait)
		select {
		case <-ep.ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		case <-up:
			t.Stop()
			attempt = -1 // back: the backoff starts again
		}
	}
}

// batchPool keeps batches and their bodies for reuse.
var batchPool = sync.Pool{New: func() any { return new(batch) }}

// getBatch returns an empty batch whose body can take twice maxBytes
// (it is sealed once it holds maxBytes, and the last part may be up to
// maxBytes) without growing. Only full batches wait in an endpoint's
// queue; the others are one open batch per signal (and tenant) and one
// per worker sending, so these capacities are bounded by the settings.
func getBatch(sig otlpwire.Signal, tenant string, maxBytes int) *batch {
	b := batchPool.Get().(*batch)
	b.sig, b.tenant = sig, tenant
	if cap(b.body) < 2*maxBytes {
		b.body = make([]byte, 0, 2*maxBytes)
	}
	return b
}

// putBatch returns b to the pool; nothing may use it afterwards.
func putBatch(b *batch) {
	clear(b.recs)
	b.body, b.recs, b.count = b.body[:0], b.recs[:0], 0
	if cap(b.body) > 64<<20 {
		b.body = nil // an outsize batch is not kept
	}
	batchPool.Put(b)
}
