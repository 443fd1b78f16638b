// Package tempohttp serves trace by id as Grafana Tempo's HTTP API
// documents it, from the lake, so that Grafana's Tempo data source opens a
// trace by its id: /api/traces/{id} (Tempo's Trace: OTLP ResourceSpans,
// "batches" in JSON) and /api/v2/traces/{id} (TraceByIDResponse: the trace
// in field 1, "trace" in JSON), OTLP protobuf for "Accept:
// application/protobuf", else OTLP/JSON, with optional start and end in
// Unix seconds; /api/echo for the data source's test and
// /api/status/buildinfo (Tempo 2.6.0's API). serve mounts it
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
// /api/search answers TraceQL (q) and Tempo's older tags search (tags,
// logfmt, turned into a TraceQL filter) with minDuration, maxDuration
// (of the whole trace), limit (default 20), spss (spans shown a spanset,
// default 3), start and end (Unix seconds; the last hour by default), in
// Tempo's SearchResponse JSON: each trace's id, root service and name
// ("<root span not yet received>" without a root), start and duration,
// and its spansets (matched, the spans shown with the attributes the
// query reads and selects, by()'s values). internal/traceql/eval runs
// the query: the lake's search finds candidate traces by what the query
// requires of a span (eval.HintOf), and the query runs over each
// candidate's whole trace. A malformed query is 400 with its line and
// column.
//
// The tag endpoints: /api/search/tags (span and resource attribute
// names), /api/v2/search/tags?scope= (names by scope, and the
// intrinsics), /api/search/tag/{tag}/values (text) and
// /api/v2/search/tag/{tag}/values (typed; q, a TraceQL filter, keeps the
// values of the spans it matches in the most recent 500 traces it
// matches). Names come from each file's dictionaries, read once
// (lakeread.TraceTagNames); resource values from the resource column's
// dictionaries, span values from the places of their key in the
// attributes map (lakeread.TraceTagValues), instrumentation (scope)
// values from the scope attributes' dictionaries, event and link values
// from the places of their key in the events' and links' attribute maps
// (each read once a file and key, then kept).
//
// TraceQL metrics: /api/metrics/query_range (q, start and end as RFC 3339,
// Unix seconds or nanoseconds, step a duration or seconds; the range is
// widened to whole steps from the Unix epoch, as Tempo aligns it, so a
// refreshed "last hour" keeps its steps) and
// /api/metrics/query (one value a series over the range), in Tempo's
// series JSON (labels in AnyValue shape, samples with timestampMs,
// promLabels). rate, count_over_time, min/max/avg/sum_over_time,
// quantile_over_time (exact, interpolated between ranks) and
// histogram_over_time (power-of-two buckets) with by(), and compare()
// (what Traces Drilldown's comparison asks: series of each attribute's
// values in the selection and the baseline, labelled __meta_type, with
// totals and a __meta_error series past its top N; eval's compare.go). A
// span-local query (a filter of resource.service.name, name, kind,
// status equalities and duration bounds, by() of those, over duration or
// counts: what Traces Drilldown asks most) reads those columns of the
// spans in the range (lakeread.SpanPoints), no trace assembled and no
// bound on their number but the reader's bytes; a rate or count of
// those over whole minutes, not split by name, adds up the files' span
// counts (lake.SpanCountsKey) instead. Any other runs over
// every trace with a span its hint admits in the range (eval.Metrics):
// past 20,000 such traces (Config.MaxMetricsTraces) it is 413, never a
// partial answer.
package tempohttp
