package serve

import (
	"io"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"strconv"
	"time"

	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/storage/remote"

	"github.com/wirehouse/wirehouse/internal/buildinfo"
	"github.com/wirehouse/wirehouse/internal/jaegerhttp"
	"github.com/wirehouse/wirehouse/internal/lokiapi"
	"github.com/wirehouse/wirehouse/internal/promapi"
	"github.com/wirehouse/wirehouse/internal/promwrite"
	"github.com/wirehouse/wirehouse/internal/tempohttp"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/webui"
)

// adminRoutes builds the admin server's mux: Prometheus' HTTP API over the
// metric store, remote write and read, Jaeger's HTTP query API and Tempo's
// trace by id over the lake's spans, Loki's query API over its logs,
// /metrics, the web pages, pprof and the health and readiness probes.
func (s *Server) adminRoutes() error {
	s.adminMux = http.NewServeMux()
	pc := promapi.DefaultConfig()
	pc.Logger, pc.Version, pc.Revision = s.log, buildinfo.Get().Version, buildinfo.Get().Revision
	pc.Metadata, pc.Head, pc.Gatherer = s.metrics, s.metrics, s.reg
	if s.cfg.Metrics.AdminAPI {
		pc.Admin, pc.SnapshotDir = s.metrics, filepath.Join(s.cfg.DataDir, "metrics", "snapshots")
	}
	if eq := s.metrics.ExemplarQueryable(); eq != nil {
		pc.Exemplars = eq
	}
	api, err := promapi.New(pc, s.metrics.Queryable())
	if err != nil {
		return err
	}
	api.Register(s.adminMux)
	// Prometheus remote write 1.0 and 2.0 (snappy protobuf; the
	// Content-Type's proto parameter says which) into the same store, with
	// Prometheus' own handler, as Prometheus' receiver with both messages
	// accepted.
	// Plain 1.0 requests (float samples) are read on the wire
	// (promwrite); every other one goes to Prometheus' handler as sent.
	prw := remote.NewWriteHandler(s.log, s.reg, s.metrics.Appendable(),
		remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}, false, false)
	pc2 := promwrite.DefaultConfig()
	pc2.Appendable, pc2.Fallback = s.metrics.Appendable(), prw
	fast, err := promwrite.New(pc2)
	if err != nil {
		return err
	}
	s.adminMux.Handle("POST /api/v1/write", s.whileMetricsAccepted(fast))
	// Remote read, as Prometheus serves it (its flags' defaults: 5e7
	// samples a query, 10 at once, 1 MiB frames), so a Prometheus can
	// read wirehouse's metrics with remote_read; no external labels.
	s.adminMux.Handle("POST /api/v1/read", remote.NewReadHandler(s.log, s.reg, s.metrics.Queryable(),
		func() config.Config { return config.Config{} }, 5e7, 10, 1<<20))
	// Jaeger's HTTP query API over the lake's spans, under /jaeger (its
	// /api/traces/{id} would clash with Tempo's).
	traces, err := s.lakeReader()
	if err != nil {
		return err
	}
	jc := jaegerhttp.DefaultConfig()
	jc.Reader, jc.Tenant, jc.Logger = traces, s.cfg.Lake.Tenant, s.log
	jh, err := jaegerhttp.New(jc)
	if err != nil {
		return err
	}
	jh.Register(s.adminMux, "/jaeger")
	// Tempo's trace by id, under /tempo, for Grafana's Tempo data source.
	th, err := tempohttp.New(tempohttp.Config{Reader: traces, Tenant: s.cfg.Lake.Tenant, Logger: s.log})
	if err != nil {
		return err
	}
	th.Register(s.adminMux, "/tempo")
	// Loki's query API over the lake's logs, for Grafana's Loki data
	// source: X-Scope-OrgID names the tenant only without admin tokens
	// (with them, the token's tenant is the request's).
	lc := lokiapi.DefaultConfig()
	lc.Reader, lc.Tenant, lc.Logger, lc.OrgIDHeader = traces, s.cfg.Lake.Tenant, s.log, s.adminTokens == nil
	lh, err := lokiapi.New(lc)
	if err != nil {
		return err
	}
	lh.Register(s.adminMux)
	s.stack.push("loki live tails", lh.Close)
	s.adminMux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg, EnableOpenMetrics: true}))
	// The web pages at /, /graph, /traces, /trace/{id} and /logs, over
	// the APIs above, and the status page's history of s.reg.
	wc := webui.DefaultConfig()
	wc.Gatherer, wc.Tenant, wc.Restrict, wc.Settings, wc.Logger = s.reg, s.cfg.Lake.Tenant, s.adminTokens != nil, s.settings, s.log
	if s.webui, err = webui.New(wc); err != nil {
		return err
	}
	s.webui.Register(s.adminMux)
	if s.cfg.Admin.Pprof {
		s.adminMux.HandleFunc("/debug/pprof/", pprof.Index)
		s.adminMux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		s.adminMux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		s.adminMux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		s.adminMux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	}
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
	return nil
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

// isProbe reports whether path is a health or readiness probe.
func isProbe(path string) bool {
	switch path {
	case "/healthz", "/-/healthy", "/readyz", "/-/ready":
		return true
	}
	return false
}

// adminHandler is the admin mux, behind the admin bearer tokens if any:
// every path but the health and readiness probes and the web pages' code
// (webui.Public: HTML, scripts, styles; their data comes from the APIs)
// needs one, and the request then acts for the token's tenant
// (tenant.NewContext): the metric store's reads, remote write and the
// admin API see that tenant's metrics alone. Without tokens, and for a
// token naming no tenant, every request is the default tenant's.
func (s *Server) adminHandler() http.Handler {
	if s.adminTokens == nil {
		return s.adminMux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isProbe(r.URL.Path) && !webui.Public(r) {
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
