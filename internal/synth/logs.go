package synth

import (
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// Logs returns an ExportLogsServiceRequest shaped by cfg: log records with
// ~47-byte string bodies, 10-20 attributes, severities from DEBUG to FATAL,
// and trace and span ids on most records, from service instances running
// in Kubernetes. The result is a new slice.
func Logs(cfg Config) []byte {
	g := newLogsGen(cfg, defaultProfile)
	return g.generate(cfg)
}

// SeedLogs returns logs shaped like the workload of the lake's seed report
// (seeds/001): ~47-byte string bodies and about 15 attributes per record
// across resource, scope and record (5 resource attributes, 9-10 record
// attributes, the scope's own). Otherwise it is Logs(cfg).
func SeedLogs(cfg Config) []byte {
	g := newLogsGen(cfg, seedLogsProfile)
	return g.generate(cfg)
}

var seedLogsProfile = profile{resourceAttrs: [2]int{5, 5}, recordAttrs: [2]int{9, 10}}

type logsGen struct {
	gen
}

func newLogsGen(cfg Config, p profile) *logsGen {
	return &logsGen{gen: newGen(cfg, streamLogs, p)}
}

func (g *logsGen) generate(cfg Config) []byte {
	return g.layout(cfg,
		func(int) { g.writeServiceResource() },
		func(int, int) string { return g.writeScope(logScopes) },
		g.records)
}

// severity is a SeverityNumber with its text and how often it occurs.
type severity struct {
	number uint64
	text   string
	weight float64 // cumulative probability
}

var severities = []severity{
	{5, "DEBUG", 0.10},
	{9, "INFO", 0.80},
	{13, "WARN", 0.92},
	{17, "ERROR", 0.99},
	{21, "FATAL", 1},
}

var logEventNames = []string{"session.start", "session.end", "device.app.lifecycle", "feature_flag.evaluation"}

// records writes n LogRecord fields of a ScopeLogs.
func (g *logsGen) records(_, _ int, n int) {
	e := g.e
	ts := g.now - uint64(g.r.IntN(1e9))
	var traceID [16]byte
	var spanID [8]byte
	haveTrace := false
	for range n {
		ts += uint64(g.r.IntN(2_000_000))
		e.begin(scopeContainerRecords)
		if g.p.fixture || !g.chance(0.05) {
			e.fixed64(logTime, ts)
		}
		e.fixed64(logObservedTime, ts+uint64(200_000+g.r.IntN(50_000_000)))
		sev := severities[len(severities)-1]
		x := g.r.Float64()
		for _, s := range severities {
			if x < s.weight {
				sev = s
				break
			}
		}
		e.varint(logSeverityNumber, sev.number)
		e.str(logSeverityText, sev.text)

		g.tmp = g.tmp[:0]
		g.logBody()
		e.begin(logBody)
		e.bytesAlways(anyValueString, g.tmp)
		e.end()

		for _, i := range g.pick(g.attrCount(10, 20), len(commonAttrs)) {
			commonAttrs[i](&g.gen, logAttributes)
		}
		if !g.p.fixture && g.chance(0.01) {
			e.varint(logDroppedAttrs, uint64(1+g.r.IntN(8)))
		}
		if g.p.fixture || g.chance(0.8) {
			if !haveTrace || g.chance(0.3) {
				traceID, spanID, haveTrace = g.traceID(), g.spanID(), true
			} else if g.chance(0.5) {
				spanID = g.spanID()
			}
			e.fixed32(logFlags, 1)
			e.bytes(logTraceID, traceID[:])
			e.bytes(logSpanID, spanID[:])
		}
		if !g.p.fixture && g.chance(0.03) {
			e.str(logEventName, oneOf(&g.gen, logEventNames))
		}
		e.end()
	}
}

var (
	httpMethods = []string{"GET", "GET", "GET", "POST", "POST", "PUT", "DELETE", "PATCH"}
	httpRoutes  = []string{"/api/v1/orders/{id}", "/api/v1/cart", "/api/v1/products/{id}", "/checkout", "/api/v1/users/{id}/sessions", "/healthz", "/api/v2/search", "/api/v1/payments/{id}/capture"}
	httpCodes   = []int64{200, 200, 200, 200, 200, 201, 204, 301, 400, 401, 404, 409, 429, 500, 502, 503}
	userAgents  = []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
		"okhttp/4.12.0",
		"Go-http-client/1.1",
		"python-requests/2.32.3",
	}
	codeFunctions = []string{"main.(*Server).handleOrder", "com.acme.payment.PaymentService.capture", "handlers.checkout", "CartService.AddItem", "search.query.execute", "db.(*Pool).Acquire"}
	codeFiles     = []string{"/app/internal/server/orders.go", "PaymentService.java", "/usr/src/app/handlers.py", "src/CartService.cs", "/app/search/query.py", "/app/internal/db/pool.go"}
	threadNames   = []string{"main", "http-nio-8080-exec-3", "grpc-default-executor-1", "worker-7", "ForkJoinPool.commonPool-worker-2"}
	loggerNames   = []string{"com.acme.payment.PaymentService", "orders", "http.access", "sqlalchemy.engine", "Microsoft.AspNetCore.Hosting.Diagnostics", "kafka.consumer"}
	dbSystems     = []string{"postgresql", "mysql", "redis", "mongodb"}
	dbOperations  = []string{"SELECT", "INSERT", "UPDATE", "GET", "SET", "find"}
	topics        = []string{"orders", "orders-v2", "payments.captured", "inventory-updates", "email-outbox"}
	errorTypes    = []string{"java.net.SocketTimeoutException", "context.DeadlineExceeded", "ConnectionRefusedError", "System.InvalidOperationException", "500"}
	featureFlags  = []string{"new-checkout-flow", "recommendations-v2", "dark-mode", "fast-shipping-quote"}
	tiers         = []string{"free", "pro", "enterprise"}
)

