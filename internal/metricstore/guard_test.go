package metricstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestFailedWritesCounters: the registerer given to the TSDB finds the
// failed-writes counter of the WAL, and of the WBL when there is one, and
// reads them.
func TestFailedWritesCounters(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*Config)
		want int
	}{
		{"wal", func(*Config) {}, 1},
		{"wal+wbl", func(c *Config) { c.OutOfOrderWindow = time.Hour }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, t.TempDir(), tc.set)
			g, err := s.db.acquire()
			if err != nil {
				t.Fatal(err)
			}
			if n := len(g.reg.failed); n != tc.want {
				t.Errorf("%d failed-writes counters found, want %d", n, tc.want)
			}
			if n := g.reg.failedWrites(); n != 0 {
				t.Errorf("failed writes %v on a new store", n)
			}
			g.users.Done()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// gathered returns the names of the metric families reg gathers.
func gathered(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	return names
}

// TestRegistererUnregisters: Close takes every metric the TSDB and the
// Store registered out of the registry, so that a store opened again on
// it (as a reopen does) registers them again.
func TestRegistererUnregisters(t *testing.T) {
	reg := prometheus.NewRegistry()
	dir := t.TempDir()
	for range 2 {
		s := open(t, dir, func(c *Config) { c.Registerer = reg })
		if _, err := s.AppendOTLP(context.Background(), "", gaugeRequest(t, t0, 1)); err != nil {
			t.Fatal(err)
		}
		names := strings.Join(gathered(t, reg), " ")
		for _, want := range []string{"prometheus_tsdb_wal_writes_failed_total", "prometheus_tsdb_head_series", "wirehouse_metricstore_accepting", "wirehouse_metricstore_reopens_total"} {
			if !strings.Contains(names, want) {
				t.Errorf("registry lacks %s: %s", want, names)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if left := gathered(t, reg); len(left) > 0 {
			t.Errorf("left registered after Close: %v", left)
		}
	}
}
