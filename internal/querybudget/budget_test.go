package querybudget

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func newGate(t *testing.T, f func(*Config)) *Gate {
	t.Helper()
	c := DefaultConfig()
	f(&c)
	g, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestAdmitBoundsConcurrency(t *testing.T) {
	g := newGate(t, func(c *Config) { c.MaxConcurrent, c.MaxConcurrentPerTenant, c.MaxQueueWait = 2, 2, 50*time.Millisecond })
	a, err := g.Admit(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Admit(context.Background(), "y")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = g.Admit(context.Background(), "z")
	var be *BusyError
	if !errors.As(err, &be) || be.Reason != "concurrency" || be.RetryAfter != 5*time.Second {
		t.Fatalf("third query: %v, want a BusyError for concurrency", err)
	}
	if w := time.Since(start); w < 50*time.Millisecond {
		t.Errorf("refused after %v, want it to wait MaxQueueWait first", w)
	}
	// A slot given back while a query waits lets it in.
	go func() { time.Sleep(10 * time.Millisecond); a.Done() }()
	c, err := g.Admit(context.Background(), "z")
	if err != nil {
		t.Fatalf("a waiting query was not admitted when a slot came free: %v", err)
	}
	b.Done()
	c.Done()
	c.Done() // twice is fine
	if q, _ := g.Running(); q != 0 {
		t.Fatalf("%d running after every Done", q)
	}
}

func TestAdmitPerTenant(t *testing.T) {
	g := newGate(t, func(c *Config) { c.MaxConcurrent, c.MaxConcurrentPerTenant, c.MaxQueueWait = 4, 1, 0 })
	a, err := g.Admit(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Done()
	var be *BusyError
	if _, err := g.Admit(context.Background(), "a"); !errors.As(err, &be) || be.Reason != "tenant concurrency" {
		t.Fatalf("second query of a: %v, want tenant concurrency", err)
	}
	b, err := g.Admit(context.Background(), "b")
	if err != nil {
		t.Fatalf("tenant b refused while a holds its one slot: %v", err)
	}
	b.Done()
}

func TestAdmitCanceledWhileWaiting(t *testing.T) {
	g := newGate(t, func(c *Config) { c.MaxConcurrent, c.MaxConcurrentPerTenant, c.MaxQueueWait = 1, 1, time.Minute })
	a, _ := g.Admit(context.Background(), "a")
	defer a.Done()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	if _, err := g.Admit(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("a canceled wait did not end at once")
	}
}

func TestChargeBorrowsAndLimits(t *testing.T) {
	// 4 slots of 100 bytes; one query may hold 250.
	g := newGate(t, func(c *Config) {
		c.MaxConcurrent, c.MaxConcurrentPerTenant, c.Memory, c.MaxQueryMemory, c.MaxQueueWait = 4, 4, 400, 250, 0
	})
	a, _ := g.Admit(context.Background(), "t")
	if err := a.Charge(100); err != nil {
		t.Fatalf("within the reserve: %v", err)
	}
	if err := a.Charge(100); err != nil {
		t.Fatalf("borrowing from free memory: %v", err)
	}
	var le *LimitError
	if err := a.Charge(100); !errors.As(err, &le) || le.Limit != 250 {
		t.Fatalf("past MaxQueryMemory: %v, want a LimitError", err)
	}
	if now, peak := a.Held(); now != 200 || peak != 200 {
		t.Fatalf("held %d peak %d, want 200 200", now, peak)
	}
	// Two more queries take their reserves; a fourth finds the memory
	// a borrowed missing.
	b, _ := g.Admit(context.Background(), "t")
	c, err := g.Admit(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	var be *BusyError
	if _, err := g.Admit(context.Background(), "t"); !errors.As(err, &be) || be.Reason != "memory" {
		t.Fatalf("fourth query: %v, want refused for memory", err)
	}
	// b cannot borrow what a holds: busy, not a limit of its own.
	if err := b.Charge(150); !errors.As(err, &be) {
		t.Fatalf("b borrowing with nothing free: %v, want a BusyError", err)
	}
	// a gives back what it borrowed: the fourth now fits.
	a.Release(200)
	d, err := g.Admit(context.Background(), "t")
	if err != nil {
		t.Fatalf("after a released: %v", err)
	}
	for _, x := range []*Ticket{a, b, c, d} {
		x.Done()
	}
	g.mu.Lock()
	free := g.free
	g.mu.Unlock()
	if free != 400 {
		t.Fatalf("free memory %d after every query ended, want 400", free)
	}
}

func TestChargeConcurrent(t *testing.T) {
	g := newGate(t, func(c *Config) { c.MaxConcurrent, c.MaxConcurrentPerTenant, c.Memory = 8, 8, 8<<20 })
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			tk, err := g.Admit(context.Background(), "t")
			if err != nil {
				t.Error(err)
				return
			}
			defer tk.Done()
			for range 1000 {
				if err := tk.Charge(1000); err == nil {
					tk.Release(1000)
				}
			}
		})
	}
	wg.Wait()
	if g.free != 8<<20 {
		t.Fatalf("free %d after all ended, want %d", g.free, 8<<20)
	}
}

func TestTails(t *testing.T) {
	g := newGate(t, func(c *Config) { c.MaxTails, c.MaxTailsPerTenant = 3, 2 })
	a1, err := g.OpenTail("a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.OpenTail("a"); err != nil {
		t.Fatal(err)
	}
	var be *BusyError
	if _, err := g.OpenTail("a"); !errors.As(err, &be) || be.Reason != "tenant tails" {
		t.Fatalf("third tail of a: %v", err)
	}
	if _, err := g.OpenTail("b"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.OpenTail("c"); !errors.As(err, &be) || be.Reason != "tails" {
		t.Fatalf("fourth tail: %v", err)
	}
	a1()
	a1()
	if _, err := g.OpenTail("c"); err != nil {
		t.Fatalf("after a tail closed: %v", err)
	}
}

func TestNilGateAndTicket(t *testing.T) {
	var g *Gate
	tk, err := g.Admit(context.Background(), "x")
	if err != nil || tk != nil {
		t.Fatal(tk, err)
	}
	if err := tk.Charge(1 << 40); err != nil {
		t.Fatal(err)
	}
	tk.Release(1)
	tk.Done()
	if FromContext(context.Background()) != nil {
		t.Fatal("a ticket from an empty context")
	}
}

func TestValidate(t *testing.T) {
	for _, f := range []func(*Config){
		func(c *Config) { c.MaxConcurrent = 0 },
		func(c *Config) { c.MaxConcurrentPerTenant = 9 },
		func(c *Config) { c.Memory = 0 },
		func(c *Config) { c.MaxQueryMemory = c.Memory + 1 },
		func(c *Config) { c.MaxTailsPerTenant = 101 },
		func(c *Config) { c.RetryAfter = 0 },
		func(c *Config) { c.MaxQueueWait = -1 },
	} {
		c := DefaultConfig()
		f(&c)
		if _, err := New(c); err == nil {
			t.Errorf("New accepted %+v", c)
		}
	}
}

// TestOnReserved: the hook hears what the running queries hold of
// Memory, reserves and borrowing, and 0 once they end.
func TestOnReserved(t *testing.T) {
	var got []int64
	g := newGate(t, func(c *Config) {
		c.MaxConcurrent, c.MaxConcurrentPerTenant, c.Memory, c.MaxQueueWait = 4, 4, 400, 0
		c.OnReserved = func(n int64) { got = append(got, n) }
	})
	a, _ := g.Admit(context.Background(), "t")
	b, _ := g.Admit(context.Background(), "t")
	if err := a.Charge(150); err != nil { // 50 borrowed past its 100
		t.Fatal(err)
	}
	a.Release(150) // the 50 it borrowed is not worth giving back yet (half a reserve)
	a.Done()
	b.Done()
	want := []int64{100, 200, 250, 100, 0}
	if len(got) != len(want) {
		t.Fatalf("OnReserved heard %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("OnReserved heard %v, want %v", got, want)
		}
	}
}

// TestAdmitTenantLimits: a tenant's own limits replace the per-tenant
// bound (never past MaxConcurrent) and ride on its tickets' MaxRange;
// other tenants keep the gate's.
func TestAdmitTenantLimits(t *testing.T) {
	g := newGate(t, func(c *Config) {
		c.MaxConcurrent, c.MaxConcurrentPerTenant, c.MaxQueueWait = 4, 1, 0
		c.PerTenant = func(tenant string) TenantLimits {
			switch tenant {
			case "wide":
				return TenantLimits{MaxConcurrent: 3, MaxRange: time.Hour}
			case "huge":
				return TenantLimits{MaxConcurrent: 100}
			}
			return TenantLimits{}
		}
	})
	var held []*Ticket
	for i := range 3 {
		tk, err := g.Admit(context.Background(), "wide")
		if err != nil {
			t.Fatalf("wide's query %d: %v", i, err)
		}
		if tk.MaxRange() != time.Hour {
			t.Fatalf("wide's MaxRange %v", tk.MaxRange())
		}
		held = append(held, tk)
	}
	var be *BusyError
	if _, err := g.Admit(context.Background(), "wide"); !errors.As(err, &be) || be.Reason != "tenant concurrency" {
		t.Fatalf("wide's fourth: %v", err)
	}
	other, err := g.Admit(context.Background(), "other")
	if err != nil || other.MaxRange() != 0 {
		t.Fatalf("other: %v, MaxRange %v", err, other.MaxRange())
	}
	if _, err := g.Admit(context.Background(), "huge"); !errors.As(err, &be) || be.Reason != "concurrency" {
		t.Fatalf("huge past MaxConcurrent: %v", err)
	}
	for _, tk := range append(held, other) {
		tk.Done()
	}
	if (*Ticket)(nil).MaxRange() != 0 {
		t.Fatal("a nil ticket has a range bound")
	}
}
