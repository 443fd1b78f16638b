package spool

import (
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wirehouse/wirehouse/internal/dirlock"
	"github.com/wirehouse/wirehouse/internal/durable"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Spool is an append-only log of records in a directory. Its methods are
// safe for concurrent use.
type Spool struct {
	dir  string
	cfg  Config
	lock *dirlock.Lock // holds the directory lock

	regMu sync.Mutex // serializes Consumer and RemoveConsumer

	mu        sync.Mutex
	segs      []*segment // oldest first; the last is the current segment
	f         *os.File   // the current segment, open for appending
	buf       []byte     // encoding buffer of Append
	next      uint64     // sequence number of the next record
	bytes     int64      // total size of segs
	consumers map[string]*Consumer
	free      []freeFile  // consumed segment files kept for reuse (freeSuffix), at most maxFree
	freeBytes int64       // their total size
	tail      []tailEntry // the newest records, consecutive (Config.TailBytes)
	tailBytes int64
	tailOff   bool          // keeping is paused: a consumer fell behind the tail (tailAdd)
	tailHits  atomic.Uint64 // records Next served from tail
	notify    chan struct{} // closed by the next Append; made by waiting readers
	closed    bool
	err       error // sticky: appending is no longer possible
	repairs   []*CorruptError

	// Group commit state (see sync.go), under mu.
	written  uint64     // bytes written since Open, over all segments
	synced   uint64     // prefix of written known to be durable
	syncing  bool       // an fsync batch is running without mu
	syncDone sync.Cond  // on mu: a batch finished
	pending  []*os.File // segments rolled since the last batch, still open
	dirDirty bool       // a segment was created since the last batch

	stop chan struct{} // closed by Close: stops the interval syncer
	wg   sync.WaitGroup

	appends, syncs, fulls, tapped atomic.Uint64
}

// Stats are a Spool's counters.
type Stats struct {
	Segments int   // segment files, the current one included
	Bytes    int64 // their total size
	// FirstSeq is the sequence number of the oldest retained record,
	// LastSeq+1 if no record is retained.
	FirstSeq uint64
	// LastSeq is the sequence number of the newest record (0 if none was
	// ever appended). After a repair or a crash it may be above the last
	// retained record: Open never reuses a number a consumer committed.
	LastSeq   uint64
	Consumers int    // registered consumers, those found on disk included
	Appends   uint64 // records appended since Open
	Syncs     uint64 // fsync batches of segment data since Open
	Full      uint64 // Appends refused with ErrFull since Open
	// Tapped counts the records every consumer took as they were
	// appended (Consumer.SetTap), of which no in-memory copy was kept.
	Tapped uint64
}

// Open checks cfg with Validate and opens the spool in cfg.Dir, creating
// the directory if needed. It scans every segment, repairs what is
// corrupt (see the package doc; Repairs lists what was done) and loads
// the consumers' cursors. A directory is used by one Spool at a time: a
// second Open fails while the first is open, in this or another process.
func Open(cfg Config) (*Spool, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.SyncInterval == 0 {
		cfg.SyncInterval = DefaultSyncInterval
	}
	dir := cfg.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	lock, err := dirlock.Acquire(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s := &Spool{dir: dir, cfg: cfg, lock: lock, consumers: map[string]*Consumer{}, stop: make(chan struct{})}
	s.syncDone.L = &s.mu
	if err := s.load(); err != nil {
		s.closeFiles()
		return nil, err
	}
	if cfg.Registerer != nil {
		if err := s.register(cfg.Registerer); err != nil {
			s.closeFiles()
			return nil, err
		}
	}
	if cfg.Sync == SyncInterval {
		s.wg.Add(1)
		go s.syncLoop(cfg.SyncInterval)
	}
	return s, nil
}

// load reads the directory: cursors, then segments, then opens or creates
// the current segment.
func (s *Spool) load() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	var maxCommitted uint64
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, tmpSuffix):
			if err := os.Remove(filepath.Join(s.dir, name)); err != nil {
				return fmt.Errorf("spool: %w", err)
			}
		case strings.HasSuffix(name, freeSuffix) && e.Type().IsRegular():
			info, err := e.Info()
			if err == nil && len(s.free) < maxFree {
				s.free = append(s.free, freeFile{name, info.Size()})
				s.freeBytes += info.Size()
			} else if err := os.Remove(filepath.Join(s.dir, name)); err != nil {
				return fmt.Errorf("spool: %w", err)
			}
		case strings.HasSuffix(name, cursorSuffix):
			c, repair, err := s.loadCursor(name)
			if err != nil {
				return err
			}
			if repair != nil {
				s.repairs = append(s.repairs, repair)
			}
			if c != nil {
				s.consumers[c.name] = c
				maxCommitted = max(maxCommitted, c.Committed())
			}
		default:
			if base, ok := parseSegName(name); ok && e.Type().IsRegular() {
				s.segs = append(s.segs, &segment{name: name, base: base})
			}
		}
	}
	sort.Slice(s.segs, func(i, j int) bool { return s.segs[i].base < s.segs[j].base })
	for i, g := range s.segs {
		before := uint64(1<<64 - 1)
		if i+1 < len(s.segs) {
			before = s.segs[i+1].base
		}
		repair, err := scanSegment(s.dir, g, before, s.cfg.Sync != SyncNever)
		if err != nil {
			return fmt.Errorf("spool: scan %s: %w", g.name, err)
		}
		if repair != nil {
			s.repairs = append(s.repairs, repair)
		}
		s.bytes += g.size
	}
	// The next number follows the last record, and every committed
	// cursor: a number a consumer committed is never given to another
	// record, even if the record it had was lost in a power failure.
	s.next = 1
	if len(s.segs) > 0 {
		s.next = s.segs[len(s.segs)-1].last + 1
	}
	if s.next <= maxCommitted {
		s.next = maxCommitted + 1
	}
	if n := len(s.segs); n > 0 && s.segs[n-1].last+1 == s.next {
		path := filepath.Join(s.dir, s.segs[n-1].name)
		if s.f, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	} else if err := s.createSegment(); err != nil {
		return err
	}
	if s.cfg.Sync != SyncNever {
		if err := durable.SyncDir(s.dir); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	}
	return removeFiles(s.dir, s.collectLocked())
}

