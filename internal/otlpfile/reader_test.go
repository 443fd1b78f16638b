package otlpfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestReadFormats(t *testing.T) {
	dir := t.TempDir()
	l0, l1, l2 := logsReq(0, 10), logsReq(1, 20), logsReq(2, 5)
	t0 := tracesReq(0, 7)
	jl0, jl1 := toJSON(t, otlpwire.SignalLogs, l0), toJSON(t, otlpwire.SignalLogs, l1)
	pl0, pl1 := pdataProto(t, otlpwire.SignalLogs, l0), pdataProto(t, otlpwire.SignalLogs, l1)
	var pretty bytes.Buffer
	pretty.WriteString("\n  ")
	if err := indentJSON(&pretty, jl0); err != nil {
		t.Fatal(err)
	}
	pretty.WriteString("\n")
	jsonLines := append(append(append(append([]byte{}, jl0...), '\n'), jl1...), '\n')
	d := delimited(l0, l1, l2)
	tests := []struct {
		name string
		sig  otlpwire.Signal
		file []byte
		want [][]byte
		offs []int64
	}{
		{"raw.binpb", otlpwire.SignalLogs, l0, [][]byte{l0}, []int64{0}},
		{"raw.pb", otlpwire.SignalTraces, t0, [][]byte{t0}, []int64{0}},
		{"delim.pb", otlpwire.SignalLogs, d, [][]byte{l0, l1, l2}, []int64{4, int64(8 + len(l0)), int64(12 + len(l0) + len(l1))}},
		{"raw.binpb.gz", otlpwire.SignalLogs, gzipped(t, l1), [][]byte{l1}, []int64{0}},
		{"delim.binpb.gz", otlpwire.SignalLogs, gzipped(t, d), [][]byte{l0, l1, l2}, nil},
		{"raw.binpb.zst", otlpwire.SignalTraces, zstded(t, t0), [][]byte{t0}, []int64{0}},
		{"delim.pb.zst", otlpwire.SignalLogs, zstded(t, d), [][]byte{l0, l1, l2}, nil},
		{"upper.BINPB.GZ", otlpwire.SignalLogs, gzipped(t, l2), [][]byte{l2}, nil},
		{"lines.json", otlpwire.SignalLogs, jsonLines, [][]byte{pl0, pl1}, []int64{0, int64(len(jl0) + 1)}},
		{"pretty.json", otlpwire.SignalLogs, pretty.Bytes(), [][]byte{pl0}, []int64{3}},
		{"lines.json.gz", otlpwire.SignalLogs, gzipped(t, jsonLines), [][]byte{pl0, pl1}, nil},
		{"lines.json.zst", otlpwire.SignalLogs, zstded(t, jsonLines), [][]byte{pl0, pl1}, nil},
		{"traces.json", otlpwire.SignalTraces, toJSON(t, otlpwire.SignalTraces, t0), [][]byte{pdataProto(t, otlpwire.SignalTraces, t0)}, []int64{0}},
		{"empty.binpb", otlpwire.SignalLogs, nil, nil, nil},
		{"empty.json.gz", otlpwire.SignalLogs, gzipped(t, []byte("\n\n")), nil, nil},
		{"empty-request.pb", otlpwire.SignalLogs, delimited(nil), [][]byte{{}}, []int64{4}},
		// The Collector file exporter with compression: zstd compresses
		// each message inside the length-delimited stream.
		{"exporter-zstd.pb", otlpwire.SignalLogs, delimited(zstded(t, l0), l1, zstded(t, l2)), [][]byte{l0, l1, l2}, []int64{4, int64(8 + len(zstded(t, l0))), int64(12 + len(zstded(t, l0)) + len(l1))}},
		{"exporter-zstd.json", otlpwire.SignalLogs, delimited(zstded(t, jl0), zstded(t, jl1)), [][]byte{pl0, pl1}, []int64{4, int64(8 + len(zstded(t, jl0)))}},
	}
	readers := map[otlpwire.Signal]*Reader{otlpwire.SignalLogs: newReader(t, otlpwire.SignalLogs), otlpwire.SignalTraces: newReader(t, otlpwire.SignalTraces)}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := input(t, writeFile(t, dir, tc.name, tc.file))
			f, err := readers[tc.sig].ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Requests) != len(tc.want) || len(f.Offsets) != len(tc.want) {
				t.Fatalf("%d requests, %d offsets; want %d", len(f.Requests), len(f.Offsets), len(tc.want))
			}
			var proto int64
			for i := range tc.want {
				if !bytes.Equal(f.Requests[i], tc.want[i]) {
					t.Errorf("request %d: %d bytes, differ from the %d written", i, len(f.Requests[i]), len(tc.want[i]))
				}
				if tc.offs != nil && f.Offsets[i] != tc.offs[i] {
					t.Errorf("request %d: offset %d, want %d", i, f.Offsets[i], tc.offs[i])
				}
				proto += int64(len(tc.want[i]))
			}
			if f.DiskBytes != int64(len(tc.file)) || f.ProtoBytes != proto || f.Path != in.Path {
				t.Errorf("DiskBytes %d ProtoBytes %d Path %s; want %d, %d, %s", f.DiskBytes, f.ProtoBytes, f.Path, len(tc.file), proto, in.Path)
			}
			if in.Compression == CompressionNone && f.ContentBytes != f.DiskBytes {
				t.Errorf("ContentBytes %d, DiskBytes %d", f.ContentBytes, f.DiskBytes)
			}
		})
	}
}

