package metricstore

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/tsdb/index"
)

// The ledger: what the head holds, across requests.
//
// The head appender checks a sample against its series' committed samples
// when it is appended, and again at the commit, where it drops, counting
// only in its own prometheus_tsdb_* metrics, a sample that is no longer
// after the series' last one: two requests appending to one series at
// once, the later-timed committing first, would both be acknowledged and
// the earlier-timed one lost. And it drops, without any error, a sample
// equal to the last one its series holds (the same millisecond and value),
// which a client's retry of a stored request is made of; counted as
// stored, that would break accepted = stored + rejected.
//
// So the Store keeps a ledger: for each series a request appends to, the
// last sample its head holds (read from the head the first time, then kept
// by each commit), and a count of the commits that stored samples of it.
// A request looks a series up the first time it appends to it
// (appendState.follows): a sample at or before the series' last one is
// not appended but decided here (a duplicate, ReasonDuplicate, or, without
// an out-of-order window, left to the appender to refuse). Commits are
// serialized by the ledger's mutex (the WAL write they make is serialized
// anyway): a request commits only if no commit stored samples of its
// series since it looked them up; else it rolls back and is appended
// again holding the mutex, against the ledger as it is then, so that no
// commit comes between its checks and its own. Remote write's appenders
// (tenantAppender) commit under the same mutex, and have the ledger
// forget the series they stored samples of.
//
// With an out-of-order window, a sample before its series' last one is
// inserted out of order, and the insert drops, again silently, one at a
// millisecond the out-of-order chunk has (whatever its value): such a
// sample is looked up in the TSDB first (storedAt), a query, paid only by
// samples older than their series' last.
//
// An entry is dropped when no request used it for a whole cache epoch
// (two head truncations; see Store.syncCache), and all when the TSDB is
// reopened, whose references are the WAL's. What a dropped entry knew of
// commits is lost, so a request whose entry was dropped since it looked
// it up is stale, and a new entry takes every commit made so far as
// possibly one of its series: a request that made it after a commit it
// did not see redoes its appends under the commit lock. (A new store's
// first commits move the head's minimum time, starting epochs that drop
// entries in use; TestFreshStoreRacesAccounted.) The head is read with
// readers at least as new as the commit the entry knows of: the TSDB's
// isolation hides later commits from older readers.

// ledgerShards is the number of independently locked parts of the ledger.
const ledgerShards = 64

type ledger struct {
	// commit is held across a request's ledger check and its commit.
	commit sync.Mutex
	// gen counts the commits, published once a commit is in the TSDB and
	// the ledger (see begin).
	gen    atomic.Uint64
	shards [ledgerShards]ledgerShard
}

type ledgerShard struct {
	mu sync.Mutex
	m  map[storage.SeriesRef]*ledgerEntry
	_  [40]byte // a cache line each
}

// A ledgerEntry is the last sample of a series its head holds (has: any;
// unread: not known, to be read from the head), the commit that last
// stored samples of it (gen), and the cache epoch it was last used in;
// present while in its shard's map. Its shard's mutex guards it; a
// request keeps a pointer to it (seriesMark.e) so that its commit finds
// it without the map, and looks again for one no longer present.
type ledgerEntry struct {
	ref                  storage.SeriesRef // never changes
	last                 lastSample
	has, unread, present bool
	gen                  uint64
	epoch                uint64
}

// A ledgerHint remembers a series' ledger entry for the series cache's
// slot of it, so that a request's lookup skips the ledger's map: what the
// map costs is a cache miss or two per series and request, which on
// classic histograms (a series per bucket) was a tenth of the store's
// CPU. An entry it holds is used only if it is still present and of the
// series looked up (a slot's reference can change); anything else goes to
// the map, and the hint is set again.
type ledgerHint struct{ p atomic.Pointer[ledgerEntry] }

