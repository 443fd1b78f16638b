// Package otlpgrpc carries OTLP export requests and responses over gRPC as
// protobuf bytes, without generated structs: a pass-through codec, the
// message type it fills, the service description a server registers and
// the call a client makes.
//
// The receiver serves with it, and the load generator, the gRPC echo tool
// and the forwarder call with it, so none of them imports the others.
package otlpgrpc

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Budget admits the bytes of a message before Codec keeps them. Grow
// reserves n more bytes and reports whether they fit.
type Budget interface {
	Grow(n int64) bool
}

// Message is an OTLP message kept as protobuf bytes, the only type Codec
// handles. A Message that Codec filled must be released with Release once
// its bytes are no longer used.
type Message struct {
	// B is the message in protobuf wire format. After Codec.Unmarshal it
	// aliases gRPC's receive buffer or a pooled buffer, valid until
	// Release; to send, set it to bytes that stay unchanged until the
	// call returns.
	B []byte
	// Budget, when set before Unmarshal, must admit the message's size;
	// if it does not, Unmarshal keeps nothing, leaves B nil and sets
	// OverBudget.
	Budget     Budget
	OverBudget bool

	held mem.Buffer // gRPC buffer B aliases, if any
	buf  *buffer    // pooled buffer B aliases, if any
}

// Release gives back the buffers B aliases and sets B to nil. It leaves
// Budget and OverBudget as they are.
func (m *Message) Release() {
	if m.held != nil {
		m.held.Free()
		m.held = nil
	}
	putBuffer(m.buf)
	m.buf = nil
	m.B = nil
}

type buffer struct{ b []byte }

// maxPooledCap bounds the buffers kept for reuse, so one huge message does
// not pin its memory.
const maxPooledCap = 4 << 20

var bufferPool = sync.Pool{New: func() any { return new(buffer) }}

func putBuffer(b *buffer) {
	if b == nil || cap(b.b) > maxPooledCap {
		return
	}
	b.b = b.b[:0]
	bufferPool.Put(b)
}

// Codec is a gRPC codec (registered as "proto", the name OTLP clients
// use) that passes messages through as bytes instead of (un)marshalling
// generated structs. Install it with ServerOption or DialOption; it
// handles *Message only.
type Codec struct{}

// Name is "proto".
func (Codec) Name() string { return "proto" }

// Marshal returns m.B without copying; m must stay unchanged until the
// call that sends it returns.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*Message)
	if !ok {
		return nil, fmt.Errorf("otlpgrpc codec: cannot marshal %T", v)
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
		return fmt.Errorf("otlpgrpc codec: cannot unmarshal into %T", v)
	}
	n := data.Len()
	if m.Budget != nil && !m.Budget.Grow(int64(n)) {
		m.OverBudget = true
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
		m.buf = bufferPool.Get().(*buffer)
		if cap(m.buf.b) < n {
			m.buf.b = make([]byte, n)
		}
		m.B = m.buf.b[:n]
		data.CopyTo(m.B)
	}
	return nil
}

// ServerOption makes a gRPC server use Codec for every message.
func ServerOption() grpc.ServerOption { return grpc.ForceServerCodecV2(Codec{}) }

// DialOption makes every call on a client connection use Codec.
func DialOption() grpc.DialOption {
	return grpc.WithDefaultCallOptions(grpc.ForceCodecV2(Codec{}))
}

// ServiceDesc describes sig's OTLP gRPC service with its one method,
// Export, served by export, for grpc.Server.RegisterService with any
// non-nil implementation (the handler ignores it).
func ServiceDesc(sig otlpwire.Signal, export grpc.MethodHandler) *grpc.ServiceDesc {
	name := sig.String()
	if sig == otlpwire.SignalTraces {
		name = "trace" // opentelemetry/proto/collector/trace/v1/trace_service.proto
	}
	return &grpc.ServiceDesc{
		ServiceName: sig.ServiceName(),
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "Export", Handler: export}},
		Metadata:    "opentelemetry/proto/collector/" + name + "/v1/" + name + "_service.proto",
	}
}

// Export sends body, an export request of signal sig, on conn with Codec
// and returns the response's bytes, which the caller owns. Without
// DialOption on conn, pass grpc.ForceCodecV2(Codec{}) in opts.
func Export(ctx context.Context, conn grpc.ClientConnInterface, sig otlpwire.Signal, body []byte, opts ...grpc.CallOption) ([]byte, error) {
	in := Message{B: body}
	var out Message
	if err := conn.Invoke(ctx, sig.ExportMethod(), &in, &out, opts...); err != nil {
		out.Release()
		return nil, err
	}
	resp := append([]byte(nil), out.B...)
	out.Release()
	return resp, nil
}