// TestReadReuse reads a large file, then smaller ones, and checks that the
// buffer is reused and stale bytes of the earlier file never show.
func TestReadReuse(t *testing.T) {
	dir := t.TempDir()
	r := newReader(t, otlpwire.SignalLogs)
	big, small := logsReq(1, 2000), logsReq(2, 3)
	if _, err := r.ReadFile(input(t, writeFile(t, dir, "big.binpb.zst", zstded(t, delimited(big, big))))); err != nil {
		t.Fatal(err)
	}
	c := cap(r.buf)
	if c < 2*len(big) {
		t.Fatalf("buffer cap %d after a %d-byte file", c, 2*len(big)+8)
	}
	for _, name := range []string{"small.binpb", "small.binpb.gz", "small.binpb.zst"} {
		t.Run(name, func(t *testing.T) {
			b := small
			switch filepath.Ext(name) {
			case ".gz":
				b = gzipped(t, small)
			case ".zst":
				b = zstded(t, small)
			}
			f, err := r.ReadFile(input(t, writeFile(t, dir, name, b)))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Requests) != 1 || !bytes.Equal(f.Requests[0], small) || f.ContentBytes != int64(len(small)) {
				t.Fatalf("%d requests, content %d bytes; want the %d-byte request", len(f.Requests), f.ContentBytes, len(small))
			}
			if cap(f.Requests[0]) != len(small) {
				t.Errorf("request capacity %d not capped at %d", cap(f.Requests[0]), len(small))
			}
			if cap(r.buf) != c {
				t.Errorf("buffer reallocated: cap %d, was %d", cap(r.buf), c)
			}
		})
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := r.ReadFile(input(t, filepath.Join(dir, "small.binpb.zst"))); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.0f allocations per small zstd file (including Collect)", allocs)
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	l0, l1 := logsReq(0, 10), logsReq(1, 10)
	d := delimited(l0, l1)
	gz := gzipped(t, d)
	zs := zstded(t, d)
	jl := toJSON(t, otlpwire.SignalLogs, l0)
	lines := append(append([]byte{}, jl...), '\n')
	badLen := append(delimited(l0), 0, 0, 0x10, 0, 1, 2, 3) // claims 4096 bytes, 3 follow
	tests := []struct {
		name    string
		sig     otlpwire.Signal
		file    []byte
		is      error  // want errors.Is
		text    string // want in the message
		off     int64
		nreqs   int // requests before the failure
		maxSize int64
	}{
		{"bad-length.pb", otlpwire.SignalLogs, badLen, ErrLengthPrefix, "length 4096, only 3 bytes follow", int64(4 + len(l0)), 1, 0},
		{"short-prefix.pb", otlpwire.SignalLogs, append(delimited(l0), 0, 0), ErrLengthPrefix, "2 bytes left", int64(4 + len(l0)), 1, 0},
		{"cut-delimited.pb", otlpwire.SignalLogs, d[:len(d)-5], ErrLengthPrefix, "only", int64(4 + len(l0)), 1, 0},
		{"truncated.binpb.gz", otlpwire.SignalLogs, gz[:len(gz)/2], nil, "gzip: unexpected EOF", -2, 0, 0},
		{"corrupt.binpb.gz", otlpwire.SignalLogs, flip(gz, 20), nil, "gzip: ", -2, 0, 0},
		{"not-gzip.binpb.gz", otlpwire.SignalLogs, d, nil, "gzip: ", 0, 0, 0},
		{"truncated.binpb.zst", otlpwire.SignalLogs, zs[:len(zs)/2], nil, "zstd: ", -2, 0, 0},
		{"not-zstd.binpb.zst", otlpwire.SignalLogs, d, nil, "zstd: ", -2, 0, 0},
		{"syntax.json", otlpwire.SignalLogs, append(append([]byte{}, lines...), `{"resourceLogs": x}`...), nil, "json: invalid character 'x'", int64(len(lines) + 18), 1, 0},
		{"cut.json", otlpwire.SignalLogs, append(append([]byte{}, lines...), jl[:len(jl)/2]...), nil, "json: unexpected EOF", int64(len(jl)), 1, 0}, // the end of the document before
		{"bad-otlp.json", otlpwire.SignalLogs, append(append([]byte{}, lines...), ` {"resourceLogs": 5}`...), nil, "otlp/json logs", int64(len(lines) + 1), 1, 0},
		{"wrong-signal.json", otlpwire.SignalLogs, append(append([]byte{}, lines...), toJSON(t, otlpwire.SignalTraces, tracesReq(0, 3))...), ErrWrongSignal, "holds resourceSpans, not logs", int64(len(lines)), 1, 0},
		{"wrong-signal-traces.json", otlpwire.SignalTraces, jl, ErrWrongSignal, "holds resourceLogs, not traces", 0, 0, 0},
		{"large.binpb", otlpwire.SignalLogs, d, ErrTooLarge, "larger than the maximum", 1000, 0, 1000},
		{"large.json.zst", otlpwire.SignalLogs, zstded(t, lines), ErrTooLarge, "larger than the maximum", -2, 0, 1000}, // refused by its frame header
		{"bad-zstd-message.pb", otlpwire.SignalLogs, delimited(l0, append(append([]byte{}, zstdMagic...), 1, 2, 3)), nil, "zstd: ", int64(8 + len(l0)), 2, 0},
		{"large-zstd-messages.pb", otlpwire.SignalLogs, delimited(zstded(t, l0), zstded(t, l1)), ErrTooLarge, "larger than the maximum", -2, 2, int64(len(l0) + 10)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var max []int64
			if tc.maxSize > 0 {
				max = append(max, tc.maxSize)
			}
			r := newReader(t, tc.sig, max...)
			path := writeFile(t, dir, tc.name, tc.file)
			f, err := r.ReadFile(input(t, path))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want an *Error", err, err)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tc.is)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.text) || !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("err = %q, want the path and %q", err, tc.text)
			}
			switch {
			case tc.off >= 0 && e.Offset != tc.off:
				t.Errorf("offset %d, want %d (%v)", e.Offset, tc.off, err)
			case tc.off == -2 && (e.Offset < 0 || e.Offset > int64(len(d))):
				t.Errorf("offset %d outside the %d-byte content (%v)", e.Offset, len(d), err)
			}
			if len(f.Requests) != tc.nreqs {
				t.Errorf("%d requests before the error, want %d", len(f.Requests), tc.nreqs)
			}
			if tc.maxSize > 0 && cap(r.buf) > int(2*tc.maxSize+2) {
				t.Errorf("buffer grew to %d bytes with a maximum of %d", cap(r.buf), tc.maxSize)
			}
			if tc.maxSize > 0 {
				return
			}
			// The Reader stays usable.
			good := writeFile(t, dir, "good-"+tc.name+".binpb", l1)
			if f, err := r.ReadFile(input(t, good)); err != nil || len(f.Requests) != 1 || !bytes.Equal(f.Requests[0], l1) {
				t.Fatalf("next file: %d requests, %v", len(f.Requests), err)
			}
		})
	}
}

