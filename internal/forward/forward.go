// Package forward sends what the spool holds on to downstream OTLP
// endpoints, durably and sharded, without decoding it.
//
// A Destination is one spool consumer (its own durable cursor) and one
// set of endpoints on a consistent-hash ring (Ring). It reads each
// record and cuts it on the wire with otlpwire.Router (logs and metrics
// by resource or service, traces by trace id) straight into each
// endpoint's open batch (export requests concatenate). An endpoint's
// workers send the oldest full batch, or the open one when idle, with
// OTLP/gRPC or OTLP/HTTP, retrying retryable failures (OTLP's retryable
// gRPC codes and HTTP statuses, RetryInfo and Retry-After honoured)
// with exponential backoff and jitter, for as long as it takes. The
// cursor moves past a record only when every batch holding a part of it,
// and of every record before it, was delivered or refused for good: a
// destination that is down keeps its records in the spool, which fills,
// and then the receiver answers 429 / RESOURCE_EXHAUSTED. Refusals for
// good (400 and the like) are counted, logged and dropped. Delivery is at
// least once: a crash, or an endpoint that leaves the ring with batches
// queued, sends some records again.
package forward

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// The protocols.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http"
)

// Config configures a Destination. Zero fields take the defaults named.
type Config struct {
	// Name names the destination in metrics and logs, and its spool
	// consumer: "forward-<name>". Letters, digits, '-' and '_'.
	Name string
	// Signals are the signals sent here; default all three.
	Signals []otlpwire.Signal
	// Protocol is ProtocolGRPC (default) or ProtocolHTTP.
	Protocol string
	// Resolver gives the endpoints. Required.
	Resolver Resolver
	// ResolveEvery is the period of re-resolving; default 30 s. A Static
	// resolver is asked once.
	ResolveEvery time.Duration
	// RouteLogs, RouteMetrics and RouteTraces choose each signal's
	// shard key; defaults by resource, by resource and by trace id.
	RouteLogs, RouteMetrics, RouteTraces otlpwire.RouteKey
	// TLS, if set, makes connections use TLS with it.
	TLS *tls.Config
	// Headers are sent with every request (gRPC metadata or HTTP
	// headers), such as authorization: Bearer <token>.
	Headers map[string]string
	// TenantHeader, if set, sends each record's tenant in this header
	// (X-Scope-OrgID, say); requests then never mix tenants.
	TenantHeader string
	// Compression is "none" (default), "gzip" or "zstd".
	Compression string
	// Timeout bounds one export attempt; default 10 s.
	Timeout time.Duration
	// RetryInitial and RetryMax bound the backoff between attempts:
	// from RetryInitial (default 250 ms), doubling, up to RetryMax
	// (default 30 s), each with ±50% jitter; a server's Retry-After or
	// RetryInfo delay is honoured when longer (up to 5 minutes).
	RetryInitial, RetryMax time.Duration
	// MaxBatchBytes is the size a request joined from several records'
	// parts is sent at; default 1 MiB. A spooled request larger than it
	// is cut first (otlpwire.Splitter), so requests stay under about
	// twice it (a single record larger than it goes alone).
	MaxBatchBytes int
	// Window caps the bytes read from the spool and not yet delivered;
	// default 64 MiB.
	Window int64
	// Workers is the number of requests in flight to each endpoint;
	// default 4.
	Workers    int
	Logger     *slog.Logger
	Registerer prometheus.Registerer
}

// DefaultConfig returns a Config with the defaults filled in and no name
// or resolver.
func DefaultConfig() Config {
	return Config{
		Signals:       []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces, otlpwire.SignalMetrics},
		Protocol:      ProtocolGRPC,
		ResolveEvery:  30 * time.Second,
		RouteLogs:     otlpwire.RouteByResource,
		RouteMetrics:  otlpwire.RouteByResource,
		RouteTraces:   otlpwire.RouteByTraceID,
		Compression:   "none",
		Timeout:       10 * time.Second,
		RetryInitial:  250 * time.Millisecond,
		RetryMax:      30 * time.Second,
		MaxBatchBytes: 1 << 20,
		Window:        64 << 20,
		Workers:       4,
	}
}

