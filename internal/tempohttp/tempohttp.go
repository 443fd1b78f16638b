package tempohttp

import (
	"bytes"
	"context"
	"encoding/hex"
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
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Reader == nil:
		return errors.New("tempohttp: Reader not set")
	case !tenant.Valid(c.Tenant):
		return fmt.Errorf("tempohttp: Tenant %q is not a valid tenant name", c.Tenant)
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
// Tempo data source then takes http://host:port/tempo as its URL).
func (h *Handler) Register(mux *http.ServeMux, prefix string) {
	p := strings.TrimSuffix(prefix, "/")
	mux.HandleFunc("GET "+p+"/api/traces/{traceID}", func(w http.ResponseWriter, r *http.Request) { h.trace(w, r, false) })
	mux.HandleFunc("GET "+p+"/api/v2/traces/{traceID}", func(w http.ResponseWriter, r *http.Request) { h.trace(w, r, true) })
	mux.HandleFunc("GET "+p+"/api/echo", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("echo")) //nolint:errcheck
	})
}

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

// trace answers a trace by id: v1 is Tempo's Trace (OTLP ResourceSpans,
// named "batches" in JSON), v2 its TraceByIDResponse (the trace in field
// 1, "trace" in JSON). Unknown ids are 404, malformed requests 400, a
// read past the reader's limits 413.
func (h *Handler) trace(w http.ResponseWriter, r *http.Request, v2 bool) {
	id, err := readapi.ParseTraceID(r.PathValue("traceID"))
	var start, end time.Time
	if err == nil {
		if start, err = secondsParam(r, "start"); err == nil {
			end, err = secondsParam(r, "end")
		}
	}
	if err != nil {
		h.WriteError(w, r, &readapi.Error{Kind: readapi.KindBadRequest, Err: err})
		return
	}
	if !end.IsZero() {
		end = end.Add(time.Second) // whole seconds: the end's second included
	}
	t, err := readapi.TenantRule{Default: h.cfg.Tenant, Header: h.cfg.TenantHeader, HeaderAllowed: h.cfg.AnyTenant}.Resolve(r)
	if err != nil {
		h.WriteError(w, r, err)
		return
	}
	res, err := h.cfg.Reader.Trace(r.Context(), t, id, start, end)
	switch {
	case err != nil:
		h.WriteError(w, r, err)
		return
	case res.Spans.Len() == 0:
		h.WriteError(w, r, readapi.Errorf(readapi.KindNotFound, "trace not found"))
		return
	}
	td, err := res.Spans.AppendProto(nil)
	if err != nil {
		h.cfg.Logger.Error("tempo HTTP API: encode trace", "trace_id", hex.EncodeToString(id[:]), "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	body, ctype, err := encode(td, v2, wantsProtobuf(r))
	if err != nil {
		h.cfg.Logger.Error("tempo HTTP API: encode trace", "trace_id", hex.EncodeToString(id[:]), "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body) //nolint:errcheck
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

// WriteError answers a failed read as Tempo answers errors, as text,
// with the status of its kind (readapi.Classify: 400 for a bad request,
// 404 for a trace not found, 413 past a limit, 429 with a Retry-After
// when the query budget cannot take the query now, 504 past the
// timeout), nothing when the client went away, 500 else (logged).
// readapi.Admit answers its refusals with it too.
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	k := readapi.Classify(err)
	switch {
	case k == readapi.KindCanceled || errors.Is(r.Context().Err(), context.Canceled):
		return // the client went away
	case k == readapi.KindInternal:
		h.cfg.Logger.Error("tempo HTTP API: read trace", "path", r.URL.Path, "err", err)
	}
	readapi.SetRetryAfter(w, err)
	http.Error(w, err.Error(), k.HTTPStatus())
}
