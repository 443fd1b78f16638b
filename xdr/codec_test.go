package xdr

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppendHex checks each Append function against hand-written hex from
// RFC 4506 §4, with a non-empty prefix to prove appending.
func TestAppendHex(t *testing.T) {
	must := func(b []byte, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	q := Quadruple{0x3f, 0xff} // 1.0 in binary128
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"int -1", AppendInt32(nil, -1), "ffffffff"},
		{"int min", AppendInt32(nil, math.MinInt32), "80000000"},
		{"uint", AppendUint32(nil, 0x01020304), "01020304"},
		{"hyper -2", AppendInt64(nil, -2), "fffffffffffffffe"},
		{"uhyper", AppendUint64(nil, 0x0102030405060708), "0102030405060708"},
		{"bool true", AppendBool(nil, true), "00000001"},
		{"bool false", AppendBool(nil, false), "00000000"},
		{"float 1.0", AppendFloat32(nil, 1), "3f800000"},
		{"float -0", AppendFloat32(nil, float32(math.Copysign(0, -1))), "80000000"},
		{"double 1.0", AppendFloat64(nil, 1), "3ff0000000000000"},
		{"quadruple", AppendQuadruple(nil, q), "3fff0000000000000000000000000000"},
		{"fixed opaque 0", AppendFixedOpaque(nil, nil), ""},
		{"fixed opaque 1", AppendFixedOpaque(nil, []byte{0xaa}), "aa000000"},
		{"fixed opaque 3", AppendFixedOpaque(nil, []byte{1, 2, 3}), "01020300"},
		{"fixed opaque 4", AppendFixedOpaque(nil, []byte{1, 2, 3, 4}), "01020304"},
		{"fixed opaque 5", AppendFixedOpaque(nil, []byte{1, 2, 3, 4, 5}), "0102030405000000"},
		{"opaque empty", must(AppendOpaque(nil, nil, 8)), "00000000"},
		{"opaque 2", must(AppendOpaque(nil, []byte{0xde, 0xad}, 8)), "00000002dead0000"},
		{"string empty", must(AppendString(nil, "", 0)), "00000000"},
		{"string 3", must(AppendString(nil, "abc", 3)), "0000000361626300"},
		{"string 4", must(AppendString(nil, "abcd", Unbounded)), "0000000461626364"},
		{"string 5", must(AppendString(nil, "hello", 5)), "0000000568656c6c6f000000"},
		{"count", must(AppendCount(nil, 3, 3)), "00000003"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := unhex(t, c.want)
			if !bytes.Equal(c.got, want) {
				t.Errorf("got %x, want %x", c.got, want)
			}
		})
	}
	// Append extends the caller's buffer in place when it has room.
	buf := make([]byte, 2, 64)
	out := AppendUint32(buf, 7)
	if &out[0] != &buf[0] || !bytes.Equal(out, []byte{0, 0, 0, 0, 0, 7}) {
		t.Errorf("AppendUint32 did not append in place: %x", out)
	}
	for n := 0; n < 10; n++ {
		b, _ := AppendOpaque(nil, make([]byte, n), Unbounded)
		if len(b) != SizeOpaque(n) || len(AppendFixedOpaque(nil, make([]byte, n))) != SizeFixedOpaque(n) {
			t.Errorf("size mismatch for n=%d", n)
		}
	}
}

func TestAppendTooLong(t *testing.T) {
	prefix := []byte{9, 9}
	b, err := AppendString(prefix, "abcd", 3)
	var e *Error
	if !errors.Is(err, ErrTooLong) || !errors.As(err, &e) || e.Offset != 2 || len(b) != 2 {
		t.Fatalf("AppendString over max: %v %v", b, err)
	}
	if _, err := AppendOpaque(nil, []byte{1, 2}, 1); !errors.Is(err, ErrTooLong) {
		t.Fatalf("AppendOpaque over max: %v", err)
	}
	if _, err := AppendCount(nil, 5, 4); !errors.Is(err, ErrTooLong) {
		t.Fatalf("AppendCount over max: %v", err)
	}
	if got := err.Error(); got != "encode string at offset 2: xdr: length exceeds maximum" {
		t.Fatalf("error text %q", got)
	}
}

