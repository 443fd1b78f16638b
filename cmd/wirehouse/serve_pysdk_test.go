package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/tlsfiles/tlsfilestest"
)

// TestServePythonSDK exports logs, spans and metrics with the OpenTelemetry
// Python SDK's OTLP exporters (testdata/pysdk_export.py: grpcio and the
// protobuf package's upb runtime, another implementation than Go's) over gRPC and
// over HTTP/protobuf, both gzip-compressed, to a real serve. Every export
// must succeed, the metrics read back through PromQL as the SDK recorded
// them, and after a clean stop every log record and span is in the lake
// exactly once; once in plaintext and once over mutual TLS (grpcio's
// BoringSSL, Python's ssl for HTTP). Needs WIREHOUSE_PYTHON, a Python with the SDK (make test
// installs requirements-test.txt into a venv and sets it).
func TestServePythonSDK(t *testing.T) {
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs the OpenTelemetry Python SDK in a venv")
	t.Run("plaintext", func(t *testing.T) { pythonSDK(t, python, false) })
	t.Run("mutual TLS", func(t *testing.T) { pythonSDK(t, python, true) })
}

// pythonSDK runs testdata/pysdk_export.py against a fresh serve, over
// mutual TLS on the OTLP listeners if tls, and checks what was stored.
func pythonSDK(t *testing.T, python string, tls bool) {
	const n = 100 // records of each signal per transport
	data := t.TempDir()
	var serveArgs, pyArgs []string
	scheme := "http://"
	if tls {
		certs := tlsfilestest.Write(t, t.TempDir(), "wirehouse")
		serveArgs = []string{"--otlp-tls-cert-file", certs.ServerCert, "--otlp-tls-key-file", certs.ServerKey, "--otlp-tls-client-ca-file", certs.CA}
		pyArgs = []string{certs.CA, certs.ClientCert, certs.ClientKey}
		scheme = "https://"
	}
	p := startServeProc(t, data, serveArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{filepath.Join("testdata", "pysdk_export.py"),
		p.addrs["OTLP/gRPC"], scheme + p.addrs["OTLP/HTTP"], strconv.Itoa(n)}, pyArgs...)...)
	cmd.Stderr = os.Stderr
	// requests lets REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE, set on some
	// machines, override the CA the exporter gives its session.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "REQUESTS_CA_BUNDLE=") || strings.HasPrefix(kv, "CURL_CA_BUNDLE=")
	})
	out, err := cmd.Output()
	var res struct {
		Exported struct{ Logs, Spans, Metrics int }
		Failed   []string
	}
	if err == nil {
		err = json.Unmarshal(out, &res)
	}
	if err != nil || len(res.Failed) > 0 || res.Exported.Logs != 2*n || res.Exported.Spans != 2*n || res.Exported.Metrics < 2 {
		p.stop(t)
		t.Fatalf("pysdk_export.py: %v, %+v\n%s\nserve:\n%s", err, res, out, p.stderr)
	}
	admin := p.addrs["admin HTTP"]
	// Histogram values 1..100 per route: 50 of them at most 50 ms.
	for q, want := range map[string]float64{
		`sum(py_requests_total{job="py-sdk-test"})`:                            2 * n,
		`count(py_requests_total)`:                                             2, // routes /grpc and /http
		`sum(py_latency_milliseconds_count)`:                                   2 * n,
		`sum(py_latency_milliseconds_sum)`:                                     2 * n * (n + 1) / 2,
		`sum(py_latency_milliseconds_bucket{le="50"})`:                         2 * 50,
		`sum(py_latency_milliseconds_bucket{le="+Inf"})`:                       2 * n,
		`count(target_info{telemetry_sdk_language="python"})`:                  2, // one per resource (instance grpc, http)
		`count(py_requests_total{instance="grpc",route="/grpc"})`:              1,
		`count(py_latency_milliseconds_bucket{instance="http",route="/http"})`: 16, // the SDK's 15 bounds and +Inf
		// The exponential histogram is a native histogram.
		`sum(histogram_count(py_size_bytes))`: 2 * n,
		`sum(histogram_sum(py_size_bytes))`:   2 * n * (n + 1) / 2,
	} {
		t.Run(q, func(t *testing.T) {
			var got float64
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				if got = promQuery(t, admin, q)[""]; got == want || time.Now().After(deadline) {
					break
				}
			}
			if got != want {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
	p.stop(t)
	for _, signal := range []string{"logs", "traces"} {
		ids := lakeIDs(t, filepath.Join(data, "lake"), signal)
		if len(ids) != 2*n {
			t.Errorf("%s: %d distinct ids in the lake, want %d", signal, len(ids), 2*n)
		}
		for id := range int64(2 * n) {
			if ids[id] != 1 {
				t.Errorf("%s: id %d is in the lake %d times, want once", signal, id, ids[id])
			}
		}
	}
}