// createSegment starts a new current segment whose first record will be
// s.next. The previous current segment, if any, is closed or, unless the
// policy is SyncNever, kept open for the next fsync batch.
func (s *Spool) createSegment() error {
	g := &segment{name: segName(s.next), base: s.next, last: s.next - 1}
	path := filepath.Join(s.dir, g.name)
	var f *os.File
	for len(s.free) > 0 && f == nil {
		// Reuse a consumed segment's file: what it held stays past the
		// records written now until it is truncated, and a scan after a
		// crash tells it apart by its sequence numbers (scanSegment).
		free := s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		s.freeBytes -= free.size
		if err := os.Rename(filepath.Join(s.dir, free.name), path); err != nil {
			os.Remove(filepath.Join(s.dir, free.name))
			continue
		}
		var err error
		if f, err = os.OpenFile(path, os.O_WRONLY, 0); err != nil {
			os.Remove(path)
			f = nil
			continue
		}
		g.reused = true
	}
	if f == nil {
		var err error
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return fmt.Errorf("spool: new segment: %w", err)
		}
	}
	if s.f != nil {
		if err := s.truncateCurrentLocked(); err != nil {
			f.Close()
			return err
		}
		if s.cfg.Sync == SyncNever {
			s.f.Close()
		} else {
			s.pending = append(s.pending, s.f)
		}
	}
	s.f = f
	s.dirDirty = true
	s.segs = append(s.segs, g)
	return nil
}

// truncateCurrentLocked cuts a recycled current segment's file to its
// records, so that what it held before never outlives it being current.
// s.mu is held.
func (s *Spool) truncateCurrentLocked() error {
	cur := s.segs[len(s.segs)-1]
	if !cur.reused {
		return nil
	}
	if err := s.f.Truncate(cur.size); err != nil {
		return fmt.Errorf("spool: truncate %s: %w", cur.name, err)
	}
	cur.reused = false
	return nil
}

