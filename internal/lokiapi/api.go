package lokiapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/promapi"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Config configures a Handler.
type Config struct {
	// Reader reads the lake. It must be set.
	Reader *lakeread.Reader
	// Tenant is the tenant of a request that names none.
	Tenant string
	// OrgIDHeader lets a request name its tenant in X-Scope-OrgID, as
	// Loki's multi-tenancy does; serve allows it only without admin
	// bearer tokens (a token's tenant is the request's, and a header
	// naming another is refused).
	OrgIDHeader bool
	// MaxLines bounds a log query's limit. Default 5000.
	MaxLines int
	// MaxSeries bounds the series of a metric query. Default 10,000.
	MaxSeries int
	// MaxPoints bounds the steps of a range query. Default 11,000 (as
	// Loki and Prometheus).
	MaxPoints int
	// Timeout bounds a query's time. Default 2 minutes.
	Timeout time.Duration
	// Gate is the query budget live tails take their slots from and
	// run their scans in (queries are admitted by readapi.Admit around
	// the handlers); nil: no bound.
	Gate *querybudget.Gate
	// Logger gets a line per query failed by an internal error (a 500)
	// and per live tail whose scan failed. Default slog.Default().
	Logger *slog.Logger
	// Rules gives a tenant's LogQL rules (its lake name: Tenant for the
	// default one) for the ruler's endpoints; nil: none.
	Rules func(tenant string) promapi.RulesSource
	// Deletes, if set, serves Loki's delete API (/loki/api/v1/delete:
	// POST a request, GET the tenant's, DELETE to cancel one); unset, it
	// is not served.
	Deletes Deletes
	// Now is the clock of the default time ranges. Default time.Now.
	Now func() time.Time
}

// DefaultConfig returns the defaults, without a Reader.
func DefaultConfig() Config {
	return Config{MaxLines: 5000, MaxSeries: 10_000, MaxPoints: 11_000, Timeout: 2 * time.Minute}
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Reader == nil:
		return errors.New("lokiapi: Reader not set")
	case !tenant.Valid(c.Tenant):
		return fmt.Errorf("lokiapi: Tenant %q is not a valid tenant name", c.Tenant)
	case c.MaxLines <= 0 || c.MaxSeries <= 0 || c.MaxPoints <= 0 || c.Timeout <= 0:
		return errors.New("lokiapi: MaxLines, MaxSeries, MaxPoints and Timeout must be positive")
	}
	return nil
}

// Handler serves the API.
type Handler struct {
	cfg   Config
	eng   *eval.Engine
	rule  readapi.TenantRule // the tenant of every request, the tail's too
	wire  wire
	tails context.Context // ends the live tails on Close
	stop  context.CancelFunc

	tailMu     sync.Mutex
	tailGroups map[tailKey]*tailGroup // the scans live tails share
}

// New returns a Handler of cfg.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	h := &Handler{
		cfg:        cfg,
		eng:        NewEngine(cfg.Reader, cfg.MaxSeries, cfg.MaxPoints, pendingOf(cfg.Deletes)),
		rule:       readapi.TenantRule{Default: cfg.Tenant, Header: "X-Scope-OrgID", HeaderAllowed: cfg.OrgIDHeader},
		wire:       wire{timeout: cfg.Timeout, log: cfg.Logger},
		tailGroups: map[tailKey]*tailGroup{},
	}
	h.tails, h.stop = context.WithCancel(context.Background())
	return h, nil
}

// Close ends the live tails (their WebSockets outlive an HTTP server's
// shutdown).
func (h *Handler) Close() error {
	h.stop()
	return nil
}

