package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/prometheus/prometheus/storage/remote"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/wirehouse/wirehouse/internal/bearer"
	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/buildinfo"
	"github.com/wirehouse/wirehouse/internal/deletes"
	"github.com/wirehouse/wirehouse/internal/forward"
	"github.com/wirehouse/wirehouse/internal/jaegerstorage"
	"github.com/wirehouse/wirehouse/internal/lakeload"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/metricstore"
	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/overrides"
	"github.com/wirehouse/wirehouse/internal/quarantine"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/receiver"
	"github.com/wirehouse/wirehouse/internal/ruler"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/tlsfiles"
	"github.com/wirehouse/wirehouse/internal/webui"
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
	deletes     *deletes.Store                  // delete requests of logs and spans; nil when the lake keeps neither
	overrides   *overrides.Overrides            // per-tenant limits; nil without limits.overrides_file
	traces      *lakeread.Reader                // the lake's spans, for Jaeger's APIs
	readerHeld  atomic.Pointer[lakeread.Reader] // traces, for the soft memory limit (queryMemoryLimit)
	jaeger      *grpc.Server                    // Jaeger's remote storage API; nil when off
	jaegerLn    net.Listener
	stack       closers // the storage, closed after the receiver drained
	metrics     *metricstore.Store
	quarantine  *quarantine.Dir
	spool       *spool.Spool
	loader      *lakeload.Loader
	forwarders  []*forward.Destination
	webui       *webui.Handler    // the web pages; its sampler runs from Start
	gate        *querybudget.Gate // the read APIs' query budget
	ruler       *ruler.Ruler      // nil without rule files
	// traceMetrics runs the span metrics and service graph generator
	// until its context ends; nil when it is off.
	traceMetrics func(context.Context) error
	remoteWrite  *remote.Storage // Prometheus' remote write from the metric store's WAL; nil without remote_write
	lakeBucket   bucket.Bucket   // the lake in an object store (lake.url); nil: <data_dir>/lake
	lakeNode     string          // this node's name in it
	stopLoad     context.CancelFunc
	loading      sync.WaitGroup
	ready        atomic.Bool
	serving      sync.WaitGroup
	errs         chan error

	// failAt, in tests, makes New fail at the step it names.
	failAt func(step string) error
}

// New validates cfg and builds the server; logs go to logOut. When it
// fails, it has closed everything it opened.
func New(cfg Config, logOut io.Writer) (*Server, error) { return newServer(cfg, logOut, nil) }

