package receiver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"

	"github.com/wirehouse/wirehouse/internal/lokipush"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	tenantctx "github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Config sets the receiver's listeners and limits. Start from
// DefaultConfig.
type Config struct {
	// GRPCAddr and HTTPAddr are the listen addresses; empty disables the
	// transport.
	GRPCAddr, HTTPAddr string
	// MaxRequestBytes bounds an HTTP body as sent (before decompression).
	MaxRequestBytes int64
	// MaxDecompressedBytes bounds an HTTP request after decompression.
	MaxDecompressedBytes int64
	// MaxGRPCMessageBytes bounds a gRPC message, as sent and after
	// decompression (gRPC applies one limit to both). Since gRPC reads a
	// call's whole message before handing it over, every call reserves
	// this much of the in-flight budget when it starts (twice for a
	// compressed call, at most MaxInflightBytes) and gives back what its
	// message did not need once read: MaxInflightBytes / (2 ×
	// MaxGRPCMessageBytes) compressed calls can always be read at once.
	MaxGRPCMessageBytes int64
	// MaxInflightBytes bounds the bytes held by all requests in flight:
	// bodies, decompressed bodies, transcoded JSON and the copies of
	// requests in the deprecated OTLP 0.15–0.19 layout, so such a request
	// needs twice its size, and one over half the limit is refused as too
	// large.
	MaxInflightBytes int64
	// MaxConcurrentStreams bounds concurrent gRPC calls per connection.
	MaxConcurrentStreams uint32
	// HTTP server timeouts; ReadHeaderTimeout also bounds the gRPC
	// connection handshake. They are what stops slow clients (slowloris)
	// from holding connections open.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// RetryAfter is the delay suggested to clients refused as overloaded
	// or unavailable (HTTP Retry-After, gRPC RetryInfo).
	RetryAfter time.Duration
	// CORS lets browsers (the OpenTelemetry JavaScript SDK in a web page)
	// export over OTLP/HTTP from the listed origins; none by default.
	CORS CORSConfig
	// GRPCTLS and HTTPTLS, if not nil, serve the transport over TLS
	// (internal/tlsfiles builds them); nil serves plaintext.
	GRPCTLS, HTTPTLS *tls.Config

	// Loki are the limits of Loki push requests (LokiPushPath): Loki's
	// own by default.
	Loki lokipush.Limits

	// Authenticator, if not nil, must pass every export request, and
	// names the tenant handed to the sinks (pipeline.Request.Tenant).
	// Without one requests are not authenticated.
	Authenticator Authenticator
	// TenantLimits, if not nil, are applied to every request, by its
	// tenant: its rate (Admit, before the sinks) and its share of the
	// in-flight budget (internal/overrides implements them).
	TenantLimits TenantLimits
	// Quarantine, if not nil, gets every request a sink panicked on
	// before it is refused. Without one such a request is only logged and
	// refused.
	Quarantine Quarantiner
	// Logger is the receiver's logger; nil, the default, discards.
	Logger *slog.Logger
	// Registerer, if not nil, gets the receiver's metrics; by default
	// they are kept but not registered.
	Registerer prometheus.Registerer
}

// TenantLimits are per-tenant limits.
type TenantLimits interface {
	// Admit takes a request of records records and size decompressed
	// bytes of tenant's signal from its rate limits: nil, or the
	// refusal (a *pipeline.Error, whose RetryAfter the response
	// carries). Called before the sinks: nothing refused is stored.
	Admit(tenant string, sig otlpwire.Signal, records, size int) error
	// InflightShare is the part (0 to 1) of MaxInflightBytes tenant's
	// requests may hold at once; 0 (or 1) is no bound of its own.
	InflightShare(tenant string) float64
}

