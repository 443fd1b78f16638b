package overrides

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
	"golang.org/x/time/rate"

	"github.com/wirehouse/wirehouse/internal/bytesize"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/watch"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Rate limits the ingestion of one signal: records (log records, spans,
// data points) and request bytes (decompressed) per second, each with
// its burst, the most one request, or requests in a quick row, may take
// at once. 0 is no limit; a burst of 0 with a rate is one second's worth.
type Rate struct {
	Records      float64       `yaml:"records_per_second"`
	RecordsBurst int           `yaml:"records_burst"`
	Bytes        bytesize.Size `yaml:"bytes_per_second"`
	BytesBurst   bytesize.Size `yaml:"bytes_burst"`
}

// Limits are one tenant's limits. The zero value limits nothing.
type Limits struct {
	Logs    Rate `yaml:"logs"`
	Traces  Rate `yaml:"traces"`
	Metrics Rate `yaml:"metrics"`
	// InflightShare is the part (0 to 1) of the receiver's in-flight
	// budget the tenant's requests may hold at once; 0 is no share of
	// its own (the whole budget, as without overrides).
	InflightShare float64 `yaml:"inflight_share"`
	// MaxActiveSeries bounds the tenant's series in the metric store's
	// head (Mimir's max_global_series_per_user): a point that would
	// create one more is refused (series_limit in the partial success;
	// for remote write 400, the request's other series stored; a rule's
	// result discarded, as Prometheus' rules report), the existing series
	// keep taking points; 0 is no bound.
	MaxActiveSeries int `yaml:"max_active_series"`
	// LakeRetention removes the tenant's lake partitions (every signal)
	// whose hour ended longer ago, in place of lake.retention; 0 keeps
	// that. MetricsRetention removes the tenant's samples older than it
	// from the metric store (tombstones, then compaction); 0 keeps
	// metrics.retention. Written as Prometheus writes durations.
	LakeRetention    model.Duration `yaml:"lake_retention"`
	MetricsRetention model.Duration `yaml:"metrics_retention"`
	// MaxConcurrentQueries bounds the tenant's queries running at once
	// (in place of limits.queries' per-tenant bound, never above the
	// server's); 0 keeps the server's.
	MaxConcurrentQueries int `yaml:"max_concurrent_queries"`
	// MaxQueryRange bounds the time range of one query (Loki's
	// max_query_length, Mimir's max_total_query_length): a PromQL range
	// query's, a LogQL query's, a trace search's; longer ones get 400.
	// Written as Prometheus writes durations ("721h", "30d"); 0 is no
	// bound.
	MaxQueryRange model.Duration `yaml:"max_query_range"`
}

// rate returns the limits of sig.
func (l Limits) rate(sig otlpwire.Signal) Rate {
	switch sig {
	case otlpwire.SignalLogs:
		return l.Logs
	case otlpwire.SignalTraces:
		return l.Traces
	case otlpwire.SignalMetrics:
		return l.Metrics
	}
	return Rate{}
}

func (r Rate) validate(what string) error {
	switch {
	case r.Records < 0 || math.IsNaN(r.Records) || math.IsInf(r.Records, 0):
		return fmt.Errorf("%s: records_per_second %v is not a rate", what, r.Records)
	case r.RecordsBurst < 0 || r.Bytes < 0 || r.BytesBurst < 0:
		return fmt.Errorf("%s: negative limit", what)
	}
	return nil
}

func (l Limits) validate(what string) error {
	for _, r := range []struct {
		name string
		r    Rate
	}{{"logs", l.Logs}, {"traces", l.Traces}, {"metrics", l.Metrics}} {
		if err := r.r.validate(what + "." + r.name); err != nil {
			return err
		}
	}
	switch {
	case !(l.InflightShare >= 0 && l.InflightShare <= 1):
		return fmt.Errorf("%s: inflight_share %v is not between 0 and 1", what, l.InflightShare)
	case l.MaxActiveSeries < 0:
		return fmt.Errorf("%s: max_active_series %d is negative", what, l.MaxActiveSeries)
	case l.LakeRetention < 0 || l.MetricsRetention < 0:
		return fmt.Errorf("%s: negative retention", what)
	case l.MaxConcurrentQueries < 0:
		return fmt.Errorf("%s: max_concurrent_queries %d is negative", what, l.MaxConcurrentQueries)
	case l.MaxQueryRange < 0:
		return fmt.Errorf("%s: max_query_range %v is negative", what, l.MaxQueryRange)
	}
	return nil
}

