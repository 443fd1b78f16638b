package promapi

import (
	"errors"
	"log/slog"
	"net/http"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/wirehouse/wirehouse/internal/readapi"
)

// answer is an endpoint's successful answer, what its readapi.Func
// returns for wire.Write to write, as Prometheus' apiFuncResult.
type answer struct {
	// data writes the envelope's data; nil answers 204 and no body, as
	// Prometheus answers where it has no data (the admin endpoints that
	// return nothing, query_exemplars of an expression without
	// selectors).
	data func(*jsoniter.Stream)
	// warnings are the envelope's warnings and infos.
	warnings annotations.Annotations
	// query is the PromQL query whose positions warnings name; "" for an
	// answer that is not a query's.
	query string
	// done, if not nil, releases what data reads (a querier, a query's
	// result) once it is written, as Prometheus' finalizer.
	done func()
}

// releaseUnlessDone calls release unless res has a done, which releases
// in its stead once Write has written res. A handler that opens what
// release releases defers it with its named result: an error or a panic
// releases at once, a successful answer once written.
func releaseUnlessDone(res *answer, release func()) {
	if res.done == nil {
		release()
	}
}

// wire is Prometheus' wire format, the readapi.Wire of every endpoint:
// success and error envelopes, and their status codes.
type wire struct {
	log *slog.Logger
}

// Write writes res: a success envelope with its data, and warnings and
// infos that name their position in res.query, at most 10 of each with a
// count of the rest, as Prometheus writes them; 204 and no body when it
// has no data. It then calls res.done.
func (wr wire) Write(w http.ResponseWriter, _ *http.Request, res answer) {
	if res.done != nil {
		defer res.done()
	}
	if res.data == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s := jsonAPI.BorrowStream(nil)
	defer jsonAPI.ReturnStream(s)
	s.WriteObjectStart()
	s.WriteObjectField("status")
	s.WriteString("success")
	s.WriteMore()
	s.WriteObjectField("data")
	res.data(s)
	if len(res.warnings) > 0 {
		warns, infos := res.warnings.AsStrings(res.query, 10, 10)
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
		wr.log.Debug("write query response", "err", err)
	}
}

// WriteError writes err in Prometheus' error envelope: an *apiError (as
// errors.As finds it) as it is; any other error by its kind
// (readapi.Classify): a query the budget cannot take now is errorType
// "unavailable", 503, with a Retry-After (the status Prometheus' clients
// retry); one past its own memory "execution", 422, as Prometheus answers
// a query past its samples limit; a bad request "bad_data", a forbidden
// one "forbidden", a timeout "timeout", a canceled one "canceled", others
// "internal".
func (wire) WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	var e *apiError
	if !errors.As(err, &e) {
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
		e = &apiError{typ: typ, err: err}
	}
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

// WriteError answers err as the endpoints answer their errors
// (wire.WriteError), for the query budget's admission (readapi.Admit),
// which refuses a query before its endpoint runs.
func (a *API) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	wire{log: a.cfg.Logger}.WriteError(w, r, err)
}