// attrFunc writes one KeyValue as field num.
type attrFunc func(g *gen, num protowire.Number)

// commonAttrs are the attributes of log records, and extra attributes of
// spans: semantic-convention and application keys with typed values.
var commonAttrs = []attrFunc{
	func(g *gen, num protowire.Number) { g.e.kvString(num, "http.request.method", oneOf(g, httpMethods)) },
	func(g *gen, num protowire.Number) { g.e.kvString(num, "http.route", oneOf(g, httpRoutes)) },
	func(g *gen, num protowire.Number) {
		g.e.kvInt(num, "http.response.status_code", oneOf(g, httpCodes))
	},
	func(g *gen, num protowire.Number) {
		g.tmp = append(g.tmp[:0], "/api/v1/orders/"...)
		g.tmp = strconv.AppendInt(g.tmp, int64(g.r.IntN(10_000_000)), 10)
		g.e.kvStringBytes(num, "url.path", g.tmp)
	},
	func(g *gen, num protowire.Number) { g.e.kvString(num, "server.address", oneOf(g, services).name) },
	func(g *gen, num protowire.Number) {
		g.e.kvInt(num, "server.port", oneOf(g, []int64{8080, 443, 9090, 5432, 6379}))
	},
	func(g *gen, num protowire.Number) {
		g.tmp = g.tmp[:0]
		g.ipv4()
		g.e.kvStringBytes(num, "client.address", g.tmp)
	},
	func(g *gen, num protowire.Number) { g.e.kvString(num, "user_agent.original", oneOf(g, userAgents)) },
	func(g *gen, num protowire.Number) {
		g.e.kvString(num, "network.protocol.version", oneOf(g, []string{"1.1", "2"}))
	},
	func(g *gen, num protowire.Number) { g.e.kvString(num, "code.function.name", oneOf(g, codeFunctions)) },
	func(g *gen, num protowire.Number) { g.e.kvString(num, "code.file.path", oneOf(g, codeFiles)) },
	func(g *gen, num protowire.Number) { g.e.kvInt(num, "code.line.number", int64(10+g.r.IntN(900))) },
	func(g *gen, num protowire.Number) { g.e.kvInt(num, "thread.id", int64(1+g.r.IntN(200))) },
	func(g *gen, num protowire.Number) { g.e.kvString(num, "thread.name", oneOf(g, threadNames)) },
	func(g *gen, num protowire.Number) { g.e.kvString(num, "logger.name", oneOf(g, loggerNames)) },
	func(g *gen, num protowire.Number) {
		g.tmp = append(g.tmp[:0], "user-"...)
		g.tmp = strconv.AppendInt(g.tmp, int64(g.r.IntN(100_000)), 10)
		g.e.kvStringBytes(num, "enduser.id", g.tmp)
	},
	func(g *gen, num protowire.Number) {
		g.tmp = g.tmp[:0]
		g.uuid()
		g.e.kvStringBytes(num, "session.id", g.tmp)
	},
	func(g *gen, num protowire.Number) {
		g.tmp = g.tmp[:0]
		g.hex(16)
		g.e.kvStringBytes(num, "http.request.header.x-request-id", g.tmp)
	},
	func(g *gen, num protowire.Number) {
		g.tmp = append(g.tmp[:0], "tenant-"...)
		g.tmp = strconv.AppendInt(g.tmp, int64(g.r.IntN(500)), 10)
		g.e.kvStringBytes(num, "app.tenant.id", g.tmp)
	},
	func(g *gen, num protowire.Number) {
		g.e.kvDouble(num, "app.duration_ms", float64(g.r.IntN(500_000))/1000)
	},
	func(g *gen, num protowire.Number) { g.e.kvInt(num, "http.request.resend_count", int64(g.r.IntN(4))) },
	func(g *gen, num protowire.Number) { g.e.kvBool(num, "app.cache.hit", g.chance(0.7)) },
	func(g *gen, num protowire.Number) { g.e.kvString(num, "db.system.name", oneOf(g, dbSystems)) },
	func(g *gen, num protowire.Number) { g.e.kvString(num, "db.operation.name", oneOf(g, dbOperations)) },
	func(g *gen, num protowire.Number) {
		g.e.kvString(num, "messaging.destination.name", oneOf(g, topics))
	},
	func(g *gen, num protowire.Number) { g.e.kvString(num, "feature_flag.key", oneOf(g, featureFlags)) },
	func(g *gen, num protowire.Number) { g.e.kvString(num, "error.type", oneOf(g, errorTypes)) },
	func(g *gen, num protowire.Number) {
		g.e.kvInt(num, "http.request.body.size", int64(g.r.IntN(64<<10)))
	},
	func(g *gen, num protowire.Number) { g.e.kvString(num, "app.customer.tier", oneOf(g, tiers)) },
	func(g *gen, num protowire.Number) { g.e.kvBool(num, "app.synthetic", g.chance(0.05)) },
}

