// Package serve runs wirehouse serve: it opens the storage (the metric
// store, the spool and the loader that moves it into the Parquet lake, the
// forward destinations, the quarantine), wires the OTLP receiver to the
// sinks that write into it, and serves the admin HTTP API (Prometheus'
// API, remote write and read, Jaeger's, Tempo's and Loki's APIs, /metrics,
// the probes), the web pages (internal/webui) and Jaeger's remote storage
// gRPC API (internal/jaegerstorage); and it evaluates the rule files
// (internal/ruler), alerting through the configured Alertmanagers.
//
// The files follow the jobs: server.go the lifecycle (New, Start,
// Shutdown), storage.go what is opened and closed, sinks.go what each
// signal's requests go through, admin.go the admin routes, forward.go the
// destinations, remotewrite.go remote write out, rules.go the ruler (its
// settings, the alerting block, SIGHUP's reload), memlimit.go the memory
// ceiling, config.go and configfile.go the settings, webui.go the settings
// the status page shows.
//
// # Configuration
//
// Embedded defaults (DefaultConfig), then an optional YAML file
// (--config), then flags. The file may refer to the environment as the
// Collector's configuration does (${env:NAME}, ${env:NAME:-default}, $$
// for $; an unset variable expands to "" and is logged), and a misspelt
// key is refused with its line and the keys allowed there. Every key,
// commented with its default, is in deploy/wirehouse.yaml, which
// TestDeployConfig holds to DefaultConfig; deploy/ also has a hardened
// systemd unit and a multi-stage Dockerfile (static binary, distroless,
// non-root).
//
// # Wiring
//
// Each signal's sinks, stores first (sinks.go): the metric store for
// metrics (pipeline.Validating, so the request is walked once), the spool
// (internal/spoolsink) for logs, traces and forwarded metrics, then the
// per-service usage counters (internal/usage, one per tenant, the default
// tenant's series without a tenant label), which so count only what was
// stored. A signal this node neither stores nor forwards is refused record
// by record as a partial success. A request a sink panicked on goes to
// <data_dir>/quarantine.
//
// New opens everything through one stack of closers (closers.go), in
// order: the data directory's lock (internal/dirlock: a second serve on it
// stops with "data directory D is in use by another process (pid N)"), the
// quarantine, remote write out, the metric store, the spool, the lake
// loader, the forward destinations. Every error path of New and Start
// closes what was opened (TestNewClosesOnError fails New at each step and
// reopens the data directory). On SIGINT or SIGTERM, Shutdown turns
// /readyz to 503, stops the listeners, drains the requests in flight (each
// acknowledged only after its sinks accepted), drains the admin server,
// lets the loader write what it buffered, and closes the stack last opened
// first. Components register their own metrics.
//
// # Security
//
// Every listener can serve TLS (internal/tlsfiles, TLS 1.2 or later): tls:
// {cert_file, key_file, client_ca_file} under otlp.grpc, otlp.http, admin
// and jaeger.storage_tls. A rotated certificate is served without a
// restart; client_ca_file requires client certificates (mutual TLS).
// OTLP/HTTP and the admin server negotiate HTTP/2 or HTTP/1.1 by ALPN.
//
// OTLP exporters authenticate with otlp.auth.bearer_tokens_file
// (internal/bearer); the lake then partitions logs and traces by each
// token's tenant and the metric store keeps each tenant's metrics apart.
// The admin server takes its own file, admin.auth.bearer_tokens_file:
// every path but the probes (/healthz, /readyz, /-/healthy, /-/ready) and
// the web pages' static files (webui.Public) then needs one of its tokens,
// and the request acts for the token's tenant (internal/tenant carries
// it): queries, remote write and read and the TSDB admin API see that
// tenant's metrics alone, the lake's APIs and the status page that
// tenant's data alone; /metrics and /debug/pprof/ (served only with
// admin.pprof), which concern every tenant, answer 403 to any token but an
// operator's (TestServeTenantIsolation, TestServeMetricTenants). The read
// APIs resolve the tenant by one rule, readapi.TenantRule, and are
// admitted into the query budget by readapi.Admit. Grafana sends the admin
// token as a custom Authorization header, Prometheus' scrape and
// remote_write as authorization: {credentials: …}
// (TestPrometheusAPIClient, cmd/wirehouse's
// TestServePrometheusRemoteWrite), wirehouse load with
// --admin-bearer-token.
//
// # Remote write out
//
// remote_write is Prometheus' own list, decoded by Prometheus'
// configuration code. serve makes a Prometheus remote.Storage on
// <data_dir>/metrics before the metric store opens and applies the
// configuration once the store (and so its WAL directory) exists, since a
// WAL watcher that starts before its directory errors and restarts later,
// sending only samples newer than its restart. Queue managers then tail
// the WAL as in a Prometheus server. It is closed after the metric store,
// with a 10 s flush deadline.
//
// # Memory
//
// Config.MemoryCeiling is the most memory serve should hold whatever
// clients send, logged at start; docs/ARCHITECTURE.md ("Memory") gives the
// formula and what each term bounds. The Go runtime's soft limit
// (GOMEMLIMIT) is set from limits.memory_limit, by default 90 % of the
// cgroup's memory limit when there is one, else 95 % of the ceiling less the
// queries' budget, the lake reader's caches that fill as files are read
// and 48 MiB for the executable's own pages (which RSS counts and the
// runtime does not), raised by what running queries reserve and those
// caches hold; a GOMEMLIMIT
// environment variable is left as it is.
package serve
