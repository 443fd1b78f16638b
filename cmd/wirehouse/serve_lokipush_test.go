package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeLokiPushClients: two Python Loki handlers from PyPI
// (python-logging-loki in both its JSON shapes, loki-logger-handler with
// gzip and structured metadata) push to serve's OTLP/HTTP port and to its
// admin port; every line they pushed reads back through Loki's
// query_range once, with the labels and metadata it was pushed with.
func TestServeLokiPushClients(t *testing.T) {
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs python-logging-loki and loki-logger-handler in a venv")
	addrs := startServe(t, "--lake-max-delay", "1h")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 25
	for job, addr := range map[string]string{"pyloki-otlp": addrs["OTLP/HTTP"], "pyloki-admin": addrs["admin HTTP"]} {
		out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "loki_push.py"), "http://"+addr+"/loki/api/v1/push", strconv.Itoa(n), job).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "pushed") {
			t.Fatalf("loki_push.py to %s: %v\n%s", addr, err, out)
		}
	}
	now := time.Now()
	for _, job := range []string{"pyloki-otlp", "pyloki-admin"} {
		var d struct {
			Result []struct {
				Stream map[string]string `json:"stream"`
				Values [][2]string       `json:"values"`
			} `json:"result"`
		}
		lokiGet(t, addrs["admin HTTP"], "/loki/api/v1/query_range", url.Values{"query": {`{job="` + job + `"}`}, "limit": {"1000"},
			"start": {strconv.FormatInt(now.Add(-time.Hour).UnixNano(), 10)}, "end": {strconv.FormatInt(now.Add(time.Minute).UnixNano(), 10)}}, &d)
		var lines []string
		for _, s := range d.Result {
			h := s.Stream["handler"]
			// Each handler's labels as pushed (python-logging-loki adds
			// severity and logger; loki-logger-handler sends metadata),
			// and the service name Loki derives from job.
			want := map[string]string{"job": job, "service_name": job}
			switch h {
			case "pll-v1", "pll-v0":
				want["severity"], want["logger"] = "info", h
			case "llh":
				want["tenant_tag"] = "blue"
			default:
				t.Errorf("%s: a stream of handler %q: %v", job, h, s.Stream)
			}
			for k, v := range want {
				if s.Stream[k] != v {
					t.Errorf("%s: stream %v: %s=%q, want %q", job, s.Stream, k, s.Stream[k], v)
				}
			}
			for _, v := range s.Values {
				line := v[1]
				if h == "llh" { // a JSON object of the record, its default
					var rec struct{ Message string }
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Errorf("%s: llh's line %q: %v", job, line, err)
					}
					line = rec.Message
				}
				if !strings.HasPrefix(line, h+" line ") {
					t.Errorf("%s: handler %s's stream holds %q", job, h, v[1])
				}
				lines = append(lines, line)
			}
		}
		var want []string
		for _, h := range []string{"pll-v1", "pll-v0", "llh"} {
			for i := range n {
				want = append(want, fmt.Sprintf("%s line %d", h, i))
			}
		}
		slices.Sort(lines)
		slices.Sort(want)
		if !slices.Equal(lines, want) {
			t.Errorf("%s: %d lines read back, want the %d pushed, each once:\n%v", job, len(lines), len(want), lines)
		}
	}
}
