package jaegerstorage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/tracemetrics"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Config configures a Server.
type Config struct {
	// Reader reads the lake. It must be set.
	Reader *lakeread.Reader
	// Tenant is the tenant of a call without a tenant header: the
	// lake's default tenant.
	Tenant string
	// TenantHeader is the gRPC metadata key a call's tenant comes in,
	// as Jaeger's multi_tenancy forwards it. Default "x-tenant".
	TenantHeader string
	// Auth, if set, requires a known token on every call, which then
	// reads its token's tenant alone (see the package doc). Default
	// none: a call reads the tenant its TenantHeader names.
	Auth Authenticator
	// Gate, if set, admits every call into the query budget (after its
	// tenant is known): a call it cannot take now is ResourceExhausted
	// with a RetryInfo, and the call's ticket is in the context of the
	// reads, which charge it.
	Gate *querybudget.Gate
	// MaxTraces bounds the traces one search returns, whatever its
	// limit, and Timeout a call's run (readapi.Limits); defaults
	// readapi.DefaultLimits'.
	MaxTraces int
	Timeout   time.Duration
	// Logger gets a line per failed call. Default slog.Default().
	Logger *slog.Logger
	// Dependencies, if set, answers GetDependencies: a tenant's calls
	// between services over a window (tracemetrics.Dependencies). By
	// default the answer is empty.
	Dependencies func(ctx context.Context, tenant string, start, end time.Time) ([]tracemetrics.Dependency, error)
}

// DefaultConfig returns the defaults, without a Reader.
func DefaultConfig() Config {
	l := readapi.DefaultLimits()
	return Config{TenantHeader: "x-tenant", MaxTraces: l.MaxTraces, Timeout: l.Timeout}
}

// Validate reports the first field of c that Register would refuse.
func (c Config) Validate() error {
	switch {
	case c.Reader == nil:
		return errors.New("jaegerstorage: Reader not set")
	case c.TenantHeader == "":
		return errors.New("jaegerstorage: TenantHeader empty")
	case c.MaxTraces <= 0 || c.Timeout <= 0:
		return fmt.Errorf("jaegerstorage: MaxTraces %d and Timeout %v must be positive", c.MaxTraces, c.Timeout)
	case !tenant.Valid(c.Tenant):
		return fmt.Errorf("jaegerstorage: Tenant %q is not a valid tenant name", c.Tenant)
	}
	return nil
}

// Register registers the TraceReader and DependencyReader services on s,
// which must use otlpgrpc's codec (otlpgrpc.ServerOption).
func Register(s *grpc.Server, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &handler{cfg: cfg}
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "jaeger.storage.v2.TraceReader",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			{MethodName: "GetServices", Handler: h.unary(h.getServices)},
			{MethodName: "GetOperations", Handler: h.unary(h.getOperations)},
			{MethodName: "FindTraceIDs", Handler: h.unary(h.findTraceIDs)},
		},
		Streams: []grpc.StreamDesc{
			{StreamName: "GetTraces", Handler: h.stream(h.getTraces), ServerStreams: true},
			{StreamName: "FindTraces", Handler: h.stream(h.findTraces), ServerStreams: true},
		},
		Metadata: "storage/v2/trace_storage.proto",
	}, struct{}{})
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "jaeger.storage.v2.DependencyReader",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "GetDependencies", Handler: h.unary(h.getDependencies)}},
		Metadata:    "storage/v2/dependency_storage.proto",
	}, struct{}{})
	return nil
}

type handler struct{ cfg Config }

