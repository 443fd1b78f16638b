// Package promapi serves Prometheus' HTTP API over any storage.Queryable,
// with Prometheus' own PromQL engine, so that promtool, Grafana's
// Prometheus data source and the client_golang API client work against
// wirehouse unchanged: the read side, and with options the metadata, TSDB
// status and admin endpoints:
//
//	GET|POST /api/v1/query               query, time, timeout, limit
//	GET|POST /api/v1/query_range         query, start, end, step, timeout, limit
//	GET|POST /api/v1/series              match[], start, end, limit
//	GET|POST /api/v1/labels              match[], start, end, limit
//	GET      /api/v1/label/<name>/values match[], start, end, limit
//	GET|POST /api/v1/format_query        query
//	GET      /api/v1/status/buildinfo
//	GET|POST /api/v1/query_exemplars     query, start, end (with WithExemplars; else empty)
//	GET      /api/v1/metadata            metric, limit, limit_per_metric (with WithMetadata; else empty)
//	GET      /api/v1/status/tsdb         limit (with WithTSDBStatus)
//	GET      /api/v1/rules               match[], type, exclude_alerts, group_limit, … (always no groups)
//	GET      /api/v1/alerts              (always no alerts)
//	POST|PUT /api/v1/admin/tsdb/delete_series    match[], start, end (with WithAdmin; else 503)
//	POST|PUT /api/v1/admin/tsdb/clean_tombstones (with WithAdmin; else 503; default tenant only)
//	POST|PUT /api/v1/admin/tsdb/snapshot         skip_head (with WithAdmin; else 503; default tenant only)
//
// Parameters, response envelopes ({"status":"success","data":...} or
// {"status":"error","errorType":...,"error":...}), status codes (204 for
// the admin endpoints that return nothing, 400 bad data, 422 execution
// error, 503 timeout or unavailable, 499 canceled, 500 internal) and
// value encodings (timestamps as seconds, sample values as strings, native
// histograms with their buckets) follow Prometheus' documentation; values
// are written with Prometheus' util/jsonutil.
//
// # Tenants
//
// The API knows nothing of tenants but what it passes on: every storage
// call gets the request's context, which may carry a tenant
// (internal/tenant), and the storage (metricstore) answers for that
// tenant alone: the Queryable's Select, LabelNames and LabelValues, the
// exemplar querier, the MetadataSource, the HeadStatser and the AdminDB's
// Delete. The two admin endpoints that act on the whole TSDB,
// clean_tombstones and snapshot, answer 403 (errorType "forbidden", which
// Prometheus does not have) to a request whose context carries a tenant
// other than the default.
package promapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	jsoniter "github.com/json-iterator/go"
	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/index"
	"github.com/prometheus/prometheus/util/annotations"
	"github.com/prometheus/prometheus/util/jsonutil"
	"github.com/prometheus/prometheus/util/stats"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// PrometheusVersion is the version buildinfo reports: that of the
// Prometheus PromQL engine built in (module v0.316.0 is Prometheus
// 3.16.0). Clients such as Grafana choose features by it.
const PrometheusVersion = "3.16.0"

// maxPoints is the most points a range query may return per series, as in
// Prometheus.
const maxPoints = 11000

// Option configures an API; New reports invalid values.
type Option func(*config) error

type config struct {
	timeout    time.Duration
	maxSamples int
	lookback   time.Duration
	logger     *slog.Logger
	now        func() time.Time
	revision   string
	exemplars  storage.ExemplarQueryable
	metadata   MetadataSource
	head       HeadStatser
	gatherer   prometheus.Gatherer
	admin      AdminDB
	snapDir    string
}

// WithTimeout bounds a query's run time (default 2m, Prometheus'
// --query.timeout); a request's own timeout parameter can only lower it.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("query timeout %v: not positive", d)
		}
		c.timeout = d
		return nil
	}
}

// WithMaxSamples bounds the samples one query may hold in memory (default
// 50,000,000, Prometheus' --query.max-samples).
func WithMaxSamples(n int) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("max samples %d: not positive", n)
		}
		c.maxSamples = n
		return nil
	}
}

// WithLookbackDelta sets how far back an instant selector looks for a
// sample (default 5m).
func WithLookbackDelta(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("lookback delta %v: not positive", d)
		}
		c.lookback = d
		return nil
	}
}

// WithLogger sets where query errors are logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return errors.New("logger: nil")
		}
		c.logger = l
		return nil
	}
}

// WithExemplars serves /api/v1/query_exemplars from eq; without it the
// endpoint answers an empty list.
func WithExemplars(eq storage.ExemplarQueryable) Option {
	return func(c *config) error {
		if eq == nil {
			return errors.New("exemplar queryable: nil")
		}
		c.exemplars = eq
		return nil
	}
}

// MetadataSource gives metric metadata by metric family name, as the
// request whose context is ctx may see it, with the arguments of
// /api/v1/metadata: only the family metric if it is not empty; at most
// limit families if limit >= 0; at most limitPerMetric entries per family
// if limitPerMetric > 0. The API does not retain the result.
// metricstore.Store is one.
type MetadataSource interface {
	Metadata(ctx context.Context, metric string, limit, limitPerMetric int) map[string][]metadata.Metadata
}

// WithMetadata serves /api/v1/metadata from src; without it the endpoint
// answers an empty object.
func WithMetadata(src MetadataSource) Option {
	return func(c *config) error {
		if src == nil {
			return errors.New("metadata source: nil")
		}
		c.metadata = src
		return nil
	}
}

// HeadStatser gives the cardinality statistics of a TSDB head (those of
// tsdb.Head.Stats), as the request whose context is ctx may see them, and
// the number of head chunks they have, or -1 when the
// prometheus_tsdb_head_chunks gauge gives it. metricstore.Store is one.
type HeadStatser interface {
	HeadStats(ctx context.Context, statsByLabelName string, limit int) (st *tsdb.Stats, chunks int64, err error)
}