// Config configures Load.
type Config struct {
	// Path is the overrides file; it must be set.
	Path string
	// DefaultTenant is the name the file gives the default tenant (""),
	// the lake's tenant name in serve.
	DefaultTenant string
	// Registerer, if not nil, gets wirehouse_tenant_refused_requests_total
	// and wirehouse_tenant_refused_records_total, by tenant, signal and
	// reason, and wirehouse_overrides_reloads_total by result.
	Registerer prometheus.Registerer
	// Logger tells of reloads and of files that fail to load; nil
	// discards.
	Logger *slog.Logger
	// ReloadEvery is how often the file is looked at, at most; the
	// default is a second.
	ReloadEvery time.Duration
}

// DefaultConfig returns the defaults, without a Path.
func DefaultConfig() Config {
	return Config{DefaultTenant: "default", ReloadEvery: time.Second}
}

// Validate reports what Load would refuse in c.
func (c Config) Validate() error {
	switch {
	case c.Path == "":
		return errors.New("overrides: Path not set")
	case c.ReloadEvery <= 0:
		return fmt.Errorf("overrides: ReloadEvery %v not positive", c.ReloadEvery)
	case c.DefaultTenant != "" && !tenant.Valid(c.DefaultTenant):
		return fmt.Errorf("overrides: default tenant %q is not a tenant name", c.DefaultTenant)
	}
	return nil
}

// Overrides are the limits of every tenant, from a file re-read when it
// changes. It is safe for concurrent use.
type Overrides struct {
	cfg   Config
	log   *slog.Logger
	table atomic.Pointer[table]

	mu    sync.Mutex // held while the file is looked at and read
	files *watch.Files
	next  atomic.Int64 // unix ns: the file is not looked at before

	buckets sync.Map // bucketKey → *bucket

	refusedReqs, refusedRecs *prometheus.CounterVec
	reloads                  *prometheus.CounterVec
}

// table is a file's contents.
type table struct {
	defaults Limits
	tenants  map[string]Limits // by tenant ("" the default)
}

// fileFormat is the overrides file, as Mimir's and Loki's runtime
// overrides: defaults, then each tenant's, which start from the defaults
// (a field a tenant leaves out keeps the default's value).
type fileFormat struct {
	Defaults  yaml.Node            `yaml:"defaults"`
	Overrides map[string]yaml.Node `yaml:"overrides"`
}

// Load reads the overrides file. A later read that fails keeps the
// limits in force and is logged and counted.
func Load(cfg Config) (*Overrides, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	o := &Overrides{cfg: cfg, log: cfg.Logger, files: watch.New(cfg.ReloadEvery, cfg.Path)}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	o.refusedReqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wirehouse_tenant_refused_requests_total",
		Help: "OTLP requests refused for a tenant's limits, by tenant, signal and reason.",
	}, []string{"tenant", "signal", "reason"})
	o.refusedRecs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wirehouse_tenant_refused_records_total",
		Help: "Records of the OTLP requests refused for a tenant's limits, by tenant, signal and reason.",
	}, []string{"tenant", "signal", "reason"})
	o.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wirehouse_overrides_reloads_total",
		Help: "Reads of the overrides file after the first, by result (ok or error).",
	}, []string{"result"})
	if err := o.load(); err != nil {
		return nil, err
	}
	if cfg.Registerer != nil {
		for _, c := range []prometheus.Collector{o.refusedReqs, o.refusedRecs, o.reloads} {
			if err := cfg.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("overrides: register metrics: %w", err)
			}
		}
	}
	o.next.Store(time.Now().Add(cfg.ReloadEvery).UnixNano())
	return o, nil
}

