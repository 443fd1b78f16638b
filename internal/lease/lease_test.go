package lease_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket/s3test"
	"github.com/wirehouse/wirehouse/internal/lease"
)

// TestLease on a real S3-compatible store: of nodes racing, one holds the
// lease; it renews; others take it only once it expired or was released.
func TestLease(t *testing.T) {
	srv := s3test.Start(t)
	b := srv.Bucket(srv.CreateBucket("lease"), "")
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	nodes := make([]*lease.Lease, 6)
	for i := range nodes {
		l, err := lease.New(b, "_wirehouse/compaction.lease", string(rune('a'+i)), lease.WithTTL(time.Minute), lease.WithClock(now))
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = l
	}
	holders := func() (n int, who int) {
		for i, l := range nodes {
			if l.Held() {
				n, who = n+1, i
			}
		}
		return n, who
	}
	var wg sync.WaitGroup
	for _, l := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.Acquire(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	n, who := holders()
	if n != 1 {
		t.Fatalf("%d nodes hold the lease after a race, want 1", n)
	}
	// The holder renews; the others cannot take a live lease.
	clock.Add(int64(30 * time.Second))
	for i, l := range nodes {
		ok, err := l.Acquire(ctx)
		if err != nil || ok != (i == who) {
			t.Fatalf("node %d: Acquire = %v, %v; want %v", i, ok, err, i == who)
		}
	}
	// Past the margin (TTL/3 before expiry) the holder no longer counts
	// itself the holder, and once it expired another node takes it.
	clock.Add(int64(45 * time.Second))
	if nodes[who].Held() {
		t.Fatal("holder still holds its lease 15 s before it expires")
	}
	clock.Add(int64(20 * time.Second))
	other := (who + 1) % len(nodes)
	if ok, err := nodes[other].Acquire(ctx); err != nil || !ok {
		t.Fatalf("taking an expired lease: %v, %v", ok, err)
	}
	if ok, err := nodes[who].Acquire(ctx); err != nil || ok {
		t.Fatalf("the old holder took the new one's lease back: %v, %v", ok, err)
	}
	// Released, it is free at once.
	if err := nodes[other].Release(ctx); err != nil {
		t.Fatal(err)
	}
	if nodes[other].Held() {
		t.Fatal("held after Release")
	}
	if ok, err := nodes[who].Acquire(ctx); err != nil || !ok {
		t.Fatalf("taking a released lease: %v, %v", ok, err)
	}
}
