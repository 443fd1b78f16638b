package eval

import (
	"reflect"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/traceql"
)

// TestAddOTLP: every field TraceQL reads, from a span built with pdata,
// values of every type as TraceQL sees them.
func TestAddOTLP(t *testing.T) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "api")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("lib")
	ss.Scope().SetVersion("2.0")
	ss.Scope().Attributes().PutBool("sampled", true)
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1, 2})
	sp.SetSpanID(pcommon.SpanID{3})
	sp.SetParentSpanID(pcommon.SpanID{4})
	sp.SetName("GET /x")
	sp.SetKind(ptrace.SpanKindProducer)
	sp.Status().SetCode(ptrace.StatusCodeError)
	sp.Status().SetMessage("boom")
	sp.SetStartTimestamp(100)
	sp.SetEndTimestamp(250)
	a := sp.Attributes()
	a.PutStr("s", "v")
	a.PutInt("i", -7)
	a.PutDouble("f", 1.5)
	a.PutBool("b", true)
	a.PutEmptyBytes("raw").FromRaw([]byte{0xca, 0xfe})
	arr := a.PutEmptySlice("arr")
	arr.AppendEmpty().SetInt(1)
	arr.AppendEmpty().SetStr("two")
	a.PutEmptyMap("m").PutDouble("k", 0.5)
	ev := sp.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(200)
	ev.Attributes().PutStr("exception.type", "E")
	ln := sp.Links().AppendEmpty()
	ln.SetTraceID(pcommon.TraceID{9})
	ln.SetSpanID(pcommon.SpanID{8})
	ln.Attributes().PutInt("w", 3)
	raw, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[[16]byte]*Trace{}
	var order [][16]byte
	if err := AddOTLP(byID, &order, raw); err != nil {
		t.Fatal(err)
	}
	s := func(v string) Value { return Value{Type: traceql.TypeString, S: v} }
	want := Span{TraceID: [16]byte{1, 2}, SpanID: [8]byte{3}, ParentID: [8]byte{4}, Name: "GET /x", Kind: traceql.KindProducer,
		Status: traceql.StatusError, StatusMessage: "boom", StartUnixNano: 100, EndUnixNano: 250,
		Attrs: []KeyValue{{"s", s("v")}, {"i", Value{Type: traceql.TypeInt, I: -7}}, {"f", Value{Type: traceql.TypeFloat, F: 1.5}},
			{"b", Value{Type: traceql.TypeBool, B: true}}, {"raw", s("cafe")}, {"arr", s(`[1,"two"]`)}, {"m", s(`{"k":0.5}`)}},
		Resource:  []KeyValue{{"service.name", s("api")}},
		ScopeName: "lib", ScopeVersion: "2.0", ScopeAttrs: []KeyValue{{"sampled", Value{Type: traceql.TypeBool, B: true}}},
		Events: []Event{{Name: "exception", TimeUnixNano: 200, Attrs: []KeyValue{{"exception.type", s("E")}}}},
		Links:  []Link{{TraceID: [16]byte{9}, SpanID: [8]byte{8}, Attrs: []KeyValue{{"w", Value{Type: traceql.TypeInt, I: 3}}}}},
	}
	if len(order) != 1 || order[0] != want.TraceID || len(byID[want.TraceID].Spans) != 1 {
		t.Fatalf("traces %v", order)
	}
	if got := byID[want.TraceID].Spans[0]; !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	if err := AddOTLP(byID, &order, []byte{0x0a, 0xff}); err == nil {
		t.Fatal("a truncated request read without an error")
	}
}