// withDefaults fills c's zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Signals == nil {
		c.Signals = d.Signals
	}
	orDefault(&c.Protocol, d.Protocol)
	orDefault(&c.ResolveEvery, d.ResolveEvery)
	orDefault(&c.RouteLogs, d.RouteLogs)
	orDefault(&c.RouteMetrics, d.RouteMetrics)
	orDefault(&c.RouteTraces, d.RouteTraces)
	orDefault(&c.Compression, d.Compression)
	orDefault(&c.Timeout, d.Timeout)
	orDefault(&c.RetryInitial, d.RetryInitial)
	orDefault(&c.RetryMax, max(d.RetryMax, c.RetryInitial))
	orDefault(&c.MaxBatchBytes, d.MaxBatchBytes)
	orDefault(&c.Window, d.Window)
	orDefault(&c.Workers, d.Workers)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// orDefault sets *v to d if it is the zero value.
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// ValidName reports whether name can name a destination.
func ValidName(name string) bool {
	if name == "" || len(name) > 48 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Validate reports the first field of c (defaults applied) that New
// would refuse.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case !ValidName(c.Name):
		return fmt.Errorf("forward: destination name %q: want 1 to 48 of [A-Za-z0-9_-]", c.Name)
	case c.Resolver == nil:
		return fmt.Errorf("forward %s: no endpoints", c.Name)
	case c.Protocol != ProtocolGRPC && c.Protocol != ProtocolHTTP:
		return fmt.Errorf("forward %s: protocol %q: want grpc or http", c.Name, c.Protocol)
	case len(c.Signals) == 0:
		return fmt.Errorf("forward %s: no signals", c.Name)
	case c.RouteLogs == otlpwire.RouteByTraceID || c.RouteMetrics == otlpwire.RouteByTraceID:
		return fmt.Errorf("forward %s: traceID routes traces only; logs and metrics route by resource or service", c.Name)
	case c.Timeout < 0 || c.RetryInitial < 0 || c.RetryMax < c.RetryInitial || c.MaxBatchBytes < 0 || c.Window < 0 || c.Workers < 0:
		return fmt.Errorf("forward %s: negative timeout, retry, batch, window or workers, or retry max under retry initial", c.Name)
	}
	for _, s := range c.Signals {
		if !s.Valid() {
			return fmt.Errorf("forward %s: signal %v", c.Name, s)
		}
	}
	for _, k := range []otlpwire.RouteKey{c.RouteLogs, c.RouteMetrics, c.RouteTraces} {
		if _, err := otlpwire.NewRouter(k); err != nil {
			return fmt.Errorf("forward %s: %w", c.Name, err)
		}
	}
	if d, ok := c.Resolver.(DNS); ok {
		if err := d.Validate(); err != nil {
			return fmt.Errorf("forward %s: %w", c.Name, err)
		}
	}
	if err := checkCompression(c.Protocol, c.Compression); err != nil {
		return fmt.Errorf("forward %s: %w", c.Name, err)
	}
	return nil
}

// ConsumerName is the spool consumer of the destination called name.
func ConsumerName(name string) string { return "forward-" + name }

// Destination forwards one spool's records to one set of endpoints.
type Destination struct {
	cfg  Config
	sp   *spool.Spool
	cons *spool.Consumer
	log  *slog.Logger
	m    *metrics

	routers  map[otlpwire.Signal]*otlpwire.Router // used under mu's read lock by one routing goroutine at a time
	routeMu  sync.Mutex                           // serializes routing (the reader, reroutes)
	splitter *otlpwire.Splitter                   // cuts records larger than MaxBatchBytes; under routeMu
	dst      [][]byte                             // per-shard buffers; under routeMu
	lens     []int
	bs       []*batch

	mu        sync.RWMutex // guards ring, eps and endpoints; routing holds the read lock
	ring      *Ring
	eps       []*endpoint // in the order of ring.Members()
	endpoints map[string]*endpoint
	ringReady chan struct{} // closed once the ring has a member

	// routed is the newest record handed on, by the reader or by the
	// spool's tap: the tap takes a record only if it is the next one.
	routed atomic.Uint64

	// In flight: records read and not yet committed, in sequence order.
	pmu      sync.Mutex
	pending  []*record
	inflight int64     // bytes of parts queued or being sent
	space    sync.Cond // signalled when inflight drops or a record completes
	commit   chan struct{}
	gauges   []prometheus.Collector
	stopping bool
}