// WithTSDBStatus serves /api/v1/status/tsdb, as Prometheus does: head's
// statistics by metric name, and the head chunk count, when head does not
// give it, from the prometheus_tsdb_head_chunks gauge that g gathers.
// Without it the endpoint is not served.
func WithTSDBStatus(head HeadStatser, g prometheus.Gatherer) Option {
	return func(c *config) error {
		if head == nil || g == nil {
			return errors.New("tsdb status: nil head or gatherer")
		}
		c.head, c.gatherer = head, g
		return nil
	}
}

// AdminDB is what the admin endpoints change; *tsdb.DB is one, and
// metricstore.Store, whose Delete deletes from the series of the tenant
// ctx carries.
type AdminDB interface {
	Delete(ctx context.Context, mint, maxt int64, ms ...*labels.Matcher) error
	CleanTombstones() error
	Snapshot(dir string, withHead bool) error
}

// WithAdmin serves Prometheus' TSDB admin endpoints (what
// --web.enable-admin-api enables in Prometheus) on db: delete_series
// (tombstones), clean_tombstones, and snapshot into a new directory under
// snapDir. Without it they answer 503, as Prometheus' do when disabled.
func WithAdmin(db AdminDB, snapDir string) Option {
	return func(c *config) error {
		if db == nil || snapDir == "" {
			return errors.New("admin: nil database or empty snapshot directory")
		}
		c.admin, c.snapDir = db, snapDir
		return nil
	}
}

// WithRevision sets the revision buildinfo reports.
func WithRevision(rev string) Option {
	return func(c *config) error { c.revision = rev; return nil }
}

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

// New returns an API over q.
func New(q storage.Queryable, opts ...Option) (*API, error) {
	cfg := config{timeout: 2 * time.Minute, maxSamples: 50_000_000, lookback: 5 * time.Minute,
		logger: slog.New(slog.DiscardHandler), now: time.Now}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("new query API: %w", err)
		}
	}
	p := parser.NewParser(parser.Options{})
	engine := promql.NewEngine(promql.EngineOpts{
		Logger:               cfg.logger,
		MaxSamples:           cfg.maxSamples,
		Timeout:              cfg.timeout,
		LookbackDelta:        cfg.lookback,
		EnableAtModifier:     true,
		EnableNegativeOffset: true,
		Parser:               p,
		// A subquery without a step ([5m:]) steps at the global
		// evaluation interval in Prometheus, 1m by default; the engine
		// calls this for every such subquery, so it must be set.
		NoStepSubqueryIntervalFn: func(int64) int64 { return noStepSubqueryInterval.Milliseconds() },
	})
	return &API{q: q, engine: engine, parser: p, cfg: cfg}, nil
}

// Register adds the endpoints to mux. Responses are gzipped for clients
// that accept it (Grafana, promtool and browsers do), as Prometheus'.
func (a *API) Register(mux *http.ServeMux) {
	handle := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, gzhttp.GzipHandler(h))
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
	if a.cfg.head != nil {
		handle("GET /api/v1/status/tsdb", a.tsdbStatus)
	}
	for _, m := range []string{"POST", "PUT"} {
		handle(m+" /api/v1/admin/tsdb/delete_series", a.adminOnly(a.deleteSeries))
		handle(m+" /api/v1/admin/tsdb/clean_tombstones", a.adminOnly(a.defaultTenantOnly(a.cleanTombstones)))
		handle(m+" /api/v1/admin/tsdb/snapshot", a.adminOnly(a.defaultTenantOnly(a.snapshot)))
	}
	// Without a source the endpoints answer with empty results, as
	// Prometheus does for metadata it got over OTLP, so clients that ask
	// (Grafana's metric browser) go on.
	if a.cfg.metadata != nil {
		handle("GET /api/v1/metadata", a.metricMetadata)
	} else {
		handle("GET /api/v1/metadata", a.empty(func(s *jsoniter.Stream) { s.WriteEmptyObject() }))
	}
	// wirehouse evaluates no rules: the rule and alert lists are empty, as
	// Prometheus' are without rule files, so clients that list them
	// (Grafana's alerting views of a Prometheus data source) go on.
	handle("GET /api/v1/rules", a.rules)
	handle("GET /api/v1/alerts", a.empty(emptyListIn("alerts")))
	// Nor does it scrape or send alerts: the target and Alertmanager lists
	// are empty, as those of a Prometheus without scrape configs or
	// Alertmanagers (client_golang's Targets, TargetsMetadata and
	// AlertManagers read them).
	handle("GET /api/v1/targets", a.empty(func(s *jsoniter.Stream) {
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
	handle("GET /api/v1/targets/metadata", a.empty(func(s *jsoniter.Stream) { s.WriteEmptyArray() }))
	handle("GET /api/v1/alertmanagers", a.empty(emptyListIn("activeAlertmanagers", "droppedAlertmanagers")))
	for _, m := range []string{"GET", "POST"} {
		if a.cfg.exemplars != nil {
			handle(m+" /api/v1/query_exemplars", a.queryExemplars)
			continue
		}
		handle(m+" /api/v1/query_exemplars", a.empty(func(s *jsoniter.Stream) { s.WriteEmptyArray() }))
	}
}

// rules answers /api/v1/rules: no rule groups. The parameters are checked
// as Prometheus checks them (match[], type, exclude_alerts, group_limit,
// group_next_token, which can name no group); the name filters (rule_name[],
// rule_group[], file[]) select from nothing.
func (a *API) rules(w http.ResponseWriter, r *http.Request) {
	if _, err := a.matchers(r, false); err != nil {
		a.fail(w, err)
		return
	}
	if err := checkRulesParams(r.URL.Query()); err != nil {
		a.fail(w, err)
		return
	}
	a.respond(w, nil, emptyListIn("groups"))
}

// emptyListIn writes an object of empty lists: {"field":[],...}.
func emptyListIn(fields ...string) func(*jsoniter.Stream) {
	return func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		for i, f := range fields {
			if i > 0 {
				s.WriteMore()
			}
			s.WriteObjectField(f)
			s.WriteEmptyArray()
		}
		s.WriteObjectEnd()
	}
}

// checkRulesParams refuses the rules parameters Prometheus refuses, with
// its messages.
func checkRulesParams(q url.Values) *apiError {
	switch typ := strings.ToLower(q.Get("type")); typ {
	case "", "alert", "record":
	default:
		return invalidParam("type", "not supported value %q", typ)
	}
	if v := strings.ToLower(q.Get("exclude_alerts")); v != "" {
		if _, err := strconv.ParseBool(v); err != nil {
			return invalidParam("exclude_alerts", "error converting exclude_alerts: %v", err)
		}
	}
	limit, token := q.Get("group_limit"), q.Get("group_next_token")
	if token != "" && limit == "" {
		return invalidParam("group_next_token", "group_limit needs to be present in order to paginate over the groups")
	}
	if limit == "" {
		return nil
	}
	n, err := strconv.ParseInt(limit, 10, 32)
	if err != nil {
		return invalidParam("group_limit", "group_limit needs to be a valid number: %v", err)
	}
	if n <= 0 {
		return invalidParam("group_limit", "group_limit needs to be greater than 0")
	}
	if token != "" { // there is no group, so no token names one
		return invalidParam("group_next_token", "invalid group_next_token '%v'. were rule groups changed?", token)
	}
	return nil
}

// empty answers success with the data write writes.
func (a *API) empty(write func(*jsoniter.Stream)) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { a.respond(w, nil, write) }
}