// logBody appends a log message of about 47 bytes to g.tmp.
func (g *gen) logBody() {
	num := func(n int) { g.tmp = strconv.AppendInt(g.tmp, int64(g.r.IntN(n)), 10) }
	str := func(s string) { g.tmp = append(g.tmp, s...) }
	switch g.r.IntN(10) {
	case 0:
		str("GET /api/v1/orders/")
		num(10_000_000)
		str(" 200 ")
		num(900)
		str("ms")
	case 1:
		str("user ")
		num(100_000)
		str(" logged in from ")
		g.ipv4()
		str(" via sso")
	case 2:
		str("payment authorized for order ")
		num(10_000_000)
		str(" amount=")
		num(1000)
		str(".")
		num(100)
	case 3:
		str("cache miss for key session:")
		g.hex(8)
		str(", fetching from db")
	case 4:
		str("connection pool exhausted, waited ")
		num(1000)
		str("ms active=64")
	case 5:
		str("processed ")
		num(1000)
		str(" messages from ")
		str(oneOf(g, topics))
		str(" in ")
		num(200)
		str("ms")
	case 6:
		str("failed to call inventory: context deadline exceeded")
	case 7:
		str("retrying POST http://cart:8080/cart attempt ")
		num(5)
	case 8:
		str("request done method=")
		str(oneOf(g, httpMethods))
		str(" status=")
		g.tmp = strconv.AppendInt(g.tmp, oneOf(g, httpCodes), 10)
		str(" dur=")
		num(300)
		str("ms")
	default:
		str("job cleanup-expired-sessions removed ")
		num(10_000)
		str(" rows")
	}
}
