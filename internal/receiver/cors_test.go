package receiver

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bearer"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// preflight sends a browser's CORS preflight for a POST with headers.
func preflight(t *testing.T, url, origin, headers string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodOptions, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", http.MethodPost)
	if headers != "" {
		req.Header.Set("Access-Control-Request-Headers", headers)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func TestCORS(t *testing.T) {
	// Without a policy, a preflight is refused and no CORS header is sent.
	r, _ := start(t, testConfig())
	if resp := preflight(t, httpURL(r, otlpwire.SignalLogs), "https://app.example.com", "content-type"); resp.StatusCode != http.StatusMethodNotAllowed ||
		resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight without CORS: %d %v", resp.StatusCode, resp.Header)
	}

	// With a policy and bearer tokens: preflights need no token, exports
	// do, and allowed origins see the answers.
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(tokenA+" a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := bearer.Load(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	cfg.CORS = CORSConfig{AllowedOrigins: []string{"https://app.example.com", "https://*.example.org"}, AllowedHeaders: []string{"X-Trace-Source"}, MaxAge: 10 * time.Minute}
	cfg.Authenticator = tokens
	r, rec := start(t, cfg)
	url := httpURL(r, otlpwire.SignalLogs)
	for _, tc := range []struct {
		name            string
		origin, headers string
		allowed         bool
	}{
		{"listed origin", "https://app.example.com", "authorization,content-type", true}, // as browsers send them: sorted, lower case
		{"listed header", "https://app.example.com", "content-encoding,content-type,x-trace-source", true},
		{"wildcard origin", "https://shop.example.org", "content-type", true},
		{"unlisted origin", "https://evil.example.com", "content-type", false},
		{"other scheme", "http://app.example.com", "content-type", false},
		{"unlisted header", "https://app.example.com", "content-type,x-other", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := preflight(t, url, tc.origin, tc.headers)
			got := resp.Header.Get("Access-Control-Allow-Origin")
			if resp.StatusCode != http.StatusNoContent || (got == tc.origin) != tc.allowed {
				t.Errorf("preflight: %d, Allow-Origin %q; want allowed %v", resp.StatusCode, got, tc.allowed)
				return
			}
			if !tc.allowed {
				return
			}
			h := resp.Header
			if h.Get("Access-Control-Allow-Methods") != http.MethodPost || h.Get("Access-Control-Max-Age") != "600" ||
				h.Get("Access-Control-Allow-Credentials") != "" || !strings.EqualFold(h.Get("Access-Control-Allow-Headers"), tc.headers) {
				t.Errorf("preflight: headers %v", h)
			}
		})
	}
	// The export itself, as the browser sends it after the preflight.
	status, h, resp := post(t, url, logsBody(3), "Content-Type", "application/x-protobuf", "Origin", "https://app.example.com", "Authorization", "Bearer "+tokenA)
	if status != http.StatusOK || h.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(h.Get("Vary"), "Origin") {
		t.Errorf("export from an allowed origin: %d %v %s", status, h, resp)
	}
	status, h, _ = post(t, url, logsBody(3), "Content-Type", "application/x-protobuf", "Origin", "https://app.example.com")
	if status != http.StatusUnauthorized || h.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("export without a token: %d %v; want 401 the page can read", status, h)
	}
	status, h, _ = post(t, url, logsBody(3), "Content-Type", "application/x-protobuf", "Origin", "https://evil.example.com", "Authorization", "Bearer "+tokenA)
	if h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("export from another origin: %d, Allow-Origin %q", status, h.Get("Access-Control-Allow-Origin"))
	}
	if n := len(rec.bodies(otlpwire.SignalLogs)); n != 2 {
		t.Errorf("%d exports reached the sink, want the two with a token", n)
	}
	if !bytes.Equal(rec.bodies(otlpwire.SignalLogs)[0], logsBody(3)) {
		t.Error("the sink got other bytes")
	}

	bad := testConfig()
	bad.CORS.AllowedOrigins = []string{"https://*.*.example.com"}
	if _, err := New(bad, pipeline.Sinks{}); err == nil {
		t.Error("an origin with two wildcards accepted")
	}
}
