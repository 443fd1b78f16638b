package jaegerstorage_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/wirehouse/wirehouse/internal/jaegerstorage"
	"github.com/wirehouse/wirehouse/internal/lakeread/lakereadtest"
	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestQueryBudget: a call the query budget cannot take now is refused
// ResourceExhausted with a RetryInfo of the budget's Retry-After; once a
// slot is free the same call is answered.
func TestQueryBudget(t *testing.T) {
	gc := querybudget.DefaultConfig()
	gc.MaxConcurrent, gc.MaxConcurrentPerTenant, gc.MaxQueueWait, gc.RetryAfter = 1, 1, 0, 3*time.Second
	gate, err := querybudget.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(otlpgrpc.ServerOption())
	cfg := jaegerstorage.DefaultConfig()
	cfg.Reader, cfg.Tenant, cfg.Gate = lakereadtest.Reader(t, map[string][]byte{"default": synth.Traces(synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 50})}), "default", gate
	if err := jaegerstorage.Register(s, cfg); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	defer s.Stop()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()), otlpgrpc.DialOption())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	held, err := gate.Admit(context.Background(), "someone else")
	if err != nil {
		t.Fatal(err)
	}
	var out otlpgrpc.Message
	err = conn.Invoke(context.Background(), "/jaeger.storage.v2.TraceReader/GetServices", &otlpgrpc.Message{}, &out)
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("with every slot taken: %v, want ResourceExhausted", err)
	}
	retry := time.Duration(0)
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			retry = ri.GetRetryDelay().AsDuration()
		}
	}
	if retry != 3*time.Second {
		t.Fatalf("RetryInfo %v, want 3s", retry)
	}
	held.Done()
	if err := conn.Invoke(context.Background(), "/jaeger.storage.v2.TraceReader/GetServices", &otlpgrpc.Message{}, &out); err != nil {
		t.Fatalf("with a slot free: %v", err)
	}
	if q, _ := gate.Running(); q != 0 {
		t.Fatalf("%d queries still running after the call", q)
	}
}
