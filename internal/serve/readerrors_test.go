package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
)

// The error shapes of the read APIs' real counterparts, as their
// documentation gives them.
var (
	// Prometheus' HTTP API: {"status":"error","errorType":...,"error":...}.
	promShape = func(typ string) func(string) bool {
		return func(b string) bool {
			var e struct{ Status, ErrorType, Error string }
			return json.Unmarshal([]byte(b), &e) == nil && e.Status == "error" && e.ErrorType == typ && e.Error != ""
		}
	}
	// Jaeger's HTTP API: {"data":null,...,"errors":[{"code":N,"msg":...}]}.
	jaegerShape = func(code int) func(string) bool {
		return func(b string) bool {
			var e struct {
				Errors []struct {
					Code int
					Msg  string
				}
			}
			return json.Unmarshal([]byte(b), &e) == nil && len(e.Errors) == 1 && e.Errors[0].Code == code && e.Errors[0].Msg != ""
		}
	}
	// Loki's and Tempo's HTTP APIs answer errors as plain text.
	textShape = func(b string) bool { return b != "" && !strings.HasPrefix(strings.TrimSpace(b), "{") }
	// The admin port's authentication, before any API: text and 401.
	unauthorized = func(b string) bool { return strings.HasPrefix(b, "unauthorized") }
)

// TestReadAPIFailures sends every read API each kind of failure it can
// be sent over HTTP (a bad parameter, an unknown trace, a query past a
// limit, past its timeout, naming another tenant, with no token or a
// wrong one) and checks the status and the body's shape against the
// API's real counterpart; and Jaeger's remote storage API the same over
// gRPC. (A busy query budget: TestQueryBudgetRefusals; a client gone:
// cmd/wirehouse TestQueryStorm.)
func TestReadAPIFailures(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.Queries.MaxLines = 500
	s := startTenantServer(t, cfg)
	admin := "http://" + s.Addrs().Admin.String()
	q := func(query string) string { return url.Values{"query": {query}}.Encode() }
	type call struct {
		name          string
		path, token   string
		header, value string // a tenant header to send
		status        int
		shape         func(string) bool
	}
	const wrong = "not-a-token-of-this-server-0123456789"
	calls := []call{
		// Prometheus
		{"prometheus bad parameter", "/api/v1/query?" + q("sum("), adminTokA, "", "", 400, promShape("bad_data")},
		{"prometheus bad time", "/api/v1/query_range?" + q("up") + "&start=x&end=1&step=1", adminTokA, "", "", 400, promShape("bad_data")},
		{"prometheus no token", "/api/v1/query?" + q("up"), "", "", "", 401, unauthorized},
		{"prometheus wrong token", "/api/v1/query?" + q("up"), wrong, "", "", 401, unauthorized},
		// Loki
		{"loki bad parameter", "/loki/api/v1/query_range?" + q(`{service_name=`), adminTokA, "", "", 400, textShape},
		{"loki bad time", "/loki/api/v1/query_range?" + q(`{a="b"}`) + "&start=yesterday", adminTokA, "", "", 400, textShape},
		{"loki over a limit", "/loki/api/v1/query_range?" + q(`{a="b"}`) + "&limit=501", adminTokA, "", "", 413, textShape},
		{"loki another tenant", "/loki/api/v1/labels", adminTokA, "X-Scope-OrgID", "b", 403, textShape},
		{"loki no token", "/loki/api/v1/labels", "", "", "", 401, unauthorized},
		// Jaeger
		{"jaeger bad parameter", "/jaeger/api/traces?service=x&limit=abc", adminTokA, "", "", 400, jaegerShape(400)},
		{"jaeger bad trace id", "/jaeger/api/traces/xyz", adminTokA, "", "", 400, jaegerShape(400)},
		{"jaeger unknown trace", "/jaeger/api/traces/0123456789abcdef0123456789abcdef", adminTokA, "", "", 404, jaegerShape(404)},
		{"jaeger another tenant", "/jaeger/api/services", adminTokA, "x-tenant", "b", 403, jaegerShape(403)},
		{"jaeger no token", "/jaeger/api/services", "", "", "", 401, unauthorized},
		// Tempo
		{"tempo bad trace id", "/tempo/api/traces/xyz", adminTokA, "", "", 400, textShape},
		{"tempo unknown trace", "/tempo/api/traces/0123456789abcdef0123456789abcdef", adminTokA, "", "", 404, textShape},
		{"tempo another tenant", "/tempo/api/traces/0123456789abcdef0123456789abcdef", adminTokA, "X-Scope-OrgID", "b", 403, textShape},
		{"tempo no token", "/tempo/api/traces/0123456789abcdef0123456789abcdef", "", "", "", 401, unauthorized},
		{"tempo bad traceql", "/tempo/api/search?q=" + url.QueryEscape(`{ .a = }`), adminTokA, "", "", 400, textShape},
		{"tempo search another tenant", "/tempo/api/search", adminTokA, "X-Scope-OrgID", "b", 403, textShape},
	}
	for _, c := range calls {
		req, _ := http.NewRequest(http.MethodGet, admin+c.path, nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		if c.header != "" {
			req.Header.Set(c.header, c.value)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !c.shape(string(b)) {
			t.Errorf("%s: %d %.200q; want %d in the API's error shape", c.name, resp.StatusCode, b, c.status)
		}
	}

	// Jaeger's remote storage over gRPC.
	conn, err := grpc.NewClient(s.Addrs().Jaeger.String(), grpc.WithTransportCredentials(insecure.NewCredentials()), otlpgrpc.DialOption())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range []struct {
		name string
		md   []string
		req  []byte
		code codes.Code
	}{
		{"no token", nil, nil, codes.Unauthenticated},
		{"wrong token", []string{"authorization", "Bearer " + wrong}, nil, codes.Unauthenticated},
		{"another tenant", []string{"authorization", "Bearer " + adminTokA, "x-tenant", "b"}, nil, codes.PermissionDenied},
		{"malformed request", []string{"authorization", "Bearer " + adminTokA}, []byte{0x0a, 0xff}, codes.InvalidArgument},
	} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), c.md...)
		var out otlpgrpc.Message
		method := "/jaeger.storage.v2.TraceReader/GetServices"
		if c.req != nil {
			method = "/jaeger.storage.v2.TraceReader/GetOperations"
		}
		err := conn.Invoke(ctx, method, &otlpgrpc.Message{B: c.req}, &out)
		if got := status.Code(err); got != c.code {
			t.Errorf("jaeger storage %s: %v, want %v", c.name, err, c.code)
		}
	}

	t.Run("timeout", func(t *testing.T) {
		cfg := testConfig(t)
		cfg.Limits.Queries.Timeout = time.Nanosecond
		s := startServer(t, cfg)
		admin := "http://" + s.Addrs().Admin.String()
		for _, c := range []call{
			{"prometheus", "/api/v1/query?" + q("up"), "", "", "", 503, promShape("timeout")},
			{"loki", "/loki/api/v1/query_range?" + q(`{a="b"}`), "", "", "", 504, textShape},
			{"jaeger", "/jaeger/api/services", "", "", "", 504, jaegerShape(504)},
			{"tempo", "/tempo/api/traces/0123456789abcdef0123456789abcdef", "", "", "", 504, textShape},
		} {
			code, b := get(t, admin+c.path)
			if code != c.status || !c.shape(b) {
				t.Errorf("%s past its timeout: %d %.200q; want %d in the API's error shape", c.name, code, b, c.status)
			}
		}
	})
}
