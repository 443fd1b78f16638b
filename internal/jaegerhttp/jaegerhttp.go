package jaegerhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Config configures a Handler.
type Config struct {
	// Reader reads the lake. It must be set.
	Reader *lakeread.Reader
	// Tenant is the tenant of a request whose context names none
	// (tenant.FromContext): the lake's default tenant.
	Tenant string
	// TenantHeader may name a request's tenant, as Jaeger's
	// multi_tenancy sends it (default x-tenant): any tenant when
	// AnyTenant (the server has no bearer tokens), else only the token's
	// own (readapi.TenantRule).
	TenantHeader string
	AnyTenant    bool
	// MaxTraces bounds the traces one search returns, whatever its
	// limit. Default 1000.
	MaxTraces int
	// Logger gets a line per failed request. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock that search's default time range ends at.
	// Default time.Now.
	Now func() time.Time
}

// DefaultConfig returns the defaults, without a Reader.
func DefaultConfig() Config {
	return Config{MaxTraces: readapi.DefaultLimits().MaxTraces, TenantHeader: "x-tenant"}
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Reader == nil:
		return errors.New("jaegerhttp: Reader not set")
	case c.MaxTraces <= 0:
		return fmt.Errorf("jaegerhttp: MaxTraces %d, must be positive", c.MaxTraces)
	case !tenant.Valid(c.Tenant):
		return fmt.Errorf("jaegerhttp: Tenant %q is not a valid tenant name", c.Tenant)
	}
	return nil
}

// Handler serves the API.
type Handler struct{ cfg Config }

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
	return &Handler{cfg: cfg}, nil
}

// Register adds the API's routes to mux under prefix ("/jaeger" serves
// /jaeger/api/services and the rest; Grafana's Jaeger data source then
// takes http://host:port/jaeger as its URL).
func (h *Handler) Register(mux *http.ServeMux, prefix string) {
	p := strings.TrimSuffix(prefix, "/") + "/api"
	mux.HandleFunc("GET "+p+"/services", h.services)
	mux.HandleFunc("GET "+p+"/services/{service}/operations", h.operationsLegacy)
	mux.HandleFunc("GET "+p+"/operations", h.operations)
	mux.HandleFunc("GET "+p+"/traces", h.search)
	mux.HandleFunc("GET "+p+"/traces/{traceID}", h.trace)
	mux.HandleFunc("GET "+p+"/dependencies", h.dependencies)
}

