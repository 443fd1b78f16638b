package tracemetrics

import (
	"context"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/tracemetrics/graphtest"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestRunCursor: Run commits its cursor past records of other signals
// within seconds, however long its flush interval, so that it holds no
// spool segment back for them; past a traces record only once a flush
// holds its spans (here, the last one, when Run stops), which it writes.
func TestRunCursor(t *testing.T) {
	cfg := spool.DefaultConfig()
	cfg.Dir = t.TempDir()
	sp, err := spool.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	cons, err := sp.Consumer("tracemetrics")
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(DefaultConfig(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var writes int
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- g.Run(ctx, cons, time.Hour, func(string, []byte) error { writes++; return nil })
	}()
	var seq uint64
	for range 3 {
		if seq, err = sp.Append(otlpwire.SignalLogs, "default", time.Now(), []byte{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for cons.Committed() != seq {
		if time.Now().After(deadline) {
			t.Fatalf("cursor at %d, not past the logs records (%d)", cons.Committed(), seq)
		}
		time.Sleep(50 * time.Millisecond)
	}
	traces, err := sp.Append(otlpwire.SignalTraces, "default", time.Now(), graphtest.Trace(1, time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	logs, err := sp.Append(otlpwire.SignalLogs, "default", time.Now(), []byte{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if c := cons.Committed(); c >= traces {
		t.Errorf("cursor at %d, past the traces record %d before a flush", c, traces)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if c := cons.Committed(); c != logs || writes != 1 {
		t.Errorf("after the last flush: cursor %d (want %d), %d writes (want 1)", c, logs, writes)
	}
}
