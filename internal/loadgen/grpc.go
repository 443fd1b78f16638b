package loadgen

import (
	"context"
	"fmt"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/otlpwire"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// grpcSender sends pre-encoded requests with the pass-through codec, so the
// client spends no time marshalling.
type grpcSender struct {
	conn   *grpc.ClientConn
	method string
	bodies [][]byte
	opts   []grpc.CallOption
}

func newGRPCSender(cfg Config, bodies [][]byte) (*grpcSender, error) {
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	conn, err := grpc.NewClient(cfg.Endpoint,
		grpc.WithTransportCredentials(creds),
		otlpgrpc.DialOption(),
		// Static windows, as the server uses: no BDP pings.
		grpc.WithInitialWindowSize(4<<20),
		grpc.WithInitialConnWindowSize(16<<20),
	)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", cfg.Endpoint, err)
	}
	s := &grpcSender{conn: conn, method: cfg.Signal.ExportMethod(), bodies: bodies}
	if cfg.Compression != "none" {
		s.opts = append(s.opts, grpc.UseCompressor(cfg.Compression))
	}
	if cfg.BearerToken != "" {
		s.opts = append(s.opts, grpc.PerRPCCredentials(bearerCreds{"Bearer " + cfg.BearerToken}))
	}
	return s, nil
}

// bearerCreds sends an authorization metadata value with every call, with
// or without TLS (the server decides whether that is acceptable).
type bearerCreds struct{ authorization string }

func (c bearerCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": c.authorization}, nil
}

func (bearerCreds) RequireTransportSecurity() bool { return false }

func (s *grpcSender) send(ctx context.Context, n int64) (int64, int64, string, bool) {
	b := s.bodies[n%int64(len(s.bodies))]
	in := otlpgrpc.Message{B: b}
	var out otlpgrpc.Message
	err := s.conn.Invoke(ctx, s.method, &in, &out, s.opts...)
	defer out.Release()
	if err != nil {
		st := status.Convert(err)
		// A status from the server is a response; Unavailable and
		// DeadlineExceeded from the client side may not be, but they
		// are rare enough that counting their latency does not matter.
		return 0, int64(len(b)), st.Code().String(), true
	}
	return partialRejected(out.B), int64(len(b)), "", true
}

func (s *grpcSender) close() error { return s.conn.Close() }

// partialRejected reads partial_success.rejected_* of an
// Export*ServiceResponse; malformed responses count as 0.
func partialRejected(b []byte) int64 {
	n, _, err := otlpwire.ExportResponse(b).PartialSuccess()
	if err != nil {
		return 0
	}
	return n
}
