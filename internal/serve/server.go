// Package serve wires wirehouse serve together: the OTLP receiver, its
// sinks (per-service counters for every signal; the spool for logs and
// traces, loaded into the Parquet lake), and the admin HTTP server with
// /metrics, /healthz and /readyz.
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/storage/remote"

	"github.com/wirehouse/wirehouse/internal/bearer"
	"github.com/wirehouse/wirehouse/internal/countsink"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakesink"
	"github.com/wirehouse/wirehouse/internal/metricstore"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/promapi"
	"github.com/wirehouse/wirehouse/internal/quarantine"
	"github.com/wirehouse/wirehouse/internal/receiver"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/tlsfiles"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Server is a configured wirehouse serve process.
type Server struct {
	cfg         Config
	log         *slog.Logger
	reg         *prometheus.Registry
	receiver    *receiver.Receiver
	admin       *http.Server
	adminMux    *http.ServeMux
	adminLn     net.Listener
	adminTLS    *tls.Config
	adminTokens *bearer.Tokens
	closers     []io.Closer // sinks to flush and close after the receiver drained
	metrics     *metricstore.Store
	quarantine  *quarantine.Dir
	spool       *spool.Spool
	loader      *lakesink.Loader
	stopLoad    context.CancelFunc
	loading     sync.WaitGroup
	ready       atomic.Bool
	serving     sync.WaitGroup
	errs        chan error
}

