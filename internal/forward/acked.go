package forward

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/wirehouse/wirehouse/internal/durable"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// This file keeps track of what was delivered: the records in flight,
// the cursor committed past the delivered prefix, and the
// acknowledged-ranges file that remembers what was delivered after it
// (docs/format/forward-acked.md).

// record is one spool record on its way, or a run of records done at
// once (of signals not sent here, or delivered before a restart).
type record struct {
	first, seq uint64 // the records first..seq
	received   time.Time
	since      time.Time // when it was read
	parts      int       // parts not yet done, plus one while it is being routed; under pmu
	routing    bool      // the reader's reference is held; under pmu
	gen        uint64    // the ring generation it was first routed on (from 1); under pmu
	at         []share   // where its parts went; under pmu
}

// share counts a record's parts on one endpoint.
type share struct {
	ep *endpoint
	n  int // parts not yet done there
}

// shareOf returns r's share of ep, adding it. pmu is held.
func (r *record) shareOf(ep *endpoint) *share {
	for i := range r.at {
		if r.at[i].ep == ep {
			return &r.at[i]
		}
	}
	r.at = append(r.at, share{ep: ep})
	return &r.at[len(r.at)-1]
}

// release drops one reference of each of recs (a batch delivered or
// dropped by ep, or moved away from it).
func (d *Destination) release(recs []*record, ep *endpoint) {
	d.pmu.Lock()
	last := false
	for _, r := range recs {
		r.parts--
		r.shareOf(ep).n--
		last = last || r.parts == 0
	}
	d.unsaved = true
	d.pmu.Unlock()
	if last {
		d.kick()
	}
}

// doneRouting drops r's reference of the reader's own: its parts are all
// in batches now.
func (d *Destination) doneRouting(r *record) {
	d.pmu.Lock()
	r.parts--
	r.routing = false
	last := r.parts == 0
	d.unsaved = true
	d.pmu.Unlock()
	if last {
		d.kick()
	}
}

func (d *Destination) kick() {
	select {
	case d.commit <- struct{}{}:
	default:
	}
}

// commitLoop commits the cursor past completed records, at most every
// commitEvery (each commit is an fsync).
func (d *Destination) commitLoop(ctx context.Context) {
	t := time.NewTicker(commitEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		select {
		case <-d.commit:
		default:
			if !d.ackedDue() {
				continue
			}
		}
		if err := d.commitDone(false); err != nil {
			d.log.Error("forward: commit failed", "err", err)
		}
	}
}

const (
	commitEvery = 100 * time.Millisecond
	// ackedAfter is how long the oldest record not delivered is in
	// flight before what was delivered after it is written to the
	// acknowledged-ranges file: a record held back that long holds the
	// cursor back (an endpoint down), while younger ones would cost an
	// fsync per commit for little.
	ackedAfter = time.Second
)

// stuckLocked reports whether the oldest record in flight was read
// ackedAfter ago or more. pmu is held.
func (d *Destination) stuckLocked() bool {
	return len(d.pending) > 0 && time.Since(d.pending[0].since) >= ackedAfter
}

// ackedDue reports whether parts were delivered since the
// acknowledged-ranges file was last written, and it should be written.
func (d *Destination) ackedDue() bool {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	return d.unsaved && d.stuckLocked()
}