// errorType is the errorType of an error response.
type errorType string

const (
	errBadData  errorType = "bad_data"
	errExec     errorType = "execution"
	errTimeout  errorType = "timeout"
	errCanceled errorType = "canceled"
	errInternal errorType = "internal"
	errUnavail  errorType = "unavailable"
	// errForbidden is not Prometheus': a tenant asked for what only the
	// default tenant may do (see the package documentation).
	errForbidden errorType = "forbidden"
)

var statusOf = map[errorType]int{
	errBadData:   http.StatusBadRequest,
	errExec:      http.StatusUnprocessableEntity,
	errTimeout:   http.StatusServiceUnavailable,
	errCanceled:  499, // client closed request, as Prometheus answers
	errInternal:  http.StatusInternalServerError,
	errUnavail:   http.StatusServiceUnavailable,
	errForbidden: http.StatusForbidden,
}

type apiError struct {
	typ errorType
	err error
}

func badData(format string, args ...any) *apiError {
	return &apiError{errBadData, fmt.Errorf(format, args...)}
}

// invalidParam is a bad_data error naming parameter name, as Prometheus'
// invalidParamError writes it: invalid parameter "name": err. The message
// is formatted from format and args.
func invalidParam(name, format string, args ...any) *apiError {
	return badData("invalid parameter %q: %s", name, fmt.Sprintf(format, args...))
}

// queryError classifies an error of the engine.
func queryError(err error) *apiError {
	var (
		canceled promql.ErrQueryCanceled
		timeout  promql.ErrQueryTimeout
		storErr  promql.ErrStorage
	)
	switch {
	case errors.As(err, &canceled), errors.Is(err, context.Canceled):
		return &apiError{errCanceled, err}
	case errors.As(err, &timeout), errors.Is(err, context.DeadlineExceeded):
		return &apiError{errTimeout, err}
	case errors.As(err, &storErr):
		return &apiError{errInternal, err}
	}
	return &apiError{errExec, err}
}

var jsonAPI = jsoniter.ConfigCompatibleWithStandardLibrary

// respond writes a success envelope whose data is written by data; with
// data nil the envelope has no data field.
func (a *API) respond(w http.ResponseWriter, warnings annotations.Annotations, data func(*jsoniter.Stream)) {
	a.respondQuery(w, "", warnings, data)
}

// respondQuery is respond for the answer to a PromQL query: warnings and
// infos name their position in it, at most 10 of each with a count of the
// rest, as Prometheus writes them.
func (a *API) respondQuery(w http.ResponseWriter, query string, warnings annotations.Annotations, data func(*jsoniter.Stream)) {
	s := jsonAPI.BorrowStream(nil)
	defer jsonAPI.ReturnStream(s)
	s.WriteObjectStart()
	s.WriteObjectField("status")
	s.WriteString("success")
	if data != nil { // Prometheus omits data that is nil
		s.WriteMore()
		s.WriteObjectField("data")
		data(s)
	}
	if len(warnings) > 0 {
		warns, infos := warnings.AsStrings(query, 10, 10)
		writeStrings := func(field string, list []string) {
			if len(list) == 0 {
				return
			}
			s.WriteMore()
			s.WriteObjectField(field)
			writeArray(s, list, func(x string) {
				s.WriteString(x)
			})
		}
		writeStrings("warnings", warns)
		writeStrings("infos", infos)
	}
	s.WriteObjectEnd()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(s.Buffer()); err != nil {
		a.cfg.logger.Debug("write query response", "err", err)
	}
}

// fail writes an error envelope.
func (a *API) fail(w http.ResponseWriter, e *apiError) {
	s := jsonAPI.BorrowStream(nil)
	defer jsonAPI.ReturnStream(s)
	s.WriteObjectStart()
	s.WriteObjectField("status")
	s.WriteString("error")
	s.WriteMore()
	s.WriteObjectField("errorType")
	s.WriteString(string(e.typ))
	s.WriteMore()
	s.WriteObjectField("error")
	s.WriteString(e.err.Error())
	s.WriteObjectEnd()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(statusOf[e.typ])
	w.Write(s.Buffer()) //nolint:errcheck // the client went away
}

