package overrides

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, text string) (*Overrides, string, *prometheus.Registry) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "overrides.yaml")
	write(t, path, text)
	reg := prometheus.NewRegistry()
	c := DefaultConfig()
	c.Path, c.Registerer, c.ReloadEvery = path, reg, time.Millisecond
	o, err := Load(c)
	if err != nil {
		t.Fatal(err)
	}
	return o, path, reg
}

// TestParse: a tenant's block starts from the defaults; the default
// tenant goes by its name; unknown fields and bad values are errors.
func TestParse(t *testing.T) {
	o, _, _ := load(t, `
defaults:
  logs: {records_per_second: 100, bytes_per_second: 1MiB}
  inflight_share: 0.5
overrides:
  a:
    logs: {records_per_second: 10}
    traces: {records_per_second: 7, records_burst: 70}
    max_active_series: 1000
    max_concurrent_queries: 2
    max_query_range: 30d
  default:
    inflight_share: 0.25
`)
	a := o.For("a")
	// Field by field: a's logs keep the default's bytes_per_second.
	if a.Logs.Records != 10 || a.Logs.Bytes != 1<<20 || a.Traces.RecordsBurst != 70 || a.InflightShare != 0.5 {
		t.Errorf("a: %+v", a)
	}
	if q := o.QueryLimits("a"); q.MaxConcurrent != 2 || q.MaxRange != 30*24*time.Hour || o.SeriesLimit("a") != 1000 {
		t.Errorf("a's query and series limits: %+v, %d", q, o.SeriesLimit("a"))
	}
	if d := o.For(""); d.InflightShare != 0.25 || d.Logs.Records != 100 || d.Logs.Bytes != 1<<20 {
		t.Errorf("default tenant: %+v", d)
	}
	if d := o.For("default"); d.InflightShare != 0.25 {
		t.Errorf("the default tenant by its name (the read side's): %+v", d)
	}
	if z := o.For("zed"); z.Logs.Records != 100 || z.InflightShare != 0.5 {
		t.Errorf("unlisted tenant: %+v", z)
	}
	for _, bad := range []string{
		"defaults: {logz: {}}",
		"overrides: {a: {logs: {records_per_second: -1}}}",
		"overrides: {a: {inflight_share: 2}}",
		"overrides: {'a b': {}}",
		"overrides: {a: {logs: {bytes_per_second: 1 furlong}}}",
		"defaults: [1, 2]",
		"overrides: {a: {max_active_series: -1}}",
		"overrides: {a: {max_query_range: 1 fortnight}}",
		"overrides: {a: {max_concurrent_queries: -3}}",
	} {
		if _, err := parse([]byte(bad), "default"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if tb, err := parse(nil, "default"); err != nil || len(tb.tenants) != 0 {
		t.Errorf("empty file: %v", err)
	}
}

// TestAdmit: a request fits while its tenant's bucket holds its records
// and bytes; then it is refused as overloaded with the wait until it
// would fit, and counted; a request larger than a burst is too large;
// other tenants and signals are not touched.
func TestAdmit(t *testing.T) {
	o, _, reg := load(t, `
overrides:
  a:
    logs: {records_per_second: 10, records_burst: 20}
  c:
    logs: {records_per_second: 10, bytes_per_second: 1000}
`)
	if err := o.Admit("a", otlpwire.SignalLogs, 20, 100); err != nil {
		t.Fatalf("first 20: %v", err)
	}
	err := o.Admit("a", otlpwire.SignalLogs, 5, 100)
	var pe *pipeline.Error
	if !errors.As(err, &pe) || pe.Kind != pipeline.KindOverloaded || pe.RetryAfter < 400*time.Millisecond || pe.RetryAfter > 600*time.Millisecond {
		t.Fatalf("over the rate: %v (%+v)", err, pe)
	}
	if err := o.Admit("a", otlpwire.SignalLogs, 21, 100); !errors.As(err, &pe) || pe.Kind != pipeline.KindTooLarge {
		t.Fatalf("over the burst: %v", err)
	}
	// Bytes: c's request whose bytes do not fit gives its records back.
	if err := o.Admit("c", otlpwire.SignalLogs, 5, 900); err != nil {
		t.Fatal(err)
	}
	if err := o.Admit("c", otlpwire.SignalLogs, 5, 999); !errors.As(err, &pe) || !strings.Contains(pe.Error(), "bytes_rate") {
		t.Fatalf("bytes over the rate: %v", err)
	}
	if err := o.Admit("c", otlpwire.SignalLogs, 5, 50); err != nil {
		t.Fatalf("records given back: %v", err)
	}
	if err := o.Admit("c", otlpwire.SignalLogs, 1, 1); !errors.As(err, &pe) || !strings.Contains(pe.Error(), "records_rate") {
		t.Fatalf("records spent: %v", err)
	}
	for _, ok := range []struct {
		tenant string
		sig    otlpwire.Signal
	}{{"b", otlpwire.SignalLogs}, {"a", otlpwire.SignalTraces}, {"", otlpwire.SignalLogs}} {
		if err := o.Admit(ok.tenant, ok.sig, 1000, 1<<20); err != nil {
			t.Errorf("%q %s: %v", ok.tenant, ok.sig, err)
		}
	}
	if n := testutil.ToFloat64(o.refusedRecs.WithLabelValues("a", "logs", "records_rate")); n != 5 {
		t.Errorf("refused records_rate records %v, want 5", n)
	}
	if n, err := testutil.GatherAndCount(reg, "wirehouse_tenant_refused_requests_total"); err != nil || n != 4 {
		t.Errorf("%d refusal series (%v), want 4", n, err)
	}
}

// TestReload: a changed file takes effect at the next request, its
// buckets full; a file that fails to parse leaves the
// limits in force and is counted.
func TestReload(t *testing.T) {
	o, path, reg := load(t, "overrides: {a: {metrics: {records_per_second: 1, records_burst: 1}}}\n")
	if err := o.Admit("a", otlpwire.SignalMetrics, 1, 1); err != nil {
		t.Fatal(err)
	}
	if err := o.Admit("a", otlpwire.SignalMetrics, 1, 1); err == nil {
		t.Fatal("second point within the second admitted")
	}
	write(t, path, "overrides: {a: {metrics: {records_per_second: 1000000}}}\n")
	time.Sleep(5 * time.Millisecond)
	if err := o.Admit("a", otlpwire.SignalMetrics, 1000, 1); err != nil {
		t.Fatalf("after the reload: %v", err)
	}
	write(t, path, "overrides: {a: {metrics: {records_per_second: nope}}}\n")
	time.Sleep(5 * time.Millisecond)
	if l := o.For("a"); l.Metrics.Records != 1000000 {
		t.Fatalf("a bad file replaced the limits: %+v", l)
	}
	if n := testutil.ToFloat64(o.reloads.WithLabelValues("error")); n != 1 {
		t.Errorf("%v failed reloads counted, want 1", n)
	}
	if n := testutil.ToFloat64(o.reloads.WithLabelValues("ok")); n != 1 {
		t.Errorf("%v reloads counted, want 1", n)
	}
	_ = reg
}
