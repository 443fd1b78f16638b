package receiver

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/types/known/durationpb"
)

var messagePool = sync.Pool{New: func() any { return new(otlpgrpc.Message) }}

func (r *Receiver) newGRPCServer() *grpc.Server {
	opts := []grpc.ServerOption{
		otlpgrpc.ServerOption(),
		grpc.MaxRecvMsgSize(int(r.cfg.MaxGRPCMessageBytes)),
		grpc.StatsHandler(callEnd{}),
		grpc.MaxConcurrentStreams(r.cfg.MaxConcurrentStreams),
		grpc.ConnectionTimeout(r.cfg.ReadHeaderTimeout),
		grpc.InTapHandle(r.tap),
		// Static flow-control windows turn off gRPC's BDP estimator,
		// whose pings and window updates cost a second write syscall
		// per small request; 4 MiB per stream and 16 MiB per connection
		// keep large requests flowing without waiting for updates.
		grpc.InitialWindowSize(4 << 20),
		grpc.InitialConnWindowSize(16 << 20),
		// Reuse handler goroutines (and their grown stacks) instead of
		// starting one per call.
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
		experimental.BufferPool(&framePool{}),
	}
	if r.cfg.GRPCTLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(r.cfg.GRPCTLS)))
	}
	s := grpc.NewServer(opts...)
	for _, sig := range otlpwire.Signals {
		if len(r.sinks.Of(sig)) > 0 {
			s.RegisterService(otlpgrpc.ServiceDesc(sig, r.grpcHandler(sig)), struct{}{})
		}
	}
	return s
}

// tap refuses a new call before its message is read when the in-flight
// budget is already spent.
func (r *Receiver) tap(ctx context.Context, info *tap.Info) (context.Context, error) {
	if r.auth != nil {
		var authorization string
		if v := info.Header.Get("authorization"); len(v) > 0 {
			authorization = v[0]
		}
		sig, ok := signalOfMethod(info.FullMethodName)
		if !ok {
			return ctx, status.Error(codes.Unimplemented, "unknown method") // what grpc-go answers anyway
		}
		var rerr *pipeline.Error
		if ctx, rerr = r.authenticate(ctx, sig, transportGRPC, authorization); rerr != nil {
			return ctx, r.grpcStatus(rerr)
		}
	}
	// gRPC reads a call's whole message before the handler runs, so the
	// most it may hold is reserved now: the largest message, twice for a
	// compressed one (compressed and decompressed at once). The handler
	// gives back what the message did not need; callEnd releases the rest
	// when the call ends, whether or not the handler ran.
	n := r.cfg.MaxGRPCMessageBytes
	if enc := info.Header.Get("grpc-encoding"); len(enc) > 0 && enc[0] != "identity" {
		n = min(2*n, r.budget.max)
	}
	res := new(reservation)
	*res = r.reservationFor(ctx)
	if !res.prepay(n) {
		return ctx, r.grpcStatus(overBudget(res, errOverBudget))
	}
	return context.WithValue(ctx, callReservation{}, res), nil
}

// callReservation is the context key of a gRPC call's *reservation.
type callReservation struct{}

// callEnd is a gRPC stats handler that releases a call's reservation
// when the call ends.
type callEnd struct{}

func (callEnd) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (callEnd) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (callEnd) HandleConn(context.Context, stats.ConnStats)                       {}

func (callEnd) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if _, ok := s.(*stats.End); !ok {
		return
	}
	if res, ok := ctx.Value(callReservation{}).(*reservation); ok {
		res.release()
	}
}

// grpcHandler serves Export for sig.
func (r *Receiver) grpcHandler(sig otlpwire.Signal) grpc.MethodHandler {
	return func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		if interceptor != nil {
			info := &grpc.UnaryServerInfo{FullMethod: sig.ExportMethod()}
			return interceptor(ctx, nil, info, func(ctx context.Context, _ any) (any, error) {
				return r.exportGRPC(ctx, sig, dec)
			})
		}
		return r.exportGRPC(ctx, sig, dec)
	}
}

var emptyResponse = &otlpgrpc.Message{}

func (r *Receiver) exportGRPC(ctx context.Context, sig otlpwire.Signal, dec func(any) error) (any, error) {
	start := time.Now()
	in := messagePool.Get().(*otlpgrpc.Message)
	res, ok := ctx.Value(callReservation{}).(*reservation)
	if !ok {
		res = new(reservation)
		*res = r.reservationFor(ctx)
	}
	in.Budget = res
	defer func() {
		in.Release()
		res.release()
		in.Budget, in.OverBudget = nil, false
		messagePool.Put(in)
	}()
	if err := dec(in); err != nil {
		rerr := pipeline.Refuse(pipeline.KindBadData, "read request: %v", err)
		if s, ok := status.FromError(err); ok && s.Code() == codes.ResourceExhausted {
			rerr = pipeline.Refuse(pipeline.KindTooLarge, "read request: %s", s.Message())
		}
		r.finish(sig, transportGRPC, start, -1, 0, pipeline.Outcome{}, rerr)
		return nil, err
	}
	if in.OverBudget {
		rerr := pipeline.Refuse(pipeline.KindOverloaded, "server busy: %v, retry later", errOverBudget)
		r.finish(sig, transportGRPC, start, -1, 0, pipeline.Outcome{}, rerr)
		return nil, r.grpcStatus(rerr)
	}
	res.trim() // what the message did not need
	out, records, rerr := r.consume(ctx, sig, transportGRPC, in.B, res)
	r.finish(sig, transportGRPC, start, len(in.B), records, out, rerr)
	if rerr != nil {
		return nil, r.grpcStatus(rerr)
	}
	if out.Rejected == 0 && out.Message == "" {
		return emptyResponse, nil
	}
	return &otlpgrpc.Message{B: appendResponse(nil, out)}, nil
}

// grpcStatus is the gRPC status for e, with RetryInfo when retryable.
func (r *Receiver) grpcStatus(e *pipeline.Error) error {
	st := status.New(e.Kind.GRPCCode(), e.Error())
	if e.Kind.Retryable() {
		if ds, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(r.retryAfter(e))}); err == nil {
			st = ds
		}
	}
	return st.Err()
}