// commitDone commits the cursor up to the last record of the delivered
// prefix, then writes the acknowledged-ranges file if what it should
// hold changed: what was delivered after the cursor when the oldest
// record in flight is older than ackedAfter, or when final; else
// nothing (an empty file, once, if the last one was not).
func (d *Destination) commitDone(final bool) error {
	d.pmu.Lock()
	i := 0
	for i < len(d.pending) && d.pending[i].parts == 0 {
		i++
	}
	var seq uint64
	if i > 0 {
		seq = d.pending[i-1].seq
		d.pending = slices.Delete(d.pending, 0, i)
		d.space.Broadcast()
	}
	var f *AckedFile
	if d.ackedPath != "" {
		cursor := max(seq, d.cons.Committed())
		if final || d.stuckLocked() {
			f = snapshotAcked(d.pending, cursor, d.gen, d.routing)
			d.unsaved = false
		} else {
			f = &AckedFile{Cursor: cursor}
		}
		if len(f.Done) == 0 && len(f.Endpoints) == 0 && d.ackedEmpty {
			f = nil // nothing to remember, and the file says so already
		}
	}
	d.pmu.Unlock()
	// The cursor first: the file names it, and is ignored if the cursor
	// on disk is behind it (see loadAcked).
	if i > 0 {
		if err := d.cons.Commit(seq); err != nil {
			return err
		}
	}
	if f == nil {
		return nil
	}
	f.Type, f.Destination = ACKED_RANGES, d.cfg.Name
	b, err := encodeAcked(f)
	if err != nil {
		return fmt.Errorf("forward %s: acknowledged ranges: %w", d.cfg.Name, err)
	}
	if bytes.Equal(b, d.ackedLast) {
		return nil
	}
	if err := durable.WriteFile(d.ackedPath, b, 0o644); err != nil {
		d.pmu.Lock()
		d.unsaved = true // again at the next commit
		d.pmu.Unlock()
		return fmt.Errorf("forward %s: acknowledged ranges: %w", d.cfg.Name, err)
	}
	d.ackedLast = b
	d.ackedEmpty = len(f.Done) == 0 && len(f.Endpoints) == 0
	return nil
}

// snapshotAcked returns what pending (the records in flight after
// cursor, in order) says was delivered: the runs done, and per endpoint
// the runs whose parts there are all done, for the records routed under
// ring generation gen, whose routing hash is routing. A record done
// counts as delivered to every endpoint too, so that an endpoint's runs
// join across it. Each list keeps its first MAX_RANGES runs (forgetting
// the others only sends them again), endpoints are sorted by name.
func snapshotAcked(pending []*record, cursor, gen, routing uint64) *AckedFile {
	f := &AckedFile{Cursor: cursor, Routing: routing}
	type list struct {
		name   string
		ranges []SeqRange
	}
	var eps []*list
	byEP := map[*endpoint]*list{}
	var prev uint64 // the last record of the entry before
	for _, r := range pending {
		if n := unixNano(r.received); n > f.MaxReceivedUnixNano {
			f.MaxReceivedUnixNano = n
		}
		if r.parts == 0 {
			f.Done = addRange(f.Done, prev, r.first, r.seq)
			for _, l := range eps {
				if n := len(l.ranges); n > 0 && l.ranges[n-1].Last == prev {
					l.ranges[n-1].Last = r.seq
				}
			}
		} else if !r.routing && r.gen == gen {
			for _, s := range r.at {
				if s.n != 0 {
					continue
				}
				l := byEP[s.ep]
				if l == nil {
					if len(s.ep.name) > MAX_ENDPOINT_NAME {
						continue
					}
					l = &list{name: s.ep.name}
					byEP[s.ep] = l
					eps = append(eps, l)
				}
				l.ranges = addRange(l.ranges, prev, r.first, r.seq)
			}
		}
		prev = r.seq
	}
	f.Done = f.Done[:min(len(f.Done), MAX_RANGES)]
	slices.SortFunc(eps, func(a, b *list) int { return cmpString(a.name, b.name) })
	for _, l := range eps[:min(len(eps), MAX_ACKED_ENDPOINTS)] {
		f.Endpoints = append(f.Endpoints, EndpointAcked{Endpoint: l.name, Ranges: l.ranges[:min(len(l.ranges), MAX_RANGES)]})
	}
	return f
}