// load reads the file into the table in force; on error the table is
// left as it was. The caller holds mu or owns o.
func (o *Overrides) load() error {
	o.files.Mark() // a file that fails is read again once it changes
	b, err := os.ReadFile(o.cfg.Path)
	if err != nil {
		return fmt.Errorf("overrides: %w", err)
	}
	t, err := parse(b, o.cfg.DefaultTenant)
	if err != nil {
		return fmt.Errorf("overrides %s: %w", o.cfg.Path, err)
	}
	o.table.Store(t)
	return nil
}

// parse reads a file's contents; unknown fields are errors.
func parse(b []byte, defaultName string) (*table, error) {
	var f fileFormat
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	t := &table{tenants: make(map[string]Limits, len(f.Overrides))}
	if err := decodeStrict(&f.Defaults, &t.defaults); err != nil {
		return nil, fmt.Errorf("defaults: %w", err)
	}
	if err := t.defaults.validate("defaults"); err != nil {
		return nil, err
	}
	for name, n := range f.Overrides {
		if !tenant.Valid(name) {
			return nil, fmt.Errorf("overrides: %q is not a tenant name", name)
		}
		l := t.defaults
		if err := decodeStrict(&n, &l); err != nil {
			return nil, fmt.Errorf("overrides.%s: %w", name, err)
		}
		if err := l.validate("overrides." + name); err != nil {
			return nil, err
		}
		if name == defaultName {
			name = ""
		}
		t.tenants[name] = l
	}
	return t, nil
}

