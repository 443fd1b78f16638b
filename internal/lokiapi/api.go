package lokiapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
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
	// Logger gets a line per failed query. Default slog.Default().
	Logger *slog.Logger
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
	h := &Handler{cfg: cfg, eng: NewEngine(cfg.Reader, cfg.MaxSeries, cfg.MaxPoints), tailGroups: map[tailKey]*tailGroup{}}
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
// Loki data source then takes http://host:port as its URL).
func (h *Handler) Register(mux *http.ServeMux) {
	for _, m := range []string{"GET", "POST"} {
		mux.HandleFunc(m+" /loki/api/v1/query_range", h.queryRange)
		mux.HandleFunc(m+" /loki/api/v1/query", h.query)
		mux.HandleFunc(m+" /loki/api/v1/labels", h.labels)
		mux.HandleFunc(m+" /loki/api/v1/label/{name}/values", h.labelValues)
		mux.HandleFunc(m+" /loki/api/v1/series", h.series)
		mux.HandleFunc(m+" /loki/api/v1/index/stats", h.indexStats)
	}
	mux.HandleFunc("GET /loki/api/v1/tail", h.tail)
	mux.HandleFunc("GET /loki/api/v1/status/buildinfo", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"version": "3.0.0", "revision": "wirehouse", "branch": "", "goVersion": ""})
	})
}

// tenantOf is the request's tenant.
func (h *Handler) tenantOf(r *http.Request) (string, error) {
	return readapi.TenantRule{Default: h.cfg.Tenant, Header: "X-Scope-OrgID", HeaderAllowed: h.cfg.OrgIDHeader}.Resolve(r)
}

// errBad is a malformed request (400).
var errBad = &readapi.Error{Kind: readapi.KindBadRequest, Err: errors.New("bad request")}

// WriteError answers err as the API answers a failed query (fail), for
// the query budget's admission (readapi.Admit).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) { h.fail(w, r, err) }

// fail answers err: 400 for a malformed request or query, 403, 413 past
// a limit, 429 with a Retry-After when the query budget is busy, 504 past
// the timeout, 500 else (logged). Loki answers errors as text.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	k := readapi.Classify(err)
	if errors.Is(err, eval.ErrLimit) {
		k = readapi.KindTooLarge
	}
	switch {
	case k == readapi.KindCanceled || errors.Is(r.Context().Err(), context.Canceled):
		return // the client went away
	case k == readapi.KindTimeout:
		err = fmt.Errorf("query timed out after %s: narrow the time range or the selector", h.cfg.Timeout)
	case k == readapi.KindInternal:
		h.cfg.Logger.Error("loki API query failed", "path", r.URL.Path, "err", err)
	}
	readapi.SetRetryAfter(w, err)
	http.Error(w, err.Error(), k.HTTPStatus())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v) //nolint:errcheck
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
	}
	return
}

func (h *Handler) parseQuery(r *http.Request) (Query, error) {
	var q Query
	var err error
	if q.Tenant, err = h.tenantOf(r); err != nil {
		return q, err
	}
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
	switch d := r.FormValue("direction"); d {
	case "", "backward", "BACKWARD":
	case "forward", "FORWARD":
		q.Forward = true
	default:
		return q, fmt.Errorf("%w: invalid direction %q: forward or backward", errBad, d)
	}
	return q, nil
}

func (h *Handler) queryRange(w http.ResponseWriter, r *http.Request) {
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
		h.fail(w, r, err)
		return
	}
	h.exec(w, r, q)
}

func (h *Handler) query(w http.ResponseWriter, r *http.Request) {
	q, err := h.parseQuery(r)
	if err == nil {
		q.Start, err = parseTime(r.FormValue("time"), h.cfg.Now())
		q.End, q.Instant = q.Start, true
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if _, ok := q.Expr.(*logql.LogQuery); ok {
		// An instant log query reads back from the time: the last hour,
		// as Loki's default range.
		q.Instant, q.Start = false, q.End.Add(-time.Hour)
	}
	h.exec(w, r, q)
}

func (h *Handler) exec(w http.ResponseWriter, r *http.Request, q Query) {
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	began := time.Now()
	res, err := h.eng.Exec(ctx, q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	took := time.Since(began).Seconds()
	data := map[string]any{"resultType": res.Type, "stats": stats(res.Stats, took)}
	switch res.Type {
	case "streams":
		var out []map[string]any
		for _, s := range res.Streams {
			vals := make([][2]string, len(s.Entries))
			for i, e := range s.Entries {
				vals[i] = [2]string{strconv.FormatInt(e.Time, 10), e.Line}
			}
			out = append(out, map[string]any{"stream": s.Labels.Map(), "values": vals})
		}
		data["result"] = nonNil(out)
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
	writeJSON(w, map[string]any{"status": "success", "data": data})
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

// streamsOf reads the label sets of the streams that selectors select in
// the request's range (all streams without selectors).
func (h *Handler) streamsOf(r *http.Request, selectors []string) ([]eval.Labels, error) {
	t, err := h.tenantOf(r)
	if err != nil {
		return nil, err
	}
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
	return h.eng.Streams(ctx, t, start, end, matchers)
}

func (h *Handler) labels(w http.ResponseWriter, r *http.Request) {
	var sel []string
	if q := r.FormValue("query"); q != "" {
		sel = append(sel, q)
	}
	streams, err := h.streamsOf(r, sel)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	set := map[string]bool{}
	for _, s := range streams {
		for _, l := range s {
			set[l.Name] = true
		}
	}
	writeJSON(w, map[string]any{"status": "success", "data": sortedKeys(set)})
}

func (h *Handler) labelValues(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	var sel []string
	if q := r.FormValue("query"); q != "" {
		sel = append(sel, q)
	}
	streams, err := h.streamsOf(r, sel)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	set := map[string]bool{}
	for _, s := range streams {
		if v, ok := s.Get(name); ok {
			set[v] = true
		}
	}
	writeJSON(w, map[string]any{"status": "success", "data": sortedKeys(set)})
}

func (h *Handler) series(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, fmt.Errorf("%w: %v", errBad, err))
		return
	}
	sel := append(r.Form["match[]"], r.Form["match"]...)
	streams, err := h.streamsOf(r, sel)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]map[string]string, 0, len(streams))
	for _, s := range streams {
		out = append(out, s.Map())
	}
	writeJSON(w, map[string]any{"status": "success", "data": out})
}

// indexStats answers {"streams","chunks","entries","bytes"} of a selector
// over the range; chunks counts the lake files read.
func (h *Handler) indexStats(w http.ResponseWriter, r *http.Request) {
	q, err := h.parseQuery(r)
	if err == nil {
		q.Start, q.End, err = h.rangeParams(r)
	}
	if _, ok := q.Expr.(*logql.LogQuery); err == nil && !ok {
		err = fmt.Errorf("%w: index stats take a stream selector", errBad)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	st, err := h.eng.IndexStats(ctx, q)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, map[string]int64{"streams": st.Streams, "chunks": 0, "entries": st.Entries, "bytes": st.Bytes})
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
