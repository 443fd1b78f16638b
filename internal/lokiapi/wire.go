package lokiapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
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

// Write writes res, an endpoint's answer, as JSON (a rawJSON as it is).
func (wire) Write(w http.ResponseWriter, _ *http.Request, res any) {
	if _, ok := res.(noContent); ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if raw, ok := res.(rawYAML); ok {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(raw) //nolint:errcheck // the client went away
		return
	}
	if raw, ok := res.(rawJSON); ok {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(raw) //nolint:errcheck // the client went away
		return
	}
	writeJSON(w, res)
}

// rawJSON is an answer written as JSON already (streamsAnswer).
type rawJSON []byte

// streamsAnswer is Loki's answer of a log query, in JSON, written here
// rather than by encoding/json's reflection over maps: a query's
// streams, each a label set of OTLP attributes, are most of its bytes
// (a stream a record when records differ in one attribute), and
// encoding them with sorted map keys was 7 % of serve's CPU for a label
// filter over 1.5M logs, after the query had finished. labels come
// sorted by name, as encoding/json would order a map's keys.
func streamsAnswer(streams []eval.Stream, stats map[string]any, categorized bool) (rawJSON, error) {
	st, err := json.Marshal(stats)
	if err != nil {
		return nil, fmt.Errorf("encode stats: %w", err)
	}
	b := []byte(`{"status":"success","data":{"resultType":"streams",`)
	if categorized {
		b = append(b, `"encodingFlags":["categorize-labels"],`...)
	}
	b = append(b, `"result":[`...)
	for i, s := range streams {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendLabelsObject(append(b, `{"stream":`...), s.Labels)
		b = append(b, `,"values":[`...)
		for j, e := range s.Entries {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `["`...)
			b = strconv.AppendInt(b, e.Time, 10)
			b = append(b, `",`...)
			b = appendJSONString(b, e.Line)
			if categorized {
				// The line's other labels by kind; a kind it has none of
				// is left out ({} for neither).
				b = append(b, ",{"...)
				if len(e.Metadata) > 0 {
					b = appendLabelsObject(append(b, `"structuredMetadata":`...), e.Metadata)
				}
				if len(e.Parsed) > 0 {
					if len(e.Metadata) > 0 {
						b = append(b, ',')
					}
					b = appendLabelsObject(append(b, `"parsed":`...), e.Parsed)
				}
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"stats":`...)
	b = append(b, st...)
	return append(b, "}}\n"...), nil
}

// appendLabelsObject appends ls as a JSON object of names and values.
func appendLabelsObject(b []byte, ls eval.Labels) []byte {
	b = append(b, '{')
	for j, l := range ls {
		if j > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, l.Name)
		b = append(b, ':')
		b = appendJSONString(b, l.Value)
	}
	return append(b, '}')
}

// appendJSONString appends s as encoding/json writes it: printable ASCII
// but the characters it escapes as it is, anything else through
// json.Marshal (FuzzAppendJSONString holds the two equal).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

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
