package receiver

import (
	"sync"

	"google.golang.org/grpc/mem"
)

// framePool is the gRPC server's buffer pool (experimental.BufferPool): the
// size tiers of grpc-go's default pool, without its zeroing. grpc-go reads
// every DATA frame into a buffer from the pool, and its default pool clears
// the whole buffer first, though the frame's bytes then overwrite exactly
// the length asked for: with large requests that clear cost as much as the
// copy out of the socket (6–8 % of the server's CPU at batch 100 in two
// profiles). grpc-go
// keeps a non-zeroing pool of this kind for its own transports but does not
// export it.
//
// A buffer from Get may hold a former request's bytes; its length is the
// length asked for, and grpc-go overwrites all of it before anything reads
// it (the frame body is read into it with io.ReadFull).
type framePool struct {
	tiers [len(frameTiers)]sync.Pool
}

// frameTiers are grpc-go's default tier sizes, as powers of two: 256 B,
// 4 KiB, 16 KiB (its frame size), 32 KiB, 1 MiB.
var frameTiers = [...]uint8{8, 12, 14, 15, 20}

var _ mem.BufferPool = (*framePool)(nil)

// tierFor returns the index of the smallest tier holding size bytes, or -1.
func tierFor(size int) int {
	for i, e := range frameTiers {
		if size <= 1<<e {
			return i
		}
	}
	return -1
}

// Get returns a buffer of length size, taken from the pool when one fits.
func (p *framePool) Get(size int) *[]byte {
	t := tierFor(size)
	if t < 0 {
		b := make([]byte, size)
		return &b
	}
	if bp, ok := p.tiers[t].Get().(*[]byte); ok {
		*bp = (*bp)[:size]
		return bp
	}
	b := make([]byte, size, 1<<frameTiers[t])
	return &b
}

// Put returns a buffer from Get to its tier; others are dropped.
func (p *framePool) Put(bp *[]byte) {
	c := cap(*bp)
	if c == 0 || c&(c-1) != 0 {
		return // not a tier's size
	}
	t := tierFor(c)
	if t < 0 || 1<<frameTiers[t] != c {
		return
	}
	p.tiers[t].Put(bp)
}
