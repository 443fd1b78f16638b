// Package graphtest makes traces for the service graph's tests: a
// request of one trace across two services with every kind of edge, and
// the dependencies it makes.
package graphtest

import (
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Services are the services of Trace and the virtual nodes its edges
// make.
var Services = []string{"frontend", "backend", "orders", "payments", "user"}

// Edges are the (parent, child) edges one Trace makes, sorted: a root
// server span's from user, a client/server pair (its client failed), a
// database call and a call to an uninstrumented peer.
var Edges = [][2]string{{"backend", "orders"}, {"backend", "payments"}, {"frontend", "backend"}, {"user", "frontend"}}

// Trace is an OTLP traces request of one trace, its ids made from id,
// its spans starting at now: frontend's root server span "GET /" calls
// backend ("call backend", failed; frontend's resource has
// service.instance.id i-1 and deployment.environment prod); backend's
// "handle" queries the database orders (db.system postgresql, db.name
// orders) and calls payments (peer.service), which sends no spans. With
// a prefix, every service name (and db.name, peer.service) starts with
// it.
func Trace(id byte, now time.Time, prefix ...string) []byte {
	p := ""
	if len(prefix) > 0 {
		p = prefix[0]
	}
	td := ptrace.NewTraces()
	add := func(svc string, attrs map[string]string, spans ...func(ptrace.Span)) {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		for k, v := range attrs {
			rs.Resource().Attributes().PutStr(k, v)
		}
		ss := rs.ScopeSpans().AppendEmpty()
		for _, f := range spans {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{id, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
			f(sp)
		}
	}
	span := func(name string, kind ptrace.SpanKind, sid, parent byte, ms int, attrs map[string]string) func(ptrace.Span) {
		return func(sp ptrace.Span) {
			sp.SetName(name)
			sp.SetKind(kind)
			sp.SetSpanID(pcommon.SpanID{id, 0, 0, 0, 0, 0, 0, sid})
			if parent != 0 {
				sp.SetParentSpanID(pcommon.SpanID{id, 0, 0, 0, 0, 0, 0, parent})
			}
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Duration(ms) * time.Millisecond)))
			if name == "call backend" {
				sp.Status().SetCode(ptrace.StatusCodeError)
			}
			for k, v := range attrs {
				sp.Attributes().PutStr(k, v)
			}
		}
	}
	add(p+"frontend", map[string]string{"service.instance.id": "i-1", "deployment.environment": "prod"},
		span("GET /", ptrace.SpanKindServer, 1, 0, 5, nil),
		span("call backend", ptrace.SpanKindClient, 2, 1, 12, nil))
	add(p+"backend", nil,
		span("handle", ptrace.SpanKindServer, 3, 2, 8, nil),
		span("query", ptrace.SpanKindClient, 4, 3, 3, map[string]string{"db.system": "postgresql", "db.name": p + "orders"}),
		span("call payments", ptrace.SpanKindClient, 5, 3, 50, map[string]string{"peer.service": p + "payments"}))
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		panic(err) // pdata marshals what it built
	}
	return b
}