// New validates cfg and builds the server; logs go to logOut.
func New(cfg Config, logOut io.Writer) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	level, _ := parseLevel(cfg.Log.Level)
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(logOut, opts)
	if cfg.Log.Format == "json" {
		h = slog.NewJSONHandler(logOut, opts)
	}
	s := &Server{cfg: cfg, log: slog.New(h), reg: prometheus.NewRegistry(), errs: make(chan error, 1)}
	limit, source := cfg.applyMemoryLimit()
	s.log.Info("memory limit", "limit_bytes", limit, "source", source, "ceiling_bytes", cfg.MemoryCeiling())
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	rc := cfg.receiverConfig()
	var err error
	if rc.GRPCTLS, err = s.tlsConfig("otlp.grpc.tls", cfg.OTLP.GRPC.TLS); err != nil {
		return nil, err
	}
	if rc.HTTPTLS, err = s.tlsConfig("otlp.http.tls", cfg.OTLP.HTTP.TLS); err != nil {
		return nil, err
	}
	if s.adminTLS, err = s.tlsConfig("admin.tls", cfg.Admin.TLS); err != nil {
		return nil, err
	}
	var ropts []receiver.Option
	if path := cfg.OTLP.Auth.BearerTokensFile; path != "" {
		tokens, err := s.loadTokens("otlp.auth", path)
		if err != nil {
			return nil, err
		}
		ropts = append(ropts, receiver.WithAuthenticator(tokens))
	}
	if path := cfg.Admin.Auth.BearerTokensFile; path != "" {
		if s.adminTokens, err = s.loadTokens("admin.auth", path); err != nil {
			return nil, err
		}
	}
	sink, err := countsink.New(s.reg, cfg.Limits.MaxServices)
	if err != nil {
		return nil, err
	}
	if err := s.openLake(); err != nil {
		return nil, err
	}
	ls, err := lakesink.NewSink(s.spool, cfg.Lake.Tenant)
	if err != nil {
		s.spool.Close()
		return nil, err
	}
	ms := pipeline.SinkFunc(func(ctx context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		res, err := s.metrics.AppendOTLP(ctx, s.metricsTenant(req.Tenant), req.Body)
		var we *otlpwire.Error
		if errors.As(err, &we) {
			return pipeline.Outcome{}, err // malformed: the receiver answers 400
		}
		if err != nil {
			return pipeline.Outcome{}, fmt.Errorf("store metrics: %v: %w", err, pipeline.ErrUnavailable)
		}
		return pipeline.Outcome{Rejected: res.Rejected, Message: res.Message()}, nil
	})
	// The store validates metrics as it walks them (see AppendOTLP), so it
	// goes first and the receiver does not walk them twice; the counting
	// sink then sees only requests the store accepted.
	sinks := pipeline.Sinks{
		Metrics: []pipeline.Sink{pipeline.Validating(ms), sink},
		Logs:    []pipeline.Sink{sink, ls},
		Traces:  []pipeline.Sink{sink, ls},
	}
	for _, list := range [][]pipeline.Sink{sinks.Metrics, sinks.Logs, sinks.Traces} {
		for _, sk := range list {
			if c, ok := sk.(io.Closer); ok && !slices.Contains(s.closers, c) {
				s.closers = append(s.closers, c)
			}
		}
	}
	ropts = append(ropts, receiver.WithLogger(s.log), receiver.WithRegisterer(s.reg),
		receiver.WithQuarantine(receiverQuarantine{s.quarantine}))
	s.receiver, err = receiver.New(rc, sinks, ropts...)
	if err != nil {
		s.loader.Close()
		s.spool.Close()
		return nil, err
	}
	s.adminMux = http.NewServeMux()
	popts := []promapi.Option{promapi.WithLogger(s.log), promapi.WithRevision(buildRevision()), promapi.WithMetadata(s.metrics),
		promapi.WithTSDBStatus(s.metrics, s.reg)}
	if cfg.Metrics.AdminAPI {
		popts = append(popts, promapi.WithAdmin(s.metrics, filepath.Join(cfg.DataDir, "metrics", "snapshots")))
	}
	if eq := s.metrics.ExemplarQueryable(); eq != nil {
		popts = append(popts, promapi.WithExemplars(eq))
	}
	api, err := promapi.New(s.metrics.Queryable(), popts...)
	if err != nil {
		s.closeStorage()
		return nil, err
	}
	api.Register(s.adminMux)
	// Prometheus remote write 1.0 and 2.0 (snappy protobuf; the
	// Content-Type's proto parameter says which) into the same store, with
	// Prometheus' own handler, as Prometheus' receiver with both messages
	// accepted.
	s.adminMux.Handle("POST /api/v1/write", s.whileMetricsAccepted(remote.NewWriteHandler(s.log, s.reg, s.metrics.Appendable(),
		remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}, false, false)))
	// Remote read, as Prometheus serves it (its flags' defaults: 5e7
	// samples a query, 10 at once, 1 MiB frames), so a Prometheus can
	// read wirehouse's metrics with remote_read; no external labels.
	s.adminMux.Handle("POST /api/v1/read", remote.NewReadHandler(s.log, s.reg, s.metrics.Queryable(),
		func() config.Config { return config.Config{} }, 5e7, 10, 1<<20))
	s.adminMux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg, EnableOpenMetrics: true}))
	s.adminMux.HandleFunc("/debug/pprof/", pprof.Index)
	s.adminMux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	s.adminMux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	s.adminMux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	s.adminMux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	healthy := func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n") //nolint:errcheck
	}
	ready := func(w http.ResponseWriter, _ *http.Request) {
		if !s.ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n") //nolint:errcheck
	}
	// Kubernetes-style names, and Prometheus' (promtool check healthy
	// and check ready, load balancers set up for Prometheus).
	for _, path := range []string{"/healthz", "/-/healthy"} {
		s.adminMux.HandleFunc("GET "+path, healthy)
	}
	for _, path := range []string{"/readyz", "/-/ready"} {
		s.adminMux.HandleFunc("GET "+path, ready)
	}
	return s, nil
}

