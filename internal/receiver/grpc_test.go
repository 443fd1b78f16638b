package receiver

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func dialGRPC(t *testing.T, r *Receiver) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(r.GRPCAddr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(otlpgrpc.Codec{}), grpc.MaxCallSendMsgSize(1<<30)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// exportGRPC calls Export with body; resp, if not nil, receives the
// response bytes.
func exportGRPC(ctx context.Context, conn *grpc.ClientConn, sig otlpwire.Signal, body []byte, resp *[]byte, opts ...grpc.CallOption) error {
	var out otlpgrpc.Message
	defer out.Release()
	err := conn.Invoke(ctx, sig.ExportMethod(), &otlpgrpc.Message{B: body}, &out, opts...)
	if resp != nil {
		*resp = bytes.Clone(out.B)
	}
	return err
}

func TestGRPCExport(t *testing.T) {
	r, rec := start(t, testConfig())
	conn := dialGRPC(t, r)
	body := logsBody(200)
	for _, comp := range []string{"", "gzip", "zstd"} {
		t.Run("compression="+comp, func(t *testing.T) {
			var opts []grpc.CallOption
			if comp != "" {
				opts = append(opts, grpc.UseCompressor(comp))
			}
			before := len(rec.bodies(otlpwire.SignalLogs))
			var resp []byte
			if err := exportGRPC(context.Background(), conn, otlpwire.SignalLogs, body, &resp, opts...); err != nil {
				t.Fatal(err)
			}
			if len(resp) != 0 {
				t.Errorf("full success should be the empty response, got %x", resp)
			}
			got := rec.bodies(otlpwire.SignalLogs)
			if len(got) != before+1 || !bytes.Equal(got[before], body) {
				t.Fatal("sink did not receive the request bytes unchanged")
			}
		})
	}
}

func TestGRPCErrors(t *testing.T) {
	cfg := smallLimits()
	r, rec := start(t, cfg)
	conn := dialGRPC(t, r)
	ctx := context.Background()
	good := logsBody(20)
	check := func(name string, err error, code codes.Code, msg string, retryInfo bool) {
		t.Helper()
		st := status.Convert(err)
		if st.Code() != code || !strings.Contains(st.Message(), msg) {
			t.Errorf("%s: got %s %q, want %s containing %q", name, st.Code(), st.Message(), code, msg)
		}
		hasRetry := false
		for _, d := range st.Details() {
			if _, ok := d.(*errdetails.RetryInfo); ok {
				hasRetry = true
			}
		}
		if hasRetry != retryInfo {
			t.Errorf("%s: RetryInfo present = %v, want %v", name, hasRetry, retryInfo)
		}
	}
	check("truncated", exportGRPC(ctx, conn, otlpwire.SignalLogs, good[:len(good)-3], nil), codes.InvalidArgument, "truncated", false)
	check("garbage", exportGRPC(ctx, conn, otlpwire.SignalLogs, []byte("\xff\xff\xff\xff"), nil), codes.InvalidArgument, "invalid ExportLogsServiceRequest", false)
	tooBig := bytes.Repeat([]byte{0x0a, 0x00}, 600<<10)
	check("too large", exportGRPC(ctx, conn, otlpwire.SignalLogs, tooBig, nil), codes.ResourceExhausted, "larger than max", false)
	zeros := make([]byte, 4<<20)
	check("zstd bomb", exportGRPC(ctx, conn, otlpwire.SignalLogs, zeros, nil, grpc.UseCompressor("zstd")), codes.ResourceExhausted, "", false)

	for _, tc := range []struct {
		err   error
		code  codes.Code
		retry bool
	}{
		{fmt.Errorf("disk: %w", pipeline.ErrUnavailable), codes.Unavailable, true},
		{fmt.Errorf("queue: %w", pipeline.ErrOverloaded), codes.ResourceExhausted, true},
		{fmt.Errorf("delta: %w", pipeline.ErrInvalid), codes.InvalidArgument, false},
	} {
		rec.hook = func(context.Context, *pipeline.Request) (pipeline.Outcome, error) { return pipeline.Outcome{}, tc.err }
		check(tc.err.Error(), exportGRPC(ctx, conn, otlpwire.SignalLogs, good, nil), tc.code, tc.err.Error(), tc.retry)
	}

	rec.hook = func(context.Context, *pipeline.Request) (pipeline.Outcome, error) {
		return pipeline.Outcome{Rejected: 4, Message: "4 records without body"}, nil
	}
	var resp []byte
	if err := exportGRPC(ctx, conn, otlpwire.SignalLogs, good, &resp); err != nil {
		t.Fatal(err)
	}
	pr := plogotlp.NewExportResponse()
	if err := pr.UnmarshalProto(resp); err != nil {
		t.Fatal(err)
	}
	if ps := pr.PartialSuccess(); ps.RejectedLogRecords() != 4 || ps.ErrorMessage() != "4 records without body" {
		t.Errorf("partial success %d %q", ps.RejectedLogRecords(), ps.ErrorMessage())
	}
	rec.hook = nil
	if err := exportGRPC(ctx, conn, otlpwire.SignalLogs, good, nil); err != nil {
		t.Fatalf("server stopped serving: %v", err)
	}
	if used := drained(r); used != 0 {
		t.Errorf("in-flight bytes %d after all requests finished", used)
	}
}

func TestGRPCOverload(t *testing.T) {
	cfg := smallLimits()
	cfg.MaxInflightBytes = cfg.MaxDecompressedBytes
	r, rec := start(t, cfg)
	conn := dialGRPC(t, r)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	rec.hook = func(context.Context, *pipeline.Request) (pipeline.Outcome, error) {
		once.Do(func() { close(entered); <-release })
		return pipeline.Outcome{}, nil
	}
	body := logsBody(1500)
	held := make(chan error)
	go func() { held <- exportGRPC(context.Background(), conn, otlpwire.SignalLogs, body, nil) }()
	<-entered
	err := exportGRPC(context.Background(), conn, otlpwire.SignalLogs, body, nil)
	st := status.Convert(err)
	retry := false
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay().AsDuration() == cfg.RetryAfter {
			retry = true
		}
	}
	if st.Code() != codes.ResourceExhausted || !retry {
		t.Errorf("over budget: %s %q, RetryInfo %v", st.Code(), st.Message(), retry)
	}
	close(release)
	if err := <-held; err != nil {
		t.Errorf("held request: %v", err)
	}
}

