package xdrtest

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"github.com/wirehouse/wirehouse/xdr"
)

// allocSlack bounds what decoding may allocate: allocAmplification bytes
// per input byte plus a constant. The worst case for these types is a
// Tree (40 Go bytes) from 8 wire bytes, a Shape or Bulky (32 Go bytes; arms
// that are structs, unions or fixed arrays are pointers, allocated only
// when selected and backed by their own wire bytes) from 4, then rounded up
// to allocation size classes.
const (
	allocAmplification = 48
	allocSlack         = 16 << 10
)

type codec interface {
	xdr.Marshaler
	xdr.Unmarshaler
	UnmarshalBinary([]byte) error
	MarshalBinary() ([]byte, error)
	SizeXDR() int
}

// checkDecode is the hostile-input property: decoding b never panics,
// allocates at most a bounded multiple of len(b), and when it succeeds the
// value re-encodes to exactly b (encode(decode(b)) == b). Decoding again
// into the same, now populated, value gives the same result.
func checkDecode(t *testing.T, b []byte, fresh func() codec) {
	v := fresh()
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	err := v.UnmarshalBinary(b)
	runtime.ReadMemStats(&ms1)
	if got := ms1.TotalAlloc - ms0.TotalAlloc; got > uint64(allocAmplification*len(b)+allocSlack) {
		t.Fatalf("decoding %d bytes allocated %d bytes", len(b), got)
	}
	if err != nil {
		var e *xdr.Error
		if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
			t.Fatalf("error without valid offset: %v", err)
		}
		return
	}
	out, err := v.MarshalBinary()
	if err != nil {
		t.Fatalf("re-encode accepted value: %v", err)
	}
	if v.SizeXDR() != len(b) {
		t.Fatalf("SizeXDR = %d for %d bytes", v.SizeXDR(), len(b))
	}
	if !bytes.Equal(out, b) {
		t.Fatalf("encode(decode(b)) != b\n got %x\nwant %x", out, b)
	}
	if err := v.UnmarshalBinary(b); err != nil {
		t.Fatalf("decode into reused value: %v", err)
	}
	if out2, _ := v.MarshalBinary(); !bytes.Equal(out2, b) {
		t.Fatal("decode into reused value differs")
	}
}

func addSeeds(f *testing.F, vs ...xdr.Marshaler) {
	for _, v := range vs {
		b, err := xdr.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func FuzzEverything(f *testing.F) {
	addSeeds(f, ptr(sampleEverything()), build(0, 0, 0, "", nil, 0, 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b, func() codec { return new(Everything) })
	})
}

func FuzzFile(f *testing.F) {
	addSeeds(f, &rfcFile, &File{Type: NewFiletypeData("emacs")})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b, func() codec { return new(File) })
	})
}

func FuzzCompany(f *testing.F) {
	addSeeds(f, ptr(sampleCompany()))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b, func() codec { return new(Company) })
	})
}

func FuzzOperation(f *testing.F) {
	addSeeds(f, ptr(NewOperationOpRead(ReadArgs{Path: "/x", Count: 9})),
		ptr(NewOperationOpWrite(WriteArgs{Path: "/y", Data: []byte{1, 2, 3}})), ptr(NewOperationDefault(OP_SYNC)))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b, func() codec { return new(Operation) })
	})
}

// FuzzRoundTrip builds values from fuzzed fields and checks
// decode(encode(x)) == x for every x that encodes.
func FuzzRoundTrip(f *testing.F) {
	f.Add(int64(-1), uint64(7), 1.5, "name", []byte("data"), uint8(3), uint8(0xff))
	f.Add(int64(0), uint64(0), 0.0, "", []byte(nil), uint8(0), uint8(0))
	f.Fuzz(func(t *testing.T, i int64, u uint64, fl float64, s string, data []byte, n, bits uint8) {
		if fl != fl {
			return // NaN != NaN under DeepEqual; bit-exactness is covered by re-encoding
		}
		x := build(i, u, fl, s, data, n, bits)
		b, err := x.MarshalBinary()
		if err == nil && x.SizeXDR() != len(b) {
			t.Fatalf("SizeXDR = %d, encoded %d", x.SizeXDR(), len(b))
		}
		if err != nil {
			if !errors.Is(err, xdr.ErrTooLong) && !errors.Is(err, xdr.ErrEnum) {
				t.Fatalf("unexpected encode error %v", err)
			}
			return
		}
		var y Everything
		if err := y.UnmarshalBinary(b); err != nil {
			t.Fatalf("decode own encoding: %v", err)
		}
		if !reflect.DeepEqual(x, &y) {
			t.Fatalf("decode(encode(x)) != x\n got %+v\nwant %+v", y, *x)
		}
	})
}