func TestDecodeHex(t *testing.T) {
	d := NewDecoder(unhex(t, `
		ffffffff 01020304 fffffffffffffffe 0102030405060708
		00000001 00000000 3f800000 3ff0000000000000
		3fff0000000000000000000000000000
		0102030405000000 00000002dead0000 0000000568656c6c6f000000
		00000003 00000001`))
	check := func(name string, got, want any, err error) {
		t.Helper()
		if err != nil || got != want {
			t.Fatalf("%s: got %v, %v; want %v", name, got, err, want)
		}
	}
	i, err := d.DecodeInt32()
	check("int", i, int32(-1), err)
	u, err := d.DecodeUint32()
	check("uint", u, uint32(0x01020304), err)
	h, err := d.DecodeInt64()
	check("hyper", h, int64(-2), err)
	uh, err := d.DecodeUint64()
	check("uhyper", uh, uint64(0x0102030405060708), err)
	bt, err := d.DecodeBool()
	check("true", bt, true, err)
	bf, err := d.DecodeBool()
	check("false", bf, false, err)
	f, err := d.DecodeFloat32()
	check("float", f, float32(1), err)
	f64, err := d.DecodeFloat64()
	check("double", f64, 1.0, err)
	q, err := d.DecodeQuadruple()
	check("quad", q, Quadruple{0x3f, 0xff}, err)
	var fixed [5]byte
	err = d.DecodeFixedBytesInto(fixed[:])
	check("fixed", fixed, [5]byte{1, 2, 3, 4, 5}, err)
	start := d.Offset()
	op, err := d.DecodeOpaque(2)
	check("opaque", string(op), "\xde\xad", err)
	// Zero-copy: the view points into the input.
	if &op[0] != &d.buf[start+4] {
		t.Fatal("DecodeOpaque copied")
	}
	s, err := d.DecodeString(5)
	check("string", s, "hello", err)
	n, err := d.DecodeCount(3, 1)
	check("count", n, 3, err)
	ok, err := d.DecodeOptional()
	check("optional", ok, true, err)
	if d.Remaining() != 0 || d.Done() != nil {
		t.Fatalf("remaining %d", d.Remaining())
	}
}

// TestDecodeStrict checks every rejection with its sentinel and offset.
func TestDecodeStrict(t *testing.T) {
	cases := []struct {
		name string
		in   string
		op   func(d *Decoder) error
		want error
		off  int
	}{
		{"bool 2", "00000002", func(d *Decoder) error { _, err := d.DecodeBool(); return err }, ErrBool, 0},
		{"bool high bit", "80000001", func(d *Decoder) error { _, err := d.DecodeBool(); return err }, ErrBool, 0},
		{"optional 2", "00000002", func(d *Decoder) error { _, err := d.DecodeOptional(); return err }, ErrBool, 0},
		{"short int", "000000", func(d *Decoder) error { _, err := d.DecodeInt32(); return err }, ErrTruncated, 0},
		{"short hyper", "00000000000000", func(d *Decoder) error { _, err := d.DecodeInt64(); return err }, ErrTruncated, 0},
		{"string padding", "0000000161000100", func(d *Decoder) error { _, err := d.DecodeString(8); return err }, ErrPadding, 5},
		{"opaque padding", "00000003616263ff", func(d *Decoder) error { _, err := d.DecodeOpaque(8); return err }, ErrPadding, 7},
		{"fixed padding", "61620001", func(d *Decoder) error { return d.DecodeFixedBytesInto(make([]byte, 2)) }, ErrPadding, 2},
		{"missing padding", "0000000161", func(d *Decoder) error { _, err := d.DecodeString(8); return err }, ErrTruncated, 4},
		{"string too long", "0000000461626364", func(d *Decoder) error { _, err := d.DecodeString(3); return err }, ErrTooLong, 0},
		{"opaque beyond input", "7fffffff", func(d *Decoder) error { _, err := d.DecodeOpaque(Unbounded); return err }, ErrTruncated, 0},
		{"opaque max uint32", "ffffffff", func(d *Decoder) error { _, err := d.DecodeOpaque(Unbounded); return err }, ErrTruncated, 0},
		{"count over max", "00000005", func(d *Decoder) error { _, err := d.DecodeCount(4, 4); return err }, ErrTooLong, 0},
		{"count times huge element", "00000004" + strings.Repeat("00", 64), func(d *Decoder) error { _, err := d.DecodeCount(10, math.MaxInt); return err }, ErrTruncated, 0},
		{"count beyond input", "0000000200000000", func(d *Decoder) error { _, err := d.DecodeCount(10, 4); return err }, ErrTruncated, 0},
		{"trailing", "0000000100", func(d *Decoder) error { d.DecodeInt32(); return d.Done() }, ErrTrailing, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(unhex(t, c.in))
			err := c.op(d)
			var e *Error
			if !errors.Is(err, c.want) || !errors.As(err, &e) || e.Offset != c.off {
				t.Errorf("got %v, want %v at offset %d", err, c.want, c.off)
			}
		})
	}
}

