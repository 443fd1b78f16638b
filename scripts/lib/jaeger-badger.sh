# jaeger-badger.sh, sourced by the scripts that run Jaeger v1.76.0 with
# its Badger storage beside wirehouse (compare-trace-reads.sh,
# compare-ingest.sh).
#
# jaeger_badger_config DATA OTLP_HTTP METRICS QUERY_HTTP QUERY_GRPC prints
# the configuration of the jaeger v2 binary: OTLP/HTTP in on port
# OTLP_HTTP straight to the Badger storage exporter under DATA (neither
# batch processor nor queue, so an acknowledged span is written), its
# own metrics for Prometheus on METRICS, the query service on QUERY_HTTP
# and QUERY_GRPC, no self-tracing.
jaeger_badger_config() {
	cat <<YAML
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    logs: {level: warn}
    traces: {level: none}
    metrics:
      level: basic
      readers:
        - pull:
            exporter:
              prometheus: {host: 127.0.0.1, port: $3}
extensions:
  jaeger_query:
    enable_tracing: false   # its default traces every query to localhost:4317; wirehouse traces none
    storage:
      traces: badger_store
    http: {endpoint: "127.0.0.1:$4"}
    grpc: {endpoint: "127.0.0.1:$5"}
  jaeger_storage:
    backends:
      badger_store:
        badger:
          directories: {keys: "$1/keys", values: "$1/values"}
          ephemeral: false
          ttl: {spans: 48h}
receivers:
  otlp:
    protocols:
      http: {endpoint: "127.0.0.1:$2"}
exporters:
  jaeger_storage_exporter:
    trace_storage: badger_store
YAML
}
