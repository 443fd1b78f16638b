package lakeload

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// spanCounts is the number of spans of each trace of the traces requests.
func spanCounts(t *testing.T, bodies ...[]byte) map[pcommon.TraceID]int {
	t.Helper()
	out := map[pcommon.TraceID]int{}
	for _, b := range bodies {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.Traces().ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					out[sp.TraceID()]++
				}
			}
		}
	}
	return out
}

// checkOnce asserts that each trace of want reads back with its spans
// exactly once, and that the search of its service finds it.
func checkOnce(t *testing.T, stage string, r *lakeread.Reader, want map[pcommon.TraceID]int) {
	t.Helper()
	for id, n := range want {
		res, err := r.Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
		if err != nil {
			t.Fatalf("%s: trace %s: %v", stage, id, err)
		}
		if res.Spans.Len() != n {
			t.Errorf("%s: trace %s: %d spans, want %d", stage, id, res.Spans.Len(), n)
		}
	}
	found, err := r.FindTraces(context.Background(), "acme", lakeread.Query{Limit: 100000})
	if err != nil {
		t.Fatalf("%s: search: %v", stage, err)
	}
	if len(found) != len(want) {
		t.Errorf("%s: search found %d traces, want %d", stage, len(found), len(want))
	}
	svcs, err := r.Services(context.Background(), "acme", time.Time{}, time.Time{})
	if err != nil || len(svcs) == 0 {
		t.Errorf("%s: services %q, %v", stage, svcs, err)
	}
}

// TestFreshTracesOnce: a span is read back as soon as it is spooled, and
// exactly once whatever the loader has done with it: not read by the
// loader yet (from the spool), read and buffered (from memory when the
// spool kept it there, or from the spool past the memory bound or when
// the loader read it from the file), written (from the files), and a mix.
func TestFreshTracesOnce(t *testing.T) {
	for _, tc := range []struct {
		mem  int
		tail int64 // spool.Config.TailBytes
	}{{FreshMemory, 1 << 20}, {FreshMemory, 0}, {1, 1 << 20}} {
		mem := tc.mem
		dir := t.TempDir()
		scfg := spoolConfig(filepath.Join(dir, "spool"))
		scfg.TailBytes = tc.tail
		sp, err := spool.Open(scfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sp.Close() })
		dir = filepath.Join(dir, "lake")
		start := time.Now().Add(-time.Hour)
		var bodies [][]byte
		for i := range 3 {
			b := synth.Traces(synth.Config{Seed: int64(10 + i), Resources: 2, ScopesPerResource: 1, TotalRecords: 30, Start: start})
			bodies = append(bodies, b)
			if _, err := sp.Append(otlpwire.SignalTraces, "acme", time.Now(), b); err != nil {
				t.Fatal(err)
			}
		}
		// Another tenant's and logs records are not read as acme's spans.
		if _, err := sp.Append(otlpwire.SignalTraces, "other", time.Now(), bodies[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := sp.Append(otlpwire.SignalLogs, "acme", time.Now(), logsWithIDs(t, 1, 2)); err != nil {
			t.Fatal(err)
		}
		l, err := New(sp, Config{Dir: dir, Consumer: "lake", MaxDelay: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		l.freshMax = mem
		rcfg := lakeread.DefaultConfig()
		rcfg.Bucket, rcfg.Fresh = bucket.NewLocal(dir), l
		r, err := lakeread.New(rcfg)
		if err != nil {
			t.Fatal(err)
		}
		want := spanCounts(t, bodies...)
		checkOnce(t, "spooled, not read", r, want)

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		waitFor(t, func() bool {
			l.freshMu.Lock()
			defer l.freshMu.Unlock()
			return l.consumed == sp.Stats().LastSeq
		})
		l.freshMu.Lock()
		inMemory := len(l.fresh)
		l.freshMu.Unlock()
		if wantMem := map[bool]int{true: 5, false: 0}[mem > 1 && tc.tail > 0]; inMemory != wantMem {
			t.Fatalf("memory bound %d, spool tail %d: %d records in memory (of both signals), want %d", mem, tc.tail, inMemory, wantMem)
		}
		checkOnce(t, "read, buffered", r, want)

		// Written (the loader writes what it holds when it stops), then
		// more spooled and read: part files, part fresh.
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		l.Close()
		if l.inLake != sp.Stats().LastSeq {
			t.Fatalf("written through %d, want %d", l.inLake, sp.Stats().LastSeq)
		}
		checkOnce(t, "written", r, want)

		l, err = New(sp, Config{Dir: dir, Consumer: "lake", MaxDelay: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		l.freshMax = mem
		rcfg.Fresh = l
		if r, err = lakeread.New(rcfg); err != nil {
			t.Fatal(err)
		}
		more := synth.Traces(synth.Config{Seed: 20, Resources: 2, ScopesPerResource: 1, TotalRecords: 30, Start: start})
		if _, err := sp.Append(otlpwire.SignalTraces, "acme", time.Now(), more); err != nil {
			t.Fatal(err)
		}
		for id, n := range spanCounts(t, more) {
			want[id] += n
		}
		checkOnce(t, "written and spooled", r, want)
		ctx, cancel = context.WithCancel(context.Background())
		go func() { done <- l.Run(ctx) }()
		waitFor(t, func() bool {
			l.freshMu.Lock()
			defer l.freshMu.Unlock()
			return l.consumed == sp.Stats().LastSeq
		})
		checkOnce(t, "written and read", r, want)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
	}
}

// TestFreshKeepsConsecutiveRun: the loader keeps in memory only records
// the spool kept (Kept), a consecutive run up to the last one read; a
// record read from the file drops the run, and Fresh still gives every
// record not in the lake once, in order.
func TestFreshKeepsConsecutiveRun(t *testing.T) {
	sp, dir := openSpool(t)
	var bodies [][]byte
	for i := range 4 {
		b := logsWithIDs(t, int64(i+1))
		bodies = append(bodies, b)
		if _, err := sp.Append(otlpwire.SignalLogs, "acme", time.Now(), b); err != nil {
			t.Fatal(err)
		}
	}
	l, err := New(sp, Config{Dir: dir, Consumer: "lake", MaxDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i, kept := range []bool{true, false, true, true} {
		l.noteRead(spool.Record{Seq: uint64(i + 1), Signal: otlpwire.SignalLogs, Tenant: "acme", Payload: bodies[i], Kept: kept})
	}
	l.freshMu.Lock()
	var inMemory []uint64
	for _, r := range l.fresh {
		inMemory = append(inMemory, r.seq)
	}
	l.freshMu.Unlock()
	if !slices.Equal(inMemory, []uint64{3, 4}) {
		t.Fatalf("records %v in memory, want [3 4] (the run after the one read from the file)", inMemory)
	}
	var got [][]byte
	if _, err := l.Fresh(context.Background(), otlpwire.SignalLogs, "acme", func(p []byte) error {
		got = append(got, bytes.Clone(p))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, bodies, bytes.Equal) {
		t.Fatalf("Fresh gave %d payloads, want the 4 spooled, once each and in order", len(got))
	}
}