// record is one spool record on its way.
type record struct {
	seq      uint64
	received time.Time
	parts    int // parts not yet done; under pmu
}

// batch is one export request being built for, or sent to, one
// endpoint: the parts of one or more records, concatenated (export
// requests concatenate).
type batch struct {
	sig    otlpwire.Signal
	tenant string
	body   []byte
	recs   []*record // one entry per part it holds
	count  int       // log records, spans or data points in body
}

// New opens the destination's consumer on sp (registering it if new:
// it then starts at the oldest record the spool retains).
func New(sp *spool.Spool, cfg Config) (*Destination, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cons, err := sp.Consumer(ConsumerName(cfg.Name))
	if err != nil {
		return nil, fmt.Errorf("forward %s: %w", cfg.Name, err)
	}
	m := newMetrics(cfg.Registerer)
	d := &Destination{
		cfg: cfg, sp: sp, cons: cons, m: m,
		log:       cfg.Logger.With("destination", cfg.Name),
		routers:   map[otlpwire.Signal]*otlpwire.Router{},
		ring:      NewRing(nil),
		endpoints: map[string]*endpoint{},
		ringReady: make(chan struct{}),
		commit:    make(chan struct{}, 1),
	}
	d.space.L = &d.pmu
	d.splitter, _ = otlpwire.NewSplitter(otlpwire.WithMaxBytes(cfg.MaxBatchBytes))
	for sig, key := range map[otlpwire.Signal]otlpwire.RouteKey{
		otlpwire.SignalLogs: cfg.RouteLogs, otlpwire.SignalMetrics: cfg.RouteMetrics, otlpwire.SignalTraces: cfg.RouteTraces,
	} {
		d.routers[sig], _ = otlpwire.NewRouter(key)
	}
	if err := d.registerGauges(); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *Destination) registerGauges() error {
	if d.cfg.Registerer == nil {
		return nil
	}
	labels := prometheus.Labels{"destination": d.cfg.Name}
	d.gauges = []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wirehouse_forward_queue_records", ConstLabels: labels,
			Help: "Spool records this destination has not delivered yet.",
		}, func() float64 { return float64(d.sp.Stats().LastSeq - d.cons.Committed()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wirehouse_forward_queue_bytes", ConstLabels: labels,
			Help: "Bytes of spool segments holding records this destination has not delivered yet (to within 256 KiB).",
		}, func() float64 { return float64(d.sp.BytesAfter(d.cons.Committed())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wirehouse_forward_queue_age_seconds", ConstLabels: labels,
			Help: "How long ago the oldest record this destination is sending was received; 0 when it has sent everything it read.",
		}, func() float64 { return d.age().Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "wirehouse_forward_routed_on_append_total", ConstLabels: labels,
			Help: "Spool records this destination routed as they were appended (keeping up), rather than reading them back from the spool.",
		}, func() float64 { return float64(d.cons.Taken()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wirehouse_forward_ring_members", ConstLabels: labels,
			Help: "Endpoints on this destination's consistent-hash ring.",
		}, func() float64 {
			d.mu.RLock()
			defer d.mu.RUnlock()
			return float64(d.ring.Len())
		}),
	}
	for _, g := range d.gauges {
		if err := d.cfg.Registerer.Register(g); err != nil {
			return fmt.Errorf("forward %s: register metrics: %w", d.cfg.Name, err)
		}
	}
	return nil
}

