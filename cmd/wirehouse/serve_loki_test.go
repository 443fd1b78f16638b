package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// duckSQL runs queries over the lake of dataDir with DuckDB
// (testdata/duckdb_sql.py) and returns their rows.
func duckSQL(t *testing.T, python, dataDir string, queries map[string]string) map[string][][]string {
	t.Helper()
	in, _ := json.Marshal(queries)
	cmd := exec.Command(python, filepath.Join("testdata", "duckdb_sql.py"), filepath.Join(dataDir, "lake"))
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("duckdb_sql.py: %v\n%s", err, stderr)
	}
	var res map[string][][]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// lokiGet GETs a Loki API path from admin and decodes its data.
func lokiGet(t *testing.T, admin, path string, params url.Values, data any) {
	t.Helper()
	resp, err := http.Get("http://" + admin + path + "?" + params.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s %v: %d %s", path, params, resp.StatusCode, b)
	}
	var env struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Status != "success" {
		t.Fatalf("GET %s: %v %s", path, err, b)
	}
	if err := json.Unmarshal(env.Data, data); err != nil {
		t.Fatalf("GET %s: data: %v", path, err)
	}
}

// TestServeLokiClients: logs from telemetrygen and the OpenTelemetry
// Python SDK are readable through Loki's API the moment they are
// acknowledged, and after a restart from the Parquet files; line counts,
// a line filter, a metric by level and a label filter on an attribute
// equal DuckDB's answers over the same files.
func TestServeLokiClients(t *testing.T) {
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs the OpenTelemetry Python SDK and DuckDB in a venv")
	tgen := peerFromEnv(t, "WIREHOUSE_TELEMETRYGEN", "installs telemetrygen")
	dataDir := filepath.Join(t.TempDir(), "data")
	addrs, stop := startServeAt(t, dataDir, "--lake-max-delay", "1h")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, run := range [][]string{
		{"--logs", "40", "--body", "checkout timeout after 30s", "--severity-text", "Error", "--severity-number", "17"},
		{"--logs", "60", "--body", "checkout completed", "--severity-text", "Info", "--severity-number", "9"},
	} {
		args := append([]string{"logs", "--otlp-insecure", "--otlp-endpoint", addrs["OTLP/gRPC"], "--service", "tg-logs", "--rate", "0"}, run...)
		if out, err := exec.CommandContext(ctx, tgen, args...).CombinedOutput(); err != nil {
			t.Fatalf("telemetrygen %v: %v\n%s", args, err, out)
		}
	}
	const n = 30
	out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "pysdk_export.py"), addrs["OTLP/gRPC"], "http://"+addrs["OTLP/HTTP"], strconv.Itoa(n)).Output()
	if err != nil {
		t.Fatalf("pysdk_export.py: %v\n%s", err, out)
	}
	now := time.Now()
	window := url.Values{"start": {strconv.FormatInt(now.Add(-time.Hour).UnixNano(), 10)}, "end": {strconv.FormatInt(now.Add(time.Minute).UnixNano(), 10)}}
	with := func(kv ...string) url.Values {
		p := url.Values{}
		for k, v := range window {
			p[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			p.Set(kv[i], kv[i+1])
		}
		return p
	}
	type streams []struct {
		Stream map[string]string `json:"stream"`
		Values [][2]string       `json:"values"`
	}
	lines := func(admin, q string) int {
		var d struct{ Result streams }
		lokiGet(t, admin, "/loki/api/v1/query_range", with("query", q, "limit", "1000"), &d)
		n := 0
		for _, s := range d.Result {
			n += len(s.Values)
		}
		return n
	}
	byLevel := func(admin, q string) map[string]string {
		var d struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			}
		}
		p := url.Values{"query": {q}, "time": {strconv.FormatInt(now.Add(time.Minute).UnixNano(), 10)}}
		lokiGet(t, admin, "/loki/api/v1/query", p, &d)
		out := map[string]string{}
		for _, r := range d.Result {
			out[r.Metric["detected_level"]] = fmt.Sprint(r.Value[1])
		}
		return out
	}
	queries := map[string]string{
		"tg":           `{service_name="tg-logs"}`,
		"timeout":      `{service_name="tg-logs"} |= "timeout"`,
		"py":           `{service_name="py-sdk-test"}`,
		"py attribute": `{service_name="py-sdk-test"} | test_id >= 10 | test_transport="http"`,
	}
	check := func(stage, admin string, want map[string]int, wantLevels map[string]string) {
		t.Helper()
		for name, q := range queries {
			if got := lines(admin, q); got != want[name] {
				t.Errorf("%s: %s: %d lines, want %d", stage, q, got, want[name])
			}
		}
		if got := byLevel(admin, `sum by (detected_level) (count_over_time({service_name="tg-logs"}[2h]))`); !mapsEqual(got, wantLevels) {
			t.Errorf("%s: levels %v, want %v", stage, got, wantLevels)
		}
		var labels []string
		lokiGet(t, admin, "/loki/api/v1/labels", window, &labels)
		var svcs []string
		lokiGet(t, admin, "/loki/api/v1/label/service_name/values", window, &svcs)
		if !slices.Contains(labels, "service_name") || !slices.Contains(svcs, "tg-logs") || !slices.Contains(svcs, "py-sdk-test") {
			t.Errorf("%s: labels %v, service names %v", stage, labels, svcs)
		}
	}
	// What was sent, counted: the fresh reads, before any file.
	sent := map[string]int{"tg": 100, "timeout": 40, "py": 2 * n, "py attribute": n}
	check("acknowledged", addrs["admin HTTP"], sent, map[string]string{"error": "40", "info": "60"})
	stop()

	// DuckDB over the files the clean stop wrote, and the API again.
	duck := duckSQL(t, python, dataDir, map[string]string{
		"tg":           `SELECT count(*) FROM {logs} WHERE service_name = 'tg-logs'`,
		"timeout":      `SELECT count(*) FROM {logs} WHERE service_name = 'tg-logs' AND body LIKE '%timeout%'`,
		"py":           `SELECT count(*) FROM {logs} WHERE service_name = 'py-sdk-test'`,
		"py attribute": `SELECT count(*) FROM {logs} WHERE service_name = 'py-sdk-test' AND coalesce(attr_test_id, CAST(attributes['test.id'] AS BIGINT)) >= 10 AND coalesce(attr_test_transport, attributes['test.transport']) = 'http'`,
		"levels":       `SELECT lower(severity_text), count(*) FROM {logs} WHERE service_name = 'tg-logs' GROUP BY ALL`,
	})
	want := map[string]int{}
	for name := range queries {
		want[name], _ = strconv.Atoi(duck[name][0][0])
	}
	levels := map[string]string{}
	for _, row := range duck["levels"] {
		levels[row[0]] = row[1]
	}
	if !mapsEqual(map[string]string{"tg": fmt.Sprint(want["tg"]), "timeout": fmt.Sprint(want["timeout"]), "py": fmt.Sprint(want["py"])},
		map[string]string{"tg": "100", "timeout": "40", "py": fmt.Sprint(2 * n)}) {
		t.Fatalf("DuckDB counts %v differ from what was sent", want)
	}
	addrs, _ = startServeAt(t, dataDir, "--lake-max-delay", "1h")
	check("from the files, against DuckDB", addrs["admin HTTP"], want, levels)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