// Append writes a record and returns its sequence number. The payload is
// written to the segment file (write(2)) before Append returns, so the
// caller may reuse it; under SyncAlways Append also waits for an fsync
// covering the record. tenant must be at most MAX_TENANT bytes.
//
// Errors: ErrFull (retry later), ErrTooLarge, ErrClosed, invalid
// arguments, and I/O errors. After a failed fsync, or a failed write that
// could not be undone, every later Append fails with the same error.
func (s *Spool) Append(sig otlpwire.Signal, tenant string, received time.Time, payload []byte) (seq uint64, err error) {
	switch {
	case !sig.Valid():
		return 0, fmt.Errorf("spool: append: invalid signal %v", sig)
	case len(tenant) > MAX_TENANT:
		return 0, fmt.Errorf("spool: append: tenant of %d bytes, over %d", len(tenant), MAX_TENANT)
	case len(payload) > MAX_PAYLOAD:
		return 0, fmt.Errorf("%w: payload of %d bytes, over %d", ErrTooLarge, len(payload), MAX_PAYLOAD)
	}
	crc := crc32.Checksum(payload, castagnoli)
	h := RecordHeader{
		Type:             RECORD_OTLP_PROTOBUF,
		Signal:           SignalCode(sig),
		Tenant:           tenant,
		ReceivedUnixNano: unixNano(received),
		PayloadLength:    uint32(len(payload)),
	}

	s.mu.Lock()
	seq, drop, err := s.appendLocked(&h, crc, payload)
	if err == nil && s.cfg.Sync == SyncAlways {
		err = s.waitSyncedLocked(s.written)
	}
	s.mu.Unlock()
	// A segment that cannot be deleted here is not lost track of: it is
	// found, and deleted, by the next Open.
	_ = removeFiles(s.dir, drop)
	if err != nil {
		return 0, err
	}
	return seq, nil
}

// smallPayload is the size up to which Append copies the payload behind
// the header to write both with one system call; larger payloads are
// written with a second one.
const smallPayload = 16 << 10

func (s *Spool) appendLocked(h *RecordHeader, crc uint32, payload []byte) (seq uint64, drop []string, err error) {
	if s.closed {
		return 0, nil, ErrClosed
	}
	if s.err != nil {
		return 0, nil, s.err
	}
	h.Seq = s.next
	b, err := appendHeader(s.buf[:0], h, crc)
	if err != nil {
		return 0, nil, fmt.Errorf("spool: append: %w", err)
	}
	n := int64(len(b) + len(payload))
	if max := s.cfg.MaxBytes; max > 0 {
		if n > max {
			return 0, nil, fmt.Errorf("%w: record of %d bytes, spool limit %d", ErrTooLarge, n, max)
		}
		if s.bytes+s.freeBytes+n > max {
			// Start a new segment so that the current one can be
			// deleted once consumed, then delete what is consumed,
			// and the files kept for reuse.
			if !s.segs[len(s.segs)-1].empty() {
				if err := s.createSegment(); err != nil {
					return 0, nil, err
				}
			}
			drop = s.collectLocked()
			for _, f := range s.free {
				drop = append(drop, f.name)
			}
			s.free, s.freeBytes = nil, 0
			if s.bytes+n > max {
				s.fulls.Add(1)
				return 0, drop, ErrFull
			}
		}
	}
	cur := s.segs[len(s.segs)-1]
	if cur.size > 0 && cur.size+n > s.cfg.SegmentSize {
		if err := s.createSegment(); err != nil {
			return 0, drop, err
		}
		cur = s.segs[len(s.segs)-1]
	}
	if len(payload) <= smallPayload {
		b = append(b, payload...)
		_, err = s.f.WriteAt(b, cur.size)
	} else if _, err = s.f.WriteAt(b, cur.size); err == nil {
		_, err = s.f.WriteAt(payload, cur.size+int64(len(b)))
	}
	s.buf = b[:0]
	if err != nil {
		// Undo a partial write, so that the file stays a sequence of
		// whole records (a recycled file loses its old records past
		// them too); if that fails too, stop appending.
		cur.reused = false
		if terr := s.f.Truncate(cur.size); terr != nil {
			s.err = fmt.Errorf("spool: write failed (%v) and could not be undone: %w", err, terr)
		}
		if errors.Is(err, syscall.ENOSPC) {
			s.fulls.Add(1)
			return 0, drop, fmt.Errorf("%w: %w", ErrFull, err)
		}
		return 0, drop, fmt.Errorf("spool: append: %w", err)
	}
	cur.add(h.Seq, n)
	if !s.tapLocked(h, payload) {
		s.tailAdd(h, payload, cur)
	} else {
		// Every consumer took the record, and with it every record
		// before it: nothing kept in memory is wanted any more.
		s.tapped.Add(1)
		s.tailDrop()
	}
	s.bytes += n
	s.written += uint64(n)
	s.next++
	s.appends.Add(1)
	if s.notify != nil {
		close(s.notify)
		s.notify = nil
	}
	return h.Seq, drop, nil
}

