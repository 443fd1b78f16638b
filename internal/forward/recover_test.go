package forward_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/wirehouse/wirehouse/internal/forward"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/receiver"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// idLogs is a logs request of record rec: resources log records per
// resource (each resource its own service, so that they spread over the
// ring), each log with the id attribute rec*1000 + resource*10 + i.
func idLogs(t *testing.T, rec, resources, perResource int) []byte {
	ld := plog.NewLogs()
	for k := range resources {
		rl := ld.ResourceLogs().AppendEmpty()
		rl.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d-%d", rec, k))
		sl := rl.ScopeLogs().AppendEmpty()
		for i := range perResource {
			lr := sl.LogRecords().AppendEmpty()
			lr.Body().SetStr(strings.Repeat("x", 120))
			lr.Attributes().PutInt("id", int64(rec*1000+k*10+i))
		}
	}
	b, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// logIDs returns the id attributes of a logs request.
func logIDs(t *testing.T, body []byte) []int64 {
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(body)
	if err != nil {
		t.Error(err)
		return nil
	}
	var ids []int64
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		sls := ld.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				if v, ok := lrs.At(k).Attributes().Get("id"); ok {
					ids = append(ids, v.Int())
				}
			}
		}
	}
	return ids
}

// idCounter counts the log ids a receiver took.
type idCounter struct {
	mu  sync.Mutex
	ids map[int64]int
}

func (c *idCounter) add(ids []int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[int64]int{}
	}
	for _, id := range ids {
		c.ids[id]++
	}
}

func (c *idCounter) snapshot() map[int64]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int64]int, len(c.ids))
	for id, n := range c.ids {
		out[id] = n
	}
	return out
}

func (c *idCounter) total() int {
	n := 0
	for _, v := range c.snapshot() {
		n += v
	}
	return n
}

// startIDReceiver serves OTLP on addr (gRPC, or HTTP) with a sink that
// counts log ids into c; hold, if set, runs first and refuses the
// request with its error. stop shuts it down.
func startIDReceiver(t *testing.T, protocol, addr string, c *idCounter, hold func(context.Context, []int64) error) (string, func()) {
	t.Helper()
	sink := pipeline.SinkFunc(func(ctx context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		ids := logIDs(t, req.Body)
		if hold != nil {
			if err := hold(ctx, ids); err != nil {
				return pipeline.Outcome{}, err
			}
		}
		c.add(ids)
		return pipeline.Outcome{}, nil
	})
	cfg := receiver.DefaultConfig()
	cfg.GRPCAddr, cfg.HTTPAddr = "", ""
	if protocol == forward.ProtocolGRPC {
		cfg.GRPCAddr = addr
	} else {
		cfg.HTTPAddr = addr
	}
	r, err := receiver.New(cfg, pipeline.Sinks{Logs: []pipeline.Sink{sink}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r.Shutdown(ctx) //nolint:errcheck // test
		})
	}
	t.Cleanup(stop)
	if protocol == forward.ProtocolGRPC {
		return r.GRPCAddr().String(), stop
	}
	return r.HTTPAddr().String(), stop
}