// DefaultConfig returns the defaults: OTLP's standard ports on localhost,
// 64 MiB HTTP bodies as sent and decompressed (the largest request the
// OpenTelemetry SDKs' HTTP exporters send by default), 4 MiB gRPC
// messages (the Collector's OTLP receiver's default, which exporters are
// set up for), 128 MiB in flight; no authentication, quarantine, logger
// or registerer.
func DefaultConfig() Config {
	return Config{
		GRPCAddr:             "localhost:4317",
		HTTPAddr:             "localhost:4318",
		MaxRequestBytes:      64 << 20,
		MaxDecompressedBytes: 64 << 20,
		MaxGRPCMessageBytes:  4 << 20,
		MaxInflightBytes:     128 << 20,
		MaxConcurrentStreams: 100,
		ReadHeaderTimeout:    10 * time.Second,
		ReadTimeout:          60 * time.Second,
		WriteTimeout:         60 * time.Second,
		IdleTimeout:          120 * time.Second,
		RetryAfter:           time.Second,
		Loki:                 lokipush.DefaultLimits(),
	}
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	switch {
	case c.GRPCAddr == "" && c.HTTPAddr == "":
		return errors.New("no listen address: set the gRPC or the HTTP address")
	case c.MaxRequestBytes <= 0:
		return fmt.Errorf("max request bytes must be positive, got %d", c.MaxRequestBytes)
	case c.MaxDecompressedBytes < c.MaxRequestBytes:
		return fmt.Errorf("max decompressed bytes (%d) must be at least max request bytes (%d)", c.MaxDecompressedBytes, c.MaxRequestBytes)
	case c.MaxDecompressedBytes > 1<<31-1:
		return fmt.Errorf("max decompressed bytes must be below 2 GiB, got %d", c.MaxDecompressedBytes)
	case c.MaxGRPCMessageBytes <= 0 || c.MaxGRPCMessageBytes > 1<<31-1:
		return fmt.Errorf("max gRPC message bytes must be positive and below 2 GiB, got %d", c.MaxGRPCMessageBytes)
	case c.MaxInflightBytes < c.MaxGRPCMessageBytes:
		return fmt.Errorf("max in-flight bytes (%d) must be at least max gRPC message bytes (%d)", c.MaxInflightBytes, c.MaxGRPCMessageBytes)
	case c.MaxInflightBytes < c.MaxDecompressedBytes:
		return fmt.Errorf("max in-flight bytes (%d) must be at least max decompressed bytes (%d)", c.MaxInflightBytes, c.MaxDecompressedBytes)
	case c.MaxConcurrentStreams == 0:
		return errors.New("max concurrent streams must be positive")
	case c.ReadHeaderTimeout <= 0 || c.ReadTimeout <= 0 || c.WriteTimeout <= 0 || c.IdleTimeout <= 0:
		return errors.New("HTTP timeouts must be positive")
	case c.RetryAfter < time.Second:
		return fmt.Errorf("retry-after must be at least 1s (HTTP carries whole seconds), got %s", c.RetryAfter)
	}
	if err := c.Loki.Validate(); err != nil {
		return err
	}
	return c.CORS.Validate()
}

// Quarantiner keeps a request a sink failed on unexpectedly (it
// panicked), so that its data is not lost with the refusal. The request's
// Body is valid only during the call.
type Quarantiner interface {
	Quarantine(req *pipeline.Request, cause error) error
}

// Receiver serves OTLP over gRPC and HTTP.
type Receiver struct {
	cfg        Config
	sinks      pipeline.Sinks
	log        *slog.Logger
	reg        prometheus.Registerer
	m          *metrics
	budget     budget
	shares     sync.Map // tenant → *tenantShare (shareOf)
	auth       Authenticator
	quarantine Quarantiner

	handler http.Handler
	grpcSrv *grpc.Server
	httpSrv *http.Server
	grpcLn  net.Listener
	httpLn  net.Listener
	serving sync.WaitGroup
	errs    chan error
}

// New checks cfg and builds a receiver for sinks; Start opens its
// listeners.
func New(cfg Config, sinks pipeline.Sinks) (*Receiver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("receiver config: %w", err)
	}
	r := &Receiver{cfg: cfg, sinks: sinks, log: cfg.Logger, reg: cfg.Registerer,
		auth: cfg.Authenticator, quarantine: cfg.Quarantine, errs: make(chan error, 2)}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	r.budget.max = cfg.MaxInflightBytes
	r.m = newMetrics(r.reg, &r.budget)
	r.handler = r.newHTTPHandler()
	if len(cfg.CORS.AllowedOrigins) > 0 {
		r.handler = cfg.CORS.wrap(r.handler)
	}
	return r, nil
}

// Handler is the OTLP/HTTP handler, for mounting elsewhere or for tests.
func (r *Receiver) Handler() http.Handler { return r.handler }

