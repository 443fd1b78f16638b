package otlpfile

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// DefaultMaxFileSize is the largest decompressed file a Reader reads
// unless Config.MaxFileSize says otherwise: 1 GiB.
const DefaultMaxFileSize = 1 << 30

// maxHint caps the buffer allocated up front from a size hint. A gzip or
// zstd header is written by whoever made the file and may claim anything;
// past this the buffer grows only as content actually arrives.
const maxHint = 64 << 20

// Config configures a Reader. Start from DefaultConfig; NewReader calls
// Validate.
type Config struct {
	// Signal is the signal of every file; 0 tells each file's from its
	// content (see File.Signal).
	Signal otlpwire.Signal
	// MaxFileSize is the largest decompressed content of one file, in
	// bytes; larger files fail with ErrTooLarge after at most
	// MaxFileSize+1 bytes were decompressed. It also bounds the zstd
	// window. Default DefaultMaxFileSize.
	MaxFileSize int64
}

// DefaultConfig returns a Config that tells each file's signal and reads
// files of up to DefaultMaxFileSize.
func DefaultConfig() Config { return Config{MaxFileSize: DefaultMaxFileSize} }

// Validate reports the first field NewReader would refuse.
func (c Config) Validate() error {
	switch {
	case c.Signal != 0 && !c.Signal.Valid():
		return fmt.Errorf("otlpfile: Signal %d: not a signal", uint8(c.Signal))
	case c.MaxFileSize < 1:
		return fmt.Errorf("otlpfile: MaxFileSize %d: not positive", c.MaxFileSize)
	}
	return nil
}

// Reader reads OTLP request files one at a time into buffers it reuses. It
// is not safe for concurrent use.
type Reader struct {
	sig  otlpwire.Signal // 0: detect each file's
	fsig otlpwire.Signal // the current file's
	why  string          // how fsig was told
	max  int64
	buf  []byte // decompressed content of the last protobuf file
	reqs [][]byte
	offs []int64
	json jsonState

	br    *bufio.Reader // under gzip, which would otherwise allocate one per file
	gz    *gzip.Reader
	zs    *zstd.Decoder
	zm    *zstd.Decoder // for zstd-compressed messages in a length-delimited stream
	inner []byte        // those messages decompressed
	src   source
}

// NewReader validates cfg and returns a Reader of requests of cfg.Signal,
// or of the signal each file's content shows.
func NewReader(cfg Config) (*Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Reader{sig: cfg.Signal, max: cfg.MaxFileSize}, nil
}

// Close releases the zstd decoder. The Reader must not be used after.
func (r *Reader) Close() {
	if r.zs != nil {
		r.zs.Close()
		r.zs = nil
	}
	if r.zm != nil {
		r.zm.Close()
		r.zm = nil
	}
}

// File is the content of one file as protobuf requests.
type File struct {
	Input
	// Requests are the file's Export*ServiceRequest messages, in order.
	// They alias the Reader's buffers and are valid until its next
	// ReadFile. For JSON they are the transcoded documents.
	Requests [][]byte
	// Offsets[i] is the offset of Requests[i] in the decompressed content:
	// of its first byte, or of its JSON document.
	Offsets []int64
	// DiskBytes is the file's size on disk; ContentBytes the size of its
	// decompressed content; ProtoBytes the total size of Requests.
	DiskBytes, ContentBytes, ProtoBytes int64
	// Signal is the signal of Requests: the Reader's, or the one told from
	// the content (0 for a file without records); SignalFrom says how.
	Signal     otlpwire.Signal
	SignalFrom string
}

