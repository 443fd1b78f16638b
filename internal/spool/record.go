package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
	"github.com/wirehouse/wirehouse/xdr"
)

// Record is one record read back by a Consumer.
type Record struct {
	Seq    uint64
	Signal otlpwire.Signal
	Tenant string
	// Received is the time given to Append, in UTC; the zero Time if
	// Append was given the zero Time.
	Received time.Time
	// Payload aliases the Consumer's read buffer: it is valid until the
	// next call of Next or Rewind on the same Consumer, unless Kept.
	Payload []byte
	// Kept reports that Payload is the spool's in-memory copy of the
	// record (Config.TailBytes), which nothing ever changes or reuses: the
	// caller may keep it as long as it likes instead of copying it.
	Kept bool
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxHeaderLen is the longest encoding of a RecordHeader (tenant of
// MAX_TENANT bytes); minHeaderLen the shortest.
var (
	maxHeaderLen = (&RecordHeader{Tenant: strings.Repeat("t", MAX_TENANT)}).SizeXDR()
	minHeaderLen = (&RecordHeader{}).SizeXDR()
)

// appendHeader appends the header of a record to dst, its crc field
// computed from payloadCRC, the CRC-32C of the payload. The header must be
// valid except for Crc, which is ignored.
func appendHeader(dst []byte, h *RecordHeader, payloadCRC uint32) ([]byte, error) {
	n := len(dst)
	b, err := h.AppendXDR(dst)
	if err != nil {
		return dst, err
	}
	crc := crc32.Update(payloadCRC, castagnoli, b[n:len(b)-4])
	binary.BigEndian.PutUint32(b[len(b)-4:], crc)
	return b, nil
}

// unixNano converts a received time for the header: 0 for the zero Time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// readAhead is how much a segReader reads at a time at least.
const readAhead = 256 << 10

// segReader reads records from one segment file through a window of the
// file held in buf.
type segReader struct {
	f     *os.File
	name  string // the file name, for errors
	buf   []byte // bytes [start, start+len(buf)) of the file
	start int64
	ahead int
	d     xdr.Decoder
}

// reset points r at another file, keeping its buffer.
func (r *segReader) reset(f *os.File, name string) {
	r.f, r.name, r.buf, r.start = f, name, r.buf[:0], 0
}

// view returns bytes [off, off+n) of the file, of which the first limit
// bytes are known to be complete; off+n must not exceed limit. The result
// aliases r's buffer and is valid until the next call. The buffer never
// grows beyond limit-off bytes, so a length read from the file costs no
// more memory than the file holds.
func (r *segReader) view(off int64, n int, limit int64) ([]byte, error) {
	if off >= r.start && off+int64(n) <= r.start+int64(len(r.buf)) {
		i := off - r.start
		return r.buf[i : i+int64(n)], nil
	}
	want := int64(max(n, r.ahead, readAhead))
	if want > limit-off {
		want = limit - off
	}
	if int64(cap(r.buf)) < want || cap(r.buf) > 4*max(int(want), readAhead) {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	if _, err := r.f.ReadAt(r.buf, off); err != nil {
		r.buf = r.buf[:0]
		return nil, fmt.Errorf("spool: read %s: %w", r.name, err)
	}
	r.start = off
	return r.buf[:n], nil
}

// record reads the record at off into h and returns its payload (a view,
// see view) and its total length. limit is the number of bytes of the
// file known complete. A record that is cut short or fails a check is a
// *CorruptError at off; other errors are I/O errors.
func (r *segReader) record(off, limit int64, h *RecordHeader) (payload []byte, n int64, err error) {
	bad := func(err error) error {
		return &CorruptError{Segment: r.name, Offset: off, Err: err}
	}
	avail := limit - off
	hb, err := r.view(off, int(min(avail, int64(maxHeaderLen))), limit)
	if err != nil {
		return nil, 0, err
	}
	r.d.Reset(hb)
	if err := h.DecodeXDR(&r.d); err != nil {
		if errors.Is(err, xdr.ErrTruncated) && avail < int64(maxHeaderLen) {
			return nil, 0, bad(ErrTorn)
		}
		return nil, 0, bad(fmt.Errorf("%w: %w", ErrHeader, err))
	}
	hlen := r.d.Offset()
	if h.PayloadLength > MAX_PAYLOAD {
		return nil, 0, bad(fmt.Errorf("%w: payload length %d over %d", ErrHeader, h.PayloadLength, MAX_PAYLOAD))
	}
	n = int64(hlen) + int64(h.PayloadLength)
	if n > avail {
		return nil, 0, bad(ErrTorn)
	}
	rec, err := r.view(off, int(n), limit)
	if err != nil {
		return nil, 0, err
	}
	payload = rec[hlen:]
	if got := crc32.Update(crc32.Checksum(payload, castagnoli), castagnoli, rec[:hlen-4]); got != h.Crc {
		return nil, 0, bad(fmt.Errorf("%w: stored %08x, computed %08x", ErrChecksum, h.Crc, got))
	}
	return payload, n, nil
}
