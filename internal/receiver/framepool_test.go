package receiver

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestFramePool(t *testing.T) {
	var p framePool
	for _, tc := range []struct{ size, cap int }{
		{0, 256}, {1, 256}, {256, 256}, {257, 4096}, {16384, 16384}, {16385, 32768},
		{32769, 1 << 20}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1},
	} {
		t.Run(fmt.Sprintf("size=%d", tc.size), func(t *testing.T) {
			bp := p.Get(tc.size)
			if len(*bp) != tc.size || cap(*bp) != tc.cap {
				t.Errorf("Get: len %d cap %d, want len %d cap %d", len(*bp), cap(*bp), tc.size, tc.cap)
			}
			p.Put(bp)
		})
	}

	// A returned buffer is handed out again, at the new length, with its
	// old bytes (the pool does not clear: grpc-go overwrites them).
	bp := p.Get(16384)
	(*bp)[0] = 0xab
	reused := false
	for range 100 { // sync.Pool may drop what is put (a quarter of it under -race): put it again
		p.Put(bp)
		got := p.Get(9000)
		if len(*got) != 9000 || cap(*got) != 16384 {
			t.Fatalf("Get(9000): len %d cap %d", len(*got), cap(*got))
		}
		if &(*got)[0] == &(*bp)[0] {
			reused = true
			break
		}
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

// TestGRPCBuffersReused sends distinct requests of many sizes (one frame,
// several frames, 1.6 MB), plain and gzip-compressed (decompression reads
// into pooled buffers too), from concurrent clients, so the server's
// buffers are reused with a former request's bytes in them: every request
// must reach the sink exactly as sent.
func TestGRPCBuffersReused(t *testing.T) {
	r, rec := start(t, testConfig())
	conn := dialGRPC(t, r)
	sizes := []int{1, 3, 40, 200, 700, 2500}
	const workers, rounds = 4, 6
	want := map[string]int{}
	bodies := make([][][]byte, workers)
	for w := range workers {
		for i := range rounds {
			b := synth.Generate(otlpwire.SignalLogs, synth.Config{
				Seed: int64(w*rounds + i), Resources: 2, ScopesPerResource: 2, TotalRecords: sizes[(w+i)%len(sizes)],
			})
			bodies[w] = append(bodies[w], b)
			want[string(b)]++
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i, b := range bodies[w] {
				var opts []grpc.CallOption
				if (w+i)%2 == 1 {
					opts = append(opts, grpc.UseCompressor("gzip"))
				}
				if err := exportGRPC(context.Background(), conn, otlpwire.SignalLogs, b, nil, opts...); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := rec.bodies(otlpwire.SignalLogs)
	if len(got) != workers*rounds {
		t.Fatalf("sink got %d requests, want %d", len(got), workers*rounds)
	}
	for _, b := range got {
		if want[string(b)] == 0 {
			t.Fatalf("sink got a %d-byte request that was never sent (or was altered)", len(b))
		}
		want[string(b)]--
	}
}
