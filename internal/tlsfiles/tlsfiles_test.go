package tlsfiles

import (
	"crypto/tls"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wirehouse/wirehouse/internal/tlsfiles/tlsfilestest"
)

// serve accepts TLS connections with cfg on loopback and echoes one line
// per connection, until the test ends.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				buf := make([]byte, 5)
				if _, err := io.ReadFull(c, buf); err == nil {
					c.Write(buf)
				}
			})
		}
	})
	return ln.Addr().String()
}

// exchange dials addr, sends a line and reads it back; it returns the
// server certificate's common name.
func exchange(addr string, cfg *tls.Config) (string, error) {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello")); err != nil {
		return "", err
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil {
		return "", err // TLS 1.3 reports a refused client certificate here
	}
	return c.ConnectionState().PeerCertificates[0].Subject.CommonName, nil
}

func clientConfig(t *testing.T, c Client) *tls.Config {
	t.Helper()
	cfg, err := c.Config()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestServerAndClient(t *testing.T) {
	f := tlsfilestest.Write(t, t.TempDir(), "first")
	cfg, err := Server{CertFile: f.ServerCert, KeyFile: f.ServerKey}.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	if cn, err := exchange(addr, clientConfig(t, Client{CAFile: f.CA})); err != nil || cn != "first" {
		t.Errorf("client trusting the CA: %q, %v", cn, err)
	}
	if _, err := exchange(addr, clientConfig(t, Client{CAFile: f.OtherCA})); err == nil {
		t.Error("client trusting another CA accepted the server")
	}
	if _, err := exchange(addr, clientConfig(t, Client{CAFile: f.CA, ServerName: "example.com"})); err == nil {
		t.Error("a server name the certificate lacks was accepted")
	}
	if _, err := exchange(addr, &tls.Config{MaxVersion: tls.VersionTLS11, InsecureSkipVerify: true}); err == nil {
		t.Error("TLS 1.1 accepted")
	}
}

func TestMutualTLS(t *testing.T) {
	f := tlsfilestest.Write(t, t.TempDir(), "server")
	cfg, err := Server{CertFile: f.ServerCert, KeyFile: f.ServerKey, ClientCAFile: f.CA}.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	if _, err := exchange(addr, clientConfig(t, Client{CAFile: f.CA, CertFile: f.ClientCert, KeyFile: f.ClientKey})); err != nil {
		t.Errorf("client with a certificate of the CA: %v", err)
	}
	if _, err := exchange(addr, clientConfig(t, Client{CAFile: f.CA})); err == nil {
		t.Error("client without a certificate accepted")
	}
	if _, err := exchange(addr, clientConfig(t, Client{CAFile: f.CA, CertFile: f.OtherClientCert, KeyFile: f.OtherKey})); err == nil {
		t.Error("client with another CA's certificate accepted")
	}
}

// TestReload: new certificate files are served without a restart; files
// that do not load leave the previous certificate in service.
func TestReload(t *testing.T) {
	old := reloadEvery
	defer func() { reloadEvery = old }()
	reloadEvery = 0
	dir := t.TempDir()
	first := tlsfilestest.Write(t, filepath.Join(dir, "a"), "first")
	second := tlsfilestest.Write(t, filepath.Join(dir, "b"), "second")
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	install := func(cert, key string) {
		for src, dst := range map[string]string{cert: certFile, key: keyFile} {
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
	install(first.ServerCert, first.ServerKey)
	var mu sync.Mutex
	var reloads []error
	cfg, err := Server{CertFile: certFile, KeyFile: keyFile}.Config(func(err error) {
		mu.Lock()
		reloads = append(reloads, err)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	skip := &tls.Config{InsecureSkipVerify: true}
	if cn, err := exchange(addr, skip); err != nil || cn != "first" {
		t.Fatalf("before rotation: %q, %v", cn, err)
	}
	install(second.ServerCert, second.ServerKey)
	if cn, err := exchange(addr, skip); err != nil || cn != "second" {
		t.Errorf("after rotation: %q, %v; want the new certificate", cn, err)
	}
	if err := os.WriteFile(certFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cn, err := exchange(addr, skip); err != nil || cn != "second" {
		t.Errorf("after a bad rotation: %q, %v; want the previous certificate", cn, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reloads) != 2 || reloads[0] != nil || reloads[1] == nil {
		t.Errorf("reloads reported %v, want a success then an error", reloads)
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	f := tlsfilestest.Write(t, dir, "server")
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	for name, s := range map[string]Server{
		"cert only":     {CertFile: f.ServerCert},
		"ca only":       {ClientCAFile: f.CA},
		"missing key":   {CertFile: f.ServerCert, KeyFile: filepath.Join(dir, "nope.pem")},
		"mismatch":      {CertFile: f.ServerCert, KeyFile: f.ClientKey},
		"client ca PEM": {CertFile: f.ServerCert, KeyFile: f.ServerKey, ClientCAFile: notPEM},
	} {
		if _, err := s.Config(nil); err == nil || !strings.HasPrefix(err.Error(), "tls: ") {
			t.Errorf("%s: error %v", name, err)
		}
	}
	if cfg, err := (Server{}).Config(nil); cfg != nil || err != nil {
		t.Errorf("zero Server: %v, %v; want no TLS", cfg, err)
	}
	for name, c := range map[string]Client{
		"cert only": {CertFile: f.ClientCert},
		"ca PEM":    {CAFile: notPEM},
		"missing":   {CAFile: filepath.Join(dir, "nope.pem")},
	} {
		if _, err := c.Config(); err == nil {
			t.Errorf("client %s accepted", name)
		}
	}
}
