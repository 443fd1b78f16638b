package xdr

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecoder drives the Decoder over hostile data with a fuzzed sequence
// of operations. It checks that nothing panics, that every error is an
// *Error wrapping a sentinel, that every accepted item re-encodes to
// exactly the bytes it consumed, and that decoding allocates nothing but
// the error value.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, unhexF("ffffffff0000000100000000000000020000000000000003"))
	f.Add([]byte{8, 9, 0x3a, 0x2b}, unhexF("0000000568656c6c6f000000"))
	f.Add([]byte{10, 11}, unhexF("7fffffff"))
	f.Add([]byte{4}, unhexF("00000002"))
	f.Fuzz(func(t *testing.T, ops, data []byte) {
		if len(ops) == 0 || len(ops) > 64 {
			return
		}
		d := NewDecoder(data)
		var fixed [16]byte
		var out []byte
		var err error
		// Several runs, because AllocsPerRun counts process-wide and the
		// fuzzing engine's own goroutines allocate now and then.
		allocs := testing.AllocsPerRun(4, func() {
			err = nil
			d.Reset(data)
			out = out[:0]
			for i := 0; err == nil && d.Remaining() > 0; i++ {
				op := ops[i%len(ops)]
				max := uint32(op >> 4 * 3) // 0..45
				start := d.Offset()
				err = step(d, op, max, fixed[:1+op>>4])
				if err == nil {
					if d.Offset() <= start {
						t.Fatalf("op %d consumed nothing", op%12)
					}
					out = append(out, data[start:d.Offset()]...)
				}
			}
		})
		if allocs > 1 {
			t.Fatalf("decoding allocated %v times per run", allocs)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(data) {
				t.Fatalf("bad error %#v", err)
			}
			for _, s := range []error{ErrTruncated, ErrPadding, ErrBool, ErrTooLong} {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error %v wraps no sentinel", err)
		}
		// Re-encode item by item and compare with what was consumed.
		d.Reset(data)
		var re []byte
		for i := 0; d.Remaining() > 0; i++ {
			op := ops[i%len(ops)]
			re = reencode(t, d, re, op, uint32(op>>4*3), fixed[:1+op>>4])
		}
		if !bytes.Equal(re, data) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", re, data)
		}
	})
}

// step performs one decoding operation chosen by op.
func step(d *Decoder, op byte, max uint32, fixed []byte) error {
	var err error
	switch op % 12 {
	case 0:
		_, err = d.DecodeInt32()
	case 1:
		_, err = d.DecodeUint32()
	case 2:
		_, err = d.DecodeInt64()
	case 3:
		_, err = d.DecodeUint64()
	case 4:
		_, err = d.DecodeBool()
	case 5:
		_, err = d.DecodeFloat32()
	case 6:
		_, err = d.DecodeFloat64()
	case 7:
		err = d.DecodeFixedBytesInto(fixed)
	case 8:
		_, err = d.DecodeOpaque(max)
	case 9:
		_, err = d.DecodeStringView(max)
	case 10:
		_, err = d.DecodeCount(Unbounded, 4)
	case 11:
		_, err = d.DecodeQuadruple()
	}
	return err
}

// reencode decodes one item (known to be valid) and appends its encoding.
func reencode(t *testing.T, d *Decoder, dst []byte, op byte, max uint32, fixed []byte) []byte {
	must := func(b []byte, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	switch op % 12 {
	case 0:
		v, _ := d.DecodeInt32()
		return AppendInt32(dst, v)
	case 1:
		v, _ := d.DecodeUint32()
		return AppendUint32(dst, v)
	case 2:
		v, _ := d.DecodeInt64()
		return AppendInt64(dst, v)
	case 3:
		v, _ := d.DecodeUint64()
		return AppendUint64(dst, v)
	case 4:
		v, _ := d.DecodeBool()
		return AppendBool(dst, v)
	case 5:
		v, _ := d.DecodeFloat32()
		return AppendFloat32(dst, v)
	case 6:
		v, _ := d.DecodeFloat64()
		return AppendFloat64(dst, v)
	case 7:
		d.DecodeFixedBytesInto(fixed)
		return AppendFixedOpaque(dst, fixed)
	case 8:
		v, _ := d.DecodeOpaque(max)
		return must(AppendOpaque(dst, v, max))
	case 9:
		v, _ := d.DecodeString(max)
		return must(AppendString(dst, v, max))
	case 10:
		n, _ := d.DecodeCount(Unbounded, 4)
		return must(AppendCount(dst, n, Unbounded))
	default:
		v, _ := d.DecodeQuadruple()
		return AppendQuadruple(dst, v)
	}
}

func unhexF(s string) []byte {
	b := make([]byte, len(s)/2)
	for i := range b {
		b[i] = fromHex(s[2*i])<<4 | fromHex(s[2*i+1])
	}
	return b
}

func fromHex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}
