package synth

import (
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Traces returns an ExportTraceServiceRequest shaped by cfg: traces of one
// to eight spans (a server span, most with a remote parent, and client,
// internal, producer and consumer children), HTTP, database, RPC and
// messaging attributes, error statuses with exception events, some other
// events and links. The result is a new slice.
func Traces(cfg Config) []byte {
	g := newTracesGen(cfg, defaultProfile)
	return g.generate(cfg)
}

type tracesGen struct {
	gen
	// the span being written, for attributes that depend on each other
	method, route string
	code          int64
	ids           [][8]byte // span ids of the current trace
}

func newTracesGen(cfg Config, p profile) *tracesGen {
	return &tracesGen{gen: newGen(cfg, streamTraces, p)}
}

func (g *tracesGen) generate(cfg Config) []byte {
	return g.layout(cfg,
		func(int) { g.writeServiceResource() },
		func(int, int) string { return g.writeScope(traceScopes) },
		g.spans)
}

// spanAttrFunc writes one KeyValue of a span as field num.
type spanAttrFunc func(g *tracesGen, num protowire.Number)

var (
	serverAttrs = []spanAttrFunc{
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "http.request.method", g.method) },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "http.route", g.route) },
		func(g *tracesGen, num protowire.Number) { g.e.kvInt(num, "http.response.status_code", g.code) },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "url.scheme", "https") },
		func(g *tracesGen, num protowire.Number) {
			g.tmp = g.tmp[:0]
			for i := 0; i < len(g.route); i++ {
				if c := g.route[i]; c == '{' {
					g.tmp = strconv.AppendInt(g.tmp, int64(g.r.IntN(1_000_000)), 10)
					for i < len(g.route) && g.route[i] != '}' {
						i++
					}
				} else {
					g.tmp = append(g.tmp, c)
				}
			}
			g.e.kvStringBytes(num, "url.path", g.tmp)
		},
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "server.address", "shop.example.com") },
		func(g *tracesGen, num protowire.Number) { g.e.kvInt(num, "server.port", 443) },
		func(g *tracesGen, num protowire.Number) {
			g.e.kvString(num, "network.protocol.version", oneOf(&g.gen, []string{"1.1", "2"}))
		},
		func(g *tracesGen, num protowire.Number) {
			g.e.kvString(num, "user_agent.original", oneOf(&g.gen, userAgents))
		},
		func(g *tracesGen, num protowire.Number) {
			g.tmp = g.tmp[:0]
			g.ipv4()
			g.e.kvStringBytes(num, "client.address", g.tmp)
		},
	}
	dbAttrs = []spanAttrFunc{
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "db.system.name", "postgresql") },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "db.operation.name", g.method) },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "db.collection.name", g.route) },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "db.namespace", "shop") },
		func(g *tracesGen, num protowire.Number) {
			g.tmp = append(g.tmp[:0], g.method...)
			g.tmp = append(g.tmp, " * FROM "...)
			g.tmp = append(g.tmp, g.route...)
			g.tmp = append(g.tmp, " WHERE id = $1"...)
			g.e.kvStringBytes(num, "db.query.text", g.tmp)
		},
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "server.address", "orders-db.data.svc") },
		func(g *tracesGen, num protowire.Number) { g.e.kvInt(num, "server.port", 5432) },
	}
	rpcAttrs = []spanAttrFunc{
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "rpc.system", "grpc") },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "rpc.service", g.route) },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "rpc.method", g.method) },
		func(g *tracesGen, num protowire.Number) { g.e.kvInt(num, "rpc.grpc.status_code", g.code) },
		func(g *tracesGen, num protowire.Number) {
			g.e.kvString(num, "server.address", oneOf(&g.gen, services).name)
		},
		func(g *tracesGen, num protowire.Number) { g.e.kvInt(num, "server.port", 9090) },
	}
	messagingAttrs = []spanAttrFunc{
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "messaging.system", "kafka") },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "messaging.destination.name", g.route) },
		func(g *tracesGen, num protowire.Number) { g.e.kvString(num, "messaging.operation.type", g.method) },
		func(g *tracesGen, num protowire.Number) {
			g.e.kvString(num, "messaging.destination.partition.id", strconv.Itoa(g.r.IntN(12)))
		},
		func(g *tracesGen, num protowire.Number) {
			g.e.kvInt(num, "messaging.kafka.offset", int64(g.r.IntN(1<<40)))
		},
	}
	internalAttrs = []spanAttrFunc{
		func(g *tracesGen, num protowire.Number) {
			g.e.kvString(num, "code.function.name", oneOf(&g.gen, codeFunctions))
		},
		func(g *tracesGen, num protowire.Number) { g.e.kvInt(num, "app.items", int64(g.r.IntN(50))) },
	}
)

