package promapi

import (
	"log/slog"
	"net/http"
	"time"

	jsoniter "github.com/json-iterator/go"
	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"

	"github.com/wirehouse/wirehouse/internal/readapi"
)

// API serves the query endpoints. It is safe for concurrent use.
type API struct {
	q      storage.Queryable
	engine *promql.Engine
	parser parser.Parser
	cfg    config
}

// noStepSubqueryInterval is the step of subqueries written without one,
// Prometheus' default global evaluation_interval.
const noStepSubqueryInterval = time.Minute

// New validates cfg and returns an API over q.
func New(cfg Config, q storage.Queryable) (*API, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := parser.NewParser(parser.Options{})
	engine := promql.NewEngine(promql.EngineOpts{
		Logger:               cfg.Logger,
		MaxSamples:           cfg.MaxSamples,
		Timeout:              cfg.Timeout,
		LookbackDelta:        cfg.LookbackDelta,
		EnableAtModifier:     true,
		EnableNegativeOffset: true,
		Parser:               p,
		// A subquery without a step ([5m:]) steps at the global
		// evaluation interval in Prometheus, 1m by default; the engine
		// calls this for every such subquery, so it must be set.
		NoStepSubqueryIntervalFn: func(int64) int64 { return noStepSubqueryInterval.Milliseconds() },
	})
	return &API{q: q, engine: engine, parser: p, cfg: config{Config: cfg, now: time.Now}}, nil
}

// Engine is the PromQL engine the API's queries run on, for the rules
// evaluated over the same store.
func (a *API) Engine() *promql.Engine { return a.engine }

// Register adds the endpoints to mux, each a readapi.Func whose answer or
// error one wire writes (readapi.Handle), as Prometheus' web/api/v1 wraps
// its apiFuncs; the tenant is the request context's, as it comes.
// Responses are gzipped for clients that accept it (Grafana, promtool and
// browsers do), as Prometheus'.
func (a *API) Register(mux *http.ServeMux) {
	wr := wire{log: a.cfg.Logger}
	handle := func(pattern string, f readapi.Func[answer]) {
		mux.Handle(pattern, gzhttp.GzipHandler(readapi.Handle(wr, nil, f)))
	}
	for _, m := range []string{"GET", "POST"} {
		handle(m+" /api/v1/query", a.query)
		handle(m+" /api/v1/query_range", a.queryRange)
		handle(m+" /api/v1/series", a.series)
		handle(m+" /api/v1/labels", a.labelNames)
		handle(m+" /api/v1/format_query", a.formatQuery)
	}
	handle("GET /api/v1/label/{name}/values", a.labelValues)
	handle("GET /api/v1/status/buildinfo", a.buildInfo)
	if a.cfg.Head != nil {
		handle("GET /api/v1/status/tsdb", a.tsdbStatus)
	}
	for _, m := range []string{"POST", "PUT"} {
		handle(m+" /api/v1/admin/tsdb/delete_series", a.adminOnly(a.deleteSeries))
		handle(m+" /api/v1/admin/tsdb/clean_tombstones", a.adminOnly(a.defaultTenantOnly(a.cleanTombstones)))
		handle(m+" /api/v1/admin/tsdb/snapshot", a.adminOnly(a.defaultTenantOnly(a.snapshot)))
	}
	// Without a source the endpoint answers an empty object, as
	// Prometheus does for metadata it got over OTLP, so clients that ask
	// (Grafana's metric browser) go on.
	handle("GET /api/v1/metadata", a.metricMetadata)
	// The rules and alerts of the request's tenant (Config.Rules; none
	// without), and the Alertmanagers alerts go to, in Prometheus' shapes
	// (Grafana's alerting views of a Prometheus data source list them).
	handle("GET /api/v1/rules", a.rules)
	handle("GET /api/v1/alerts", a.alerts)
	handle("GET /api/v1/alertmanagers", a.alertmanagers)
	// wirehouse does not scrape: the target lists are empty, as those of
	// a Prometheus without scrape configs (client_golang's Targets and
	// TargetsMetadata read them).
	handle("GET /api/v1/targets", empty(func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		s.WriteObjectField("activeTargets")
		s.WriteEmptyArray()
		s.WriteMore()
		s.WriteObjectField("droppedTargets")
		s.WriteEmptyArray()
		s.WriteMore()
		s.WriteObjectField("droppedTargetCounts")
		s.WriteEmptyObject()
		s.WriteObjectEnd()
	}))
	handle("GET /api/v1/targets/metadata", a.targetMetadata)
	for _, m := range []string{"GET", "POST"} {
		if a.cfg.Exemplars != nil {
			handle(m+" /api/v1/query_exemplars", a.queryExemplars)
			continue
		}
		handle(m+" /api/v1/query_exemplars", empty(func(s *jsoniter.Stream) { s.WriteEmptyArray() }))
	}
}