// TestShutdownDrains starts shutdown while a request waits in its sink: the
// request is still acknowledged, and Shutdown returns after it.
func TestShutdownDrains(t *testing.T) {
	for _, transport := range []string{"grpc", "http"} {
		t.Run(transport, func(t *testing.T) {
			rec := &recorder{}
			r, err := New(testConfig(), pipeline.Sinks{Logs: []pipeline.Sink{rec}})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			entered, release := make(chan struct{}), make(chan struct{})
			rec.hook = func(context.Context, *pipeline.Request) (pipeline.Outcome, error) {
				close(entered)
				<-release
				return pipeline.Outcome{}, nil
			}
			result := make(chan error, 1)
			var conn *grpc.ClientConn
			if transport == "grpc" {
				conn = dialGRPC(t, r)
			}
			go func() {
				if transport == "grpc" {
					result <- exportGRPC(context.Background(), conn, otlpwire.SignalLogs, logsBody(10), nil)
					return
				}
				status, _, _ := post(t, httpURL(r, otlpwire.SignalLogs), logsBody(10), "Content-Type", "application/x-protobuf")
				if status != 200 {
					result <- fmt.Errorf("status %d", status)
					return
				}
				result <- nil
			}()
			<-entered
			stopped := make(chan error, 1)
			go func() { stopped <- r.Shutdown(context.Background()) }()
			select {
			case err := <-stopped:
				t.Fatalf("Shutdown returned (%v) while a request was in flight", err)
			case err := <-result:
				t.Fatalf("request finished (%v) before its sink returned", err)
			default:
			}
			close(release)
			if err := <-result; err != nil {
				t.Errorf("in-flight request: %v", err)
			}
			if err := <-stopped; err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			if n := rec.records(t, otlpwire.SignalLogs); n != 10 {
				t.Errorf("%d records stored, want 10", n)
			}
			if conn != nil {
				conn.Close()
			}
		})
	}
}

