package receiver

import (
	"context"
	"time"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	tenantctx "github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Authenticator decides whether a request may export, from its
// Authorization header (OTLP/HTTP) or authorization metadata (OTLP/gRPC):
// the whole value, e.g. "Bearer abc", empty when absent. It returns the
// tenant the credentials belong to ("" for the server's default) or an
// error, which refuses the request as unauthenticated (HTTP 401, gRPC
// UNAUTHENTICATED) with the error's text, so the text must not repeat the
// credentials. It is called concurrently, once per request, before the
// body is read. internal/bearer implements it.
type Authenticator interface {
	Authenticate(authorization string) (tenant string, err error)
}

// authenticate checks authorization when the receiver has an
// Authenticator and returns ctx carrying the tenant, or the refusal
// (counted for sig, whose request is not read).
func (r *Receiver) authenticate(ctx context.Context, sig otlpwire.Signal, t transport, authorization string) (context.Context, *pipeline.Error) {
	if r.auth == nil {
		return ctx, nil
	}
	tenant, err := r.auth.Authenticate(authorization)
	if err != nil {
		rerr := pipeline.Refuse(pipeline.KindUnauthenticated, "%w", err)
		r.finish(sig, t, time.Now(), -1, 0, pipeline.Outcome{}, rerr)
		return ctx, rerr
	}
	if tenant == "" {
		return ctx, nil
	}
	return tenantctx.NewContext(ctx, tenant), nil
}

// signalOfMethod is the signal whose Export method is the full gRPC method
// name m.
func signalOfMethod(m string) (otlpwire.Signal, bool) { return otlpwire.SignalOfMethod(m) }
