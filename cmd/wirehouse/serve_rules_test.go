package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/amtest"
)

// alertStates returns the active alerts of /api/v1/alerts by name: state
// and active-since.
func alertStates(t *testing.T, admin string) map[string]struct {
	State    string
	ActiveAt time.Time
} {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/api/v1/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d struct {
		Data struct {
			Alerts []struct {
				Labels   map[string]string
				State    string
				ActiveAt time.Time
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		State    string
		ActiveAt time.Time
	}{}
	for _, a := range d.Data.Alerts {
		out[a.Labels["alertname"]] = struct {
			State    string
			ActiveAt time.Time
		}{a.State, a.ActiveAt}
	}
	return out
}

// TestServeRulesKill9: serve is killed with SIGKILL while one alert is
// pending (for: 30m) and another firing and notified. After a restart
// the pending one is pending again, its time pending before the kill
// restored from ALERTS_FOR_STATE (as Prometheus restores it: the outage
// does not count toward for), and the real Alertmanager's
// webhook has had exactly one firing notification of the other: the
// restarted server's re-sent alert is the one Alertmanager has, grouped
// away. SIGHUP then loads a changed rule file.
func TestServeRulesKill9(t *testing.T) {
	am, hook := amtest.Start(t)
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yml")
	const body = `groups:
- name: kill
  rules:
  - alert: SlowBurn
    expr: kill_gauge > 10
    for: 30m
  - alert: FastBurn
    expr: kill_gauge > 10
`
	if err := os.WriteFile(rules, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	flags := []string{"--rules-files", rules, "--rules-evaluation-interval", "1s", "--alertmanager-url", am}
	p := startServeProc(t, data, flags...)
	if code := remoteWrite(t, p.addrs["admin HTTP"], "kill_gauge", []int{20}, time.Now()); code != http.StatusNoContent {
		t.Fatalf("remote write: %d", code)
	}
	var pendingSince time.Time
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := alertStates(t, p.addrs["admin HTTP"])
		if st["SlowBurn"].State == "pending" && st["FastBurn"].State == "firing" && len(hook.Alerts("FastBurn")) > 0 {
			pendingSince = st["SlowBurn"].ActiveAt
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alerts before the kill: %v, webhook %v\n%s", st, hook.Alerts("FastBurn"), p.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(8 * time.Second) // pending for 8 s more, ALERTS_FOR_STATE written at each evaluation
	killed := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()

	p = startServeProc(t, data, flags...)
	defer p.stop(t)
	// A group restores its alerts' state after its second evaluation
	// (the first may lack data), as Prometheus does.
	time.Sleep(3 * time.Second)
	deadline = time.Now().Add(20 * time.Second)
	for {
		st := alertStates(t, p.addrs["admin HTTP"])
		if s, ok := st["SlowBurn"]; ok {
			// Prometheus' restore (rules.Group.RestoreForState): the
			// time pending before the kill counts, the outage does not:
			// active-since moves later by the outage, to the second
			// ALERTS_FOR_STATE stores. A state not restored would start
			// pending now.
			pendedBefore := killed.Sub(pendingSince)
			pendedNow := time.Since(s.ActiveAt)
			t.Logf("SlowBurn pending %v before the kill, %v after the restart", pendedBefore, pendedNow)
			if s.State != "pending" || s.ActiveAt.Before(pendingSince.Truncate(time.Second)) || pendedNow < pendedBefore-1500*time.Millisecond {
				t.Errorf("SlowBurn after the restart: %s since %v (pending %v); before the kill: pending since %v (%v)",
					s.State, s.ActiveAt, pendedNow, pendingSince, pendedBefore)
			}
			if st["FastBurn"].State != "firing" {
				t.Errorf("FastBurn after the restart: %+v", st["FastBurn"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no SlowBurn after the restart: %v\n%s", st, p.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The restarted server sends FastBurn again at once; Alertmanager
	// has notified it already and repeats it only after an hour.
	time.Sleep(5 * time.Second)
	if n := len(hook.Alerts("FastBurn")); n != 1 {
		t.Errorf("FastBurn notified %d times, want once: %+v", n, hook.Alerts("FastBurn"))
	}
	if n := len(hook.Alerts("SlowBurn")); n != 0 {
		t.Errorf("the pending SlowBurn notified: %+v", hook.Alerts("SlowBurn"))
	}

	// SIGHUP: a third rule, loaded at once. (The ruler's own watch of the
	// files may load it first; the SIGHUP is then logged a moment after.)
	if err := os.WriteFile(rules, []byte(body+"  - record: kill:gauge\n    expr: kill_gauge\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/api/v1/rules?type=record")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		hup := strings.Contains(p.stderr.String(), "SIGHUP: loading the rule files again")
		if strings.Contains(string(b), `"name":"kill:gauge"`) && hup {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recording rule not loaded, or no SIGHUP reload logged (%v), after SIGHUP: %s\n%s", hup, b, p.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