var (
	rpcServices    = []string{"oteldemo.CartService", "oteldemo.ProductCatalogService", "oteldemo.CurrencyService", "grpc.health.v1.Health"}
	rpcMethods     = []string{"GetCart", "AddItem", "GetProduct", "ListProducts", "Convert", "Check"}
	dbTables       = []string{"orders", "order_items", "customers", "products", "payments"}
	dbVerbs        = []string{"SELECT", "SELECT", "SELECT", "INSERT", "UPDATE"}
	internalNames  = []string{"compute-discount", "render-template", "validate-cart", "serialize-response", "apply-promotions"}
	spanEventNames = []string{"cache.miss", "retry", "message", "lock.acquired"}
	errorMessages  = []string{"connection refused", "context deadline exceeded", "too many connections", "permission denied", "upstream connect error or disconnect/reset before headers"}
	traceStates    = []string{"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", "dd=s:1;o:rum", "ot=th:8"}
)

// spans writes n Span fields of a ScopeSpans, as traces of one to eight spans.
func (g *tracesGen) spans(_, _ int, n int) {
	start := g.now - uint64(g.r.IntN(2e9))
	for n > 0 {
		k := min(n, 1+g.r.IntN(8))
		n -= k
		traceID := g.traceID()
		traceState := ""
		if !g.p.fixture && g.chance(0.1) {
			traceState = oneOf(&g.gen, traceStates)
		}
		remote := g.p.fixture || g.chance(0.6)
		var parent [8]byte
		if remote {
			parent = g.spanID()
		}
		g.ids = g.ids[:0]
		start += uint64(g.r.IntN(50_000_000))
		rootDur := uint64(5_000_000 + g.r.IntN(500_000_000))
		for i := range k {
			id := g.spanID()
			g.ids = append(g.ids, id)
			s, d := start, rootDur
			if i > 0 {
				parent = g.ids[g.r.IntN(i)]
				s += uint64(g.r.IntN(int(rootDur / 2)))
				d = uint64(g.r.IntN(int(rootDur/2))) + 100_000
			}
			g.span(traceID, id, parent, traceState, i == 0, remote, s, d)
		}
	}
}

