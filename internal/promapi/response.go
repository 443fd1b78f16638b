package promapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"

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

// apiError is an error of an endpoint, with the errorType it is answered
// with.
type apiError struct {
	typ errorType
	err error
}

func (e *apiError) Error() string { return e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

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

// empty is an endpoint that answers success with the data write writes.
func empty(write func(*jsoniter.Stream)) readapi.Func[answer] {
	return func(*http.Request) (answer, error) { return answer{data: write}, nil }
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
