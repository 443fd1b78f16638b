package xdr_test

// BenchmarkXDR compares this package and its generated code with two
// reflection-based libraries in one run. Names are key=value so benchstat
// can pivot on impl:
//
//	go test -run=^$ -bench=BenchmarkXDR -benchmem -benchtime=200ms ./xdr/
//
// Every case encodes or decodes the same bytes in each impl; TestBaselines
// checks that. "Reuse" means the output buffer (encode) or the target
// value (decode) is reused across iterations, for every impl.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	dave "github.com/davecgh/go-xdr/xdr2"
	stellar "github.com/stellar/go-xdr/xdr3"

	"github.com/wirehouse/wirehouse/xdr"
)

func BenchmarkXDR(b *testing.B) {
	benchPrimitives(b)
	benchStrings(b)
	benchBytes(b)
	benchRoundTrip(b)
	benchStructs(b)
	benchUnions(b)
}

// run registers one benchmark; bytes is the encoded size for MB/s.
func run(b *testing.B, name string, n int, f func(b *testing.B)) {
	b.Run(name, func(b *testing.B) {
		b.SetBytes(int64(n))
		b.ReportAllocs()
		f(b)
	})
}

var sinkU32 uint32
var sinkU64 uint64
var sinkBool bool
var sinkBytes []byte
var sinkString string

// Primitive benchmarks stream values through a 4 KiB buffer, resetting it
// when full, so they measure the per-value cost rather than per-call setup.
// The wirehouse loops use b.N rather than b.Loop, whose keep-alive of every
// loop variable would add stack traffic larger than the codec call.
const primBuf = 4096

