package receiver

import "testing"

func TestFramePool(t *testing.T) {
	var p framePool
	for _, tc := range []struct{ size, cap int }{
		{0, 256}, {1, 256}, {256, 256}, {257, 4096}, {16384, 16384}, {16385, 32768},
		{32769, 1 << 20}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1},
	} {
		bp := p.Get(tc.size)
		if len(*bp) != tc.size || cap(*bp) != tc.cap {
			t.Errorf("Get(%d): len %d cap %d, want len %d cap %d", tc.size, len(*bp), cap(*bp), tc.size, tc.cap)
		}
		p.Put(bp)
	}

	// A returned buffer is handed out again, at the new length, with its
	// old bytes (the pool does not clear: grpc-go overwrites them).
	bp := p.Get(16384)
	(*bp)[0] = 0xab
	p.Put(bp)
	reused := false
	for range 100 { // sync.Pool may drop an item; it rarely drops all
		got := p.Get(9000)
		if len(*got) != 9000 || cap(*got) != 16384 {
			t.Fatalf("Get(9000): len %d cap %d", len(*got), cap(*got))
		}
		if &(*got)[0] == &(*bp)[0] {
			reused = true
			break
		}
		p.Put(got)
	}
	if !reused {
		t.Error("a buffer put back was never handed out again")
	}

	// Buffers whose capacity is not a tier's are not pooled: Get must never
	// return one shorter than asked for.
	odd := make([]byte, 5000)
	p.Put(&odd)
	big := make([]byte, 2<<20)
	p.Put(&big)
	for range 50 {
		if got := p.Get(4096); cap(*got) != 4096 {
			t.Fatalf("Get(4096) after Put of foreign buffers: cap %d", cap(*got))
		}
		if got := p.Get(1 << 20); cap(*got) != 1<<20 {
			t.Fatalf("Get(1 MiB) after Put of foreign buffers: cap %d", cap(*got))
		}
	}
}