// minTime and maxTime are the earliest and latest times of Prometheus' API
// (the range of int64 milliseconds, less the seconds from year 1 to 1970).
var (
	minTime = time.Unix(math.MinInt64/1000+62135596801, 0).UTC()
	maxTime = time.Unix(math.MaxInt64/1000-62135596801, 999999999).UTC()
)

// parseTime reads a time parameter: Unix seconds (with a fraction) or
// RFC 3339, as Prometheus accepts; times beyond minTime and maxTime are
// those bounds.
func parseTime(r *http.Request, name string, def time.Time) (time.Time, error) {
	v := r.FormValue(name)
	if v == "" {
		return def, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case math.IsNaN(f):
			return time.Time{}, fmt.Errorf("invalid time value for '%s': %q", name, v)
		case f <= float64(minTime.Unix()):
			return minTime, nil
		case f >= float64(maxTime.Unix()):
			return maxTime, nil
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1000))*int64(time.Millisecond)).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	// time.Parse reads four-digit years only; clients (client_golang's
	// API among them) send Prometheus' bounds as these two strings.
	switch v {
	case minTime.Format(time.RFC3339Nano):
		return minTime, nil
	case maxTime.Format(time.RFC3339Nano):
		return maxTime, nil
	}
	return time.Time{}, fmt.Errorf("invalid time value for '%s': cannot parse %q to a valid timestamp", name, v)
}

// evalMin and evalMax bound the times PromQL can evaluate at: the engine
// computes in int64 nanoseconds (years 1677 to 2262). Beyond them it would
// answer for a wrapped-around time, so queries refuse them, while series
// and label windows take Prometheus' wider bounds.
var (
	evalMin = time.Unix(0, math.MinInt64).UTC()
	evalMax = time.Unix(0, math.MaxInt64).UTC()
)

// checkEvalTime refuses a query time outside evalMin..evalMax.
func checkEvalTime(name string, t time.Time) *apiError {
	if t.Before(evalMin) || t.After(evalMax) {
		return invalidParam(name, "time %s is outside the range PromQL evaluates, %s to %s",
			t.Format(time.RFC3339), evalMin.Format(time.RFC3339), evalMax.Format(time.RFC3339))
	}
	return nil
}

// requiredTime is parseTime for a parameter that must be given.
func requiredTime(r *http.Request, name string) (time.Time, error) {
	t, err := parseTime(r, name, time.Time{})
	if err == nil && t.IsZero() {
		err = fmt.Errorf("cannot parse %q to a valid timestamp", "")
	}
	return t, err
}

// parseDuration reads a duration: seconds (with a fraction) or a
// Prometheus duration such as 5m or 1h30m.
func parseDuration(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		d := f * float64(time.Second)
		if math.IsNaN(d) || d >= math.MaxInt64 || d < math.MinInt64 {
			return 0, fmt.Errorf("cannot parse %q to a valid duration: it overflows int64", v)
		}
		return time.Duration(d), nil
	}
	d, err := model.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("cannot parse %q to a valid duration", v)
	}
	return time.Duration(d), nil
}

