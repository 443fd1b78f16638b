package readapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// TenantRule is the one rule of which tenant a read request acts for:
// the tenant of its bearer token (put in its context by the admin port's
// authentication, tenant.NewContext; "" a token of the default tenant);
// a tenant header (X-Scope-OrgID for Loki and Tempo, x-tenant for
// Jaeger) is honoured when the server has no tokens (HeaderAllowed), and
// with tokens only when it names the token's own tenant; else Default.
type TenantRule struct {
	// Default is the tenant of a request that names none.
	Default string
	// Header is the request header that may name the tenant; "" for
	// none.
	Header string
	// HeaderAllowed lets Header name any tenant: set when the server has
	// no bearer tokens.
	HeaderAllowed bool
}

// Resolve returns r's tenant by the rule (Choose, with the tenant of r's
// context and the values of its Header), or Choose's *Error.
func (tr TenantRule) Resolve(r *http.Request) (string, error) {
	var asked []string
	if tr.Header != "" {
		asked = r.Header.Values(tr.Header)
	}
	return tr.Choose(tenant.FromContext(r.Context()), asked)
}

// Choose is the rule on its inputs, for an API that gets them otherwise
// than in an *http.Request (Jaeger's remote storage, over gRPC, once it
// has authenticated the call): token is the tenant of the request's bearer
// token ("" for none, or a token of the default tenant), asked the values
// of its Header (nil if it has none). With HeaderAllowed the first value
// names the tenant; without, every value must name the token's. It
// returns the tenant, or an *Error: Forbidden for a token's tenant that is
// not a tenant name (it names a lake partition: never trusted blindly) or
// a header naming another tenant than the token's, BadRequest for a header
// (HeaderAllowed) that is not a tenant name.
func (tr TenantRule) Choose(token string, asked []string) (string, error) {
	t := token
	switch {
	case t == "":
		t = tr.Default
	case !tenant.Valid(t):
		return "", Errorf(KindForbidden, "the bearer token's tenant is not a valid tenant name")
	}
	if !tr.HeaderAllowed {
		for _, h := range asked {
			if h != "" && h != t {
				return "", Errorf(KindForbidden, "%s names another tenant than the bearer token's", tr.Header)
			}
		}
		return t, nil
	}
	h := ""
	if len(asked) > 0 {
		h = asked[0]
	}
	switch {
	case h == "" || h == t:
		return t, nil
	case !tenant.Valid(h):
		return "", Errorf(KindBadRequest, "%s %q is not a valid tenant name", tr.Header, h)
	}
	return h, nil
}

// Of returns r's tenant by the rule, the default for a request Resolve
// refuses (for admission: the API refuses it then).
func (tr TenantRule) Of(r *http.Request) string {
	t, err := tr.Resolve(r)
	if err != nil {
		return tr.Default
	}
	return t
}

// ErrorWriter writes err as an API answers errors: a
// *querybudget.BusyError as 429 or 503 with a Retry-After, a
// *querybudget.LimitError as the API's "too large", others as it does.
type ErrorWriter func(w http.ResponseWriter, r *http.Request, err error)

// Admit returns h behind g: each request is admitted for the tenant
// tenantOf gives, waiting for a slot as g allows, or answered by fail;
// while h runs its context carries the query's ticket
// (querybudget.FromContext) and ends after timeout (0: no bound), and its
// answer must be written within half a minute more. A nil g admits
// every request.
func Admit(g *querybudget.Gate, tenantOf func(*http.Request) string, timeout time.Duration, fail ErrorWriter, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tk, err := g.Admit(r.Context(), tenantOf(r))
		if err != nil {
			if cerr := r.Context().Err(); cerr != nil {
				err = cerr // the client went away while it waited: Canceled
			}
			fail(w, r, err)
			return
		}
		defer tk.Done()
		ctx := querybudget.NewContext(r.Context(), tk)
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
			// A client that does not read its answer cannot hold the slot.
			http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout + 30*time.Second)) //nolint:errcheck // not every writer has deadlines
		}
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// SetRetryAfter sets the Retry-After header of a refusal, in whole
// seconds (at least 1), when err is a *querybudget.BusyError, and
// reports whether it was.
func SetRetryAfter(w http.ResponseWriter, err error) bool {
	var be *querybudget.BusyError
	if !errors.As(err, &be) {
		return false
	}
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int((be.RetryAfter+time.Second-1)/time.Second))))
	return true
}
