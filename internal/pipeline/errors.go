package pipeline

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
)

// Kind classifies why a request was refused. Each kind maps, in the one
// table below, to whether the client may retry, the gRPC status code and the
// HTTP status, following the OTLP specification's "Failures" sections for
// OTLP/gRPC and OTLP/HTTP
// (https://opentelemetry.io/docs/specs/otlp/#failures and
// #failures-1):
//
//	kind               retry  gRPC code           HTTP
//	BadData            no     INVALID_ARGUMENT    400 Bad Request
//	TooLarge           no     RESOURCE_EXHAUSTED  413 Content Too Large
//	UnsupportedMedia   no     INVALID_ARGUMENT    415 Unsupported Media Type
//	Overloaded         yes    RESOURCE_EXHAUSTED  429 Too Many Requests + Retry-After
//	                          (+ RetryInfo)
//	Unavailable        yes    UNAVAILABLE         503 Service Unavailable + Retry-After
//	                          (+ RetryInfo)
//	Internal           no     INTERNAL            500 Internal Server Error
//	Unauthenticated    no     UNAUTHENTICATED     401 Unauthorized + WWW-Authenticate
//
// The OTLP spec makes RESOURCE_EXHAUSTED retryable only when the status
// carries RetryInfo, so TooLarge (no RetryInfo) is permanent while
// Overloaded (with RetryInfo) is retried; on HTTP, 413 is not among the
// retryable statuses (429, 502, 503, 504).
type Kind uint8

// The kinds; the zero Kind is not valid and is treated as KindInternal.
const (
	KindBadData Kind = iota + 1
	KindTooLarge
	KindUnsupportedMedia
	KindOverloaded
	KindUnavailable
	KindInternal
	KindUnauthenticated
)

type kindInfo struct {
	reason    string // metric label and log field
	retryable bool
	grpc      codes.Code
	http      int
}

var kinds = [...]kindInfo{
	KindBadData:          {"bad_data", false, codes.InvalidArgument, http.StatusBadRequest},
	KindTooLarge:         {"too_large", false, codes.ResourceExhausted, http.StatusRequestEntityTooLarge},
	KindUnsupportedMedia: {"unsupported_media", false, codes.InvalidArgument, http.StatusUnsupportedMediaType},
	KindOverloaded:       {"overloaded", true, codes.ResourceExhausted, http.StatusTooManyRequests},
	KindUnavailable:      {"unavailable", true, codes.Unavailable, http.StatusServiceUnavailable},
	KindInternal:         {"internal", false, codes.Internal, http.StatusInternalServerError},
	KindUnauthenticated:  {"unauthenticated", false, codes.Unauthenticated, http.StatusUnauthorized},
}

func (k Kind) info() kindInfo {
	if int(k) < len(kinds) && k != 0 {
		return kinds[k]
	}
	return kinds[KindInternal]
}

// String is the kind's reason label, e.g. "bad_data".
func (k Kind) String() string { return k.info().reason }

// Retryable reports whether a client should retry a request refused with k.
func (k Kind) Retryable() bool { return k.info().retryable }

// GRPCCode is the gRPC status code for k.
func (k Kind) GRPCCode() codes.Code { return k.info().grpc }

// HTTPStatus is the HTTP status code for k.
func (k Kind) HTTPStatus() int { return k.info().http }

// Error is a refused request: its Kind selects the status, Err says what
// was wrong and is sent to the client as the status message.
type Error struct {
	Kind Kind
	Err  error
	// RetryAfter, if positive, is the wait the refusal suggests for a
	// retryable Kind (HTTP Retry-After, rounded up to whole seconds; gRPC
	// RetryInfo); otherwise the receiver's default applies.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Refuse returns an *Error of kind k whose message is formatted as
// fmt.Errorf formats it (%w wraps).
func Refuse(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// Sentinel errors a Sink returns (wrapped) to choose the response.
var (
	// ErrOverloaded: the sink cannot take more now; the client retries
	// later (429 / RESOURCE_EXHAUSTED with RetryInfo).
	ErrOverloaded = errors.New("overloaded")
	// ErrUnavailable: the sink is shutting down or its storage is failing;
	// the client retries later (503 / UNAVAILABLE). Errors a sink returns
	// that wrap none of these sentinels are treated the same way.
	ErrUnavailable = errors.New("unavailable")
	// ErrInvalid: the data is valid OTLP but the sink refuses all of it
	// for good, e.g. delta sums a store cannot hold (400 /
	// INVALID_ARGUMENT). For refusing only part of a request, return an
	// Outcome with Rejected set instead.
	ErrInvalid = errors.New("invalid data")
	// ErrTooLarge: the request alone is more than the sink can ever take,
	// e.g. larger than its whole storage (413 / RESOURCE_EXHAUSTED
	// without RetryInfo): retrying cannot help.
	ErrTooLarge = errors.New("too large")
)

// Classify turns a sink's error into an *Error using the sentinels above:
// an *Error in err's chain is returned as is; an error wrapping none of
// the sentinels is KindUnavailable.
func Classify(err error) *Error {
	var re *Error
	switch {
	case errors.As(err, &re):
		return re
	case errors.Is(err, ErrInvalid):
		return &Error{Kind: KindBadData, Err: err}
	case errors.Is(err, ErrOverloaded):
		return &Error{Kind: KindOverloaded, Err: err}
	case errors.Is(err, ErrTooLarge):
		return &Error{Kind: KindTooLarge, Err: err}
	default:
		return &Error{Kind: KindUnavailable, Err: err}
	}
}
