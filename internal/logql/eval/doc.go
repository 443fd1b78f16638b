// Package eval evaluates LogQL (parsed by internal/logql) over log
// records: log queries (a selector and a pipeline of stages, giving
// streams of lines) and metric queries (range aggregations, vector
// aggregations and binary operations, giving series of samples at the
// steps of a range, or a vector or a scalar at an instant). It is the
// engine under lokiapi, Loki's HTTP API, and imports no net/http: the
// API parses parameters and writes Loki's JSON, the engine evaluates.
//
// An Engine reads through a Source: the log records of a tenant in a
// time range, with the filters the source can test before it decodes a
// record and the fields the query needs. The filters are the services,
// the |= and |~ filters and the values of label filters and matchers
// name="v" on attributes that come before any stage that changes the
// line or makes labels; the source may use them to skip records (the
// pipeline tests them again: lokiapi's TestFiltersOnColumnsAsPipeline
// checks the answers are those of the pipeline alone). lokiapi's source is the lake (lakeread.Reader); tests give
// records in memory. A Source that is also a Counter (the lake is)
// answers count_over_time and rate, summed by service or severity over
// |= filters alone, with counts per step-grid bucket, not records: the
// answers are the same (lokiapi's TestCountsAsRecords). Each query's memory — the lines, series and steps
// its answer holds — is charged to the Budget its context carries
// (querybudget's ticket in serve), so a query too large fails instead of
// taking the server's memory.
//
// OTLP log records become Loki streams as Loki 3's native OTLP
// ingestion maps them (otlp.go): a few resource attributes are the
// stream's labels, the rest of a record's attributes structured
// metadata, the body the line.
//
// Files, one per family:
//
//	engine.go            Query, Result, Engine, Exec
//	source.go            Source, Counter, Scan, Record, Budget: what the engine reads
//	labels.go, otlp.go   label sets; OTLP records as Loki streams
//	log_query.go         a selector and pipeline compiled to a scan, and run
//	streams.go           the label and index statistics endpoints' queries
//	pipeline.go          a pipeline: its entries and its stages compiled
//	stage_filter.go      line filters |= != |~ !~ |> !>
//	stage_parser.go      json, logfmt, regexp, pattern and unpack
//	stage_label.go       label filters, label_format, drop and keep
//	stage_line_format.go line_format and decolorize
//	pattern.go, template.go  pattern expressions; the formatters' templates
//	metric.go            metric values and the expression walk
//	range_agg.go         count_over_time, rate, …, quantile_over_time
//	vector_agg.go        sum, avg, …, topk, sort
//	binary.go            arithmetic, comparisons, and/or/unless, matching
//
// It is written from Loki's public LogQL documentation (Loki is
// AGPL-3.0: none of its code is used).
package eval