func newServer(cfg Config, logOut io.Writer, failAt func(string) error) (_ *Server, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	level, _ := parseLevel(cfg.Log.Level)
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(logOut, opts)
	if cfg.Log.Format == "json" {
		h = slog.NewJSONHandler(logOut, opts)
	}
	s := &Server{cfg: cfg, log: slog.New(h), reg: prometheus.NewRegistry(), errs: make(chan error, 1), failAt: failAt}
	defer func() {
		if err != nil {
			err = errors.Join(err, s.stack.close())
		}
	}()
	for _, ref := range cfg.unsetEnv {
		s.log.Warn("config: an environment variable is not set", "ref", ref)
	}
	s.log.Info("starting", "version", buildinfo.Get().Version, "revision", buildinfo.Get().Revision, "go", buildinfo.Get().GoVersion)
	limit, source := cfg.applyMemoryLimit()
	s.log.Info("memory limit", "limit_bytes", limit, "source", source, "ceiling_bytes", cfg.MemoryCeiling())
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildinfo.Collector())

	rc := cfg.receiverConfig()
	if rc.GRPCTLS, err = s.tlsConfig("otlp.grpc.tls", cfg.OTLP.GRPC.TLS); err != nil {
		return nil, err
	}
	if rc.HTTPTLS, err = s.tlsConfig("otlp.http.tls", cfg.OTLP.HTTP.TLS); err != nil {
		return nil, err
	}
	if s.adminTLS, err = s.tlsConfig("admin.tls", cfg.Admin.TLS); err != nil {
		return nil, err
	}
	if path := cfg.OTLP.Auth.BearerTokensFile; path != "" {
		tokens, err := s.loadTokens("otlp.auth", path)
		if err != nil {
			return nil, err
		}
		rc.Authenticator = tokens
	}
	if path := cfg.Limits.OverridesFile; path != "" {
		oc := overrides.DefaultConfig()
		oc.Path, oc.DefaultTenant, oc.Registerer, oc.Logger = path, cfg.Lake.Tenant, s.reg, s.log
		if s.overrides, err = overrides.Load(oc); err != nil {
			return nil, fmt.Errorf("limits.overrides_file: %w", err)
		}
		rc.TenantLimits = s.overrides
	}
	if path := cfg.Admin.Auth.BearerTokensFile; path != "" {
		if s.adminTokens, err = s.loadTokens("admin.auth", path); err != nil {
			return nil, err
		}
	}
	if err := s.openStorage(); err != nil {
		return nil, err
	}
	if err := s.step("sinks"); err != nil {
		return nil, err
	}
	sinks, err := s.sinks()
	if err != nil {
		return nil, err
	}
	if err := s.step("receiver"); err != nil {
		return nil, err
	}
	rc.Logger, rc.Registerer = s.log, s.reg
	rc.Quarantine = receiverQuarantine{s.quarantine}
	if s.receiver, err = receiver.New(rc, sinks); err != nil {
		return nil, err
	}
	if err := s.step("admin"); err != nil {
		return nil, err
	}
	qc := cfg.queryBudget()
	// The lake reader's caches fill as queries read files: the soft
	// limit follows them at each query's start and end.
	held := func() int64 {
		if r := s.readerHeld.Load(); r != nil {
			return r.HeldBytes()
		}
		return 0
	}
	qc.Registerer, qc.OnReserved = s.reg, cfg.queryMemoryLimit(source, limit, held)
	if s.overrides != nil {
		qc.PerTenant = s.overrides.QueryLimits
	}
	if s.gate, err = querybudget.New(qc); err != nil {
		return nil, fmt.Errorf("limits.queries: %w", err)
	}
	s.log.Info("query budget", "memory_bytes", qc.Memory, "max_query_memory_bytes", qc.MaxQueryMemory,
		"max_concurrent", qc.MaxConcurrent, "max_concurrent_per_tenant", qc.MaxConcurrentPerTenant,
		"queue_wait", qc.MaxQueueWait, "max_tails", qc.MaxTails, "max_tails_per_tenant", qc.MaxTailsPerTenant)
	if err := s.adminRoutes(); err != nil {
		return nil, err
	}
	return s, nil
}

// step returns the error a test asked New to fail with at step name.
func (s *Server) step(name string) error {
	if s.failAt == nil {
		return nil
	}
	if err := s.failAt(name); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// loadTokens loads a bearer tokens file for setting and logs its reloads.
func (s *Server) loadTokens(setting, path string) (*bearer.Tokens, error) {
	tokens, err := bearer.Load(path, tenant.Valid, func(n int, err error) {
		if err != nil {
			s.log.Error("bearer tokens reload failed; the previous tokens stay in force", "setting", setting, "file", path, "err", err)
			return
		}
		s.log.Info("bearer tokens reloaded", "setting", setting, "file", path, "tokens", n)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", setting, err)
	}
	tokens.SetDefaultTenant(s.cfg.Lake.Tenant)
	return tokens, nil
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
		s.stack.close()
		return fmt.Errorf("listen admin HTTP: %w", err)
	}
	s.adminLn = ln
	if err := s.listenJaeger(); err != nil {
		ln.Close()
		s.stack.close()
		return err
	}
	if err := s.receiver.Start(); err != nil {
		ln.Close()
		if s.jaegerLn != nil {
			s.jaegerLn.Close()
		}
		s.stack.close()
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
	s.loading.Go(func() { s.webui.Run(ctx) }) // the status page's history
	if s.traceMetrics != nil {
		s.loading.Go(func() {
			if err := s.traceMetrics(ctx); err != nil {
				// Its cursor would hold every spool segment after it,
				// and so, once the spool is full, every signal's ingest.
				rerr := s.spool.RemoveConsumer(traceMetricsConsumer)
				s.log.Error("trace metrics stopped until the next start; their spool cursor is removed so that it holds nothing back",
					"err", err, "remove_err", rerr)
			}
		})
	}
	for _, d := range s.forwarders {
		s.loading.Go(func() {
			if err := d.Run(ctx); err != nil {
				s.log.Error("forwarding stopped", "err", err)
				select {
				case s.errs <- err:
				default:
				}
			}
		})
	}
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
	if s.jaeger != nil {
		g, jln := s.jaeger, s.jaegerLn
		s.serving.Go(func() {
			if err := g.Serve(jln); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				select {
				case s.errs <- fmt.Errorf("serve jaeger storage gRPC: %w", err):
				default:
				}
			}
		})
		s.log.Info("serving Jaeger remote storage gRPC", "addr", jln.Addr().String())
	}
	if s.ruler != nil {
		s.ruler.Run()
	}
	s.ready.Store(true)
	return nil
}

// listenJaeger opens the listener of Jaeger's remote storage API, if
// configured, and its gRPC server (otlpgrpc's codec: protobuf as bytes;
// TLS from jaeger.storage_tls; every call behind the admin bearer tokens,
// if any, reading its token's tenant as the admin port does); Start
// serves it.
func (s *Server) listenJaeger() error {
	if s.cfg.Jaeger.StorageListen == "" {
		return nil
	}
	r, err := s.lakeReader()
	if err != nil {
		return err
	}
	jcfg := jaegerstorage.DefaultConfig()
	jcfg.Reader, jcfg.Tenant, jcfg.TenantHeader, jcfg.Logger = r, s.cfg.Lake.Tenant, s.cfg.Jaeger.TenantHeader, s.log
	jcfg.Dependencies = s.dependencies
	if s.adminTokens != nil { // not a nil *bearer.Tokens in the interface
		jcfg.Auth = s.adminTokens
	}
	jcfg.Gate = s.gate // every call within the query budget
	jcfg.MaxTraces, jcfg.Timeout = s.cfg.readLimits().MaxTraces, s.cfg.readLimits().Timeout
	opts := []grpc.ServerOption{otlpgrpc.ServerOption()}
	tc, err := s.tlsConfig("jaeger.storage_tls", s.cfg.Jaeger.StorageTLS)
	if err != nil {
		return err
	}
	if tc != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(tc)))
	}
	g := grpc.NewServer(opts...)
	if err := jaegerstorage.Register(g, jcfg); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.cfg.Jaeger.StorageListen)
	if err != nil {
		return fmt.Errorf("listen jaeger storage gRPC: %w", err)
	}
	s.jaeger, s.jaegerLn = g, ln
	return nil
}

