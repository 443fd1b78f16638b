package otlpgrpc_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// budget admits up to max bytes in all.
type budget struct{ used, max int64 }

func (b *budget) Grow(n int64) bool { return atomic.AddInt64(&b.used, n) <= b.max }

// serve starts a gRPC server with the codec that answers every Export
// with a partial success whose rejected count is the request's record
// count, so a client can tell that its bytes arrived whole.
func serve(t *testing.T, maxBytes int64) string {
	t.Helper()
	s := grpc.NewServer(otlpgrpc.ServerOption())
	for _, sig := range otlpwire.Signals {
		s.RegisterService(otlpgrpc.ServiceDesc(sig, func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := otlpgrpc.Message{Budget: &budget{max: maxBytes}}
			if err := dec(&in); err != nil {
				return nil, err
			}
			defer in.Release()
			if in.OverBudget {
				return nil, status.Error(codes.ResourceExhausted, "over budget")
			}
			n, err := sig.Count(in.B)
			if err != nil {
				return nil, status.Error(codes.InvalidArgument, err.Error())
			}
			ps := protowire.AppendTag(nil, 1, protowire.VarintType)
			ps = protowire.AppendVarint(ps, uint64(n))
			resp := protowire.AppendTag(nil, 1, protowire.BytesType)
			return &otlpgrpc.Message{B: protowire.AppendBytes(resp, ps)}, nil
		}), struct{}{})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return ln.Addr().String()
}

func TestExport(t *testing.T) {
	addr := serve(t, 64<<20)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), otlpgrpc.DialOption())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, sig := range otlpwire.Signals {
		t.Run(sig.String(), func(t *testing.T) {
			// Large enough that gRPC delivers it in several buffers.
			body := synth.Generate(sig, synth.Config{Seed: 1, Resources: 4, ScopesPerResource: 2, TotalRecords: 2000})
			resp, err := otlpgrpc.Export(context.Background(), conn, sig, body)
			if err != nil {
				t.Fatal(err)
			}
			if got := rejected(resp); got != 2000 {
				t.Errorf("the server counted %d records, want 2000 (%d bytes sent)", got, len(body))
			}
		})
	}

	// A client built on the generated structs talks to the same server.
	pc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	req := plogotlp.NewExportRequestFromLogs(plog.NewLogs())
	req.Logs().ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("hello")
	resp, err := plogotlp.NewGRPCClient(pc).Export(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.PartialSuccess().RejectedLogRecords(); got != 1 {
		t.Errorf("pdata client: the server counted %d records, want 1", got)
	}
}

func TestBudget(t *testing.T) {
	addr := serve(t, 1000)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), otlpgrpc.DialOption())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 100})
	_, err = otlpgrpc.Export(context.Background(), conn, otlpwire.SignalLogs, body)
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a %d-byte request over a 1000-byte budget: %v", len(body), err)
	}
	if _, err := otlpgrpc.Export(context.Background(), conn, otlpwire.SignalLogs, body[:200]); status.Code(err) != codes.InvalidArgument {
		t.Errorf("a truncated request: %v, want InvalidArgument", err)
	}
}

func TestCodecTypes(t *testing.T) {
	if _, err := (otlpgrpc.Codec{}).Marshal("not a message"); err == nil {
		t.Error("Marshal accepted a string")
	}
	if err := (otlpgrpc.Codec{}).Unmarshal(nil, new(int)); err == nil {
		t.Error("Unmarshal accepted an *int")
	}
}

// rejected reads partial_success.rejected_* of an export response.
func rejected(b []byte) uint64 {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0
		}
		b = b[n:]
		if num == 1 && typ == protowire.BytesType {
			ps, _ := protowire.ConsumeBytes(b)
			_, _, m := protowire.ConsumeTag(ps)
			if m < 0 {
				return 0
			}
			v, _ := protowire.ConsumeVarint(ps[m:])
			return v
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return 0
		}
		b = b[m:]
	}
	return 0
}