// unary adapts fn, from the call's tenant and request's bytes to a
// response's, to a gRPC method handler; a call refused by tenantOf is not
// read.
func (h *handler) unary(fn func(ctx context.Context, tenant string, req []byte) ([]byte, error)) grpc.MethodHandler {
	return func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		t, err := h.tenantOf(ctx)
		if err != nil {
			return nil, err
		}
		tk, err := h.cfg.Gate.Admit(ctx, t)
		if err != nil {
			return nil, h.status(ctx, err)
		}
		defer tk.Done()
		ctx, cancel := context.WithTimeout(querybudget.NewContext(ctx, tk), h.cfg.Timeout)
		defer cancel()
		var in otlpgrpc.Message
		if err := dec(&in); err != nil {
			return nil, err
		}
		defer in.Release()
		out, err := fn(ctx, t, in.B)
		if err != nil {
			return nil, h.status(ctx, err)
		}
		return &otlpgrpc.Message{B: out}, nil
	}
}

// status is the gRPC status of err: a status as it is; InvalidArgument
// for a malformed request; else the code of err's kind (readapi.Classify:
// ResourceExhausted past a limit, or with a RetryInfo when the query
// budget cannot take the call now; DeadlineExceeded, Canceled), the
// context's code when it ended, else Internal (logged).
func (h *handler) status(ctx context.Context, err error) error {
	var bad badRequest
	var be *querybudget.BusyError
	switch k := readapi.Classify(err); {
	case status.Code(err) != codes.Unknown:
		return err
	case errors.As(err, &bad):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.As(err, &be):
		st, derr := status.New(k.GRPCCode(), err.Error()).WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(be.RetryAfter)})
		if derr != nil {
			return status.Error(k.GRPCCode(), err.Error())
		}
		return st.Err()
	case k != readapi.KindInternal:
		return status.Error(k.GRPCCode(), err.Error())
	case ctx.Err() != nil:
		return status.FromContextError(ctx.Err()).Err()
	}
	h.cfg.Logger.Error("jaeger storage call failed", "err", err)
	return status.Error(codes.Internal, err.Error())
}

// stream adapts fn, given the call's tenant, to a gRPC stream handler; a
// call refused by tenantOf is not read.
func (h *handler) stream(fn func(stream grpc.ServerStream, tenant string) error) grpc.StreamHandler {
	return func(_ any, stream grpc.ServerStream) error {
		t, err := h.tenantOf(stream.Context())
		if err != nil {
			return err
		}
		tk, err := h.cfg.Gate.Admit(stream.Context(), t)
		if err != nil {
			return h.status(stream.Context(), err)
		}
		defer tk.Done()
		ctx, cancel := context.WithTimeout(querybudget.NewContext(stream.Context(), tk), h.cfg.Timeout)
		defer cancel()
		return fn(ticketStream{stream, ctx}, t)
	}
}

// ticketStream is a server stream whose context carries the call's
// query budget ticket.
type ticketStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s ticketStream) Context() context.Context { return s.ctx }

// badRequest is a malformed request message.
type badRequest struct{ err error }

func (b badRequest) Error() string { return "malformed request: " + b.err.Error() }
func (b badRequest) Unwrap() error { return b.err }

// getServices answers GetServicesRequest{} with GetServicesResponse
// {repeated string services = 1}.
func (h *handler) getServices(ctx context.Context, t string, _ []byte) ([]byte, error) {
	svcs, err := h.cfg.Reader.Services(ctx, t, time.Time{}, time.Time{})
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, s := range svcs {
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendString(out, s)
	}
	return out, nil
}

// Jaeger's span kind names (lowercase; "" for unspecified) by ours.
var jaegerKinds = map[string]string{
	"SPAN_KIND_UNSPECIFIED": "", "SPAN_KIND_INTERNAL": "internal", "SPAN_KIND_SERVER": "server",
	"SPAN_KIND_CLIENT": "client", "SPAN_KIND_PRODUCER": "producer", "SPAN_KIND_CONSUMER": "consumer",
}