// get returns the hinted entry if it is ref's and present. The caller
// holds ref's shard lock (which guards present).
func (h *ledgerHint) get(ref storage.SeriesRef) *ledgerEntry {
	if h == nil {
		return nil
	}
	if e := h.p.Load(); e != nil && e.ref == ref && e.present {
		return e
	}
	return nil
}

// set makes h remember e.
func (h *ledgerHint) set(e *ledgerEntry) {
	if h != nil && h.p.Load() != e {
		h.p.Store(e)
	}
}

func (l *ledger) shard(ref storage.SeriesRef) *ledgerShard {
	return &l.shards[uint64(ref)%ledgerShards]
}

// entry returns the entry of ref, nil if none. The caller holds ref's
// shard lock.
func (l *ledger) entry(ref storage.SeriesRef) *ledgerEntry { return l.shard(ref).m[ref] }

// create returns a new entry for ref. The caller holds ref's shard lock.
func (l *ledger) create(ref storage.SeriesRef) *ledgerEntry {
	sh := l.shard(ref)
	if sh.m == nil {
		sh.m = make(map[storage.SeriesRef]*ledgerEntry)
	}
	e := &ledgerEntry{ref: ref, present: true}
	sh.m[ref] = e
	return e
}

// lookup returns the last sample of ref, read by read from the head if
// the ledger does not know it, and marks its entry used in epoch. The
// mark's gen is snap, which the caller loaded from l.gen before it
// appended a sample of ref: a commit of ref after that has a later gen.
func (l *ledger) lookup(ref storage.SeriesRef, epoch, snap uint64, read *headReader, led *ledgerHint) seriesMark {
	sh := l.shard(ref)
	sh.mu.Lock()
	e := led.get(ref)
	if e == nil {
		if e = l.entry(ref); e != nil {
			led.set(e)
		}
	}
	if e != nil && !e.unread {
		e.epoch = epoch
		m := seriesMark{last: e.last, has: e.has, gen: snap, e: e}
		sh.mu.Unlock()
		return m
	}
	// The last commit of ref the entry knows of; without an entry (never
	// made, or dropped by a sweep with what it knew), any commit so far
	// may have stored samples of ref.
	var gen uint64
	if e != nil {
		gen = e.gen
	} else {
		gen = l.gen.Load()
	}
	sh.mu.Unlock()
	// The head is read at an isolation state: readers opened before
	// ref's last commit would not see its samples.
	last, has := read.last(ref, gen, l.gen.Load)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e := l.entry(ref); e != nil {
		switch {
		case !e.unread:
			// Another request got there first, or a commit
			// since: what it knows is as new.
			e.epoch = epoch
			return seriesMark{last: e.last, has: e.has, gen: snap, e: e}
		case e.gen != gen:
			// A commit stored samples of ref while the head
			// was read: what was read may not be its last.
			return seriesMark{gen: snap}
		}
		e.last, e.has, e.unread, e.epoch = last, has, false, epoch
		return seriesMark{last: last, has: has, gen: snap, e: e}
	}
	e = l.create(ref)
	e.last, e.has, e.gen, e.epoch = last, has, gen, epoch
	led.set(e)
	return seriesMark{last: last, has: has, gen: snap, e: e}
}

// current reports whether no commit stored samples of the series of
// marks since the request loaded the gens of its marks: since start (the
// gen it loaded when it began) if no commit was made since, else entry by
// entry. The caller holds l.commit.
func (l *ledger) current(start uint64, marks []seriesMark, order *[]int32) bool {
	if l.gen.Load() == start {
		return true // no commit since the request began (all are published: l.commit is held)
	}
	return l.byShard(marks, order, func(m *seriesMark) bool { return true }, func(m *seriesMark) bool {
		if m.e != nil && !m.e.present {
			// Dropped (a sweep, a reopen) since the request looked it
			// up: commits it recorded are not in the entry that may
			// have replaced it, so nothing can be known.
			return false
		}
		e := m.e
		if e == nil {
			e = l.entry(m.ref)
		}
		return e != nil && e.gen <= m.gen
	})
}