// age is the time since the oldest record in flight was received.
func (d *Destination) age() time.Duration {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	for _, r := range d.pending {
		if r.parts > 0 && !r.received.IsZero() {
			return time.Since(r.received)
		}
	}
	return 0
}

// Committed returns the destination's spool cursor.
func (d *Destination) Committed() uint64 { return d.cons.Committed() }

// Members returns the endpoints on the ring now.
func (d *Destination) Members() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return slices.Clone(d.ring.Members())
}

// Run forwards until ctx ends, then lets the requests in flight finish
// (up to the Timeout), commits what was delivered and returns.
func (d *Destination) Run(ctx context.Context) error {
	d.cons.Rewind() // from the cursor, also when the consumer was read before
	d.routed.Store(d.cons.Committed())
	d.cons.SetTap(d.tap)
	var wg sync.WaitGroup
	rctx, stopResolve := context.WithCancel(context.Background())
	if err := d.resolve(ctx); err != nil {
		d.log.Warn("forward: resolving endpoints failed; retrying", "err", err)
	}
	wg.Go(func() { d.resolveLoop(rctx) })
	cctx, stopCommit := context.WithCancel(context.Background())
	var cwg sync.WaitGroup
	cwg.Go(func() { d.commitLoop(cctx) })

	err := d.read(ctx)
	d.cons.SetTap(nil)

	// Drain: wait for what is in flight, up to the timeout.
	deadline := time.Now().Add(d.cfg.Timeout)
	for d.busy() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stopResolve()
	wg.Wait()
	d.mu.Lock()
	d.pmu.Lock()
	d.stopping = true
	d.space.Broadcast()
	d.pmu.Unlock()
	eps := d.endpoints
	d.endpoints = map[string]*endpoint{}
	d.mu.Unlock()
	for _, ep := range eps {
		ep.stop()
	}
	for _, ep := range eps {
		ep.wait()
		ep.exp.close() //nolint:errcheck // closing
	}
	stopCommit()
	cwg.Wait()
	if cerr := d.commitDone(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}

// busy reports whether parts are in flight.
func (d *Destination) busy() bool {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	return d.inflight > 0
}

// Close unregisters the destination's gauges.
func (d *Destination) Close() error {
	for _, g := range d.gauges {
		d.cfg.Registerer.Unregister(g)
	}
	d.gauges = nil
	return nil
}

// read is the reader loop: spool records are routed into the endpoints'
// open batches.
func (d *Destination) read(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.ringReady:
		}
		rec, err := d.cons.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("forward %s: read spool: %w", d.cfg.Name, err)
		}
		if !slices.Contains(d.cfg.Signals, rec.Signal) {
			// Not sent here: done at once. Consecutive done records are
			// one entry, so that records of other signals behind a stuck
			// one do not pile up.
			d.passOver(rec)
			d.routed.Store(rec.Seq)
			continue
		}
		// One reference of the reader's own until routing ends, so that
		// the record cannot look done while its parts are being added.
		r := &record{seq: rec.Seq, received: rec.Received, parts: 1}
		d.pmu.Lock()
		d.pending = append(d.pending, r)
		d.pmu.Unlock()
		// Wait for room in the window.
		d.pmu.Lock()
		for d.inflight > 0 && d.inflight+int64(len(rec.Payload)) > d.cfg.Window && ctx.Err() == nil {
			d.waitSpace(ctx)
		}
		d.pmu.Unlock()
		if ctx.Err() != nil {
			return nil
		}
		d.routeMu.Lock()
		d.mu.RLock()
		d.routeRecord(rec, r)
		d.mu.RUnlock()
		d.routeMu.Unlock()
		d.routed.Store(rec.Seq)
	}
}

