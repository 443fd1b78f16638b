package receiver

import "sync/atomic"

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
	b    *budget
	held int64
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
	r.held += n
	return true
}

// release returns everything the request holds.
func (r *reservation) release() {
	r.b.release(r.held)
	r.held, r.spare = 0, 0
}
