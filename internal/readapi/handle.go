package readapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Wire is an API's wire format: how it writes an answer of type T and how
// it writes an error. It is all an API keeps of a read endpoint once
// Handle runs it: the tenant, the ticket, the deadline and the error's
// kind come from this package.
type Wire[T any] interface {
	// Write writes res, a successful answer to r.
	Write(w http.ResponseWriter, r *http.Request, res T)
	// WriteError writes err in the API's error shape, with the status of
	// its kind (Classify), as the API's real counterpart answers it.
	WriteError(w http.ResponseWriter, r *http.Request, err error)
}

// Func is a read endpoint: it answers r, whose context carries the tenant
// it reads (tenant.FromContext, resolved by the API's TenantRule), the
// query's ticket (querybudget.FromContext, under Admit) and its deadline,
// and returns its answer or an error; it writes nothing.
type Func[T any] func(r *http.Request) (T, error)

// Handle returns the handler that runs f and writes what it returns
// through wire, as Prometheus' web/api/v1 wraps its apiFuncs:
//
//   - r's tenant is resolved once by rule and put in its context; a
//     request the rule refuses is answered wire.WriteError, f not run;
//   - an error of f is written by wire.WriteError (a client gone gets
//     the API's Canceled answer, which nobody reads but the access log);
//   - a panic in f is an Internal error, answered and not fatal; its
//     value and stack go to slog's default logger, not to the client.
//
// A nil rule leaves r's context as it is (the API has no tenants).
func Handle[T any](wire Wire[T], rule *TenantRule, f Func[T]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rule != nil {
			t, err := rule.Resolve(r)
			if err != nil {
				wire.WriteError(w, r, err)
				return
			}
			r = r.WithContext(tenant.NewContext(r.Context(), t))
		}
		res, err := run(f, r)
		if err != nil {
			wire.WriteError(w, r, err)
			return
		}
		wire.Write(w, r, res)
	})
}

// run calls f, turning its panic into an Internal error.
func run[T any](f Func[T], r *http.Request) (res T, err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			slog.Error("read API handler panicked", "path", r.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = &Error{Kind: KindInternal, Err: fmt.Errorf("internal error serving %s: see the server's log", r.URL.Path)}
		}
	}()
	return f(r)
}
