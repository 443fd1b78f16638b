package synth

import (
	"bytes"
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// seed000 builds the seed-000 fixture the way the seed report's benchmark
// does, with pdata, and marshals it: the bytes Fixture(s, Descending) must
// reproduce exactly.
func seed000(t *testing.T, s otlpwire.Signal) []byte {
	t.Helper()
	var b []byte
	var err error
	switch s {
	case otlpwire.SignalLogs:
		ld := plog.NewLogs()
		for i := range 5 {
			rl := ld.ResourceLogs().AppendEmpty()
			seedResource(rl.Resource().Attributes().PutStr, i)
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName("test-instrumentation")
			sl.Scope().SetVersion("1.0.0")
			for range 100 {
				lr := sl.LogRecords().AppendEmpty()
				lr.Body().SetStr("Test log message with some content")
				lr.SetTimestamp(1000000000)
				lr.SetSeverityNumber(plog.SeverityNumberInfo)
				lr.SetSeverityText("INFO")
				lr.Attributes().PutStr("log.level", "info")
				lr.Attributes().PutStr("logger.name", "test.logger")
			}
		}
		b, err = (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	case otlpwire.SignalTraces:
		td := ptrace.NewTraces()
		for i := range 5 {
			rs := td.ResourceSpans().AppendEmpty()
			seedResource(rs.Resource().Attributes().PutStr, i)
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("test-instrumentation")
			ss.Scope().SetVersion("1.0.0")
			for range 100 {
				sp := ss.Spans().AppendEmpty()
				sp.SetName("test.operation")
				sp.SetKind(ptrace.SpanKindServer)
				sp.SetStartTimestamp(1000000000)
				sp.SetEndTimestamp(1000001000)
				sp.Attributes().PutStr("http.method", "GET")
				sp.Attributes().PutStr("http.status_code", "200")
			}
		}
		b, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	case otlpwire.SignalMetrics:
		md := pmetric.NewMetrics()
		for i := range 5 {
			rm := md.ResourceMetrics().AppendEmpty()
			seedResource(rm.Resource().Attributes().PutStr, i)
			sm := rm.ScopeMetrics().AppendEmpty()
			sm.Scope().SetName("test-instrumentation")
			sm.Scope().SetVersion("1.0.0")
			m := sm.Metrics().AppendEmpty()
			m.SetName("request.count")
			m.SetDescription("Number of requests")
			m.SetUnit("1")
			g := m.SetEmptyGauge()
			for j := range 100 {
				dp := g.DataPoints().AppendEmpty()
				dp.SetIntValue(int64(j))
				dp.SetTimestamp(1000000000)
				dp.Attributes().PutStr("method", "GET")
				dp.Attributes().PutStr("status", "200")
			}
		}
		b, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func seedResource(put func(k, v string), i int) {
	put("service.name", "service-"+string(rune('A'+i)))
	put("host.name", "host-"+string(rune('1'+i)))
	put("deployment.environment", "production")
}

func TestFixtureIsSeed000(t *testing.T) {
	for _, s := range signals {
		t.Run("signal="+s.String(), func(t *testing.T) {
			want := seed000(t, s)
			got := Fixture(s, Descending)
			if !bytes.Equal(got, want) {
				t.Fatalf("Fixture(%s, Descending) differs from pdata's seed-000 bytes at byte %d (%d vs %d bytes)", s, firstDiff(got, want), len(got), len(want))
			}
			asc := Fixture(s, Ascending)
			checkOrders(t, s, asc, got)
			if _, n, _ := decode(t, s, asc); n != 500 {
				t.Errorf("%d records, want 500", n)
			}
		})
	}
}
