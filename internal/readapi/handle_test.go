package readapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// textWire writes answers and errors as plain text, the error with its
// kind's status, as Loki's and Tempo's wires do.
type textWire struct{}

func (textWire) Write(w http.ResponseWriter, _ *http.Request, res string) {
	fmt.Fprint(w, res)
}

func (textWire) WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	http.Error(w, err.Error(), Classify(err).HTTPStatus())
}

// TestHandle: the endpoint runs with the rule's tenant in its context and
// its answer or error is written by the wire; a request the rule refuses
// never reaches it; a panic is a 500 whose body does not carry the
// panic's value or stack.
func TestHandle(t *testing.T) {
	rule := &TenantRule{Default: "main", Header: "X-Scope-OrgID"}
	ran := 0
	h := Handle[string](textWire{}, rule, func(r *http.Request) (string, error) {
		ran++
		switch r.URL.Path {
		case "/missing":
			return "", Errorf(KindNotFound, "trace not found")
		case "/panic":
			panic("secret value")
		}
		return "tenant " + tenant.FromContext(r.Context()), nil
	})
	for _, tc := range []struct {
		name, path string
		token, org string // the token's tenant in the context; the header
		code       int
		body       string
	}{
		{"default", "/q", "", "", 200, "tenant main"},
		{"token", "/q", "acme", "", 200, "tenant acme"},
		{"header repeats the token", "/q", "acme", "acme", 200, "tenant acme"},
		{"header names another", "/q", "acme", "other", 403, "X-Scope-OrgID names another tenant than the bearer token's\n"},
		{"error", "/missing", "", "", 404, "trace not found\n"},
		{"panic", "/panic", "", "", 500, "internal error serving /panic: see the server's log\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ran
			r := httptest.NewRequest("GET", tc.path, nil)
			if tc.token != "" {
				r = r.WithContext(tenant.NewContext(r.Context(), tc.token))
			}
			if tc.org != "" {
				r.Header.Set("X-Scope-OrgID", tc.org)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.code || w.Body.String() != tc.body {
				t.Errorf("got %d %q, want %d %q", w.Code, w.Body.String(), tc.code, tc.body)
			}
			if refused := tc.code == 403; refused == (ran > before) {
				t.Errorf("endpoint ran %d times; refused by the rule: %v", ran-before, refused)
			}
			if strings.Contains(w.Body.String(), "secret") {
				t.Error("the panic's value reached the client")
			}
		})
	}
}

// TestHandleNoRule: without a rule the request's context is left as it
// is.
func TestHandleNoRule(t *testing.T) {
	h := Handle[string](textWire{}, nil, func(r *http.Request) (string, error) {
		if t := tenant.FromContext(r.Context()); t != "" {
			return "", errors.New("tenant " + t)
		}
		return "ok", nil
	})
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Scope-OrgID", "other")
	h.ServeHTTP(w, r)
	if w.Code != 200 || w.Body.String() != "ok" {
		t.Errorf("got %d %q", w.Code, w.Body.String())
	}
}
