package loadgen

import (
	"context"
	"sync"
)

// window keeps requests that share series in order when several workers
// send a payload stream: request n (carrying the next round of the series
// of request n-k) may start only once every request up to n-k has ended,
// so no sample reaches the server after a later one of its series. Requests
// less than k apart carry disjoint series and run concurrently.
type window struct {
	k    int64
	mu   sync.Mutex
	cond *sync.Cond
	done []bool // by request
	low  int64  // every request below low has ended
}

// newWindow returns a window over count requests of batch points each,
// cycling through series series.
func newWindow(count, batch, series int) *window {
	w := &window{k: max(int64(series/batch), 1), done: make([]bool, count)}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// acquire waits until request n may start, and returns false if ctx ended
// first.
func (w *window) acquire(ctx context.Context, n int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.low > n-w.k {
		return true
	}
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	defer stop()
	for w.low <= n-w.k {
		if ctx.Err() != nil {
			return false
		}
		w.cond.Wait()
	}
	return true
}

// release records that request n ended, acknowledged or not.
func (w *window) release(n int64) {
	w.mu.Lock()
	if n >= 0 && n < int64(len(w.done)) {
		w.done[n] = true
	}
	for w.low < int64(len(w.done)) && w.done[w.low] {
		w.low++
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}
