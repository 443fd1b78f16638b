package lokiapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/readapi"
)

// wire is the API's wire format (readapi.Wire): answers as JSON, errors
// as Loki's plain text with the status of their kind. readapi.Handle
// writes every endpoint's answer through it.
type wire struct {
	timeout time.Duration // Config.Timeout, named in a timeout's answer
	log     *slog.Logger  // gets a line per internal error
}

// Write writes res, an endpoint's answer, as JSON.
func (wire) Write(w http.ResponseWriter, _ *http.Request, res any) { writeJSON(w, res) }

// WriteError answers err in Loki's plain text with the status of its
// kind (readapi.Classify): 400 for a malformed request or query, 403,
// 413 past a limit (eval.ErrLimit included), 429 with a Retry-After when
// the query budget is busy, 504 past the timeout, 499 when the client
// went away (nobody reads it but the access log), 500 else (logged).
func (x wire) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	k := readapi.Classify(err)
	switch {
	case errors.Is(r.Context().Err(), context.Canceled):
		k = readapi.KindCanceled // whatever the query made of it
	case errors.Is(err, eval.ErrLimit):
		k = readapi.KindTooLarge
	}
	switch k {
	case readapi.KindTimeout:
		err = fmt.Errorf("query timed out after %s: narrow the time range or the selector", x.timeout)
	case readapi.KindInternal:
		x.log.Error("loki API query failed", "path", r.URL.Path, "err", err)
	}
	readapi.SetRetryAfter(w, err)
	http.Error(w, err.Error(), k.HTTPStatus())
}

// writeJSON writes v as the API's JSON answer.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
}

// success is Loki's envelope of a successful answer.
func success(data any) map[string]any {
	return map[string]any{"status": "success", "data": data}
}