// tapLocked offers the record just written to the consumers' taps and
// reports whether every consumer took it. s.mu is held.
func (s *Spool) tapLocked(h *RecordHeader, payload []byte) bool {
	if len(s.consumers) == 0 {
		return false
	}
	all, made := true, false
	var rec Record
	for _, c := range s.consumers {
		if c.tap == nil || c.removed {
			all = false
			continue
		}
		if !made {
			made = true
			rec = Record{Seq: h.Seq, Signal: otlpwire.Signal(h.Signal), Tenant: h.Tenant,
				Received: fromUnixNano(h.ReceivedUnixNano), Payload: payload}
		}
		if c.tap(rec) {
			c.tapped = h.Seq + 1
			c.taken.Add(1)
		} else {
			all = false
		}
	}
	return all
}

// tailEntry is a record kept in memory (Config.TailBytes): its header
// fields, a copy of its payload, and where it ends in its segment.
type tailEntry struct {
	seq      uint64
	signal   otlpwire.Signal
	tenant   string
	received int64
	payload  []byte
	seg      *segment
	end      int64 // offset in seg after the record
}

// tailAdd keeps a copy of the record just appended, dropping the oldest
// past TailBytes. s.mu is held.
//
// A copy is kept only while a consumer can read it from memory. Once
// every consumer reads behind the oldest record kept, they read from the
// files until one has caught up, since every record kept meanwhile would
// be dropped before they got there: keeping stops, and starts again when
// a consumer next asks for the record just appended. Consumers that lag
// (the lake loader under a load it cannot keep up with) thus cost no
// copies and hold no memory, while one that keeps up still reads from
// memory whatever the others do.
func (s *Spool) tailAdd(h *RecordHeader, payload []byte, seg *segment) {
	if s.cfg.TailBytes <= 0 || int64(len(payload)) > s.cfg.TailBytes {
		s.tailDrop()
		return
	}
	reading := s.leadReadLocked(h.Seq)
	if len(s.tail) > 0 && reading < s.tail[0].seq {
		s.tailDrop()
		s.tailOff = true
	}
	if s.tailOff {
		if reading < h.Seq {
			return
		}
		s.tailOff = false
	}
	s.tail = append(s.tail, tailEntry{seq: h.Seq, signal: otlpwire.Signal(h.Signal), tenant: h.Tenant,
		received: h.ReceivedUnixNano, payload: append([]byte(nil), payload...), seg: seg, end: seg.size})
	s.tailBytes += int64(len(payload))
	drop := 0
	for s.tailBytes > s.cfg.TailBytes {
		s.tailBytes -= int64(len(s.tail[drop].payload))
		s.tail[drop] = tailEntry{}
		drop++
	}
	if drop > 0 {
		s.tail = s.tail[drop:]
		if cap(s.tail) > 4*len(s.tail)+64 {
			s.tail = append([]tailEntry(nil), s.tail...)
		}
	}
}

// tailDrop empties the tail. s.mu is held.
func (s *Spool) tailDrop() {
	clear(s.tail)                       // drop the payloads
	s.tail, s.tailBytes = s.tail[:0], 0 // keep the entries consecutive
}

// leadReadLocked returns the highest sequence number a consumer that
// did not take record seq (SetTap) reads next, 0 if there is none and
// math.MaxUint64 without consumers. s.mu is held.
func (s *Spool) leadReadLocked(seq uint64) uint64 {
	if len(s.consumers) == 0 {
		return math.MaxUint64
	}
	lead := uint64(0)
	for _, c := range s.consumers {
		if !c.removed && c.tapped <= seq {
			lead = max(lead, c.reading.Load(), c.Committed()+1, c.tapped)
		}
	}
	return lead
}

// tailGet returns the kept record seq, nil if it is not kept. s.mu is
// held.
func (s *Spool) tailGet(seq uint64) *tailEntry {
	if len(s.tail) == 0 || seq < s.tail[0].seq {
		return nil
	}
	i := seq - s.tail[0].seq
	if i >= uint64(len(s.tail)) || s.tail[i].seq != seq {
		return nil
	}
	return &s.tail[i]
}

// collectLocked removes from s.segs the segments every consumer has
// committed past (never the current one, and none if there is no
// consumer) and returns their file names, for the caller to delete
// after releasing s.mu.
func (s *Spool) collectLocked() []string {
	if len(s.consumers) == 0 {
		return nil
	}
	done := uint64(1<<64 - 1)
	for _, c := range s.consumers {
		done = min(done, c.Committed())
	}
	var drop []string
	for len(s.segs) > 1 && s.segs[0].last <= done {
		name := s.segs[0].name
		if len(s.free) < maxFree && os.Rename(filepath.Join(s.dir, name), filepath.Join(s.dir, name+freeSuffix)) == nil {
			s.free = append(s.free, freeFile{name + freeSuffix, s.segs[0].size})
			s.freeBytes += s.segs[0].size
		} else {
			drop = append(drop, name)
		}
		s.bytes -= s.segs[0].size
		s.segs[0] = nil
		s.segs = s.segs[1:]
	}
	return drop
}

