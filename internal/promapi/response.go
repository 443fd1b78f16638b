package promapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/wirehouse/wirehouse/internal/readapi"
)

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
// data nil the envelope has no data field (no handler answers so:
// Prometheus answers 204 and no body where it has no data).
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
	if data != nil {
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
		a.cfg.Logger.Debug("write query response", "err", err)
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

// empty answers success with the data write writes.
func (a *API) empty(write func(*jsoniter.Stream)) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { a.respond(w, nil, write) }
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

// WriteError answers err in Prometheus' error shape, by its kind
// (readapi.Classify), for the query budget's admission (readapi.Admit):
// a query the budget cannot take now is errorType "unavailable", 503,
// with a Retry-After (the status Prometheus' clients retry); one past its
// own memory "execution", 422, as Prometheus answers a query past its
// samples limit; a bad request "bad_data", a timeout "timeout", a
// canceled one "canceled".
func (a *API) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	typ := errInternal
	switch readapi.Classify(err) {
	case readapi.KindBusy, readapi.KindUnavailable:
		readapi.SetRetryAfter(w, err)
		typ = errUnavail
	case readapi.KindTooLarge:
		typ = errExec
	case readapi.KindBadRequest:
		typ = errBadData
	case readapi.KindForbidden:
		typ = errForbidden
	case readapi.KindCanceled:
		typ = errCanceled
	case readapi.KindTimeout:
		typ = errTimeout
	}
	a.fail(w, &apiError{typ: typ, err: err})
}
