package querybudget

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Config configures a Gate. Start from DefaultConfig.
type Config struct {
	// MaxConcurrent bounds the queries running at once, all tenants
	// together. Default one less than the processors Go runs on
	// (GOMAXPROCS), at least 1: queries are CPU-bound, and ingestion
	// keeps a processor's worth of time to answer exporters promptly
	// whatever the queries do. It must be positive.
	MaxConcurrent int
	// MaxConcurrentPerTenant bounds the queries of one tenant running at
	// once, so that one tenant cannot hold every slot. Default three
	// quarters of MaxConcurrent, at least 1; at most MaxConcurrent.
	MaxConcurrentPerTenant int
	// MaxQueueWait is how long a query waits for a slot (and its memory
	// reserve) before it is refused with a *BusyError. Default 10 s; 0
	// refuses at once.
	MaxQueueWait time.Duration
	// Memory is the bytes queries may hold together: each admitted
	// query reserves Memory/MaxConcurrent, and borrows more, while it is
	// free, up to MaxQueryMemory. It is the queries' share of the
	// server's memory ceiling. Default 256 MiB. It must be positive.
	Memory int64
	// MaxQueryMemory bounds the bytes one query may hold; past it the
	// query fails with a *LimitError (its own size, never the others').
	// Default Memory/2; at most Memory.
	MaxQueryMemory int64
	// MaxTails bounds the live tails (Loki's /tail WebSockets) open at
	// once, and MaxTailsPerTenant those of one tenant. Defaults 100 and
	// 50.
	MaxTails, MaxTailsPerTenant int
	// RetryAfter is the wait a refusal suggests (HTTP Retry-After).
	// Default 5 s.
	RetryAfter time.Duration
	// PerTenant, if set, gives a tenant's own limits (internal/overrides'
	// max_concurrent_queries and max_query_range); zero fields keep the
	// gate's. It is called at every admission and must be quick.
	PerTenant func(tenant string) TenantLimits
	// Registerer gets the gate's metrics, if set.
	Registerer prometheus.Registerer
	// OnReserved, if set, is called with the bytes of Memory the
	// running queries have reserved or borrowed, each time that
	// changes (serve moves the Go runtime's soft memory limit with it).
	// It must not call the gate.
	OnReserved func(bytes int64)
}

// TenantLimits are one tenant's query limits; a zero field is no limit of
// the tenant's own.
type TenantLimits struct {
	// MaxConcurrent bounds the tenant's queries running at once, in
	// place of MaxConcurrentPerTenant (never above MaxConcurrent).
	MaxConcurrent int
	// MaxRange bounds the time range one query of the tenant covers
	// (Loki's max_query_length, Mimir's max_total_query_length); the
	// APIs check it with readapi.CheckRange.
	MaxRange time.Duration
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	n := max(1, runtime.GOMAXPROCS(0)-1)
	return Config{
		MaxConcurrent: n, MaxConcurrentPerTenant: max(1, n*3/4), MaxQueueWait: 10 * time.Second,
		Memory: 256 << 20, MaxTails: 100, MaxTailsPerTenant: 50, RetryAfter: 5 * time.Second,
	}
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.MaxConcurrent <= 0:
		return fmt.Errorf("querybudget: MaxConcurrent %d, must be positive", c.MaxConcurrent)
	case c.MaxConcurrentPerTenant <= 0 || c.MaxConcurrentPerTenant > c.MaxConcurrent:
		return fmt.Errorf("querybudget: MaxConcurrentPerTenant %d, must be 1 to MaxConcurrent (%d)", c.MaxConcurrentPerTenant, c.MaxConcurrent)
	case c.MaxQueueWait < 0:
		return fmt.Errorf("querybudget: MaxQueueWait %v, must not be negative", c.MaxQueueWait)
	case c.Memory <= 0:
		return fmt.Errorf("querybudget: Memory %d, must be positive", c.Memory)
	case c.MaxQueryMemory < 0 || c.MaxQueryMemory > c.Memory:
		return fmt.Errorf("querybudget: MaxQueryMemory %d, must be 0 (Memory/2) to Memory (%d)", c.MaxQueryMemory, c.Memory)
	case c.MaxTails <= 0 || c.MaxTailsPerTenant <= 0 || c.MaxTailsPerTenant > c.MaxTails:
		return fmt.Errorf("querybudget: MaxTails %d and MaxTailsPerTenant %d, must be positive, the second at most the first", c.MaxTails, c.MaxTailsPerTenant)
	case c.RetryAfter <= 0:
		return fmt.Errorf("querybudget: RetryAfter %v, must be positive", c.RetryAfter)
	}
	return nil
}

// BusyError refuses a query or a tail because the server is busy: every
// slot taken, or the queries' memory in use, for MaxQueueWait. APIs
// answer it with 429 or 503 and a Retry-After of RetryAfter.
type BusyError struct {
	Reason     string // "concurrency", "tenant concurrency", "memory", "tails", "tenant tails"
	RetryAfter time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("too many queries at once (%s): retry in %s", e.Reason, e.RetryAfter)
}