// Start opens the configured listeners and serves in the background. Serving
// errors after Start are reported by Err.
func (r *Receiver) Start() error {
	if r.cfg.GRPCAddr != "" {
		ln, err := net.Listen("tcp", r.cfg.GRPCAddr)
		if err != nil {
			return fmt.Errorf("listen OTLP/gRPC: %w", err)
		}
		r.grpcLn = ln
	}
	if r.cfg.HTTPAddr != "" {
		ln, err := net.Listen("tcp", r.cfg.HTTPAddr)
		if err != nil {
			if r.grpcLn != nil {
				r.grpcLn.Close()
				r.grpcLn = nil
			}
			return fmt.Errorf("listen OTLP/HTTP: %w", err)
		}
		r.httpLn = ln
	}
	if r.grpcLn != nil {
		r.grpcSrv = r.newGRPCServer() // starts its stream workers
		r.serving.Go(func() {
			if err := r.grpcSrv.Serve(r.grpcLn); err != nil {
				r.errs <- fmt.Errorf("serve OTLP/gRPC: %w", err)
			}
		})
		r.log.Info("serving OTLP/gRPC", "addr", r.grpcLn.Addr().String(), "tls", r.cfg.GRPCTLS != nil)
	}
	if r.httpLn != nil {
		r.httpSrv = &http.Server{
			Handler:           r.handler,
			ReadHeaderTimeout: r.cfg.ReadHeaderTimeout,
			ReadTimeout:       r.cfg.ReadTimeout,
			WriteTimeout:      r.cfg.WriteTimeout,
			IdleTimeout:       r.cfg.IdleTimeout,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          slog.NewLogLogger(r.log.Handler(), slog.LevelDebug),
			TLSConfig:         r.cfg.HTTPTLS,
		}
		r.serving.Go(func() {
			var err error
			if r.cfg.HTTPTLS != nil {
				err = r.httpSrv.ServeTLS(r.httpLn, "", "") // HTTP/1.1 and HTTP/2 by ALPN
			} else {
				err = r.httpSrv.Serve(r.httpLn)
			}
			if err != nil && !errors.Is(err, http.ErrServerClosed) {
				r.errs <- fmt.Errorf("serve OTLP/HTTP: %w", err)
			}
		})
		r.log.Info("serving OTLP/HTTP", "addr", r.httpLn.Addr().String(), "tls", r.cfg.HTTPTLS != nil)
	}
	return nil
}

// Err delivers the first error that stopped a listener.
func (r *Receiver) Err() <-chan error { return r.errs }

// GRPCAddr is the bound gRPC address, nil before Start or if disabled.
func (r *Receiver) GRPCAddr() net.Addr { return addr(r.grpcLn) }

// HTTPAddr is the bound HTTP address, nil before Start or if disabled.
func (r *Receiver) HTTPAddr() net.Addr { return addr(r.httpLn) }

func addr(ln net.Listener) net.Addr {
	if ln == nil {
		return nil
	}
	return ln.Addr()
}

// Shutdown stops accepting connections and waits for requests in flight to
// finish, so that every request the sinks accepted is acknowledged. If ctx
// ends first, remaining connections are closed and ctx's error returned.
func (r *Receiver) Shutdown(ctx context.Context) error {
	var errs []error
	if r.httpSrv != nil {
		if err := r.httpSrv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down OTLP/HTTP: %w", err))
			r.httpSrv.Close()
		}
	}
	if r.grpcSrv != nil {
		done := make(chan struct{})
		go func() { r.grpcSrv.GracefulStop(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			r.grpcSrv.Stop()
			<-done
			errs = append(errs, fmt.Errorf("shut down OTLP/gRPC: %w", ctx.Err()))
		}
	}
	r.serving.Wait()
	return errors.Join(errs...)
}

