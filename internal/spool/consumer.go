package spool

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wirehouse/wirehouse/internal/durable"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Consumer reads the spool's records in order and keeps a durable cursor:
// the sequence number up to which it has consumed them. Next and Rewind
// must be called by one goroutine at a time; Commit and Committed may be
// called from any goroutine, concurrently with Next.
type Consumer struct {
	s    *Spool
	name string

	committed atomic.Uint64     // written under s.mu, after the cursor file
	removed   bool              // under s.mu
	tap       func(Record) bool // under s.mu; see SetTap
	tapped    uint64            // under s.mu: Next returns nothing before it
	reading   atomic.Uint64     // the record Next looks for next (for the spool's tail)
	taken     atomic.Uint64     // records the tap took

	commitMu sync.Mutex // serializes cursor file writes

	// Reader state, under readMu (held by Next for its whole call).
	readMu sync.Mutex
	want   uint64   // the sequence number Next looks for first
	seg    *segment // the segment being read, nil to look it up
	off    int64    // offset in seg of the next record, whose number is posSeq
	posSeq uint64
	f      *os.File // seg's file, opened for reading
	r      segReader
	hdr    RecordHeader
}

const (
	cursorSuffix = ".cursor"
	tmpSuffix    = ".tmp"
)

// validName reports whether name may be a consumer name: 1 to MAX_CONSUMER
// bytes of ASCII letters, digits, '-', '_' and '.', not starting with '.'.
func validName(name string) bool {
	if name == "" || len(name) > MAX_CONSUMER || name[0] == '.' {
		return false
	}
	for _, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// Consumer returns the consumer called name, registering it if it is new:
// a new consumer's cursor is put just before the oldest retained record,
// and written to disk before Consumer returns. Repeated calls with one
// name return the same *Consumer. Names are 1 to MAX_CONSUMER bytes of
// ASCII letters, digits, '-', '_' and '.', not starting with '.'.
//
// While a consumer exists, registered in this process or found on disk
// by Open, no segment holding records it has not committed is deleted.
func (s *Spool) Consumer(name string) (*Consumer, error) {
	if !validName(name) {
		return nil, fmt.Errorf("spool: invalid consumer name %q", name)
	}
	s.regMu.Lock()
	defer s.regMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	if c, ok := s.consumers[name]; ok {
		s.mu.Unlock()
		return c, nil
	}
	start := s.next
	for _, g := range s.segs {
		if !g.empty() {
			start = g.base
			break
		}
	}
	s.mu.Unlock()
	// Segments can only be deleted past every consumer's cursor, so while
	// this one is not registered, records from start on may go, but the
	// consumer then starts at the oldest record left, as it should.
	c := &Consumer{s: s, name: name}
	c.committed.Store(start - 1)
	if err := writeCursor(s.dir, name, start-1); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.consumers[name] = c
	s.mu.Unlock()
	return c, nil
}

// RemoveConsumer deletes the consumer called name and its cursor, so that
// it no longer holds segments back; a *Consumer for it then fails with
// ErrConsumerRemoved. Removing an unknown consumer is not an error.
func (s *Spool) RemoveConsumer(name string) error {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	c, ok := s.consumers[name]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	if err := os.Remove(filepath.Join(s.dir, name+cursorSuffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spool: remove consumer: %w", err)
	}
	if err := durable.SyncDir(s.dir); err != nil {
		return fmt.Errorf("spool: remove consumer: %w", err)
	}
	s.mu.Lock()
	delete(s.consumers, name)
	c.removed = true
	if s.notify != nil { // wake a Next waiting on it
		close(s.notify)
		s.notify = nil
	}
	drop := s.collectLocked()
	s.mu.Unlock()
	return removeFiles(s.dir, drop)
}

// Name returns the consumer's name.
func (c *Consumer) Name() string { return c.name }

// Committed returns the consumer's cursor: every record up to this
// sequence number is consumed.
func (c *Consumer) Committed() uint64 { return c.committed.Load() }

// Commit records durably that every record with a sequence number up to
// seq is consumed: the cursor file is replaced (written to a temporary
// file, fsynced, renamed, directory fsynced) before Commit returns.
// Segments that every consumer has now consumed are then deleted. A seq
// at or below the cursor changes nothing; one beyond the newest record is
// an error. Next continues after the newest record it returned, or after
// seq if that is further.
func (c *Consumer) Commit(seq uint64) error {
	c.commitMu.Lock()
	defer c.commitMu.Unlock()
	s := c.s
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case c.removed:
		s.mu.Unlock()
		return ErrConsumerRemoved
	case seq <= c.Committed():
		s.mu.Unlock()
		return nil
	case seq >= s.next:
		s.mu.Unlock()
		return fmt.Errorf("spool: commit %d beyond the newest record %d", seq, s.next-1)
	}
	s.mu.Unlock()
	if err := writeCursor(s.dir, c.name, seq); err != nil {
		return err
	}
	s.mu.Lock()
	c.committed.Store(seq)
	drop := s.collectLocked()
	s.mu.Unlock()
	return removeFiles(s.dir, drop)
}

// Rewind makes the next Next return the first record after the committed
// cursor again, as after a batch that failed to be delivered. Call it
// from the goroutine that calls Next.
func (c *Consumer) Rewind() {
	c.readMu.Lock()
	c.want, c.seg = 0, nil
	c.s.mu.Lock()
	c.tapped = 0
	c.s.mu.Unlock()
	c.readMu.Unlock()
}

// Taken returns how many records the consumer's tap took since Open.
func (c *Consumer) Taken() uint64 { return c.taken.Load() }

// SetTap hands the consumer each record as it is appended, while the
// consumer keeps up: Append calls fn with the record just written, in
// sequence order and under the spool's lock, before the record can be
// read with Next. When fn returns true the consumer has taken the
// record: Next never returns it (until Rewind), and when every consumer
// took it the spool keeps no in-memory copy (Config.TailBytes). When fn
// returns false, Next returns the record as usual.
//
// fn must take a record only if the consumer has already been given
// every record before it, and must be quick: it holds up every Append.
// It must not call the Spool or its Consumers. The Payload is the
// caller of Append's buffer: fn must copy what it keeps. SetTap(nil)
// stops the calls; once it returns, fn is not running and will not run.
func (c *Consumer) SetTap(fn func(Record) bool) {
	c.s.mu.Lock()
	c.tap = fn
	c.s.mu.Unlock()
}

// Next returns the first record after the last one it returned (at first,
// or after Rewind, the first after the committed cursor). If there is
// none yet it waits for an Append, for ctx (returning ctx.Err()) or for
// Close (ErrClosed). Sequence numbers increase by one, except across
// records lost to corruption. The payload is valid until the next call of
// Next or Rewind, unless the record is Kept (served from the copy kept in
// memory, Config.TailBytes, which is never changed: the caller may keep
// it). A record that fails its checksum is a *CorruptError; Next keeps
// returning it.
func (c *Consumer) Next(ctx context.Context) (Record, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	s := c.s
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return Record{}, ErrClosed
		}
		if c.removed {
			s.mu.Unlock()
			return Record{}, ErrConsumerRemoved
		}
		want := max(c.want, c.Committed()+1, c.tapped)
		c.reading.Store(want)
		if e := s.tailGet(want); e != nil {
			// From memory; the file reader is moved past it.
			rec := Record{Seq: e.seq, Signal: e.signal, Tenant: e.tenant, Received: fromUnixNano(e.received), Payload: e.payload, Kept: true}
			c.seg, c.off, c.posSeq = e.seg, e.end, e.seq+1
			c.want = e.seq + 1
			c.reading.Store(c.want)
			s.mu.Unlock()
			s.tailHits.Add(1)
			return rec, nil
		}
		if c.seg == nil || c.posSeq != want || want > c.seg.last {
			c.seg = nil
			if g := s.findLocked(want); g != nil {
				c.seg = g
				c.off, c.posSeq = g.seek(want)
			}
		}
		if c.seg == nil {
			ch := s.waitChLocked()
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return Record{}, ctx.Err()
			}
		}
		g, limit := c.seg, c.seg.size
		s.mu.Unlock()
		if testHookRead != nil {
			testHookRead()
		}

		if c.r.name != g.name || c.f == nil {
			if err := c.open(g); errors.Is(err, os.ErrNotExist) {
				c.seg = nil // deleted meanwhile (a Commit beyond Next): look again
				continue
			} else if err != nil {
				return Record{}, err
			}
		}
		for c.off < limit {
			payload, n, err := c.r.record(c.off, limit, &c.hdr)
			if err == nil && c.hdr.Seq != c.posSeq {
				err = &CorruptError{Segment: g.name, Offset: c.off,
					Err: fmt.Errorf("%w: sequence number %d, want %d", ErrHeader, c.hdr.Seq, c.posSeq)}
			}
			if err != nil {
				c.seg = nil
				if s.collected(g) {
					// Every consumer committed past g meanwhile (a
					// Commit beyond Next), and its file may have been
					// recycled and written over: look again.
					break
				}
				return Record{}, err
			}
			c.off += n
			c.posSeq++
			if c.hdr.Seq >= want {
				c.want = c.hdr.Seq + 1
				c.reading.Store(c.want)
				return Record{
					Seq:      c.hdr.Seq,
					Signal:   otlpwire.Signal(c.hdr.Signal),
					Tenant:   c.hdr.Tenant,
					Received: fromUnixNano(c.hdr.ReceivedUnixNano),
					Payload:  payload,
				}, nil
			}
		}
		c.seg = nil // g was collected meanwhile, or (cannot happen) did not hold want: look again
	}
}

