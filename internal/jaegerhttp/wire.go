package jaegerhttp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/wirehouse/wirehouse/internal/readapi"
)

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

// wire is the API's wire format (readapi.Wire): Jaeger's envelope as
// JSON, errors in it as text/plain with the status of their kind, as
// Jaeger's query service answers. readapi.Handle writes every endpoint's
// answer through it.
type wire struct {
	log *slog.Logger // gets a line per internal error
}

// Write writes res as JSON, indented with the prettyPrint parameter (any
// value but "false"), as Jaeger does.
func (x wire) Write(w http.ResponseWriter, r *http.Request, res response) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	if v := r.FormValue("prettyPrint"); v != "" && v != "false" {
		enc.SetIndent("", "    ")
	}
	if err := enc.Encode(res); err != nil {
		x.log.Debug("jaeger HTTP API: write response", "err", err)
	}
}

// WriteError answers err as Jaeger does: its envelope with the error, as
// text/plain, with the status of err's kind (readapi.Classify): 400 for a
// malformed parameter, 403 for another tenant's header, 404 for a trace
// not found, 413 past a limit, 429 with a Retry-After when the query
// budget cannot take the query now, 504 past the timeout, 499 when the
// client went away (nobody reads it but the access log), 500 else
// (logged).
func (x wire) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	k := readapi.Classify(err)
	switch {
	case errors.Is(r.Context().Err(), context.Canceled):
		k = readapi.KindCanceled // whatever the query made of it
	case k == readapi.KindInternal:
		x.log.Error("jaeger HTTP API request failed", "path", r.URL.Path, "err", err)
	}
	readapi.SetRetryAfter(w, err)
	code := k.HTTPStatus()
	b, _ := json.Marshal(response{Errors: []structError{{Code: code, Msg: err.Error()}}})
	http.Error(w, string(b), code)
}

// badRequest is err, a malformed parameter's, as a BadRequest error; its
// message unchanged.
func badRequest(err error) error {
	return &readapi.Error{Kind: readapi.KindBadRequest, Err: err}
}