// passOver records rec, of a signal not sent here, as done at once.
// Consecutive done records are one entry, so that records of other
// signals behind a stuck one do not pile up.
func (d *Destination) passOver(rec spool.Record) {
	d.pmu.Lock()
	if n := len(d.pending); n > 0 && d.pending[n-1].parts == 0 {
		d.pending[n-1].seq = rec.Seq
	} else {
		d.pending = append(d.pending, &record{seq: rec.Seq, received: rec.Received})
	}
	d.pmu.Unlock()
	d.kick()
}

// routeRecord routes rec, whose entry r is in pending, and drops r's
// reference of the reader's own. routeMu and mu's read lock are held.
func (d *Destination) routeRecord(rec spool.Record, r *record) {
	if err := d.routeLocked(rec.Signal, rec.Tenant, []*record{r}, rec.Payload); err != nil {
		n, _ := rec.Signal.Count(rec.Payload)
		d.m.records.WithLabelValues(d.cfg.Name, rec.Signal.String(), "refused").Add(float64(n))
		d.log.Error("forward: a spooled request cannot be routed; dropped", "seq", rec.Seq, "signal", rec.Signal.String(), "err", err)
	}
	d.release([]*record{r})
}

// tap is the consumer's spool tap: while the reader has handed on every
// record before rec and rec fits in the window, rec is routed as it is
// appended, from the receiver's buffer, instead of being kept in memory
// by the spool and read back. Anything else (the reader behind, the
// window full, the ring or a lock busy) leaves rec to the reader. It runs
// under the spool's lock, so it never waits for a lock.
func (d *Destination) tap(rec spool.Record) bool {
	if d.routed.Load() != rec.Seq-1 {
		return false
	}
	if !slices.Contains(d.cfg.Signals, rec.Signal) {
		d.passOver(rec)
		d.routed.Store(rec.Seq)
		return true
	}
	select {
	case <-d.ringReady:
	default:
		return false
	}
	if !d.routeMu.TryLock() {
		return false
	}
	defer d.routeMu.Unlock()
	if !d.mu.TryRLock() {
		return false
	}
	defer d.mu.RUnlock()
	d.pmu.Lock()
	if d.stopping || d.inflight > 0 && d.inflight+int64(len(rec.Payload)) > d.cfg.Window {
		d.pmu.Unlock()
		return false
	}
	r := &record{seq: rec.Seq, received: rec.Received, parts: 1}
	d.pending = append(d.pending, r)
	d.pmu.Unlock()
	d.routeRecord(rec, r)
	d.routed.Store(rec.Seq)
	return true
}

// waitSpace waits on d.space (pmu held) until signalled or ctx ends.
func (d *Destination) waitSpace(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		d.pmu.Lock()
		d.space.Broadcast()
		d.pmu.Unlock()
	})
	d.space.Wait()
	stop()
}

// route cuts body, an export request of sig carrying the parts of recs
// (one record, or a batch being routed again), into the open batches of
// the ring's endpoints, appending it on the wire. A body larger than
// MaxBatchBytes is split first, so that no request sent is much larger.
func (d *Destination) route(sig otlpwire.Signal, tenant string, recs []*record, body []byte) error {
	d.routeMu.Lock()
	defer d.routeMu.Unlock()
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.routeLocked(sig, tenant, recs, body)
}

// routeLocked is route with routeMu and mu's read lock held.
func (d *Destination) routeLocked(sig otlpwire.Signal, tenant string, recs []*record, body []byte) error {
	if len(body) <= d.cfg.MaxBatchBytes {
		return d.routeOne(sig, tenant, recs, body)
	}
	var chunks func(func([]byte, error) bool)
	switch sig {
	case otlpwire.SignalLogs:
		chunks = func(yield func([]byte, error) bool) {
			for c, err := range d.splitter.SplitLogs(body) {
				if !yield(c, err) {
					return
				}
			}
		}
	case otlpwire.SignalTraces:
		chunks = func(yield func([]byte, error) bool) {
			for c, err := range d.splitter.SplitTraces(body) {
				if !yield(c, err) {
					return
				}
			}
		}
	default:
		chunks = func(yield func([]byte, error) bool) {
			for c, err := range d.splitter.SplitMetrics(body) {
				if !yield(c, err) {
					return
				}
			}
		}
	}
	if err := sig.Validate(body); err != nil {
		return err // all or nothing: nothing of it is sent
	}
	for c, err := range chunks {
		if err != nil {
			return err
		}
		if err := d.routeOne(sig, tenant, recs, c); err != nil {
			return err
		}
	}
	return nil
}