// withTimeout applies the request's timeout parameter to ctx.
func withTimeout(r *http.Request) (context.Context, context.CancelFunc, *apiError) {
	v := r.FormValue("timeout")
	if v == "" {
		return r.Context(), func() {}, nil
	}
	d, err := parseDuration(v)
	if err == nil && d <= 0 {
		err = fmt.Errorf("timeout must be positive, got %v", d)
	}
	if err != nil {
		return nil, nil, invalidParam("timeout", "%v", err)
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	return ctx, cancel, nil
}

func parseLimit(r *http.Request) (int, *apiError) {
	v := r.FormValue("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err == nil && n < 0 {
		err = errors.New("limit must be non-negative")
	}
	if err != nil {
		return 0, invalidParam("limit", "%v", err)
	}
	return n, nil
}

func (a *API) query(w http.ResponseWriter, r *http.Request) {
	ts, err := parseTime(r, "time", a.cfg.now())
	if err != nil {
		a.fail(w, invalidParam("time", "%v", err))
		return
	}
	if aerr := checkEvalTime("time", ts); aerr != nil {
		a.fail(w, aerr)
		return
	}
	a.run(w, r, func(ctx context.Context, opts promql.QueryOpts) (promql.Query, error) {
		return a.engine.NewInstantQuery(ctx, a.q, opts, r.FormValue("query"), ts)
	})
}

// run reads the limit, timeout, lookback_delta and stats parameters, makes
// the query with newQuery (an error there is bad data: the query did not
// parse), runs it and writes its result.
func (a *API) run(w http.ResponseWriter, r *http.Request, newQuery func(context.Context, promql.QueryOpts) (promql.Query, error)) {
	limit, aerr := parseLimit(r)
	if aerr != nil {
		a.fail(w, aerr)
		return
	}
	var lookback time.Duration
	if v := r.FormValue("lookback_delta"); v != "" {
		d, err := parseDuration(v)
		if err != nil {
			a.fail(w, badData("error parsing lookback delta duration: %v", err))
			return
		}
		lookback = d
	}
	statsParam := r.FormValue("stats")
	opts := promql.NewPrometheusQueryOpts(statsParam == "all", lookback, nil)
	ctx, cancel, aerr := withTimeout(r)
	if aerr != nil {
		a.fail(w, aerr)
		return
	}
	defer cancel()
	qry, err := newQuery(ctx, opts)
	if err != nil {
		a.fail(w, invalidParam("query", "%v", err))
		return
	}
	a.exec(ctx, w, qry, limit, statsParam)
}

func (a *API) queryRange(w http.ResponseWriter, r *http.Request) {
	start, err := requiredTime(r, "start")
	if err != nil {
		a.fail(w, invalidParam("start", "%v", err))
		return
	}
	end, err := requiredTime(r, "end")
	if err != nil {
		a.fail(w, invalidParam("end", "%v", err))
		return
	}
	aerr := checkEvalTime("start", start)
	if aerr == nil {
		aerr = checkEvalTime("end", end)
	}
	if aerr != nil {
		a.fail(w, aerr)
		return
	}
	if end.Before(start) {
		a.fail(w, invalidParam("end", "end timestamp must not be before start time"))
		return
	}
	step, err := parseDuration(r.FormValue("step"))
	if err != nil {
		a.fail(w, invalidParam("step", "%v", err))
		return
	}
	if step <= 0 {
		a.fail(w, invalidParam("step", "zero or negative query resolution step widths are not accepted. Try a positive integer"))
		return
	}
	// In seconds, as a float: end.Sub(start) saturates past 292 years.
	span := float64(end.Unix()-start.Unix()) + float64(end.Nanosecond()-start.Nanosecond())/1e9
	if math.Floor(span/step.Seconds()) > maxPoints {
		a.fail(w, badData("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)"))
		return
	}
	a.run(w, r, func(ctx context.Context, opts promql.QueryOpts) (promql.Query, error) {
		return a.engine.NewRangeQuery(ctx, a.q, opts, r.FormValue("query"), start, end, step)
	})
}

// exec runs qry and writes its result, cut to limit series if not 0, with
// the query's statistics when statsParam is not empty (as Prometheus: any
// value; other than "true" or "all" it also warns).
func (a *API) exec(ctx context.Context, w http.ResponseWriter, qry promql.Query, limit int, statsParam string) {
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		a.fail(w, queryError(res.Err))
		return
	}
	warnings := res.Warnings
	switch v := res.Value.(type) {
	case promql.Vector:
		if limit > 0 && len(v) > limit {
			res.Value = v[:limit]
			warnings = warnings.Add(fmt.Errorf("results truncated due to limit"))
		}
	case promql.Matrix:
		if limit > 0 && len(v) > limit {
			res.Value = v[:limit]
			warnings = warnings.Add(fmt.Errorf("results truncated due to limit"))
		}
	}
	if statsParam != "" && statsParam != "true" && statsParam != "all" {
		warnings = warnings.Add(fmt.Errorf("stats=%q: use \"true\" or \"all\"", statsParam))
	}
	a.respondQuery(w, qry.String(), warnings, func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		s.WriteObjectField("resultType")
		s.WriteString(string(res.Value.Type()))
		s.WriteMore()
		s.WriteObjectField("result")
		writeValue(s, res.Value)
		if statsParam != "" {
			s.WriteMore()
			s.WriteObjectField("stats")
			s.WriteVal(stats.NewQueryStats(qry.Stats()))
		}
		s.WriteObjectEnd()
	})
}

// writeValue writes a PromQL value as the API encodes it.
func writeValue(s *jsoniter.Stream, v parser.Value) {
	switch v := v.(type) {
	case promql.Scalar:
		writePoint(s, v.T, v.V)
	case promql.String:
		s.WriteArrayStart()
		jsonutil.MarshalTimestamp(v.T, s)
		s.WriteMore()
		s.WriteString(v.V)
		s.WriteArrayEnd()
	case promql.Vector:
		writeArray(s, v, func(smp promql.Sample) {
			s.WriteObjectStart()
			s.WriteObjectField("metric")
			writeLabels(s, smp.Metric)
			s.WriteMore()
			if smp.H != nil {
				s.WriteObjectField("histogram")
				writeHistPoint(s, promql.HPoint{T: smp.T, H: smp.H})
			} else {
				s.WriteObjectField("value")
				writePoint(s, smp.T, smp.F)
			}
			s.WriteObjectEnd()
		})
	case promql.Matrix:
		writeArray(s, v, func(series promql.Series) {
			s.WriteObjectStart()
			s.WriteObjectField("metric")
			writeLabels(s, series.Metric)
			if len(series.Floats) > 0 {
				s.WriteMore()
				s.WriteObjectField("values")
				writeArray(s, series.Floats, func(p promql.FPoint) {
					writePoint(s, p.T, p.F)
				})
			}
			if len(series.Histograms) > 0 {
				s.WriteMore()
				s.WriteObjectField("histograms")
				writeArray(s, series.Histograms, func(p promql.HPoint) {
					writeHistPoint(s, p)
				})
			}
			s.WriteObjectEnd()
		})
	default:
		s.WriteNil()
	}
}

func writePoint(s *jsoniter.Stream, t int64, v float64) {
	s.WriteArrayStart()
	jsonutil.MarshalTimestamp(t, s)
	s.WriteMore()
	jsonutil.MarshalFloat(v, s)
	s.WriteArrayEnd()
}

func writeHistPoint(s *jsoniter.Stream, p promql.HPoint) {
	s.WriteArrayStart()
	jsonutil.MarshalTimestamp(p.T, s)
	s.WriteMore()
	jsonutil.MarshalHistogram(p.H, s)
	s.WriteArrayEnd()
}

func writeLabels(s *jsoniter.Stream, ls labels.Labels) {
	s.WriteObjectStart()
	first := true
	ls.Range(func(l labels.Label) {
		if !first {
			s.WriteMore()
		}
		first = false
		s.WriteObjectField(l.Name)
		s.WriteString(l.Value)
	})
	s.WriteObjectEnd()
}

