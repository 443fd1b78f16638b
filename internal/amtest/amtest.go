// Package amtest runs the real Alertmanager for tests (Debian's
// prometheus-alertmanager, named by WIREHOUSE_ALERTMANAGER, which `make
// test` installs) and records what its webhook receiver is sent.
package amtest

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Webhook records the notifications an Alertmanager's webhook receiver
// posts (its documented payload).
type Webhook struct {
	mu    sync.Mutex
	posts []post
}

type post struct {
	Status string `json:"status"`
	Alerts []struct {
		Status       string            `json:"status"`
		Labels       map[string]string `json:"labels"`
		Annotations  map[string]string `json:"annotations"`
		StartsAt     time.Time         `json:"startsAt"`
		GeneratorURL string            `json:"generatorURL"`
	} `json:"alerts"`
}

// ServeHTTP records a notification.
func (h *Webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p post
	if err := json.NewDecoder(r.Body).Decode(&p); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.posts = append(h.posts, p)
	h.mu.Unlock()
}

// Alerts returns every alert posted with alertname name, in the order
// they came (one per notification that held it).
func (h *Webhook) Alerts(name string) (out []Alert) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.posts {
		for _, a := range p.Alerts {
			if a.Labels["alertname"] == name {
				out = append(out, Alert{a.Status, a.Labels, a.Annotations, a.GeneratorURL, a.StartsAt})
			}
		}
	}
	return out
}

// Alert is an alert as a notification gave it.
type Alert struct {
	Status       string
	Labels       map[string]string
	Annotations  map[string]string
	GeneratorURL string
	StartsAt     time.Time
}

// Start runs the real Alertmanager (WIREHOUSE_ALERTMANAGER) with one
// route, grouping by alertname and tenant with no wait, to a webhook
// receiver served by a test server of its own for the test's duration;
// it returns the Alertmanager's base URL and what the webhook records.
func Start(t *testing.T) (string, *Webhook) {
	t.Helper()
	hook := &Webhook{}
	hs := httptest.NewServer(hook)
	t.Cleanup(hs.Close)
	return start(t, hs.URL), hook
}

// start runs the Alertmanager with its webhook at hook and returns its
// base URL.
func start(t *testing.T, hook string) string {
	t.Helper()
	bin := os.Getenv("WIREHOUSE_ALERTMANAGER")
	if bin == "" {
		t.Skip("WIREHOUSE_ALERTMANAGER not set; `make test` installs Debian's prometheus-alertmanager and sets it")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(conf, []byte(`route:
  receiver: hook
  group_by: [alertname, tenant]
  group_wait: 0s
  group_interval: 1s
  repeat_interval: 1h
receivers:
- name: hook
  webhook_configs:
  - url: `+hook+`
    send_resolved: true
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		cmd := exec.Command(bin, "--config.file="+conf, "--storage.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+addr, "--cluster.listen-address=")
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		base := "http://" + addr
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			select {
			case <-exited:
				if attempt < 3 && strings.Contains(out.String(), "address already in use") {
					goto retry
				}
				t.Fatalf("alertmanager exited:\n%s", out.String())
			default:
			}
			if resp, err := http.Get(base + "/-/ready"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					t.Cleanup(func() {
						cmd.Process.Kill()
						<-exited
					})
					return base
				}
			}
		}
		cmd.Process.Kill()
		<-exited
		t.Fatalf("alertmanager not ready:\n%s", out.String())
	retry:
	}
}