// decodeStrict decodes n, if set, onto v, refusing unknown fields.
func decodeStrict(n *yaml.Node, v *Limits) error {
	if n.Kind == 0 {
		return nil
	}
	// A node's Decode does not refuse unknown fields: encode it back
	// and decode that strictly.
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// refresh reads the file again if it changed, looking at most once per
// Config.ReloadEvery.
func (o *Overrides) refresh(now time.Time) {
	if now.UnixNano() < o.next.Load() || !o.mu.TryLock() {
		return
	}
	defer o.mu.Unlock()
	o.next.Store(now.Add(o.cfg.ReloadEvery).UnixNano())
	if !o.files.Changed(now) {
		return
	}
	if err := o.load(); err != nil {
		o.reloads.WithLabelValues("error").Inc()
		o.log.Error("overrides file not reloaded; the limits in force stay", "err", err)
		return
	}
	o.reloads.WithLabelValues("ok").Inc()
	o.log.Info("overrides file reloaded", "path", o.cfg.Path, "tenants", len(o.table.Load().tenants))
}

// For returns the limits of tenant ("" or Config.DefaultTenant the
// default), reading the file
// again first if it changed.
func (o *Overrides) For(tenant string) Limits {
	o.refresh(time.Now())
	return o.limits(tenant)
}

func (o *Overrides) limits(tenant string) Limits {
	if tenant == o.cfg.DefaultTenant {
		tenant = "" // as the read side names it
	}
	t := o.table.Load()
	if l, ok := t.tenants[tenant]; ok {
		return l
	}
	return t.defaults
}

// QueryLimits are tenant's query limits, for the query budget
// (querybudget.Config.PerTenant).
func (o *Overrides) QueryLimits(tenant string) querybudget.TenantLimits {
	l := o.For(tenant)
	return querybudget.TenantLimits{MaxConcurrent: l.MaxConcurrentQueries, MaxRange: time.Duration(l.MaxQueryRange)}
}

// LakeRetention is For(tenant).LakeRetention, for the lake's retention
// (lake.Retention.TenantMaxAge, which names the default tenant as its
// partitions do).
func (o *Overrides) LakeRetention(tenant string) time.Duration {
	return time.Duration(o.For(tenant).LakeRetention)
}

// MetricsRetention is For(tenant).MetricsRetention, for the metric
// store's per-tenant retention (metricstore.Store.TenantRetention, which
// names the default tenant "").
func (o *Overrides) MetricsRetention(tenant string) time.Duration {
	return time.Duration(o.For(tenant).MetricsRetention)
}

// SeriesLimit is For(tenant).MaxActiveSeries, for the metric store
// (metricstore.Config.SeriesLimit).
func (o *Overrides) SeriesLimit(tenant string) int { return o.For(tenant).MaxActiveSeries }

// InflightShare is For(tenant).InflightShare, for the receiver.
func (o *Overrides) InflightShare(tenant string) float64 { return o.For(tenant).InflightShare }

// bucketKey names the token buckets of one tenant's signal.
type bucketKey struct {
	tenant string
	sig    otlpwire.Signal
}

// bucket is the token buckets of one tenant's signal, and the Rate they
// were set for.
type bucket struct {
	mu             sync.Mutex
	rate           Rate
	records, bytes *rate.Limiter
}

// set makes b's buckets those of r, full: a changed limit starts over.
func (b *bucket) set(r Rate) {
	b.rate = r
	b.records = newLimiter(r.Records, r.RecordsBurst)
	b.bytes = newLimiter(float64(r.Bytes), int(r.BytesBurst))
}

// newLimiter returns a full bucket of perSecond (0: no limit) and burst
// (0: one second's worth).
func newLimiter(perSecond float64, burst int) *rate.Limiter {
	if perSecond == 0 {
		return rate.NewLimiter(rate.Inf, 0)
	}
	if burst == 0 {
		burst = int(math.Ceil(perSecond))
	}
	return rate.NewLimiter(rate.Limit(perSecond), burst)
}

// Admit takes a request of tenant's signal, of records records and size
// bytes, from the tenant's rate limits: nil if it fits, else a refusal
// the receiver answers as it is (pipeline.KindOverloaded with the wait
// after which it would fit, 429 / RESOURCE_EXHAUSTED with RetryInfo; or
// pipeline.KindTooLarge for a request larger than a burst, which no wait
// makes fit), counted by tenant, signal and reason.
func (o *Overrides) Admit(tenant string, sig otlpwire.Signal, records, size int) error {
	now := time.Now()
	o.refresh(now)
	r := o.limits(tenant).rate(sig)
	if r == (Rate{}) {
		return nil
	}
	k := bucketKey{tenant, sig}
	v, ok := o.buckets.Load(k)
	if !ok {
		v, _ = o.buckets.LoadOrStore(k, &bucket{})
	}
	b := v.(*bucket)
	b.mu.Lock()
	if b.records == nil || b.rate != r {
		b.set(r)
	}
	reason, wait := take(b, records, size, now)
	b.mu.Unlock()
	if reason == "" {
		return nil
	}
	name := tenant
	if name == "" {
		name = o.cfg.DefaultTenant
	}
	o.refusedReqs.WithLabelValues(name, sig.String(), reason).Inc()
	o.refusedRecs.WithLabelValues(name, sig.String(), reason).Add(float64(records))
	if wait < 0 {
		return pipeline.Refuse(pipeline.KindTooLarge, "tenant %s: a %s request of %d records and %d bytes is over its burst (%s); send smaller requests",
			name, sig, records, size, reason)
	}
	e := pipeline.Refuse(pipeline.KindOverloaded, "tenant %s is over its %s ingestion limit (%s); retry in %v",
		name, sig, reason, wait.Round(time.Millisecond))
	e.RetryAfter = wait
	return e
}

// take takes records and size from b's buckets, both or neither: "" if
// they fit; else the reason and the wait until they would, negative when
// a burst is smaller than the request. The caller holds b.mu.
func take(b *bucket, records, size int, now time.Time) (string, time.Duration) {
	if records > b.records.Burst() && b.records.Limit() != rate.Inf {
		return "records_burst", -1
	}
	if size > b.bytes.Burst() && b.bytes.Limit() != rate.Inf {
		return "bytes_burst", -1
	}
	rr := b.records.ReserveN(now, records)
	if d := rr.DelayFrom(now); d > 0 {
		rr.CancelAt(now)
		return "records_rate", d
	}
	rb := b.bytes.ReserveN(now, size)
	if d := rb.DelayFrom(now); d > 0 {
		rb.CancelAt(now)
		rr.CancelAt(now)
		return "bytes_rate", d
	}
	return "", 0
}
