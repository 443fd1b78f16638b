// Package pipeline is the contract between the OTLP receiver and the
// components that take what it accepts: a Sink consumes a validated
// Request of one signal and answers with an Outcome or an error whose
// Kind chooses the response the client gets.
//
// The receiver, the stores' sinks, the usage counter and the forwarder
// all import this package instead of one another; nothing here starts a
// goroutine or holds state.
package pipeline

import (
	"context"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Transports a Request arrives on.
const (
	TransportGRPC = "grpc"
	TransportHTTP = "http"
)

// Request is one validated OTLP export request handed to a sink.
type Request struct {
	Signal    otlpwire.Signal
	Transport string // TransportGRPC or TransportHTTP
	// Body is the decompressed Export*ServiceRequest in protobuf wire
	// format, already checked by otlpwire's Validate, except for the first
	// sink of a signal when that sink is Validating. It is owned by the
	// caller and reused after Consume returns: a sink that keeps any of
	// it must copy it.
	Body []byte
	// Records is the number of data points, log records or spans in Body.
	Records int
	// Tenant is what the authenticator said the request belongs to; ""
	// without one, or for the server's default tenant.
	Tenant string
}

// Outcome is what a sink did with a request it did not refuse as a whole.
type Outcome struct {
	// Rejected is the number of records the sink refused for good; the
	// response carries them as an OTLP partial success.
	Rejected int64
	// Message says why, for the partial success's error_message.
	Message string
}

// Sink receives validated requests of one signal.
//
// Consume returns once the sink has made the data as durable as it
// promises; the receiver acknowledges a request only after every sink of
// its signal returned without error. A returned error refuses the whole
// request: wrap ErrOverloaded, ErrUnavailable, ErrInvalid or ErrTooLarge
// (or return an *Error) to choose the status. Consume is called
// concurrently.
type Sink interface {
	Consume(ctx context.Context, req *Request) (Outcome, error)
}

// SinkFunc adapts a function to the Sink interface.
type SinkFunc func(ctx context.Context, req *Request) (Outcome, error)

// Consume calls f.
func (f SinkFunc) Consume(ctx context.Context, req *Request) (Outcome, error) { return f(ctx, req) }

// Validating marks s as a sink that checks every request completely
// itself, refusing exactly what otlpwire's Validate refuses, with an error
// wrapping Validate's *otlpwire.Error, and keeping none of a refused
// request. When the first sink of a signal is marked, the receiver does not
// run Validate first, so the request is walked once instead of twice; the
// sinks after it see only requests it accepted, which are valid. The
// receiver answers such a refusal as it answers a failed Validate (400 or
// INVALID_ARGUMENT, the error's path in the message, no records counted).
// The returned Sink hides s's other methods (io.Closer, say): keep s to
// use them.
func Validating(s Sink) Sink { return validating{s} }

// IsValidating reports whether s was returned by Validating.
func IsValidating(s Sink) bool {
	_, ok := s.(validating)
	return ok
}

type validating struct{ Sink }

// Sinks are the sinks of each signal, called in order. A signal without
// sinks is not served: gRPC answers UNIMPLEMENTED and HTTP 404.
type Sinks struct {
	Metrics, Logs, Traces []Sink
}

// Of returns the sinks of sig.
func (s Sinks) Of(sig otlpwire.Signal) []Sink {
	switch sig {
	case otlpwire.SignalMetrics:
		return s.Metrics
	case otlpwire.SignalLogs:
		return s.Logs
	case otlpwire.SignalTraces:
		return s.Traces
	}
	return nil
}
