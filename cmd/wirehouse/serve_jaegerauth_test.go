package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/tlsfiles/tlsfilestest"
)

// jaegerConfig writes a configuration of the Jaeger query service like
// deploy/jaeger-query.yaml (the same environment variables), with query's
// lines added to the jaeger_query extension and backend's to the grpc
// storage backend, each at its indentation, and returns its path.
func jaegerConfig(t *testing.T, query, backend []string) string {
	t.Helper()
	indent := func(lines []string, by string) string {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(by + l + "\n")
		}
		return b.String()
	}
	cfg := `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [nop]
      exporters: [nop]
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: wirehouse
    http:
      endpoint: ${env:JAEGER_QUERY_HTTP}
    grpc:
      endpoint: ${env:JAEGER_QUERY_GRPC}
` + indent(query, "    ") + `  jaeger_storage:
    backends:
      wirehouse:
        grpc:
          endpoint: ${env:WIREHOUSE_JAEGER_STORAGE}
` + indent(backend, "          ") + `receivers:
  nop:
exporters:
  nop:
`
	path := filepath.Join(t.TempDir(), "jaeger.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// jaegerAs GETs path from Jaeger's HTTP API at addr with the token (none
// if "") and tenant (x-tenant, none if "") given, decodes the envelope's
// data into v when the answer is 200, and returns the status and the
// first error message.
func jaegerAs(t *testing.T, addr, path, token, tenant string, v any) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if tenant != "" {
		req.Header.Set("x-tenant", tenant)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Msg string `json:"msg"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("GET %s: %d, body not a Jaeger envelope: %v", path, resp.StatusCode, err)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(env.Data, v); err != nil {
			t.Fatalf("GET %s: data: %v", path, err)
		}
	}
	msg := ""
	if len(env.Errors) > 0 {
		msg = env.Errors[0].Msg
	}
	return resp.StatusCode, msg
}

// exportSpan sends one span of service svc in trace id over OTLP/HTTP
// with the OTLP token (none if ""), and fails the test unless accepted.
func exportSpan(t *testing.T, otlpHTTP, token, svc string, id pcommon.TraceID) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", svc)
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(id)
	sp.SetSpanID(pcommon.SpanID{id[0], 1})
	sp.SetName("GET /" + svc)
	start := time.Now().Add(-time.Minute)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(3 * time.Millisecond)))
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", "http://"+otlpHTTP+"/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export of %s: %s", svc, resp.Status)
	}
}

// jaegerServices polls Jaeger's /api/services as token and tenant until
// it lists want (its spans are readable once acknowledged; Jaeger's
// connection to the storage may still be coming up) or 20 s passed, and
// returns the last list.
func jaegerServices(t *testing.T, addr, token, tenant string, want []string) []string {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = nil
		if code, _ := jaegerAs(t, addr, "/api/services", token, tenant, &got); code == http.StatusOK {
			slices.Sort(got)
			if slices.Equal(got, want) {
				break
			}
		}
	}
	return got
}

// TestJaegerStorageAuth: with admin bearer tokens, wirehouse's Jaeger
// remote storage listener serves each token its tenant's traces alone,
// through the real Jaeger query service (v1.76.0) in both ways it can
// send a token: a fixed one (the grpc backend's headers: authorization),
// and the one of each HTTP API request (bearer_token_propagation, with
// multi_tenancy forwarding the request's x-tenant). No token, an unknown
// one, and a token of tenant a asking for tenant b are refused with the
// gRPC codes Jaeger's answer carries.
func TestJaegerStorageAuth(t *testing.T) {
	bin := peerFromEnv(t, "WIREHOUSE_JAEGER", "builds jaeger")
	const (
		otlpA, otlpB         = "otlp-a-5c2e8f1a9d3b", "otlp-b-7a1d4c9e2f6b"
		adminA, adminB       = "admin-a-3f9b1e7c5a2d", "admin-b-8d2c6a0f4e1b"
		adminAny, adminWrong = "admin-any-1b7e3d9f5c", "admin-wrong-6e4a2c8b0d"
	)
	dir := t.TempDir()
	addrs := startServe(t,
		"--otlp-bearer-tokens-file", writeTokens(t, filepath.Join(dir, "otlp"), otlpA+" a\n"+otlpB+" b\n"),
		"--admin-bearer-tokens-file", writeTokens(t, filepath.Join(dir, "admin"), adminA+" a\n"+adminB+" b\n"+adminAny+"\n"))
	idA, idB := pcommon.TraceID{0xaa, 15: 1}, pcommon.TraceID{0xbb, 15: 2}
	exportSpan(t, addrs["OTLP/HTTP"], otlpA, "svc-a", idA)
	exportSpan(t, addrs["OTLP/HTTP"], otlpB, "svc-b", idB)
	storage := addrs["Jaeger remote storage gRPC"]

	t.Run("fixed token", func(t *testing.T) {
		jaeger := startJaegerConfig(t, bin, jaegerConfig(t, nil, []string{
			"tls: {insecure: true}",
			"headers: {authorization: \"Bearer " + adminA + "\"}",
		}), storage)
		if got := jaegerServices(t, jaeger, "", "", []string{"svc-a"}); !slices.Equal(got, []string{"svc-a"}) {
			t.Fatalf("Jaeger with a's token lists services %q, want svc-a alone", got)
		}
		var traces []struct {
			TraceID string `json:"traceID"`
		}
		if code, msg := jaegerAs(t, jaeger, "/api/traces/"+idA.String(), "", "", &traces); code != http.StatusOK || len(traces) != 1 {
			t.Errorf("a's trace: %d %s, %d traces", code, msg, len(traces))
		}
		if code, msg := jaegerAs(t, jaeger, "/api/traces/"+idB.String(), "", "", &traces); code != http.StatusNotFound {
			t.Errorf("b's trace through a's token: %d %s, want 404", code, msg)
		}
		window := fmt.Sprintf("&start=%d&end=%d", time.Now().Add(-time.Hour).UnixMicro(), time.Now().Add(time.Minute).UnixMicro())
		if code, msg := jaegerAs(t, jaeger, "/api/traces?service=svc-b"+window, "", "", &traces); code != http.StatusOK || len(traces) != 0 {
			t.Errorf("search of b's service through a's token: %d %s, %d traces", code, msg, len(traces))
		}
	})

	t.Run("propagated token", func(t *testing.T) {
		jaeger := startJaegerConfig(t, bin, jaegerConfig(t,
			[]string{"bearer_token_propagation: true", "multi_tenancy: {Enabled: true}"},
			[]string{"tls: {insecure: true}", "multi_tenancy: {Enabled: true}"}), storage)
		if got := jaegerServices(t, jaeger, adminA, "a", []string{"svc-a"}); !slices.Equal(got, []string{"svc-a"}) {
			t.Fatalf("a's token, tenant a: services %q, want svc-a alone", got)
		}
		if got := jaegerServices(t, jaeger, adminB, "b", []string{"svc-b"}); !slices.Equal(got, []string{"svc-b"}) {
			t.Errorf("b's token, tenant b: services %q, want svc-b alone", got)
		}
		var traces []struct {
			TraceID string `json:"traceID"`
		}
		if code, msg := jaegerAs(t, jaeger, "/api/traces/"+idA.String(), adminA, "a", &traces); code != http.StatusOK || len(traces) != 1 {
			t.Errorf("a's trace with a's token: %d %s, %d traces", code, msg, len(traces))
		}
		if code, msg := jaegerAs(t, jaeger, "/api/traces/"+idA.String(), adminB, "b", &traces); code != http.StatusNotFound {
			t.Errorf("a's trace with b's token: %d %s, want 404", code, msg)
		}
		for _, c := range []struct {
			name, path, token, tenant string
			want                      codes.Code
		}{
			{"no token", "/api/services", "", "a", codes.Unauthenticated},
			{"an unknown token", "/api/services", adminWrong, "a", codes.Unauthenticated},
			{"a's token asking for b", "/api/services", adminA, "b", codes.PermissionDenied},
			{"a's token asking for b's trace", "/api/traces/" + idB.String(), adminA, "b", codes.PermissionDenied},
			{"a token naming no tenant asking for a", "/api/services", adminAny, "a", codes.PermissionDenied},
		} {
			var data json.RawMessage
			code, msg := jaegerAs(t, jaeger, c.path, c.token, c.tenant, &data)
			if want := "code = " + c.want.String(); code != http.StatusInternalServerError || !strings.Contains(msg, want) {
				t.Errorf("%s: Jaeger answered %d %q, want 500 with %q", c.name, code, msg, want)
			}
		}
	})
}

// TestJaegerStorageTLS: the Jaeger remote storage listener over mutual
// TLS (--jaeger-storage-tls-*) with admin bearer tokens: the real Jaeger
// query service verifies it with the CA, presents its client certificate
// and a token, and reads the traces; plaintext and certificate-less
// clients are refused, and a rotated server certificate is served to new
// connections without a restart.
func TestJaegerStorageTLS(t *testing.T) {
	bin := peerFromEnv(t, "WIREHOUSE_JAEGER", "builds jaeger")
	const token = "admin-tls-4d8a2f6c0e9b"
	dir := t.TempDir()
	certs := tlsfilestest.Write(t, filepath.Join(dir, "v1"), "wirehouse-v1")
	served := filepath.Join(dir, "served")
	if err := os.MkdirAll(served, 0o755); err != nil {
		t.Fatal(err)
	}
	cert, key := filepath.Join(served, "cert.pem"), filepath.Join(served, "key.pem")
	install := func(c tlsfilestest.Files) { // as a rotation does: new files renamed over the old
		for src, dst := range map[string]string{c.ServerCert: cert, c.ServerKey: key} {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst+".new", b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(dst+".new", dst); err != nil {
				t.Fatal(err)
			}
		}
	}
	install(certs)
	addrs := startServe(t, "--admin-bearer-tokens-file", writeTokens(t, filepath.Join(dir, "admin"), token+"\n"),
		"--jaeger-storage-tls-cert-file", cert, "--jaeger-storage-tls-key-file", key, "--jaeger-storage-tls-client-ca-file", certs.CA)
	exportSpan(t, addrs["OTLP/HTTP"], "", "svc-tls", pcommon.TraceID{0x75, 15: 1})
	storage := addrs["Jaeger remote storage gRPC"]

	jaeger := startJaegerConfig(t, bin, jaegerConfig(t, nil, []string{
		"tls: {ca_file: " + certs.CA + ", cert_file: " + certs.ClientCert + ", key_file: " + certs.ClientKey + "}",
		"headers: {authorization: \"Bearer " + token + "\"}",
	}), storage)
	if got := jaegerServices(t, jaeger, "", "", []string{"svc-tls"}); !slices.Equal(got, []string{"svc-tls"}) {
		t.Fatalf("Jaeger over TLS lists services %q, want svc-tls", got)
	}

	// getServices calls GetServices directly with creds and the token.
	getServices := func(creds credentials.TransportCredentials, token string) error {
		conn, err := grpc.NewClient(storage, grpc.WithTransportCredentials(creds), otlpgrpc.DialOption())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if token != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
		}
		var out otlpgrpc.Message
		if err := conn.Invoke(ctx, "/jaeger.storage.v2.TraceReader/GetServices", &otlpgrpc.Message{}, &out); err != nil {
			return err
		}
		if len(out.B) == 0 {
			return fmt.Errorf("no service")
		}
		return nil
	}
	clientTLS := func(ca string, withCert bool) *tls.Config {
		b, err := os.ReadFile(ca)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(b)
		c := &tls.Config{RootCAs: pool}
		if withCert {
			pair, err := tls.LoadX509KeyPair(certs.ClientCert, certs.ClientKey)
			if err != nil {
				t.Fatal(err)
			}
			c.Certificates = []tls.Certificate{pair}
		}
		return c
	}
	if err := getServices(credentials.NewTLS(clientTLS(certs.CA, true)), token); err != nil {
		t.Errorf("over mutual TLS with the token: %v", err)
	}
	if err := getServices(credentials.NewTLS(clientTLS(certs.CA, true)), ""); status.Code(err) != codes.Unauthenticated {
		t.Errorf("over mutual TLS without a token: %v, want Unauthenticated", err)
	}
	if err := getServices(credentials.NewTLS(clientTLS(certs.CA, false)), token); err == nil {
		t.Error("a client without a certificate was served")
	}
	if err := getServices(insecure.NewCredentials(), token); err == nil {
		t.Error("a plaintext client was served")
	}

	// Rotation: another certificate (of another CA) renamed over the
	// served files is what new connections get.
	next := tlsfilestest.Write(t, filepath.Join(dir, "v2"), "wirehouse-v2")
	install(next)
	var cn string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		c := clientTLS(next.CA, true)
		c.RootCAs.AppendCertsFromPEM(mustRead(t, certs.CA))
		conn, err := tls.Dial("tcp", storage, c)
		if err != nil {
			continue
		}
		cn = conn.ConnectionState().PeerCertificates[0].Subject.CommonName
		conn.Close()
		if cn == "wirehouse-v2" {
			break
		}
	}
	if cn != "wirehouse-v2" {
		t.Fatalf("after rotation the listener serves %q, want wirehouse-v2", cn)
	}
	if err := getServices(credentials.NewTLS(clientTLS(next.CA, true)), token); err != nil {
		t.Errorf("with the rotated certificate: %v", err)
	}
}

// mustRead returns the contents of path.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
