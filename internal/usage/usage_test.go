package usage

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// oracle counts records per service.name with pdata.
func oracle(t *testing.T, sig otlpwire.Signal, b []byte) map[string]int {
	t.Helper()
	out := map[string]int{}
	name := func(r pcommon.Resource) string {
		if v, ok := r.Attributes().Get("service.name"); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			return v.Str()
		}
		return UnknownService
	}
	switch sig {
	case otlpwire.SignalLogs:
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		rls := req.Logs().ResourceLogs()
		for i := range rls.Len() {
			n := 0
			for j := range rls.At(i).ScopeLogs().Len() {
				n += rls.At(i).ScopeLogs().At(j).LogRecords().Len()
			}
			out[name(rls.At(i).Resource())] += n
		}
	case otlpwire.SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		rss := req.Traces().ResourceSpans()
		for i := range rss.Len() {
			n := 0
			for j := range rss.At(i).ScopeSpans().Len() {
				n += rss.At(i).ScopeSpans().At(j).Spans().Len()
			}
			out[name(rss.At(i).Resource())] += n
		}
	default:
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		rms := req.Metrics().ResourceMetrics()
		for i := range rms.Len() {
			one := pmetricotlp.NewExportRequest()
			rms.At(i).CopyTo(one.Metrics().ResourceMetrics().AppendEmpty())
			out[name(rms.At(i).Resource())] += one.Metrics().DataPointCount()
		}
	}
	return out
}

func TestCounts(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Registerer = prometheus.NewRegistry()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[otlpwire.Signal]map[string]int{}
	for _, sig := range otlpwire.Signals {
		rsig := sig
		want[rsig] = map[string]int{}
		for seed := range int64(20) {
			b := synth.Generate(sig, synth.Config{Seed: seed, Resources: 3, ScopesPerResource: 2, TotalRecords: 60})
			for svc, n := range oracle(t, sig, b) {
				want[rsig][svc] += n
			}
			req := &pipeline.Request{Signal: rsig, Body: b}
			if _, err := s.Consume(context.Background(), req); err != nil {
				t.Fatal(err)
			}
		}
	}
	for sig, services := range want {
		if len(services) < 2 {
			t.Fatalf("%s: test data has %d services; want several", sig, len(services))
		}
		for svc, n := range services {
			got := testutil.ToFloat64(s.records.WithLabelValues(sig.String(), svc))
			if int(got) != n {
				t.Errorf("%s %s: %v records, want %d", sig, svc, got, n)
			}
		}
	}
}

func TestMaxServices(t *testing.T) {
	s, err := New(Config{MaxServices: 2})
	if err != nil {
		t.Fatal(err)
	}
	for seed := range int64(30) {
		b := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: seed, Resources: 4, ScopesPerResource: 1, TotalRecords: 8})
		if _, err := s.Consume(context.Background(), &pipeline.Request{Signal: otlpwire.SignalLogs, Body: b}); err != nil {
			t.Fatal(err)
		}
	}
	if n := testutil.CollectAndCount(s.records); n != 3 { // two services and __other__
		t.Errorf("%d series, want 3", n)
	}
	if v := testutil.ToFloat64(s.records.WithLabelValues("logs", OtherService)); v == 0 {
		t.Error("nothing counted as __other__")
	}
}

func TestConfig(t *testing.T) {
	for _, n := range []int{0, -1} {
		if _, err := New(Config{MaxServices: n}); err == nil {
			t.Errorf("MaxServices %d accepted", n)
		}
	}
}

func TestInvalid(t *testing.T) {
	s, _ := New(DefaultConfig())
	_, err := s.Consume(context.Background(), &pipeline.Request{Signal: otlpwire.SignalLogs, Body: []byte{0x0a, 0x05, 0x0a}})
	if err == nil {
		t.Fatal("truncated request accepted")
	}
}

// TestConsumeZeroAllocs checks, in a package that consumes otlpwire, that
// ranging over its iterators in ordinary (non-test) code allocates
// nothing: Consume walks every resource of a request, reads its
// service.name and counts its records, and once each service's counters
// exist, it allocates nothing per request.
func TestConsumeZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range otlpwire.Signals {
		req := &pipeline.Request{Signal: sig, Body: synth.Generate(sig, synth.Config{Seed: 3, Resources: 5, ScopesPerResource: 2, TotalRecords: 200})}
		if _, err := s.Consume(context.Background(), req); err != nil { // creates the counters
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(20, func() { _, _ = s.Consume(context.Background(), req) }); a != 0 {
			t.Errorf("%v: Consume allocated %v times per request, want 0", sig, a)
		}
	}
}
