package forward

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
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
	// ProbeEvery is how often an endpoint that stopped answering is
	// asked, with an empty export request, whether it is back; default
	// 1 s. When it answers, or any request to it succeeds, the batches
	// waiting out a backoff for it are sent at once. A wait the server
	// asked for (Retry-After, RetryInfo) is not cut short.
	ProbeEvery time.Duration
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
		ProbeEvery:    time.Second,
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
	orDefault(&c.ProbeEvery, d.ProbeEvery)
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
	case c.Timeout < 0 || c.RetryInitial < 0 || c.RetryMax < c.RetryInitial || c.ProbeEvery < 0 || c.MaxBatchBytes < 0 || c.Window < 0 || c.Workers < 0:
		return fmt.Errorf("forward %s: negative timeout, retry, probe, batch, window or workers, or retry max under retry initial", c.Name)
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
	skip     []bool // per shard: its part was delivered before a restart; under routeMu

	mu        sync.RWMutex // guards ring, eps and endpoints; routing holds the read lock
	ring      *Ring
	eps       []*endpoint // in the order of ring.Members()
	endpoints map[string]*endpoint
	ringReady chan struct{} // closed once the ring has a member
	// gen counts the rings, and routing is the routingHash of this one;
	// written under mu and pmu both.
	gen, routing uint64

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

	// The acknowledged-ranges file (acked.go), written by commitDone
	// only: its path, its last content and whether that holds no range;
	// and what Run read from it, which does not change while it runs.
	ackedPath  string
	ackedLast  []byte
	ackedEmpty bool
	unsaved    bool // parts were delivered since the file was last written; under pmu
	resume     *resume
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
		ackedPath: filepath.Join(sp.Dir(), ConsumerName(cfg.Name)+ackedSuffix),
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
			Help: "Spool records this destination has not delivered yet (in full: a record is delivered when every endpoint it was routed to has its part).",
		}, func() float64 { return float64(d.undelivered()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wirehouse_forward_queue_bytes", ConstLabels: labels,
			Help: "Bytes of spool segments this destination pins: those holding records after its cursor, the first it has not delivered (to within 256 KiB).",
		}, func() float64 { return float64(d.sp.BytesAfter(d.cons.Committed())) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "wirehouse_forward_queue_age_seconds", ConstLabels: labels,
			Help: "How long ago the oldest record this destination has read and not delivered was received; 0 when it has delivered everything it read.",
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

// age is the time since the oldest record read and not delivered was
// received (the records not read yet are younger).
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

// undelivered is the number of spool records after the cursor that are
// not delivered in full: those after it, less those done in flight.
func (d *Destination) undelivered() uint64 {
	last := d.sp.Stats().LastSeq // before pmu: the tap takes pmu under the spool's lock
	d.pmu.Lock()
	defer d.pmu.Unlock()
	committed := d.cons.Committed()
	n := last - min(committed, last)
	for _, r := range d.pending {
		if r.parts == 0 && r.first > committed {
			n -= min(n, r.seq-r.first+1)
		}
	}
	return n
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
	committed := d.cons.Committed()
	rs, err := loadAcked(d.ackedPath, d.cfg.Name, committed)
	if err != nil {
		d.log.Warn("forward: the acknowledged-ranges file cannot be used; the records after the cursor are all sent again", "cursor", committed, "err", err)
	}
	d.resume = rs
	d.ackedEmpty = rs.empty() && err == nil
	if !rs.empty() {
		d.log.Info("forward: records after the cursor were delivered before the restart; they are not sent again",
			"cursor", committed, "through", rs.last)
	}
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

	err = d.read(ctx)
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
	if cerr := d.commitDone(true); cerr != nil && err == nil {
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
		if d.resume.isDone(rec.Seq, rec.Received) {
			// Delivered in full before a restart.
			n, _ := rec.Signal.Count(rec.Payload)
			d.m.records.WithLabelValues(d.cfg.Name, rec.Signal.String(), "skipped").Add(float64(n))
			d.passOver(rec)
			d.routed.Store(rec.Seq)
			continue
		}
		r := newRecord(rec)
		d.pmu.Lock()
		d.pending = append(d.pending, r)
		// Wait for room in the window.
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

// newRecord returns the entry of rec, holding one reference of the
// reader's own until routing ends, so that it cannot look done while its
// parts are being added.
func newRecord(rec spool.Record) *record {
	return &record{first: rec.Seq, seq: rec.Seq, received: rec.Received, since: time.Now(), parts: 1, routing: true}
}

// passOver records rec as done at once: of a signal not sent here, or
// delivered before a restart. Consecutive done records are one entry,
// so that records of other signals behind a stuck one do not pile up.
func (d *Destination) passOver(rec spool.Record) {
	d.pmu.Lock()
	if n := len(d.pending); n > 0 && d.pending[n-1].parts == 0 {
		d.pending[n-1].seq = rec.Seq
	} else {
		d.pending = append(d.pending, &record{first: rec.Seq, seq: rec.Seq, received: rec.Received, since: time.Now()})
	}
	d.pmu.Unlock()
	d.kick()
}

// routeRecord routes rec, whose entry r is in pending, and drops r's
// reference of the reader's own. routeMu and mu's read lock are held.
// Parts that the acknowledged-ranges file says an endpoint got before a
// restart, on the same ring, are not sent again.
func (d *Destination) routeRecord(rec spool.Record, r *record) {
	skip := d.skip[:0]
	if d.resume.applies(rec.Seq, rec.Received) {
		some := false
		for _, ep := range d.eps {
			s := d.resume.delivered(ep.name, d.routing, rec.Seq)
			skip = append(skip, s)
			some = some || s
		}
		if !some {
			skip = skip[:0]
		}
	}
	d.skip = skip
	if err := d.routeLocked(rec.Signal, rec.Tenant, []*record{r}, rec.Payload, skip); err != nil {
		n, _ := rec.Signal.Count(rec.Payload)
		d.m.records.WithLabelValues(d.cfg.Name, rec.Signal.String(), "refused").Add(float64(n))
		d.log.Error("forward: a spooled request cannot be routed; dropped", "seq", rec.Seq, "signal", rec.Signal.String(), "err", err)
	}
	d.doneRouting(r)
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
	r := newRecord(rec)
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
	return d.routeLocked(sig, tenant, recs, body, nil)
}

// routeLocked is route with routeMu and mu's read lock held. If skip is
// not empty, the parts for the ring's endpoints i with skip[i] are not
// sent: they were delivered before a restart.
func (d *Destination) routeLocked(sig otlpwire.Signal, tenant string, recs []*record, body []byte, skip []bool) error {
	if len(body) <= d.cfg.MaxBatchBytes {
		return d.routeOne(sig, tenant, recs, body, skip)
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
		if err := d.routeOne(sig, tenant, recs, c, skip); err != nil {
			return err
		}
	}
	return nil
}

// routeOne routes body under the ring's read lock (held by the caller)
// and every endpoint's lock, so that neither the ring nor a batch changes
// meanwhile.
func (d *Destination) routeOne(sig otlpwire.Signal, tenant string, recs []*record, body []byte, skip []bool) error {
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
	added, skipped := int64(0), 0
	d.pmu.Lock()
	for _, r := range recs {
		if r.gen == 0 { // routed for the first time: on this ring
			r.gen = d.gen
			r.at = slices.Grow(r.at, n)
		}
	}
	for i, ep := range eps {
		b := d.bs[i]
		b.body = d.dst[i]
		part := b.body[d.lens[i]:]
		if len(part) == 0 {
			continue
		}
		c, _ := sig.Count(part)
		if len(skip) > 0 && skip[i] {
			// Delivered before a restart: dropped, and remembered as
			// delivered again.
			b.body = b.body[:d.lens[i]]
			skipped += c
			for _, r := range recs {
				r.shareOf(ep)
			}
			continue
		}
		b.count += c
		b.recs = append(b.recs, recs...)
		for _, r := range recs {
			r.parts++
			r.shareOf(ep).n++
		}
		added += int64(len(part))
		if ep.sending == 0 || len(ep.ready) > 0 {
			ep.cond.Signal() // else the worker sending takes it when done
		}
	}
	d.inflight += added
	d.pmu.Unlock()
	for _, ep := range eps {
		ep.mu.Unlock()
	}
	if skipped > 0 {
		d.m.records.WithLabelValues(d.cfg.Name, sig.String(), "skipped").Add(float64(skipped))
	}
	return err
}

// done marks b, of ep, delivered or refused for good, or moved to
// other endpoints; its body is reused if reuse is set.
func (d *Destination) done(b *batch, ep *endpoint, reuse bool) {
	d.pmu.Lock()
	d.inflight -= int64(len(b.body))
	d.space.Broadcast()
	d.pmu.Unlock()
	d.release(b.recs, ep)
	if !reuse {
		b.body = nil
	}
	putBatch(b)
}

// reroute routes the batches of ep, which left the ring, again, by their
// content, onto the ring as it is now. Their records were routed on
// another ring: what they delivered is not written to the
// acknowledged-ranges file by endpoint, only once delivered in full.
func (d *Destination) reroute(ep *endpoint, batches []*batch) {
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
		d.done(b, ep, false) // its endpoint's worker may have been stopped mid-send
	}
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
	d.pmu.Lock()
	d.gen++
	d.routing = routingHash([3]otlpwire.RouteKey{d.cfg.RouteLogs, d.cfg.RouteMetrics, d.cfg.RouteTraces}, ring.Members())
	d.pmu.Unlock()
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
			d.reroute(ep, ep.drain())
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