// Register adds the API's routes to mux: /loki/api/v1/... (Grafana's
// Loki data source then takes http://host:port as its URL). Each JSON
// endpoint is a readapi.Func run by readapi.Handle, which resolves the
// request's tenant by the API's rule into its context and writes the
// answer or the error through the API's wire; the tail, a WebSocket,
// resolves its tenant by the same rule.
func (h *Handler) Register(mux *http.ServeMux) {
	api := func(f readapi.Func[any]) http.Handler { return readapi.Handle(h.wire, &h.rule, f) }
	for _, m := range []string{"GET", "POST"} {
		mux.Handle(m+" /loki/api/v1/query_range", api(h.queryRange))
		mux.Handle(m+" /loki/api/v1/query", api(h.query))
		mux.Handle(m+" /loki/api/v1/labels", api(h.labels))
		mux.Handle(m+" /loki/api/v1/label/{name}/values", api(h.labelValues))
		mux.Handle(m+" /loki/api/v1/series", api(h.series))
		mux.Handle(m+" /loki/api/v1/index/stats", api(h.indexStats))
		mux.Handle(m+" /loki/api/v1/index/volume", api(h.volume))
		mux.Handle(m+" /loki/api/v1/index/volume_range", api(h.volumeRange))
		mux.Handle(m+" /loki/api/v1/detected_labels", api(h.detectedLabels))
		mux.Handle(m+" /loki/api/v1/detected_fields", api(h.detectedFields))
		mux.Handle(m+" /loki/api/v1/detected_field/{name}/values", api(h.detectedFieldValues))
		mux.Handle(m+" /loki/api/v1/patterns", api(h.patterns))
	}
	mux.Handle("GET /loki/api/v1/rules", api(h.ruleGroups))
	mux.Handle("GET /loki/api/v1/rules/{namespace}", api(h.ruleGroups))
	mux.Handle("GET /loki/api/v1/rules/{namespace}/{group}", api(h.ruleGroups))
	for _, p := range []string{"POST /loki/api/v1/rules/{namespace}", "DELETE /loki/api/v1/rules/{namespace}", "DELETE /loki/api/v1/rules/{namespace}/{group}"} {
		mux.HandleFunc(p, rulesReadOnly)
	}
	mux.Handle("GET /prometheus/api/v1/rules", api(h.promRules))
	mux.Handle("GET /prometheus/api/v1/alerts", api(h.promAlerts))
	mux.HandleFunc("GET /loki/api/v1/tail", h.tail)
	if h.cfg.Deletes != nil {
		mux.Handle("POST /loki/api/v1/delete", api(h.deleteAdd))
		mux.Handle("PUT /loki/api/v1/delete", api(h.deleteAdd))
		mux.Handle("GET /loki/api/v1/delete", api(h.deleteList))
		mux.Handle("DELETE /loki/api/v1/delete", api(h.deleteCancel))
	}
	// Build info concerns no tenant: no rule, and no header refused.
	mux.Handle("GET /loki/api/v1/status/buildinfo", readapi.Handle[any](h.wire, nil, buildInfo))
}

// buildInfo answers Loki's build information, as Grafana asks it of a
// data source. The version is 3.5.0: Grafana's Logs Drilldown needs Loki
// 3.2 or later and enables its JSON field filters from 3.5, and what
// those versions' endpoints and LogQL give the app is served (volume,
// detected labels and fields, patterns, categorize-labels).
func buildInfo(*http.Request) (any, error) {
	return map[string]string{"version": "3.5.0", "revision": "wirehouse", "branch": "", "buildUser": "", "buildDate": "", "goVersion": ""}, nil
}

// errBad is a malformed request (400).
var errBad = &readapi.Error{Kind: readapi.KindBadRequest, Err: errors.New("bad request")}

// WriteError answers err as the API answers a failed query (its wire's
// WriteError), for the query budget's admission (readapi.Admit).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	h.wire.WriteError(w, r, err)
}

// parseTime reads a time as Loki's API takes them: RFC 3339, Unix
// seconds with a fraction, or an integer (nanoseconds, or seconds when
// small enough to be seconds).
func parseTime(s string, def time.Time) (time.Time, error) {
	if s == "" {
		return def, nil
	}
	t, err := readapi.ParseLokiTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %w", errBad, err)
	}
	return t, nil
}

// parseStep reads a step: a duration (15s) or seconds (15, 0.5).
func parseStep(s string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := logql.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%w: invalid step %q", errBad, s)
	}
	return d, nil
}

// rangeParams reads start, end (or since) with Loki's defaults: the last
// hour.
func (h *Handler) rangeParams(r *http.Request) (start, end time.Time, err error) {
	now := h.cfg.Now()
	if end, err = parseTime(r.FormValue("end"), now); err != nil {
		return
	}
	def := end.Add(-time.Hour)
	if s := r.FormValue("since"); s != "" {
		d, derr := logql.ParseDuration(s)
		if derr != nil {
			return start, end, fmt.Errorf("%w: invalid since %q", errBad, s)
		}
		def = end.Add(-d)
	}
	if start, err = parseTime(r.FormValue("start"), def); err != nil {
		return
	}
	if end.Before(start) {
		err = fmt.Errorf("%w: end %s before start %s", errBad, end.Format(time.RFC3339), start.Format(time.RFC3339))
		return
	}
	err = readapi.CheckRange(r.Context(), start, end)
	return
}

