package readapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/querybudget"
)

// TestAdmit: an admitted request runs with its ticket and the limits'
// timeout in its context and gives its slot back when it ends; one the
// gate cannot take is answered by the API's error writer with a
// Retry-After, and its handler never runs.
func TestAdmit(t *testing.T) {
	gc := querybudget.DefaultConfig()
	gc.MaxConcurrent, gc.MaxConcurrentPerTenant, gc.MaxQueueWait, gc.RetryAfter = 1, 1, 0, 2*time.Second
	g, err := querybudget.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	var inside func()
	ran := 0
	h := Admit(g, func(*http.Request) string { return "t" }, time.Minute, func(w http.ResponseWriter, _ *http.Request, err error) {
		var be *querybudget.BusyError
		if !errors.As(err, &be) {
			t.Errorf("refused with %v, want a BusyError", err)
		}
		SetRetryAfter(w, err)
		w.WriteHeader(Classify(err).HTTPStatus())
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran++
		if querybudget.FromContext(r.Context()) == nil {
			t.Error("no ticket in the admitted request's context")
		}
		if d, ok := r.Context().Deadline(); !ok || time.Until(d) > time.Minute {
			t.Errorf("deadline %v %v, want within the minute", d, ok)
		}
		if inside != nil {
			inside()
		}
	}))
	serve := func() *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/q", nil).WithContext(context.Background()))
		return w
	}
	if w := serve(); w.Code != 200 || ran != 1 {
		t.Fatalf("alone: %d, ran %d", w.Code, ran)
	}
	inside = func() {
		if w := serve(); w.Code != 429 || w.Header().Get("Retry-After") != "2" {
			t.Errorf("while another holds the slot: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
		}
	}
	serve()
	if ran != 2 {
		t.Fatalf("the refused request ran (%d runs)", ran)
	}
	if q, _ := g.Running(); q != 0 {
		t.Fatalf("%d queries hold slots after all ended", q)
	}
}

// TestTenantRuleChoose: the rule on strings, as Jaeger's remote storage
// applies it after authentication: every value of the header must name
// the token's tenant, or with HeaderAllowed the first one names any; a
// token's tenant is never trusted if it is not a tenant name.
func TestTenantRuleChoose(t *testing.T) {
	open := TenantRule{Default: "default", Header: "x-tenant", HeaderAllowed: true}
	tokens := TenantRule{Default: "default", Header: "x-tenant"}
	for _, c := range []struct {
		rule  TenantRule
		token string
		asked []string
		want  string
		kind  Kind
	}{
		{open, "", nil, "default", 0},
		{open, "", []string{""}, "default", 0},
		{open, "", []string{"b"}, "b", 0},
		{open, "", []string{"b", "c"}, "b", 0}, // the first names it
		{open, "", []string{"", "c"}, "default", 0},
		{open, "", []string{"../x"}, "", KindBadRequest},
		{tokens, "a", nil, "a", 0},
		{tokens, "a", []string{"a", ""}, "a", 0},
		{tokens, "a", []string{"a", "b"}, "", KindForbidden}, // every value counts
		{tokens, "a", []string{"../x"}, "", KindForbidden},
		{tokens, "", []string{"default"}, "default", 0},
		{tokens, "", []string{"a"}, "", KindForbidden},
		{tokens, "../x", nil, "", KindForbidden},
		{tokens, "a b", []string{"a b"}, "", KindForbidden},
	} {
		got, err := c.rule.Choose(c.token, c.asked)
		if got != c.want || (err == nil) != (c.kind == 0) || err != nil && Classify(err) != c.kind {
			t.Errorf("%+v token %q asked %q: %q %v, want %q %v", c.rule, c.token, c.asked, got, err, c.want, c.kind)
		}
	}
}
