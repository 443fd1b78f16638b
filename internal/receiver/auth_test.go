package receiver

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wirehouse/wirehouse/internal/bearer"
	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

const (
	tokenA = "token-of-tenant-a-0123456789"
	tokenD = "token-of-the-default-tenant-0123"
)

// startAuth runs a receiver that authenticates with a bearer tokens file
// (tokenA for tenant a, tokenD for the default tenant) and records the
// tenant of every request it accepts.
func startAuth(t *testing.T) (*Receiver, *recorder, func() []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(tokenA+" a\n"+tokenD+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := bearer.Load(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var tenants []string
	rec := &recorder{hook: func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		mu.Lock()
		tenants = append(tenants, req.Tenant)
		mu.Unlock()
		return pipeline.Outcome{}, nil
	}}
	cfg := testConfig()
	cfg.Authenticator = tokens
	r := startWith(t, cfg, pipeline.Sinks{Metrics: []pipeline.Sink{rec}, Logs: []pipeline.Sink{rec}, Traces: []pipeline.Sink{rec}})
	return r, rec, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), tenants...)
	}
}

func TestHTTPAuthentication(t *testing.T) {
	r, rec, tenants := startAuth(t)
	url := httpURL(r, otlpwire.SignalLogs)
	body := logsBody(5)
	for _, tc := range []struct {
		name, auth, contentType string
		want                    int
	}{
		{"no credentials", "", "application/x-protobuf", http.StatusUnauthorized},
		{"unknown token", "Bearer not-a-token-we-know-of-at-all", "application/x-protobuf", http.StatusUnauthorized},
		{"basic auth", "Basic dXNlcjpwYXNz", "application/json", http.StatusUnauthorized},
		{"no credentials, bad media type", "", "text/plain", http.StatusUnauthorized},
		{"tenant a", "Bearer " + tokenA, "application/x-protobuf", http.StatusOK},
		{"default tenant", "Bearer " + tokenD, "application/x-protobuf", http.StatusOK},
		{"tenant a, bad media type", "Bearer " + tokenA, "text/plain", http.StatusUnsupportedMediaType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send := body
			if tc.contentType == "application/json" {
				send = []byte(`{"resourceLogs":[]}`)
			}
			status, h, resp := post(t, url, send, "Content-Type", tc.contentType, "Authorization", tc.auth)
			if status != tc.want {
				t.Errorf("status %d, want %d: %s", status, tc.want, resp)
				return
			}
			if status != http.StatusUnauthorized {
				return
			}
			if got := h.Get("WWW-Authenticate"); got != `Bearer realm="OTLP"` {
				t.Errorf("WWW-Authenticate %q", got)
			}
			// The refusal is an OTLP Status in the request's encoding.
			var msg string
			switch tc.contentType {
			case "application/x-protobuf":
				var st statuspb.Status
				if err := proto.Unmarshal(resp, &st); err != nil || st.Code != int32(codes.Unauthenticated) {
					t.Errorf("body %q is not an UNAUTHENTICATED Status: %v", resp, err)
				}
				msg = st.Message
			case "application/json":
				var st struct {
					Code    int
					Message string
				}
				if err := json.Unmarshal(resp, &st); err != nil || st.Code != int(codes.Unauthenticated) {
					t.Errorf("body %q is not an UNAUTHENTICATED Status: %v", resp, err)
				}
				msg = st.Message
			default:
				msg = string(resp)
			}
			if !strings.Contains(msg, "bearer token") {
				t.Errorf("message %q does not say what is missing", msg)
			}
		})
	}
	if got := strings.Join(tenants(), ","); got != "a," {
		t.Errorf("tenants handed to the sink: %q, want a then the default", got)
	}
	if n := len(rec.bodies(otlpwire.SignalLogs)); n != 2 {
		t.Errorf("%d requests reached the sink, want 2", n)
	}
	if n := testutil.ToFloat64(r.m.requests.WithLabelValues("logs", "http", "refused", "unauthenticated")); n != 4 {
		t.Errorf("refused as unauthenticated on /metrics: %v, want 4", n)
	}
}

func TestGRPCAuthentication(t *testing.T) {
	r, rec, tenants := startAuth(t)
	conn := dialGRPC(t, r)
	body := logsBody(5)
	for _, tc := range []struct {
		name string
		md   []string
		want codes.Code
	}{
		{"no credentials", nil, codes.Unauthenticated},
		{"unknown token", []string{"authorization", "Bearer not-a-token-we-know-of-at-all"}, codes.Unauthenticated},
		{"tenant a", []string{"authorization", "Bearer " + tokenA}, codes.OK},
		{"default tenant", []string{"authorization", "Bearer " + tokenD}, codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.md != nil {
				ctx = metadata.AppendToOutgoingContext(ctx, tc.md...)
			}
			err := exportGRPC(ctx, conn, otlpwire.SignalLogs, body, nil)
			if got := status.Code(err); got != tc.want {
				t.Errorf("%v, want %v", err, tc.want)
			}
			if tc.want == codes.Unauthenticated && !strings.Contains(status.Convert(err).Message(), "bearer token") {
				t.Errorf("message %q does not say what is missing", status.Convert(err).Message())
			}
		})
	}
	// An unknown method is refused before authentication matters.
	err := conn.Invoke(context.Background(), "/nope.Service/Export", &otlpgrpc.Message{B: body}, &otlpgrpc.Message{}, grpc.ForceCodecV2(otlpgrpc.Codec{}))
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("unknown method: %v", err)
	}
	if got := strings.Join(tenants(), ","); got != "a," {
		t.Errorf("tenants handed to the sink: %q, want a then the default", got)
	}
	if n := len(rec.bodies(otlpwire.SignalLogs)); n != 2 {
		t.Errorf("%d requests reached the sink, want 2", n)
	}
	if n := testutil.ToFloat64(r.m.requests.WithLabelValues("logs", "grpc", "refused", "unauthenticated")); n != 2 {
		t.Errorf("refused as unauthenticated on /metrics: %v, want 2", n)
	}
}
