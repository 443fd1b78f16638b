package receiver

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/experimental"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Message is an OTLP message kept as protobuf bytes, the only type Codec
// handles. A Message that Codec filled must be released with Release once
// its bytes are no longer used.
type Message struct {
	// B is the message in protobuf wire format. After Codec.Unmarshal it
	// aliases gRPC's receive buffer or a pooled buffer, valid until
	// Release.
	B []byte

	held       mem.Buffer   // gRPC buffer B aliases, if any
	buf        *buffer      // pooled buffer B aliases, if any
	res        *reservation // the call's share of the in-flight budget
	overBudget bool
}

// Release gives back the buffers B aliases; B must not be used after.
func (m *Message) Release() {
	if m.held != nil {
		m.held.Free()
		m.held = nil
	}
	putBuffer(m.buf)
	m.buf = nil
	if m.res != nil {
		m.res.release()
		m.res = nil
	}
	m.B = nil
}

// Codec is a gRPC codec (registered as "proto", the name OTLP clients use)
// that passes messages through as bytes instead of (un)marshalling
// generated structs. Install it on a server with grpc.ForceServerCodecV2 and
// on a client with grpc.ForceCodecV2; it handles *Message only.
type Codec struct{}

// Name is "proto".
func (Codec) Name() string { return "proto" }

// Marshal returns m.B without copying; m must stay unchanged until the
// call that sends it returns.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*Message)
	if !ok {
		return nil, fmt.Errorf("wirehouse codec: cannot marshal %T", v)
	}
	if len(m.B) == 0 {
		return nil, nil
	}
	return mem.BufferSlice{mem.SliceBuffer(m.B)}, nil
}

// Unmarshal makes v.(*Message).B the message bytes: a message that arrived
// in one buffer is referenced without copying, one spread over several
// buffers is copied into a pooled buffer.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*Message)
	if !ok {
		return fmt.Errorf("wirehouse codec: cannot unmarshal into %T", v)
	}
	n := data.Len()
	if m.res != nil && !m.res.grow(int64(n)) {
		m.overBudget = true
		return nil
	}
	switch len(data) {
	case 0:
		m.B = nil
	case 1:
		data[0].Ref()
		m.held = data[0]
		m.B = data[0].ReadOnlyData()
	default:
		m.buf = getBuffer()
		if cap(m.buf.b) < n {
			m.buf.b = make([]byte, n)
		}
		m.B = m.buf.b[:n]
		data.CopyTo(m.B)
	}
	return nil
}

var messagePool = sync.Pool{New: func() any { return new(Message) }}

func (r *Receiver) newGRPCServer() *grpc.Server {
	opts := []grpc.ServerOption{
		grpc.ForceServerCodecV2(Codec{}),
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
	for sig := range numSignals {
		if len(r.sinks.of(sig)) == 0 {
			continue
		}
		s.RegisterService(&grpc.ServiceDesc{
			ServiceName: signals[sig].service,
			HandlerType: (*any)(nil),
			Methods: []grpc.MethodDesc{{
				MethodName: "Export",
				Handler:    r.grpcHandler(sig),
			}},
			Metadata: "opentelemetry/proto/collector/" + signals[sig].name + "/v1/" + signals[sig].name + "_service.proto",
		}, struct{}{})
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
		var rerr *Error
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
	res := &reservation{b: &r.budget}
	if !res.prepay(n) {
		return ctx, r.grpcStatus(refuse(KindOverloaded, "server busy: %v, retry later", errOverBudget))
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
func (r *Receiver) grpcHandler(sig Signal) grpc.MethodHandler {
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

var emptyResponse = &Message{}

func (r *Receiver) exportGRPC(ctx context.Context, sig Signal, dec func(any) error) (any, error) {
	start := time.Now()
	in := messagePool.Get().(*Message)
	res, ok := ctx.Value(callReservation{}).(*reservation)
	if !ok {
		res = &reservation{b: &r.budget}
	}
	in.res = res
	defer func() {
		in.Release()
		in.overBudget = false
		messagePool.Put(in)
	}()
	if err := dec(in); err != nil {
		rerr := refuse(KindBadData, "read request: %v", err)
		if s, ok := status.FromError(err); ok && s.Code() == codes.ResourceExhausted {
			rerr = refuse(KindTooLarge, "read request: %s", s.Message())
		}
		r.finish(sig, transportGRPC, start, -1, 0, Outcome{}, rerr)
		return nil, err
	}
	if in.overBudget {
		rerr := refuse(KindOverloaded, "server busy: %v, retry later", errOverBudget)
		r.finish(sig, transportGRPC, start, -1, 0, Outcome{}, rerr)
		return nil, r.grpcStatus(rerr)
	}
	in.res.trim() // what the message did not need
	out, records, rerr := r.consume(ctx, sig, transportGRPC, in.B, in.res)
	r.finish(sig, transportGRPC, start, len(in.B), records, out, rerr)
	if rerr != nil {
		return nil, r.grpcStatus(rerr)
	}
	if out.Rejected == 0 && out.Message == "" {
		return emptyResponse, nil
	}
	return &Message{B: appendResponse(nil, out)}, nil
}

// grpcStatus is the gRPC status for e, with RetryInfo when retryable.
func (r *Receiver) grpcStatus(e *Error) error {
	st := status.New(e.Kind.GRPCCode(), e.Error())
	if e.Kind.Retryable() {
		if ds, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(r.cfg.RetryAfter)}); err == nil {
			st = ds
		}
	}
	return st.Err()
}