func benchPrimitives(b *testing.B) {
	// The wirehouse loops are separate functions so that the compiler's
	// inlining budget for big functions does not apply to them.
	in := make([]byte, primBuf)
	for i := 3; i < len(in); i += 4 {
		in[i] = 1 // every word is 1, a valid bool too
	}
	run(b, "op=encode_uint32/impl=wirehouse", 4, bench_encode_uint32)
	run(b, "op=encode_int32/impl=wirehouse", 4, bench_encode_int32)
	run(b, "op=encode_uint64/impl=wirehouse", 8, bench_encode_uint64)
	run(b, "op=encode_int64/impl=wirehouse", 8, bench_encode_int64)
	run(b, "op=encode_bool/impl=wirehouse", 4, bench_encode_bool)
	run(b, "op=decode_uint32/impl=wirehouse", 4, func(b *testing.B) { bench_decode_uint32(b, in) })
	run(b, "op=decode_int32/impl=wirehouse", 4, func(b *testing.B) { bench_decode_int32(b, in) })
	run(b, "op=decode_uint64/impl=wirehouse", 8, func(b *testing.B) { bench_decode_uint64(b, in) })
	run(b, "op=decode_int64/impl=wirehouse", 8, func(b *testing.B) { bench_decode_int64(b, in) })
	run(b, "op=decode_bool/impl=wirehouse", 4, func(b *testing.B) { bench_decode_bool(b, in) })

	// Baselines: the same streaming through their io.Writer / io.Reader
	// encoders over a reused bytes.Buffer / bytes.Reader.
	var out bytes.Buffer
	out.Grow(primBuf)
	de, se := dave.NewEncoder(&out), stellar.NewEncoder(&out)
	encs := []struct {
		name       string
		size       int
		dave, stel func() error
	}{
		{"uint32", 4, func() error { _, err := de.EncodeUint(0xdeadbeef); return err }, func() error { _, err := se.EncodeUint(0xdeadbeef); return err }},
		{"int32", 4, func() error { _, err := de.EncodeInt(-12345); return err }, func() error { _, err := se.EncodeInt(-12345); return err }},
		{"uint64", 8, func() error { _, err := de.EncodeUhyper(1<<60 + 5); return err }, func() error { _, err := se.EncodeUhyper(1<<60 + 5); return err }},
		{"int64", 8, func() error { _, err := de.EncodeHyper(-1 << 60); return err }, func() error { _, err := se.EncodeHyper(-1 << 60); return err }},
		{"bool", 4, func() error { _, err := de.EncodeBool(true); return err }, func() error { _, err := se.EncodeBool(true); return err }},
	}
	for _, p := range encs {
		for _, impl := range []string{"davecgh", "stellar"} {
			f := p.dave
			if impl == "stellar" {
				f = p.stel
			}
			run(b, "op=encode_"+p.name+"/impl="+impl, p.size, func(b *testing.B) {
				for range b.N {
					if out.Len() > primBuf-8 {
						out.Reset()
					}
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	r := bytes.NewReader(in)
	dd, sd := dave.NewDecoder(r), stellar.NewDecoder(r)
	decs := []struct {
		name       string
		size       int
		dave, stel func() error
	}{
		{"uint32", 4, func() (err error) { sinkU32, _, err = dd.DecodeUint(); return }, func() (err error) { sinkU32, _, err = sd.DecodeUint(); return }},
		{"int32", 4, func() error { v, _, err := dd.DecodeInt(); sinkU32 = uint32(v); return err }, func() error { v, _, err := sd.DecodeInt(); sinkU32 = uint32(v); return err }},
		{"uint64", 8, func() (err error) { sinkU64, _, err = dd.DecodeUhyper(); return }, func() (err error) { sinkU64, _, err = sd.DecodeUhyper(); return }},
		{"int64", 8, func() error { v, _, err := dd.DecodeHyper(); sinkU64 = uint64(v); return err }, func() error { v, _, err := sd.DecodeHyper(); sinkU64 = uint64(v); return err }},
		{"bool", 4, func() (err error) { sinkBool, _, err = dd.DecodeBool(); return }, func() (err error) { sinkBool, _, err = sd.DecodeBool(); return }},
	}
	for _, p := range decs {
		for _, impl := range []string{"davecgh", "stellar"} {
			f := p.dave
			if impl == "stellar" {
				f = p.stel
			}
			run(b, "op=decode_"+p.name+"/impl="+impl, p.size, func(b *testing.B) {
				for range b.N {
					if r.Len() < 8 {
						r.Reset(in)
					}
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func bench_encode_uint32(b *testing.B) {
	buf := make([]byte, 0, primBuf)
	for range b.N {
		if len(buf) > primBuf-8 {
			buf = buf[:0]
		}
		buf = xdr.AppendUint32(buf, 0xdeadbeef)
	}
	sinkBytes = buf
}

func bench_encode_int32(b *testing.B) {
	buf := make([]byte, 0, primBuf)
	for range b.N {
		if len(buf) > primBuf-8 {
			buf = buf[:0]
		}
		buf = xdr.AppendInt32(buf, -12345)
	}
	sinkBytes = buf
}

func bench_encode_uint64(b *testing.B) {
	buf := make([]byte, 0, primBuf)
	for range b.N {
		if len(buf) > primBuf-8 {
			buf = buf[:0]
		}
		buf = xdr.AppendUint64(buf, 1<<60+5)
	}
	sinkBytes = buf
}

func bench_encode_int64(b *testing.B) {
	buf := make([]byte, 0, primBuf)
	for range b.N {
		if len(buf) > primBuf-8 {
			buf = buf[:0]
		}
		buf = xdr.AppendInt64(buf, -1<<60)
	}
	sinkBytes = buf
}

func bench_encode_bool(b *testing.B) {
	buf := make([]byte, 0, primBuf)
	for range b.N {
		if len(buf) > primBuf-8 {
			buf = buf[:0]
		}
		buf = xdr.AppendBool(buf, true)
	}
	sinkBytes = buf
}

func bench_decode_uint32(b *testing.B, in []byte) {
	var d xdr.Decoder // a local, so its fields can live in registers
	d.Reset(in)
	var sum uint32
	for range b.N {
		if d.Remaining() < 8 {
			d.Reset(in)
		}
		v, err := d.DecodeUint32()
		if err != nil {
			b.Fatal(err)
		}
		sum += v
	}
	sinkU32 = sum
}

func bench_decode_int32(b *testing.B, in []byte) {
	var d xdr.Decoder // a local, so its fields can live in registers
	d.Reset(in)
	var sum int32
	for range b.N {
		if d.Remaining() < 8 {
			d.Reset(in)
		}
		v, err := d.DecodeInt32()
		if err != nil {
			b.Fatal(err)
		}
		sum += v
	}
	sinkU32 = uint32(sum)
}

func bench_decode_uint64(b *testing.B, in []byte) {
	var d xdr.Decoder // a local, so its fields can live in registers
	d.Reset(in)
	var sum uint64
	for range b.N {
		if d.Remaining() < 8 {
			d.Reset(in)
		}
		v, err := d.DecodeUint64()
		if err != nil {
			b.Fatal(err)
		}
		sum += v
	}
	sinkU64 = sum
}

func bench_decode_int64(b *testing.B, in []byte) {
	var d xdr.Decoder // a local, so its fields can live in registers
	d.Reset(in)
	var sum int64
	for range b.N {
		if d.Remaining() < 8 {
			d.Reset(in)
		}
		v, err := d.DecodeInt64()
		if err != nil {
			b.Fatal(err)
		}
		sum += v
	}
	sinkU64 = uint64(sum)
}

func bench_decode_bool(b *testing.B, in []byte) {
	var d xdr.Decoder // a local, so its fields can live in registers
	d.Reset(in)
	n := 0
	for range b.N {
		if d.Remaining() < 8 {
			d.Reset(in)
		}
		v, err := d.DecodeBool()
		if err != nil {
			b.Fatal(err)
		}
		if v {
			n++
		}
	}
	sinkBool = n > 0
}

func benchStrings(b *testing.B) {
	buf := make([]byte, 0, 512)
	var out bytes.Buffer
	de, se := dave.NewEncoder(&out), stellar.NewEncoder(&out)
	for _, n := range []int{0, 1, 5, 11, 64, 235} {
		s := string(bytes.Repeat([]byte("x"), n))
		in := must(xdr.AppendString(nil, s, xdr.Unbounded))
		size := len(in)
		pre := fmt.Sprintf("/len=%d/impl=", n)
		run(b, "op=encode_string"+pre+"wirehouse", size, func(b *testing.B) {
			for b.Loop() {
				buf, _ = xdr.AppendString(buf[:0], s, xdr.Unbounded)
			}
		})
		run(b, "op=encode_string"+pre+"davecgh", size, func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				de.EncodeString(s)
			}
		})
		run(b, "op=encode_string"+pre+"stellar", size, func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				se.EncodeString(s)
			}
		})
		var d xdr.Decoder
		run(b, "op=decode_string"+pre+"wirehouse", size, func(b *testing.B) {
			for b.Loop() {
				d.Reset(in)
				sinkString, _ = d.DecodeString(xdr.Unbounded)
			}
		})
		run(b, "op=decode_string_view"+pre+"wirehouse", size, func(b *testing.B) {
			for b.Loop() {
				d.Reset(in)
				sinkBytes, _ = d.DecodeStringView(xdr.Unbounded)
			}
		})
		r := bytes.NewReader(in)
		dd, sd := dave.NewDecoder(r), stellar.NewDecoder(r)
		run(b, "op=decode_string"+pre+"davecgh", size, func(b *testing.B) {
			for b.Loop() {
				r.Reset(in)
				sinkString, _, _ = dd.DecodeString()
			}
		})
		run(b, "op=decode_string"+pre+"stellar", size, func(b *testing.B) {
			for b.Loop() {
				r.Reset(in)
				sinkString, _, _ = sd.DecodeString(0)
			}
		})
	}
}

var pad [3]byte

func benchBytes(b *testing.B) {
	buf := make([]byte, 0, 20<<10)
	var out bytes.Buffer
	out.Grow(20 << 10)
	de, se := dave.NewEncoder(&out), stellar.NewEncoder(&out)
	for _, n := range []int{1, 4, 16, 64, 256, 1024, 4 << 10, 16 << 10} {
		data := bytes.Repeat([]byte{0xab}, n)
		dst := make([]byte, n)
		for _, fixed := range []bool{false, true} {
			kind, in := "opaque", must(xdr.AppendOpaque(nil, data, xdr.Unbounded))
			if fixed {
				kind, in = "fixed_opaque", xdr.AppendFixedOpaque(nil, data)
			}
			size := len(in)
			pre := fmt.Sprintf("/size=%d/impl=", n)
			run(b, "op=encode_"+kind+pre+"wirehouse", size, func(b *testing.B) {
				for b.Loop() {
					if fixed {
						buf = xdr.AppendFixedOpaque(buf[:0], data)
					} else {
						buf, _ = xdr.AppendOpaque(buf[:0], data, xdr.Unbounded)
					}
				}
			})
			if !fixed {
				// What encoding costs without XDR: the length and the
				// bytes copied into a reused buffer (seed 004's native
				// copy), and the same through a bytes.Buffer.
				run(b, "op=encode_"+kind+pre+"native-copy", size, func(b *testing.B) {
					for b.Loop() {
						buf = binary.BigEndian.AppendUint32(buf[:0], uint32(len(data)))
						buf = append(buf, data...)
						buf = append(buf, pad[:(4-n%4)%4]...)
					}
				})
				var bb bytes.Buffer
				bb.Grow(size)
				run(b, "op=encode_"+kind+pre+"bytes.Buffer", size, func(b *testing.B) {
					var lb [4]byte
					for b.Loop() {
						bb.Reset()
						binary.BigEndian.PutUint32(lb[:], uint32(len(data)))
						bb.Write(lb[:])
						bb.Write(data)
						bb.Write(pad[:(4-n%4)%4])
					}
				})
			}
			run(b, "op=encode_"+kind+pre+"davecgh", size, func(b *testing.B) {
				for b.Loop() {
					out.Reset()
					if fixed {
						de.EncodeFixedOpaque(data)
					} else {
						de.EncodeOpaque(data)
					}
				}
			})
			run(b, "op=encode_"+kind+pre+"stellar", size, func(b *testing.B) {
				for b.Loop() {
					out.Reset()
					if fixed {
						se.EncodeFixedOpaque(data)
					} else {
						se.EncodeOpaque(data)
					}
				}
			})
			var d xdr.Decoder
			run(b, "op=decode_"+kind+pre+"wirehouse", size, func(b *testing.B) {
				for b.Loop() {
					d.Reset(in)
					if fixed {
						sinkBytes, _ = d.DecodeFixedOpaque(n)
					} else {
						sinkBytes, _ = d.DecodeOpaque(xdr.Unbounded)
					}
				}
			})
			// The view above aliases the input; the baselines return
			// copies. impl=wirehouse-copy copies the view into a new
			// slice, the same work as theirs.
			run(b, "op=decode_"+kind+pre+"wirehouse-copy", size, func(b *testing.B) {
				for b.Loop() {
					d.Reset(in)
					var v []byte
					if fixed {
						v, _ = d.DecodeFixedOpaque(n)
					} else {
						v, _ = d.DecodeOpaque(xdr.Unbounded)
					}
					sinkBytes = append([]byte(nil), v...)
				}
			})
			r := bytes.NewReader(in)
			dd, sd := dave.NewDecoder(r), stellar.NewDecoder(r)
			run(b, "op=decode_"+kind+pre+"davecgh", size, func(b *testing.B) {
				for b.Loop() {
					r.Reset(in)
					if fixed {
						sinkBytes, _, _ = dd.DecodeFixedOpaque(int32(n))
					} else {
						sinkBytes, _, _ = dd.DecodeOpaque()
					}
				}
			})
			run(b, "op=decode_"+kind+pre+"stellar", size, func(b *testing.B) {
				for b.Loop() {
					r.Reset(in)
					if fixed {
						sinkBytes, _, _ = sd.DecodeFixedOpaque(int32(n))
					} else {
						sinkBytes, _, _ = sd.DecodeOpaque(0)
					}
				}
			})
			if fixed {
				run(b, "op=decode_fixed_into"+pre+"wirehouse", size, func(b *testing.B) {
					for b.Loop() {
						d.Reset(in)
						if err := d.DecodeFixedBytesInto(dst); err != nil {
							b.Fatal(err)
						}
					}
				})
				run(b, "op=decode_fixed_into"+pre+"stellar", size, func(b *testing.B) {
					for b.Loop() {
						r.Reset(in)
						if _, err := sd.DecodeFixedOpaqueInplace(dst); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

func benchRoundTrip(b *testing.B) {
	buf := make([]byte, 0, 2048)
	var d xdr.Decoder
	var out bytes.Buffer
	r := bytes.NewReader(nil)
	de, se := dave.NewEncoder(&out), stellar.NewEncoder(&out)
	dd, sd := dave.NewDecoder(r), stellar.NewDecoder(r)
	kb := bytes.Repeat([]byte{7}, 1024)
	run(b, "op=roundtrip_uint32/impl=wirehouse", 4, func(b *testing.B) {
		for b.Loop() {
			buf = xdr.AppendUint32(buf[:0], 42)
			d.Reset(buf)
			sinkU32, _ = d.DecodeUint32()
		}
	})
	run(b, "op=roundtrip_string/impl=wirehouse", 16, func(b *testing.B) {
		for b.Loop() {
			buf, _ = xdr.AppendString(buf[:0], "hello, world", 64)
			d.Reset(buf)
			sinkString, _ = d.DecodeString(64)
		}
	})
	run(b, "op=roundtrip_bytes_1k/impl=wirehouse", 1028, func(b *testing.B) {
		for b.Loop() {
			buf, _ = xdr.AppendOpaque(buf[:0], kb, 2048)
			d.Reset(buf)
			sinkBytes, _ = d.DecodeOpaque(2048)
		}
	})
	// The row above decodes a view; the baselines decode copies.
	run(b, "op=roundtrip_bytes_1k/impl=wirehouse-copy", 1028, func(b *testing.B) {
		for b.Loop() {
			buf, _ = xdr.AppendOpaque(buf[:0], kb, 2048)
			d.Reset(buf)
			v, _ := d.DecodeOpaque(2048)
			sinkBytes = append([]byte(nil), v...)
		}
	})
	// Decoder reuse against a new Decoder per message (seed 004's "reuse
	// vs new"): a string and a uint32 decoded from the same input.
	msg := xdr.AppendUint32(must(xdr.AppendString(nil, "hello, world", 64)), 42)
	run(b, "op=decoder_reuse/impl=wirehouse", len(msg), func(b *testing.B) {
		for b.Loop() {
			d.Reset(msg)
			sinkString, _ = d.DecodeString(64)
			sinkU32, _ = d.DecodeUint32()
		}
	})
	run(b, "op=decoder_new/impl=wirehouse", len(msg), func(b *testing.B) {
		for b.Loop() {
			nd := xdr.NewDecoder(msg)
			sinkString, _ = nd.DecodeString(64)
			sinkU32, _ = nd.DecodeUint32()
		}
	})
	for impl, e := range map[string]interface {
		EncodeUint(uint32) (int, error)
		EncodeString(string) (int, error)
		EncodeOpaque([]byte) (int, error)
	}{"davecgh": de, "stellar": se} {
		decU := func() { sinkU32, _, _ = dd.DecodeUint() }
		decS := func() { sinkString, _, _ = dd.DecodeString() }
		decB := func() { sinkBytes, _, _ = dd.DecodeOpaque() }
		if impl == "stellar" {
			decU = func() { sinkU32, _, _ = sd.DecodeUint() }
			decS = func() { sinkString, _, _ = sd.DecodeString(64) }
			decB = func() { sinkBytes, _, _ = sd.DecodeOpaque(2048) }
		}
		run(b, "op=roundtrip_uint32/impl="+impl, 4, func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				e.EncodeUint(42)
				r.Reset(out.Bytes())
				decU()
			}
		})
		run(b, "op=roundtrip_string/impl="+impl, 16, func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				e.EncodeString("hello, world")
				r.Reset(out.Bytes())
				decS()
			}
		})
		run(b, "op=roundtrip_bytes_1k/impl="+impl, 1028, func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				e.EncodeOpaque(kb)
				r.Reset(out.Bytes())
				decB()
			}
		})
	}
}