// build derives an Everything from fuzzed fields; empty slices are nil
// because that is how they decode.
func build(i int64, u uint64, fl float64, s string, data []byte, n, bits uint8) *Everything {
	if len(data) == 0 {
		data = nil
	}
	x := &Everything{}
	x.Scalars = Scalars{I: int32(i), U: uint32(u), Bare: uint32(u >> 32), H: i, Uh: u, F: float32(fl), D: fl,
		B: bits&1 != 0, C: Color(n%3 + 1)}
	copy(x.Scalars.Q[:], data)
	copy(x.Arrays.Odd[:], s)
	copy(x.Arrays.Fixed[:], data)
	if len(data) > 0 {
		x.Arrays.Bounded = data
		x.Arrays.Blob = Blob(data)
	}
	x.Arrays.Name = s
	x.Arrays.FixedInts = [2]int32{int32(n), int32(bits)}
	for k := 0; k < int(n%4); k++ {
		x.Arrays.Ints = append(x.Arrays.Ints, i+int64(k))
		x.Arrays.Labels = append(x.Arrays.Labels, Label(s[:min(len(s), k)]))
	}
	x.Arrays.Palette = Palette{Color(bits%3 + 1), RED}
	for k := 0; k < int(n%5); k++ {
		x.List = &Node{Value: Counter(k), Next: x.List}
		var sh Shape
		switch (bits >> k) & 3 {
		case 0:
			sh = NewShapeCase2(fl)
		case 1:
			sh = NewShapeSmall()
		case 2:
			sh = NewShapeNegative(x.Scalars)
		default:
			sh = NewShapeDefault(int32(i)|8, Stamp(u))
		}
		x.Shapes = append(x.Shapes, sh)
	}
	if bits&2 != 0 {
		x.Flag = NewFlagTrue(Color(n%3 + 1))
	} else {
		x.Flag = NewFlagFalse()
	}
	if bits&4 != 0 {
		x.Either = NewEitherCase0(x.Arrays)
	} else {
		x.Either = NewEitherCase1(x.List)
	}
	x.Tree = Tree{Name: Label(s[:min(len(s), 3)])}
	if bits&8 != 0 {
		x.Tree.Children = []Tree{{Name: "kid"}}
	}
	x.Inner.State = EverythingInnerState(bits >> 4 & 1)
	x.Inner.Detail = NewEverythingInnerDetailDefault(GREEN)
	if bits&32 != 0 {
		x.Inner.Detail = NewEverythingInnerDetailRed(int32(n))
	}
	if bits&64 != 0 {
		var h Hash
		copy(h[:], s)
		x.MaybeHash = &h
	}
	return x
}

var genSeeds = flag.Bool("genseeds", false, "write testdata/fuzz seed corpora from the sample values")

// TestWriteSeeds rewrites the committed seed corpora (go test -genseeds).
func TestWriteSeeds(t *testing.T) {
	if !*genSeeds {
		t.Skip("run with -genseeds to rewrite testdata/fuzz")
	}
	seeds := map[string][]xdr.Marshaler{
		"FuzzEverything": {ptr(sampleEverything()), build(-5, 1<<40, 2.5, "seed", []byte("xyz"), 7, 0xaa)},
		"FuzzFile":       {&rfcFile, &File{Filename: "a", Type: NewFiletypeText(), Owner: "b"}},
		"FuzzCompany":    {ptr(sampleCompany())},
		"FuzzOperation":  {ptr(NewOperationOpWrite(WriteArgs{Path: "/seed", Offset: 4096, Data: []byte("hello")}))},
	}
	for name, vs := range seeds {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for k, v := range vs {
			b, err := xdr.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d", k)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