// TestHugeCountNoAlloc: 4 bytes claiming 2^31 elements are rejected
// before any allocation.
func TestHugeCountNoAlloc(t *testing.T) {
	in := []byte{0x80, 0, 0, 0}
	allocs := testing.AllocsPerRun(100, func() {
		d := Decoder{buf: in}
		if _, err := d.DecodeCount(Unbounded, 4); !errors.Is(err, ErrTruncated) {
			t.Fatal(err)
		}
	})
	if allocs > 1 { // the *Error itself
		t.Fatalf("allocs = %v", allocs)
	}
}

func TestDepth(t *testing.T) {
	d := NewDecoder(nil)
	d.SetMaxDepth(3)
	for i := 0; i < 3; i++ {
		if err := d.Enter(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Enter(); !errors.Is(err, ErrDepth) {
		t.Fatalf("got %v", err)
	}
}

func TestZeroAllocPrimitives(t *testing.T) {
	buf := make([]byte, 0, 64)
	in := unhex(t, "0000000568656c6c6f000000")
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendUint32(buf[:0], 1)
		b = AppendUint64(b, 2)
		b, _ = AppendString(b, "hello", 8)
		d := Decoder{buf: in}
		if _, err := d.DecodeStringView(8); err != nil {
			t.Fatal(err)
		}
		_ = b
	})
	if allocs != 0 {
		t.Fatalf("allocs = %v", allocs)
	}
}

type failWriter struct{ n int }

func (f *failWriter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Int32(-1)
	w.Uint32(2)
	w.Int64(3)
	w.Uint64(4)
	w.Bool(true)
	w.Float32(1)
	w.Float64(1)
	w.FixedOpaque([]byte{1})
	w.Opaque([]byte{2}, 1)
	w.String("ab", 2)
	w.Quadruple(Quadruple{0x3f, 0xff})
	w.Count(2, 2)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Written() != int64(out.Len()) {
		t.Fatalf("Written = %d, have %d bytes", w.Written(), out.Len())
	}
	want := unhex(t, `ffffffff 00000002 0000000000000003 0000000000000004 00000001 3f800000
		3ff0000000000000 01000000 0000000102000000 000000026162 0000
		3fff0000000000000000000000000000 00000002`)
	if !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("got %x\nwant %x", out.Bytes(), want)
	}
	// Sticky encode error with a stream offset.
	out.Reset()
	w.Reset(&out)
	w.Count(3, 2)
	if err := w.Flush(); !errors.Is(err, ErrTooLong) || out.Len() != 0 {
		t.Fatalf("count over max: %v, %d bytes written", err, out.Len())
	}
	w.Reset(&out)
	w.Uint32(1)
	w.String("toolong", 3)
	w.Uint32(1)
	var e *Error
	if err := w.Flush(); !errors.Is(err, ErrTooLong) || !errors.As(err, &e) || e.Offset != 4 {
		t.Fatalf("got %v", err)
	}
	// Write errors are sticky too, and large output flushes as it goes.
	w.Reset(&failWriter{n: 40000})
	for i := 0; i < 20000; i++ {
		w.Uint64(uint64(i))
	}
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("got %v", err)
	}
}
