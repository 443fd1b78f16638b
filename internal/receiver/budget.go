package receiver

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	tenantctx "github.com/wirehouse/wirehouse/internal/tenant"
)

// budget bounds the bytes held by requests in flight: received bodies,
// decompressed bodies and transcoded JSON. Reservations never block; when
// the budget is spent the request is refused as overloaded, so memory stays
// bounded however many clients send at once.
type budget struct {
	max  int64
	used atomic.Int64
}

// acquire reserves n bytes and reports whether they fit.
func (b *budget) acquire(n int64) bool {
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *budget) release(n int64) { b.used.Add(-n) }

// full reports whether nothing more fits; the gRPC tap uses it to refuse a
// stream before its message is read.
func (b *budget) full() bool { return b.used.Load() >= b.max }

// reservation is one request's share of the budget.
type reservation struct {
	b *budget
	// share, if not nil, is the budget of the request's tenant's share
	// (Config.TenantLimits), taken from along with b.
	share *budget
	// overShare is set when a grow failed on share.
	overShare bool
	held      int64
	// spare is the part of held reserved ahead (prepay) and not yet
	// claimed by grow.
	spare int64
	// never is set when a grow failed that could not succeed even on an
	// idle server: the request is too large, not the server too busy.
	never bool
}

// prepay reserves n bytes ahead of knowing what the request needs (a gRPC
// call, before its message is read); grow takes from them first. It
// reports whether they fit.
func (r *reservation) prepay(n int64) bool {
	if !r.grow(n) {
		return false
	}
	r.spare += n
	return true
}

// trim gives back what was prepaid and not claimed.
func (r *reservation) trim() {
	r.b.release(r.spare)
	if r.share != nil {
		r.share.release(r.spare)
	}
	r.held -= r.spare
	r.spare = 0
}

// Grow is grow, for otlpgrpc.Budget.
func (r *reservation) Grow(n int64) bool { return r.grow(n) }

// grow reserves n more bytes; false if the budget is spent.
func (r *reservation) grow(n int64) bool {
	if n <= 0 {
		return true
	}
	if n <= r.spare {
		r.spare -= n
		return true
	}
	n -= r.spare
	r.spare = 0
	if !r.b.acquire(n) {
		r.never = r.held+n > r.b.max
		return false
	}
	if r.share != nil && !r.share.acquire(n) {
		r.b.release(n)
		r.overShare, r.never = true, r.held+n > r.share.max
		return false
	}
	r.held += n
	return true
}

// release returns everything the request holds.
func (r *reservation) release() {
	r.b.release(r.held)
	if r.share != nil {
		r.share.release(r.held)
	}
	r.held, r.spare = 0, 0
}

// reservationFor starts the reservation of a request of the tenant ctx
// carries: from the in-flight budget, and from the tenant's share of it
// when Config.TenantLimits gives one. A value, so that an HTTP request's
// stays on its handler's stack.
func (r *Receiver) reservationFor(ctx context.Context) reservation {
	return reservation{b: &r.budget, share: r.shareOf(tenantctx.FromContext(ctx))}
}

// tenantShare is the budget of a tenant's share, for the share it was
// made for.
type tenantShare struct {
	frac float64
	b    *budget
}

// shareOf returns the budget of tenant's share, nil without one. A
// changed share makes a new budget: requests under way give back to the
// old one, so for their time the tenant may hold up to both.
func (r *Receiver) shareOf(tenant string) *budget {
	if r.cfg.TenantLimits == nil {
		return nil
	}
	frac := r.cfg.TenantLimits.InflightShare(tenant)
	if !(frac > 0 && frac < 1) {
		return nil
	}
	if v, ok := r.shares.Load(tenant); ok && v.(*tenantShare).frac == frac {
		return v.(*tenantShare).b
	}
	s := &tenantShare{frac: frac, b: &budget{max: max(1, int64(frac*float64(r.budget.max)))}}
	// LoadOrStore: the first requests of a tenant, arriving at once, share
	// one budget.
	if v, loaded := r.shares.LoadOrStore(tenant, s); loaded {
		if old := v.(*tenantShare); old.frac == frac {
			return old.b
		}
		r.shares.Store(tenant, s)
	}
	return s.b
}

// retryAfter is the wait a refusal suggests: its own, else the
// configured one.
func (r *Receiver) retryAfter(rerr *pipeline.Error) time.Duration {
	if rerr.RetryAfter > 0 {
		return rerr.RetryAfter
	}
	return r.cfg.RetryAfter
}

// retryAfterSeconds is retryAfter in whole seconds, rounded up, as HTTP's
// Retry-After carries it.
func (r *Receiver) retryAfterSeconds(rerr *pipeline.Error) int {
	return max(1, int(math.Ceil(r.retryAfter(rerr).Seconds())))
}
