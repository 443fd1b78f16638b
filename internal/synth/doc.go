// Package synth generates deterministic, realistic OTLP protobuf requests
// for tests, fuzz seeds, benchmarks, wirehouse gen and the load tool,
// written directly with protowire.
//
// Logs, Traces and Metrics return an encoded ExportLogsServiceRequest,
// ExportTraceServiceRequest or ExportMetricsServiceRequest shaped by a
// Config; the same Config always yields the same bytes. The metrics
// describe a Kubernetes cluster (500 pods on 100 nodes in 10 namespaces,
// 40 metric names, 40 labels a series; Config.Copy makes distinct copies
// of it), the logs have ~47-byte bodies with 10–20 attributes, the traces
// one to eight spans with HTTP, database, RPC and messaging attributes.
// SeriesRequest streams points over a fixed set of series (the
// metric-server comparison's payloads). Fixture returns the small fixed
// request the benchmarks share (byte for byte the 5 resources × 100
// records the seed-000 report measured), RealisticFixture a heavier one,
// and Random a request of random shape that exercises every field, for
// equivalence tests and fuzz seeds.
//
// Every generator writes either Order: Ascending, the field order of the
// OpenTelemetry SDKs (protobuf-go), or Descending, the field order of the
// Collector's pdata marshaller. Both orders of one seed decode to the same
// data, so a decoder can be checked against both producers.
//
// The generators write fields with implicit presence only when they are
// not zero; oneof members, optional fields and embedded messages are
// written when set, even if zero or empty.
//
// All functions are safe for concurrent use; Random as far as its
// *rand.Rand is.
package synth
