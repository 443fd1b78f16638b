// Package tracemetrics makes metrics from spans as they arrive, per
// tenant: the series the OpenTelemetry Collector contrib's spanmetrics
// and servicegraph connectors emit with their default settings (contrib
// v0.159.0, read from their Apache-2.0 source), written as an OTLP
// metrics request that the metric store translates as Prometheus'
// OTLP rules do, so that the names and labels are those a Collector with
// the two connectors and Prometheus remote write gives:
//
//   - span metrics (RED): traces_span_metrics_calls_total and
//     traces_span_metrics_duration_milliseconds_{bucket,sum,count}, by
//     service_name, span_name, span_kind (SPAN_KIND_SERVER, ...),
//     status_code (STATUS_CODE_UNSET, _OK, _ERROR), the connector's
//     collector_instance_id (Config.InstanceID) and the configured extra
//     dimensions (a span attribute, else a resource attribute), in the
//     span's resource (job, instance, target_info), with the connector's
//     buckets (2 ms to 15 s), and with Config.Exemplars the
//     connector's exemplars (trace id, span id, duration in ms) of the
//     spans counted since the last write;
//   - the service graph: traces_service_graph_request_total,
//     _request_failed_total, _request_server_seconds_* and
//     _request_client_seconds_*, by client, server, connection_type
//     (absent for plain RPC; messaging_system, database, virtual_node)
//     and failed. A client or producer span and the server or consumer
//     span whose parent it is make an edge (keyed by trace id and the
//     client's span id) when both have arrived; a client span naming a
//     database (db.name) is an edge to it at once; an edge still unpaired
//     after Config.EdgeTTL becomes a virtual-node edge: a client to the
//     first of peer.service, db.name, db.system on its span (else
//     "unknown"), a root server span from "user"; other unpaired server
//     spans are dropped, as the connector drops them.
//
// A Generator holds the cumulative state: Consume adds a traces request,
// Expire turns edges past their TTL into virtual-node edges, Flush
// writes every tenant's series as one OTLP request (every series known,
// updated or not, as the connectors re-emit them). State is bounded per
// tenant: past Config.MaxSeries span-metric series, new dimension sets
// go to one overflow series (otel.metric.overflow=true, as the connector
// marks it), past Config.MaxGraphSeries new graph series are dropped,
// and past Config.MaxEdges unpaired edges new spans are not paired; each
// is counted (Stats).
//
// Counters restart at zero with the process (the consumer re-reads the
// spool from its cursor, committed after each flush, so that no span is
// counted twice in the store; records of other signals are committed
// within a second, and a flush comes early once 64 MiB of traces wait,
// so that the cursor holds few spool segments back): the first flush of each series writes a
// zero point at its start time before its value, so that Prometheus'
// rate() sees the reset (as created-timestamp zero samples do) even
// when the new value is above the one before the restart.
//
// Deviations from the connectors, each bounded or an addition: the limits
// above are per tenant (the connectors' per resource or per instance);
// the overflow series lives in one empty resource; dimension values that
// are arrays, maps or bytes are left out; Config.InstanceID is the node's
// name, stable across restarts, where the connector draws a UUID at each
// start. The connectors' first flush of a new counter writes 0 and the
// count a flush later; here the count is written at once, after the zero
// point.
//
// cmd/wirehouse's TestOracleTraceMetrics holds the series equal to those
// of the real Collector (v0.159.0, built by ocb from tools/otelcol) with
// both connectors at their defaults, its Prometheus remote write exporter
// writing into a second serve, on the same traces.
package tracemetrics