func TestConfigValidate(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"no listeners":       func(c *Config) { c.GRPCAddr, c.HTTPAddr = "", "" },
		"zero request size":  func(c *Config) { c.MaxRequestBytes = 0 },
		"decompressed < raw": func(c *Config) { c.MaxDecompressedBytes = c.MaxRequestBytes - 1 },
		"inflight < request": func(c *Config) { c.MaxInflightBytes = c.MaxDecompressedBytes - 1 },
		"retry-after < 1s":   func(c *Config) { c.RetryAfter = 0 },
	} {
		t.Run(name, func(t *testing.T) {
			c := DefaultConfig()
			mod(&c)
			if err := c.Validate(); err == nil {
				t.Error("Validate accepted it")
			}
			if _, err := New(c, pipeline.Sinks{}); err == nil {
				t.Error("New accepted it")
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

// TestGRPCReservesAtTap: gRPC reads a call's whole message before the
// handler runs, so each call reserves the largest message when it starts.
// With room for four, four calls are read and held by the sink, the others
// are refused (retryable) before a byte of their message is kept, and the
// budget is whole again once they end.
func TestGRPCReservesAtTap(t *testing.T) {
	cfg := smallLimits() // 1 MiB messages, 4 MiB in flight
	r, rec := start(t, cfg)
	conn := dialGRPC(t, r)
	release := make(chan struct{})
	var entered sync.WaitGroup
	entered.Add(4)
	rec.hook = func(context.Context, *pipeline.Request) (pipeline.Outcome, error) {
		entered.Done()
		<-release
		return pipeline.Outcome{}, nil
	}
	body := logsBody(1500) // under 1 MiB
	codesSeen := make(chan codes.Code, 8)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			codesSeen <- status.Code(exportGRPC(context.Background(), conn, otlpwire.SignalLogs, body, nil))
		})
	}
	entered.Wait()
	// Each held call gave back what its message did not need.
	if used, want := r.budget.used.Load(), 4*int64(len(body)); used != want {
		t.Errorf("in flight %d with four calls held, want %d", used, want)
	}
	if 4*int64(len(body))+cfg.MaxGRPCMessageBytes <= cfg.MaxInflightBytes {
		t.Fatalf("body of %d bytes leaves room for a fifth call", len(body))
	}
	for range 4 {
		err := exportGRPC(context.Background(), conn, otlpwire.SignalLogs, body, nil)
		if st := status.Convert(err); st.Code() != codes.ResourceExhausted {
			t.Errorf("fifth call: %v, want RESOURCE_EXHAUSTED", err)
		}
	}
	close(release)
	wg.Wait()
	close(codesSeen)
	for c := range codesSeen {
		if c != codes.OK {
			t.Errorf("held call ended %v", c)
		}
	}
	if used := drained(r); used != 0 {
		t.Errorf("in-flight bytes %d after all calls ended", used)
	}
}

// drained returns the receiver's in-flight bytes once they are 0, or
// what they are after a second: a gRPC call's reservation is released by
// the stats handler's End, which grpc-go may run after the client has
// its response.
func drained(r *Receiver) int64 {
	deadline := time.Now().Add(time.Second)
	for {
		used := r.budget.used.Load()
		if used == 0 || time.Now().After(deadline) {
			return used
		}
		time.Sleep(time.Millisecond)
	}
}
