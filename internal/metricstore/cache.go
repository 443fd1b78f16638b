package metricstore

import (
	"sync"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
)

// A seriesCache maps the wire bytes that determine the label sets of one
// data point's series to those label sets and their TSDB references, so that
// steady-state ingest of known series neither decodes attribute values into
// strings nor builds, sorts or hashes labels.
//
// The key (see appendState.entry) is the exact bytes: interned ids of the
// resource and scope messages, the metric's name, unit and kind, and the
// point's attribute bytes as they are (Attributes.Raw), used as a Go map
// key: the runtime's map hash (AES-based where the CPU has it) reads a
// 1.4 KB key about three times as fast as xxHash, and the map compares the
// bytes, so distinct keys never share an entry. Two encodings of the same
// attributes (another order) are two entries for the same series.
//
// Entries are immutable once stored; a changed reference replaces the entry.
// An entry's references count only in the cache epoch they were taken in
// (Store.syncCache): the head drops series only when it is truncated,
// which starts a new epoch, so a reference that counts is one the head
// knows, but for one taken while the truncation was dropping series or a
// series the out-of-order compaction drops after it. Such a reference is
// harmless to the data:
// the entry also holds the labels, and headAppenderV2.Append falls back to
// them when the reference is unknown, returning the new reference, which
// then replaces the entry.
type seriesCache struct {
	mu      sync.RWMutex
	max     int
	entries map[string]*cacheEntry
	// Interned resources and scopes: the ids keep keys short. Cleared with
	// the entries, and swept when no remaining entry names them (sweep).
	resources map[string]uint32
	scopes    map[string]uint32
	nextID    uint32
}

// cacheEntry is one data point identity: its series in a fixed layout per
// kind (see the slot constants), or the reason its points are rejected.
type cacheEntry struct {
	key    string
	shape  string // histogram bounds or summary quantiles the layout was built for
	series []cachedSeries
	reject string // non-empty: every point of this identity is rejected
	hash   uint64 // labels hash of series[0], for target_info deduplication
	// epoch is the cache epoch the entry was stored in, with the
	// references taken in it: in a later epoch they are not used
	// (appendState.current), and an entry not stored again for a whole
	// epoch is dropped (sweep). Set by put.
	epoch uint64
	// unborn: a series has no reference yet (its samples were all
	// refused, or its entry is a copy from an earlier epoch), so the next
	// sample creates it or looks it up by its labels. Set by put and by
	// appendState.current.
	unborn bool
}

type cachedSeries struct {
	ref  storage.SeriesRef
	lset labels.Labels // empty: the slot has no series (a +Inf bound)
	// led remembers the series' ledger entry, so that a request finds it
	// without the ledger's map (see ledgerHint). Shared by the copies of
	// an entry; nil in an empty slot.
	led *ledgerHint
}

func (c *seriesCache) init(max int) {
	c.max = max
	c.entries = make(map[string]*cacheEntry)
	c.resources = make(map[string]uint32)
	c.scopes = make(map[string]uint32)
}

// get returns the entry for key, or nil.
func (c *seriesCache) get(key []byte) *cacheEntry {
	c.mu.RLock()
	e := c.entries[string(key)]
	c.mu.RUnlock()
	return e
}

// getKey is get for a key held as a string.
func (c *seriesCache) getKey(key string) *cacheEntry {
	c.mu.RLock()
	e := c.entries[key]
	c.mu.RUnlock()
	return e
}

// put stores e under its key as of epoch, emptying the cache first when it
// is full. Interned ids are unique across resets, so keys built from ids
// interned before the reset stay correct: they just miss.
func (c *seriesCache) put(e *cacheEntry, epoch uint64) {
	e.epoch = epoch
	e.unborn = false
	for _, cs := range e.series {
		if cs.ref == 0 && !cs.lset.IsEmpty() {
			e.unborn = true
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[e.key]; !ok && len(c.entries) >= c.max {
		c.resetLocked()
	}
	c.entries[e.key] = e
}

// sweep drops the entries stored before epoch keep, and then the interned
// resources and scopes no remaining entry's key names. Store.syncCache
// calls it when a head truncation starts epoch keep+1, so the cache holds
// the identities seen in the last two epochs (two to four hours at
// Prometheus' block range) rather than growing with series churn until it
// is full.
//
// It reads every entry once (~0.23 s for a million, BenchmarkCacheSweep),
// so it lets go of the write lock every sweepChunk entries for the
// requests under way. An id interned while it runs is kept; an older id
// that only an entry stored while it runs names may still be dropped, which
// costs that entry's series one label build at their next sample.
func (c *seriesCache) sweep(keep uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	maxID := c.nextID
	live := make(map[uint32]struct{})
	seen := 0
	for k, e := range c.entries {
		if seen++; seen%sweepChunk == 0 {
			c.mu.Unlock()
			c.mu.Lock()
		}
		if e.epoch < keep {
			delete(c.entries, k)
			continue
		}
		// Keys start with the kind, then the resource id and, but for
		// target_info, the scope id (appendState.entry, targetEntry).
		if len(k) >= 5 {
			live[keyID(k, 1)] = struct{}{}
		}
		if len(k) >= 9 && k[0] != byte(kindTarget) {
			live[keyID(k, 5)] = struct{}{}
		}
	}
	for _, m := range []map[string]uint32{c.resources, c.scopes} {
		for b, id := range m {
			if _, ok := live[id]; !ok && id <= maxID {
				delete(m, b)
			}
		}
	}
}

// sweepChunk is how many entries sweep reads between releases of the lock
// (a few milliseconds' worth).
const sweepChunk = 16384

func (c *seriesCache) resetLocked() {
	clear(c.entries)
	clear(c.resources)
	clear(c.scopes)
}

// intern returns the id of b in m. A b not in m yet is added only if
// check(arg) succeeds, so that an id stands for bytes that were checked:
// a request repeating a resource or scope skips the check (see
// AppendOTLP). check is a plain function so that the hit path does not
// allocate a closure.
func (c *seriesCache) intern(m map[string]uint32, b []byte, check func([]byte) error, arg []byte) (uint32, error) {
	c.mu.RLock()
	id, ok := m[string(b)]
	c.mu.RUnlock()
	if ok {
		return id, nil
	}
	if err := check(arg); err != nil {
		return 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := m[string(b)]; ok {
		return id, nil
	}
	if len(m) >= c.max {
		// Many distinct resources or scopes whose points all miss (or
		// are refused) would otherwise grow m without bound.
		c.resetLocked()
	}
	// Ids are unique across resets: a key built before a reset can never
	// match one built after it.
	c.nextID++
	m[string(b)] = c.nextID
	return c.nextID, nil
}

// keyID reads the little-endian interned id at k[off:off+4].
func keyID(k string, off int) uint32 {
	return uint32(k[off]) | uint32(k[off+1])<<8 | uint32(k[off+2])<<16 | uint32(k[off+3])<<24
}

func (c *seriesCache) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
