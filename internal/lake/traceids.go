package lake

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/parquet-go/parquet-go/bloom"
)

// TraceIDsRegionKey is the key-value metadata of a spans file whose
// trace-id index lies in a region just before its footer: its value is
// the region's length in bytes, decimal (docs/format/lake-parquet.md,
// "Trace-id region"). A reader finds the region from the file's last
// bytes without decoding the footer, so that a lookup by trace id opens
// only the files that may hold it, whatever the number of files.
const TraceIDsRegionKey = "wirehouse.traceids.region"

// traceIDsMagic ends a trace-id region.
const traceIDsMagic = "WHT1"

// traceIDsTrailerLen is the length of a region's trailer: the number of
// fingerprints (4 bytes), their CRC-32C (4) and traceIDsMagic.
const traceIDsTrailerLen = 12

// ErrNoTraceIDsRegion is returned by ReadTraceIDs for a file that has no
// trace-id region before its footer.
var ErrNoTraceIDsRegion = errors.New("no trace-id region")

// TraceIDHash is the hash of a trace id that the Parquet bloom filter of
// the trace_id column uses: XXH64 of its 32 lowercase hex digits, the
// column's value.
func TraceIDHash(hexID []byte) uint64 { return bloom.XXH64{}.Sum64(hexID) }

// TraceIDFingerprint is the fingerprint a trace-id region keeps of a
// trace id whose TraceIDHash is h: its high 32 bits.
func TraceIDFingerprint(h uint64) uint32 { return uint32(h >> 32) }

// traceIDsOf appends to dst the fingerprints of the raw trace ids
// ids(i) for i in [0, n), absent (empty) ones left out, unsorted.
func traceIDsOf(dst []uint32, n int, ids func(i int) []byte) []uint32 {
	var buf [32]byte
	var last []byte
	for i := range n {
		id := ids(i)
		if len(id) == 0 || len(id) > 16 || slices.Equal(id, last) {
			continue // rows come sorted by trace id within a service: skip repeats cheaply
		}
		last = id
		hex.Encode(buf[:], id)
		dst = append(dst, TraceIDFingerprint(TraceIDHash(buf[:2*len(id)])))
	}
	return dst
}

// MarshalTraceIDsRegion encodes the fingerprints fps (in any order, with
// repeats; sorted in place) as a trace-id region: the distinct
// fingerprints ascending, each 4 bytes little-endian, then the trailer:
// their count (4 bytes), the CRC-32C of the fingerprints' bytes (4) and
// "WHT1".
func MarshalTraceIDsRegion(fps []uint32) []byte {
	slices.Sort(fps)
	fps = slices.Compact(fps)
	buf := make([]byte, 0, 4*len(fps)+traceIDsTrailerLen)
	for _, f := range fps {
		buf = binary.LittleEndian.AppendUint32(buf, f)
	}
	sum := crc32.Checksum(buf, castagnoli)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(fps)))
	buf = binary.LittleEndian.AppendUint32(buf, sum)
	return append(buf, traceIDsMagic...)
}

// TraceIDs is a file's trace-id index: the fingerprints of the trace ids
// it holds, ascending. It holds no pointer but its slice, so a reader can
// keep many without the garbage collector scanning them.
type TraceIDs struct {
	fps []uint32
	// RegionLen is the length of the region, in bytes: the value of
	// TraceIDsRegionKey in the file's footer.
	RegionLen int64
}

// MayHold reports whether the file may hold the trace id of hash h
// (TraceIDHash): false means it holds no span of it.
func (t *TraceIDs) MayHold(h uint64) bool {
	_, ok := slices.BinarySearch(t.fps, TraceIDFingerprint(h))
	return ok
}

// Len is the number of fingerprints.
func (t *TraceIDs) Len() int { return len(t.fps) }

// Bytes is the index's size in memory.
func (t *TraceIDs) Bytes() int64 { return int64(4*cap(t.fps)) + 48 }

// traceIDsReadAhead is how many bytes before a file's footer ReadTraceIDs
// reads at first: the region of a loader's file (a few thousand traces)
// fits.
const traceIDsReadAhead = 32 << 10

// ReadTraceIDs reads the trace-id region of the Parquet file of size
// bytes that r reads: ErrNoTraceIDsRegion if it has none, an error
// wrapping ErrMalformed if it is damaged. It reads the file's last 8
// bytes and the bytes before its footer, and adds the bytes it read to
// *read.
func ReadTraceIDs(r io.ReaderAt, size int64, read *int64) (*TraceIDs, error) {
	var tail [8]byte
	if size < 8+traceIDsTrailerLen+4 {
		return nil, ErrNoTraceIDsRegion
	}
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return nil, fmt.Errorf("read trace ids: %w", err)
	}
	*read += 8
	if string(tail[4:]) != "PAR1" {
		return nil, ErrNoTraceIDsRegion
	}
	end := size - 8 - int64(binary.LittleEndian.Uint32(tail[:4])) // the footer's start
	if end < 4+traceIDsTrailerLen {
		return nil, ErrNoTraceIDsRegion
	}
	n := min(end-4, traceIDsReadAhead)
	buf := make([]byte, n)
	if _, err := r.ReadAt(buf, end-n); err != nil {
		return nil, fmt.Errorf("read trace ids: %w", err)
	}
	*read += n
	tr := buf[n-traceIDsTrailerLen:]
	if string(tr[8:]) != traceIDsMagic {
		return nil, ErrNoTraceIDsRegion
	}
	count := int64(binary.LittleEndian.Uint32(tr))
	regionLen := 4*count + traceIDsTrailerLen
	if regionLen > end-4 {
		return nil, fmt.Errorf("read trace ids: %w: region of %d bytes in %d", ErrMalformed, regionLen, end)
	}
	var body []byte
	if regionLen <= n {
		body = buf[n-regionLen : n-traceIDsTrailerLen]
	} else {
		body = make([]byte, 4*count)
		if _, err := r.ReadAt(body, end-regionLen); err != nil {
			return nil, fmt.Errorf("read trace ids: %w", err)
		}
		*read += int64(len(body))
	}
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(tr[4:]) {
		return nil, fmt.Errorf("read trace ids: %w: checksum mismatch", ErrMalformed)
	}
	t := &TraceIDs{fps: make([]uint32, count), RegionLen: regionLen}
	for i := range t.fps {
		t.fps[i] = binary.LittleEndian.Uint32(body[4*i:])
		if i > 0 && t.fps[i] <= t.fps[i-1] {
			return nil, fmt.Errorf("read trace ids: %w: fingerprints out of order", ErrMalformed)
		}
	}
	return t, nil
}