// ReadFile reads the file in and returns its requests, which alias the
// Reader's buffers until the next call. A file that cannot be opened,
// decompressed or split, or whose JSON does not transcode, is an *Error
// with in.Path and the offset where reading failed; the File then holds
// the requests before that point and the byte counts so far, and the
// Reader stays usable.
func (r *Reader) ReadFile(in Input) (File, error) {
	f := File{Input: in}
	r.reqs, r.offs = r.reqs[:0], r.offs[:0]
	r.fsig, r.why = r.sig, "given"
	if r.sig == 0 {
		r.why = ""
	}
	file, err := os.Open(in.Path)
	if err != nil {
		return f, &Error{Path: in.Path, Offset: -1, Err: err}
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return f, &Error{Path: in.Path, Offset: -1, Err: err}
	}
	f.DiskBytes = st.Size()

	hint, err := r.open(file, in.Compression, f.DiskBytes)
	if err != nil {
		return f, &Error{Path: in.Path, Offset: 0, Err: err}
	}
	defer r.release()
	if in.Format == FormatJSON {
		err = r.readJSON()
	} else {
		err = r.readProto(hint)
	}
	if err == nil && r.fsig == 0 && in.Format != FormatJSON {
		err = r.detect()
	}
	f.Requests, f.Offsets = r.reqs, r.offs
	f.Signal, f.SignalFrom = r.fsig, r.why
	f.ContentBytes = r.src.n
	for _, q := range f.Requests {
		f.ProtoBytes += int64(len(q))
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Offset: r.src.n, Err: err}
		}
		e.Path = in.Path
		return f, e
	}
	return f, nil
}

// open sets r.src to read the decompressed content of file, of size bytes
// on disk, and returns a hint of the content's size.
func (r *Reader) open(file *os.File, c Compression, size int64) (hint int64, err error) {
	r.src = source{max: r.max}
	switch c {
	case CompressionGzip:
		// The last 4 bytes are ISIZE, the size of the (last) member
		// modulo 2^32: a hint only.
		var tail [4]byte
		if size >= 18 {
			if _, err := file.ReadAt(tail[:], size-4); err == nil {
				hint = int64(binary.LittleEndian.Uint32(tail[:]))
			}
		}
		if r.br == nil {
			r.br = bufio.NewReaderSize(file, 64<<10)
		} else {
			r.br.Reset(file)
		}
		if r.gz == nil {
			r.gz, err = gzip.NewReader(r.br)
		} else {
			err = r.gz.Reset(r.br)
		}
		if err != nil {
			return 0, annotate("gzip", err)
		}
		r.src.r, r.src.what = r.gz, "gzip"
	case CompressionZstd:
		var hdr [zstd.HeaderMaxSize]byte
		n, _ := file.ReadAt(hdr[:], 0)
		var h zstd.Header
		if h.Decode(hdr[:n]) == nil && h.HasFCS && h.FrameContentSize <= uint64(r.max) {
			hint = int64(h.FrameContentSize)
		}
		if r.zs == nil {
			r.zs, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderMaxMemory(uint64(r.max)))
			if err != nil {
				return 0, err
			}
		}
		if err := r.zs.Reset(file); err != nil {
			return 0, annotate("zstd", err)
		}
		r.src.r, r.src.what = r.zs, "zstd"
	default:
		hint = size
		r.src.r, r.src.what = file, "read"
	}
	return hint, nil
}

// release drops the decompressors' references to the file.
func (r *Reader) release() {
	if r.br != nil {
		r.br.Reset(nil)
	}
	if r.zs != nil {
		r.zs.Reset(nil) //nolint:errcheck // a nil reader only drops the old one
	}
	r.src.r = nil
}

// detect tells the signal of the protobuf requests read from the first
// one that holds records; a file without records keeps signal 0.
func (r *Reader) detect() error {
	for i, req := range r.reqs {
		if len(req) == 0 {
			continue
		}
		sig, why, err := DetectSignal(req)
		if err != nil {
			if errors.Is(err, ErrUnknownSignal) && r.emptyUnderAll(req) {
				continue
			}
			return &Error{Offset: r.offs[i], Err: err}
		}
		r.fsig, r.why = sig, why
		return nil
	}
	return nil
}

// emptyUnderAll reports whether req is valid and holds no records under
// every signal: a request of nothing, which tells no signal.
func (r *Reader) emptyUnderAll(req []byte) bool {
	for _, s := range otlpwire.Signals {
		if n, err := s.Count(req); err != nil || n != 0 || s.Validate(req) != nil {
			return false
		}
	}
	return true
}