// LimitError is the error of a query that would hold more memory than
// Config.MaxQueryMemory on its own.
type LimitError struct{ Limit int64 }

// TooLarge says the query is past a limit of its own (readapi.TooLarge).
func (e *LimitError) TooLarge() bool { return true }

func (e *LimitError) Error() string {
	return fmt.Sprintf("query past its memory limit of %d bytes: narrow the time range or the selector, or aggregate", e.Limit)
}

// Gate admits queries within a concurrency and a memory budget. It is
// safe for concurrent use; a nil *Gate admits everything.
type Gate struct {
	cfg     Config
	reserve int64 // each query's share of Memory, taken at admission

	mu       sync.Mutex
	running  int
	byTenant map[string]int
	free     int64         // of Memory, not reserved or borrowed
	changed  chan struct{} // closed (and replaced) when a slot or memory is given back
	tails    int
	tailsBy  map[string]int

	m metrics
}

// New returns a Gate of cfg.
func New(cfg Config) (*Gate, error) {
	if cfg.MaxQueryMemory == 0 {
		cfg.MaxQueryMemory = cfg.Memory / 2
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &Gate{
		cfg: cfg, reserve: cfg.Memory / int64(cfg.MaxConcurrent),
		byTenant: map[string]int{}, tailsBy: map[string]int{},
		free: cfg.Memory, changed: make(chan struct{}),
		m: newMetrics(cfg.Registerer),
	}
	g.m.memory.Set(0)
	return g, nil
}

// Config returns the gate's settings, defaults filled in.
func (g *Gate) Config() Config { return g.cfg }

// Admit waits for a slot for a query of tenant t, at most MaxQueueWait
// or until ctx ends, and returns its ticket; the caller must call
// Ticket.Done when the query ends. It returns a *BusyError when no slot
// came in time, or ctx's error.
func (g *Gate) Admit(ctx context.Context, t string) (*Ticket, error) {
	if g == nil {
		return nil, nil
	}
	var timer <-chan time.Time
	waiting := false
	defer func() {
		if waiting {
			g.m.waiting.Dec()
		}
	}()
	perTenant, maxRange := g.cfg.MaxConcurrentPerTenant, time.Duration(0)
	if g.cfg.PerTenant != nil {
		tl := g.cfg.PerTenant(t)
		if tl.MaxConcurrent > 0 {
			perTenant = min(tl.MaxConcurrent, g.cfg.MaxConcurrent)
		}
		maxRange = tl.MaxRange
	}
	for {
		g.mu.Lock()
		reason := ""
		switch {
		case g.running >= g.cfg.MaxConcurrent:
			reason = "concurrency"
		case g.byTenant[t] >= perTenant:
			reason = "tenant concurrency"
		case g.free < g.reserve:
			reason = "memory"
		}
		if reason == "" {
			g.running++
			g.byTenant[t]++
			g.free -= g.reserve
			g.mu.Unlock()
			g.m.running.Inc()
			g.m.admitted.Inc()
			g.m.memory.Add(float64(g.reserve))
			g.reservedChanged()
			return &Ticket{g: g, tenant: t, ctx: ctx, reserved: g.reserve, maxRange: maxRange}, nil
		}
		changed := g.changed
		g.mu.Unlock()
		if timer == nil {
			if g.cfg.MaxQueueWait <= 0 {
				g.m.refused.WithLabelValues(reason).Inc()
				return nil, &BusyError{Reason: reason, RetryAfter: g.cfg.RetryAfter}
			}
			t := time.NewTimer(g.cfg.MaxQueueWait)
			defer t.Stop()
			timer = t.C
			waiting = true
			g.m.waiting.Inc()
		}
		select {
		case <-changed:
		case <-timer:
			g.m.refused.WithLabelValues(reason).Inc()
			return nil, &BusyError{Reason: reason, RetryAfter: g.cfg.RetryAfter}
		case <-ctx.Done():
			g.m.canceled.Inc()
			return nil, ctx.Err()
		}
	}
}

// signalLocked wakes the queries waiting for a slot or memory.
func (g *Gate) signalLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// OpenTail takes a slot for a live tail of tenant t, or refuses it at
// once with a *BusyError; the caller calls the returned func when the
// tail ends. A tail's queries are admitted one by one besides.
func (g *Gate) OpenTail(t string) (func(), error) {
	if g == nil {
		return func() {}, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	reason := ""
	switch {
	case g.tails >= g.cfg.MaxTails:
		reason = "tails"
	case g.tailsBy[t] >= g.cfg.MaxTailsPerTenant:
		reason = "tenant tails"
	}
	if reason != "" {
		g.m.refused.WithLabelValues(reason).Inc()
		return nil, &BusyError{Reason: reason, RetryAfter: g.cfg.RetryAfter}
	}
	g.tails++
	g.tailsBy[t]++
	g.m.tails.Inc()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.tails--
			if g.tailsBy[t]--; g.tailsBy[t] == 0 {
				delete(g.tailsBy, t)
			}
			g.m.tails.Dec()
		})
	}, nil
}