// getOperations answers GetOperationsRequest{string service = 1; string
// span_kind = 2} with GetOperationsResponse{repeated Operation operations
// = 1}, Operation{string name = 1; string span_kind = 2}.
func (h *handler) getOperations(ctx context.Context, t string, req []byte) ([]byte, error) {
	var service, kind string
	err := eachField(req, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			service = string(v)
		case num == 2 && typ == protowire.BytesType:
			kind = string(v)
		}
		return nil
	})
	if err != nil {
		return nil, badRequest{err}
	}
	ops, err := h.cfg.Reader.Operations(ctx, t, service, "", time.Time{}, time.Time{})
	if err != nil {
		return nil, err
	}
	var out, op []byte
	for _, o := range ops {
		jk := jaegerKinds[o.Kind]
		if kind != "" && jk != kind {
			continue
		}
		op = protowire.AppendTag(op[:0], 1, protowire.BytesType)
		op = protowire.AppendString(op, o.Name)
		if jk != "" {
			op = protowire.AppendTag(op, 2, protowire.BytesType)
			op = protowire.AppendString(op, jk)
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, op)
	}
	return out, nil
}

// getDependencies answers GetDependenciesRequest{Timestamp start_time =
// 1; Timestamp end_time = 2} with GetDependenciesResponse{repeated
// Dependency dependencies = 1}, Dependency{string parent = 1; string
// child = 2; uint64 call_count = 3}.
func (h *handler) getDependencies(ctx context.Context, t string, req []byte) ([]byte, error) {
	var start, end time.Time
	err := eachField(req, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType || (num != 1 && num != 2) {
			return nil
		}
		ts, err := timestamp(v)
		if err != nil {
			return err
		}
		if num == 1 {
			start = ts
		} else {
			end = ts
		}
		return nil
	})
	if err != nil {
		return nil, badRequest{err}
	}
	if h.cfg.Dependencies == nil {
		return nil, nil
	}
	deps, err := h.cfg.Dependencies(ctx, t, start, end)
	if err != nil {
		return nil, err
	}
	var out, d []byte
	for _, dep := range deps {
		d = protowire.AppendString(protowire.AppendTag(d[:0], 1, protowire.BytesType), dep.Parent)
		d = protowire.AppendString(protowire.AppendTag(d, 2, protowire.BytesType), dep.Child)
		d = protowire.AppendVarint(protowire.AppendTag(d, 3, protowire.VarintType), dep.CallCount)
		out = protowire.AppendBytes(protowire.AppendTag(out, 1, protowire.BytesType), d)
	}
	return out, nil
}

// getTraces answers GetTracesRequest{repeated GetTraceParams query = 1},
// GetTraceParams{bytes trace_id = 1; Timestamp start_time = 2; Timestamp
// end_time = 3}, with a stream of TracesData: one per trace found, none
// for one not found.
func (h *handler) getTraces(stream grpc.ServerStream, t string) error {
	ctx := stream.Context()
	var in otlpgrpc.Message
	if err := stream.RecvMsg(&in); err != nil {
		return err
	}
	defer in.Release()
	qs, err := traceQueries(in.B)
	if err != nil {
		return h.status(ctx, badRequest{err})
	}
	if len(qs) == 0 {
		return nil
	}
	// One walk over the files for every id, within one read budget, in
	// the hours that cover every query's range (open if one is open).
	ids := make([][16]byte, len(qs))
	start, end := qs[0].start, qs[0].end
	for i, q := range qs {
		ids[i] = q.id
		if start.IsZero() || q.start.IsZero() {
			start = time.Time{}
		} else if q.start.Before(start) {
			start = q.start
		}
		if end.IsZero() || q.end.IsZero() {
			end = time.Time{}
		} else if q.end.After(end) {
			end = q.end
		}
	}
	all, _, err := h.cfg.Reader.Traces(ctx, t, ids, start, end)
	if err != nil {
		return h.status(ctx, err)
	}
	for _, spans := range all {
		if err := sendTrace(stream, spans); err != nil {
			return h.status(ctx, err)
		}
	}
	return nil
}

// maxChunk bounds the TracesData messages sent: Jaeger's client takes
// grpc-go's default of 4 MiB a message and cannot be told otherwise.
const maxChunk = 3 << 20

