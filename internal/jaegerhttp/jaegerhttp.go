package jaegerhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/tracemetrics"
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
	// Dependencies, if set, gives /api/dependencies its links: a
	// tenant's calls between services over a window
	// (tracemetrics.Dependencies over the metric store). By default the
	// list is empty.
	Dependencies func(ctx context.Context, tenant string, start, end time.Time) ([]tracemetrics.Dependency, error)
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
// takes http://host:port/jaeger as its URL). Each endpoint returns its
// answer or an error, and readapi.Handle resolves the request's tenant
// (readapi.TenantRule: the bearer token's, or TenantHeader's) and writes
// what it returns in Jaeger's envelope (wire).
func (h *Handler) Register(mux *http.ServeMux, prefix string) {
	p := strings.TrimSuffix(prefix, "/") + "/api"
	x := wire{log: h.cfg.Logger}
	rule := &readapi.TenantRule{Default: h.cfg.Tenant, Header: h.cfg.TenantHeader, HeaderAllowed: h.cfg.AnyTenant}
	handle := func(path string, f readapi.Func[response]) {
		mux.Handle("GET "+p+path, readapi.Handle(x, rule, f))
	}
	handle("/services", h.services)
	handle("/services/{service}/operations", h.operationsLegacy)
	handle("/operations", h.operations)
	handle("/traces", h.search)
	handle("/traces/{traceID}", h.trace)
	handle("/dependencies", h.dependencies)
}

// WriteError answers err as the API answers a failed query (wire), for
// the query budget's admission (readapi.Admit).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	wire{log: h.cfg.Logger}.WriteError(w, r, err)
}

// services answers /api/services: the tenant's services.
func (h *Handler) services(r *http.Request) (response, error) {
	svcs, err := h.cfg.Reader.Services(r.Context(), tenant.FromContext(r.Context()), time.Time{}, time.Time{})
	if err != nil {
		return response{}, err
	}
	return response{Data: svcs, Total: len(svcs)}, nil
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

// readOperations reads the operations of service in r's tenant, of span
// kind kind ("" for all), sorted by name.
func (h *Handler) readOperations(r *http.Request, service, kind string) ([]operation, error) {
	ops, err := h.cfg.Reader.Operations(r.Context(), tenant.FromContext(r.Context()), service, "", time.Time{}, time.Time{})
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
func (h *Handler) operationsLegacy(r *http.Request) (response, error) {
	ops, err := h.readOperations(r, r.PathValue("service"), "")
	if err != nil {
		return response{}, err
	}
	names := make([]string, 0, len(ops))
	for i, o := range ops {
		if i == 0 || o.Name != ops[i-1].Name { // sorted by name
			names = append(names, o.Name)
		}
	}
	return response{Data: names, Total: len(names)}, nil
}

// operations answers /api/operations?service=&spanKind=.
func (h *Handler) operations(r *http.Request) (response, error) {
	service := r.FormValue("service")
	if service == "" {
		return response{}, readapi.Errorf(readapi.KindBadRequest, "parameter 'service' is required")
	}
	ops, err := h.readOperations(r, service, r.FormValue("spanKind"))
	if err != nil {
		return response{}, err
	}
	return response{Data: ops, Total: len(ops)}, nil
}

// dependencyLink is Jaeger's DependencyLink.
type dependencyLink struct {
	Parent    string `json:"parent"`
	Child     string `json:"child"`
	CallCount uint64 `json:"callCount"`
}

// dependencies answers /api/dependencies?endTs=&lookback=[&service=]
// (ms; defaults now and 24h, as Jaeger's): the calls between services
// over (endTs-lookback, endTs], those of service alone if it is given.
func (h *Handler) dependencies(r *http.Request) (response, error) {
	end := h.cfg.Now()
	lookback := 24 * time.Hour
	for name, set := range map[string]func(int64){
		"endTs":    func(ms int64) { end = time.UnixMilli(ms) },
		"lookback": func(ms int64) { lookback = time.Duration(ms) * time.Millisecond },
	} {
		if v := r.FormValue(name); v != "" {
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ms < 0 || ms > math.MaxInt64/int64(time.Millisecond) {
				return response{}, readapi.Errorf(readapi.KindBadRequest, "unable to parse param '%s': %q is not a number of milliseconds", name, v)
			}
			set(ms)
		}
	}
	links := []dependencyLink{}
	if h.cfg.Dependencies != nil {
		deps, err := h.cfg.Dependencies(r.Context(), tenant.FromContext(r.Context()), end.Add(-lookback), end)
		if err != nil {
			return response{}, err
		}
		service := r.FormValue("service")
		for _, d := range deps {
			if service == "" || d.Parent == service || d.Child == service {
				links = append(links, dependencyLink{d.Parent, d.Child, d.CallCount})
			}
		}
	}
	return response{Data: links}, nil
}

// errNotFound is the error of a trace that is not in the lake: 404 as an
// answer (readapi.KindNotFound), an entry of errors[] in a search by ids.
var errNotFound = readapi.Errorf(readapi.KindNotFound, "trace not found")

// trace answers /api/traces/{traceID}?start=&end= (µs): a one-trace list,
// or 404.
func (h *Handler) trace(r *http.Request) (response, error) {
	id, err := readapi.ParseTraceID(r.PathValue("traceID"))
	if err != nil {
		return response{}, badRequest(err)
	}
	var start, end time.Time
	if start, err = microsParam(r, "start", time.Time{}); err == nil {
		end, err = microsParam(r, "end", time.Time{})
	}
	if err != nil {
		return response{}, badRequest(err)
	}
	tr, err := h.readTrace(r.Context(), tenant.FromContext(r.Context()), id, start, end)
	if err != nil {
		return response{}, err
	}
	return response{Data: []trace{tr}}, nil
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
	if err := readapi.CheckRange(r.Context(), p.q.StartMin, p.q.StartMax); err != nil {
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
func (h *Handler) search(r *http.Request) (response, error) {
	p, err := h.parseSearch(r)
	if err != nil {
		return response{}, badRequest(err)
	}
	ctx := r.Context()
	t := tenant.FromContext(ctx)
	traces := []trace{}
	var errs []structError
	if len(p.traceIDs) > 0 {
		for _, id := range p.traceIDs {
			tr, err := h.readTrace(ctx, t, id, p.q.StartMin, p.q.StartMax)
			switch {
			case errors.Is(err, errNotFound):
				errs = append(errs, structError{Msg: err.Error(), TraceID: traceIDString(id)})
			case err != nil:
				return response{}, err
			default:
				traces = append(traces, tr)
			}
		}
		return response{Data: traces, Errors: errs}, nil
	}
	if p.q.Limit <= 0 || p.q.Limit > h.cfg.MaxTraces {
		p.q.Limit = h.cfg.MaxTraces
	}
	found, err := h.cfg.Reader.FindTraces(ctx, t, p.q)
	if err != nil {
		return response{}, err
	}
	all, err := h.cfg.Reader.FoundTracesSpans(ctx, t, found)
	if err != nil {
		return response{}, err
	}
	for _, spans := range all {
		tr, err := build(spans)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return response{}, err
		}
		traces = append(traces, tr)
	}
	return response{Data: traces}, nil
}