// openLake creates the data directory, opens the spool (repairing a torn
// tail, which it logs) and the loader that moves the spool into the lake.
func (s *Server) openLake() error {
	if err := os.MkdirAll(s.cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	q, err := quarantine.Open(filepath.Join(s.cfg.DataDir, "quarantine"), s.reg)
	if err != nil {
		return err
	}
	s.quarantine = q
	mopts := []metricstore.Option{
		metricstore.WithRetention(s.cfg.Metrics.Retention),
		metricstore.WithRetentionSize(int64(s.cfg.Metrics.RetentionSize)),
		metricstore.WithOutOfOrderWindow(s.cfg.Metrics.OutOfOrderWindow),
		metricstore.WithBlockDuration(s.cfg.Metrics.BlockDuration, 0),
		metricstore.WithMaxExemplars(s.cfg.Metrics.MaxExemplars),
		metricstore.WithScopeLabels(s.cfg.Metrics.PromoteScopeMetadata),
		metricstore.WithLabelLimit(s.cfg.Metrics.LabelLimit),
		metricstore.WithLogger(s.log),
		metricstore.WithRegisterer(s.reg),
	}
	if s.cfg.Metrics.PromoteAll {
		mopts = append(mopts, metricstore.WithPromoteAllResourceAttributes(s.cfg.Metrics.IgnoreAttributes...))
	} else if len(s.cfg.Metrics.PromoteAttributes) > 0 {
		mopts = append(mopts, metricstore.WithPromotedResourceAttributes(s.cfg.Metrics.PromoteAttributes...))
	}
	ms, err := metricstore.Open(filepath.Join(s.cfg.DataDir, "metrics"), mopts...)
	if err != nil {
		return fmt.Errorf("open metric store: %w", err)
	}
	s.metrics = ms
	policy, _ := spool.ParseSyncPolicy(s.cfg.Spool.Sync) // checked by Validate
	sp, err := spool.Open(filepath.Join(s.cfg.DataDir, "spool"),
		spool.WithSync(policy, s.cfg.Spool.SyncInterval),
		spool.WithSegmentSize(int64(s.cfg.Spool.SegmentSize)),
		spool.WithMaxBytes(int64(s.cfg.Spool.MaxSize)))
	if err != nil {
		ms.Close()
		return fmt.Errorf("open spool: %w", err)
	}
	for _, r := range sp.Repairs() {
		s.log.Warn("spool: repaired a torn or corrupt tail", "segment", r.Segment, "offset", r.Offset, "err", r.Err)
	}
	s.spool = sp
	defer s.registerStorageMetrics()
	s.loader, err = lakesink.NewLoader(sp, lakesink.LoaderConfig{
		Dir:        filepath.Join(s.cfg.DataDir, "lake"),
		Consumer:   "lake",
		MaxDelay:   s.cfg.Lake.MaxDelay,
		FileSize:   int64(s.cfg.Lake.FileSize),
		Buffer:     int64(s.cfg.Lake.MaxBuffer),
		Retention:  lake.Retention{MaxAge: s.cfg.Lake.Retention, MaxSize: int64(s.cfg.Lake.RetentionSize)},
		Compact:    s.cfg.Lake.Compact,
		Logger:     s.log,
		Quarantine: s.quarantine,
	})
	if err != nil {
		sp.Close()
		ms.Close()
		return fmt.Errorf("open lake: %w", err)
	}
	return nil
}

// receiverQuarantine keeps the requests a sink panicked on (see
// receiver.WithQuarantine) in the data directory's quarantine, each under
// a new id.
type receiverQuarantine struct{ d *quarantine.Dir }

func (q receiverQuarantine) Quarantine(req *pipeline.Request, cause error) error {
	now := time.Now()
	_, err := q.d.Put(quarantine.Entry{Signal: req.Signal.String(), Tenant: req.Tenant, Source: "receiver",
		ID: fmt.Sprintf("%s-%016x", now.UTC().Format("20060102T150405.000000000Z"), rand.Uint64()), Received: now,
		Records: req.Records, Payload: req.Body, Err: cause})
	return err
}

// whileMetricsAccepted answers 503 with a Retry-After, as the OTLP
// receiver answers metrics then, while the metric store refuses writes
// after a write-ahead log write failed (see metricstore.ErrUnavailable),
// and passes the other requests to h. (A request under way when a write
// fails gets Prometheus' handler's 500 for the refused commit, which
// remote-write senders retry too.)
func (s *Server) whileMetricsAccepted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.metrics.Accepting() {
			w.Header().Set("Retry-After", strconv.Itoa(int(s.cfg.Limits.RetryAfter/time.Second)))
			http.Error(w, "metric store unavailable: a write-ahead log write failed; retry later", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// loadTokens loads a bearer tokens file for setting and logs its reloads.
func (s *Server) loadTokens(setting, path string) (*bearer.Tokens, error) {
	tokens, err := bearer.Load(path, lake.ValidTenant, func(n int, err error) {
		if err != nil {
			s.log.Error("bearer tokens reload failed; the previous tokens stay in force", "setting", setting, "file", path, "err", err)
			return
		}
		s.log.Info("bearer tokens reloaded", "setting", setting, "file", path, "tokens", n)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	return tokens, nil
}

// isProbe reports whether path is a health or readiness probe.
func isProbe(path string) bool {
	switch path {
	case "/healthz", "/-/healthy", "/readyz", "/-/ready":
		return true
	}
	return false
}

// adminHandler is the admin mux, behind the admin bearer tokens if any:
// every path but the health and readiness probes needs one, and the
// request then acts for the token's tenant (tenant.NewContext): the
// metric store's reads, remote write and the admin API see that tenant's
// metrics alone. Without tokens, and for a token naming no tenant, every
// request is the default tenant's.
func (s *Server) adminHandler() http.Handler {
	if s.adminTokens == nil {
		return s.adminMux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isProbe(r.URL.Path) {
			t, err := s.adminTokens.Authenticate(r.Header.Get("Authorization"))
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="wirehouse"`)
				http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
				return
			}
			if t = s.metricsTenant(t); t != "" {
				r = r.WithContext(tenant.NewContext(r.Context(), t))
			}
		}
		s.adminMux.ServeHTTP(w, r)
	})
}

// metricsTenant is the metric store's name of tenant t, a token's: the
// default tenant (a token naming none, or naming lake.tenant, whose data
// the lake keeps in the default partition) is "", whose series carry no
// tenant label, so that without tokens nothing differs.
func (s *Server) metricsTenant(t string) string {
	if t == s.cfg.Lake.Tenant {
		return ""
	}
	return t
}

// tlsConfig loads a listener's TLS files (nil when it has none) and logs
// every reload of its certificate.
func (s *Server) tlsConfig(name string, f tlsfiles.Server) (*tls.Config, error) {
	cfg, err := f.Config(func(err error) {
		if err != nil {
			s.log.Error("TLS certificate reload failed; serving the previous one", "listener", name, "err", err)
			return
		}
		s.log.Info("TLS certificate reloaded", "listener", name)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cfg, nil
}

// Start opens every listener and starts loading the spool into the lake.
// When it fails, the server is unusable and has released the spool.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", s.cfg.Admin.Listen)
	if err != nil {
		s.closeStorage()
		return fmt.Errorf("listen admin HTTP: %w", err)
	}
	s.adminLn = ln
	if err := s.receiver.Start(); err != nil {
		ln.Close()
		s.closeStorage()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopLoad = cancel
	s.loading.Go(func() {
		if err := s.loader.Run(ctx); err != nil {
			s.log.Error("lake loader stopped", "err", err)
			select {
			case s.errs <- err:
			default:
			}
		}
	})
	s.admin = &http.Server{
		Handler:           s.adminHandler(),
		ReadHeaderTimeout: s.cfg.OTLP.HTTP.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.OTLP.HTTP.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		TLSConfig:         s.adminTLS,
	}
	s.serving.Go(func() {
		serve := s.admin.Serve
		if s.adminTLS != nil {
			serve = func(ln net.Listener) error { return s.admin.ServeTLS(ln, "", "") }
		}
		if err := serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case s.errs <- fmt.Errorf("serve admin HTTP: %w", err):
			default:
			}
		}
	})
	s.log.Info("serving admin HTTP", "addr", ln.Addr().String(), "tls", s.adminTLS != nil, "data_dir", s.cfg.DataDir)
	s.ready.Store(true)
	return nil
}

// registerStorageMetrics exports the spool's and the lake loader's
// counters on /metrics, read when scraped.
func (s *Server) registerStorageMetrics() {
	if s.loader == nil {
		return
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	sp, ld := s.spool, s.loader
	s.reg.MustRegister(
		gauge("wirehouse_spool_bytes", "Size of the spool's segment files.", func() float64 { return float64(sp.Stats().Bytes) }),
		gauge("wirehouse_spool_segments", "Spool segment files.", func() float64 { return float64(sp.Stats().Segments) }),
		gauge("wirehouse_spool_last_seq", "Sequence number of the newest spooled record.", func() float64 { return float64(sp.Stats().LastSeq) }),
		counter("wirehouse_spool_appends_total", "Records appended to the spool since start.", func() float64 { return float64(sp.Stats().Appends) }),
		counter("wirehouse_spool_syncs_total", "Fsync batches of spool data since start.", func() float64 { return float64(sp.Stats().Syncs) }),
		counter("wirehouse_spool_full_total", "Appends refused because the spool was at its size limit.", func() float64 { return float64(sp.Stats().Full) }),
		gauge("wirehouse_lake_committed_seq", "Last spool record written to the lake and committed.", func() float64 { return float64(ld.Committed()) }),
		gauge("wirehouse_lake_lag_records", "Spooled records not yet written to the lake.", func() float64 {
			last, done := sp.Stats().LastSeq, ld.Committed()
			return float64(last - min(last, done))
		}),
		counter("wirehouse_lake_files_total", "Parquet files written since start.", func() float64 { return float64(ld.Written().Files) }),
		counter("wirehouse_lake_rows_total", "Rows written to Parquet since start.", func() float64 { return float64(ld.Written().Rows) }),
		counter("wirehouse_lake_bytes_total", "Bytes of Parquet written since start.", func() float64 { return float64(ld.Written().BytesOut) }),
		counter("wirehouse_lake_refused_records_total", "Spooled requests the lake could not store, kept in the quarantine directory instead (logged).", func() float64 { return float64(ld.Skipped()) }),
		gauge("wirehouse_lake_size_bytes", "Bytes of the lake's Parquet files, at the last retention pass (every minute).", func() float64 { return float64(ld.Pruned().Kept) }),
		gauge("wirehouse_lake_parquet_files", "The lake's Parquet files, at the last retention pass (every minute).", func() float64 { return float64(ld.Pruned().KeptFiles) }),
		counter("wirehouse_lake_retention_partitions_removed_total", "Hour partitions removed by --lake-retention or --lake-retention-size since start.", func() float64 { return float64(ld.Pruned().Partitions) }),
		counter("wirehouse_lake_retention_bytes_removed_total", "Parquet bytes removed by retention since start.", func() float64 { return float64(ld.Pruned().Bytes) }),
		counter("wirehouse_lake_compacted_files_total", "Small Parquet files merged by compaction since start.", func() float64 { return float64(ld.Compacted().Inputs) }),
		counter("wirehouse_lake_compaction_files_written_total", "Parquet files compaction wrote since start.", func() float64 { return float64(ld.Compacted().Merges) }),
	)
}

// closeStorage closes the lake loader and the spool.
func (s *Server) closeStorage() error {
	var err error
	if e := s.loader.Close(); e != nil {
		err = fmt.Errorf("close lake: %w", e)
	}
	if e := s.spool.Close(); e != nil {
		err = errors.Join(err, fmt.Errorf("close spool: %w", e))
	}
	if e := s.metrics.Close(); e != nil {
		err = errors.Join(err, fmt.Errorf("close metric store: %w", e))
	}
	return err
}

// buildRevision is the VCS revision the binary was built from, if known.
func buildRevision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, st := range bi.Settings {
			if st.Key == "vcs.revision" {
				return st.Value
			}
		}
	}
	return ""
}

// Addrs are the bound addresses (nil for a disabled transport).
type Addrs struct{ GRPC, HTTP, Admin net.Addr }

// Addrs returns the bound addresses after Start.
func (s *Server) Addrs() Addrs {
	return Addrs{GRPC: s.receiver.GRPCAddr(), HTTP: s.receiver.HTTPAddr(), Admin: s.adminLn.Addr()}
}

// Wait blocks until ctx ends or a listener fails.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.receiver.Err():
		return err
	case err := <-s.errs:
		return err
	}
}

// Shutdown turns /readyz to 503, stops accepting OTLP, drains the requests
// in flight (each is acknowledged only after its sinks accepted it), closes
// (flushes) the sinks that implement io.Closer, then stops the admin
// server. It gives up after the configured shutdown
// timeout.
func (s *Server) Shutdown() error {
	s.ready.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	s.log.Info("shutting down: draining requests in flight")
	err := s.receiver.Shutdown(ctx)
	// The admin server writes (remote write) and reads the metric store:
	// it stops, drained, before the storage closes.
	if e := s.admin.Shutdown(ctx); e != nil {
		err = errors.Join(err, fmt.Errorf("shut down admin HTTP: %w", e))
	}
	for _, c := range s.closers {
		if e := c.Close(); e != nil {
			err = errors.Join(err, fmt.Errorf("close sink: %w", e))
		}
	}
	// The loader writes what it buffered, then the spool is closed
	// (synced); what the loader did not write stays in the spool.
	if s.stopLoad != nil {
		s.stopLoad()
		s.loading.Wait()
	}
	err = errors.Join(err, s.closeStorage())
	s.serving.Wait()
	if err == nil {
		s.log.Info("shut down cleanly")
	}
	return err
}

// Run starts the server, serves until ctx ends, and shuts down.
func Run(ctx context.Context, cfg Config, logOut io.Writer) error {
	s, err := New(cfg, logOut)
	if err != nil {
		return err
	}
	if err := s.Start(); err != nil {
		return err
	}
	werr := s.Wait(ctx)
	return errors.Join(werr, s.Shutdown())
}