// matchers parses the match[] parameters, refusing (as Prometheus does)
// a selector whose matchers all match the empty string. required is true
// for /api/v1/series only, which needs one and, as in Prometheus, names
// the parameter in its errors; the other endpoints give the bare error.
func (a *API) matchers(r *http.Request, required bool) ([][]*labels.Matcher, *apiError) {
	if err := r.ParseForm(); err != nil {
		return nil, badData("error parsing form values: %v", err)
	}
	raw := r.Form["match[]"]
	if len(raw) == 0 {
		if required {
			return nil, badData("no match[] parameter provided")
		}
		return nil, nil
	}
	sets, err := a.parser.ParseMetricSelectors(raw)
	if err == nil {
		for _, set := range sets {
			if !slices.ContainsFunc(set, func(m *labels.Matcher) bool { return !m.Matches("") }) {
				err = errors.New("match[] must contain at least one non-empty matcher")
				break
			}
		}
	}
	switch {
	case err == nil:
		return sets, nil
	case required:
		return nil, invalidParam("match[]", "%v", err)
	}
	return nil, badData("%v", err)
}

// hintLimit is the storage hint for a result cut to limit: one more, so
// that a cut can be told from an exact fit and warned about.
func hintLimit(limit int) int {
	if limit > 0 && limit < math.MaxInt {
		return limit + 1
	}
	return limit
}

// window reads start and end, defaulting to all time.
func window(r *http.Request) (int64, int64, *apiError) {
	start, err := parseTime(r, "start", time.UnixMilli(math.MinInt64/2))
	if err != nil {
		return 0, 0, invalidParam("start", "%v", err)
	}
	end, err := parseTime(r, "end", time.UnixMilli(math.MaxInt64/2))
	if err != nil {
		return 0, 0, invalidParam("end", "%v", err)
	}
	// As in Prometheus, an end before the start is not an error here: the
	// series and label endpoints find nothing in such a window.
	return start.UnixMilli(), end.UnixMilli(), nil
}

// metadataArgs are the parameters of the series and label endpoints.
type metadataArgs struct {
	sets       [][]*labels.Matcher
	mint, maxt int64
	limit      int
	q          storage.Querier // the caller closes it
}

// parseMetadataArgs reads match[] (required or not), start, end and limit
// and opens a querier over the window; on error it has answered.
func (a *API) parseMetadataArgs(w http.ResponseWriter, r *http.Request, matchRequired bool) (metadataArgs, bool) {
	var (
		args metadataArgs
		aerr *apiError
	)
	if args.sets, aerr = a.matchers(r, matchRequired); aerr == nil {
		if args.mint, args.maxt, aerr = window(r); aerr == nil {
			args.limit, aerr = parseLimit(r)
		}
	}
	if aerr != nil {
		a.fail(w, aerr)
		return args, false
	}
	q, err := a.q.Querier(args.mint, args.maxt)
	if err != nil {
		a.fail(w, &apiError{errExec, err})
		return args, false
	}
	args.q = q
	return args, true
}

func (a *API) series(w http.ResponseWriter, r *http.Request) {
	args, ok := a.parseMetadataArgs(w, r, true)
	if !ok {
		return
	}
	defer args.q.Close()
	sets, q, limit := args.sets, args.q, args.limit
	hints := &storage.SelectHints{Start: args.mint, End: args.maxt, Func: "series", Limit: hintLimit(limit)}
	var all []storage.SeriesSet
	for _, set := range sets {
		all = append(all, q.Select(r.Context(), len(sets) > 1, hints, set...))
	}
	merged := storage.NewMergeSeriesSet(all, 0, storage.ChainedSeriesMerge)
	var (
		found    []labels.Labels
		warnings annotations.Annotations
	)
	for merged.Next() {
		if limit > 0 && len(found) == limit {
			warnings = warnings.Add(errors.New("results truncated due to limit"))
			break
		}
		found = append(found, merged.At().Labels())
	}
	if err := merged.Err(); err != nil {
		a.fail(w, queryError(err))
		return
	}
	warnings.Merge(merged.Warnings())
	a.respond(w, warnings, func(s *jsoniter.Stream) {
		writeArray(s, found, func(ls labels.Labels) {
			writeLabels(s, ls)
		})
	})
}

// stringsOf collects, for each matcher set (or once without one), what
// get returns, sorted and without duplicates, cut to limit.
func (a *API) stringsOf(w http.ResponseWriter, r *http.Request, get func(storage.Querier, []*labels.Matcher, *storage.LabelHints) ([]string, annotations.Annotations, error)) {
	args, ok := a.parseMetadataArgs(w, r, false)
	if !ok {
		return
	}
	defer args.q.Close()
	sets, q, limit := args.sets, args.q, args.limit
	hints := &storage.LabelHints{Limit: hintLimit(limit)}
	if len(sets) == 0 {
		sets = [][]*labels.Matcher{nil}
	}
	var (
		out      []string
		warnings annotations.Annotations
	)
	for _, set := range sets {
		vals, ws, err := get(q, set, hints)
		if err != nil {
			a.fail(w, queryError(err))
			return
		}
		warnings.Merge(ws)
		out = append(out, vals...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
		warnings = warnings.Add(errors.New("results truncated due to limit"))
	}
	a.respond(w, warnings, func(s *jsoniter.Stream) {
		writeArray(s, out, func(v string) {
			s.WriteString(v)
		})
	})
}

func (a *API) labelNames(w http.ResponseWriter, r *http.Request) {
	a.stringsOf(w, r, func(q storage.Querier, ms []*labels.Matcher, h *storage.LabelHints) ([]string, annotations.Annotations, error) {
		return q.LabelNames(r.Context(), h, ms...)
	})
}

func (a *API) labelValues(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if strings.HasPrefix(name, "U__") { // Prometheus' escaping of names outside the legacy charset
		name = model.UnescapeName(name, model.ValueEncodingEscaping)
	}
	if !model.UTF8Validation.IsValidLabelName(name) {
		a.fail(w, badData("invalid label name: %q", name))
		return
	}
	a.stringsOf(w, r, func(q storage.Querier, ms []*labels.Matcher, h *storage.LabelHints) ([]string, annotations.Annotations, error) {
		return q.LabelValues(r.Context(), name, h, ms...)
	})
}

func (a *API) buildInfo(w http.ResponseWriter, _ *http.Request) {
	a.respond(w, nil, func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		for i, kv := range [][2]string{
			{"version", PrometheusVersion},
			{"revision", a.cfg.revision},
			{"branch", ""},
			{"buildUser", "wirehouse"},
			{"buildDate", ""},
			{"goVersion", runtime.Version()},
		} {
			if i > 0 {
				s.WriteMore()
			}
			s.WriteObjectField(kv[0])
			s.WriteString(kv[1])
		}
		s.WriteObjectEnd()
	})
}

