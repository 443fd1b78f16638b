package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

// TestServeBearerTokens: with a bearer tokens file, exports need one of
// its tokens; each token's data lands in the lake under the tenant the
// file gives it (or the default one); a token removed from the file is
// refused without a restart. Senders: load over both transports and, when
// make test installed it, telemetrygen with an Authorization header.
func TestServeBearerTokens(t *testing.T) {
	const (
		tokAcme    = "acme-exporters-3f9a1c7e5b"
		tokDefault = "default-exporters-8d2e4a6c1f"
	)
	tokens := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, tokens, "# tenant acme\n"+tokAcme+" acme\n"+tokDefault+"\n")
	data := t.TempDir()
	p := startServeProc(t, data, "--otlp-bearer-tokens-file", tokens, "--lake-max-delay", "200ms")
	load := func(transport, endpoint string, args ...string) error {
		t.Helper()
		_, stderr, err := runArgs(t, append([]string{"load", "--signal", "logs", "--transport", transport, "--endpoint", endpoint,
			"--count", "3", "--batch", "10", "--timeout", "5s", "--quiet", "--json"}, args...)...) // later flags win
		if err != nil {
			return &loadError{err, stderr}
		}
		return nil
	}
	grpcEP, httpEP := p.addrs["OTLP/gRPC"], p.addrs["OTLP/HTTP"]
	want := map[string]int{} // rows per tenant
	for _, tc := range []struct {
		name                               string
		transport, endpoint, token, tenant string
	}{
		{"grpc/acme", "grpc", grpcEP, tokAcme, "acme"},
		{"http/acme", "http", httpEP, tokAcme, "acme"},
		{"grpc/default", "grpc", grpcEP, tokDefault, "default"},
		{"http/default", "http", httpEP, tokDefault, "default"},
		{"grpc/no token", "grpc", grpcEP, "", ""},
		{"http/no token", "http", httpEP, "", ""},
		{"http/unknown token", "http", httpEP, "not-one-of-the-tokens-at-all", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args []string
			if tc.token != "" {
				args = []string{"--bearer-token", tc.token}
			}
			err := load(tc.transport, tc.endpoint, args...)
			switch {
			case tc.tenant != "" && err != nil:
				t.Errorf("load: %v", err)
			case tc.tenant == "" && (err == nil || !strings.Contains(err.Error(), "all 3 requests failed")):
				t.Errorf("load: %v, want every request refused", err)
			case tc.tenant != "":
				want[tc.tenant] += 30
			}
		})
	}
	if bin := os.Getenv("WIREHOUSE_TELEMETRYGEN"); bin != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, bin, "logs", "--otlp-insecure", "--otlp-endpoint", grpcEP, "--logs", "25", "--rate", "0",
			"--workers", "1", "--otlp-header", `Authorization="Bearer `+tokAcme+`"`).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("telemetrygen with the acme token: %v\n%s", err, out)
		} else {
			want["acme"] += 25
		}
	}

	// Revoke the default token: refused within a second or so, no restart.
	writeTokens(t, tokens, tokAcme+" acme\n")
	deadline := time.Now().Add(5 * time.Second)
	// One request a try, so that a reload cannot fall between requests
	// of one try.
	for load("grpc", grpcEP, "--bearer-token", tokDefault, "--count", "1") == nil {
		want["default"] += 10
		if time.Now().After(deadline) {
			t.Fatal("revoked token still accepted after 5 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := load("http", httpEP, "--bearer-token", tokAcme); err != nil {
		t.Errorf("acme token after the reload: %v", err)
	} else {
		want["acme"] += 30
	}
	p.stop(t)
	if !strings.Contains(p.stderr.String(), "bearer tokens reloaded") {
		t.Errorf("no reload logged:\n%s", p.stderr)
	}
	for tenant, n := range want {
		if got := lakeRows(t, filepath.Join(data, "lake", "logs", "tenant="+tenant)); got != n {
			t.Errorf("tenant %s: %d rows in the lake, want %d", tenant, got, n)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(data, "lake", "logs")); len(entries) != len(want) {
		t.Errorf("lake tenants %v, want only %v", entries, want)
	}
}

type loadError struct {
	err    error
	stderr string
}

func (e *loadError) Error() string { return e.err.Error() + ": " + e.stderr }

// lakeRows counts the rows of the Parquet files under dir.
func lakeRows(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		n += int(f.NumRows())
		return nil
	})
	return n
}

// TestLoadAdminToken: with admin bearer tokens, load's remote write and
// --verify's queries send --admin-bearer-token; without it they are
// refused.
func TestLoadAdminToken(t *testing.T) {
	const token = "admin-writer-0123456789ab"
	p := startServeProc(t, t.TempDir(), "--admin-bearer-tokens-file", writeTokens(t, filepath.Join(t.TempDir(), "admin-tokens"), token+"\n"))
	defer p.stop(t)
	admin := "http://" + p.addrs["admin HTTP"]
	for _, args := range [][]string{
		{"--transport", "remote-write", "--endpoint", admin + "/api/v1/write"},
		{"--transport", "grpc", "--endpoint", p.addrs["OTLP/gRPC"]}, // OTLP open, verify needs the token
	} {
		base := append([]string{"load", "--signal", "metrics", "--count", "3", "--batch", "20", "--quiet", "--json", "--verify", "--query-endpoint", admin}, args...)
		if stdout, stderr, err := runArgs(t, append(base, "--admin-bearer-token", token)...); err != nil || !strings.Contains(stdout, "missing 0 series, 0 samples") {
			t.Errorf("load %v with the admin token: %v\n%s%s", args, err, stdout, stderr)
		}
		if _, _, err := runArgs(t, base...); err == nil {
			t.Errorf("load %v without the admin token succeeded", args)
		}
	}
}

// writeTokens writes a bearer tokens file at path as an operator rotating
// it would (a new file renamed over the old) and returns path.
func writeTokens(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path+".new", []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	return path
}
