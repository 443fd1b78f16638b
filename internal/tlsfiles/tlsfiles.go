// Package tlsfiles builds TLS configurations from PEM files, as the
// OpenTelemetry Collector's tls settings do.
//
// Server is a listener's side: its certificate and key, re-read when the
// files change so that a rotated certificate (cert-manager, certbot) is
// served without a restart, and optionally a CA whose certificates clients
// must present (mutual TLS). Client is the side of wirehouse load: the CA
// that verifies the server, and optionally a client certificate.
//
// Both require TLS 1.2 or later and otherwise keep crypto/tls's defaults.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/watch"
)

// Server names the PEM files of a TLS listener. The zero value disables
// TLS.
type Server struct {
	CertFile string `yaml:"cert_file"` // certificate chain, leaf first
	KeyFile  string `yaml:"key_file"`  // its private key
	// ClientCAFile, if set, makes the listener require a client
	// certificate signed by one of its CAs (mutual TLS). It is read once,
	// at start.
	ClientCAFile string `yaml:"client_ca_file"`
}

// Enabled reports whether any file is set.
func (s Server) Enabled() bool { return s.CertFile != "" || s.KeyFile != "" || s.ClientCAFile != "" }

// Config loads the files and returns the listener's TLS configuration, or
// nil when s is disabled. The certificate is checked for changes (the
// files' size and modification time) at most once a second, at a
// handshake; a change that does not load keeps the previous certificate.
// onReload, if not nil, is told of every reload: err nil when the new
// certificate is served. It runs during a handshake and must be quick.
func (s Server) Config(onReload func(err error)) (*tls.Config, error) {
	if !s.Enabled() {
		return nil, nil
	}
	if s.CertFile == "" || s.KeyFile == "" {
		return nil, errors.New("tls: cert_file and key_file must both be set")
	}
	r := &reloader{certFile: s.CertFile, keyFile: s.KeyFile, onReload: onReload, files: watch.New(reloadEvery, s.CertFile, s.KeyFile)}
	if err := r.load(); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
	if s.ClientCAFile != "" {
		pool, err := certPool(s.ClientCAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// reloadEvery is how often a handshake may look at the files again.
var reloadEvery = time.Second

// reloader serves a certificate and key pair, re-reading the files when
// they change.
type reloader struct {
	certFile, keyFile string
	onReload          func(error)

	mu    sync.Mutex
	cert  *tls.Certificate
	files *watch.Files
}

// load reads both files; the caller holds mu or owns r.
func (r *reloader) load() error {
	// Marked first: a file replaced between the mark and the read is
	// read again at the next check.
	if err := r.files.Mark(); err != nil {
		return fmt.Errorf("tls: %w", err)
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("tls: load %s and %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert = &cert
	return nil
}

func (r *reloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.files.Changed(time.Now()) {
		err := r.load() // on error r.cert stays the previous one
		if r.onReload != nil {
			r.onReload(err)
		}
	}
	return r.cert, nil
}

// Client is the TLS side of a client. The zero value with Enabled true
// verifies the server against the system's roots.
type Client struct {
	CAFile             string // CA certificates that verify the server, in place of the system's
	CertFile, KeyFile  string // a client certificate, for mutual TLS
	ServerName         string // the name verified, if not the endpoint's host
	InsecureSkipVerify bool   // no verification at all (tests only)
}

// Config loads the files and returns the client's TLS configuration.
func (c Client) Config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: c.InsecureSkipVerify}
	if c.CAFile != "" {
		pool, err := certPool(c.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("tls: a client certificate needs both its cert and key files")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("tls: load %s and %s: %w", c.CertFile, c.KeyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// certPool reads PEM CA certificates.
func certPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls: %s holds no PEM certificate", path)
	}
	return pool, nil
}
