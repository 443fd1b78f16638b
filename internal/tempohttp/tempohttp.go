package tempohttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/otlpjson"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Config configures a Handler.
type Config struct {
	// Reader reads the lake. It must be set.
	Reader *lakeread.Reader
	// Tenant is the tenant of a request whose context names none
	// (tenant.FromContext): the lake's default tenant.
	Tenant string
	// TenantHeader may name a request's tenant, as Grafana's Tempo data
	// source sends X-Scope-OrgID: any tenant when AnyTenant (the server
	// has no bearer tokens), else only the token's own
	// (readapi.TenantRule). "" reads no header.
	TenantHeader string
	AnyTenant    bool
	// Logger gets a line per failed request. Default slog.Default().
	Logger *slog.Logger
	// MaxMetricsTraces is the most traces a metrics query that needs
	// whole traces reads (past it, 413). Default 20,000. A span-local
	// query (eval.SpanSource) reads no traces and has no such bound.
	MaxMetricsTraces int
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Reader == nil:
		return errors.New("tempohttp: Reader not set")
	case !tenant.Valid(c.Tenant):
		return fmt.Errorf("tempohttp: Tenant %q is not a valid tenant name", c.Tenant)
	case c.MaxMetricsTraces < 0:
		return fmt.Errorf("tempohttp: MaxMetricsTraces %d, must not be negative", c.MaxMetricsTraces)
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
	return &Handler{cfg: cfg}, nil
}

// Register adds the routes to mux under prefix ("/tempo": Grafana's
// Tempo data source then takes http://host:port/tempo as its URL). The
// trace endpoints return their answer or an error, and readapi.Handle
// resolves the request's tenant (readapi.TenantRule: the bearer token's,
// or TenantHeader's) and writes what they return (wire).
func (h *Handler) Register(mux *http.ServeMux, prefix string) {
	p := strings.TrimSuffix(prefix, "/")
	x := wire{log: h.cfg.Logger}
	rule := &readapi.TenantRule{Default: h.cfg.Tenant, Header: h.cfg.TenantHeader, HeaderAllowed: h.cfg.AnyTenant}
	traceBy := func(v2 bool) http.Handler {
		return readapi.Handle(x, rule, func(r *http.Request) (body, error) { return h.trace(r, v2) })
	}
	mux.Handle("GET "+p+"/api/traces/{traceID}", traceBy(false))
	mux.Handle("GET "+p+"/api/v2/traces/{traceID}", traceBy(true))
	mux.Handle("GET "+p+"/api/search", readapi.Handle(x, rule, h.search))
	mux.Handle("GET "+p+"/api/search/tags", readapi.Handle(x, rule, h.tags))
	mux.Handle("GET "+p+"/api/v2/search/tags", readapi.Handle(x, rule, h.tagsV2))
	mux.Handle("GET "+p+"/api/search/tag/{tag}/values", readapi.Handle(x, rule, func(r *http.Request) (body, error) { return h.tagValues(r, false) }))
	mux.Handle("GET "+p+"/api/v2/search/tag/{tag}/values", readapi.Handle(x, rule, func(r *http.Request) (body, error) { return h.tagValues(r, true) }))
	mux.Handle("GET "+p+"/api/metrics/query_range", readapi.Handle(x, rule, func(r *http.Request) (body, error) { return h.metricsQuery(r, false) }))
	mux.Handle("GET "+p+"/api/metrics/query", readapi.Handle(x, rule, func(r *http.Request) (body, error) { return h.metricsQuery(r, true) }))
	mux.HandleFunc("GET "+p+"/api/status/buildinfo", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(buildInfo)) //nolint:errcheck
	})
	mux.HandleFunc("GET "+p+"/api/echo", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("echo")) //nolint:errcheck
	})
}

// buildInfo is /api/status/buildinfo's answer: the Tempo release whose
// HTTP API this one serves (TraceQL search with structural operators,
// tags v2, TraceQL metrics query_range), so that Grafana's Tempo data
// source turns on what it has. Streaming search (gRPC) is a data source
// setting Grafana leaves off; it is not served.
const buildInfo = `{"version":"2.6.0","revision":"wirehouse","branch":"","buildUser":"","buildDate":"","goVersion":""}`

// secondsParam reads parameter name, seconds since the epoch, or the zero
// time if absent.
func secondsParam(r *http.Request, name string) (time.Time, error) {
	s := r.FormValue(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := readapi.ParseEpoch(s, time.Second)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid %s %q: want seconds since the epoch", name, s)
	}
	return t, nil
}

