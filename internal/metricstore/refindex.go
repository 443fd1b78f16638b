package metricstore

import (
	"math/bits"

	"github.com/prometheus/prometheus/storage"
)

// A refIndex maps the series references a request appends to, to their
// index in appendState.marks: a set the request asks once per sample
// (appendState.mark), 1,900 times for a request of 100 classic
// histograms. Go's map spent 6 % of the store's CPU on it; this table is
// open addressing with linear probing, sized to at most half full, and
// cleared by a generation count rather than by zeroing its slots.
//
// The TSDB hands out references in sequence, and the series of one point
// (a histogram's buckets, a summary's quantiles) are created together, so
// the home slot keeps runs of 16 consecutive references in adjacent slots
// (one or two cache lines for a histogram) and spreads the runs with a
// multiplicative hash, so that references a table size apart do not pile
// up on one slot.
type refIndex struct {
	slots []refSlot // len is a power of two, or 0
	shift uint8     // 64 - log2(len(slots)/refRun)
	n     int       // references in the current generation
	gen   uint32    // slots of another generation are free
}

type refSlot struct {
	ref storage.SeriesRef
	idx int32
	gen uint32
}

// refRun is how many consecutive references share one hashed block of
// slots.
const refRun = 16

// minRefSlots is the size of a table's first allocation.
const minRefSlots = 256

// get returns the index stored for ref, and whether there is one.
func (x *refIndex) get(ref storage.SeriesRef) (int32, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for i := x.home(ref); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.gen != x.gen {
			return 0, false
		}
		if s.ref == ref {
			return s.idx, true
		}
	}
}

// put stores idx for ref, which get does not find.
func (x *refIndex) put(ref storage.SeriesRef, idx int32) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := uint64(len(x.slots) - 1)
	i := x.home(ref)
	for x.slots[i].gen == x.gen {
		i = (i + 1) & mask
	}
	x.slots[i] = refSlot{ref: ref, idx: idx, gen: x.gen}
	x.n++
}

// home is ref's first slot.
func (x *refIndex) home(ref storage.SeriesRef) uint64 {
	block := (uint64(ref) / refRun) * 0x9e3779b97f4a7c15 >> x.shift
	return block*refRun + uint64(ref)%refRun
}

// grow doubles the table (or allocates the first) and stores the current
// generation's references again.
func (x *refIndex) grow() {
	old, oldGen := x.slots, x.gen
	size := max(2*len(old), minRefSlots)
	x.slots = make([]refSlot, size)
	x.shift = uint8(64 - bits.TrailingZeros(uint(size/refRun)))
	x.gen, x.n = 1, 0
	for _, s := range old {
		if s.gen == oldGen {
			x.put(s.ref, s.idx)
		}
	}
}

// clear empties the index, keeping its table.
func (x *refIndex) clear() {
	if x.n == 0 {
		return
	}
	x.n = 0
	if x.gen++; x.gen == 0 {
		// After 2^32 generations a slot's could come round again.
		clear(x.slots)
		x.gen = 1
	}
}