// parseQuery reads the parameters of a query (query, limit, direction)
// into a Query of the request's tenant (tenant.FromContext, put there by
// readapi.Handle); the time range is the caller's.
func (h *Handler) parseQuery(r *http.Request) (Query, error) {
	q := Query{Tenant: tenant.FromContext(r.Context())}
	var err error
	text := r.FormValue("query")
	if text == "" {
		return q, fmt.Errorf("%w: the query parameter is missing", errBad)
	}
	if q.Expr, err = logql.Parse(text); err != nil {
		return q, err
	}
	q.Limit = 100
	if s := r.FormValue("limit"); s != "" {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit <= 0 {
			return q, fmt.Errorf("%w: invalid limit %q", errBad, s)
		}
	}
	if q.Limit > h.cfg.MaxLines {
		return q, fmt.Errorf("%w: limit %d over the maximum of %d lines", eval.ErrLimit, q.Limit, h.cfg.MaxLines)
	}
	// Grafana asks for the lines' labels by kind (Loki's categorize-labels
	// encoding: stream labels apart from structured metadata and parsed
	// labels).
	for _, f := range r.Header.Values("X-Loki-Response-Encoding-Flags") {
		for _, flag := range strings.Split(f, ",") {
			q.Categorize = q.Categorize || strings.TrimSpace(flag) == "categorize-labels"
		}
	}
	switch d := r.FormValue("direction"); d {
	case "", "backward", "BACKWARD":
	case "forward", "FORWARD":
		q.Forward = true
	default:
		return q, fmt.Errorf("%w: invalid direction %q: forward or backward", errBad, d)
	}
	return q, nil
}

// queryRange answers /query_range: a query over start to end, a metric
// query at every step.
func (h *Handler) queryRange(r *http.Request) (any, error) {
	q, err := h.parseQuery(r)
	if err == nil {
		q.Start, q.End, err = h.rangeParams(r)
	}
	if err == nil {
		if s := r.FormValue("step"); s != "" {
			q.Step, err = parseStep(s)
		} else {
			// Loki's default: about 250 points, at least a second.
			q.Step = max(time.Duration(q.End.Sub(q.Start).Seconds()/250)*time.Second, time.Second)
		}
		if err == nil && q.Step <= 0 {
			err = fmt.Errorf("%w: the step must be positive", errBad)
		}
	}
	if err != nil {
		return nil, err
	}
	return h.exec(r, q)
}

// query answers /query: a query at one time (a log query the hour
// before it).
func (h *Handler) query(r *http.Request) (any, error) {
	q, err := h.parseQuery(r)
	if err == nil {
		q.Start, err = parseTime(r.FormValue("time"), h.cfg.Now())
		q.End, q.Instant = q.Start, true
	}
	if err != nil {
		return nil, err
	}
	if _, ok := q.Expr.(*logql.LogQuery); ok {
		// An instant log query reads back from the time: the last hour,
		// as Loki's default range.
		q.Instant, q.Start = false, q.End.Add(-time.Hour)
	}
	return h.exec(r, q)
}

// exec runs q within the query timeout and returns Loki's answer of its
// result: streams, matrix, vector or scalar, with the stats.
func (h *Handler) exec(r *http.Request, q Query) (any, error) {
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	began := time.Now()
	res, err := h.eng.Exec(ctx, q)
	if err != nil {
		return nil, err
	}
	took := time.Since(began).Seconds()
	st := stats(res.Stats, took)
	if res.Type == "streams" {
		return streamsAnswer(res.Streams, st, q.Categorize)
	}
	data := map[string]any{"resultType": res.Type, "stats": st}
	switch res.Type {
	case "matrix":
		var out []map[string]any
		for _, s := range res.Series {
			vals := make([][2]any, len(s.Points))
			for i, p := range s.Points {
				vals[i] = [2]any{float64(p.T) / 1e3, formatValue(p.V)}
			}
			out = append(out, map[string]any{"metric": s.Labels.Map(), "values": vals})
		}
		data["result"] = nonNil(out)
	case "vector":
		var out []map[string]any
		for _, s := range res.Series {
			p := s.Points[0]
			out = append(out, map[string]any{"metric": s.Labels.Map(), "value": [2]any{float64(p.T) / 1e3, formatValue(p.V)}})
		}
		data["result"] = nonNil(out)
	case "scalar":
		data["result"] = [2]any{float64(res.Scalar.T) / 1e3, formatValue(res.Scalar.V)}
	}
	return success(data), nil
}