// routeOne routes body under the ring's read lock (held by the caller)
// and every endpoint's lock, so that neither the ring nor a batch changes
// meanwhile.
func (d *Destination) routeOne(sig otlpwire.Signal, tenant string, recs []*record, body []byte) error {
	eps := d.eps
	n := len(eps)
	if cap(d.dst) < n {
		d.dst, d.lens = make([][]byte, n), make([]int, n)
	}
	d.dst, d.lens = d.dst[:n], d.lens[:n]
	byTenant := d.cfg.TenantHeader != ""
	if cap(d.bs) < n {
		d.bs = make([]*batch, n)
	}
	d.bs = d.bs[:n]
	for i, ep := range eps {
		ep.mu.Lock()
		b := ep.openFor(sig, tenant, byTenant, d.cfg.MaxBatchBytes)
		d.bs[i], d.dst[i], d.lens[i] = b, b.body, len(b.body)
	}
	err := d.routers[sig].Route(sig, d.dst, body, d.ring.Shard)
	added := int64(0)
	d.pmu.Lock()
	for i, ep := range eps {
		b := d.bs[i]
		b.body = d.dst[i]
		if part := b.body[d.lens[i]:]; len(part) > 0 {
			c, _ := sig.Count(part)
			b.count += c
			b.recs = append(b.recs, recs...)
			for _, r := range recs {
				r.parts++
			}
			added += int64(len(part))
			if ep.sending == 0 || len(ep.ready) > 0 {
				ep.cond.Signal() // else the worker sending takes it when done
			}
		}
	}
	d.inflight += added
	d.pmu.Unlock()
	for _, ep := range eps {
		ep.mu.Unlock()
	}
	return err
}

// release drops one reference of each of recs (a batch delivered or
// dropped, or the reader's own).
func (d *Destination) release(recs []*record) {
	d.pmu.Lock()
	last := false
	for _, r := range recs {
		r.parts--
		last = last || r.parts == 0
	}
	d.pmu.Unlock()
	if last {
		d.kick()
	}
}

// done marks b delivered or refused for good; its body is reused if
// reuse is set.
func (d *Destination) done(b *batch, reuse bool) {
	d.pmu.Lock()
	d.inflight -= int64(len(b.body))
	d.space.Broadcast()
	d.pmu.Unlock()
	d.release(b.recs)
	if !reuse {
		b.body = nil
	}
	putBatch(b)
}

// reroute routes the batches of an endpoint that left the ring again, by
// their content, onto the ring as it is now.
func (d *Destination) reroute(batches []*batch) {
	for _, b := range batches {
		d.pmu.Lock()
		stopping := d.stopping
		d.pmu.Unlock()
		if stopping {
			return // sent again after the restart
		}
		<-d.ringReady
		// The batch's references move to the parts it is cut into.
		if err := d.route(b.sig, b.tenant, b.recs, b.body); err != nil {
			d.log.Error("forward: a batch cannot be routed again; dropped", "signal", b.sig.String(), "err", err)
		}
		d.done(b, false) // its endpoint's worker may have been stopped mid-send
	}
}

func (d *Destination) kick() {
	select {
	case d.commit <- struct{}{}:
	default:
	}
}

// commitLoop commits the cursor past completed records, at most every
// commitEvery (each commit is an fsync).
func (d *Destination) commitLoop(ctx context.Context) {
	t := time.NewTicker(commitEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		select {
		case <-d.commit:
		default:
			continue
		}
		if err := d.commitDone(); err != nil {
			d.log.Error("forward: commit failed", "err", err)
		}
	}
}

const commitEvery = 100 * time.Millisecond

