package xdrtest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/wirehouse/wirehouse/xdr"
)

// list returns a Node chain of n nodes (nil for 0).
func list(n int) *Node {
	var head *Node
	for i := 0; i < n; i++ {
		head = &Node{Value: Counter(i), Next: head}
	}
	return head
}

// TestEncodeCycle: values that point back into themselves fail with
// xdr.ErrDepth from every encoding entry point instead of recursing
// forever, and SizeXDR returns.
func TestEncodeCycle(t *testing.T) {
	loop := &Node{Value: 1}
	loop.Next = loop

	tree := &Tree{Name: "r", Children: make([]Tree, 1)}
	tree.Children[0].Children = tree.Children // a slice that contains itself

	either := NewEitherCase1(loop)
	everything := sampleEverything()
	everything.List = loop

	for name, v := range map[string]codec{"node": loop, "tree": tree, "either": &either, "everything": &everything} {
		t.Run(name, func(t *testing.T) {
			_ = v.SizeXDR() // must return
			prefix := []byte{1, 2, 3}
			b, err := v.AppendXDR(prefix)
			var e *xdr.Error
			if !errors.Is(err, xdr.ErrDepth) || !errors.As(err, &e) || e.Offset < len(prefix) || len(b) != len(prefix) {
				t.Errorf("AppendXDR = %d bytes, %v", len(b), err)
			}
			if _, err := v.MarshalBinary(); !errors.Is(err, xdr.ErrDepth) {
				t.Errorf("MarshalBinary: %v", err)
			}
			if _, err := xdr.Marshal(v); !errors.Is(err, xdr.ErrDepth) {
				t.Errorf("xdr.Marshal: %v", err)
			}
			w := xdr.NewWriter(io.Discard)
			w.Encode(v)
			if err := w.Flush(); !errors.Is(err, xdr.ErrDepth) {
				t.Errorf("Writer.Encode: %v", err)
			}
		})
	}
}

// TestEncodeDepthMatchesDecode: the encoder counts nesting as the decoder
// does, so a value encodes exactly when its encoding decodes under the
// default limit. A Node chain of k nodes nests k deep.
func TestEncodeDepthMatchesDecode(t *testing.T) {
	const max = xdr.DefaultMaxDepth
	ok := list(max)
	in, err := ok.MarshalBinary()
	if err != nil {
		t.Fatalf("%d nodes: %v", max, err)
	}
	if ok.SizeXDR() != len(in) {
		t.Fatalf("SizeXDR = %d, encoded %d", ok.SizeXDR(), len(in))
	}
	var n Node
	if err := n.UnmarshalBinary(in); err != nil {
		t.Fatalf("decode %d nodes: %v", max, err)
	}
	if _, err := list(max + 1).MarshalBinary(); !errors.Is(err, xdr.ErrDepth) {
		t.Fatalf("encode %d nodes: %v", max+1, err)
	}
	deeper := append(unhex(t, "00000000 00000001"), in...)
	if err := n.UnmarshalBinary(deeper); !errors.Is(err, xdr.ErrDepth) {
		t.Fatalf("decode %d nodes: %v", max+1, err)
	}

	// Enclosing structs count too: Everything holds the list one level
	// down, and Either (a union) holds it through a typedef.
	e := sampleEverything()
	e.List = list(max - 1)
	if b, err := e.MarshalBinary(); err != nil {
		t.Fatalf("Everything with %d nodes: %v", max-1, err)
	} else if err := new(Everything).UnmarshalBinary(b); err != nil {
		t.Fatalf("decode Everything with %d nodes: %v", max-1, err)
	}
	e.List = list(max)
	if _, err := e.MarshalBinary(); !errors.Is(err, xdr.ErrDepth) {
		t.Fatalf("Everything with %d nodes: %v", max, err)
	}
	either := NewEitherCase1(list(max))
	if _, err := either.MarshalBinary(); !errors.Is(err, xdr.ErrDepth) {
		t.Fatalf("Either with %d nodes: %v", max, err)
	}
}

// TestHostileVoidUnions: an array of void Bulky elements, 4 bytes each,
// allocates a few words per element, not the 4 KiB+ of the arms it could
// hold (they are pointers, allocated only when selected).
func TestHostileVoidUnions(t *testing.T) {
	const n = 100000
	in := xdr.AppendUint32(nil, n)
	in = append(in, make([]byte, 4*n)...)
	checkDecode(t, in, func() codec { return new(Bulk) })

	// Selecting a large arm needs the input to hold it.
	short := unhex(t, "00000001 00000001 00000000")
	var b Bulk
	if err := b.UnmarshalBinary(short); !errors.Is(err, xdr.ErrTruncated) {
		t.Fatalf("short block arm: %v", err)
	}
}

func sampleBulk() Bulk {
	var block [4096]byte
	block[0], block[4095] = 1, 2
	var wide [16]Scalars
	for i := range wide {
		wide[i].C = BLUE
	}
	return Bulk{Items: []Bulky{
		NewBulkyCase0(), NewBulkyCase1(block), NewBulkyCase2(wide), NewBulkyCase3(sampleEverything()),
	}}
}

func TestBulkyArms(t *testing.T) {
	v := sampleBulk()
	in, err := v.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if v.SizeXDR() != len(in) {
		t.Fatalf("SizeXDR = %d, encoded %d", v.SizeXDR(), len(in))
	}
	var out Bulk
	if err := out.UnmarshalBinary(in); err != nil {
		t.Fatal(err)
	}
	if blk, ok := out.Items[1].GetBlock(); !ok || blk[0] != 1 || blk[4095] != 2 {
		t.Fatal("block arm lost")
	}
	if _, ok := out.Items[0].GetBlock(); ok {
		t.Fatal("GetBlock ok for a void element")
	}
	// Decoding again reuses the arms' storage.
	block := out.Items[1].Block
	if err := out.UnmarshalBinary(in); err != nil || out.Items[1].Block != block {
		t.Fatalf("arm not reused: %v", err)
	}
	// A nil arm encodes as its zero value.
	zero := Bulky{Tag: 1}
	b, err := zero.MarshalBinary()
	if err != nil || len(b) != 4+4096 || zero.SizeXDR() != len(b) || !bytes.Equal(b, append([]byte{0, 0, 0, 1}, make([]byte, 4096)...)) {
		t.Fatalf("nil arm: %d bytes, %v", len(b), err)
	}
	if blk, ok := zero.GetBlock(); !ok || blk != [4096]byte{} {
		t.Fatal("GetBlock of nil arm")
	}
}

func FuzzBulk(f *testing.F) {
	addSeeds(f, ptr(sampleBulk()), &Bulk{Items: make([]Bulky, 64)})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecode(t, b, func() codec { return new(Bulk) })
	})
}