// addRange adds first..last to rs, joining it to the last run if that
// ends at prev, the record just before first in flight.
func addRange(rs []SeqRange, prev, first, last uint64) []SeqRange {
	if n := len(rs); n > 0 && rs[n-1].Last == prev {
		rs[n-1].Last = last
		return rs
	}
	return append(rs, SeqRange{First: first, Last: last})
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unixNano is t in Unix nanoseconds, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// encodeAcked returns the encoding of f with its CRC.
func encodeAcked(f *AckedFile) ([]byte, error) {
	b, err := f.MarshalBinary()
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	return b, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// decodeAcked decodes a file's content and checks its CRC and type.
func decodeAcked(b []byte) (*AckedFile, error) {
	var f AckedFile
	if err := f.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	if f.Crc != crc32.Checksum(b[:len(b)-4], castagnoli) {
		return nil, errors.New("checksum mismatch")
	}
	return &f, nil
}

// ackedSuffix ends the name of a destination's acknowledged-ranges file,
// <spool dir>/forward-<name>.acked, beside its cursor.
const ackedSuffix = ".acked"

// resume is what a restart takes from the acknowledged-ranges file;
// it does not change once Run starts.
type resume struct {
	routing     uint64
	maxReceived int64
	last        uint64 // the last record any range holds
	done        []SeqRange
	eps         map[string][]SeqRange
}

// loadAcked reads the destination's acknowledged-ranges file. No file
// is (nil, nil). A file that cannot be used (it does not decode, fails
// its checksum, names another destination, or names a cursor beyond the
// consumer's, as after a cursor repaired to 0 or a consumer removed and
// made again) is (nil, error): the records after the cursor are then all
// sent again, as at-least-once delivery allows.
func loadAcked(path, name string, committed uint64) (*resume, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := decodeAcked(b)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	case f.Type != ACKED_RANGES || f.Destination != name:
		return nil, fmt.Errorf("%s: type %v of destination %q", filepath.Base(path), f.Type, f.Destination)
	case f.Cursor > committed:
		return nil, fmt.Errorf("%s: written at cursor %d, the cursor is %d", filepath.Base(path), f.Cursor, committed)
	}
	rs := &resume{routing: f.Routing, maxReceived: f.MaxReceivedUnixNano, done: f.Done, eps: map[string][]SeqRange{}}
	ok := func(r []SeqRange) bool {
		prev := f.Cursor
		for _, x := range r {
			if x.First <= prev || x.Last < x.First {
				return false
			}
			prev = x.Last
		}
		rs.last = max(rs.last, prev)
		return true
	}
	if !ok(f.Done) {
		return nil, fmt.Errorf("%s: ranges out of order", filepath.Base(path))
	}
	for _, e := range f.Endpoints {
		if !ok(e.Ranges) {
			return nil, fmt.Errorf("%s: ranges out of order", filepath.Base(path))
		}
		rs.eps[e.Endpoint] = e.Ranges
	}
	return rs, nil
}

// empty reports whether rs remembers nothing.
func (rs *resume) empty() bool { return rs == nil || rs.last == 0 }

// applies reports whether the file speaks of the record with seq and
// received time: it is in the file's span, and was not received after
// every record the file speaks of. The spool numbers records after the
// highest committed cursor, but after a power loss it may number new
// records as the lost ones were; those are received after the restart.
func (rs *resume) applies(seq uint64, received time.Time) bool {
	return rs != nil && seq <= rs.last && unixNano(received) <= rs.maxReceived
}

// isDone reports whether the record seq was delivered in full.
func (rs *resume) isDone(seq uint64, received time.Time) bool {
	return rs.applies(seq, received) && inRanges(rs.done, seq)
}

// delivered reports whether the parts of record seq for endpoint were
// delivered, under routing.
func (rs *resume) delivered(endpoint string, routing, seq uint64) bool {
	return rs.routing == routing && inRanges(rs.eps[endpoint], seq)
}

// inRanges reports whether seq is in one of the sorted ranges rs.
func inRanges(rs []SeqRange, seq uint64) bool {
	i, _ := slices.BinarySearchFunc(rs, seq, func(r SeqRange, s uint64) int {
		if r.Last < s {
			return -1
		}
		if r.First > s {
			return 1
		}
		return 0
	})
	return i < len(rs) && rs[i].First <= seq && seq <= rs[i].Last
}

// routingHash is what the endpoint ranges of the file hold under: a
// record's part for an endpoint is the same only with the same route
// keys and the same ring members.
func routingHash(keys [3]otlpwire.RouteKey, members []string) uint64 {
	h := xxhash.New()
	fmt.Fprintf(h, "logs=%v\nmetrics=%v\ntraces=%v\n", keys[0], keys[1], keys[2])
	for _, m := range members {
		h.WriteString(m)
		h.WriteString("\n")
	}
	return h.Sum64()
}
