package spool

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// config is DefaultConfig in dir, changed by set.
func config(dir string, set ...func(*Config)) Config {
	c := DefaultConfig()
	c.Dir = dir
	for _, f := range set {
		f(&c)
	}
	return c
}

// open opens a spool with config(dir, set...) and closes it at the end
// of the test.
func open(t testing.TB, dir string, set ...func(*Config)) *Spool {
	t.Helper()
	s, err := Open(config(dir, set...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// payloadOf is the payload of test record i: n bytes derived from i.
func payloadOf(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*7 + j)
	}
	return b
}

// appendN appends records from..to-1 with 100-byte payloads.
func appendN(t testing.TB, s *Spool, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		seq, err := s.Append(otlpwire.SignalLogs, fmt.Sprint("tenant-", i%3), time.Unix(int64(i), 0), payloadOf(i, 100))
		if err != nil {
			t.Fatal(err)
		}
		if seq != uint64(i) {
			t.Fatalf("Append %d: seq %d", i, seq)
		}
	}
}

// next reads one record and checks it is test record seq.
func next(t testing.TB, c *Consumer, seq uint64) Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := c.Next(ctx)
	if err != nil {
		t.Fatalf("Next (want %d): %v", seq, err)
	}
	if r.Seq != seq {
		t.Fatalf("Next: seq %d, want %d", r.Seq, seq)
	}
	if want := payloadOf(int(seq), len(r.Payload)); !bytes.Equal(r.Payload, want) {
		t.Fatalf("record %d: payload differs", seq)
	}
	return r
}

// segFiles lists the segment file names of dir.
func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