// testHookRead, when set by a test, runs in Next just before it reads a
// segment file without the spool's lock.
var testHookRead func()

// collected reports whether segment g was removed from the spool (every
// consumer committed past it); segments go oldest first.
func (s *Spool) collected(g *segment) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.segs) == 0 || g.base < s.segs[0].base
}

// findLocked returns the first non-empty segment whose last record is at
// or after seq, nil if there is none.
func (s *Spool) findLocked(seq uint64) *segment {
	for i := searchSegs(s.segs, seq); i < len(s.segs); i++ {
		if !s.segs[i].empty() {
			return s.segs[i]
		}
	}
	return nil
}

// searchSegs returns the index of the first segment whose last is >= seq.
func searchSegs(segs []*segment, seq uint64) int {
	lo, hi := 0, len(segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if segs[m].last < seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// open switches the reader to g's file.
func (c *Consumer) open(g *segment) error {
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
	f, err := os.Open(filepath.Join(c.s.dir, g.name))
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	c.f = f
	c.r.reset(f, g.name)
	return nil
}

// close releases the reader's file, waiting for a running Next.
func (c *Consumer) close() {
	c.readMu.Lock()
	if c.f != nil {
		c.f.Close()
		c.f = nil
	}
	c.readMu.Unlock()
}

// writeCursor replaces dir/name.cursor durably with committed.
func writeCursor(dir, name string, committed uint64) error {
	cf := CursorFile{Name: name, Committed: committed}
	b, err := cf.AppendXDR(nil)
	if err != nil {
		return fmt.Errorf("spool: cursor: %w", err)
	}
	binary.BigEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	if err := durable.WriteFile(filepath.Join(dir, name+cursorSuffix), b, 0o644); err != nil {
		return fmt.Errorf("spool: cursor: %w", err)
	}
	return nil
}

// maxCursorLen bounds what is read of a cursor file.
var maxCursorLen = (&CursorFile{Name: strings.Repeat("n", MAX_CONSUMER)}).SizeXDR()

// loadCursor reads a cursor file found by Open. A file that cannot be
// decoded, fails its checksum or names another consumer is a repair: the
// consumer restarts from 0 (every retained record is delivered again),
// and the file is rewritten. A file whose name is not a valid consumer
// name is ignored.
func (s *Spool) loadCursor(file string) (*Consumer, *CorruptError, error) {
	name := strings.TrimSuffix(file, cursorSuffix)
	if !validName(name) {
		return nil, nil, nil
	}
	path := filepath.Join(s.dir, file)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("spool: cursor: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(maxCursorLen)+1))
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("spool: cursor: %w", err)
	}
	c := &Consumer{s: s, name: name}
	var cf CursorFile
	err = cf.UnmarshalBinary(b)
	switch {
	case err != nil:
		err = fmt.Errorf("%w: %w", ErrHeader, err)
	case cf.Name != name:
		err = fmt.Errorf("%w: cursor of %q", ErrHeader, cf.Name)
	case crc32.Checksum(b[:len(b)-4], castagnoli) != cf.Crc:
		err = ErrChecksum
	default:
		c.committed.Store(cf.Committed)
		return c, nil, nil
	}
	if werr := writeCursor(s.dir, name, 0); werr != nil {
		return nil, nil, werr
	}
	return c, &CorruptError{Segment: file, Err: err}, nil
}

// Scan calls fn with each record from sequence number from to to, or to
// the newest one when Scan began if that is sooner, in order, without a
// cursor: it neither holds segments back nor moves any consumer. A record
// deleted meanwhile (every consumer committed it) is passed over. The
// record's payload is valid only during fn. An error of fn ends the scan
// and is returned.
func (s *Spool) Scan(ctx context.Context, from, to uint64, fn func(Record) error) error {
	last := min(s.Stats().LastSeq, to)
	from = max(from, 1)
	if last < from {
		return nil
	}
	c := &Consumer{s: s}
	c.committed.Store(from - 1)
	defer c.close()
	for want := from; want <= last; {
		s.mu.Lock()
		g := s.findLocked(want)
		s.mu.Unlock()
		if g == nil {
			return nil // the rest was deleted: nothing to wait for
		}
		rec, err := c.Next(ctx)
		if err != nil {
			return err
		}
		if rec.Seq > last {
			return nil
		}
		if err := fn(rec); err != nil {
			return err
		}
		want = rec.Seq + 1
	}
	return nil
}