// TestReadBomb reads a small gzip file that decompresses to far more than
// the maximum: it must stop at the maximum.
func TestReadBomb(t *testing.T) {
	const limit = 1 << 20
	dir := t.TempDir()
	zeros := make([]byte, 16<<20)
	spaces := bytes.Repeat([]byte{' '}, 16<<20) // JSON whitespace
	for _, name := range []string{"bomb.binpb.gz", "bomb.binpb.zst", "bomb.json.gz"} {
		t.Run(name, func(t *testing.T) {
			var b []byte
			switch name {
			case "bomb.binpb.gz":
				b = gzipped(t, zeros)
			case "bomb.binpb.zst":
				b = zstded(t, zeros)
			default:
				b = gzipped(t, spaces)
			}
			r := newReader(t, otlpwire.SignalLogs, limit)
			f, err := r.ReadFile(input(t, writeFile(t, dir, name, b)))
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("%d bytes: err = %v, want ErrTooLarge", len(b), err)
			}
			if f.ContentBytes > limit+1 || cap(r.buf) > 2*limit+2 {
				t.Errorf("read %d bytes into a %d-byte buffer, limit %d", f.ContentBytes, cap(r.buf), limit)
			}
		})
	}
}

func TestReadMissing(t *testing.T) {
	r := newReader(t, otlpwire.SignalLogs)
	path := filepath.Join(t.TempDir(), "gone.binpb")
	_, err := r.ReadFile(Input{Path: path, Format: FormatProto})
	var e *Error
	if !errors.As(err, &e) || e.Offset != -1 || !errors.Is(err, os.ErrNotExist) || e.Path != path {
		t.Fatalf("err = %v, want an *Error with no offset wrapping ErrNotExist", err)
	}
}