// removeFiles deletes the named files of dir.
func removeFiles(dir string, names []string) error {
	var errs []error
	for _, name := range names {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("spool: delete segment: %w", errors.Join(errs...))
	}
	return nil
}

// waitChLocked returns a channel closed by the next Append or by Close.
func (s *Spool) waitChLocked() <-chan struct{} {
	if s.notify == nil {
		s.notify = make(chan struct{})
	}
	return s.notify
}

// Dir returns the spool's directory. A consumer may keep files of its own
// there, beside its cursor, under names that end in none of the spool's
// suffixes (.seg, .free, .cursor, .tmp): Open ignores them, except that
// it removes <anything>.tmp.
func (s *Spool) Dir() string { return s.dir }

// Repairs returns what Open repaired, in the order found: one
// *CorruptError per truncated segment or unreadable cursor file.
func (s *Spool) Repairs() []*CorruptError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*CorruptError(nil), s.repairs...)
}

// ConsumerNames returns the names of the registered consumers, those
// found on disk included, sorted.
func (s *Spool) ConsumerNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.consumers))
	for n := range s.consumers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// BytesAfter returns about how many bytes of segment files hold the
// records after seq, a consumer's cursor: to within the spacing of the
// segments' index (256 KiB).
func (s *Spool) BytesAfter(seq uint64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := searchSegs(s.segs, seq+1)
	if i == len(s.segs) {
		return 0
	}
	var n int64
	for _, g := range s.segs[i+1:] {
		n += g.size
	}
	g := s.segs[i]
	off := int64(0)
	for _, e := range g.index {
		if e.seq > seq+1 {
			break
		}
		off = e.off
	}
	return n + g.size - off
}

// Stats returns the spool's counters.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{
		Segments:  len(s.segs),
		Bytes:     s.bytes,
		FirstSeq:  s.next,
		LastSeq:   s.next - 1,
		Consumers: len(s.consumers),
		Appends:   s.appends.Load(),
		Syncs:     s.syncs.Load(),
		Full:      s.fulls.Load(),
		Tapped:    s.tapped.Load(),
	}
	for _, g := range s.segs {
		if !g.empty() {
			st.FirstSeq = g.base
			break
		}
	}
	return st
}

// Close stops the spool: unless the policy is SyncNever it fsyncs what
// was written, then it closes the files and releases the directory.
// Appends waiting for an fsync complete; blocked Next calls and later
// calls of any method return ErrClosed. Close returns the error of the
// last fsync, if any.
func (s *Spool) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	if s.notify != nil {
		close(s.notify)
		s.notify = nil
	}
	s.mu.Unlock()
	close(s.stop)
	s.wg.Wait()

	s.mu.Lock()
	// A recycled current segment loses what it held before, so that a
	// clean restart finds only its records.
	cur := s.segs[len(s.segs)-1]
	reused := cur.reused
	err := s.truncateCurrentLocked()
	if reused && err == nil && s.cfg.Sync != SyncNever {
		if err = s.f.Sync(); err != nil {
			err = fmt.Errorf("spool: sync %s: %w", cur.name, err)
		}
	}
	if s.cfg.Sync != SyncNever {
		if serr := s.syncBatchLocked(); err == nil {
			err = serr
		}
	}
	for s.syncing {
		s.syncDone.Wait()
	}
	consumers := make([]*Consumer, 0, len(s.consumers))
	for _, c := range s.consumers {
		consumers = append(consumers, c)
	}
	s.mu.Unlock()
	for _, c := range consumers {
		c.close()
	}
	if cerr := s.closeFiles(); err == nil {
		err = cerr
	}
	return err
}

// closeFiles closes the segment files and releases the directory lock.
func (s *Spool) closeFiles() error {
	var errs []error
	for _, f := range s.pending {
		errs = append(errs, f.Close())
	}
	s.pending = nil
	if s.f != nil {
		errs = append(errs, s.f.Close())
	}
	errs = append(errs, s.lock.Unlock())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("spool: close: %w", err)
	}
	return nil
}
