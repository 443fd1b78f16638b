package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrent: writes from several goroutines, read meanwhile, all
// land whole (run with -race to check the locking).
func TestConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("ab"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("ab", 400) {
		t.Fatalf("%d bytes, want 800 of \"ab\" pairs", len(got))
	}
}
