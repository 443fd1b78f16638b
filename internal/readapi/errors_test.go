package readapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
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

func mustInt(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

func TestParseTimes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"1700000000", time.Unix(1700000000, 0)},
		{"1700000000123456789", time.Unix(0, 1700000000123456789)},
		{"1700000000.25", time.Unix(1700000000, 250_000_000)},
		{"2026-11-28T10:00:00.5Z", time.Date(2026, 11, 28, 10, 0, 0, 500_000_000, time.UTC)},
	} {
		if got, err := ParseLokiTime(c.in); err != nil || !got.Equal(c.want) {
			t.Errorf("ParseLokiTime(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "NaN", "yesterday", "Inf"} {
		if _, err := ParseLokiTime(bad); err == nil {
			t.Errorf("ParseLokiTime(%q) accepted", bad)
		}
	}
	if got, err := ParseEpoch("1700000000123456", time.Microsecond); err != nil || !got.Equal(time.UnixMicro(1700000000123456)) {
		t.Errorf("ParseEpoch µs: %v %v", got, err)
	}
	if _, err := ParseEpoch("9223372036854775807", time.Second); err == nil {
		t.Error("ParseEpoch accepted seconds past int64 nanoseconds")
	}
	if id, err := ParseTraceID("abc"); err != nil || id[15] != 0xbc || id[14] != 0x0a {
		t.Errorf("ParseTraceID(abc) = %x, %v", id, err)
	}
	for _, bad := range []string{"", "g", "+1", strings.Repeat("1", 33)} {
		if _, err := ParseTraceID(bad); err == nil {
			t.Errorf("ParseTraceID(%q) accepted", bad)
		}
	}
}
