package jaegerstorage

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Authenticator checks a call's credentials: the whole authorization
// value, e.g. "Bearer abc", "" when the call has none. It returns the
// tenant the credentials belong to ("" for the default, Config.Tenant) or
// an error, which refuses the call as Unauthenticated with the error's
// text, so the text must not repeat the credentials. It is called
// concurrently, once per call. internal/bearer's Tokens implement it.
type Authenticator interface {
	Authenticate(authorization string) (tenant string, err error)
}

// Metadata keys of a call's credentials.
const (
	// authorizationKey holds "Bearer <token>", as Jaeger's grpc storage
	// backend sends it from its headers setting.
	authorizationKey = "authorization"
	// propagatedTokenKey holds a bare token: the one of the Jaeger HTTP
	// API request being answered (its Authorization header without the
	// scheme), which the Jaeger query service forwards with
	// bearer_token_propagation (Jaeger's internal/auth/bearertoken).
	propagatedTokenKey = "bearer.token"
)

// tenantOf is the tenant a call reads, or the status that refuses it.
//
// Without an Authenticator it is the call's tenant header, else the
// default; a header that is not a valid tenant name is PermissionDenied.
//
// With one, the call's credentials must authenticate, else it is
// Unauthenticated, and it reads the tenant of its token (a token naming
// none reads the default). A tenant header may repeat that tenant but not
// name another: such a call is PermissionDenied.
func (h *handler) tenantOf(ctx context.Context) (string, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	asked := md.Get(h.cfg.TenantHeader)
	if h.cfg.Auth == nil {
		if len(asked) == 0 || asked[0] == "" {
			return h.cfg.Tenant, nil
		}
		if !tenant.Valid(asked[0]) {
			return "", status.Errorf(codes.PermissionDenied, "tenant %q is not a valid tenant name", asked[0])
		}
		return asked[0], nil
	}
	cred, err := credentials(md)
	if err != nil {
		return "", status.Error(codes.Unauthenticated, err.Error())
	}
	t, err := h.cfg.Auth.Authenticate(cred)
	if err != nil {
		return "", status.Error(codes.Unauthenticated, err.Error())
	}
	if t == "" {
		t = h.cfg.Tenant
	}
	if !tenant.Valid(t) { // the tenant names a lake partition: never trust it blindly
		return "", status.Error(codes.PermissionDenied, "the bearer token's tenant is not a valid tenant name")
	}
	for _, a := range asked {
		if a != "" && a != t {
			return "", status.Errorf(codes.PermissionDenied, "tenant %q (%s) is not the bearer token's", a, h.cfg.TenantHeader)
		}
	}
	return t, nil
}

// credentials is the authorization value of a call's metadata md: its
// authorization value, else "Bearer " and its bearer.token value, else "".
// A key given several values is an error, as which one counts is unclear.
func credentials(md metadata.MD) (string, error) {
	if v := md.Get(authorizationKey); len(v) > 0 {
		if len(v) > 1 {
			return "", errors.New("several authorization values")
		}
		return v[0], nil
	}
	if v := md.Get(propagatedTokenKey); len(v) > 0 {
		if len(v) > 1 {
			return "", errors.New("several bearer.token values")
		}
		return "Bearer " + v[0], nil
	}
	return "", nil
}
