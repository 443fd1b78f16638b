package receiver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

var (
	errTooLarge   = errors.New("too large")
	errOverBudget = errors.New("in-flight byte limit reached")
)

// buffer is a pooled byte slice for request bodies. Buffers above
// maxPooledCap are dropped rather than pooled, so one huge request does not
// pin its memory for good.
type buffer struct{ b []byte }

const maxPooledCap = 4 << 20

var bufferPool = sync.Pool{New: func() any { return new(buffer) }}

func getBuffer() *buffer { return bufferPool.Get().(*buffer) }

func putBuffer(b *buffer) {
	if b == nil || cap(b.b) > maxPooledCap {
		return
	}
	b.b = b.b[:0]
	bufferPool.Put(b)
}

// readAll appends everything r yields to dst[:0] and returns it. hint is the
// expected size (0 if unknown). Reading more than limit bytes fails with
// errTooLarge; every growth of dst is first reserved in res, failing with
// errOverBudget when the in-flight budget is spent. Other errors are r's.
func readAll(dst []byte, r io.Reader, hint, limit int64, res *reservation) ([]byte, error) {
	dst = dst[:0]
	reserved := min(max(hint+1, 4096), limit+1) // +1 so a full read still sees EOF
	if !res.grow(reserved) {
		return dst, errOverBudget
	}
	if int64(cap(dst)) < reserved {
		dst = make([]byte, 0, reserved)
	}
	for {
		if int64(len(dst)) > limit {
			return dst, errTooLarge
		}
		end := min(int64(cap(dst)), reserved)
		if int64(len(dst)) == end {
			next := min(2*reserved, limit+1)
			if !res.grow(next - reserved) {
				return dst, errOverBudget
			}
			reserved = next
			if int64(cap(dst)) < next {
				grown := make([]byte, len(dst), next)
				copy(grown, dst)
				dst = grown
			}
			end = next
		}
		n, err := r.Read(dst[len(dst):end])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			if int64(len(dst)) > limit {
				return dst, errTooLarge
			}
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// Content codings of request bodies.
type coding uint8

const (
	codingNone coding = iota
	codingGzip
	codingZstd
	codingDeflate
)

// parseCoding reads a Content-Encoding header. Codings are
// case-insensitive (RFC 9110 8.4.1); "deflate" is the zlib format (RFC
// 1950), as HTTP defines it, and "zlib" is the name the Collector's
// exporters also send.
func parseCoding(s string) (coding, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "identity":
		return codingNone, true
	case "gzip", "x-gzip":
		return codingGzip, true
	case "zstd":
		return codingZstd, true
	case "deflate", "zlib":
		return codingDeflate, true
	}
	return 0, false
}

// gzipPool holds gzip readers between requests. A reader goes back reset
// onto emptyGzip, so that it does not keep the last request's body alive
// (bodies above maxPooledCap are meant to be freed).
var gzipPool sync.Pool // *gzip.Reader

// emptyGzip is a gzip stream of no data.
var emptyGzip = func() []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Close() //nolint:errcheck // writes to memory
	return b.Bytes()
}()

func putGzip(zr *gzip.Reader) {
	if zr.Reset(bytes.NewReader(emptyGzip)) == nil {
		gzipPool.Put(zr)
	}
}

// zstdMaxWindow bounds the window a zstd frame may ask for (and so the
// decoder's history buffer); SDKs and the Collector use at most 8 MiB.
const zstdMaxWindow = 32 << 20

var zstdPool = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow))
	if err != nil {
		panic(err) // only for invalid options
	}
	return d
}}

// maxHint caps the size a compressed body may announce (gzip ISIZE, zstd
// frame content size) before anything is decoded, so a lying header cannot
// make the receiver allocate its whole limit up front.
const maxHint = 4 << 20

// decompress appends the decoding of src to dst[:0] under the same limit
// and reservation rules as readAll. Corrupt input is reported as an error
// wrapping neither errTooLarge nor errOverBudget.
func decompress(dst, src []byte, c coding, limit int64, res *reservation) ([]byte, error) {
	switch c {
	case codingGzip:
		zr, _ := gzipPool.Get().(*gzip.Reader)
		var err error
		if zr == nil {
			zr, err = gzip.NewReader(bytes.NewReader(src))
		} else {
			err = zr.Reset(bytes.NewReader(src))
		}
		if err != nil {
			return dst, fmt.Errorf("gzip: %w", err)
		}
		defer putGzip(zr)
		var hint int64
		if len(src) >= 4 { // ISIZE: the uncompressed size mod 2^32, only a hint
			hint = min(int64(binary.LittleEndian.Uint32(src[len(src)-4:])), maxHint)
		}
		dst, err = readAll(dst, zr, hint, limit, res)
		if err != nil && !errors.Is(err, errTooLarge) && !errors.Is(err, errOverBudget) {
			err = fmt.Errorf("gzip: %w", err)
		}
		return dst, err
	case codingZstd:
		zr := zstdPool.Get().(*zstd.Decoder)
		defer func() {
			zr.Reset(nil) //nolint:errcheck // drops the reference to src
			zstdPool.Put(zr)
		}()
		if err := zr.Reset(bytes.NewReader(src)); err != nil {
			return dst, fmt.Errorf("zstd: %w", err)
		}
		var hint int64
		var h zstd.Header
		if h.Decode(src) == nil && h.HasFCS {
			hint = int64(min(h.FrameContentSize, maxHint))
		}
		dst, err := readAll(dst, zr, hint, limit, res)
		if err != nil && !errors.Is(err, errTooLarge) && !errors.Is(err, errOverBudget) {
			err = fmt.Errorf("zstd: %w", err)
		}
		return dst, err
	case codingDeflate: // rare enough not to pool its readers
		zr, err := zlib.NewReader(bytes.NewReader(src))
		if err != nil {
			return dst, fmt.Errorf("deflate: %w", err)
		}
		dst, err = readAll(dst, zr, 0, limit, res) // zlib carries no size
		if err != nil && !errors.Is(err, errTooLarge) && !errors.Is(err, errOverBudget) {
			err = fmt.Errorf("deflate: %w", err)
		}
		return dst, err
	}
	return dst, fmt.Errorf("no decoder for content coding %d", c) // callers pass a compressed coding only
}
