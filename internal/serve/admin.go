package serve

import (
	"context"
	"io"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"strconv"
	"strings"
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
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/receiver"
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
	limits := s.cfg.readLimits() // every read API's bounds, set here once
	pc.Timeout = limits.Timeout
	pc.Metadata, pc.Head, pc.Gatherer = s.metrics, s.metrics, s.reg
	if s.cfg.Metrics.AdminAPI {
		pc.Admin, pc.SnapshotDir = s.metrics, filepath.Join(s.cfg.DataDir, "metrics", "snapshots")
	}
	if eq := s.metrics.ExemplarQueryable(); eq != nil {
		pc.Exemplars = eq
	}
	// PromQL cannot charge the query budget as it goes: a query's samples
	// are bounded to its slot's share of the budget at 16 bytes each.
	qc := s.gate.Config()
	pc.MaxSamples = int(qc.Memory / int64(qc.MaxConcurrent) / 16)
	// The rules and alerts of each tenant, once the ruler is made below.
	pc.Rules = func(t string) promapi.RulesSource {
		if s.ruler == nil {
			return nil
		}
		return s.ruler.PromQL(t)
	}
	pc.Alertmanagers = rulerAlertmanagers{s}
	api, err := promapi.New(pc, s.metrics.Queryable())
	if err != nil {
		return err
	}
	// Every read API's queries go through the query budget (readapi.Admit),
	// each refused in its own error shape; the cheap endpoints (build
	// info, metadata, rules) and the live tails (their own slots) do not.
	promMux := http.NewServeMux()
	api.Register(promMux)
	s.adminMux.Handle("/api/v1/", s.admitQueries(api.WriteError, "", promQuery, promMux))
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
	s.adminMux.Handle("POST /api/v1/read", s.admitQueries(textError, "", func(string) bool { return true },
		remote.NewReadHandler(s.log, s.reg, s.metrics.Queryable(), func() config.Config { return config.Config{} }, 5e7, 10, 1<<20)))
	// Jaeger's HTTP query API over the lake's spans, under /jaeger (its
	// /api/traces/{id} would clash with Tempo's).
	traces, err := s.lakeReader()
	if err != nil {
		return err
	}
	// The rules, over the metric store and the lake, once both are open.
	if err := s.openRuler(api); err != nil {
		return err
	}
	jc := jaegerhttp.DefaultConfig()
	jc.MaxTraces = limits.MaxTraces
	jc.Reader, jc.Tenant, jc.Logger, jc.AnyTenant = traces, s.cfg.Lake.Tenant, s.log, s.adminTokens == nil
	jc.Dependencies = s.dependencies
	jh, err := jaegerhttp.New(jc)
	if err != nil {
		return err
	}
	jaegerMux := http.NewServeMux()
	jh.Register(jaegerMux, "/jaeger")
	s.adminMux.Handle("/jaeger/", s.admitQueries(jh.WriteError, jc.TenantHeader, func(string) bool { return true }, jaegerMux))
	// Tempo's API, under /tempo, for Grafana's Tempo data source: every
	// path but echo and buildinfo reads the lake.
	th, err := tempohttp.New(tempohttp.Config{Reader: traces, Tenant: s.cfg.Lake.Tenant, Logger: s.log,
		TenantHeader: "X-Scope-OrgID", AnyTenant: s.adminTokens == nil})
	if err != nil {
		return err
	}
	tempoMux := http.NewServeMux()
	th.Register(tempoMux, "/tempo")
	s.adminMux.Handle("/tempo/", s.admitQueries(th.WriteError, "X-Scope-OrgID", func(p string) bool { return p != "/tempo/api/echo" && p != "/tempo/api/status/buildinfo" }, tempoMux))
	// Loki's query API over the lake's logs, for Grafana's Loki data
	// source: X-Scope-OrgID names the tenant only without admin tokens
	// (with them, the token's tenant is the request's).
	lc := lokiapi.DefaultConfig()
	lc.Reader, lc.Tenant, lc.Logger, lc.OrgIDHeader = traces, s.cfg.Lake.Tenant, s.log, s.adminTokens == nil
	lc.Gate = s.gate
	if s.deletes != nil {
		lc.Deletes = s.deletes
		s.adminMux.Handle("/api/v1/admin/spans/delete", s.spanDeletes())
	}
	lc.Rules = func(t string) promapi.RulesSource {
		if s.ruler == nil {
			return nil
		}
		if t == s.cfg.Lake.Tenant {
			t = "" // the default tenant's lake name
		}
		return s.ruler.LogQL(t)
	}
	lc.MaxLines, lc.MaxSeries, lc.Timeout = limits.MaxLines, limits.MaxSeries, limits.Timeout
	lh, err := lokiapi.New(lc)
	if err != nil {
		return err
	}
	lokiMux := http.NewServeMux()
	lh.Register(lokiMux)
	s.adminMux.Handle("/loki/", s.admitQueries(lh.WriteError, "X-Scope-OrgID", lokiQuery, lokiMux))
	s.adminMux.Handle("/prometheus/api/v1/", lokiMux) // Loki's ruler, in Prometheus' shape: no query

	// Loki's push API beside its query API, as Loki serves both on one
	// port (and on the OTLP/HTTP port): the receiver's handler, with the
	// ingest tokens, budget and spool of OTLP.
	if push := s.receiver.LokiPushHandlerBehind(s.adminTokens == nil); push != nil {
		s.adminMux.Handle(receiver.LokiPushPath, push)
	}
	s.stack.push("loki live tails", lh.Close)
	// /metrics and pprof concern every tenant: operators' alone.
	s.adminMux.Handle("GET /metrics", s.operatorOnly(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg, EnableOpenMetrics: true})))
	// The web pages at /, /graph, /traces, /trace/{id} and /logs, over
	// the APIs above, and the status page's history of s.reg.
	wc := webui.DefaultConfig()
	wc.Gatherer, wc.Tenant, wc.Restrict, wc.Settings, wc.Logger = s.reg, s.cfg.Lake.Tenant, s.adminTokens != nil, s.settings, s.log
	wc.AllTenants = isOperator
	if s.webui, err = webui.New(wc); err != nil {
		return err
	}
	s.webui.Register(s.adminMux)
	if s.cfg.Admin.Pprof {
		s.adminMux.Handle("/debug/pprof/", s.operatorOnly(http.HandlerFunc(pprof.Index)))
		s.adminMux.Handle("/debug/pprof/profile", s.operatorOnly(http.HandlerFunc(pprof.Profile)))
		s.adminMux.Handle("/debug/pprof/trace", s.operatorOnly(http.HandlerFunc(pprof.Trace)))
		s.adminMux.Handle("/debug/pprof/symbol", s.operatorOnly(http.HandlerFunc(pprof.Symbol)))
		s.adminMux.Handle("/debug/pprof/cmdline", s.operatorOnly(http.HandlerFunc(pprof.Cmdline)))
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
// (tenant.NewContext): the metric store's reads, remote write, the admin
// API, the lake's APIs and the status page see that tenant's data alone.
// Without tokens, and for a token naming no tenant, every request is the
// default tenant's. An operator's token (bearer.Identity.Operator) is
// marked in the context too (isOperator): it alone reads /metrics and
// pprof, and every tenant's figures on the status page.
func (s *Server) adminHandler() http.Handler {
	if s.adminTokens == nil {
		return s.adminMux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isProbe(r.URL.Path) && !webui.Public(r) {
			id, err := s.adminTokens.Identify(r.Header.Get("Authorization"))
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="wirehouse"`)
				http.Error(w, "unauthorized: "+err.Error(), http.StatusUnauthorized)
				return
			}
			ctx := r.Context()
			if id.Tenant != "" {
				ctx = tenant.NewContext(ctx, id.Tenant)
			}
			if id.Operator {
				ctx = context.WithValue(ctx, operatorKey{}, true)
			}
			r = r.WithContext(ctx)
		}
		s.adminMux.ServeHTTP(w, r)
	})
}

// operatorKey marks the context of a request made with an operator's
// admin token.
type operatorKey struct{}

// isOperator reports whether r was made with an operator's admin token.
func isOperator(r *http.Request) bool {
	op, _ := r.Context().Value(operatorKey{}).(bool)
	return op
}

// operatorOnly passes to h the requests of an operator's token, or every
// request when the admin server has no tokens, and answers the others
// 403: what h serves concerns every tenant (the server's own metrics name
// each tenant's services; profiles show anyone's requests).
func (s *Server) operatorOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.adminTokens != nil && !isOperator(r) {
			http.Error(w, "forbidden: "+r.URL.Path+" needs an operator's token (role=operator in the admin bearer tokens file)", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// admitQueries returns h with the requests whose path isQuery admitted
// into the query budget (readapi.Admit) for their tenant by the read
// side's rule (the token's; without tokens the one tenantHeader names),
// refusals answered by fail; other requests pass. An answer must be
// written within the query timeout and half a minute more.
func (s *Server) admitQueries(fail readapi.ErrorWriter, tenantHeader string, isQuery func(path string) bool, h http.Handler) http.Handler {
	rule := readapi.TenantRule{Default: s.cfg.Lake.Tenant, Header: tenantHeader, HeaderAllowed: s.adminTokens == nil}
	admitted := readapi.Admit(s.gate, rule.Of, s.cfg.readLimits().Timeout, fail, h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isQuery(r.URL.Path) {
			admitted.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// promQuery reports whether a path of Prometheus' API reads the store.
func promQuery(p string) bool {
	switch p {
	case "/api/v1/query", "/api/v1/query_range", "/api/v1/series", "/api/v1/labels", "/api/v1/query_exemplars", "/api/v1/status/tsdb":
		return true
	}
	return strings.HasPrefix(p, "/api/v1/label/")
}

// lokiQuery reports whether a path of Loki's API reads the lake (the
// live tail takes slots of its own).
func lokiQuery(p string) bool {
	return strings.HasPrefix(p, "/loki/api/v1/") && p != "/loki/api/v1/tail" && p != "/loki/api/v1/status/buildinfo" && p != "/loki/api/v1/delete" &&
		!strings.HasPrefix(p, "/loki/api/v1/rules")
}

// textError answers a refused remote read as Prometheus' remote read
// handler answers errors: text, 429 with a Retry-After when the query
// budget is busy.
func textError(w http.ResponseWriter, _ *http.Request, err error) {
	readapi.SetRetryAfter(w, err)
	http.Error(w, err.Error(), readapi.Classify(err).HTTPStatus())
}
