// Command grpcecho is a measurement aid: a bare grpc-go server that answers
// the OTLP logs, traces and metrics Export calls with an empty response and
// does nothing else, not even validation. Run wirehouse load against it to
// see the latency floor of the grpc-go transport on a machine, and compare
// with wirehouse serve under the same load (docs/BENCHMARKS.md).
//
// It uses the same server options as wirehouse's receiver (pass-through
// codec, static flow-control windows, stream workers); --variant tries
// others. With --stats-listen it also counts the records of each signal
// (otlpwire's Count) and serves the totals as JSON on GET /stats there:
// the downstream sinks of scripts/forward-bench.sh.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "grpcecho:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("grpcecho", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("listen", "localhost:4317", "listen address")
	variant := fs.String("variant", "receiver", "server options: receiver (wirehouse's), no-workers (a goroutine per stream), "+
		"no-buffers (WriteBufferSize and ReadBufferSize 0) or shared-buffer (SharedWriteBuffer)")
	statsAddr := fs.String("stats-listen", "", "serve the records received, by signal, as JSON on GET /stats at this address; empty: do not count")
	httpAddr := fs.String("http-listen", "", "also serve bare OTLP/HTTP and remote write at this address; empty: do not")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := []grpc.ServerOption{
		otlpgrpc.ServerOption(),
		grpc.InitialWindowSize(4 << 20),
		grpc.InitialConnWindowSize(16 << 20),
	}
	workers := grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0)))
	switch *variant {
	case "receiver":
		opts = append(opts, workers)
	case "no-workers":
	case "no-buffers":
		opts = append(opts, workers, grpc.WriteBufferSize(0), grpc.ReadBufferSize(0))
	case "shared-buffer":
		opts = append(opts, workers, grpc.SharedWriteBuffer(true))
	default:
		return fmt.Errorf("unknown --variant %q", *variant)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	s := grpc.NewServer(opts...)
	empty := &otlpgrpc.Message{}
	var counts [4]atomic.Int64 // by signal; [0]: requests
	count := *statsAddr != ""
	for _, sig := range otlpwire.Signals {
		handler := func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var m otlpgrpc.Message
			if err := dec(&m); err != nil {
				return nil, err
			}
			if count {
				n, err := sig.Count(m.B)
				if err != nil {
					m.Release()
					return nil, status.Error(codes.InvalidArgument, err.Error())
				}
				counts[sig].Add(int64(n))
				counts[0].Add(1)
			}
			m.Release()
			return empty, nil
		}
		s.RegisterService(otlpgrpc.ServiceDesc(sig, handler), struct{}{})
	}
	if count {
		sln, err := net.Listen("tcp", *statsAddr)
		if err != nil {
			return err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]int64{ //nolint:errcheck // a client gone
				"requests": counts[0].Load(), "logs": counts[otlpwire.SignalLogs].Load(),
				"traces": counts[otlpwire.SignalTraces].Load(), "metrics": counts[otlpwire.SignalMetrics].Load(),
			})
		})
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(sln) //nolint:errcheck // closed below
		defer hs.Close()
		fmt.Fprintln(stderr, "grpcecho: stats on", sln.Addr())
	}
	if *httpAddr != "" {
		hln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: bareHTTP(), ReadHeaderTimeout: 5 * time.Second}
		go hs.Serve(hln) //nolint:errcheck // closed below
		defer hs.Close()
		fmt.Fprintln(stderr, "grpcecho: bare OTLP/HTTP and remote write on", hln.Addr())
	}
	fmt.Fprintln(stderr, "grpcecho: serving on", ln.Addr())
	go func() { <-ctx.Done(); s.Stop() }()
	return s.Serve(ln)
}

// bareHTTP answers OTLP/HTTP exports with 200 and an empty protobuf
// response, and remote writes with 204, once it has read the body.
func bareHTTP() http.Handler {
	bufs := sync.Pool{New: func() any { return new(bytes.Buffer) }}
	read := func(w http.ResponseWriter, r *http.Request) bool {
		b := bufs.Get().(*bytes.Buffer)
		defer bufs.Put(b)
		b.Reset()
		if _, err := b.ReadFrom(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		return true
	}
	mux := http.NewServeMux()
	for _, path := range []string{"/v1/logs", "/v1/traces", "/v1/metrics"} {
		mux.HandleFunc("POST "+path, func(w http.ResponseWriter, r *http.Request) {
			if read(w, r) {
				w.Header().Set("Content-Type", "application/x-protobuf")
				w.WriteHeader(http.StatusOK)
			}
		})
	}
	mux.HandleFunc("POST /api/v1/write", func(w http.ResponseWriter, r *http.Request) {
		if read(w, r) {
			w.WriteHeader(http.StatusNoContent)
		}
	})
	return mux
}