// byShard calls fn for each of the marks that pick selects, holding its
// series' shard lock, taking each shard's lock once for all of its marks
// (order is a buffer the caller keeps), until fn returns false; it
// returns whether every call returned true. A request's marks are
// hundreds or thousands of series (a classic histogram point is one per
// bucket): one lock each cost more than the work under them.
func (l *ledger) byShard(marks []seriesMark, order *[]int32, pick, fn func(*seriesMark) bool) bool {
	at, o := groupByShard(len(marks), func(i int) (storage.SeriesRef, bool) {
		return marks[i].ref, pick(&marks[i])
	}, order)
	return l.eachLocked(at, o, func(i int32) bool { return fn(&marks[i]) })
}

// eachLocked calls fn for each index groupByShard ordered, with its
// shard's lock held (each lock taken once), until fn returns false; it
// returns whether every call returned true.
func (l *ledger) eachLocked(at [ledgerShards + 1]int32, o []int32, fn func(int32) bool) bool {
	for s := range ledgerShards {
		if at[s] == at[s+1] {
			continue
		}
		sh := &l.shards[s]
		sh.mu.Lock()
		for _, i := range o[at[s]:at[s+1]] {
			if !fn(i) {
				sh.mu.Unlock()
				return false
			}
		}
		sh.mu.Unlock()
	}
	return true
}

// groupByShard orders the picked ones of n series by ledger shard: shard
// s's are o[at[s]:at[s+1]], indexes into the caller's series, kept in
// their order. o is *order, grown as needed.
func groupByShard(n int, series func(int) (storage.SeriesRef, bool), order *[]int32) (at [ledgerShards + 1]int32, o []int32) {
	for i := range n {
		if ref, ok := series(i); ok {
			at[uint64(ref)%ledgerShards+1]++
		}
	}
	for i := 1; i <= ledgerShards; i++ {
		at[i] += at[i-1]
	}
	m := int(at[ledgerShards])
	if cap(*order) < m {
		*order = make([]int32, m)
	}
	o = (*order)[:m]
	next := at
	for i := range n {
		if ref, ok := series(i); ok {
			s := uint64(ref) % ledgerShards
			o[next[s]] = int32(i)
			next[s]++
		}
	}
	return at, o
}

// committedRefs is committedLocked of series stored by an appender that keeps
// no marks (what it stored is not known), taking each shard lock once.
func (l *ledger) committedRefs(refs []storage.SeriesRef, gen uint64, order *[]int32) {
	at, o := groupByShard(len(refs), func(i int) (storage.SeriesRef, bool) { return refs[i], true }, order)
	l.eachLocked(at, o, func(i int32) bool {
		l.committedLocked(refs[i], nil, gen, lastSample{}, false, false)
		return true
	})
}

// begin starts a commit, holding l.commit, and returns its gen. Once the
// commit is in the TSDB, it marks the series it stored samples of with gen
// (committed), then publishes gen (publish), both before it lets l.commit
// go: a request that loaded an earlier gen, and may have appended before
// the commit, finds the mark when it checks (current, holding l.commit);
// one that loads gen appends after the commit.
func (l *ledger) begin() uint64 { return l.gen.Load() + 1 }

// publish ends the commit gen.
func (l *ledger) publish(gen uint64) { l.gen.Store(gen) }

// committedMarks is committedLocked for every mark of a request that stored
// samples (keeps: of all of them, not knowing what was stored), taking
// each shard lock once (byShard).
func (l *ledger) committedMarks(marks []seriesMark, gen uint64, keeps bool, order *[]int32) {
	pick := func(m *seriesMark) bool { return !keeps || m.inOrder || m.outOrder }
	l.byShard(marks, order, pick, func(m *seriesMark) bool {
		if keeps {
			l.committedLocked(m.ref, m.e, gen, m.last, true, m.inOrder)
		} else {
			l.committedLocked(m.ref, m.e, gen, lastSample{}, false, false)
		}
		return true
	})
}

