package metricstore

import (
	"math/rand/v2"
	"testing"

	"github.com/prometheus/prometheus/storage"
)

// TestRefIndex checks refIndex against a map over requests of references
// in sequence, spread at random, and a table size apart, across clears
// (which keep the table) and growth.
func TestRefIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	patterns := map[string]func(i int) storage.SeriesRef{
		"sequence": func(i int) storage.SeriesRef { return storage.SeriesRef(1000 + i) },
		"random":   func(int) storage.SeriesRef { return storage.SeriesRef(1 + rng.Uint64N(1<<40)) },
		"strided":  func(i int) storage.SeriesRef { return storage.SeriesRef(1 + i*4096) },
		"buckets":  func(i int) storage.SeriesRef { return storage.SeriesRef(1 + (i/19)*38*19 + i%19) },
	}
	var x refIndex
	for round := 0; round < 40; round++ {
		for name, ref := range patterns {
			n := 1 + rng.IntN(5000)
			want := map[storage.SeriesRef]int32{}
			for i := 0; i < n; i++ {
				r := ref(i)
				got, ok := x.get(r)
				w, wok := want[r]
				if ok != wok || got != w {
					t.Fatalf("%s round %d: get(%d) = %d, %v; want %d, %v", name, round, r, got, ok, w, wok)
				}
				if !ok {
					x.put(r, int32(i))
					want[r] = int32(i)
				}
				// Repeats within a request, as a series met twice.
				if i%7 == 0 {
					if got, ok := x.get(r); !ok || got != want[r] {
						t.Fatalf("%s: repeat get(%d) = %d, %v; want %d", name, r, got, ok, want[r])
					}
				}
			}
			if x.n != len(want) {
				t.Fatalf("%s: n = %d, want %d", name, x.n, len(want))
			}
			for r, w := range want {
				if got, ok := x.get(r); !ok || got != w {
					t.Fatalf("%s: after the request get(%d) = %d, %v; want %d", name, r, got, ok, w)
				}
			}
			x.clear()
			for r := range want {
				if _, ok := x.get(r); ok {
					t.Fatalf("%s: get(%d) found a reference of the cleared generation", name, r)
				}
			}
		}
	}
}

// TestRefIndexGenerationWrap checks that the generation count coming
// round to a stale slot's does not bring the slot back.
func TestRefIndexGenerationWrap(t *testing.T) {
	var x refIndex
	x.put(7, 1)
	first := x.gen
	x.clear()
	x.gen = ^uint32(0) // the last generation before the wrap
	x.put(9, 2)
	x.clear() // wraps round to the first generation again
	if x.gen != first {
		t.Fatalf("generation after the wrap = %d, want %d", x.gen, first)
	}
	x.put(11, 3)
	for _, r := range []storage.SeriesRef{7, 9} {
		if _, ok := x.get(r); ok {
			t.Fatalf("get(%d) found a slot of a generation before the wrap", r)
		}
	}
	if i, ok := x.get(11); !ok || i != 3 {
		t.Fatalf("get(11) = %d, %v", i, ok)
	}
}

func BenchmarkRefIndex(b *testing.B) {
	// A request of 100 classic histograms (19 series each) of 2,000.
	refs := make([]storage.SeriesRef, 0, 1900)
	for p := 0; p < 100; p++ {
		base := 1 + 20*19*p
		for s := 0; s < 19; s++ {
			refs = append(refs, storage.SeriesRef(base+s))
		}
	}
	b.Run("impl=refIndex", func(b *testing.B) {
		var x refIndex
		for b.Loop() {
			for i, r := range refs {
				if _, ok := x.get(r); !ok {
					x.put(r, int32(i))
				}
			}
			x.clear()
		}
	})
	b.Run("impl=map", func(b *testing.B) {
		m := map[storage.SeriesRef]int32{}
		for b.Loop() {
			for i, r := range refs {
				if _, ok := m[r]; !ok {
					m[r] = int32(i)
				}
			}
			clear(m)
		}
	})
}

// TestResetLetsHugeRefIndexGo checks that a pooled appendState keeps the
// table of an ordinary request and lets go of one grown past
// maxKeptLast.
func TestResetLetsHugeRefIndexGo(t *testing.T) {
	for _, tc := range []struct {
		series int
		kept   bool
	}{{1900, true}, {4 * maxKeptLast, false}} {
		a := newAppendState()
		for i := 0; i < tc.series; i++ {
			a.last.put(storage.SeriesRef(i+1), int32(i))
		}
		a.reset()
		if got := len(a.last.slots) > 0; got != tc.kept {
			t.Errorf("%d series: table kept = %v (%d slots), want %v", tc.series, got, len(a.last.slots), tc.kept)
		}
		if _, ok := a.last.get(1); ok {
			t.Errorf("%d series: reset left a reference in the table", tc.series)
		}
	}
}