// TestHeldBatchesGoOnRecovery: an endpoint stops answering (its server
// is shut down) while records keep coming, and its workers back off for
// 10 to 30 s. When a server answers on its address again, the batches
// held back go within two seconds (the probe finds it, the waiting
// retries go at once), not when their backoff ends; each record once.
func TestHeldBatchesGoOnRecovery(t *testing.T) {
	for _, protocol := range []string{forward.ProtocolGRPC, forward.ProtocolHTTP} {
		t.Run(protocol, func(t *testing.T) {
			sp := openSpool(t)
			var got idCounter
			addr, stop := startIDReceiver(t, protocol, "127.0.0.1:0", &got, nil)
			reg := prometheus.NewRegistry()
			cfg := forward.Config{Name: "rec", Protocol: protocol, Resolver: forward.Static{addr}, Registerer: reg,
				RetryInitial: 20 * time.Second, RetryMax: 20 * time.Second, ProbeEvery: 250 * time.Millisecond, Timeout: 2 * time.Second}
			d, stopDest := runDest(t, sp, cfg)
			appendLogs := func(from, to int) {
				for i := from; i <= to; i++ {
					if _, err := sp.Append(otlpwire.SignalLogs, "", time.Now(), idLogs(t, i, 2, 5)); err != nil {
						t.Fatal(err)
					}
				}
			}
			appendLogs(1, 5)
			waitFor(t, "the first records", 10*time.Second, func() bool { return d.Committed() == 5 })
			stop()
			appendLogs(6, 25)
			waitFor(t, "a retry backing off", 10*time.Second, func() bool {
				return metricSum(t, reg, "wirehouse_forward_requests_total", "outcome", "retried") >= 1
			})
			time.Sleep(time.Second) // the probe finds nothing for a while
			if n := metricSum(t, reg, "wirehouse_forward_probes_total", "outcome", "unanswered"); n < 1 {
				t.Errorf("%v unanswered probes while the endpoint was down", n)
			}
			if age := metricSum(t, reg, "wirehouse_forward_queue_age_seconds", "destination", "rec"); age < 1 {
				t.Errorf("queue age %vs with records held back for a second", age)
			}
			_, stop = startIDReceiver(t, protocol, addr, &got, nil)
			back := time.Now()
			waitFor(t, "the held records after the endpoint came back", 2*time.Second, func() bool { return d.Committed() == 25 })
			t.Logf("%s: every held record delivered %v after the endpoint came back", protocol, time.Since(back).Round(time.Millisecond))
			waitFor(t, "the queue age to fall to 0", time.Second, func() bool {
				return metricSum(t, reg, "wirehouse_forward_queue_age_seconds", "destination", "rec") == 0
			})
			stopDest()
			stop()
			ids := got.snapshot()
			for rec := 1; rec <= 25; rec++ {
				for k := range 2 {
					for i := range 5 {
						if n := ids[int64(rec*1000+k*10+i)]; n != 1 {
							t.Fatalf("log %d of record %d delivered %d times", k*10+i, rec, n)
						}
					}
				}
			}
		})
	}
}

