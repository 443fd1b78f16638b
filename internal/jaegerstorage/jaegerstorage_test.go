package jaegerstorage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/jaegerstorage"
	"github.com/wirehouse/wirehouse/internal/lakeread/lakereadtest"
	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// serve writes body to a lake for tenant "default" and serves it; it
// returns a client connection.
func serve(t *testing.T, body []byte) *grpc.ClientConn {
	t.Helper()
	return serveTenants(t, map[string][]byte{"default": body}, nil)
}

// serveTenants writes each tenant's body to a lake and serves it, with
// the default tenant "default" and auth, if not nil, as Config.Auth, on
// a loopback listener; it returns a plaintext client connection.
func serveTenants(t *testing.T, bodies map[string][]byte, auth jaegerstorage.Authenticator) *grpc.ClientConn {
	t.Helper()
	r := lakereadtest.Reader(t, bodies)
	s := grpc.NewServer(otlpgrpc.ServerOption())
	cfg := jaegerstorage.DefaultConfig()
	cfg.Reader, cfg.Tenant, cfg.Auth = r, "default", auth
	if err := jaegerstorage.Register(s, cfg); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()), otlpgrpc.DialOption())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func strings1(t *testing.T, b []byte, num protowire.Number) []string {
	t.Helper()
	var out []string
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		b = b[l:]
		v, l := protowire.ConsumeBytes(b)
		if l < 0 || typ != protowire.BytesType {
			t.Fatalf("malformed response")
		}
		b = b[l:]
		if n == num {
			out = append(out, string(v))
		}
	}
	return out
}

// getTraces calls GetTraces for ids and returns the chunks.
func getTraces(t *testing.T, ctx context.Context, conn *grpc.ClientConn, ids ...pcommon.TraceID) ([]ptrace.Traces, error) {
	var req []byte
	for _, id := range ids {
		var q []byte
		q = protowire.AppendTag(q, 1, protowire.BytesType)
		q = protowire.AppendBytes(q, id[:])
		// Jaeger sends year 1 for an unset time.
		var ts []byte
		ts = protowire.AppendTag(ts, 1, protowire.VarintType)
		ts = protowire.AppendVarint(ts, uint64(time.Time{}.Unix()))
		q = protowire.AppendTag(q, 2, protowire.BytesType)
		q = protowire.AppendBytes(q, ts)
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, q)
	}
	st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/jaeger.storage.v2.TraceReader/GetTraces")
	if err != nil {
		return nil, err
	}
	if err := st.SendMsg(&otlpgrpc.Message{B: req}); err != nil {
		return nil, err
	}
	if err := st.CloseSend(); err != nil {
		return nil, err
	}
	var out []ptrace.Traces
	for {
		var m otlpgrpc.Message
		err := st.RecvMsg(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(slices.Clone(m.B))
		m.Release()
		if err != nil {
			t.Fatalf("chunk is not a TracesData: %v", err)
		}
		out = append(out, td)
	}
}

