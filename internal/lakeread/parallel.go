package lakeread

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// workers is how many files a query reads at once: one a core.
func workers() int { return max(1, runtime.GOMAXPROCS(0)) }

// inParallel calls fn(i) for each i in [0, n), on up to workers()
// goroutines, and returns the error of the lowest i that failed (later
// calls are not started once one has failed). A panic in fn (parquet-go
// on a damaged file) is that call's error. fn must touch only what is
// its own: the files it reads are opened, and released, by the caller.
func inParallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	call := func(i int) {
		defer func() {
			if p := recover(); p != nil {
				errs[i] = fmt.Errorf("damaged file: %v", p)
			}
		}()
		errs[i] = fn(i)
	}
	w := min(workers(), n)
	if w <= 1 {
		for i := range n {
			if call(i); errs[i] != nil {
				return errs[i]
			}
		}
		return nil
	}
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
	)
	for range w {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || failed.Load() {
					return
				}
				if call(i); errs[i] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// filesAtOnce is how many files a query opens and hands to its workers
// at once: several a worker, so that one large file does not leave the
// other workers idle until the next files are handed out.
func filesAtOnce() int { return 4 * workers() }