// sendTrace sends the spans of one trace as TracesData chunks of at most
// maxChunk bytes (consecutive chunks of one trace, which Jaeger joins),
// none for no spans: an empty chunk, or one whose first scope has no
// span, would crash Jaeger's aggregator.
func sendTrace(stream grpc.ServerStream, spans *lakeread.Spans) error {
	if spans.Len() == 0 {
		return nil
	}
	b, err := spans.AppendProto(nil)
	if err != nil {
		return err
	}
	if len(b) <= maxChunk {
		return stream.SendMsg(&otlpgrpc.Message{B: b})
	}
	split, err := otlpwire.NewSplitter(otlpwire.WithMaxBytes(maxChunk))
	if err != nil {
		return err
	}
	for part, err := range split.SplitTraces(otlpwire.TracesRequest(b)) {
		if err != nil {
			return err
		}
		if err := stream.SendMsg(&otlpgrpc.Message{B: append([]byte(nil), part...)}); err != nil {
			return err
		}
	}
	return nil
}

// traceQuery is a GetTraceParams{bytes trace_id = 1; Timestamp start_time
// = 2; Timestamp end_time = 3}.
type traceQuery struct {
	id         [16]byte
	start, end time.Time
}

// traceQueries reads a GetTracesRequest{repeated GetTraceParams query =
// 1}.
func traceQueries(b []byte) ([]traceQuery, error) {
	var qs []traceQuery
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		var q traceQuery
		err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			var err error
			switch {
			case num == 1 && typ == protowire.BytesType:
				if len(v) != 16 {
					return fmt.Errorf("trace_id of %d bytes", len(v))
				}
				copy(q.id[:], v)
			case num == 2 && typ == protowire.BytesType:
				q.start, err = timestamp(v)
			case num == 3 && typ == protowire.BytesType:
				q.end, err = timestamp(v)
			}
			return err
		})
		qs = append(qs, q)
		return err
	})
	return qs, err
}

// timestamp reads a google.protobuf.Timestamp{int64 seconds = 1; int32
// nanos = 2}; Jaeger sends year 1 (Go's zero time) for "unset", which is
// the zero time.Time here too.
func timestamp(b []byte) (time.Time, error) {
	sec, nsec, err := secondsNanos(b)
	t := time.Unix(sec, nsec).UTC()
	if t.Year() <= 1 {
		return time.Time{}, err
	}
	return t, err
}

// secondsNanos reads the {int64 seconds = 1; int32 nanos = 2} of a
// Timestamp or a Duration.
func secondsNanos(b []byte) (sec, nsec int64, err error) {
	err = eachField(b, func(num protowire.Number, typ protowire.Type, _ []byte, n uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			sec = int64(n)
		case num == 2 && typ == protowire.VarintType:
			nsec = int64(int32(n))
		}
		return nil
	})
	return sec, nsec, err
}

// eachField calls fn with each field of the protobuf message b: its
// number, wire type and bytes (for BytesType) or number (varint, fixed).
func eachField(b []byte, fn func(protowire.Number, protowire.Type, []byte, uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var (
			v   []byte
			x   uint64
			err error
		)
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var y uint32
			y, n = protowire.ConsumeFixed32(b)
			x = uint64(y)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err = fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// query reads a FindTracesRequest{TraceQueryParameters query = 1}:
// TraceQueryParameters{string service_name = 1; string operation_name =
// 2; repeated KeyValue attributes = 3; Timestamp start_time_min = 4;
// Timestamp start_time_max = 5; Duration duration_min = 6; Duration
// duration_max = 7; int32 search_depth = 8}.
func query(req []byte) (lakeread.Query, error) {
	var q lakeread.Query
	err := eachField(req, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		return eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
			var err error
			switch {
			case num == 1 && typ == protowire.BytesType:
				q.Service = string(v)
			case num == 2 && typ == protowire.BytesType:
				q.Operation = string(v)
			case num == 3 && typ == protowire.BytesType:
				var k, val string
				if k, val, err = attribute(v); err == nil {
					if q.Attributes == nil {
						q.Attributes = map[string]string{}
					}
					q.Attributes[k] = val
				}
			case num == 4 && typ == protowire.BytesType:
				q.StartMin, err = timestamp(v)
			case num == 5 && typ == protowire.BytesType:
				q.StartMax, err = timestamp(v)
			case num == 6 && typ == protowire.BytesType:
				q.DurationMin, err = duration(v)
			case num == 7 && typ == protowire.BytesType:
				q.DurationMax, err = duration(v)
			case num == 8 && typ == protowire.VarintType:
				q.Limit = int(int32(n))
			}
			return err
		})
	})
	if err != nil {
		return q, badRequest{err}
	}
	return q, nil
}