// TestTraceReader: GetServices, GetOperations and GetTraces answer what
// was written, as Jaeger's grpc storage client asks: one non-empty chunk
// per trace found, none for an unknown id; a tenant header selects the
// tenant, and one that is not a tenant name is InvalidArgument; search
// answers Unimplemented.
func TestTraceReader(t *testing.T) {
	body := synth.Traces(synth.Config{Seed: 4, Resources: 3, ScopesPerResource: 1, TotalRecords: 300})
	conn := serve(t, body)
	ctx := context.Background()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	services := map[string]bool{}
	byTrace := map[pcommon.TraceID]int{}
	var serverOps []string
	for _, rs := range req.Traces().ResourceSpans().All() {
		svc, _ := rs.Resource().Attributes().Get("service.name")
		services[svc.Str()] = true
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				byTrace[sp.TraceID()]++
				if svc.Str() == req.Traces().ResourceSpans().At(0).Resource().Attributes().AsRaw()["service.name"] && sp.Kind() == ptrace.SpanKindServer && !slices.Contains(serverOps, sp.Name()) {
					serverOps = append(serverOps, sp.Name())
				}
			}
		}
	}
	var out otlpgrpc.Message
	if err := conn.Invoke(ctx, "/jaeger.storage.v2.TraceReader/GetServices", &otlpgrpc.Message{}, &out); err != nil {
		t.Fatal(err)
	}
	got := strings1(t, out.B, 1)
	if want := slices.Sorted(func(yield func(string) bool) {
		for s := range services {
			if !yield(s) {
				return
			}
		}
	}); !slices.Equal(got, want) {
		t.Errorf("services %q, want %q", got, want)
	}

	first := req.Traces().ResourceSpans().At(0).Resource().Attributes().AsRaw()["service.name"].(string)
	var opReq []byte
	opReq = protowire.AppendTag(opReq, 1, protowire.BytesType)
	opReq = protowire.AppendString(opReq, first)
	opReq = protowire.AppendTag(opReq, 2, protowire.BytesType)
	opReq = protowire.AppendString(opReq, "server")
	if err := conn.Invoke(ctx, "/jaeger.storage.v2.TraceReader/GetOperations", &otlpgrpc.Message{B: opReq}, &out); err != nil {
		t.Fatal(err)
	}
	var gotOps []string
	for _, op := range strings1(t, out.B, 1) {
		name := strings1(t, []byte(op), 1)
		kind := strings1(t, []byte(op), 2)
		if len(kind) != 1 || kind[0] != "server" {
			t.Errorf("operation %q of kind %q, asked for server", name, kind)
		}
		gotOps = append(gotOps, name...)
	}
	slices.Sort(serverOps)
	if !slices.Equal(gotOps, serverOps) {
		t.Errorf("server operations of %s: %q, want %q", first, gotOps, serverOps)
	}

	var ids []pcommon.TraceID
	for id := range byTrace {
		if len(ids) < 5 {
			ids = append(ids, id)
		}
	}
	unknown := pcommon.TraceID{0xfe}
	chunks, err := getTraces(t, ctx, conn, append(ids, unknown)...)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != len(ids) {
		t.Fatalf("%d chunks for %d known ids and an unknown one", len(chunks), len(ids))
	}
	for i, td := range chunks {
		if td.SpanCount() != byTrace[ids[i]] || td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().Len() == 0 {
			t.Errorf("chunk %d: %d spans, want %d of trace %s, the first scope not empty", i, td.SpanCount(), byTrace[ids[i]], ids[i])
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if sp.TraceID() != ids[i] {
						t.Errorf("chunk %d holds a span of trace %s", i, sp.TraceID())
					}
				}
			}
		}
	}
	// Another tenant sees nothing.
	other := metadata.AppendToOutgoingContext(ctx, "x-tenant", "globex")
	if chunks, err := getTraces(t, other, conn, ids...); err != nil || len(chunks) != 0 {
		t.Errorf("tenant globex: %d chunks, %v", len(chunks), err)
	}
	if err := conn.Invoke(other, "/jaeger.storage.v2.TraceReader/GetServices", &otlpgrpc.Message{}, &out); err != nil || len(out.B) != 0 {
		t.Errorf("tenant globex services: %q, %v", out.B, err)
	}
	// A header that is not a tenant name is a bad argument (readapi's
	// kind table).
	bad := metadata.AppendToOutgoingContext(ctx, "x-tenant", "../globex")
	if err := conn.Invoke(bad, "/jaeger.storage.v2.TraceReader/GetServices", &otlpgrpc.Message{}, &out); status.Code(err) != codes.InvalidArgument {
		t.Errorf("tenant ../globex: %v, want InvalidArgument", err)
	}
	// FindTraceIDs of the first service: every trace with a span of it.
	want := map[pcommon.TraceID]bool{}
	for _, rs := range req.Traces().ResourceSpans().All() {
		svc, _ := rs.Resource().Attributes().Get("service.name")
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if svc.Str() == first {
					want[sp.TraceID()] = true
				}
			}
		}
	}
	var params, fq []byte
	params = protowire.AppendTag(params, 1, protowire.BytesType)
	params = protowire.AppendString(params, first)
	params = protowire.AppendTag(params, 8, protowire.VarintType)
	params = protowire.AppendVarint(params, 1000)
	fq = protowire.AppendTag(fq, 1, protowire.BytesType)
	fq = protowire.AppendBytes(fq, params)
	if err := conn.Invoke(ctx, "/jaeger.storage.v2.TraceReader/FindTraceIDs", &otlpgrpc.Message{B: fq}, &out); err != nil {
		t.Fatal(err)
	}
	found := strings1(t, out.B, 1)
	if len(found) != len(want) {
		t.Errorf("FindTraceIDs of %s: %d traces, want %d", first, len(found), len(want))
	}
	for _, f := range found {
		ids := strings1(t, []byte(f), 1)
		if len(ids) != 1 || !want[pcommon.TraceID([]byte(ids[0]))] {
			t.Errorf("FindTraceIDs found %x, not a trace of %s", ids, first)
		}
	}
	if err := conn.Invoke(ctx, "/jaeger.storage.v2.TraceReader/FindTraceIDs", &otlpgrpc.Message{B: []byte{0x0a, 0x05}}, &out); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a malformed FindTraceIDs request: %v, want InvalidArgument", err)
	}
}

