// Package tempohttp serves trace by id as Grafana Tempo's HTTP API
// documents it, from the lake, so that Grafana's Tempo data source opens a
// trace by its id: /api/traces/{id} (Tempo's Trace: OTLP ResourceSpans,
// "batches" in JSON) and /api/v2/traces/{id} (TraceByIDResponse: the trace
// in field 1, "trace" in JSON), OTLP protobuf for "Accept:
// application/protobuf", else OTLP/JSON, with optional start and end in
// Unix seconds; and /api/echo for the data source's test. serve mounts it
// under /tempo on the admin port.
//
// A trace endpoint returns its answer (the bytes and their content type)
// or an error, and writes nothing: readapi.Handle runs it with the
// request's tenant in its context (readapi.TenantRule: the admin bearer
// token's, or X-Scope-OrgID) and writes what it returns through the API's
// one wire format, as Prometheus' API wraps its handlers. Unknown ids are
// 404, malformed requests 400, a read past the limits 413, each in Tempo's
// plain text with the status readapi.Kind gives; a client gone is not
// answered.
//
// It implements the documented contract (Tempo is AGPL; none of its code
// is used): docs/notes/jaeger-tempo-contracts.md §4 has what the
// documentation says and what it leaves open. The JSON envelopes are what
// third-party clients describe, not checked against a real Tempo.
//
// Search (/api/search, TraceQL) is not served.
package tempohttp
