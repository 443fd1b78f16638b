package forward

import (
	"context"
	"sync"
	"time"
)

// endpoint is one member of the ring: a queue of parts and the workers
// that send them.
type endpoint struct {
	d      *Destination
	name   string
	exp    exporter
	q      queue
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newEndpoint(d *Destination, name string, exp exporter) *endpoint {
	ep := &endpoint{d: d, name: name, exp: exp}
	ep.q.cond.L = &ep.q.mu
	ep.ctx, ep.cancel = context.WithCancel(context.Background())
	for range d.cfg.Workers {
		ep.wg.Go(ep.work)
	}
	return ep
}

// stop makes the workers return: parts they were sending and parts
// queued stay in the queue, for drain.
func (ep *endpoint) stop() {
	ep.q.close()
	ep.cancel()
}

func (ep *endpoint) wait() { ep.wg.Wait() }

// work sends batches until the endpoint stops.
func (ep *endpoint) work() {
	var batch []*part
	var body []byte
	for {
		batch = ep.q.take(batch[:0], ep.d.cfg.MaxBatchBytes, ep.d.cfg.TenantHeader != "")
		if batch == nil {
			return
		}
		out := batch[0].body
		if len(batch) > 1 {
			body = body[:0]
			for _, p := range batch {
				body = append(body, p.body...)
			}
			out = body
		}
		if !ep.send(batch, out) {
			ep.q.putBack(batch)
			return
		}
	}
}

// send delivers one batch, retrying until it is accepted, refused for
// good, or the endpoint stops (false: the batch was not delivered).
func (ep *endpoint) send(batch []*part, body []byte) bool {
	d := ep.d
	sig, tenant := batch[0].sig, batch[0].tenant
	count := 0
	for _, p := range batch {
		count += p.count
	}
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(ep.ctx, d.cfg.Timeout)
		res := ep.exp.export(ctx, sig, tenant, body)
		cancel()
		switch {
		case res.err == nil:
			d.m.requests.WithLabelValues(d.cfg.Name, ep.name, "sent").Inc()
			d.m.bytes.WithLabelValues(d.cfg.Name, ep.name).Add(float64(len(body)))
			d.m.records.WithLabelValues(d.cfg.Name, sig.String(), "sent").Add(float64(int64(count) - res.rejected))
			if res.rejected > 0 {
				d.m.records.WithLabelValues(d.cfg.Name, sig.String(), "rejected").Add(float64(res.rejected))
				d.log.Warn("forward: the endpoint rejected records (partial success)", "endpoint", ep.name,
					"signal", sig.String(), "rejected", res.rejected, "message", res.msg)
			}
			for _, p := range batch {
				d.done(p)
			}
			return true
		case ep.ctx.Err() != nil:
			return false
		case !res.retryable:
			d.m.requests.WithLabelValues(d.cfg.Name, ep.name, "failed").Inc()
			d.m.records.WithLabelValues(d.cfg.Name, sig.String(), "refused").Add(float64(count))
			d.log.Error("forward: the endpoint refused a request for good; its records are dropped", "endpoint", ep.name,
				"signal", sig.String(), "records", count, "bytes", len(body), "err", res.err)
			for _, p := range batch {
				d.done(p)
			}
			return true
		}
		d.m.requests.WithLabelValues(d.cfg.Name, ep.name, "retried").Inc()
		wait := d.backoff(attempt, res.after)
		if attempt == 0 || attempt%10 == 9 {
			d.log.Warn("forward: export failed; retrying", "endpoint", ep.name, "signal", sig.String(),
				"attempt", attempt+1, "wait", wait, "err", res.err)
		}
		select {
		case <-ep.ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// queue is an endpoint's FIFO of parts. It grows without bound: the
// destination's window bounds the bytes of every queue together.
type queue struct {
	mu     sync.Mutex
	cond   sync.Cond
	items  []*part
	closed bool
}

// push appends p; false if the queue is closed (the endpoint left).
func (q *queue) push(p *part) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = append(q.items, p)
	q.cond.Signal()
	return true
}

// take waits for parts and returns the first with those after it of the
// same signal (and tenant, when tenants are sent), up to maxBytes (the
// first is taken whatever its size); nil once the queue is closed.
func (q *queue) take(dst []*part, maxBytes int, byTenant bool) []*part {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil
	}
	first := q.items[0]
	size := len(first.body)
	dst = append(dst, first)
	n := 1
	for n < len(q.items) {
		p := q.items[n]
		if p.sig != first.sig || byTenant && p.tenant != first.tenant || size+len(p.body) > maxBytes {
			break
		}
		size += len(p.body)
		dst = append(dst, p)
		n++
	}
	q.items = q.items[n:]
	return dst
}

// putBack returns the parts of a batch that was not delivered.
func (q *queue) putBack(ps []*part) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, ps...)
}

func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.cond.Broadcast()
}

// drain returns and forgets every part of a closed queue.
func (q *queue) drain() []*part {
	q.mu.Lock()
	defer q.mu.Unlock()
	ps := q.items
	q.items = nil
	return ps
}