// lakeReader returns the reader of the lake's spans that Jaeger's APIs
// share, made on first use.
func (s *Server) lakeReader() (*lakeread.Reader, error) {
	if s.traces != nil {
		return s.traces, nil
	}
	rcfg := lakeread.DefaultConfig()
	rcfg.MaxBytes = s.cfg.readLimits().MaxBytesRead
	rcfg.Bucket = bucket.NewLocal(filepath.Join(s.cfg.DataDir, "lake"))
	if s.lakeBucket != nil {
		rcfg.Bucket, rcfg.Node, rcfg.Remote = s.lakeBucket, s.lakeNode, true
	}
	rcfg.Fresh = s.loader // spans acknowledged and not in Parquet yet are read too
	r, err := lakeread.New(rcfg)
	if err != nil {
		return nil, err
	}
	s.stack.push("lake reader", r.Close) // its open files
	s.traces = r
	s.readerHeld.Store(r)
	return r, nil
}

// Addrs are the bound addresses (nil for a disabled transport).
type Addrs struct{ GRPC, HTTP, Admin, Jaeger net.Addr }

// Addrs returns the bound addresses after Start.
func (s *Server) Addrs() Addrs {
	a := Addrs{GRPC: s.receiver.GRPCAddr(), HTTP: s.receiver.HTTPAddr(), Admin: s.adminLn.Addr()}
	if s.jaegerLn != nil {
		a.Jaeger = s.jaegerLn.Addr()
	}
	return a
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
// in flight (each is acknowledged only after its sinks accepted it) and
// the admin server, stops the lake loader, then closes the storage, last
// opened first. It gives up after the configured shutdown timeout.
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
	if s.jaeger != nil {
		stopGRPC(ctx, s.jaeger)
	}
	// The loader writes what it buffered, then the spool is closed
	// (synced); what the loader did not write stays in the spool.
	if s.stopLoad != nil {
		s.stopLoad()
		s.loading.Wait()
	}
	err = errors.Join(err, s.stack.close())
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
	// SIGHUP loads the rule files again, as it reloads Prometheus'
	// configuration (a bad file is logged, the rules before kept).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer func() {
		signal.Stop(hup)
		close(hup) // no more sends once Stop returns
	}()
	go func() {
		for range hup {
			s.log.Info("SIGHUP: loading the rule files again")
			s.ReloadRules() //nolint:errcheck // logged by the ruler
		}
	}()
	werr := s.Wait(ctx)
	return errors.Join(werr, s.Shutdown())
}

// stopGRPC stops g gracefully, or at once when ctx ends first.
func stopGRPC(ctx context.Context, g *grpc.Server) {
	done := make(chan struct{})
	go func() {
		g.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		g.Stop()
		<-done
	}
}