// wantsProtobuf reports whether the Accept header asks for protobuf.
func wantsProtobuf(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && (mt == "application/protobuf" || mt == "application/x-protobuf") {
			return true
		}
	}
	return false
}

// body is a trace's answer: the bytes and their content type.
type body struct {
	b     []byte
	ctype string
}

// trace answers a trace by id: v1 is Tempo's Trace (OTLP ResourceSpans,
// named "batches" in JSON), v2 its TraceByIDResponse (the trace in field
// 1, "trace" in JSON). Unknown ids are 404, malformed requests 400, a
// read past the reader's limits 413.
func (h *Handler) trace(r *http.Request, v2 bool) (body, error) {
	id, err := readapi.ParseTraceID(r.PathValue("traceID"))
	var start, end time.Time
	if err == nil {
		if start, err = secondsParam(r, "start"); err == nil {
			end, err = secondsParam(r, "end")
		}
	}
	if err != nil {
		return body{}, &readapi.Error{Kind: readapi.KindBadRequest, Err: err}
	}
	if !end.IsZero() {
		end = end.Add(time.Second) // whole seconds: the end's second included
	}
	res, err := h.cfg.Reader.Trace(r.Context(), tenant.FromContext(r.Context()), id, start, end)
	switch {
	case err != nil:
		return body{}, err
	case res.Spans.Len() == 0:
		return body{}, readapi.Errorf(readapi.KindNotFound, "trace not found")
	}
	td, err := res.Spans.AppendProto(nil)
	if err != nil {
		return body{}, err
	}
	b, ctype, err := encode(td, v2, wantsProtobuf(r))
	if err != nil {
		return body{}, err
	}
	return body{b: b, ctype: ctype}, nil
}

// encode returns the response body of the OTLP TracesData td and its
// content type.
func encode(td []byte, v2, proto bool) ([]byte, string, error) {
	if proto {
		if v2 {
			out := protowire.AppendTag(nil, 1, protowire.BytesType)
			return protowire.AppendBytes(out, td), "application/protobuf", nil
		}
		return td, "application/protobuf", nil
	}
	js, err := otlpjson.FromProto(otlpwire.SignalTraces, td)
	if err != nil {
		return nil, "", err
	}
	// {"resourceSpans":[...]} is OTLP/JSON's TracesData; Tempo's v1
	// Trace names the list "batches", its v2 response wraps the trace.
	const key = `{"resourceSpans":`
	if !bytes.HasPrefix(js, []byte(key)) {
		return nil, "", fmt.Errorf("OTLP/JSON of a trace starts %.20q", js)
	}
	var out []byte
	if v2 {
		out = append(append(append(out, `{"trace":`...), js...), '}')
	} else {
		out = append(append(out, `{"batches":`...), js[len(key):]...)
	}
	return out, "application/json", nil
}

// WriteError answers err as the API answers a failed read (wire), for
// the query budget's admission (readapi.Admit).
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	wire{log: h.cfg.Logger}.WriteError(w, r, err)
}

// wire is the API's wire format (readapi.Wire): a trace's bytes as they
// are, errors as Tempo's plain text with the status of their kind.
// readapi.Handle writes the trace endpoints' answers through it.
type wire struct {
	log *slog.Logger // gets a line per internal error
}

// Write writes res with its content type and length.
func (wire) Write(w http.ResponseWriter, _ *http.Request, res body) {
	w.Header().Set("Content-Type", res.ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(res.b)))
	w.Write(res.b) //nolint:errcheck // the client went away
}

// WriteError answers a failed read as Tempo answers errors, as text,
// with the status of its kind (readapi.Classify: 400 for a bad request,
// 404 for a trace not found, 413 past a limit, 429 with a Retry-After
// when the query budget cannot take the query now, 504 past the
// timeout), 499 when the client went away (whatever error the read made
// of it: nobody reads it but the access log), 500 else (logged).
func (x wire) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	k := readapi.Classify(err)
	switch {
	case k == readapi.KindCanceled || errors.Is(r.Context().Err(), context.Canceled):
		k = readapi.KindCanceled
	case k == readapi.KindInternal:
		x.log.Error("tempo HTTP API: read trace", "path", r.URL.Path, "err", err)
	}
	readapi.SetRetryAfter(w, err)
	http.Error(w, err.Error(), k.HTTPStatus())
}