// Ticket is an admitted query's hold on the gate: its slot and the
// memory it charges. A nil *Ticket charges nothing (queries run outside
// a gate). Charge and Release may be called from several goroutines.
type Ticket struct {
	g        *Gate
	tenant   string
	ctx      context.Context
	maxRange time.Duration // the tenant's, 0 for none (TenantLimits)

	mu       sync.Mutex
	held     int64 // bytes charged and not released
	peak     int64
	reserved int64 // taken from the gate: its reserve and what it borrowed
	done     bool
}

// MaxRange is the longest time range the query's tenant may cover, 0
// for no bound (and for a nil ticket).
func (t *Ticket) MaxRange() time.Duration {
	if t == nil {
		return 0
	}
	return t.maxRange
}

// Charge counts n more bytes the query holds. Past the query's reserve
// it borrows from the gate's free memory; it fails with a *LimitError
// past MaxQueryMemory and with a *BusyError when the gate has no memory
// left to lend (the query should stop and give back what it holds).
func (t *Ticket) Charge(n int64) error {
	if t == nil || n <= 0 {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held+n > t.g.cfg.MaxQueryMemory {
		t.g.m.refused.WithLabelValues("query memory").Inc()
		return &LimitError{Limit: t.g.cfg.MaxQueryMemory}
	}
	if need := t.held + n - t.reserved; need > 0 {
		// Borrow in steps of a reserve, so that a query growing byte by
		// byte takes the gate's lock rarely.
		need = max(need, t.g.reserve/4)
		g := t.g
		g.mu.Lock()
		if g.free < need {
			g.mu.Unlock()
			g.m.refused.WithLabelValues("memory").Inc()
			return &BusyError{Reason: "memory", RetryAfter: g.cfg.RetryAfter}
		}
		g.free -= need
		g.mu.Unlock()
		g.m.memory.Add(float64(need))
		g.reservedChanged()
		t.reserved += need
	}
	t.held += n
	t.peak = max(t.peak, t.held)
	return nil
}

// Release gives back n bytes of what Charge counted; what the query
// borrowed past its reserve and no longer needs goes back to the gate.
func (t *Ticket) Release(n int64) {
	if t == nil || n <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.held = max(0, t.held-n)
	if extra := t.reserved - max(t.held, t.g.reserve); extra > t.g.reserve/2 && !t.done {
		t.giveBack(extra)
	}
}

// giveBack returns n of the ticket's reserved bytes to the gate.
func (t *Ticket) giveBack(n int64) {
	g := t.g
	t.reserved -= n
	g.mu.Lock()
	g.free += n
	g.signalLocked()
	g.mu.Unlock()
	g.m.memory.Sub(float64(n))
	g.reservedChanged()
}

// reservedChanged tells OnReserved what the running queries hold now.
func (g *Gate) reservedChanged() {
	if g.cfg.OnReserved == nil {
		return
	}
	g.mu.Lock()
	n := g.cfg.Memory - g.free
	g.mu.Unlock()
	g.cfg.OnReserved(n)
}

// Held returns the bytes charged and not released, and the most held
// at once.
func (t *Ticket) Held() (now, peak int64) {
	if t == nil {
		return 0, 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held, t.peak
}

// Done ends the query: its slot and memory go back to the gate. A query
// whose context was canceled (its client went away) is counted as
// canceled. Done may be called more than once.
func (t *Ticket) Done() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	g := t.g
	if errors.Is(t.ctx.Err(), context.Canceled) {
		g.m.canceled.Inc()
	}
	g.m.running.Dec()
	g.m.memory.Sub(float64(t.reserved))
	g.mu.Lock()
	g.running--
	if g.byTenant[t.tenant]--; g.byTenant[t.tenant] == 0 {
		delete(g.byTenant, t.tenant)
	}
	g.free += t.reserved
	t.reserved, t.held = 0, 0
	g.signalLocked()
	g.mu.Unlock()
	g.reservedChanged()
}

// Running returns the queries running and the live tails open.
func (g *Gate) Running() (queries, tails int) {
	if g == nil {
		return 0, 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.running, g.tails
}

type ticketKey struct{}

// NewContext returns a copy of ctx carrying t, for the query layers
// below an API (lakeread, the query engines) to charge.
func NewContext(ctx context.Context, t *Ticket) context.Context {
	return context.WithValue(ctx, ticketKey{}, t)
}

// FromContext returns the ticket ctx carries, nil if none (whose methods
// charge nothing).
func FromContext(ctx context.Context) *Ticket {
	t, _ := ctx.Value(ticketKey{}).(*Ticket)
	return t
}
