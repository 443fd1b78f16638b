package lokiapi_test

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/wirehouse/wirehouse/internal/lakeread/lakereadtest"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// jsonLogs is a request of records with JSON bodies (level, latency_ms,
// route), for the json parser.
func jsonLogs(t *testing.T, start time.Time, n int) []byte {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "json-api")
	rl.Resource().Attributes().PutStr("k8s.namespace.name", "edge")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("jsonlogger")
	levels := []string{"info", "warn", "error"}
	routes := []string{"/a", "/b", "/c"}
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Second)))
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.Body().SetStr(fmt.Sprintf(`{"level":%q,"latency_ms":%d,"route":%q,"user":{"id":%d}}`, levels[i%3], (i*37)%500, routes[i%3], i%7))
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgainstDuckDB: each kind of query the API takes — selectors over
// the service, a resource label, the level and the scope; chained line
// filters; logfmt and json with label filters; line_format; count, rate,
// bytes, unwrapped max, topk — gives what DuckDB computes from the same
// Parquet files with SQL of its own.
func TestAgainstDuckDB(t *testing.T) {
	python := os.Getenv("WIREHOUSE_PYTHON")
	if python == "" {
		t.Skip("WIREHOUSE_PYTHON not set; `make test` installs DuckDB in a venv and sets it")
	}
	start := time.Date(2026, 6, 2, 8, 0, 0, 0, time.UTC)
	var bodies [][]byte
	for i := range 5 {
		bodies = append(bodies, synth.Logs(synth.Config{Seed: int64(50 + i), Resources: 3, ScopesPerResource: 2, TotalRecords: 400, Start: start.Add(time.Duration(i) * 10 * time.Minute)}))
	}
	bodies = append(bodies, jsonLogs(t, start.Add(5*time.Minute), 300))
	base, dir := lokiServerDir(t, bodies...)
	end := start.Add(90 * time.Minute)
	// The records' times: [start-1h, end]; queries cover it all.
	from := start.Add(-2 * time.Hour)
	// A record without a time has its observed time, as Loki's OTLP
	// ingestion takes it.
	const ts = "(CASE WHEN epoch_ns(timestamp) = 0 THEN observed_timestamp ELSE timestamp END)"
	sqlWhere := fmt.Sprintf("%s >= '%s'::TIMESTAMPTZ_NS AND %s <= '%s'::TIMESTAMPTZ_NS", ts, from.Format(time.RFC3339), ts, end.Format(time.RFC3339))
	lines := map[string][2]string{ // LogQL → SQL counting the same lines
		"service":       {`{service_name="json-api"}`, `service_name = 'json-api'`},
		"resource":      {`{k8s_namespace_name="shop"}`, `resource_attributes->>'$."k8s.namespace.name"' = 'shop'`},
		"level":         {`{service_name=~".+", detected_level="error"}`, `severity_number BETWEEN 17 AND 20`},
		"level alias":   {`{service_name=~".+", level=~"warn|fatal"}`, `(severity_number BETWEEN 13 AND 16 OR severity_number BETWEEN 21 AND 24)`},
		"scope":         {`{scope_name="jsonlogger"}`, `scope_name = 'jsonlogger'`},
		"line filters":  {`{service_name=~".+"} |= "payment" != "order 1" |~ "amount=\\d+" !~ "amount=9"`, `body LIKE '%payment%' AND body NOT LIKE '%order 1%' AND regexp_matches(body, 'amount=\d+') AND NOT regexp_matches(body, 'amount=9')`},
		"logfmt filter": {`{service_name=~".+"} |= "request done" | logfmt | status >= 500`, `body LIKE '%request done%' AND TRY_CAST(regexp_extract(body, 'status=(\d+)', 1) AS INTEGER) >= 500`},
		"json filter":   {`{service_name="json-api"} | json | level="warn" and latency_ms > 100`, `service_name = 'json-api' AND json_extract_string(body, '$.level') = 'warn' AND CAST(json_extract(body, '$.latency_ms') AS DOUBLE) > 100`},
		"json nested":   {`{service_name="json-api"} | json | user_id = 3`, `service_name = 'json-api' AND CAST(json_extract(body, '$.user.id') AS INTEGER) = 3`},
	}
	metrics := map[string][2]string{ // LogQL at end (range covers all) → SQL: group, value
		"count by service": {`sum by (service_name) (count_over_time({service_name=~".+"}[4h]))`, `SELECT service_name, count(*) FROM {logs} WHERE ` + sqlWhere + ` GROUP BY ALL`},
		"bytes by level":   {`sum by (severity_text) (bytes_over_time({service_name=~".+"}[4h]))`, `SELECT severity_text, sum(strlen(body)) FROM {logs} WHERE ` + sqlWhere + ` GROUP BY ALL`},
		"rate":             {`sum(rate({service_name="json-api"}[4h]))`, `SELECT '', count(*) / 14400.0 FROM {logs} WHERE service_name = 'json-api' AND ` + sqlWhere},
		"max unwrapped":    {`max by (route) (max_over_time({service_name="json-api"} | json | unwrap latency_ms [4h]))`, `SELECT json_extract_string(body, '$.route'), max(CAST(json_extract(body, '$.latency_ms') AS DOUBLE)) FROM {logs} WHERE service_name = 'json-api' AND ` + sqlWhere + ` GROUP BY ALL`},
		"topk":             {`topk(2, sum by (service_name) (count_over_time({service_name=~".+"}[4h])))`, `SELECT service_name, count(*) AS n FROM {logs} WHERE ` + sqlWhere + ` GROUP BY ALL ORDER BY n DESC LIMIT 2`},
	}
	sql := map[string]string{}
	for name, q := range lines {
		sql[name] = `SELECT count(*) FROM {logs} WHERE ` + q[1] + ` AND ` + sqlWhere
	}
	for name, q := range metrics {
		sql[name] = q[1]
	}
	sql["line_format"] = `SELECT DISTINCT json_extract_string(body, '$.route') FROM {logs} WHERE service_name = 'json-api'`
	duck := lakereadtest.DuckDB(t, python, dir, sql)

	window := url.Values{"start": {strconv.FormatInt(from.UnixNano(), 10)}, "end": {strconv.FormatInt(end.UnixNano(), 10)}, "limit": {"5000"}}
	for name, q := range lines {
		p := url.Values{"query": {q[0]}}
		for k, v := range window {
			p[k] = v
		}
		var res streamsResponse
		if code, body := get(t, base, "/loki/api/v1/query_range", p, &res); code != http.StatusOK {
			t.Fatalf("%s: %d %s", name, code, body)
		}
		n := 0
		for _, s := range res.Data.Result {
			n += len(s.Values)
		}
		want, _ := strconv.Atoi(duck[name][0][0])
		if n != want || want == 0 {
			t.Errorf("%s: %s: %d lines, DuckDB %d", name, q[0], n, want)
		}
	}
	for name, q := range metrics {
		p := url.Values{"query": {q[0]}, "time": {strconv.FormatInt(end.UnixNano(), 10)}}
		var res struct {
			Data struct {
				ResultType string `json:"resultType"`
				Result     []struct {
					Metric map[string]string `json:"metric"`
					Value  [2]any            `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if code, body := get(t, base, "/loki/api/v1/query", p, &res); code != http.StatusOK {
			t.Fatalf("%s: %d %s", name, code, body)
		}
		got := map[string]float64{}
		for _, r := range res.Data.Result {
			g := ""
			for _, v := range r.Metric {
				g = v
			}
			got[g], _ = strconv.ParseFloat(r.Value[1].(string), 64)
		}
		want := map[string]float64{}
		for _, row := range duck[name] {
			want[row[0]], _ = strconv.ParseFloat(row[1], 64)
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Errorf("%s: %v, DuckDB %v", name, got, want)
			continue
		}
		for k, w := range want {
			if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
				t.Errorf("%s: %q = %v, DuckDB %v", name, k, got[k], w)
			}
		}
	}
	// line_format: the lines become the routes.
	p := url.Values{"query": {`{service_name="json-api"} | json | line_format "{{.route}}"`}}
	for k, v := range window {
		p[k] = v
	}
	var res streamsResponse
	get(t, base, "/loki/api/v1/query_range", p, &res)
	routes := map[string]bool{}
	for _, s := range res.Data.Result {
		for _, v := range s.Values {
			routes[v[1]] = true
		}
	}
	var got, want []string
	for r := range routes {
		got = append(got, r)
	}
	for _, row := range duck["line_format"] {
		want = append(want, row[0])
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("line_format routes %v, DuckDB %v", got, want)
	}
}
