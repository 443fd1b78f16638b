// Package lokiapi serves Loki's HTTP query API — what Grafana's Loki data
// source and logcli call — over the lake's logs: query_range and query
// (LogQL, parsed by internal/logql and evaluated by internal/logql/eval
// over the lake, engine.go), labels, label values, series, index stats,
// index volume and volume_range (volume.go: the bytes of the selected
// streams' lines by label values or label names, the limit largest; the
// engine's sum by (...) (bytes_over_time(...))), detected_labels,
// detected_fields and detected_field values (detected.go: the stream
// labels with their cardinality; the fields of the newest line_limit
// lines, from structured metadata and from each line read as JSON or
// logfmt, typed as Loki types them; eval.DetectFields), patterns
// (patterns.go: internal/logpattern's Drain-style miner over the lines of
// a log query, counts a step), the ruler's reads (rules.go: the LogQL
// rules of Config.Rules as YAML by namespace under /loki/api/v1/rules,
// and in Prometheus' shapes at /prometheus/api/v1/rules and /alerts),
// buildinfo and the tail WebSocket, under /loki/api/v1 on the admin port,
// with Loki's documented JSON responses. This package holds Loki's wire
// format alone: parameters (parsed into one struct before any work), JSON
// answers, errors in Loki's plain text with the status readapi.Kind gives
// (wire.go). Each JSON endpoint is a readapi.Func that returns its answer
// or an error and writes nothing; readapi.Handle runs it, as Prometheus'
// web/api/v1 wraps its handlers: it resolves the request's tenant by the
// API's one readapi.TenantRule (X-Scope-OrgID) into its context, where
// the endpoint reads it (tenant.FromContext), and writes the answer or
// the error through the API's wire (a panic is a 500; a client gone gets
// 499, which only the access log sees). The tail resolves its tenant by
// the same rule. Written from Loki's public API documentation (Loki is
// AGPL-3.0: none of its code).
//
// OTLP records become Loki streams as Loki 3's OTLP ingestion maps them
// (internal/logql/eval/otlp.go); streams group lines by all their labels
// (stream labels, structured metadata, parsed labels), as Loki does,
// unless the request's X-Loki-Response-Encoding-Flags names
// categorize-labels (Grafana sends it): then streams group by their
// stream labels alone and each value is [time, line, {"structuredMetadata":
// {...}, "parsed": {...}}] (a kind with no label left out), data carrying
// "encodingFlags": ["categorize-labels"] (TestCategorizeLabels).
//
// /loki/api/v1/tail (tail.go) is a WebSocket that sends the newest lines,
// then every second the lines newer than the newest sent (the spool's
// included), oldest first; a line that arrives with an older time than the
// newest sent is not sent (Loki tails by arrival, the lake is by time).
// Tails take slots of their own in the query budget
// (querybudget.Gate.OpenTail), and tails of the same query and delay share
// one scan a second.
//
// cmd/wirehouse's TestServeLokiClients compares counts, a line filter, an
// attribute filter and a metric by level with DuckDB over the same files;
// tools/logbench times a grep and a volume query beside DuckDB, failing if
// their answers differ (figures in docs/BENCHMARKS.md).
package lokiapi