// TestLargeTraceChunks: a trace over Jaeger's 4 MiB message limit comes
// in consecutive chunks under it (3 MiB as sent), each with a span in its first
// scope, that together hold every span once; with a small trace next to it
// in one GetTraces, each trace's chunks are its own.
func TestLargeTraceChunks(t *testing.T) {
	td := ptrace.NewTraces()
	big := pcommon.TraceID{0xb1, 15: 1}
	small := pcommon.TraceID{0x51, 15: 2}
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "bulky")
	ss := rs.ScopeSpans().AppendEmpty()
	pad := strings.Repeat("x", 4000)
	start := time.Now().Add(-time.Minute)
	for i := range 2000 {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(big)
		sp.SetSpanID(pcommon.SpanID{byte(i >> 8), byte(i), 1})
		sp.SetName("step")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		sp.Attributes().PutStr("pad", fmt.Sprint(i, pad))
	}
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(small)
	sp.SetSpanID(pcommon.SpanID{9})
	sp.SetName("tiny")
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	conn := serve(t, body)
	chunks, err := getTraces(t, context.Background(), conn, big, small)
	if err != nil {
		t.Fatal(err)
	}
	spans := map[pcommon.TraceID]map[pcommon.SpanID]int{big: {}, small: {}}
	var order []pcommon.TraceID
	for _, c := range chunks {
		if n := (&ptrace.ProtoMarshaler{}).TracesSize(c); n >= 4<<20 {
			t.Errorf("a chunk of %d bytes: over Jaeger's limit", n)
		}
		first := c.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0) // panics if empty, as Jaeger would
		if len(order) == 0 || order[len(order)-1] != first.TraceID() {
			order = append(order, first.TraceID())
		}
		for _, rs := range c.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if sp.TraceID() != first.TraceID() {
						t.Fatalf("a chunk mixes traces %s and %s", first.TraceID(), sp.TraceID())
					}
					spans[sp.TraceID()][sp.SpanID()]++
				}
			}
		}
	}
	if len(chunks) < 3 || !slices.Equal(order, []pcommon.TraceID{big, small}) {
		t.Errorf("%d chunks, traces in the order %v", len(chunks), order)
	}
	if len(spans[big]) != 2000 || len(spans[small]) != 1 {
		t.Errorf("%d and %d distinct spans, want 2000 and 1", len(spans[big]), len(spans[small]))
	}
	for _, m := range spans {
		for id, n := range m {
			if n != 1 {
				t.Errorf("span %s came %d times", id, n)
			}
		}
	}
}
