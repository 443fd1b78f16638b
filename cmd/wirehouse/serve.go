package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/wirehouse/wirehouse/internal/serve"
	"github.com/wirehouse/wirehouse/internal/tlsfiles"
)

const serveUsage = `usage: wirehouse serve [--config FILE] [flags]

Serve receives OTLP over gRPC and HTTP and stores it under the data directory.
With no flags it uses the embedded defaults below. Settings come from the
defaults, then the YAML file given by --config, then the flags given on the
command line. SIGINT or SIGTERM stops accepting, drains the requests in flight
and flushes the sinks.

Sizes take a unit: 16MiB, 10MB, 1GiB, 2TiB (or a plain byte count). Durations are Go
durations: 500ms, 10s, 2m.

flags:
`

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServeFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	return serve.Run(ctx, cfg, stderr)
}

// parseServeFlags returns the configuration: defaults, overlaid by the
// --config file, overlaid by the flags set on the command line.
func parseServeFlags(args []string, stderr io.Writer) (serve.Config, error) {
	cfg := serve.DefaultConfig()
	if path := configArg(args); path != "" {
		if err := cfg.LoadFile(path); err != nil {
			return cfg, usageError{err: fmt.Errorf("--config: %w", err)}
		}
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	var configPath string
	fs.StringVar(&configPath, "config", "", "YAML configuration file (every key with its default: deploy/wirehouse.yaml)")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory for stored data, created if missing")
	fs.StringVar(&cfg.Log.Level, "log-level", cfg.Log.Level, "log level: debug, info, warn or error")
	fs.StringVar(&cfg.Log.Format, "log-format", cfg.Log.Format, "log format on stderr: text or json")
	fs.StringVar(&cfg.OTLP.GRPC.Listen, "grpc-listen", cfg.OTLP.GRPC.Listen, "OTLP/gRPC listen address; empty disables gRPC")
	fs.StringVar(&cfg.OTLP.HTTP.Listen, "http-listen", cfg.OTLP.HTTP.Listen, "OTLP/HTTP listen address; empty disables HTTP")
	fs.StringVar(&cfg.Admin.Listen, "admin-listen", cfg.Admin.Listen, "admin and query HTTP listen address (/metrics, /healthz, /readyz, /-/healthy, /-/ready)")
	fs.StringVar(&cfg.Jaeger.StorageListen, "jaeger-storage-listen", cfg.Jaeger.StorageListen, "Jaeger remote storage gRPC (jaeger.storage.v2) listen address, for the Jaeger query service's grpc backend; empty disables it")
	fs.StringVar(&cfg.Jaeger.TenantHeader, "jaeger-tenant-header", cfg.Jaeger.TenantHeader, "gRPC metadata key of a Jaeger storage call's tenant (Jaeger's multi_tenancy header); without one a call reads --lake-tenant's; with --admin-bearer-tokens-file only the token's tenant")
	fs.StringVar(&cfg.Jaeger.StorageTLS.CertFile, "jaeger-storage-tls-cert-file", cfg.Jaeger.StorageTLS.CertFile, "serve Jaeger remote storage gRPC over TLS with this PEM certificate chain (re-read when it changes)")
	fs.StringVar(&cfg.Jaeger.StorageTLS.KeyFile, "jaeger-storage-tls-key-file", cfg.Jaeger.StorageTLS.KeyFile, "PEM private key of --jaeger-storage-tls-cert-file")
	fs.StringVar(&cfg.Jaeger.StorageTLS.ClientCAFile, "jaeger-storage-tls-client-ca-file", cfg.Jaeger.StorageTLS.ClientCAFile, "require Jaeger storage clients to present a certificate signed by a CA in this PEM file (mutual TLS)")
	fs.StringVar(&cfg.OTLP.Auth.BearerTokensFile, "otlp-bearer-tokens-file", cfg.OTLP.Auth.BearerTokensFile, "require OTLP requests to carry one of this file's bearer tokens (Authorization: Bearer <token>); a line is a token, optionally followed by the tenant of its data (lake partition, metrics tenant); re-read when it changes")
	fs.Func("otlp-http-cors-allowed-origins", "comma-separated origins whose web pages may export over OTLP/HTTP (CORS), e.g. https://app.example.com,https://*.example.org; * for any", func(v string) error {
		cfg.OTLP.HTTP.CORS.AllowedOrigins = nil
		for _, o := range strings.Split(v, ",") {
			if o = strings.TrimSpace(o); o != "" {
				cfg.OTLP.HTTP.CORS.AllowedOrigins = append(cfg.OTLP.HTTP.CORS.AllowedOrigins, o)
			}
		}
		return nil
	})
	otlpTLS := func(set func(*tlsfiles.Server, string)) func(string) error {
		return func(v string) error {
			set(&cfg.OTLP.GRPC.TLS, v)
			set(&cfg.OTLP.HTTP.TLS, v)
			return nil
		}
	}
	fs.Func("otlp-tls-cert-file", "serve OTLP/gRPC and OTLP/HTTP over TLS with this PEM certificate chain (re-read when it changes)", otlpTLS(func(t *tlsfiles.Server, v string) { t.CertFile = v }))
	fs.Func("otlp-tls-key-file", "PEM private key of --otlp-tls-cert-file", otlpTLS(func(t *tlsfiles.Server, v string) { t.KeyFile = v }))
	fs.Func("otlp-tls-client-ca-file", "require OTLP clients to present a certificate signed by a CA in this PEM file (mutual TLS)", otlpTLS(func(t *tlsfiles.Server, v string) { t.ClientCAFile = v }))
	fs.StringVar(&cfg.Admin.Auth.BearerTokensFile, "admin-bearer-tokens-file", cfg.Admin.Auth.BearerTokensFile, "require one of this file's bearer tokens on every admin request (queries, remote write, /metrics, pprof) but the /healthz, /readyz, /-/healthy and /-/ready probes; same format as --otlp-bearer-tokens-file, a token's tenant being the one whose metrics its requests see")
	fs.StringVar(&cfg.Admin.TLS.CertFile, "admin-tls-cert-file", cfg.Admin.TLS.CertFile, "serve the admin and query HTTP server over TLS with this PEM certificate chain (re-read when it changes)")
	fs.StringVar(&cfg.Admin.TLS.KeyFile, "admin-tls-key-file", cfg.Admin.TLS.KeyFile, "PEM private key of --admin-tls-cert-file")
	fs.StringVar(&cfg.Admin.TLS.ClientCAFile, "admin-tls-client-ca-file", cfg.Admin.TLS.ClientCAFile, "require admin clients to present a certificate signed by a CA in this PEM file (mutual TLS)")
	fs.Var(&cfg.Limits.MaxRequestSize, "max-request-size", "largest OTLP/HTTP body as sent, before decompression (413 above)")
	fs.Var(&cfg.Limits.MaxDecompressedSize, "max-decompressed-size", "largest OTLP/HTTP request after decompression (413 above)")
	fs.Var(&cfg.OTLP.GRPC.MaxRecvMsgSize, "grpc-max-recv-msg-size", "largest OTLP/gRPC message, as sent and decompressed (RESOURCE_EXHAUSTED above); each call reserves this much of --max-inflight while its message is read")
	fs.Var(&cfg.Limits.MemoryLimit, "memory-limit", "Go runtime soft memory limit (GOMEMLIMIT); 0: 90% of the cgroup memory limit, else 95% of the ceiling the other limits give (logged at start) less the queries' memory and the lake reader's caches they do not hold and 48 MiB for the executable's pages")
	fs.StringVar(&cfg.Limits.OverridesFile, "limits-overrides-file", cfg.Limits.OverridesFile, "per-tenant limits (ingestion rates per signal, a share of --max-inflight), re-read when it changes")
	fs.Var(&cfg.Limits.MaxInflight, "max-inflight", "bytes all requests in flight may hold; past it requests are refused with 429 / RESOURCE_EXHAUSTED")
	fs.DurationVar(&cfg.Limits.RetryAfter, "retry-after", cfg.Limits.RetryAfter, "retry delay suggested to refused clients (Retry-After, RetryInfo)")
	fs.IntVar(&cfg.Limits.MaxServices, "max-services", cfg.Limits.MaxServices, "distinct service.name values counted per signal on /metrics")
	q := &cfg.Limits.Queries
	fs.IntVar(&q.MaxConcurrent, "query-max-concurrent", q.MaxConcurrent, "queries of the read APIs running at once, all tenants together (0: one less than the processors, at least 1); others wait --query-queue-wait, then get 429/503 with Retry-After")
	fs.IntVar(&q.MaxConcurrentPerTenant, "query-max-concurrent-per-tenant", q.MaxConcurrentPerTenant, "queries of one tenant running at once (0: three quarters of --query-max-concurrent, at least 1)")
	fs.DurationVar(&q.QueueWait, "query-queue-wait", q.QueueWait, "how long a query waits for a slot before it is refused")
	fs.Var(&q.Memory, "query-memory", "bytes the queries running may hold together: their share of the memory ceiling")
	fs.Var(&q.MaxQueryMemory, "query-max-memory", "bytes one query may hold (413 past it); 0: half of --query-memory")
	fs.IntVar(&q.MaxTails, "query-max-tails", q.MaxTails, "live tails (Loki /tail WebSockets) open at once")
	fs.IntVar(&q.MaxTailsPerTenant, "query-max-tails-per-tenant", q.MaxTailsPerTenant, "live tails of one tenant open at once")
	fs.DurationVar(&q.Timeout, "query-timeout", q.Timeout, "longest a query of any read API runs (504 past it)")
	fs.IntVar(&q.MaxTraces, "query-max-traces", q.MaxTraces, "most traces a trace search returns, whatever its limit")
	fs.IntVar(&q.MaxLines, "query-max-lines", q.MaxLines, "largest limit of a log query")
	fs.IntVar(&q.MaxSeries, "query-max-series", q.MaxSeries, "most series of a LogQL metric query")
	fs.Var(&q.MaxBytesRead, "query-max-bytes-read", "most Parquet bytes one query reads (413 past it)")
	var streams uint
	fs.UintVar(&streams, "grpc-max-concurrent-streams", uint(cfg.OTLP.GRPC.MaxConcurrentStreams), "concurrent gRPC calls per connection")
	fs.DurationVar(&cfg.OTLP.HTTP.ReadHeaderTimeout, "read-header-timeout", cfg.OTLP.HTTP.ReadHeaderTimeout, "time a client has to send request headers (and the gRPC handshake)")
	fs.DurationVar(&cfg.OTLP.HTTP.ReadTimeout, "read-timeout", cfg.OTLP.HTTP.ReadTimeout, "time a client has to send a whole HTTP request")
	fs.DurationVar(&cfg.OTLP.HTTP.WriteTimeout, "write-timeout", cfg.OTLP.HTTP.WriteTimeout, "time to handle a request and write its response")
	fs.DurationVar(&cfg.OTLP.HTTP.IdleTimeout, "idle-timeout", cfg.OTLP.HTTP.IdleTimeout, "time an idle keep-alive HTTP connection stays open")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "time to drain requests in flight on SIGINT/SIGTERM")
	fs.DurationVar(&cfg.Metrics.Retention, "metrics-retention", cfg.Metrics.Retention, "how long metric samples are kept")
	fs.Var(&cfg.Metrics.RetentionSize, "metrics-retention-size", "most bytes of metric blocks kept (0: no limit)")
	fs.DurationVar(&cfg.Metrics.OutOfOrderWindow, "metrics-out-of-order-window", cfg.Metrics.OutOfOrderWindow, "how far back out-of-order samples are accepted (0: refused)")
	fs.Int64Var(&cfg.Metrics.MaxExemplars, "metrics-max-exemplars", cfg.Metrics.MaxExemplars, "exemplars kept for /api/v1/query_exemplars, in one buffer over all series (0: none, as Prometheus without exemplar storage; e.g. 100000)")
	fs.BoolVar(&cfg.Admin.Pprof, "admin-pprof", cfg.Admin.Pprof, "serve Go's profiles under /debug/pprof/ on the admin port (behind --admin-bearer-tokens-file if set)")
	fs.BoolVar(&cfg.Metrics.AdminAPI, "metrics-admin-api", cfg.Metrics.AdminAPI, "serve Prometheus' TSDB admin endpoints on the admin port: /api/v1/admin/tsdb/delete_series, clean_tombstones and snapshot (as Prometheus' --web.enable-admin-api)")
	fs.DurationVar(&cfg.Metrics.BlockDuration, "metrics-block-duration", cfg.Metrics.BlockDuration, "time span of a TSDB head block")
	fs.BoolVar(&cfg.Metrics.PromoteScopeMetadata, "metrics-promote-scope-metadata", cfg.Metrics.PromoteScopeMetadata, "label series with their instrumentation scope: otel_scope_name, otel_scope_version, otel_scope_<attribute> (Prometheus' otlp.promote_scope_metadata, off there by default)")
	fs.BoolVar(&cfg.Metrics.RefuseDelta, "metrics-refuse-delta", cfg.Metrics.RefuseDelta, "refuse delta sums and histograms, as Prometheus' OTLP endpoint does (default: stored as cumulative series)")
	fs.DurationVar(&cfg.Metrics.DeltaMaxStale, "metrics-delta-max-stale", cfg.Metrics.DeltaMaxStale, "a delta point this long after its series' last starts the cumulative series again")
	fs.IntVar(&cfg.Metrics.LabelLimit, "metrics-label-limit", cfg.Metrics.LabelLimit, "refuse data points whose series would have more labels (0: no limit, as Prometheus' OTLP receiver)")
	fs.StringVar(&cfg.Spool.Sync, "spool-sync", cfg.Spool.Sync, "when the spool fsyncs before a request is acknowledged: always, interval or never")
	fs.DurationVar(&cfg.Spool.SyncInterval, "spool-sync-interval", cfg.Spool.SyncInterval, "fsync period of --spool-sync interval")
	fs.Var(&cfg.Spool.SegmentSize, "spool-segment-size", "size of one spool segment file")
	fs.Var(&cfg.Spool.MaxSize, "spool-max-size", "spool disk use past which logs and traces are refused with 429 / RESOURCE_EXHAUSTED (0: no limit)")
	fs.StringVar(&cfg.Lake.Tenant, "lake-tenant", cfg.Lake.Tenant, "tenant partition of the logs and traces received")
	fs.DurationVar(&cfg.Lake.MaxDelay, "lake-max-delay", cfg.Lake.MaxDelay, "longest a log or span waits before it is in a Parquet file")
	fs.Var(&cfg.Lake.FileSize, "lake-file-size", "Parquet file size aimed at")
	fs.Var(&cfg.Lake.MaxBuffer, "lake-max-buffer", "protobuf bytes buffered before a Parquet write, whatever --lake-file-size says")
	fs.DurationVar(&cfg.Lake.Retention, "lake-retention", cfg.Lake.Retention, "remove lake hour partitions that ended longer ago than this, checked every minute (0: keep everything)")
	fs.DurationVar(&cfg.Lake.CompactGrace, "lake-compact-grace", cfg.Lake.CompactGrace, "with a lake in S3: how long a merged or rewritten file's inputs stay readable after the swap")
	fs.BoolVar(&cfg.Lake.Compact, "lake-compact", cfg.Lake.Compact, "merge the small Parquet files of each hour partition once the hour is over")
	fs.BoolVar(&cfg.Lake.NoIndexes, "lake-no-indexes", cfg.Lake.NoIndexes, "write logs files without their counts and body index (queries then read their columns): to measure what the indexes cost")
	fs.StringVar(&cfg.Lake.URL, "lake-url", cfg.Lake.URL, "where the lake is: empty for <data-dir>/lake, or s3://bucket/prefix, an S3-compatible bucket any number of nodes can write (credentials the standard AWS way)")
	fs.StringVar(&cfg.Lake.Node, "lake-node", cfg.Lake.Node, "this node's name in the files of an s3:// lake, 1 to 63 of [a-z0-9-], unique among the nodes (default: made once and kept in <data-dir>/node-id)")
	fs.StringVar(&cfg.Lake.S3.Endpoint, "lake-s3-endpoint", cfg.Lake.S3.Endpoint, "URL of the S3-compatible store of an s3:// lake (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, else AWS)")
	fs.StringVar(&cfg.Lake.S3.Region, "lake-s3-region", cfg.Lake.S3.Region, "region of an s3:// lake's bucket (default: AWS_REGION or the shared config's, else us-east-1)")
	fs.BoolVar(&cfg.Lake.S3.PathStyle, "lake-s3-path-style", cfg.Lake.S3.PathStyle, "address an s3:// lake's bucket in the URL path, as MinIO, SeaweedFS and Ceph want")
	fs.Var(&cfg.Lake.RetentionSize, "lake-retention-size", "remove lake hour partitions while the Parquet files hold more bytes: more than an hour in the future first, then the oldest, never the current or next hour (0: no limit)")
	store := fs.String("store", "", "signals this node stores itself, comma-separated: logs, traces, metrics, or none for a gateway that only forwards (default all three)")
	var fwd serve.ForwardConfig
	var fwdEndpoints, fwdSignals, fwdDNS string
	fs.StringVar(&fwdEndpoints, "forward-endpoints", "", "forward to these OTLP endpoints, comma-separated (host:port, or a base URL for http), sharded on a consistent-hash ring: logs and metrics by resource, traces by trace id (a destination named \"default\"; more in the config file's forward: list)")
	fs.StringVar(&fwdDNS, "forward-dns", "", "forward to every address of this name, host:port, looked up again every 30s (in place of --forward-endpoints)")
	fs.StringVar(&fwd.Protocol, "forward-protocol", "grpc", "protocol of the forward endpoints: grpc or http")
	fs.StringVar(&fwdSignals, "forward-signals", "", "signals forwarded, comma-separated (default all three)")
	fs.StringVar(&fwd.Compression, "forward-compression", "none", "compression of forwarded requests: none, gzip or zstd")
	fs.StringVar(&fwd.TenantHeader, "forward-tenant-header", "", "send each record's tenant in this header (X-Scope-OrgID, say)")
	fs.Func("forward-header", "a header sent with every forwarded request, name=value (repeatable), such as authorization=Bearer <token>", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return fmt.Errorf("want name=value, got %q", v)
		}
		if fwd.Headers == nil {
			fwd.Headers = map[string]string{}
		}
		fwd.Headers[k] = val
		return nil
	})
	fs.BoolVar(&fwd.TLS.Enabled, "forward-tls", false, "connect to the forward endpoints with TLS")
	fs.StringVar(&fwd.TLS.CAFile, "forward-tls-ca-file", "", "CA certificates (PEM) that verify the forward endpoints, in place of the system's")
	fs.Func("rules-files", "Prometheus rule files (recording and alerting rules in PromQL) of the default tenant, a glob (repeatable; the config file's rules: block has other tenants')", func(v string) error {
		cfg.Rules.Files = append(cfg.Rules.Files, v)
		return nil
	})
	fs.Func("logql-rules-files", "rule files in Loki's ruler format (LogQL metric queries) of the default tenant, a glob (repeatable)", func(v string) error {
		cfg.Rules.LogQLFiles = append(cfg.Rules.LogQLFiles, v)
		return nil
	})
	fs.DurationVar(&cfg.Rules.EvaluationInterval, "rules-evaluation-interval", cfg.Rules.EvaluationInterval, "how often rule groups that set no interval are evaluated")
	fs.Func("alertmanager-url", "send alerts to the Alertmanager at this URL, http(s)://[user:password@]host:port[/prefix] (repeatable; the config file's alerting: block takes every Prometheus setting)", cfg.Alerting.AddURL)
	fs.BoolVar(&cfg.TraceMetrics.Enabled, "trace-metrics", cfg.TraceMetrics.Enabled, "make span metrics (calls, durations) and the service graph from the spans as they arrive, into the metric store, as the Collector's spanmetrics and servicegraph connectors name them")
	fs.BoolVar(&cfg.TraceMetrics.Exemplars, "trace-metrics-exemplars", cfg.TraceMetrics.Exemplars, "give the span metrics exemplars of the spans they count (trace and span id, duration), as the spanmetrics connector's exemplars setting; needs --metrics-max-exemplars")
	fs.DurationVar(&cfg.TraceMetrics.FlushInterval, "trace-metrics-flush-interval", cfg.TraceMetrics.FlushInterval, "how often the span metrics and service graph are written to the metric store")
	fs.Func("remote-write-url", "send the metric store's samples to this Prometheus remote write endpoint, with Prometheus' own queue manager and its defaults (repeatable; the config file's remote_write: list takes every Prometheus setting)", cfg.RemoteWrite.AddURL)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, usageError{err: err, printed: true}
	}
	if *store != "" {
		cfg.Store = serve.StoreConfig{}
		for _, sig := range strings.Split(*store, ",") {
			switch strings.TrimSpace(sig) {
			case "logs":
				cfg.Store.Logs = true
			case "traces":
				cfg.Store.Traces = true
			case "metrics":
				cfg.Store.Metrics = true
			case "none":
			default:
				return cfg, usageError{err: fmt.Errorf("--store: %q: want logs, traces, metrics or none", sig)}
			}
		}
	}
	if fwdEndpoints != "" || fwdDNS != "" {
		fwd.Name = "default"
		if fwdEndpoints != "" {
			fwd.Endpoints = strings.Split(fwdEndpoints, ",")
		}
		if fwdDNS != "" {
			host, port, err := net.SplitHostPort(fwdDNS)
			if err != nil {
				return cfg, usageError{err: fmt.Errorf("--forward-dns: %w", err)}
			}
			fwd.DNS.Host = host
			if fwd.DNS.Port, err = strconv.Atoi(port); err != nil {
				return cfg, usageError{err: fmt.Errorf("--forward-dns: port %q", port)}
			}
		}
		if fwdSignals != "" {
			fwd.Signals = strings.Split(fwdSignals, ",")
		}
		cfg.Forward = append(cfg.Forward, fwd)
	}
	if fs.NArg() > 0 {
		return cfg, usageError{err: fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))}
	}
	if streams > 1<<32-1 {
		return cfg, usageError{err: fmt.Errorf("--grpc-max-concurrent-streams: %d is too large", streams)}
	}
	cfg.OTLP.GRPC.MaxConcurrentStreams = uint32(streams)
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err: err}
	}
	return cfg, nil
}

// configArg finds --config's value before the other flags are parsed, so
// that flags given on the command line override the file.
func configArg(args []string) string {
	for i, a := range args {
		if a == "--" {
			return ""
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		if hasVal {
			return val
		}
		if i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