// queryExemplars answers /api/v1/query_exemplars as Prometheus does: the
// exemplars between start and end (default: all time) of the series the
// selectors of the PromQL expression query select, grouped by series.
func (a *API) queryExemplars(w http.ResponseWriter, r *http.Request) {
	mint, maxt, e := window(r)
	if e != nil {
		a.fail(w, e)
		return
	}
	if maxt < mint {
		a.fail(w, badData("end timestamp must not be before start timestamp"))
		return
	}
	expr, err := a.parser.ParseExpr(r.FormValue("query"))
	if err != nil {
		a.fail(w, badData("%v", err))
		return
	}
	selectors := parser.ExtractSelectors(expr)
	if len(selectors) == 0 {
		a.respond(w, nil, nil)
		return
	}
	eq, err := a.cfg.exemplars.ExemplarQuerier(r.Context())
	if err != nil {
		a.fail(w, queryError(err))
		return
	}
	res, err := eq.Select(mint, maxt, selectors...)
	if err != nil {
		a.fail(w, queryError(err))
		return
	}
	a.respond(w, nil, func(s *jsoniter.Stream) {
		writeArray(s, res, func(r exemplar.QueryResult) {
			s.WriteObjectStart()
			s.WriteObjectField("seriesLabels")
			writeLabels(s, r.SeriesLabels)
			s.WriteMore()
			s.WriteObjectField("exemplars")
			writeArray(s, r.Exemplars, func(ex exemplar.Exemplar) {
				s.WriteObjectStart()
				s.WriteObjectField("labels")
				writeLabels(s, ex.Labels)
				s.WriteMore()
				s.WriteObjectField("value")
				jsonutil.MarshalFloat(ex.Value, s)
				s.WriteMore()
				s.WriteObjectField("timestamp")
				jsonutil.MarshalTimestamp(ex.Ts, s)
				s.WriteObjectEnd()
			})
			s.WriteObjectEnd()
		})
	})
}

// adminOnly answers 503 unless WithAdmin was given.
func (a *API) adminOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.admin == nil {
			a.fail(w, &apiError{typ: errUnavail, err: errors.New("admin APIs disabled")})
			return
		}
		h(w, r)
	}
}

// defaultTenantOnly answers 403 to a request whose context carries a
// tenant other than the default: h acts on every tenant's data.
func (a *API) defaultTenantOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if t := tenant.FromContext(r.Context()); t != "" {
			a.fail(w, &apiError{typ: errForbidden, err: fmt.Errorf("tenant %q: only the default tenant may do this: it acts on every tenant's metrics", t)})
			return
		}
		h(w, r)
	}
}

