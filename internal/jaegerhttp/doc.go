// Package jaegerhttp serves Jaeger's HTTP query API — the one the Jaeger
// UI and Grafana's Jaeger data source call — from the lake, without a
// Jaeger process: under its prefix (serve: /jaeger on the admin port)
// /api/services, /api/services/{service}/operations, /api/operations,
// /api/traces (service, operation, tags, tag, minDuration, maxDuration,
// start, end, limit), /api/traces/{traceID} and /api/dependencies
// (endTs, lookback, service: Config.Dependencies, the service graph
// internal/tracemetrics makes; empty without),
// in Jaeger's JSON model (processes, references, tags, logs), as the
// Jaeger query service answers them (docs/notes/jaeger-tempo-contracts.md
// §3).
//
// The traces are read with lakeread and turned into Jaeger's model as
// Jaeger's query service turns what a remote storage gives it: the
// Collector's OTLP to Jaeger translation (a process per resource, scope
// and status as tags, events as logs, links as references), then its
// standard adjusters (tags sorted, identical spans once, clock skew
// checked but not adjusted — max_clock_skew_adjust 0, its default — with
// its warnings, numeric IP tags as text, SDK tags moved to the process,
// references without a trace dropped, the parent first). Spans are ordered
// by start time then span id; Jaeger's own order is that of a Go map
// (model.go).
//
// Each endpoint returns its answer, Jaeger's envelope, or an error, and
// writes nothing: readapi.Handle runs it with the request's tenant in its
// context (readapi.TenantRule: the admin bearer token's, or the x-tenant
// header without tokens) and writes what it returns through the API's one
// wire format (wire.go), as Prometheus' API wraps its handlers. Searches
// return at most readapi.Limits.MaxTraces traces, and errors come in
// Jaeger's errors[] envelope with the status readapi.Kind gives (400 for
// a malformed parameter, 404 for an unknown trace, 413 past a limit, 499
// for a client gone, which only the access log reads).
//
// The files: jaegerhttp.go the endpoints and their parameters, wire.go
// the envelope and how answers and errors are written, model.go Jaeger's
// model and the translation into it.
//
// cmd/wirehouse's TestServeJaegerHTTPMatchesJaeger sends the same requests
// to the real Jaeger query service running on wirehouse (through
// jaegerstorage) and to this API, and compares the JSON field by field
// (span order and process ids aside), over generated traces and edge
// traces with every attribute type, links, events and warnings, and 400,
// 404 and 413 in Jaeger's envelope.
package jaegerhttp
