package promwrite

import (
	"testing"

	"github.com/prometheus/prometheus/storage"
)

// TestRefOfGeneration: a kept series reference is given back only to an
// appender of the generation it was committed in (a reopened TSDB numbers
// its series again), and one that does not fit the packing is not kept.
func TestRefOfGeneration(t *testing.T) {
	for _, c := range []struct {
		ref      storage.SeriesRef
		gen, ask uint64
		want     storage.SeriesRef
	}{
		{ref: 7, gen: 1, ask: 1, want: 7},
		{ref: 7, gen: 1, ask: 2, want: 0},
		{ref: 7, gen: 2, ask: 1, want: 0},
		{ref: 1<<48 - 1, gen: 1<<16 - 1, ask: 1<<16 - 1, want: 1<<48 - 1},
		{ref: 1 << 48, gen: 1, ask: 1, want: 0},
		{ref: 7, gen: 1 << 16, ask: 1 << 16, want: 0},
		{ref: 7, gen: 0, ask: 0, want: 0},
		{ref: 0, gen: 1, ask: 1, want: 0},
	} {
		if got := refOf(packRef(c.ref, c.gen), c.ask); got != c.want {
			t.Errorf("ref %d of generation %d asked by %d: got %d, want %d", c.ref, c.gen, c.ask, got, c.want)
		}
	}
}