// commitDone commits up to the last record of the completed prefix.
func (d *Destination) commitDone() error {
	d.pmu.Lock()
	i := 0
	for i < len(d.pending) && d.pending[i].parts == 0 {
		i++
	}
	if i == 0 {
		d.pmu.Unlock()
		return nil
	}
	seq := d.pending[i-1].seq
	d.pending = slices.Delete(d.pending, 0, i)
	d.space.Broadcast()
	d.pmu.Unlock()
	return d.cons.Commit(seq)
}

// resolveLoop re-resolves the endpoints every ResolveEvery.
func (d *Destination) resolveLoop(ctx context.Context) {
	_, static := d.cfg.Resolver.(Static)
	every := d.cfg.ResolveEvery
	if static {
		every = d.cfg.RetryMax // only until the endpoints are set
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if static && len(d.Members()) > 0 {
			return
		}
		if err := d.resolve(ctx); err != nil {
			d.log.Warn("forward: resolving endpoints failed; keeping the ring", "err", err)
		}
	}
}

// resolve asks the resolver and applies a changed, non-empty answer.
func (d *Destination) resolve(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	eps, err := d.cfg.Resolver.Resolve(rctx)
	if err != nil {
		return err
	}
	if len(eps) == 0 {
		return errors.New("no endpoints")
	}
	return d.SetEndpoints(eps)
}

// SetEndpoints puts exactly eps on the ring: endpoints new to it start,
// those gone stop, and their queued parts are routed again.
func (d *Destination) SetEndpoints(eps []string) error {
	if len(eps) == 0 {
		return errors.New("forward: set endpoints: none")
	}
	ring := NewRing(eps)
	d.mu.Lock()
	if slices.Equal(ring.Members(), d.ring.Members()) {
		d.mu.Unlock()
		return nil
	}
	var errs []error
	var ok []string
	made := map[string]*endpoint{}
	for _, name := range ring.Members() {
		if d.endpoints[name] != nil {
			ok = append(ok, name)
			continue
		}
		exp, err := newExporter(&d.cfg, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		made[name] = newEndpoint(d, name, exp)
		ok = append(ok, name)
	}
	if len(ok) == 0 {
		d.mu.Unlock()
		return errors.Join(errs...) // the ring stays as it was
	}
	ring = NewRing(ok)
	var gone []*endpoint
	for name, ep := range d.endpoints {
		if !slices.Contains(ok, name) {
			gone = append(gone, ep)
			delete(d.endpoints, name)
			d.m.member.DeleteLabelValues(d.cfg.Name, name)
		}
	}
	for name, ep := range made {
		d.endpoints[name] = ep
		d.m.member.WithLabelValues(d.cfg.Name, name).Set(1)
	}
	old := d.ring
	d.ring = ring
	d.eps = d.eps[:0:0]
	for _, name := range ring.Members() {
		d.eps = append(d.eps, d.endpoints[name])
	}
	if old.Len() == 0 && ring.Len() > 0 {
		close(d.ringReady)
	}
	d.mu.Unlock()
	d.log.Info("forward: endpoints changed", "endpoints", strings.Join(ring.Members(), ","), "before", strings.Join(old.Members(), ","))
	for _, ep := range gone {
		ep.stop()
	}
	for _, ep := range gone {
		go func() {
			ep.wait()
			ep.exp.close() //nolint:errcheck // closing
			d.reroute(ep.drain())
		}()
	}
	return errors.Join(errs...)
}

// backoff is the wait before attempt n+1 (n from 0), with jitter, at
// least the server's delay.
func (d *Destination) backoff(n int, after time.Duration) time.Duration {
	w := d.cfg.RetryInitial
	for i := 0; i < n && w < d.cfg.RetryMax && w < math.MaxInt64/2; i++ {
		w *= 2
	}
	w = min(w, d.cfg.RetryMax)
	w = time.Duration(float64(w) * (0.5 + rand.Float64()))
	return max(w, min(after, maxServerDelay))
}

const maxServerDelay = 5 * time.Minute
