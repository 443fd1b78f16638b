package receiver

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/tlsfiles"
	"github.com/wirehouse/wirehouse/internal/tlsfiles/tlsfilestest"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestTelemetrygen sends with the Collector project's telemetrygen, over
// gRPC and HTTP, and counts what arrived. `make test` installs the pinned
// telemetrygen into ./bin and points WIREHOUSE_TELEMETRYGEN at it; a plain
// `go test` without it skips this test.
func TestTelemetrygen(t *testing.T) {
	bin := os.Getenv("WIREHOUSE_TELEMETRYGEN")
	if bin == "" {
		t.Skip("WIREHOUSE_TELEMETRYGEN not set; `make test` installs telemetrygen and sets it")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("WIREHOUSE_TELEMETRYGEN: %v", err)
	}
	for _, tc := range []struct {
		signal  otlpwire.Signal
		command string
		flag    string
		n, want int // records asked for, records expected (a trace is a root and a child span)
	}{
		{otlpwire.SignalLogs, "logs", "--logs", 300, 300},
		{otlpwire.SignalTraces, "traces", "--traces", 150, 300},
		{otlpwire.SignalMetrics, "metrics", "--metrics", 200, 200},
	} {
		for _, transport := range []string{"grpc", "http"} {
			t.Run(tc.command+"/"+transport, func(t *testing.T) {
				r, rec := start(t, testConfig())
				args := []string{tc.command, "--otlp-insecure", tc.flag, strconv.Itoa(tc.n), "--rate", "0", "--workers", "1"}
				if transport == "grpc" {
					args = append(args, "--otlp-endpoint", r.GRPCAddr().String())
				} else {
					args = append(args, "--otlp-http", "--otlp-endpoint", r.HTTPAddr().String(), "--otlp-http-url-path", tc.signal.HTTPPath())
				}
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
				if err != nil {
					t.Fatalf("telemetrygen %v: %v\n%s", args, err, out)
				}
				if got := rec.waitRecords(t, tc.signal, tc.want); got != tc.want {
					t.Fatalf("received %d %s records, want %d\n%s", got, tc.signal, tc.want, out)
				}
			})
		}
	}
}

// TestTelemetrygenTLS: telemetrygen sends over TLS with a client
// certificate (mutual TLS) on both transports and everything arrives; the
// same sender without its certificate gets nothing in.
func TestTelemetrygenTLS(t *testing.T) {
	bin := os.Getenv("WIREHOUSE_TELEMETRYGEN")
	if bin == "" {
		t.Skip("WIREHOUSE_TELEMETRYGEN not set; `make test` installs telemetrygen and sets it")
	}
	certs := tlsfilestest.Write(t, t.TempDir(), "receiver")
	cfg := testConfig()
	var err error
	cfg.GRPCTLS, err = tlsfiles.Server{CertFile: certs.ServerCert, KeyFile: certs.ServerKey, ClientCAFile: certs.CA}.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTPTLS = cfg.GRPCTLS
	r, rec := start(t, cfg)
	total := 0
	for _, transport := range []string{"grpc", "http"} {
		for _, mtls := range []bool{true, false} {
			args := []string{"logs", "--logs", "100", "--rate", "0", "--workers", "1", "--ca-cert", certs.CA}
			if mtls {
				args = append(args, "--mtls", "--client-cert", certs.ClientCert, "--client-key", certs.ClientKey)
			} else {
				args = append(args, "--timeout", "2s") // it retries until then
			}
			if transport == "grpc" {
				args = append(args, "--otlp-endpoint", r.GRPCAddr().String())
			} else {
				args = append(args, "--otlp-http", "--otlp-endpoint", r.HTTPAddr().String(), "--otlp-http-url-path", otlpwire.SignalLogs.HTTPPath())
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
			cancel()
			if mtls {
				if err != nil {
					t.Fatalf("telemetrygen %v: %v\n%s", args, err, out)
				}
				total += 100
			}
			// Without a certificate the handshake fails and telemetrygen
			// exits 1 after its timeout; what matters is that nothing
			// arrives.
			if got := rec.waitRecords(t, otlpwire.SignalLogs, total); got != total {
				t.Fatalf("%s, client certificate %v: %d logs received in all, want %d\n%s", transport, mtls, got, total, out)
			}
		}
	}
}
