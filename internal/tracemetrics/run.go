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

// maxHeld is how many bytes of traces requests Run counts before it
// flushes, whatever the flush interval: the spool segments it holds back
// (its cursor waits for a flush) stay under it.
const maxHeld = 64 << 20

// Run feeds g the traces records of cons, a spool consumer of its own,
// from its cursor, until ctx ends: every second it expires edges; every
// flush interval, or sooner once it holds maxHeld bytes of traces, it
// flushes to write (the series counted since their last write; every
// series once a minute, as the connectors write them, so that an idle one
// keeps a sample within Prometheus' five-minute lookback), then commits
// the cursor up to the last record the flush holds. Records of other
// signals read while no traces are waiting for a flush are committed
// within a second, so that a spool full of logs is not held back by the
// flush interval. After a crash the records since the last commit are
// read again into counters that restart at zero (the zero points mark
// the reset), and none is counted twice in the store. A record whose
// spans cannot be read is passed over. Run returns nil when ctx ends
// (after a last flush), or the spool's error.
func (g *Generator) Run(ctx context.Context, cons *spool.Consumer, flushEvery time.Duration, write func(tenant string, req []byte) error) error {
	cons.Rewind()
	var (
		mu        sync.Mutex // held while a record is consumed, and through a flush
		last      uint64     // the last record consumed
		safe      uint64     // the last record whose spans are all in the store
		held      int        // bytes of traces consumed since the last flush
		committed uint64
		full      time.Time // the last flush of every series
	)
	committed = cons.Committed()
	last, safe = committed, committed
	commit := func() { // under mu
		if safe > committed && cons.Commit(safe) == nil {
			committed = safe
		}
	}
	flush := func(now time.Time) {
		mu.Lock()
		defer mu.Unlock()
		g.Expire(now)
		all := now.Sub(full) >= fullEvery
		if g.Flush(now, all, write) != nil {
			// write said why; the next flush writes the series again. The
			// counts stay in memory: past maxHeld the cursor moves on
			// anyway, so that a metric store that keeps refusing does not
			// hold the spool (and so every signal's ingest) back; a crash
			// before the store takes them would then lose those counts.
			if held >= maxHeld {
				safe, held = last, 0
				commit()
			}
			return
		}
		if all {
			full = now
		}
		safe, held = last, 0
		commit()
	}
	done := make(chan struct{})
	early := make(chan struct{}, 1) // a flush before its time
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		next := time.Now().Add(flushEvery)
		for {
			select {
			case <-done:
				return
			case <-early:
				next = time.Now().Add(flushEvery)
				flush(time.Now())
			case t := <-tick.C:
				if !t.Before(next) {
					next = t.Add(flushEvery)
					flush(t)
					continue
				}
				mu.Lock()
				g.Expire(t)
				commit()
				mu.Unlock()
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
			held += len(rec.Payload)
		}
		last = rec.Seq
		if held == 0 {
			safe = rec.Seq // no traces wait for a flush: nothing to count again
		}
		urgent := held >= maxHeld
		mu.Unlock()
		if urgent {
			select {
			case early <- struct{}{}:
			default:
			}
		}
	}
	close(done)
	wg.Wait()
	flush(time.Now())
	return err
}
