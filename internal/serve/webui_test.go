package serve

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestServeWebUI: the admin port serves the pages, and the status API the
// sampler's history with the settings in brief, the bound addresses
// among them.
func TestServeWebUI(t *testing.T) {
	s := startServer(t, testConfig(t))
	admin := "http://" + s.Addrs().Admin.String()
	for _, path := range []string{"/", "/graph", "/traces", "/logs"} {
		if code, body := get(t, admin+path); code != 200 || !strings.Contains(body, `<script type="module" src="/static/js/app.js">`) {
			t.Errorf("GET %s: %d, not the page", path, code)
		}
	}
	var st struct {
		Times    []int64
		Settings []struct{ Name, Value string }
	}
	for deadline := time.Now().Add(10 * time.Second); len(st.Times) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no sample in the status history")
		}
		code, body := get(t, admin+"/api/wirehouse/status")
		if code != 200 {
			t.Fatalf("status: %d %s", code, body)
		}
		if err := json.Unmarshal([]byte(body), &st); err != nil {
			t.Fatal(err)
		}
	}
	settings := map[string]string{}
	for _, kv := range st.Settings {
		settings[kv.Name] = kv.Value
	}
	if settings["Admin HTTP"] != s.Addrs().Admin.String() || settings["Stored"] != "logs, traces, metrics" || settings["Admin bearer tokens"] != "off" {
		t.Errorf("settings %v", settings)
	}
}
