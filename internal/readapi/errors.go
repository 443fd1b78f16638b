package readapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/grpc/codes"

	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/querysyntax"
)

// Kind classifies why a read request failed. Each kind maps, in the one
// table below, to the HTTP status and the gRPC code every read API
// answers it with; each API writes it in its own envelope (Prometheus'
// errorType JSON, Loki's and Tempo's text, Jaeger's errors[] array, a
// gRPC status):
//
//	kind          HTTP                               gRPC
//	BadRequest    400 Bad Request                    INVALID_ARGUMENT
//	Unauthorized  401 Unauthorized                   UNAUTHENTICATED
//	Forbidden     403 Forbidden                      PERMISSION_DENIED
//	NotFound      404 Not Found                      NOT_FOUND
//	TooLarge      413 Content Too Large              RESOURCE_EXHAUSTED
//	Busy          429 Too Many Requests, Retry-After RESOURCE_EXHAUSTED + RetryInfo
//	Timeout       504 Gateway Timeout                DEADLINE_EXCEEDED
//	Canceled      499 (client closed request)        CANCELED
//	Unavailable   503 Service Unavailable            UNAVAILABLE
//	Internal      500 Internal Server Error          INTERNAL
//
// Prometheus' API keeps Prometheus' own statuses where they differ (503
// for a timeout or a busy server, 422 for a query past a limit): its
// clients retry on them.
type Kind uint8

// The kinds; the zero Kind is KindInternal.
const (
	KindInternal Kind = iota
	KindBadRequest
	KindUnauthorized
	KindForbidden
	KindNotFound
	KindTooLarge
	KindBusy
	KindTimeout
	KindCanceled
	KindUnavailable
)

type kindInfo struct {
	name string
	http int
	grpc codes.Code
}

var kinds = [...]kindInfo{
	KindInternal:     {"internal", http.StatusInternalServerError, codes.Internal},
	KindBadRequest:   {"bad_request", http.StatusBadRequest, codes.InvalidArgument},
	KindUnauthorized: {"unauthorized", http.StatusUnauthorized, codes.Unauthenticated},
	KindForbidden:    {"forbidden", http.StatusForbidden, codes.PermissionDenied},
	KindNotFound:     {"not_found", http.StatusNotFound, codes.NotFound},
	KindTooLarge:     {"too_large", http.StatusRequestEntityTooLarge, codes.ResourceExhausted},
	KindBusy:         {"busy", http.StatusTooManyRequests, codes.ResourceExhausted},
	KindTimeout:      {"timeout", http.StatusGatewayTimeout, codes.DeadlineExceeded},
	KindCanceled:     {"canceled", 499, codes.Canceled},
	KindUnavailable:  {"unavailable", http.StatusServiceUnavailable, codes.Unavailable},
}

func (k Kind) info() kindInfo {
	if int(k) < len(kinds) {
		return kinds[k]
	}
	return kinds[KindInternal]
}

// String is the kind's name, e.g. "bad_request".
func (k Kind) String() string { return k.info().name }

// HTTPStatus is the HTTP status of k.
func (k Kind) HTTPStatus() int { return k.info().http }

// GRPCCode is the gRPC code of k.
func (k Kind) GRPCCode() codes.Code { return k.info().grpc }

// Error is an error of a known kind, for the failures only an API knows
// the kind of (a malformed parameter, a trace not found).
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of kind k with the message format gives.
func Errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// TooLarge is implemented by the errors of a query past one of its own
// limits (lakeread's and the query budget's LimitError): readapi knows
// them by it, not by importing the storage layers, so that an API's
// package (and Prometheus' oracle module, which builds promapi) does not
// pull in Parquet and S3 through the contract.
type TooLarge interface{ TooLarge() bool }

// Classify returns the kind of err: an *Error's own; a query budget's
// refusal Busy; an error that says it is TooLarge (lakeread's and the
// query budget's limits) TooLarge; a query's syntax error (LogQL's,
// TraceQL's) BadRequest; a
// context's deadline Timeout and its cancelation Canceled; anything else
// Internal.
func Classify(err error) Kind {
	var (
		e  *Error
		be *querybudget.BusyError
		tl TooLarge
		pe *querysyntax.ParseError
	)
	switch {
	case err == nil:
		return KindInternal
	case errors.As(err, &e):
		return e.Kind
	case errors.As(err, &be):
		return KindBusy
	case errors.As(err, &tl) && tl.TooLarge():
		return KindTooLarge
	case errors.As(err, &pe):
		return KindBadRequest
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindCanceled
	}
	return KindInternal
}
