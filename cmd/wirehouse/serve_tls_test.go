package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/tlsfiles/tlsfilestest"
)

// TestServeTLS: serve with TLS on every listener and client certificates
// required on the OTLP ones. load sends metrics over gRPC and HTTP with
// its certificate and verifies them through the query API over https;
// senders without a certificate, or without TLS, get nothing in; promtool
// queries over https.
func TestServeTLS(t *testing.T) {
	certs := tlsfilestest.Write(t, t.TempDir(), "wirehouse")
	p := startServeProc(t, t.TempDir(),
		"--otlp-tls-cert-file", certs.ServerCert, "--otlp-tls-key-file", certs.ServerKey, "--otlp-tls-client-ca-file", certs.CA,
		"--admin-tls-cert-file", certs.ServerCert, "--admin-tls-key-file", certs.ServerKey)
	defer p.stop(t)
	admin := "https://" + p.addrs["admin HTTP"]
	withCert := []string{"--tls-ca-file", certs.CA, "--tls-cert-file", certs.ClientCert, "--tls-key-file", certs.ClientKey}
	for i, transport := range []string{"grpc", "http"} {
		t.Run(transport, func(t *testing.T) {
			endpoint := p.addrs[map[string]string{"grpc": "OTLP/gRPC", "http": "OTLP/HTTP"}[transport]]
			base := []string{"load", "--signal", "metrics", "--transport", transport, "--endpoint", endpoint,
				"--count", "4", "--batch", "25", "--seed", fmt.Sprint(1000 * i), "--json", "--quiet"}
			stdout, stderr, err := runArgs(t, append(append(base, withCert...), "--verify", "--query-endpoint", admin)...)
			if err != nil || !strings.Contains(stdout, `"failed": 0`) || !strings.Contains(stdout, "missing 0 series, 0 samples") {
				t.Errorf("over mutual TLS: %v\n%s%s", err, stdout, stderr)
			}
			for name, args := range map[string][]string{
				"no client certificate": {"--tls-ca-file", certs.CA},
				"plaintext":             nil,
				"another CA's client":   {"--tls-ca-file", certs.CA, "--tls-cert-file", certs.OtherClientCert, "--tls-key-file", certs.OtherKey},
			} {
				t.Run(name, func(t *testing.T) {
					stdout, stderr, err := runArgs(t, append(append(base, args...), "--count", "1", "--timeout", "2s")...)
					if err == nil || !strings.Contains(err.Error(), "all 1 requests failed") {
						t.Errorf("%v, want every request refused\n%s%s", err, stdout, stderr)
					}
				})
			}
		})
	}

	// The admin server speaks only TLS.
	ca, err := os.ReadFile(certs.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(admin + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s/readyz: %v %v", admin, resp, err)
	}
	if resp != nil {
		resp.Body.Close()
	}
	if resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/readyz"); err == nil {
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP served by the TLS admin listener")
		}
		resp.Body.Close()
	}

	promtool := os.Getenv("WIREHOUSE_PROMTOOL")
	if promtool == "" {
		return // the rest needs promtool, which make test installs
	}
	// promtool 2.42's query has no TLS flags: it trusts the CA as a system
	// root (Go reads SSL_CERT_FILE).
	cmd := exec.Command(promtool, "query", "instant", admin, `count({__name__=~".+"}) > 0`)
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+certs.CA)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "{} =>") {
		t.Errorf("promtool query over https: %v\n%s", err, out)
	}
}