// committedLocked records that commit gen stored samples of ref (entry
// e, if the caller has it), the last of them last if keeps and inOrder
// (after the entry's last); if not keeps (the commit does not know its
// series' last samples) or the entry is new, its last sample is to be read
// from the head again. The caller holds ref's shard lock.
func (l *ledger) committedLocked(ref storage.SeriesRef, e *ledgerEntry, gen uint64, last lastSample, keeps, inOrder bool) {
	if e == nil || !e.present {
		e = l.entry(ref)
	}
	if e == nil {
		e = l.create(ref)
		e.unread = true
	}
	e.gen = gen
	switch {
	case !keeps:
		e.unread = true
	case !e.unread && inOrder && (!e.has || last.t > e.last.t):
		e.last, e.has = last, true
	}
}

// sweep drops the entries not used since the epoch before epoch.
func (l *ledger) sweep(epoch uint64) {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for ref, e := range sh.m {
			if e.epoch+1 < epoch {
				e.present = false
				delete(sh.m, ref)
			}
		}
		sh.mu.Unlock()
	}
}

// clear drops every entry.
func (l *ledger) clear() {
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		for _, e := range sh.m {
			e.present = false
		}
		sh.m = nil
		sh.mu.Unlock()
	}
}

// A seriesMark is what a request knows of one series: the last sample it
// has (own: appended by the request, else the ledger's, has: any), the
// ledger's gen before the request first appended to it, and whether the
// request appended a sample to it in order (after the ledger's last) or
// out of order.
type seriesMark struct {
	ref               storage.SeriesRef
	last              lastSample
	e                 *ledgerEntry // its entry, if the ledger has one
	gen               uint64
	has, own          bool
	inOrder, outOrder bool
}

// headReader reads the last sample of series from the head of a TSDB,
// its readers opened on first use and kept until close, or until a read
// needs a commit made after they were opened.
type headReader struct {
	db   *tsdb.DB
	gen  uint64 // the ledger's gen before the readers were opened: they see its commits and those before
	ir   tsdb.IndexReader
	cr   tsdb.ChunkReader
	chks []chunks.Meta
	sb   labels.ScratchBuilder
	it   chunkenc.Iterator
	err  error
}

// last returns the last in-order sample the head holds for ref, as of
// the ledger's commit need or later (gen loads the ledger's gen); false if
// none, or it cannot be read (then the TSDB's appender checks alone).
// The head's readers see only the commits made before they were opened
// (the TSDB's isolation), so readers older than need are opened again.
func (r *headReader) last(ref storage.SeriesRef, need uint64, gen func() uint64) (lastSample, bool) {
	if !r.open(need, gen) {
		return lastSample{}, false
	}
	r.chks = r.chks[:0]
	if err := r.ir.Series(ref, &r.sb, &r.chks); err != nil || len(r.chks) == 0 {
		return lastSample{}, false
	}
	c, iterable, err := r.cr.ChunkOrIterable(r.chks[len(r.chks)-1])
	if err != nil {
		return lastSample{}, false
	}
	switch {
	case c != nil:
		r.it = c.Iterator(r.it)
	case iterable != nil:
		r.it = iterable.Iterator(r.it)
	default:
		return lastSample{}, false
	}
	var last lastSample
	found := false
	for vt := r.it.Next(); vt != chunkenc.ValNone; vt = r.it.Next() {
		found = true
		switch vt {
		case chunkenc.ValFloat:
			t, v := r.it.At()
			last = lastSample{t: t, v: math.Float64bits(v)}
		case chunkenc.ValHistogram:
			t, h := r.it.AtHistogram(nil)
			last = lastSample{t: t, h: h}
		default: // a float histogram: equal to nothing this store appends
			last = lastSample{t: r.it.AtT(), other: true}
		}
	}
	return last, found && r.it.Err() == nil
}

