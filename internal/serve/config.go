package serve

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/bytesize"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lokipush"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/receiver"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/tlsfiles"
	"github.com/wirehouse/wirehouse/internal/tracemetrics"
)

// Config is the whole configuration of wirehouse serve. The YAML file
// (--config) uses the yaml names below; every setting also has a flag.
type Config struct {
	DataDir string    `yaml:"data_dir"`
	Log     LogConfig `yaml:"log"`
	OTLP    struct {
		// Auth, if set, requires every export request to carry one of
		// the file's bearer tokens (internal/bearer); a token may name
		// the tenant of its data: its lake partition, and its metrics'
		// tenant in the metric store.
		Auth struct {
			BearerTokensFile string `yaml:"bearer_tokens_file"`
		} `yaml:"auth"`
		GRPC struct {
			Listen               string          `yaml:"listen"`
			MaxConcurrentStreams uint32          `yaml:"max_concurrent_streams"`
			MaxRecvMsgSize       ByteSize        `yaml:"max_recv_msg_size"` // largest message, as sent and decompressed
			TLS                  tlsfiles.Server `yaml:"tls"`
		} `yaml:"grpc"`
		HTTP struct {
			Listen            string              `yaml:"listen"`
			ReadHeaderTimeout time.Duration       `yaml:"read_header_timeout"`
			ReadTimeout       time.Duration       `yaml:"read_timeout"`
			WriteTimeout      time.Duration       `yaml:"write_timeout"`
			IdleTimeout       time.Duration       `yaml:"idle_timeout"`
			TLS               tlsfiles.Server     `yaml:"tls"`
			CORS              receiver.CORSConfig `yaml:"cors"`
		} `yaml:"http"`
	} `yaml:"otlp"`
	Admin struct {
		Listen string          `yaml:"listen"`
		TLS    tlsfiles.Server `yaml:"tls"`
		// Auth, if set, requires one of the file's bearer tokens on every
		// admin request (queries, remote write, /metrics, pprof) but the
		// /healthz and /readyz probes; a token's tenant is the one whose
		// metrics its requests read, write and administer (none, or
		// lake.tenant: the default tenant's).
		Auth struct {
			BearerTokensFile string `yaml:"bearer_tokens_file"`
		} `yaml:"auth"`
		// Pprof serves Go's profiles under /debug/pprof/ (behind Auth
		// like every admin path); off by default.
		Pprof bool `yaml:"pprof"`
	} `yaml:"admin"`
	// Jaeger serves Jaeger's remote storage gRPC API (jaeger.storage.v2
	// TraceReader) over the lake, so that the Jaeger query service, with
	// a grpc storage backend pointed here, reads wirehouse's traces.
	Jaeger struct {
		// StorageListen is its address; "" turns it off.
		StorageListen string `yaml:"storage_listen"`
		// StorageTLS serves it over TLS, its certificate re-read when the
		// files change; for Jaeger's grpc backend's tls.ca_file.
		StorageTLS tlsfiles.Server `yaml:"storage_tls"`
		// TenantHeader is the gRPC metadata key of a call's tenant, as
		// Jaeger's multi_tenancy forwards it; a call without one reads
		// lake.tenant. With admin.auth, a call needs an admin bearer
		// token (authorization metadata, or Jaeger's propagated
		// bearer.token) and reads its token's tenant, which the header
		// may repeat but not change (internal/jaegerstorage).
		TenantHeader string `yaml:"tenant_header"`
	} `yaml:"jaeger"`
	Limits struct {
		MaxRequestSize      ByteSize `yaml:"max_request_size"`
		MaxDecompressedSize ByteSize `yaml:"max_decompressed_size"`
		MaxInflight         ByteSize `yaml:"max_inflight"`
		// MemoryLimit is the Go runtime's soft memory limit (GOMEMLIMIT):
		// 0 takes 90 % of the cgroup's memory limit, or without one 95 %
		// of the ceiling the other limits give (MemoryCeiling) less what
		// the runtime does not hold of it (see memoryLimit). A GOMEMLIMIT
		// environment variable wins over both.
		MemoryLimit ByteSize      `yaml:"memory_limit"`
		RetryAfter  time.Duration `yaml:"retry_after"`
		MaxServices int           `yaml:"max_services"`
		// Queries is the read APIs' budget (querybudget.Config): its
		// Memory is the queries' share of the memory ceiling.
		Queries QueryLimits `yaml:"queries"`
		// LokiPush are the limits of Loki push requests, by the names of
		// Loki's limits_config (lokipush.Limits; Loki's defaults).
		LokiPush LokiPushLimits `yaml:"loki_push"`
		// OverridesFile holds per-tenant limits (internal/overrides:
		// ingestion rates per signal, a share of max_inflight), re-read
		// when it changes; "" sets none.
		OverridesFile string `yaml:"overrides_file"`
	} `yaml:"limits"`
	Metrics MetricsConfig `yaml:"metrics"`
	Spool   SpoolConfig   `yaml:"spool"`
	Lake    LakeConfig    `yaml:"lake"`
	// Store says which signals this node keeps; Forward where it sends
	// them on (see ForwardConfig).
	Store   StoreConfig     `yaml:"store"`
	Forward []ForwardConfig `yaml:"forward"`
	// Rules are the rule files evaluated (see RulesConfig); Alerting the
	// Alertmanagers their alerts go to (Prometheus' alerting block).
	Rules    RulesConfig `yaml:"rules"`
	Alerting Alerting    `yaml:"alerting"`
	// TraceMetrics makes span metrics and the service graph from the
	// spans as they arrive (see TraceMetricsConfig).
	TraceMetrics TraceMetricsConfig `yaml:"trace_metrics"`
	// RemoteWrite sends the metric store's samples on (see RemoteWrite).
	RemoteWrite     RemoteWrite   `yaml:"remote_write"`
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`

	unsetEnv []string // references LoadFile expanded from unset variables, for New to log
}

// LokiPushLimits are what a Loki push's streams and entries may hold
// (lokipush.Limits); past them an entry, or a stream, is refused with
// Loki's 400 and reason, the others stored.
type LokiPushLimits struct {
	MaxLineSize            ByteSize      `yaml:"max_line_size"`
	MaxLabelNamesPerSeries int           `yaml:"max_label_names_per_series"`
	MaxLabelNameLength     int           `yaml:"max_label_name_length"`
	MaxLabelValueLength    int           `yaml:"max_label_value_length"`
	RejectOldSamplesMaxAge time.Duration `yaml:"reject_old_samples_max_age"`
	CreationGracePeriod    time.Duration `yaml:"creation_grace_period"`
}

// lokipush is l as lokipush's limits.
func (l LokiPushLimits) lokipush() lokipush.Limits {
	return lokipush.Limits{MaxLineBytes: int(l.MaxLineSize), MaxLabelNames: l.MaxLabelNamesPerSeries,
		MaxLabelNameBytes: l.MaxLabelNameLength, MaxLabelValueBytes: l.MaxLabelValueLength,
		MaxAge: l.RejectOldSamplesMaxAge, MaxAhead: l.CreationGracePeriod}
}

// MetricsConfig sets the Prometheus TSDB metrics are stored in, under
// <data_dir>/metrics.
type MetricsConfig struct {
	Retention         time.Duration `yaml:"retention"`           // how long samples are kept
	RetentionSize     ByteSize      `yaml:"retention_size"`      // 0: no size limit
	OutOfOrderWindow  time.Duration `yaml:"out_of_order_window"` // 0: out-of-order samples are refused
	BlockDuration     time.Duration `yaml:"block_duration"`      // head block span (Prometheus' min block duration)
	PromoteAttributes []string      `yaml:"promote_resource_attributes"`
	// PromoteAll promotes every resource attribute but IgnoreAttributes
	// (Prometheus' promote_all_resource_attributes); it excludes
	// PromoteAttributes.
	PromoteAll       bool     `yaml:"promote_all_resource_attributes"`
	IgnoreAttributes []string `yaml:"ignore_resource_attributes"`
	// MaxExemplars is the size of the exemplar buffer; 0 (the default, as
	// in Prometheus) stores none.
	MaxExemplars int64 `yaml:"max_exemplars"`
	// PromoteScopeMetadata makes the instrumentation scope the labels
	// otel_scope_name, otel_scope_version, otel_scope_schema_url and
	// otel_scope_<attribute> (Prometheus' otlp.promote_scope_metadata).
	// On by default here, as the Collector's Prometheus exporters do; off
	// in Prometheus.
	PromoteScopeMetadata bool `yaml:"promote_scope_metadata"`
	// LabelLimit refuses the data points whose series would have more
	// labels (__name__ included); 0: no limit, as Prometheus' OTLP
	// receiver.
	LabelLimit int `yaml:"label_limit"`
	// RefuseDelta refuses delta sums and histograms
	// (unsupported_temporality), as Prometheus' OTLP endpoint does; by
	// default they are stored as cumulative series, as the Collector's
	// deltatocumulative processor makes them.
	RefuseDelta bool `yaml:"refuse_delta"`
	// DeltaMaxStale: a delta point later than this after its series'
	// last stored point starts the cumulative series again (the
	// processor's max_stale).
	DeltaMaxStale time.Duration `yaml:"delta_max_stale"`
	// AdminAPI serves Prometheus' TSDB admin endpoints (delete_series,
	// clean_tombstones, snapshot) on the admin port, as Prometheus'
	// --web.enable-admin-api does; off by default.
	AdminAPI bool `yaml:"admin_api"`
}

// SpoolConfig sets the write-ahead log logs and traces are acknowledged
// from, under <data_dir>/spool.
type SpoolConfig struct {
	Sync         string        `yaml:"sync"`          // always, interval or never
	SyncInterval time.Duration `yaml:"sync_interval"` // for interval
	SegmentSize  ByteSize      `yaml:"segment_size"`
	MaxSize      ByteSize      `yaml:"max_size"` // past it requests are refused with 429 / RESOURCE_EXHAUSTED; 0: no limit
	// TailSize keeps the newest records in memory too, so that the lake
	// loader and forward destinations that keep up read them without
	// reading the files back; 0: none.
	TailSize ByteSize `yaml:"tail_size"`
}

// LakeConfig sets the Parquet files logs and traces end in, under
// <data_dir>/lake.
type LakeConfig struct {
	Tenant    string        `yaml:"tenant"`     // the tenant= partition of everything received
	MaxDelay  time.Duration `yaml:"max_delay"`  // longest a record waits before it is in a file
	FileSize  ByteSize      `yaml:"file_size"`  // file size aimed at
	MaxBuffer ByteSize      `yaml:"max_buffer"` // protobuf bytes buffered before a write, whatever file_size says
	// Retention removes hour partitions that ended longer ago; 0 keeps
	// them. RetentionSize then removes partitions while the Parquet files
	// hold more bytes: more than an hour in the future first, then the
	// oldest, never the current or next hour; 0: no limit.
	Retention     time.Duration `yaml:"retention"`
	RetentionSize ByteSize      `yaml:"retention_size"`
	// Compact merges the small files of each hour partition once the
	// hour is over (on by default).
	Compact bool `yaml:"compact"`
	// CompactGrace, for a lake in an object store, is how long a merged
	// or rewritten file's inputs stay readable after the swap, for the
	// queries that listed them before (lakeload.Config.CompactGrace);
	// default 2 minutes.
	CompactGrace time.Duration `yaml:"compact_grace"`
	// NoIndexes writes logs files without their counts and body index
	// (lake.WriterConfig.NoIndexes): queries then read their columns.
	// For measuring what the indexes cost; off by default.
	NoIndexes bool `yaml:"no_indexes"`
	// URL is where the lake is: "" for <data_dir>/lake, or
	// s3://bucket/prefix for an S3-compatible object store, which any
	// number of nodes can write at once (each names its files after Node).
	URL string `yaml:"url"`
	// Node names this node's files in an object store several nodes
	// write: 1 to 63 of [a-z0-9-]. Default: a name made once for the data
	// directory and kept in <data_dir>/node-id. Never give one name to
	// two nodes, or to a node with a new data directory.
	Node string `yaml:"node"`
	// S3 sets how to reach the store of an s3:// URL; empty fields (and
	// the credentials, always) come the standard AWS way: AWS_REGION,
	// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, the
	// shared config and credentials files, instance roles.
	S3 S3Config `yaml:"s3"`
}

// S3Config is how the lake reaches an S3-compatible store.
type S3Config struct {
	Endpoint  string `yaml:"endpoint"`   // the store's URL, http://127.0.0.1:8333; empty: AWS's
	Region    string `yaml:"region"`     // empty: the AWS configuration's, else us-east-1
	PathStyle bool   `yaml:"path_style"` // address the bucket in the path, as most self-hosted stores want
}

// LogConfig sets the structured log on stderr.
type LogConfig struct {
	Level  string `yaml:"level"`  // debug, info, warn, error
	Format string `yaml:"format"` // text or json
}

// DefaultConfig returns the embedded defaults: data in ./wirehouse-data,
// OTLP/gRPC on localhost:4317, OTLP/HTTP on localhost:4318, admin and
// query HTTP on localhost:9090.
func DefaultConfig() Config {
	rc := receiver.DefaultConfig()
	var c Config
	c.DataDir = "./wirehouse-data"
	c.Log = LogConfig{Level: "info", Format: "text"}
	c.OTLP.GRPC.Listen = rc.GRPCAddr
	c.OTLP.GRPC.MaxConcurrentStreams = rc.MaxConcurrentStreams
	c.OTLP.GRPC.MaxRecvMsgSize = ByteSize(rc.MaxGRPCMessageBytes)
	c.OTLP.HTTP.Listen = rc.HTTPAddr
	c.OTLP.HTTP.ReadHeaderTimeout = rc.ReadHeaderTimeout
	c.OTLP.HTTP.ReadTimeout = rc.ReadTimeout
	c.OTLP.HTTP.WriteTimeout = rc.WriteTimeout
	c.OTLP.HTTP.IdleTimeout = rc.IdleTimeout
	c.Admin.Listen = "localhost:9090"
	c.Jaeger.StorageListen = "localhost:17271" // the endpoint Jaeger's grpc backend defaults to
	c.Jaeger.TenantHeader = "x-tenant"
	c.Limits.MaxRequestSize = ByteSize(rc.MaxRequestBytes)
	c.Limits.MaxDecompressedSize = ByteSize(rc.MaxDecompressedBytes)
	c.Limits.MaxInflight = ByteSize(rc.MaxInflightBytes)
	c.Limits.RetryAfter = rc.RetryAfter
	c.Limits.MaxServices = 1000
	ll := lokipush.DefaultLimits()
	c.Limits.LokiPush = LokiPushLimits{MaxLineSize: ByteSize(ll.MaxLineBytes), MaxLabelNamesPerSeries: ll.MaxLabelNames,
		MaxLabelNameLength: ll.MaxLabelNameBytes, MaxLabelValueLength: ll.MaxLabelValueBytes,
		RejectOldSamplesMaxAge: ll.MaxAge, CreationGracePeriod: ll.MaxAhead}
	qc := querybudget.DefaultConfig()
	rl := readapi.DefaultLimits()
	c.Limits.Queries = QueryLimits{ // max_concurrent 0: from the processors (querybudget.DefaultConfig)
		QueueWait: qc.MaxQueueWait, Memory: ByteSize(qc.Memory), MaxTails: qc.MaxTails, MaxTailsPerTenant: qc.MaxTailsPerTenant,
		Timeout: rl.Timeout, MaxTraces: rl.MaxTraces, MaxLines: rl.MaxLines, MaxSeries: rl.MaxSeries, MaxBytesRead: ByteSize(rl.MaxBytesRead),
	}
	c.Metrics = MetricsConfig{Retention: 15 * 24 * time.Hour, BlockDuration: 2 * time.Hour, PromoteScopeMetadata: true, LabelLimit: 128, DeltaMaxStale: 5 * time.Minute}
	c.Spool = SpoolConfig{Sync: "interval", SyncInterval: 100 * time.Millisecond, SegmentSize: 64 << 20, MaxSize: 8 << 30, TailSize: 8 << 20}
	c.Lake = LakeConfig{Tenant: "default", MaxDelay: time.Minute, FileSize: 64 << 20, MaxBuffer: 16 << 20, Compact: true, CompactGrace: 2 * time.Minute}
	c.Store = StoreConfig{Logs: true, Traces: true, Metrics: true}
	c.Rules.EvaluationInterval = time.Minute
	tm := tracemetrics.DefaultConfig()
	c.TraceMetrics = TraceMetricsConfig{Enabled: true, FlushInterval: time.Minute, Dimensions: []string{},
		MaxSeries: tm.MaxSeries, MaxGraphSeries: tm.MaxGraphSeries, MaxEdges: tm.MaxEdges, EdgeTTL: tm.EdgeTTL,
		MaxExemplarsPerPoint: tm.MaxExemplarsPerPoint}
	c.ShutdownTimeout = 30 * time.Second
	return c
}

// LoadFile overlays the YAML file at path on c. Scalar values may refer to
// the environment as the OpenTelemetry Collector's configuration does:
// ${env:NAME}, ${env:NAME:-default}, and $$ for a literal $; a variable
// that is not set expands to its default or "", and New logs a warning
// for each such reference. Unknown keys are errors naming the key and its
// line, so a misspelt setting is not silently ignored.
func (c *Config) LoadFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	unset, err := decodeConfig(b, c)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	c.unsetEnv = append(c.unsetEnv, unset...)
	return nil
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("data dir must be set")
	}
	if _, err := parseLevel(c.Log.Level); err != nil {
		return err
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		return fmt.Errorf("log format must be text or json, got %q", c.Log.Format)
	}
	if c.ShutdownTimeout <= 0 {
		return errors.New("shutdown timeout must be positive")
	}
	if c.Jaeger.TenantHeader == "" {
		return errors.New("jaeger: tenant_header must be set")
	}
	if err := c.Rules.validate(c.Lake.Tenant); err != nil {
		return err
	}
	if tm := c.TraceMetrics; tm.Enabled {
		if tm.FlushInterval <= 0 {
			return errors.New("trace_metrics: flush_interval must be positive")
		}
		if err := tm.generator().Validate(); err != nil {
			return fmt.Errorf("trace_metrics: %w", err)
		}
		if tm.Exemplars && c.Metrics.MaxExemplars == 0 {
			return errors.New("trace_metrics: exemplars need metrics.max_exemplars above 0: the metric store keeps none")
		}
	}
	if c.Limits.MaxServices <= 0 {
		return errors.New("max services must be positive")
	}
	if c.Metrics.Retention <= 0 || c.Metrics.BlockDuration <= 0 || c.Metrics.OutOfOrderWindow < 0 || c.Metrics.RetentionSize < 0 {
		return errors.New("metrics retention and block duration must be positive, the out-of-order window and retention size not negative")
	}
	if c.Metrics.MaxExemplars < 0 {
		return errors.New("metrics: max_exemplars must not be negative")
	}
	if !c.Metrics.RefuseDelta && c.Metrics.DeltaMaxStale <= 0 {
		return errors.New("metrics: delta_max_stale must be positive unless refuse_delta")
	}
	if c.Metrics.LabelLimit < 0 {
		return errors.New("metrics: label_limit must not be negative")
	}
	if c.Metrics.PromoteAll && len(c.Metrics.PromoteAttributes) > 0 {
		return errors.New("metrics: promote_all_resource_attributes and promote_resource_attributes exclude each other (use ignore_resource_attributes)")
	}
	if !c.Metrics.PromoteAll && len(c.Metrics.IgnoreAttributes) > 0 {
		return errors.New("metrics: ignore_resource_attributes needs promote_all_resource_attributes")
	}
	if _, err := spool.ParseSyncPolicy(c.Spool.Sync); err != nil {
		return fmt.Errorf("spool sync: %w", err)
	}
	if c.Spool.Sync == "interval" && c.Spool.SyncInterval <= 0 {
		return errors.New("spool sync interval must be positive")
	}
	if c.Spool.TailSize < 0 {
		return errors.New("spool tail size must not be negative")
	}
	if c.Spool.SegmentSize < 1<<20 {
		return errors.New("spool segment size must be at least 1MiB")
	}
	if c.Spool.MaxSize != 0 && c.Spool.MaxSize < 2*c.Spool.SegmentSize {
		return errors.New("spool max size must be 0 (no limit) or at least two segments")
	}
	if !tenant.Valid(c.Lake.Tenant) {
		return fmt.Errorf("lake tenant %q: want 1 to 128 of [A-Za-z0-9._-]", c.Lake.Tenant)
	}
	if c.Lake.MaxDelay <= 0 {
		return errors.New("lake max delay must be positive")
	}
	if c.Lake.FileSize < 1<<10 || c.Lake.MaxBuffer < 1<<10 {
		return errors.New("lake file size and max buffer must be at least 1KiB")
	}
	if c.Limits.MemoryLimit < 0 {
		return errors.New("memory limit must not be negative")
	}
	if err := c.queryBudget().Validate(); err != nil {
		return fmt.Errorf("limits.queries: %w", err)
	}
	if err := c.readLimits().Validate(); err != nil {
		return fmt.Errorf("limits.queries: %w", err)
	}
	if c.Lake.CompactGrace < 0 {
		return errors.New("lake: compact_grace must not be negative")
	}
	if c.Lake.Retention < 0 || c.Lake.RetentionSize < 0 {
		return errors.New("lake retention and retention size must not be negative")
	}
	if _, _, err := ParseLakeURL(c.Lake.URL); err != nil {
		return err
	}
	if c.Lake.Node != "" && !lake.ValidNode(c.Lake.Node) {
		return fmt.Errorf("lake node %q: want 1 to 63 of [a-z0-9-], not starting with -", c.Lake.Node)
	}
	if err := c.validateForward(); err != nil {
		return err
	}
	return c.receiverConfig().Validate()
}

func (c Config) receiverConfig() receiver.Config {
	return receiver.Config{
		GRPCAddr:             c.OTLP.GRPC.Listen,
		HTTPAddr:             c.OTLP.HTTP.Listen,
		MaxRequestBytes:      int64(c.Limits.MaxRequestSize),
		MaxDecompressedBytes: int64(c.Limits.MaxDecompressedSize),
		MaxInflightBytes:     int64(c.Limits.MaxInflight),
		MaxGRPCMessageBytes:  int64(c.OTLP.GRPC.MaxRecvMsgSize),
		MaxConcurrentStreams: c.OTLP.GRPC.MaxConcurrentStreams,
		ReadHeaderTimeout:    c.OTLP.HTTP.ReadHeaderTimeout,
		ReadTimeout:          c.OTLP.HTTP.ReadTimeout,
		WriteTimeout:         c.OTLP.HTTP.WriteTimeout,
		IdleTimeout:          c.OTLP.HTTP.IdleTimeout,
		RetryAfter:           c.Limits.RetryAfter,
		CORS:                 c.OTLP.HTTP.CORS,
		Loki:                 c.Limits.LokiPush.lokipush(),
	}
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("log level must be debug, info, warn or error, got %q", s)
	}
	return l, nil
}

// ByteSize is a size in bytes written as an integer or with a unit (see
// bytesize.Size).
type ByteSize = bytesize.Size

// ParseByteSize parses s as a ByteSize.
func ParseByteSize(s string) (ByteSize, error) { return bytesize.Parse(s) }

// ParseLakeURL parses a lake URL: "" is the data directory's lake (both
// results empty), s3://bucket/prefix an S3 bucket and the key prefix the
// lake lives under ("" for the bucket's root).
func ParseLakeURL(raw string) (bucketName, prefix string, err error) {
	if raw == "" {
		return "", "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("lake url: %w", err)
	}
	if u.Scheme != "s3" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("lake url %q: want s3://bucket/prefix (the store's endpoint and region go in lake.s3 or the AWS environment)", raw)
	}
	prefix = strings.Trim(u.Path, "/")
	if prefix != "" {
		if err := bucket.ValidName(prefix); err != nil {
			return "", "", fmt.Errorf("lake url %q: prefix: %w", raw, err)
		}
	}
	return u.Host, prefix, nil
}

// QueryLimits is the read APIs' budget: how many queries run at once, all
// tenants (0: one less than the processors, at least 1) and per tenant
// (0: three quarters of that, at least 1), how long one waits for a slot
// before it is refused (429 or 503 with a Retry-After, in its API's error
// shape), the memory they may hold together (the queries' share of the
// ceiling) and one alone (0: half of it), and the live tails open at
// once.
type QueryLimits struct {
	MaxConcurrent          int           `yaml:"max_concurrent"`
	MaxConcurrentPerTenant int           `yaml:"max_concurrent_per_tenant"`
	QueueWait              time.Duration `yaml:"queue_wait"`
	Memory                 ByteSize      `yaml:"memory"`
	MaxQueryMemory         ByteSize      `yaml:"max_query_memory"`
	MaxTails               int           `yaml:"max_tails"`
	MaxTailsPerTenant      int           `yaml:"max_tails_per_tenant"`
	// The bounds every read API obeys (readapi.Limits).
	Timeout      time.Duration `yaml:"timeout"`
	MaxTraces    int           `yaml:"max_traces"`
	MaxLines     int           `yaml:"max_lines"`
	MaxSeries    int           `yaml:"max_series"`
	MaxBytesRead ByteSize      `yaml:"max_bytes_read"`
}

// readLimits are the bounds every read API obeys.
func (c Config) readLimits() readapi.Limits {
	q := c.Limits.Queries
	return readapi.Limits{Timeout: q.Timeout, MaxTraces: q.MaxTraces, MaxLines: q.MaxLines, MaxSeries: q.MaxSeries, MaxBytesRead: int64(q.MaxBytesRead)}
}

// queryBudget is the query budget's configuration (without its
// Registerer).
func (c Config) queryBudget() querybudget.Config {
	q := c.Limits.Queries
	def := querybudget.DefaultConfig()
	if q.MaxConcurrent == 0 {
		q.MaxConcurrent = def.MaxConcurrent
	}
	if q.MaxConcurrentPerTenant == 0 {
		q.MaxConcurrentPerTenant = min(q.MaxConcurrent, max(1, q.MaxConcurrent*3/4))
	}
	return querybudget.Config{
		MaxConcurrent: q.MaxConcurrent, MaxConcurrentPerTenant: q.MaxConcurrentPerTenant, MaxQueueWait: q.QueueWait,
		Memory: int64(q.Memory), MaxQueryMemory: cmp.Or(int64(q.MaxQueryMemory), int64(q.Memory)/2),
		MaxTails: q.MaxTails, MaxTailsPerTenant: q.MaxTailsPerTenant, RetryAfter: c.Limits.RetryAfter,
	}
}
