package tempohttp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/lakeread/lakereadtest"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/internal/tempohttp"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// freshFor is a lakeread.Fresh holding requests of one tenant that no
// file holds.
type freshFor struct {
	tenant string
	bodies [][]byte
}

func (f freshFor) Fresh(_ context.Context, sig otlpwire.Signal, tenant string, fn func([]byte) error) (uint64, error) {
	if sig != otlpwire.SignalTraces || tenant != f.tenant {
		return 0, nil
	}
	for _, b := range f.bodies {
		if err := fn(b); err != nil {
			return 0, err
		}
	}
	return 1 << 62, nil
}

// TestTraceQLAgainstDuckDB: TraceQL searches (spanset filters over
// intrinsics, span and resource attributes, events; && and || of
// spansets; the structural operators; aggregate filters; trace-level
// intrinsics) find the traces DuckDB finds with SQL of its own over the
// same Parquet files, and the same traces when the spans are not in files
// yet (tenant "fresh": the same requests, from the spool's side).
func TestTraceQLAgainstDuckDB(t *testing.T) {
	python := os.Getenv("WIREHOUSE_PYTHON")
	if python == "" {
		t.Skip("WIREHOUSE_PYTHON not set; `make test` installs DuckDB in a venv and sets it")
	}
	start := time.Now().Add(-30 * time.Minute).Truncate(time.Second)
	var bodies [][]byte
	for i := range 2 {
		bodies = append(bodies, synth.Traces(synth.Config{Seed: int64(70 + i), Resources: 8, ScopesPerResource: 1, TotalRecords: 1400,
			Start: start.Add(time.Duration(i) * 5 * time.Minute)}))
	}
	dir := t.TempDir()
	lakeBody := slices.Concat(bodies...) // requests concatenate: repeated fields
	r := lakereadtest.ReaderAt(t, dir, map[string][]byte{"lake": lakeBody},
		func(c *lakeread.Config) { c.Fresh = freshFor{"fresh", bodies} })
	h, err := tempohttp.New(tempohttp.Config{Reader: r, Tenant: "lake", TenantHeader: "X-Scope-OrgID", AnyTenant: true})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux, "/tempo")
	srv := httptest.NewServer(mux)
	defer srv.Close()

	const spans = "{traces}"
	where := func(cond string) string {
		return "SELECT DISTINCT trace_id FROM " + spans + " WHERE " + cond
	}
	attr := func(k string) string { return fmt.Sprintf("attributes['%s']", k) }
	intAttr := func(k string) string { return fmt.Sprintf("TRY_CAST(attributes['%s'] AS BIGINT)", k) }
	res := func(k string) string { return fmt.Sprintf(`(resource_attributes->>'$."%s"')`, k) }
	// traceLevel are per-trace intrinsics: the root (no parent) and the
	// trace's span of time.
	const traceLevel = `WITH s AS (SELECT * FROM {traces}),
		t AS (SELECT trace_id, epoch_ns(max(end_time)) - epoch_ns(min(start_time)) AS dur FROM s GROUP BY trace_id),
		r AS (SELECT trace_id, arg_min(name, start_time) AS root_name, arg_min(service_name, start_time) AS root_service FROM s WHERE parent_span_id IS NULL GROUP BY trace_id)
		SELECT t.trace_id FROM t LEFT JOIN r USING (trace_id) WHERE `
	// ancestors: each span and each of its ancestors (synth's traces are
	// at most 8 spans deep).
	const withAnc = `WITH RECURSIVE s AS (SELECT * FROM {traces}),
		anc(trace_id, span_id, anc_id, depth) AS (
			SELECT trace_id, span_id, parent_span_id, 1 FROM s WHERE parent_span_id IS NOT NULL
			UNION ALL
			SELECT a.trace_id, a.span_id, p.parent_span_id, a.depth + 1 FROM anc a JOIN s p ON p.trace_id = a.trace_id AND p.span_id = a.anc_id
			WHERE p.parent_span_id IS NOT NULL AND a.depth < 20)
		`
	cases := []struct{ q, sql string }{
		{`{ resource.service.name = "frontend" }`, where(`service_name = 'frontend'`)},
		{`{ resource.service.name != "frontend" && kind = client }`, where(`service_name <> 'frontend' AND kind = 'SPAN_KIND_CLIENT'`)},
		{`{ kind = server }`, where(`kind = 'SPAN_KIND_SERVER'`)},
		{`{ kind = producer || kind = consumer }`, where(`kind IN ('SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER')`)},
		{`{ status = error }`, where(`status_code = 'STATUS_CODE_ERROR'`)},
		{`{ status != error && status != unset }`, where(`status_code = 'STATUS_CODE_OK'`)},
		{`{ statusMessage = "connection refused" }`, where(`status_message = 'connection refused'`)},
		{`{ span.http.response.status_code >= 500 }`, where(intAttr("http.response.status_code") + ` >= 500`)},
		{`{ span.http.response.status_code = 404 || span.http.response.status_code = 503 }`, where(intAttr("http.response.status_code") + ` IN (404, 503)`)},
		{`{ span.http.request.method = "POST" && kind = server }`, where(attr("http.request.method") + ` = 'POST' AND kind = 'SPAN_KIND_SERVER'`)},
		{`{ .server.port = 5432 }`, where(intAttr("server.port") + ` = 5432`)},
		{`{ span.app.items > 25 }`, where(intAttr("app.items") + ` > 25`)},
		{`{ span.app.items > 10 && span.app.items <= 20 }`, where(intAttr("app.items") + ` > 10 AND ` + intAttr("app.items") + ` <= 20`)},
		{`{ span.db.system.name = "postgresql" && duration < 5ms }`, where(attr("db.system.name") + ` = 'postgresql' AND duration < 5000000`)},
		{`{ duration > 100ms }`, where(`duration > 100000000`)},
		{`{ duration >= 20ms && duration < 40ms }`, where(`duration >= 20000000 AND duration < 40000000`)},
		{`{ name =~ "SELECT.*" }`, where(`regexp_full_match(name, 'SELECT.*')`)},
		{`{ name !~ "(GET|POST) .*" && kind = server }`, where(`NOT regexp_full_match(name, '(GET|POST) .*') AND kind = 'SPAN_KIND_SERVER'`)},
		{`{ span.db.query.text =~ ".*FROM orders.*" }`, where(`regexp_full_match(` + attr("db.query.text") + `, '.*FROM orders.*')`)},
		{`{ resource.deployment.environment.name = "canary" }`, where(res("deployment.environment.name") + ` = 'canary'`)},
		{`{ resource.cloud.region = "eu-west-1" && status = error }`, where(res("cloud.region") + ` = 'eu-west-1' AND status_code = 'STATUS_CODE_ERROR'`)},
		{`{ .k8s.namespace.name = "payments" }`, where(res("k8s.namespace.name") + ` = 'payments'`)},
		{`{ span.rpc.system = nil && kind = client }`, where(attr("rpc.system") + ` IS NULL AND kind = 'SPAN_KIND_CLIENT'`)},
		{`{ span.rpc.system != nil }`, where(attr("rpc.system") + ` IS NOT NULL`)},
		{`{ event:name = "retry" }`, where(`len(list_filter(events, lambda e: e.name = 'retry')) > 0`)},
		{`{ event:name = "cache.miss" && kind = client }`, where(`len(list_filter(events, lambda e: e.name = 'cache.miss')) > 0 AND kind = 'SPAN_KIND_CLIENT'`)},
		{`{ span:parentID = nil && kind = server }`, where(`parent_span_id IS NULL AND kind = 'SPAN_KIND_SERVER'`)},
		// Spansets.
		{`{ resource.service.name = "cart" } && { status = error }`,
			where(`service_name = 'cart'`) + ` INTERSECT ` + where(`status_code = 'STATUS_CODE_ERROR'`)},
		{`{ kind = producer } || { status = error }`, where(`kind = 'SPAN_KIND_PRODUCER'`) + ` UNION ` + where(`status_code = 'STATUS_CODE_ERROR'`)},
		{`{ kind = server } > { kind = client }`, `SELECT DISTINCT c.trace_id FROM {traces} c JOIN {traces} p ON c.trace_id = p.trace_id AND c.parent_span_id = p.span_id
			WHERE p.kind = 'SPAN_KIND_SERVER' AND c.kind = 'SPAN_KIND_CLIENT'`},
		{`{ status = error } < { kind = server }`, `SELECT DISTINCT c.trace_id FROM {traces} c JOIN {traces} p ON c.trace_id = p.trace_id AND c.parent_span_id = p.span_id
			WHERE c.status_code = 'STATUS_CODE_ERROR' AND p.kind = 'SPAN_KIND_SERVER'`},
		{`{ kind = server } >> { name =~ "SELECT.*" }`, withAnc + `SELECT DISTINCT d.trace_id FROM anc JOIN s d ON d.trace_id = anc.trace_id AND d.span_id = anc.span_id
			JOIN s a ON a.trace_id = anc.trace_id AND a.span_id = anc.anc_id WHERE a.kind = 'SPAN_KIND_SERVER' AND regexp_full_match(d.name, 'SELECT.*')`},
		{`{ status = error } << { nestedSetParent < 0 }`, withAnc + `SELECT DISTINCT d.trace_id FROM anc JOIN s d ON d.trace_id = anc.trace_id AND d.span_id = anc.span_id
			JOIN s a ON a.trace_id = anc.trace_id AND a.span_id = anc.anc_id WHERE d.status_code = 'STATUS_CODE_ERROR'
			AND NOT EXISTS (SELECT 1 FROM s p WHERE p.trace_id = a.trace_id AND p.span_id = a.parent_span_id)`}, // a span whose parent is not in the trace is a root of it
		{`{ kind = client } ~ { kind = internal }`, `SELECT DISTINCT a.trace_id FROM {traces} a JOIN {traces} b ON a.trace_id = b.trace_id AND a.parent_span_id = b.parent_span_id AND a.span_id <> b.span_id
			WHERE a.kind = 'SPAN_KIND_CLIENT' AND b.kind = 'SPAN_KIND_INTERNAL'`},
		{`{ kind = server } !> { kind = client }`, `SELECT DISTINCT c.trace_id FROM {traces} c WHERE c.kind = 'SPAN_KIND_CLIENT' AND NOT EXISTS
			(SELECT 1 FROM {traces} p WHERE p.trace_id = c.trace_id AND p.span_id = c.parent_span_id AND p.kind = 'SPAN_KIND_SERVER')`},
		{`{ } !> { }`, `SELECT DISTINCT c.trace_id FROM {traces} c WHERE NOT EXISTS
			(SELECT 1 FROM {traces} p WHERE p.trace_id = c.trace_id AND p.span_id = c.parent_span_id)`},
		// Aggregates.
		{`{ } | count() > 6`, `SELECT trace_id FROM {traces} GROUP BY trace_id HAVING count(*) > 6`},
		{`{ kind = client } | count() >= 3`, `SELECT trace_id FROM {traces} WHERE kind = 'SPAN_KIND_CLIENT' GROUP BY trace_id HAVING count(*) >= 3`},
		{`{ } | avg(duration) > 50ms`, `SELECT trace_id FROM {traces} GROUP BY trace_id HAVING avg(duration) > 50000000`},
		{`{ status = error } | max(duration) > 80ms`, `SELECT trace_id FROM {traces} WHERE status_code = 'STATUS_CODE_ERROR' GROUP BY trace_id HAVING max(duration) > 80000000`},
		{`{ } | min(duration) < 1ms`, `SELECT trace_id FROM {traces} GROUP BY trace_id HAVING min(duration) < 1000000`},
		{`{ } | sum(span.app.items) > 40`, `SELECT trace_id FROM {traces} GROUP BY trace_id HAVING sum(` + intAttr("app.items") + `) > 40`},
		{`{ } | by(resource.service.name) | count() > 5`, `SELECT DISTINCT trace_id FROM {traces} GROUP BY trace_id, service_name HAVING count(*) > 5`},
		// Trace-level intrinsics.
		{`{ rootServiceName = "frontend" }`, traceLevel + `r.root_service = 'frontend'`},
		{`{ rootName =~ "GET.*" && kind = internal }`, traceLevel + `regexp_full_match(r.root_name, 'GET.*') INTERSECT ` + where(`kind = 'SPAN_KIND_INTERNAL'`)},
		{`{ traceDuration > 300ms }`, traceLevel + `t.dur > 300000000`},
	}
	queries := map[string]string{}
	for i, c := range cases {
		queries[fmt.Sprint(i)] = c.sql
	}
	want := lakereadtest.DuckDB(t, python, dir, queries)
	checked := 0
	for i, c := range cases {
		var ids []string
		for _, row := range want[fmt.Sprint(i)] {
			ids = append(ids, row[0])
		}
		slices.Sort(ids)
		if len(ids) == 0 || len(ids) > 900 {
			t.Errorf("%s: DuckDB finds %d traces: the data does not exercise it (or more than a search returns)", c.q, len(ids))
			continue
		}
		for _, tn := range []string{"lake", "fresh"} {
			got := searchAs(t, srv.URL, tn, c.q, start)
			if !slices.Equal(got, ids) {
				t.Errorf("%s (%s): %d traces, DuckDB %d\n only ours:   %v\n only DuckDB: %v", c.q, tn, len(got), len(ids), minus(got, ids), minus(ids, got))
			}
			checked++
		}
	}
	t.Logf("%d queries, each on the lake's files and on fresh spans, equal to DuckDB's", checked/2)

	// TraceQL metrics: the series by step equal DuckDB's GROUP BY of
	// the same spans into the same steps (durations in seconds).
	from, step := start.Add(-time.Hour).Truncate(time.Minute), time.Minute // a whole step: ranges are aligned to steps
	const svc, op = "frontend", "validate-cart"
	// The last service by name: its spans are in a file's last row group
	// (files are sorted by service), after row groups it has none in.
	last := ""
	for _, b := range bodies {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.Traces().ResourceSpans().All() {
			if v, ok := rs.Resource().Attributes().Get("service.name"); ok && v.Str() > last {
				last = v.Str()
			}
		}
	}
	bucket := fmt.Sprintf("(epoch_ns(start_time) - %d) // %d", from.UnixNano(), int64(step))
	metrics := []struct{ q, sql string }{
		{`{ } | count_over_time() by (resource.service.name)`,
			`SELECT service_name, ` + bucket + `, count(*) FROM {traces} GROUP BY ALL`},
		{`{ status = error } | rate() by (kind)`,
			`SELECT lower(replace(kind, 'SPAN_KIND_', '')), ` + bucket + `, count(*) / 60.0 FROM {traces} WHERE status_code = 'STATUS_CODE_ERROR' GROUP BY ALL`},
		{`{ kind = server } | avg_over_time(duration) by (resource.service.name)`,
			`SELECT service_name, ` + bucket + `, avg(duration) / 1e9 FROM {traces} WHERE kind = 'SPAN_KIND_SERVER' GROUP BY ALL`},
		{`{ kind = client } | max_over_time(duration) by (span.db.system.name)`,
			`SELECT attributes['db.system.name'], ` + bucket + `, max(duration) / 1e9 FROM {traces} WHERE kind = 'SPAN_KIND_CLIENT' GROUP BY ALL`},
		{`{ } | quantile_over_time(duration, 0.9) by (resource.service.name)`,
			`SELECT service_name, ` + bucket + `, quantile_cont(duration, 0.9) / 1e9 FROM {traces} GROUP BY ALL`},
		// Span-local queries (read from columns, no trace assembled:
		// eval.SpanSource) of every condition and by() that path takes.
		{`{ } | rate() by (resource.service.name)`,
			`SELECT service_name, ` + bucket + `, count(*) / 60.0 FROM {traces} GROUP BY ALL`},
		{`{ resource.service.name = "` + svc + `" && status = unset && true } | sum_over_time(duration) by (name)`,
			`SELECT name, ` + bucket + `, sum(duration) / 1e9 FROM {traces} WHERE service_name = '` + svc + `' AND status_code = 'STATUS_CODE_UNSET' GROUP BY ALL`},
		{`{ duration > 20ms && duration <= 400ms && kind = client } | min_over_time(duration) by (resource.service.name)`,
			`SELECT service_name, ` + bucket + `, min(duration) / 1e9 FROM {traces} WHERE duration > 20000000 AND duration <= 400000000 AND kind = 'SPAN_KIND_CLIENT' GROUP BY ALL`},
		{`{ name = "` + op + `" } | count_over_time() by (status)`,
			`SELECT lower(replace(status_code, 'STATUS_CODE_', '')), ` + bucket + `, count(*) FROM {traces} WHERE name = '` + op + `' GROUP BY ALL`},
		{`{ resource.service.name = "` + last + `" } | count_over_time() by (name)`,
			`SELECT name, ` + bucket + `, count(*) FROM {traces} WHERE service_name = '` + last + `' GROUP BY ALL`},
		{`{ duration >= 5ms } | avg_over_time(duration) by (name)`,
			`SELECT name, ` + bucket + `, avg(duration) / 1e9 FROM {traces} WHERE duration >= 5000000 GROUP BY ALL`},
	}
	mq := map[string]string{}
	for i, m := range metrics {
		mq[fmt.Sprint(i)] = m.sql
	}
	mwant := lakereadtest.DuckDB(t, python, dir, mq)
	for i, m := range metrics {
		want := map[string]float64{}
		for _, row := range mwant[fmt.Sprint(i)] {
			var v float64
			fmt.Sscan(row[2], &v)
			label := row[0]
			if label == "" { // a null: a span without the field, which a by() keys as nil
				label = "nil"
			}
			want[label+"@"+row[1]] = v
		}
		for _, tn := range []string{"lake", "fresh"} {
			u := fmt.Sprintf("%s/tempo/api/metrics/query_range?q=%s&start=%d&end=%d&step=60s", srv.URL, url.QueryEscape(m.q), from.Unix(), start.Add(time.Hour).Unix())
			req, _ := http.NewRequest("GET", u, nil)
			req.Header.Set("X-Scope-OrgID", tn)
			code, _, b := doReq(t, req)
			if code != http.StatusOK {
				t.Fatalf("%s: %d %s", m.q, code, b)
			}
			var res struct {
				Series []struct {
					Labels []struct {
						Value map[string]any `json:"value"`
					} `json:"labels"`
					Samples []struct {
						TimestampMs string  `json:"timestampMs"`
						Value       float64 `json:"value"`
					} `json:"samples"`
				} `json:"series"`
			}
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			got := map[string]float64{}
			for _, s := range res.Series {
				label := "nil" // the by() value, the first label (quantiles add p)
				if len(s.Labels) > 0 {
					if sv, ok := s.Labels[0].Value["stringValue"].(string); ok {
						label = sv
					}
				}
				for _, p := range s.Samples {
					var ms int64
					fmt.Sscan(p.TimestampMs, &ms)
					got[fmt.Sprintf("%s@%d", label, (ms*int64(time.Millisecond)-from.UnixNano())/int64(step))] = p.Value
				}
			}
			if len(got) != len(want) || len(want) == 0 {
				t.Errorf("%s (%s): %d samples, DuckDB %d", m.q, tn, len(got), len(want))
				continue
			}
			for k, w := range want {
				if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Errorf("%s (%s): %s = %v, DuckDB %v", m.q, tn, k, g, w)
				}
			}
		}
	}
}

// searchAs runs a TraceQL search as tenant over the test's hour and
// returns the traces found, sorted.
func searchAs(t *testing.T, base, tenant, q string, start time.Time) []string {
	t.Helper()
	u := fmt.Sprintf("%s/tempo/api/search?limit=1000&start=%d&end=%d&q=%s", base, start.Add(-time.Hour).Unix(), start.Add(time.Hour).Unix(), url.QueryEscape(q))
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("X-Scope-OrgID", tenant)
	code, _, b := doReq(t, req)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s", q, code, b)
	}
	var res struct {
		Traces []struct {
			TraceID string `json:"traceID"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tr := range res.Traces {
		ids = append(ids, tr.TraceID)
	}
	slices.Sort(ids)
	return ids
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	if len(out) > 5 {
		out = append(out[:5], "…")
	}
	return out
}