// open opens the readers, again if they are older than the ledger's
// commit need (gen loads the ledger's gen), and reports whether they are.
func (r *headReader) open(need uint64, gen func() uint64) bool {
	if r.ir != nil && r.gen < need {
		r.closeReaders()
	}
	if r.ir == nil && r.err == nil {
		r.gen = gen() // before opening: every commit up to it is in the head
		h := r.db.Head()
		if r.ir, r.err = h.Index(); r.err == nil {
			if r.cr, r.err = h.Chunks(); r.err != nil {
				r.ir.Close()
				r.ir = nil
			}
		}
	}
	return r.err == nil
}

// refOf returns the reference of the head's series ls, or 0 if the head
// has none (or its index cannot be read). Readers opened at any time do:
// the head's index holds a series from the moment an appender creates it.
func (r *headReader) refOf(ctx context.Context, ls labels.Labels, gen func() uint64) storage.SeriesRef {
	if ls.IsEmpty() || !r.open(0, gen) {
		return 0
	}
	its := make([]index.Postings, 0, ls.Len())
	var err error
	ls.Range(func(l labels.Label) {
		if err != nil {
			return
		}
		var p index.Postings
		if p, err = r.ir.Postings(ctx, l.Name, l.Value); err == nil {
			its = append(its, p)
		}
	})
	if err != nil {
		return 0
	}
	for p := index.Intersect(its...); p.Next(); {
		ref := p.At()
		r.chks = r.chks[:0]
		if r.ir.Series(ref, &r.sb, &r.chks) == nil && labels.Equal(r.sb.Labels(), ls) {
			return ref
		}
	}
	return 0
}

// close closes the readers, if opened.
func (r *headReader) close() {
	r.closeReaders()
	r.db, r.err = nil, nil
}

// closeReaders closes the readers, if opened, keeping the TSDB.
func (r *headReader) closeReaders() {
	if r.ir != nil {
		r.ir.Close()
		r.cr.Close()
	}
	r.ir, r.cr = nil, nil
}

// storedAt looks the sample of series ls at t up in db: its value, and
// whether there is one (a failed query counts as none).
func storedAt(ctx context.Context, db *tsdb.DB, ls labels.Labels, t int64) (lastSample, bool) {
	q, err := db.Querier(t, t)
	if err != nil {
		return lastSample{}, false
	}
	defer q.Close()
	ms := make([]*labels.Matcher, 0, ls.Len())
	ls.Range(func(l labels.Label) {
		ms = append(ms, labels.MustNewMatcher(labels.MatchEqual, l.Name, l.Value))
	})
	set := q.Select(ctx, false, &storage.SelectHints{Start: t, End: t}, ms...)
	var it chunkenc.Iterator
	for set.Next() {
		s := set.At()
		if !labels.Equal(s.Labels(), ls) {
			continue
		}
		it = s.Iterator(it)
		switch it.Seek(t) {
		case chunkenc.ValFloat:
			if st, v := it.At(); st == t {
				return lastSample{t: t, v: math.Float64bits(v)}, true
			}
		case chunkenc.ValHistogram:
			if st, h := it.AtHistogram(nil); st == t {
				return lastSample{t: t, h: h}, true
			}
		case chunkenc.ValFloatHistogram:
			if it.AtT() == t {
				return lastSample{t: t, other: true}, true
			}
		}
	}
	return lastSample{}, false
}

// sameSample reports whether x and y are the same value, bit for bit.
func sameSample(x, y lastSample) bool {
	if x.other || y.other {
		return false
	}
	if x.h != nil || y.h != nil {
		return x.h != nil && y.h != nil && x.h.Equals(y.h)
	}
	return x.v == y.v
}

// sampleOf is the lastSample of a value appended at t.
func sampleOf(t int64, v float64, h *histogram.Histogram) lastSample {
	if h != nil {
		return lastSample{t: t, h: h}
	}
	return lastSample{t: t, v: math.Float64bits(v)}
}
