package jaegerstorage

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wirehouse/wirehouse/internal/readapi"
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
// With an Authenticator, the call's credentials must authenticate, else it
// is Unauthenticated, and it reads its token's tenant (a token naming none
// reads the default); a tenant header may repeat that tenant but not name
// another (PermissionDenied). Without one, it reads the tenant its tenant
// header names, else the default; a header that is not a tenant name is
// InvalidArgument. The rule is the read side's (readapi.TenantRule.Choose,
// which the HTTP read APIs resolve too); its refusals are the gRPC codes
// of their kinds.
func (h *handler) tenantOf(ctx context.Context) (string, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	token := ""
	if h.cfg.Auth != nil {
		cred, err := credentials(md)
		if err != nil {
			return "", status.Error(codes.Unauthenticated, err.Error())
		}
		if token, err = h.cfg.Auth.Authenticate(cred); err != nil {
			return "", status.Error(codes.Unauthenticated, err.Error())
		}
	}
	rule := readapi.TenantRule{Default: h.cfg.Tenant, Header: h.cfg.TenantHeader, HeaderAllowed: h.cfg.Auth == nil}
	t, err := rule.Choose(token, md.Get(h.cfg.TenantHeader))
	if err != nil {
		return "", status.Error(readapi.Classify(err).GRPCCode(), err.Error())
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