func nonNil(v []map[string]any) []map[string]any {
	if v == nil {
		return []map[string]any{}
	}
	return v
}

// formatValue writes a sample as Prometheus and Loki do.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// stats is the statistics object of Loki's query responses (its summary;
// the querier and ingester parts, which describe Loki's own components,
// are left out).
func stats(s eval.Stats, seconds float64) map[string]any {
	perSec := func(n int64) int64 {
		if seconds <= 0 {
			return 0
		}
		return int64(float64(n) / seconds)
	}
	return map[string]any{"summary": map[string]any{
		"bytesProcessedPerSecond": perSec(s.Bytes), "linesProcessedPerSecond": perSec(s.Lines),
		"totalBytesProcessed": s.Bytes, "totalLinesProcessed": s.Lines, "execTime": seconds, "queueTime": 0,
		"subqueries": 0, "totalEntriesReturned": s.Returned, "splits": 0, "shards": 0,
	}}
}

// streamsOf reads the label sets of the streams of the request's tenant
// (tenant.FromContext) that selectors select in the request's range (all
// streams without selectors).
func (h *Handler) streamsOf(r *http.Request, selectors []string) ([]eval.Labels, error) {
	start, end, err := h.rangeParams(r)
	if err != nil {
		return nil, err
	}
	var matchers [][]logql.Matcher
	for _, s := range selectors {
		e, err := logql.Parse(s)
		if err != nil {
			return nil, err
		}
		lq, ok := e.(*logql.LogQuery)
		if !ok {
			return nil, fmt.Errorf("%w: %q is not a stream selector", errBad, s)
		}
		matchers = append(matchers, lq.Matchers)
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	return h.eng.Streams(ctx, tenant.FromContext(r.Context()), start, end, matchers)
}

// labels answers /labels: the label names of the streams in the range
// (of those query selects, if given), sorted.
func (h *Handler) labels(r *http.Request) (any, error) {
	var sel []string
	if q := r.FormValue("query"); q != "" {
		sel = append(sel, q)
	}
	streams, err := h.streamsOf(r, sel)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, s := range streams {
		for _, l := range s {
			set[l.Name] = true
		}
	}
	return success(sortedKeys(set)), nil
}

// labelValues answers /label/{name}/values: the values of the label of
// the streams in the range (of those query selects, if given), sorted.
func (h *Handler) labelValues(r *http.Request) (any, error) {
	name := r.PathValue("name")
	var sel []string
	if q := r.FormValue("query"); q != "" {
		sel = append(sel, q)
	}
	streams, err := h.streamsOf(r, sel)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, s := range streams {
		if v, ok := s.Get(name); ok {
			set[v] = true
		}
	}
	return success(sortedKeys(set)), nil
}

// series answers /series: the label sets of the streams that match[]
// (or match) select in the range.
func (h *Handler) series(r *http.Request) (any, error) {
	if err := r.ParseForm(); err != nil {
		return nil, fmt.Errorf("%w: %v", errBad, err)
	}
	sel := append(r.Form["match[]"], r.Form["match"]...)
	streams, err := h.streamsOf(r, sel)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, 0, len(streams))
	for _, s := range streams {
		out = append(out, s.Map())
	}
	return success(out), nil
}

// indexStats answers /index/stats: {"streams","chunks","entries","bytes"}
// of a selector over the range; chunks is 0 (the lake has none).
func (h *Handler) indexStats(r *http.Request) (any, error) {
	q, err := h.parseQuery(r)
	if err == nil {
		q.Start, q.End, err = h.rangeParams(r)
	}
	if _, ok := q.Expr.(*logql.LogQuery); err == nil && !ok {
		err = fmt.Errorf("%w: index stats take a stream selector", errBad)
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	st, err := h.eng.IndexStats(ctx, q)
	if err != nil {
		return nil, err
	}
	return map[string]int64{"streams": st.Streams, "chunks": 0, "entries": st.Entries, "bytes": st.Bytes}, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