// consume validates and counts body and hands it to the signal's sinks.
// When the first sink is pipeline.Validating, it validates instead. records is the
// record count once known (0 before).
func (r *Receiver) consume(ctx context.Context, sig otlpwire.Signal, t transport, body []byte, res *reservation) (out pipeline.Outcome, records int, rerr *pipeline.Error) {
	// Exporters built on OTLP 0.15–0.19 may carry their scope containers
	// in the deprecated field 1000 only; the Collector's receivers move
	// them, and so do we, or their records would count as none and be
	// acknowledged unstored. The copy is made only then, and is charged to
	// the request's share of the in-flight budget (it is never longer than
	// the body).
	if otlpwire.NeedsMigration(body) {
		if !res.grow(int64(len(body))) {
			return out, 0, overBudget(res, errOverBudget)
		}
		if migrated, ok := otlpwire.MigrateDeprecated(make([]byte, 0, len(body)), body); ok {
			body = migrated
		}
	}
	sinks := r.sinks.Of(sig)
	selfChecked := len(sinks) > 0
	if selfChecked {
		selfChecked = pipeline.IsValidating(sinks[0])
	}
	if !selfChecked {
		if err := sig.Validate(body); err != nil {
			return out, 0, pipeline.Refuse(pipeline.KindBadData, "invalid %s: %w", sig.RequestName(), err)
		}
	}
	n, err := sig.Count(body)
	if err != nil {
		if selfChecked {
			// Counting reads the containers, which Validate refuses too;
			// its error names the first fault of the whole request.
			if verr := sig.Validate(body); verr != nil {
				err = verr
			}
			return out, 0, pipeline.Refuse(pipeline.KindBadData, "invalid %s: %w", sig.RequestName(), err)
		}
		// Validate walked the same structure, so this is a bug.
		return out, 0, pipeline.Refuse(pipeline.KindInternal, "count %s: %w", sig, err)
	}
	req := pipeline.Request{Signal: sig, Transport: t.String(), Body: body, Records: n, Tenant: tenantctx.FromContext(ctx)}
	if r.cfg.TenantLimits != nil {
		if err := r.cfg.TenantLimits.Admit(req.Tenant, sig, n, len(body)); err != nil {
			return out, n, pipeline.Classify(err)
		}
	}
	var msgs []string
	for i, s := range sinks {
		o, err := r.consumeGuarded(ctx, s, &req)
		var we *otlpwire.Error
		if err != nil && i == 0 && selfChecked && errors.As(err, &we) {
			// As a failed Validate: no records counted as refused.
			return out, 0, pipeline.Refuse(pipeline.KindBadData, "invalid %s: %w", sig.RequestName(), we)
		}
		if err != nil {
			return out, n, pipeline.Classify(err)
		}
		out.Rejected = max(out.Rejected, o.Rejected)
		if o.Message != "" {
			msgs = append(msgs, o.Message)
		}
	}
	out.Rejected = min(out.Rejected, int64(n))
	if len(msgs) > 0 {
		out.Message = strings.Join(msgs, "; ")
	}
	return out, n, nil
}

// consumeGuarded hands req to s. A panic in the sink (a bug; grpc-go
// does not recover handler panics, so it would stop the server) refuses
// the request as an internal error (500 / INTERNAL, not retried), after
// the request was given to the quarantine, if any, and logged with its
// stack.
func (r *Receiver) consumeGuarded(ctx context.Context, s pipeline.Sink, req *pipeline.Request) (o pipeline.Outcome, err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		cause := fmt.Errorf("%s sink failed: panic: %v", req.Signal, p)
		kept := "no quarantine"
		if r.quarantine != nil {
			kept = "kept in the quarantine"
			if qerr := r.quarantine.Quarantine(req, cause); qerr != nil {
				kept = "could not be quarantined: " + qerr.Error()
			}
		}
		r.log.Error("a sink panicked on a request; refused it", "signal", req.Signal.String(), "records", req.Records,
			"tenant", req.Tenant, "request", kept, "err", cause, "stack", string(debug.Stack()))
		o, err = pipeline.Outcome{}, &pipeline.Error{Kind: pipeline.KindInternal, Err: cause}
	}()
	return s.Consume(ctx, req)
}

// finish records a request's metrics and logs refusals.
func (r *Receiver) finish(sig otlpwire.Signal, t transport, start time.Time, size, records int, out pipeline.Outcome, rerr *pipeline.Error) {
	r.m.observe(sig, t, start, size, records, out, rerr)
	if rerr != nil {
		r.log.Debug("refused export", "signal", sig.String(), "transport", t.String(),
			"reason", rerr.Kind.String(), "records", records, "err", rerr.Err)
	} else if out.Rejected > 0 {
		r.log.Debug("partial success", "signal", sig.String(), "transport", t.String(),
			"rejected", out.Rejected, "records", records, "message", out.Message)
	}
}
