// Package loadgen sends synthetic OTLP load (from internal/synth) to an
// OTLP server over gRPC or HTTP, or synthetic Prometheus remote write load
// built from synth's metric set, and measures what came back: requests and
// records per second, latency percentiles, and errors by status code. It
// is the engine of wirehouse load.
//
// Requests are generated before the clock starts (HTTP bodies also encoded
// as JSON and compressed beforehand) and sent from Config.Concurrency
// workers, over gRPC with the pass-through codec (the client does not
// marshal) or HTTP, optionally paced to a rate, for a count of requests or
// a duration. Latency is measured per request from send to the complete
// response, so it includes the server's acknowledgement (after its sinks
// accepted), not just the enqueueing. wirehouse load sets GOMAXPROCS to at
// most the concurrency by default (--procs sets it), so that a client with
// one request in flight does not hand each response to another thread: a
// cross-CPU wake-up that would be measured as server latency.
//
// # Metrics and verification
//
// With Verify, the load checks through the query API that what was
// acknowledged is stored: per series for remote write; per metric name for
// OTLP, whose acknowledged requests it translates again by Prometheus'
// rules, independently of the store (expect.go: suffixed names,
// _bucket/_sum/_count, quantiles, native histograms; stale and delta
// points left out), checking every name's series and samples with
// count_over_time. A server that names metrics otherwise is checked by
// totals. Against Prometheus 3.16 itself (2026-11-23, load --signal
// metrics --verify) the expectation matched exactly: 341 series, 17,050
// samples. The summary counts records sent, accepted and stored; for
// metrics sent round robin over Variants requests the accepted points are
// counted distinct by series and millisecond, which is what a TSDB keeps
// of points sent again.
//
// Repeat sends the same series one second later in every request: a
// periodic exporter's steady state, where no sample is a duplicate.
// Exporters sends that many copies of the series set (synth.Config.Copy),
// each in time order, as that many exporters would. Payload (gauge, rich,
// histogram) sends instead a stream over a fixed number of series
// (synth.SeriesRequest, one point per series per second); a window keeps
// each series in order across senders. ServerPID reports the server
// process's CPU time over the run (proc.go), which
// scripts/compare-metric-servers.sh uses to compare servers per
// CPU-second.
package loadgen