// deleteSeries answers /api/v1/admin/tsdb/delete_series as Prometheus
// does: the samples of the series every match[] selects, between start and
// end (default: all time), are deleted with tombstones; 204 when done.
func (a *API) deleteSeries(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		a.fail(w, badData("error parsing form values: %v", err))
		return
	}
	if len(r.Form["match[]"]) == 0 {
		a.fail(w, badData("no match[] parameter provided"))
		return
	}
	// As Prometheus: no ordering check, an end before start deletes
	// nothing. (It must not reach the TSDB: a backwards tombstone
	// interval makes tsdb's compaction panic.)
	mint, maxt, aerr := window(r)
	if aerr != nil {
		a.fail(w, aerr)
		return
	}
	for _, sel := range r.Form["match[]"] {
		ms, err := a.parser.ParseMetricSelector(sel)
		if err != nil {
			a.fail(w, invalidParam("match[]", "%v", err))
			return
		}
		if maxt < mint {
			continue
		}
		if err := a.cfg.admin.Delete(r.Context(), mint, maxt, ms...); err != nil {
			a.fail(w, &apiError{typ: errInternal, err: err})
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// cleanTombstones answers /api/v1/admin/tsdb/clean_tombstones: deleted
// samples are removed from disk; 204 when done.
func (a *API) cleanTombstones(w http.ResponseWriter, _ *http.Request) {
	if err := a.cfg.admin.CleanTombstones(); err != nil {
		a.fail(w, &apiError{typ: errInternal, err: err})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// snapshot answers /api/v1/admin/tsdb/snapshot as Prometheus does: the
// blocks (and the head unless skip_head) are hard-linked or written into
// <snapDir>/<time>-<random>, whose name is returned.
func (a *API) snapshot(w http.ResponseWriter, r *http.Request) {
	skipHead := false
	if v := r.FormValue("skip_head"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			a.fail(w, invalidParam("skip_head", "unable to parse boolean: %v", err))
			return
		}
		skipHead = b
	}
	name := fmt.Sprintf("%s-%016x", a.cfg.now().UTC().Format("20060102T150405Z0700"), rand.Uint64())
	dir := filepath.Join(a.cfg.snapDir, name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		a.fail(w, &apiError{typ: errInternal, err: fmt.Errorf("create snapshot directory: %w", err)})
		return
	}
	if err := a.cfg.admin.Snapshot(dir, !skipHead); err != nil {
		a.fail(w, &apiError{typ: errInternal, err: fmt.Errorf("create snapshot: %w", err)})
		return
	}
	a.respond(w, nil, func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		s.WriteObjectField("name")
		s.WriteString(name)
		s.WriteObjectEnd()
	})
}

// formatQuery answers /api/v1/format_query as Prometheus does (Grafana's
// query editor formats with it): the query pretty-printed by the parser.
func (a *API) formatQuery(w http.ResponseWriter, r *http.Request) {
	expr, err := a.parser.ParseExpr(r.FormValue("query"))
	if err != nil {
		a.fail(w, invalidParam("query", "%v", err))
		return
	}
	pretty := expr.Pretty(0)
	a.respond(w, nil, func(s *jsoniter.Stream) { s.WriteString(pretty) })
}

// metricMetadata answers /api/v1/metadata as Prometheus does: an object of
// metric family names (here in name order), each with its list of
// {type, unit, help}.
func (a *API) metricMetadata(w http.ResponseWriter, r *http.Request) {
	limit, limitPerMetric := -1, -1
	for _, p := range []struct {
		name string
		dst  *int
	}{{"limit", &limit}, {"limit_per_metric", &limitPerMetric}} {
		if v := r.FormValue(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				a.fail(w, badData("%s must be a number", p.name))
				return
			}
			*p.dst = n
		}
	}
	res := a.cfg.metadata.Metadata(r.Context(), r.FormValue("metric"), limit, limitPerMetric)
	names := slices.Sorted(maps.Keys(res))
	a.respond(w, nil, func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		for i, name := range names {
			if i > 0 {
				s.WriteMore()
			}
			s.WriteObjectField(name)
			writeArray(s, res[name], func(m metadata.Metadata) {
				s.WriteObjectStart()
				s.WriteObjectField("type")
				s.WriteString(string(m.Type))
				s.WriteMore()
				s.WriteObjectField("unit")
				s.WriteString(m.Unit)
				s.WriteMore()
				s.WriteObjectField("help")
				s.WriteString(m.Help)
				s.WriteObjectEnd()
			})
		}
		s.WriteObjectEnd()
	})
}

// tsdbStatus answers /api/v1/status/tsdb as Prometheus does: head
// statistics and the top limit (default 10, at most 10,000) metric names by
// series, label names by value count and by value bytes, and label pairs by
// series.
func (a *API) tsdbStatus(w http.ResponseWriter, r *http.Request) {
	const maxLimit = 10000
	limit := 10
	if v := r.FormValue("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			a.fail(w, badData("limit must be a positive number"))
			return
		}
		if n > maxLimit {
			a.fail(w, badData("limit must not exceed %d", maxLimit))
			return
		}
		limit = n
	}
	st, chunks, err := a.cfg.head.HeadStats(r.Context(), labels.MetricName, limit)
	if err != nil {
		a.fail(w, queryError(err))
		return
	}
	if chunks < 0 {
		if chunks, err = a.headChunks(); err != nil {
			a.fail(w, &apiError{typ: errInternal, err: fmt.Errorf("gather runtime status: %w", err)})
			return
		}
	}
	ps := st.IndexPostingStats
	a.respond(w, nil, func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		s.WriteObjectField("headStats")
		s.WriteObjectStart()
		s.WriteObjectField("numSeries")
		s.WriteUint64(st.NumSeries)
		s.WriteMore()
		s.WriteObjectField("numLabelPairs")
		s.WriteInt(ps.NumLabelPairs)
		s.WriteMore()
		s.WriteObjectField("chunkCount")
		s.WriteInt64(chunks)
		s.WriteMore()
		s.WriteObjectField("minTime")
		s.WriteInt64(st.MinTime)
		s.WriteMore()
		s.WriteObjectField("maxTime")
		s.WriteInt64(st.MaxTime)
		s.WriteObjectEnd()
		for _, l := range []struct {
			name  string
			stats []index.Stat
		}{
			{"seriesCountByMetricName", ps.CardinalityMetricsStats},
			{"labelValueCountByLabelName", ps.CardinalityLabelStats},
			{"memoryInBytesByLabelName", ps.LabelValueStats},
			{"seriesCountByLabelValuePair", ps.LabelValuePairsStats},
		} {
			s.WriteMore()
			s.WriteObjectField(l.name)
			writeArray(s, l.stats, func(st index.Stat) {
				s.WriteObjectStart()
				s.WriteObjectField("name")
				s.WriteString(st.Name)
				s.WriteMore()
				s.WriteObjectField("value")
				s.WriteUint64(st.Count)
				s.WriteObjectEnd()
			})
		}
		s.WriteObjectEnd()
	})
}

// headChunks reads the prometheus_tsdb_head_chunks gauge from the
// gatherer.
func (a *API) headChunks() (int64, error) {
	mfs, err := a.cfg.gatherer.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() == "prometheus_tsdb_head_chunks" && len(mf.GetMetric()) > 0 && mf.GetMetric()[0].GetGauge() != nil {
			return int64(mf.GetMetric()[0].GetGauge().GetValue()), nil
		}
	}
	return math.MinInt64, nil // Prometheus' int64(NaN) when the gauge is missing
}

// writeArray writes xs as a JSON array, each element by each.
func writeArray[T any](s *jsoniter.Stream, xs []T, each func(T)) {
	s.WriteArrayStart()
	for i, x := range xs {
		if i > 0 {
			s.WriteMore()
		}
		each(x)
	}
	s.WriteArrayEnd()
}
