package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/syncbuf"
)

// TestBareHTTP runs grpcecho with --http-listen and checks its answers:
// 200 with a protobuf content type for OTLP/HTTP exports, 204 for remote
// write, and 405 for what it does not serve.
func TestBareHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"}, &stderr) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	addr := regexp.MustCompile(`bare OTLP/HTTP and remote write on (\S+)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no HTTP address in %q", stderr.String())
		}
	}
	body := bytes.Repeat([]byte{0x0a, 0x00}, 64<<10) // bigger than one read
	for _, c := range []struct {
		method, path string
		status       int
		ctype        string
	}{
		{http.MethodPost, "/v1/metrics", http.StatusOK, "application/x-protobuf"},
		{http.MethodPost, "/v1/logs", http.StatusOK, "application/x-protobuf"},
		{http.MethodPost, "/v1/traces", http.StatusOK, "application/x-protobuf"},
		{http.MethodPost, "/api/v1/write", http.StatusNoContent, ""},
		{http.MethodGet, "/v1/metrics", http.StatusMethodNotAllowed, ""},
	} {
		req, err := http.NewRequest(c.method, base+c.path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: status %d, want %d (%q)", c.method, c.path, resp.StatusCode, c.status, got)
		}
		if c.ctype != "" && (resp.Header.Get("Content-Type") != c.ctype || len(got) != 0) {
			t.Errorf("%s %s: Content-Type %q and %d body bytes, want %q and an empty response", c.method, c.path, resp.Header.Get("Content-Type"), len(got), c.ctype)
		}
	}
}
