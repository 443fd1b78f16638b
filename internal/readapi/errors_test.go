package readapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

func TestClassify(t *testing.T) {
	_, perr := logql.Parse(`{`)
	for _, c := range []struct {
		err  error
		kind Kind
		http int
		grpc codes.Code
	}{
		{Errorf(KindBadRequest, "bad %s", "x"), KindBadRequest, 400, codes.InvalidArgument},
		{fmt.Errorf("wrapped: %w", Errorf(KindNotFound, "trace not found")), KindNotFound, 404, codes.NotFound},
		{&querybudget.BusyError{Reason: "concurrency", RetryAfter: time.Second}, KindBusy, 429, codes.ResourceExhausted},
		{fmt.Errorf("read: %w", &querybudget.LimitError{Limit: 1}), KindTooLarge, 413, codes.ResourceExhausted},
		{&lakeread.LimitError{What: "bytes read", Limit: 1}, KindTooLarge, 413, codes.ResourceExhausted},
		{perr, KindBadRequest, 400, codes.InvalidArgument},
		{fmt.Errorf("q: %w", context.DeadlineExceeded), KindTimeout, http.StatusGatewayTimeout, codes.DeadlineExceeded},
		{context.Canceled, KindCanceled, 499, codes.Canceled},
		{errors.New("disk on fire"), KindInternal, 500, codes.Internal},
	} {
		k := Classify(c.err)
		if k != c.kind || k.HTTPStatus() != c.http || k.GRPCCode() != c.grpc {
			t.Errorf("%v: %v %d %v, want %v %d %v", c.err, k, k.HTTPStatus(), k.GRPCCode(), c.kind, c.http, c.grpc)
		}
	}
	if perr == nil {
		t.Fatal("logql parsed `{`")
	}
	if Kind(200).String() != "internal" {
		t.Error("an unknown kind is not internal")
	}
}

func TestTenantRule(t *testing.T) {
	req := func(token, header string) *http.Request {
		r, _ := http.NewRequest("GET", "/", nil)
		if token != "" {
			r = r.WithContext(tenant.NewContext(r.Context(), token))
		}
		if header != "" {
			r.Header.Set("X-Scope-OrgID", header)
		}
		return r
	}
	open := TenantRule{Default: "default", Header: "X-Scope-OrgID", HeaderAllowed: true}
	tokens := TenantRule{Default: "default", Header: "X-Scope-OrgID"}
	for _, c := range []struct {
		rule          TenantRule
		token, header string
		want          string
		kind          Kind
	}{
		{open, "", "", "default", 0},
		{open, "", "b", "b", 0},
		{open, "", "../x", "", KindBadRequest},
		{tokens, "a", "", "a", 0},
		{tokens, "a", "a", "a", 0},
		{tokens, "a", "b", "", KindForbidden},
		{tokens, "", "default", "default", 0}, // a token of the default tenant
		{tokens, "", "b", "", KindForbidden},
		{TenantRule{Default: "default"}, "", "b", "default", 0}, // no header read
	} {
		got, err := c.rule.Resolve(req(c.token, c.header))
		if got != c.want || (err == nil) != (c.kind == 0) || err != nil && Classify(err) != c.kind {
			t.Errorf("%+v token %q header %q: %q %v, want %q %v", c.rule, c.token, c.header, got, err, c.want, c.kind)
		}
	}
}
