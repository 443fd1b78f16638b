// Package tlsfilestest writes throwaway certificates for tests: a CA, a
// server certificate for localhost and 127.0.0.1 and a client certificate,
// all signed by the CA, as PEM files.
package tlsfilestest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Files are the PEM files Write wrote.
type Files struct {
	CA                        string // the CA's certificate
	ServerCert, ServerKey     string // localhost, 127.0.0.1 and ::1
	ClientCert, ClientKey     string // a client certificate (CN "wirehouse-test-client")
	OtherCA                   string // a second CA that signed nothing here
	OtherClientCert, OtherKey string // a client certificate of the other CA
}

// Write creates the certificates in dir. serverCN names the server
// certificate's subject, so that a test can tell two of them apart.
func Write(t testing.TB, dir, serverCN string) Files {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := Files{
		CA: filepath.Join(dir, "ca.pem"), ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
		OtherCA: filepath.Join(dir, "other-ca.pem"), OtherClientCert: filepath.Join(dir, "other-client.pem"), OtherKey: filepath.Join(dir, "other-client-key.pem"),
	}
	ca, caKey := newCA(t, "wirehouse test CA")
	writeCert(t, f.CA, ca.Raw, nil)
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: serverCN},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	writeLeaf(t, server, ca, caKey, f.ServerCert, f.ServerKey)
	client := &x509.Certificate{Subject: pkix.Name{CommonName: "wirehouse-test-client"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	writeLeaf(t, client, ca, caKey, f.ClientCert, f.ClientKey)
	other, otherKey := newCA(t, "another CA")
	writeCert(t, f.OtherCA, other.Raw, nil)
	stranger := &x509.Certificate{Subject: pkix.Name{CommonName: "stranger"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	writeLeaf(t, stranger, other, otherKey, f.OtherClientCert, f.OtherKey)
	return f
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newCA(t testing.TB, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func writeLeaf(t testing.TB, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certPath, keyPath string) {
	t.Helper()
	key := newKey(t)
	tmpl.SerialNumber = serial(t)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writeCert(t, certPath, der, nil)
	writeCert(t, keyPath, nil, keyDER)
}

func writeCert(t testing.TB, path string, certDER, keyDER []byte) {
	t.Helper()
	var b *pem.Block
	if certDER != nil {
		b = &pem.Block{Type: "CERTIFICATE", Bytes: certDER}
	} else {
		b = &pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(b), 0o600); err != nil {
		t.Fatal(err)
	}
}