// attribute reads a KeyValue{string key = 1; AnyValue value = 2} of a
// search (OTLP's common.proto messages) as its key and value text: Jaeger
// sends strings; the other kinds are turned into the text the lake
// compares (lake.AppendValueText).
func attribute(b []byte) (string, string, error) {
	var key string
	var val []byte
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			key = string(v)
		case num == 2 && typ == protowire.BytesType:
			av, err := otlpwire.AnyValue(v).Value()
			if err != nil {
				return err
			}
			val, err = lake.AppendValueText(val[:0], av)
			return err
		}
		return nil
	})
	return key, string(val), err
}

// duration reads a google.protobuf.Duration{int64 seconds = 1; int32
// nanos = 2}.
func duration(b []byte) (time.Duration, error) {
	sec, nsec, err := secondsNanos(b)
	return time.Duration(sec)*time.Second + time.Duration(nsec), err
}

// find runs the search of a FindTracesRequest in tenant t's spans.
func (h *handler) find(ctx context.Context, t string, req []byte) ([]lakeread.FoundTrace, error) {
	q, err := query(req)
	if err != nil {
		return nil, err
	}
	q.Limit = min(q.Limit, h.cfg.MaxTraces) // <= 0: lakeread's default
	return h.cfg.Reader.FindTraces(ctx, t, q)
}

// findTraceIDs answers FindTraceIDsResponse{repeated FoundTraceID
// trace_ids = 1}, FoundTraceID{bytes trace_id = 1; Timestamp start = 2;
// Timestamp end = 3}.
func (h *handler) findTraceIDs(ctx context.Context, t string, req []byte) ([]byte, error) {
	found, err := h.find(ctx, t, req)
	if err != nil {
		return nil, err
	}
	var out, f []byte
	for _, ft := range found {
		f = protowire.AppendTag(f[:0], 1, protowire.BytesType)
		f = protowire.AppendBytes(f, ft.ID[:])
		f = protowire.AppendTag(f, 2, protowire.BytesType)
		f = protowire.AppendBytes(f, appendTimestamp(nil, ft.Start))
		f = protowire.AppendTag(f, 3, protowire.BytesType)
		f = protowire.AppendBytes(f, appendTimestamp(nil, ft.End))
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, f)
	}
	return out, nil
}

func appendTimestamp(b []byte, t time.Time) []byte {
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(t.Unix()))
	if n := t.Nanosecond(); n != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(n))
	}
	return b
}

// findTraces answers a FindTracesRequest with a stream of TracesData, one
// per trace found, most recent first: each whole, read by its id in the
// hours its matching spans cover.
func (h *handler) findTraces(stream grpc.ServerStream, t string) error {
	ctx := stream.Context()
	var in otlpgrpc.Message
	if err := stream.RecvMsg(&in); err != nil {
		return err
	}
	defer in.Release()
	found, err := h.find(ctx, t, in.B)
	if err != nil {
		return h.status(ctx, err)
	}
	all, err := h.cfg.Reader.FoundTracesSpans(ctx, t, found)
	if err != nil {
		return h.status(ctx, err)
	}
	for _, spans := range all {
		if err := sendTrace(stream, spans); err != nil {
			return h.status(ctx, err)
		}
	}
	return nil
}
