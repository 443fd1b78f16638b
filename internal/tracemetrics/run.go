package tracemetrics

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// fullEvery is how often Run writes every series, not only those counted
// since their last write: the connectors' flush interval.
const fullEvery = time.Minute

// Run feeds g the traces records of cons, a spool consumer of its own,
// from its cursor, until ctx ends: every second it expires edges, every
// flush interval it flushes to write (the series counted since their last
// write; every series once a minute, as the connectors write them, so
// that an idle one keeps a sample within Prometheus' five-minute
// lookback), then commits the cursor up to the last record the flush
// holds. So after a crash the records since the
// last commit are read again into counters that restart at zero (the
// zero points mark the reset), and none is counted twice in the store.
// A record that is not a traces request, or whose spans cannot be read,
// is passed over. Run returns nil when ctx ends (after a last flush), or
// the spool's error.
func (g *Generator) Run(ctx context.Context, cons *spool.Consumer, flushEvery time.Duration, write func(tenant string, req []byte) error) error {
	cons.Rewind()
	var (
		mu      sync.Mutex // held while a record is consumed, and through a flush
		last    uint64     // the last record consumed
		pending bool       // records consumed since the last commit
		full    time.Time  // the last flush of every series
	)
	last = cons.Committed()
	flush := func(now time.Time) {
		mu.Lock()
		defer mu.Unlock()
		g.Expire(now)
		all := now.Sub(full) >= fullEvery
		if g.Flush(now, all, write) != nil {
			return // write said why; the next flush writes it again
		}
		if all {
			full = now
		}
		if pending {
			if err := cons.Commit(last); err == nil {
				pending = false
			}
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		next := time.Now().Add(flushEvery)
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				if now.Before(next) {
					mu.Lock()
					g.Expire(now)
					mu.Unlock()
					continue
				}
				next = now.Add(flushEvery)
				flush(now)
			}
		}
	})
	var err error
	for {
		rec, rerr := cons.Next(ctx)
		if rerr != nil {
			if ctx.Err() == nil && !errors.Is(rerr, spool.ErrClosed) {
				err = fmt.Errorf("tracemetrics: read spool: %w", rerr)
			}
			break
		}
		mu.Lock()
		if rec.Signal == otlpwire.SignalTraces {
			g.Consume(rec.Tenant, rec.Payload, time.Now()) //nolint:errcheck // a malformed request's spans before the fault are counted; it was validated on receipt
		}
		last, pending = rec.Seq, true
		mu.Unlock()
	}
	close(done)
	wg.Wait()
	flush(time.Now())
	return err
}