// response is Jaeger's envelope.
type response struct {
	Data   any           `json:"data"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
	Errors []structError `json:"errors"`
}

type structError struct {
	Code    int    `json:"code,omitempty"`
	Msg     string `json:"msg"`
	TraceID string `json:"traceID,omitempty"`
}

// tenantOf is r's tenant by the read side's one rule.
func (h *Handler) tenantOf(r *http.Request) (string, error) {
	return readapi.TenantRule{Default: h.cfg.Tenant, Header: h.cfg.TenantHeader, HeaderAllowed: h.cfg.AnyTenant}.Resolve(r)
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, resp response) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	if v := r.FormValue("prettyPrint"); v != "" && v != "false" {
		enc.SetIndent("", "    ")
	}
	if err := enc.Encode(resp); err != nil {
		h.cfg.Logger.Debug("jaeger HTTP API: write response", "err", err)
	}
}

// WriteError answers err as the API answers a failed query, for the
// query budget's admission (readapi.Admit).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	h.fail(w, r, err, http.StatusInternalServerError)
}

// fail answers err as Jaeger does: its envelope with the error, as
// text/plain, with the status of err's kind (readapi.Classify), or code
// when err is of no known kind (500s logged); a query the budget cannot
// take now gets a Retry-After; a client gone is not answered.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error, code int) {
	switch k := readapi.Classify(err); {
	case k == readapi.KindCanceled || errors.Is(r.Context().Err(), context.Canceled):
		return // the client went away: nobody reads this
	case k != readapi.KindInternal:
		code = k.HTTPStatus()
		readapi.SetRetryAfter(w, err)
	case code == http.StatusInternalServerError:
		h.cfg.Logger.Error("jaeger HTTP API request failed", "path", r.URL.Path, "err", err)
	}
	b, _ := json.Marshal(response{Errors: []structError{{Code: code, Msg: err.Error()}}})
	http.Error(w, string(b), code)
}

func (h *Handler) services(w http.ResponseWriter, r *http.Request) {
	t, err := h.tenantOf(r)
	if err != nil {
		h.fail(w, r, err, http.StatusInternalServerError)
		return
	}
	svcs, err := h.cfg.Reader.Services(r.Context(), t, time.Time{}, time.Time{})
	if err != nil {
		h.fail(w, r, err, http.StatusInternalServerError)
		return
	}
	h.write(w, r, response{Data: svcs, Total: len(svcs)})
}

// Jaeger's span kind names (lowercase; "" for unspecified) by the lake's.
var kindNames = map[string]string{
	"SPAN_KIND_UNSPECIFIED": "", "SPAN_KIND_INTERNAL": "internal", "SPAN_KIND_SERVER": "server",
	"SPAN_KIND_CLIENT": "client", "SPAN_KIND_PRODUCER": "producer", "SPAN_KIND_CONSUMER": "consumer",
}

type operation struct {
	Name     string `json:"name"`
	SpanKind string `json:"spanKind"`
}

func (h *Handler) readOperations(r *http.Request, service, kind string) ([]operation, error) {
	t, err := h.tenantOf(r)
	if err != nil {
		return nil, err
	}
	ops, err := h.cfg.Reader.Operations(r.Context(), t, service, "", time.Time{}, time.Time{})
	if err != nil {
		return nil, err
	}
	out := make([]operation, 0, len(ops))
	for _, o := range ops {
		k := kindNames[o.Kind]
		if kind == "" || k == kind {
			out = append(out, operation{Name: o.Name, SpanKind: k})
		}
	}
	return out, nil
}

// operationsLegacy answers /api/services/{service}/operations: the
// service's span names, each once.
func (h *Handler) operationsLegacy(w http.ResponseWriter, r *http.Request) {
	ops, err := h.readOperations(r, r.PathValue("service"), "")
	if err != nil {
		h.fail(w, r, err, http.StatusInternalServerError)
		return
	}
	names := make([]string, 0, len(ops))
	for i, o := range ops {
		if i == 0 || o.Name != ops[i-1].Name { // sorted by name
			names = append(names, o.Name)
		}
	}
	h.write(w, r, response{Data: names, Total: len(names)})
}

// operations answers /api/operations?service=&spanKind=.
func (h *Handler) operations(w http.ResponseWriter, r *http.Request) {
	service := r.FormValue("service")
	if service == "" {
		h.fail(w, r, errors.New("parameter 'service' is required"), http.StatusBadRequest)
		return
	}
	ops, err := h.readOperations(r, service, r.FormValue("spanKind"))
	if err != nil {
		h.fail(w, r, err, http.StatusInternalServerError)
		return
	}
	h.write(w, r, response{Data: ops, Total: len(ops)})
}

// dependencies answers /api/dependencies with no links: wirehouse does
// not derive them yet.
func (h *Handler) dependencies(w http.ResponseWriter, r *http.Request) {
	h.write(w, r, response{Data: []struct{}{}})
}

var errNotFound = errors.New("trace not found")

// trace answers /api/traces/{traceID}?start=&end= (µs): a one-trace list,
// or 404.
func (h *Handler) trace(w http.ResponseWriter, r *http.Request) {
	id, err := readapi.ParseTraceID(r.PathValue("traceID"))
	if err != nil {
		h.fail(w, r, err, http.StatusBadRequest)
		return
	}
	var start, end time.Time
	if start, err = microsParam(r, "start", time.Time{}); err == nil {
		end, err = microsParam(r, "end", time.Time{})
	}
	if err != nil {
		h.fail(w, r, err, http.StatusBadRequest)
		return
	}
	t, err := h.tenantOf(r)
	if err != nil {
		h.fail(w, r, err, http.StatusInternalServerError)
		return
	}
	tr, err := h.readTrace(r.Context(), t, id, start, end)
	switch {
	case errors.Is(err, errNotFound):
		h.fail(w, r, err, http.StatusNotFound)
	case err != nil:
		h.fail(w, r, err, http.StatusInternalServerError)
	default:
		h.write(w, r, response{Data: []trace{tr}})
	}
}

// readTrace reads the trace id, or errNotFound.
func (h *Handler) readTrace(ctx context.Context, t string, id [16]byte, start, end time.Time) (trace, error) {
	res, err := h.cfg.Reader.Trace(ctx, t, id, start, end)
	if err != nil {
		return trace{}, err
	}
	return build(res.Spans)
}

func build(spans *lakeread.Spans) (trace, error) {
	if spans.Len() == 0 {
		return trace{}, errNotFound
	}
	b, err := spans.AppendProto(nil)
	if err != nil {
		return trace{}, err
	}
	var bld builder
	if err := bld.add(b); err != nil {
		return trace{}, fmt.Errorf("convert trace: %w", err)
	}
	ts := bld.result()
	if len(ts) != 1 {
		return trace{}, fmt.Errorf("convert trace: %d trace ids in one trace's spans", len(ts))
	}
	return ts[0], nil
}

// searchParams is a parsed /api/traces query.
type searchParams struct {
	q        lakeread.Query
	traceIDs [][16]byte
}

// parseSearch reads /api/traces' parameters as Jaeger's query service
// does: start and end in µs (default the last 48 hours), limit (default
// 100), minDuration and maxDuration as Go durations, tag=key:value and
// tags={"key":"value"}, or traceID= (repeated) instead of a search.
func (h *Handler) parseSearch(r *http.Request) (searchParams, error) {
	var p searchParams
	if err := r.ParseForm(); err != nil {
		return p, err
	}
	f := r.Form
	for _, s := range f["traceID"] {
		id, err := readapi.ParseTraceID(s)
		if err != nil {
			return p, err
		}
		p.traceIDs = append(p.traceIDs, id)
	}
	p.q.Service, p.q.Operation = f.Get("service"), f.Get("operation")
	if p.q.Service == "" && len(p.traceIDs) == 0 {
		return p, errors.New("parameter 'service' is required")
	}
	now := h.cfg.Now()
	var err error
	if p.q.StartMin, err = microsParam(r, "start", now.Add(-48*time.Hour)); err != nil {
		return p, err
	}
	if p.q.StartMax, err = microsParam(r, "end", now); err != nil {
		return p, err
	}
	p.q.Limit = 100
	if s := f.Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return p, fmt.Errorf("unable to parse param 'limit': %w", err)
		}
		p.q.Limit = int(n)
	}
	for name, d := range map[string]*time.Duration{"minDuration": &p.q.DurationMin, "maxDuration": &p.q.DurationMax} {
		if s := f.Get(name); s != "" {
			if *d, err = time.ParseDuration(s); err != nil {
				return p, fmt.Errorf("unable to parse param '%s': %w", name, err)
			}
		}
	}
	if p.q.DurationMin != 0 && p.q.DurationMax != 0 && p.q.DurationMax < p.q.DurationMin {
		return p, errors.New("'maxDuration' should be greater than 'minDuration'")
	}
	for _, t := range f["tag"] {
		k, v, ok := strings.Cut(t, ":")
		if !ok {
			return p, fmt.Errorf("malformed 'tag' parameter, expecting key:value, received: %s", t)
		}
		setAttr(&p.q, k, v)
	}
	for _, t := range f["tags"] {
		var m map[string]string
		if err := json.Unmarshal([]byte(t), &m); err != nil {
			return p, fmt.Errorf("malformed 'tags' parameter, cannot unmarshal JSON: %w", err)
		}
		for k, v := range m {
			setAttr(&p.q, k, v)
		}
	}
	return p, nil
}

func setAttr(q *lakeread.Query, k, v string) {
	if q.Attributes == nil {
		q.Attributes = map[string]string{}
	}
	q.Attributes[k] = v
}

// microsParam reads parameter name, µs since the epoch, or def if absent.
func microsParam(r *http.Request, name string, def time.Time) (time.Time, error) {
	s := r.FormValue(name)
	if s == "" {
		return def, nil
	}
	t, err := readapi.ParseEpoch(s, time.Microsecond)
	if err != nil {
		return time.Time{}, fmt.Errorf("unable to parse param '%s': %w", name, err)
	}
	return t, nil
}

// search answers /api/traces: the traces a search finds, most recent
// first, or those of the traceID parameters (each not found an entry in
// errors).
func (h *Handler) search(w http.ResponseWriter, r *http.Request) {
	p, err := h.parseSearch(r)
	if err != nil {
		h.fail(w, r, err, http.StatusBadRequest)
		return
	}
	t, err := h.tenantOf(r)
	if err != nil {
		h.fail(w, r, err, http.StatusInternalServerError)
		return
	}
	ctx := r.Context()
	traces := []trace{}
	var errs []structError
	if len(p.traceIDs) > 0 {
		for _, id := range p.traceIDs {
			tr, err := h.readTrace(ctx, t, id, p.q.StartMin, p.q.StartMax)
			switch {
			case errors.Is(err, errNotFound):
				errs = append(errs, structError{Msg: err.Error(), TraceID: traceIDString(id)})
			case err != nil:
				h.fail(w, r, err, http.StatusInternalServerError)
				return
			default:
				traces = append(traces, tr)
			}
		}
		h.write(w, r, response{Data: traces, Errors: errs})
		return
	}
	if p.q.Limit <= 0 || p.q.Limit > h.cfg.MaxTraces {
		p.q.Limit = h.cfg.MaxTraces
	}
	found, err := h.cfg.Reader.FindTraces(ctx, t, p.q)
	if err != nil {
		h.fail(w, r, err, http.StatusInternalServerError)
		return
	}
	all, err := h.cfg.Reader.FoundTracesSpans(ctx, t, found)
	if err != nil {
		h.fail(w, r, err, http.StatusInternalServerError)
		return
	}
	for _, spans := range all {
		tr, err := build(spans)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			h.fail(w, r, err, http.StatusInternalServerError)
			return
		}
		traces = append(traces, tr)
	}
	h.write(w, r, response{Data: traces})
}