// TestReadCounts checks that the records of what is read match those of
// what was written, for every protobuf and JSON variant of one request.
func TestReadCounts(t *testing.T) {
	dir := t.TempDir()
	req := tracesReq(5, 321)
	want, err := otlpwire.TracesRequest(req).SpanCount()
	if err != nil {
		t.Fatal(err)
	}
	js := toJSON(t, otlpwire.SignalTraces, req)
	files := map[string][]byte{
		"a.binpb": req, "b.pb.gz": gzipped(t, delimited(req)), "c.json.zst": zstded(t, js), "d.json": js,
	}
	r := newReader(t, otlpwire.SignalTraces)
	for name, b := range files {
		t.Run(name, func(t *testing.T) {
			f, err := r.ReadFile(input(t, writeFile(t, dir, name, b)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := otlpwire.TracesRequest(f.Requests[0]).SpanCount()
			if err != nil || got != want || len(f.Requests) != 1 {
				t.Errorf("%d requests, %d spans, %v; want 1 request of %d spans", len(f.Requests), got, err, want)
			}
			if err := otlpwire.TracesRequest(f.Requests[0]).Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestNewReaderOptions(t *testing.T) {
	if _, err := NewReader(Config{Signal: otlpwire.SignalLogs}); err == nil || !strings.Contains(err.Error(), "MaxFileSize") {
		t.Errorf("MaxFileSize 0: %v", err)
	}
	if _, err := NewReader(Config{Signal: 9, MaxFileSize: 1}); err == nil || !strings.Contains(err.Error(), "Signal") {
		t.Errorf("signal 9: %v", err)
	}
}

// flip returns b with byte i inverted.
func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 0xff
	return c
}