// TestRestartSendsOnlyUndelivered: two endpoints; one holds its first
// request, and takes the later ones, so acknowledgements come out of
// order. The cursor stops just before the first record not delivered in
// full, never past it. The process is then "killed": its spool
// directory copied as it is (cursor, acknowledged-ranges file) and a
// destination started on the copy. It sends only the parts that were not
// delivered: nothing to the other endpoint, and to the one that held,
// only the parts of the records it had not taken in full. Every log
// arrives.
func TestRestartSendsOnlyUndelivered(t *testing.T) {
	sp := openSpool(t)
	const records = 30
	for i := 1; i <= records; i++ {
		if _, err := sp.Append(otlpwire.SignalLogs, "", time.Now(), idLogs(t, i, 6, 8)); err != nil {
			t.Fatal(err)
		}
	}
	var a1, b1, a2, b2 idCounter
	var (
		holdMu  sync.Mutex
		held    []int64
		release = make(chan struct{})
	)
	hold := func(ctx context.Context, ids []int64) error {
		if len(ids) == 0 {
			return nil // a probe
		}
		holdMu.Lock()
		if held == nil {
			held = ids
		}
		again := slices.Contains(held, ids[0]) // the held request, retried
		holdMu.Unlock()
		if !again {
			return nil
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return fmt.Errorf("test: held: %w", pipeline.ErrUnavailable)
	}
	addrA, _ := startIDReceiver(t, forward.ProtocolGRPC, "127.0.0.1:0", &a1, nil)
	addrB, stopB := startIDReceiver(t, forward.ProtocolGRPC, "127.0.0.1:0", &b1, hold)
	cfg := forward.Config{Name: "gw", Resolver: forward.Static{addrA, addrB}, MaxBatchBytes: 2 << 10,
		RetryInitial: 50 * time.Millisecond, RetryMax: 100 * time.Millisecond, Timeout: 500 * time.Millisecond}
	d, stop := runDest(t, sp, cfg)

	// Wait until the deliveries stop: everything but the held request
	// and the open batch behind it (an endpoint's open batch goes when
	// none of its requests is in flight).
	allIDs := func(yield func(rec, id int64) bool) {
		for rec := int64(1); rec <= records; rec++ {
			for k := range int64(6) {
				for i := range int64(8) {
					if !yield(rec, rec*1000+k*10+i) {
						return
					}
				}
			}
		}
	}
	// The records not delivered in full: those of the logs missing.
	var missing map[int64]bool
	first := int64(records + 1)
	notDelivered := func() {
		missing, first = map[int64]bool{}, records+1
		gotA, gotB := a1.snapshot(), b1.snapshot()
		for rec, id := range allIDs {
			if gotA[id]+gotB[id] == 0 {
				missing[rec] = true
				first = min(first, rec)
			}
		}
	}
	last, since := -1, time.Now()
	waitFor(t, "the deliveries to stop and the cursor before the first record not delivered", 20*time.Second, func() bool {
		holdMu.Lock()
		h := len(held)
		holdMu.Unlock()
		n := a1.total() + b1.total()
		if n != last {
			last, since = n, time.Now()
		}
		if h == 0 || time.Since(since) < time.Second {
			return false
		}
		notDelivered()
		return d.Committed() == uint64(first-1)
	})
	holdMu.Lock()
	for _, id := range held {
		if !missing[id/1000] {
			t.Errorf("log %d held, yet its record counts as delivered", id)
		}
	}
	holdMu.Unlock()
	if len(missing) == records {
		t.Fatal("no record delivered in full")
	}
	// Let the acknowledged-ranges file be written (its records were read
	// over a second ago), and check the cursor stays.
	for range 15 {
		time.Sleep(100 * time.Millisecond)
		if c := d.Committed(); c != uint64(first-1) {
			t.Fatalf("cursor %d with record %d not delivered", c, first)
		}
		if n := a1.total() + b1.total(); n != last {
			t.Fatalf("deliveries went on after a second without any (%d logs, then %d)", last, n)
		}
	}
	t.Logf("records not delivered in full: %v; cursor %d", keys(missing), d.Committed())

	// The kill: the spool directory as it is now.
	crash := copyDir(t, sp.Dir())
	stop()
	close(release)
	stopB()

	// The restart, on the copy, to the same endpoints (the ring must
	// hash the same for the endpoint ranges): B answers on its address
	// again, without holding.
	scfg := spool.DefaultConfig()
	scfg.Dir = crash
	sp2, err := spool.Open(scfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sp2.Close()
	startIDReceiver(t, forward.ProtocolGRPC, addrB, &b2, nil)
	aBefore := a1.snapshot()
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	d2, stop2 := runDest(t, sp2, cfg)
	waitFor(t, "every record after the restart", 20*time.Second, func() bool { return d2.Committed() == records })
	stop2()
	for id, n := range a1.snapshot() {
		if n != aBefore[id] {
			a2.add([]int64{id})
		}
	}
	if n := a2.total(); n != 0 {
		t.Errorf("the endpoint that had everything got %d logs again after the restart", n)
	}
	for id := range b2.snapshot() {
		if !missing[id/1000] {
			t.Errorf("log %d of record %d, delivered before the crash, sent again", id, id/1000)
		}
	}
	all := map[int64]int{}
	for _, c := range []*idCounter{&a1, &b1, &b2} {
		for id, n := range c.snapshot() {
			all[id] += n
		}
	}
	dup := 0
	for rec, id := range allIDs {
		switch n := all[id]; {
		case n == 0:
			t.Fatalf("log %d of record %d lost", id, rec)
		case n > 1:
			dup++
		}
	}
	skipped := metricSum(t, reg, "wirehouse_forward_records_total", "outcome", "skipped")
	t.Logf("after the restart: %d logs sent again (%d of them duplicates, all of records in flight at the crash), %v not sent again",
		b2.total(), dup, skipped)
}

func keys(m map[int64]bool) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	return out
}

// copyDir copies the regular files of dir into a new directory, as a
// crash would leave them (each file read once, whole).
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		src, err := os.Open(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // a .tmp renamed meanwhile
		} else if err != nil {
			t.Fatal(err)
		}
		dst, err := os.Create(filepath.Join(out, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(dst, src); err != nil {
			t.Fatal(err)
		}
		src.Close()
		dst.Close()
	}
	return out
}
