package jaegerstorage_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/bearer"
	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// oneSpan is an export request of one span of trace id by service svc.
func oneSpan(t *testing.T, svc string, id pcommon.TraceID) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", svc)
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(id)
	sp.SetSpanID(pcommon.SpanID{id[1], 1})
	sp.SetName("op")
	start := time.Now().Add(-time.Minute)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAuth: with an Authenticator (the bearer tokens of a file, as serve
// passes them), every method refuses a call without a known token as
// Unauthenticated and one whose tenant header names another tenant than
// its token's as PermissionDenied; a token's call reads its tenant's
// spans alone (a token naming none, the default's), whether the token
// comes as authorization metadata or as Jaeger's propagated bearer.token.
func TestAuth(t *testing.T) {
	const (
		tokAcme = "acme-0123456789abcdef"
		tokBeta = "beta-0123456789abcdef"
		tokAny  = "none-0123456789abcdef" // names no tenant
	)
	ids := map[string]pcommon.TraceID{}
	bodies := map[string][]byte{}
	for i, tn := range []string{"default", "acme", "beta"} {
		ids[tn] = pcommon.TraceID{0xa0, byte(i + 1), 15: 1}
		bodies[tn] = oneSpan(t, "svc-"+tn, ids[tn])
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(tokAcme+" acme\n"+tokBeta+" beta\n"+tokAny+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := bearer.Load(path, tenant.Valid, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn := serveTenants(t, bodies, tokens)

	var findAcme []byte // FindTraceIDs of svc-acme
	{
		var params []byte
		params = protowire.AppendTag(params, 1, protowire.BytesType)
		params = protowire.AppendString(params, "svc-acme")
		findAcme = protowire.AppendTag(findAcme, 1, protowire.BytesType)
		findAcme = protowire.AppendBytes(findAcme, params)
	}
	for _, c := range []struct {
		name   string
		md     []string // metadata key, value, ...
		want   codes.Code
		tenant string // whose spans an OK call reads
	}{
		{"no token", nil, codes.Unauthenticated, ""},
		{"no token, a tenant header", []string{"x-tenant", "acme"}, codes.Unauthenticated, ""},
		{"unknown token", []string{"authorization", "Bearer " + strings.Repeat("z", 21)}, codes.Unauthenticated, ""},
		{"not a bearer token", []string{"authorization", "Basic " + tokAcme}, codes.Unauthenticated, ""},
		{"two tokens", []string{"authorization", "Bearer " + tokAcme, "authorization", "Bearer " + tokAcme}, codes.Unauthenticated, ""},
		{"acme's token", []string{"authorization", "Bearer " + tokAcme}, codes.OK, "acme"},
		{"acme's token, acme's header", []string{"authorization", "Bearer " + tokAcme, "x-tenant", "acme"}, codes.OK, "acme"},
		{"acme's token, beta's header", []string{"authorization", "Bearer " + tokAcme, "x-tenant", "beta"}, codes.PermissionDenied, ""},
		{"acme's token, acme's and beta's headers", []string{"authorization", "Bearer " + tokAcme, "x-tenant", "acme", "x-tenant", "beta"}, codes.PermissionDenied, ""},
		{"acme's token, the default's header", []string{"authorization", "Bearer " + tokAcme, "x-tenant", "default"}, codes.PermissionDenied, ""},
		{"acme's token, an invalid header", []string{"authorization", "Bearer " + tokAcme, "x-tenant", "../beta"}, codes.PermissionDenied, ""},
		{"beta's token", []string{"authorization", "Bearer " + tokBeta}, codes.OK, "beta"},
		{"a token naming no tenant", []string{"authorization", "Bearer " + tokAny}, codes.OK, "default"},
		{"a token naming no tenant, the default's header", []string{"authorization", "Bearer " + tokAny, "x-tenant", "default"}, codes.OK, "default"},
		{"a token naming no tenant, acme's header", []string{"authorization", "Bearer " + tokAny, "x-tenant", "acme"}, codes.PermissionDenied, ""},
		{"acme's token propagated by Jaeger", []string{"bearer.token", tokAcme}, codes.OK, "acme"},
		{"acme's token propagated, beta's header", []string{"bearer.token", tokAcme, "x-tenant", "beta"}, codes.PermissionDenied, ""},
		{"an unknown token propagated", []string{"bearer.token", strings.Repeat("z", 21)}, codes.Unauthenticated, ""},
		{"authorization before bearer.token", []string{"authorization", "Bearer " + tokBeta, "bearer.token", tokAcme}, codes.OK, "beta"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs(c.md...))
			var out otlpgrpc.Message
			err := conn.Invoke(ctx, "/jaeger.storage.v2.TraceReader/GetServices", &otlpgrpc.Message{}, &out)
			if status.Code(err) != c.want {
				t.Fatalf("GetServices: %v, want %v", err, c.want)
			}
			if c.want == codes.OK {
				if got := strings1(t, out.B, 1); !slices.Equal(got, []string{"svc-" + c.tenant}) {
					t.Errorf("services %q, want svc-%s's alone", got, c.tenant)
				}
			}
			chunks, err := getTraces(t, ctx, conn, ids["default"], ids["acme"], ids["beta"])
			if status.Code(err) != c.want {
				t.Errorf("GetTraces: %v, want %v", err, c.want)
			} else if c.want == codes.OK && (len(chunks) != 1 || chunks[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID() != ids[c.tenant]) {
				t.Errorf("GetTraces of every tenant's trace: %d chunks, want %s's trace alone", len(chunks), c.tenant)
			}
			err = conn.Invoke(ctx, "/jaeger.storage.v2.TraceReader/FindTraceIDs", &otlpgrpc.Message{B: findAcme}, &out)
			if status.Code(err) != c.want {
				t.Errorf("FindTraceIDs: %v, want %v", err, c.want)
			} else if found := strings1(t, out.B, 1); c.want == codes.OK && (len(found) == 1) != (c.tenant == "acme") {
				t.Errorf("FindTraceIDs of svc-acme as %s: %d traces", c.tenant, len(found))
			}
			err = conn.Invoke(ctx, "/jaeger.storage.v2.DependencyReader/GetDependencies", &otlpgrpc.Message{}, &out)
			if status.Code(err) != c.want {
				t.Errorf("GetDependencies: %v, want %v", err, c.want)
			}
		})
	}
}