// span writes one Span field.
func (g *tracesGen) span(traceID [16]byte, id, parent [8]byte, traceState string, root, remote bool, start, dur uint64) {
	e := g.e
	var kind uint64
	var attrs []spanAttrFunc
	g.tmp = g.tmp[:0]
	isError := false
	switch x := g.r.IntN(10); {
	case root:
		kind, attrs = spanKindServer, serverAttrs
		g.method, g.route = oneOf(&g.gen, httpMethods), oneOf(&g.gen, httpRoutes)
		g.code = oneOf(&g.gen, httpCodes)
		isError = g.code >= 500
		g.tmp = append(append(append(g.tmp, g.method...), ' '), g.route...)
	case x < 4:
		kind, attrs = spanKindClient, dbAttrs
		g.method, g.route = oneOf(&g.gen, dbVerbs), oneOf(&g.gen, dbTables)
		g.tmp = append(append(append(g.tmp, g.method...), " shop."...), g.route...)
		isError = g.chance(0.03)
	case x < 6:
		kind, attrs = spanKindClient, rpcAttrs
		g.method, g.route = oneOf(&g.gen, rpcMethods), oneOf(&g.gen, rpcServices)
		g.code = 0
		if isError = g.chance(0.04); isError {
			g.code = 14 // UNAVAILABLE
		}
		g.tmp = append(append(append(g.tmp, g.route...), '/'), g.method...)
	case x == 6:
		kind, attrs = spanKindProducer, messagingAttrs
		g.method, g.route = "send", oneOf(&g.gen, topics)
		g.tmp = append(append(g.tmp, "send "...), g.route...)
	case x == 7:
		kind, attrs = spanKindConsumer, messagingAttrs
		g.method, g.route = "process", oneOf(&g.gen, topics)
		g.tmp = append(append(g.tmp, "process "...), g.route...)
	default:
		kind, attrs = spanKindInternal, internalAttrs
		g.tmp = append(g.tmp, oneOf(&g.gen, internalNames)...)
	}

	e.begin(scopeContainerRecords)
	e.bytes(spanTraceID, traceID[:])
	e.bytes(spanSpanID, id[:])
	e.str(spanTraceState, traceState)
	e.bytes(spanParentSpanID, parent[:])
	flags := uint32(0x101) // sampled; whether the parent is remote is known
	if root && remote {
		flags |= 0x200
	}
	e.fixed32(spanFlags, flags)
	e.bytes(spanName, g.tmp) // g.tmp is free after this
	e.varint(spanKind, kind)
	e.fixed64(spanStartTime, start)
	e.fixed64(spanEndTime, start+dur)

	// Attributes: the kind's, then a few common ones; the fixture has 4-8.
	n := len(attrs) + g.r.IntN(4)
	if g.p.fixture {
		n = g.attrCount(0, 0)
	}
	for i := range min(n, len(attrs)) {
		attrs[i](g, spanAttributes)
	}
	if n > len(attrs) {
		for _, i := range g.pick(n-len(attrs), len(commonAttrs)) {
			commonAttrs[i](&g.gen, spanAttributes)
		}
	}
	if !g.p.fixture && g.chance(0.01) {
		e.varint(spanDroppedAttrs, uint64(1+g.r.IntN(16)))
	}

	if isError {
		g.exceptionEvent(start + dur/2)
	}
	if g.chance(0.1) {
		for range 1 + g.r.IntN(2) {
			e.begin(spanEvents)
			e.fixed64(eventTime, start+uint64(g.r.IntN(int(dur))))
			e.str(eventName, oneOf(&g.gen, spanEventNames))
			if g.chance(0.7) {
				e.kvInt(eventAttributes, "app.attempt", int64(1+g.r.IntN(3)))
			}
			e.end()
		}
	}
	if !g.p.fixture && g.chance(0.005) {
		e.varint(spanDroppedEvents, uint64(1+g.r.IntN(4)))
	}
	if kind == spanKindConsumer || g.chance(0.03) {
		lt, ls := g.traceID(), g.spanID()
		e.begin(spanLinks)
		e.bytes(linkTraceID, lt[:])
		e.bytes(linkSpanID, ls[:])
		e.kvString(linkAttributes, "messaging.operation.type", "send")
		e.fixed32(linkFlags, 0x101)
		e.end()
	}
	if !g.p.fixture && g.chance(0.005) {
		e.varint(spanDroppedLinks, uint64(1+g.r.IntN(4)))
	}

	// The SDKs always send a status, empty when unset.
	e.begin(spanStatus)
	switch {
	case isError && kind == spanKindServer:
		e.varint(statusCode, statusError)
	case isError:
		e.str(statusMessage, oneOf(&g.gen, errorMessages))
		e.varint(statusCode, statusError)
	case g.chance(0.1):
		e.varint(statusCode, statusOK)
	}
	e.end()
	e.end()
}

// exceptionEvent writes an "exception" Span.Event field at time t.
func (g *tracesGen) exceptionEvent(t uint64) {
	e := g.e
	e.begin(spanEvents)
	e.fixed64(eventTime, t)
	e.str(eventName, "exception")
	e.kvString(eventAttributes, "exception.type", oneOf(&g.gen, errorTypes))
	e.kvString(eventAttributes, "exception.message", oneOf(&g.gen, errorMessages))
	e.kvString(eventAttributes, "exception.stacktrace", "goroutine 1 [running]:\nmain.(*Server).handleOrder(...)\n\t/app/internal/server/orders.go:142 +0x1c5\nmain.main()\n\t/app/main.go:37 +0x85\n")
	e.end()
}