// readProto reads the content into r.buf and splits it.
func (r *Reader) readProto(hint int64) error {
	if err := r.fill(hint); err != nil {
		return err
	}
	var err error
	r.reqs, r.offs, err = SplitProto(r.reqs, r.offs, r.buf)
	if err != nil {
		return err
	}
	if IsDelimited(r.buf) {
		return r.inflate()
	}
	return nil
}

// zstdMagic starts every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// inflate replaces each message of a length-delimited stream that is a
// zstd frame by its decompressed content: the Collector's file exporter
// with compression: zstd compresses every message on its own. Offsets stay
// those of the compressed messages. The decompressed messages go to
// r.inner, reused from file to file; their total is held to the maximum
// file size.
func (r *Reader) inflate() error {
	type span struct{ i, start, end int }
	var spans []span
	r.inner = r.inner[:0]
	var total int64
	for i, q := range r.reqs {
		if !bytes.HasPrefix(q, zstdMagic) {
			total += int64(len(q))
			continue
		}
		if r.zm == nil {
			var err error
			r.zm, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(r.max)))
			if err != nil {
				return err
			}
		}
		start := len(r.inner)
		out, err := r.zm.DecodeAll(q, r.inner)
		if err != nil {
			return &Error{Offset: r.offs[i], Err: annotate("zstd", err)}
		}
		r.inner = out
		if total += int64(len(out) - start); total > r.max {
			return &Error{Offset: r.offs[i], Err: fmt.Errorf("%w (%d bytes)", ErrTooLarge, r.max)}
		}
		spans = append(spans, span{i, start, len(out)})
	}
	for _, s := range spans { // r.inner no longer moves
		r.reqs[s.i] = r.inner[s.start:s.end:s.end]
	}
	return nil
}

// fill reads all of r.src into r.buf, reusing its capacity. The buffer
// starts at hint+1 bytes (capped), so that content of exactly the hinted
// size is read without growing; it then doubles, up to the maximum.
func (r *Reader) fill(hint int64) error {
	want := min(max(hint, 512), r.max, maxHint) + 1
	buf := r.buf[:0]
	if int64(cap(buf)) < want {
		buf = make([]byte, 0, want)
	}
	r.buf = buf
	return r.fillMore()
}

// fillMore appends the rest of r.src to r.buf, doubling it as needed, up
// to the maximum.
func (r *Reader) fillMore() error {
	buf := r.buf
	defer func() { r.buf = buf }()
	for {
		if len(buf) == cap(buf) {
			grow := min(int64(cap(buf)), r.max+1-int64(len(buf)))
			buf = slices.Grow(buf, int(max(grow, 1)))
		}
		n, err := r.src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// source reads decompressed content, counting it, refusing more than max
// bytes, and naming the decompressor in its errors.
type source struct {
	r    io.Reader
	what string // "gzip", "zstd" or "read"
	n    int64  // bytes yielded
	max  int64
	err  error // sticky
}

func (s *source) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if left := s.max + 1 - s.n; int64(len(p)) > left {
		p = p[:left] // read at most one byte past the maximum
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	switch {
	case s.n > s.max:
		s.err = &Error{Offset: s.max, Err: fmt.Errorf("%w (%d bytes)", ErrTooLarge, s.max)}
		return n, s.err
	case err == io.EOF:
		return n, err
	case err != nil:
		s.err = &Error{Offset: s.n, Err: annotate(s.what, err)}
		return n, s.err
	}
	return n, nil
}

// annotate prefixes err with what failed ("gzip", "zstd", "read") unless
// its text already starts with it, as "gzip: invalid header" does. The
// zstd decoder's own size limits become ErrTooLarge.
func annotate(what string, err error) error {
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
		return fmt.Errorf("%w: %s: %w", ErrTooLarge, what, err)
	}
	if strings.HasPrefix(err.Error(), what+": ") {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}
