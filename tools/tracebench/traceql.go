package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/tempohttp"
	"github.com/wirehouse/wirehouse/tools/internal/benchstats"
)

// tracebenchTraceQL is DuckDB's side of the TraceQL queries.
//
//go:embed tracebench_traceql.py
var tracebenchTraceQL string

// traceqlCase is one TraceQL query of the benchmark: the Tempo API path
// serve answers it on, DuckDB's SQL of the same answer, and how the two
// answers are compared.
type traceqlCase struct {
	name string
	path string // under /tempo, with the query string
	sql  string // over {traces}, the lake's spans files
	// check holds our answer (the response body) to DuckDB's rows (each
	// row its columns as text); "" when equal.
	check func(body []byte, rows [][]string) string
	// verify, if set, is SQL run once whose rows check receives instead
	// of the timed query's (the timed one is the work DuckDB would do).
	verify string
}

// traceqlCases are issue 43's benchmark queries over the lake's last hour
// (the filter, the structural query) and last six hours (rate), for a
// service of the data.
func traceqlCases(end time.Time, svc string) []traceqlCase {
	hour := fmt.Sprintf("&start=%d&end=%d", end.Add(-time.Hour).Unix(), end.Unix()+1)
	from6 := end.Add(-6 * time.Hour).Truncate(time.Minute)
	six := fmt.Sprintf("&start=%d&end=%d&step=60s", from6.Unix(), end.Truncate(time.Minute).Add(time.Minute).Unix())
	inHour := fmt.Sprintf("epoch_ns(start_time) >= %d AND epoch_ns(start_time) < %d", end.Add(-time.Hour).Unix()*1e9, (end.Unix()+1)*1e9)
	filter := `{ resource.service.name = "` + svc + `" && span.http.response.status_code >= 500 }`
	// The traces with a span of the service in the hour (the search's
	// candidates) that have a span the filter selects.
	matching := `SELECT trace_id, max(epoch_ns(start_time) + duration) AS t FROM {traces} WHERE service_name = '` + svc + `' AND ` + inHour + `
		AND trace_id IN (SELECT trace_id FROM {traces} WHERE service_name = '` + svc + `' AND attr_http_response_status_code >= 500)
		GROUP BY trace_id`
	bucket := fmt.Sprintf("(epoch_ns(start_time) - %d) // 60000000000", from6.UnixNano())
	structural := `WITH RECURSIVE cand AS (
			SELECT trace_id, max(epoch_ns(start_time) + duration) AS t FROM {traces}
			WHERE status_code = 'STATUS_CODE_ERROR' AND ` + inHour + ` GROUP BY trace_id),
		spans AS (SELECT trace_id, span_id, parent_span_id, kind, status_code FROM {traces} WHERE trace_id IN (SELECT trace_id FROM cand)),
		up(trace_id, anc) AS (
			SELECT trace_id, parent_span_id FROM spans WHERE status_code = 'STATUS_CODE_ERROR' AND parent_span_id IS NOT NULL
			UNION
			SELECT u.trace_id, p.parent_span_id FROM up u JOIN spans p ON p.trace_id = u.trace_id AND p.span_id = u.anc
			WHERE p.parent_span_id IS NOT NULL)
		SELECT c.trace_id, c.t FROM cand c WHERE c.trace_id IN (
			SELECT u.trace_id FROM up u JOIN spans s ON s.trace_id = u.trace_id AND s.span_id = u.anc WHERE s.kind = 'SPAN_KIND_SERVER')`
	return []traceqlCase{
		{
			name: "spanset filter, 1 h, 20 traces", path: "/api/search?limit=20&q=" + url.QueryEscape(filter) + hour,
			sql: matching + ` ORDER BY t DESC, trace_id LIMIT 20`, verify: `SELECT trace_id FROM (` + matching + `)`,
			check: matchingTraces(20),
		},
		tagValuesCase("resource.service.name", `service_name <> ''`),
		// A span attribute with no column of its own: its places in the
		// attributes map of each file.
		tagValuesCase("span.rpc.service", `attributes['rpc.service'] IS NOT NULL`),
		{
			name: "{ } | rate() by (resource.service.name), 6 h", path: "/api/metrics/query_range?q=" + url.QueryEscape(`{ } | rate() by (resource.service.name)`) + six,
			sql: `SELECT service_name, ` + bucket + ` AS step, count(*) / 60.0 FROM {traces} WHERE epoch_ns(start_time) >= ` + fmt.Sprint(from6.UnixNano()) + ` AND epoch_ns(start_time) < ` + fmt.Sprint(end.Truncate(time.Minute).Add(time.Minute).UnixNano()) + ` GROUP BY ALL`,
			check: func(b []byte, rows [][]string) string {
				got, err := rateSeries(b, from6)
				if err != nil {
					return err.Error()
				}
				want := map[string]float64{}
				for _, r := range rows {
					var v float64
					fmt.Sscan(r[2], &v)
					label := r[0]
					if label == "" {
						label = "nil"
					}
					want[label+"@"+r[1]] = v
				}
				if len(got) != len(want) || len(want) == 0 {
					return fmt.Sprintf("%d samples, DuckDB %d", len(got), len(want))
				}
				for k, w := range want {
					if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9*math.Max(1, w) {
						return fmt.Sprintf("%s = %v, DuckDB %v", k, g, w)
					}
				}
				return ""
			},
		},
		{
			// The traces with an error span in the hour (the search's
			// candidates: the hint is the error status) in which an error
			// span has a server span among its ancestors, by a recursive
			// walk up the parent ids.
			name: "{ kind = server } >> { status = error }, 1 h, 20 traces", path: "/api/search?limit=20&q=" + url.QueryEscape(`{ kind = server } >> { status = error }`) + hour,
			sql: structural + ` ORDER BY t DESC, trace_id LIMIT 20`, verify: `SELECT trace_id FROM (` + structural + `)`,
			check: matchingTraces(20),
		},
	}
}

// matchingTraces checks a search answer of at most limit traces against
// DuckDB's rows of every matching trace id: each answered trace among
// them, and as many as there are up to the limit.
func matchingTraces(limit int) func(b []byte, rows [][]string) string {
	return func(b []byte, rows [][]string) string {
		ids, err := searchIDs(b)
		if err != nil {
			return err.Error()
		}
		all := map[string]bool{}
		for _, r := range rows {
			all[r[0]] = true
		}
		for _, id := range ids {
			if !all[id] {
				return "trace " + id + " does not match in DuckDB"
			}
		}
		if len(ids) != min(limit, len(all)) {
			return fmt.Sprintf("%d traces, DuckDB has %d matching", len(ids), len(all))
		}
		return ""
	}
}

// tagValuesCase is Tempo's v2 tag values of tag beside DuckDB's
// distinct values of the column where is about (service_name for
// resource.service.name, the attributes map's entry for a span
// attribute).
func tagValuesCase(tag, where string) traceqlCase {
	col := "service_name"
	if k, ok := strings.CutPrefix(tag, "span."); ok {
		col = "attributes['" + k + "']"
	}
	return traceqlCase{
		name: "tag values " + tag, path: "/api/v2/search/tag/" + tag + "/values",
		sql: `SELECT DISTINCT ` + col + ` FROM {traces} WHERE ` + where,
		check: func(b []byte, rows [][]string) string {
			var res struct {
				TagValues []struct{ Value string } `json:"tagValues"`
			}
			if err := json.Unmarshal(b, &res); err != nil {
				return err.Error()
			}
			var ours, theirs []string
			for _, v := range res.TagValues {
				ours = append(ours, v.Value)
			}
			for _, r := range rows {
				theirs = append(theirs, r[0])
			}
			slices.Sort(ours)
			slices.Sort(theirs)
			if !slices.Equal(ours, theirs) || len(ours) == 0 {
				return fmt.Sprintf("values %v, DuckDB %v", ours, theirs)
			}
			return ""
		},
	}
}

// searchIDs are the trace ids of a Tempo search answer, in its order.
func searchIDs(b []byte) ([]string, error) {
	var res struct {
		Traces []struct {
			TraceID string `json:"traceID"`
		} `json:"traces"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range res.Traces {
		ids = append(ids, t.TraceID)
	}
	return ids, nil
}

// rateSeries is a metrics answer by service and step: "service@step".
func rateSeries(b []byte, from time.Time) (map[string]float64, error) {
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
		return nil, err
	}
	out := map[string]float64{}
	for _, s := range res.Series {
		label := "nil"
		if len(s.Labels) > 0 {
			if v, ok := s.Labels[0].Value["stringValue"].(string); ok {
				label = v
			}
		}
		for _, p := range s.Samples {
			var ms int64
			fmt.Sscan(p.TimestampMs, &ms)
			out[fmt.Sprintf("%s@%d", label, (ms*1e6-from.UnixNano())/60e9)] = p.Value
		}
	}
	return out, nil
}

// runTraceQL runs the TraceQL cases through the Tempo API of serve (in
// process, on reader r) and, with --python, DuckDB; it prints a table.
func runTraceQL(ctx context.Context, f *tracebenchFlags, r *lakeread.Reader, samples *tracebenchSamples, stdout, stderr io.Writer) error {
	if len(samples.Search) == 0 {
		return fmt.Errorf("traceql: no service sampled in the lake")
	}
	h, err := tempohttp.New(tempohttp.Config{Reader: r, Tenant: "default"})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	h.Register(mux, "/tempo")
	cases := slices.DeleteFunc(traceqlCases(samples.End, samples.Search[0].Service), func(c traceqlCase) bool {
		return !strings.Contains(c.name, f.traceqlOnly)
	})
	runs := max(3, f.queries/10)
	ours := make([][]time.Duration, len(cases))
	first := make([]time.Duration, len(cases)) // the warm-up: nothing kept of the files yet
	bodies := make([][]byte, len(cases))
	heap := make([]uint64, len(cases)) // the most the heap grew during a case's runs
	for i, c := range cases {
		fmt.Fprintf(stderr, "tracebench: %s (%d runs)\n", c.name, runs)
		stop := watchHeap(&heap[i])
		for k := range runs + 1 {
			if err := ctx.Err(); err != nil {
				return err
			}
			req := httptest.NewRequestWithContext(ctx, "GET", "/tempo"+c.path, nil)
			rec := httptest.NewRecorder()
			t := time.Now()
			mux.ServeHTTP(rec, req)
			d := time.Since(t)
			if rec.Code != http.StatusOK {
				return fmt.Errorf("%s: %d %s", c.name, rec.Code, clip(rec.Body.String()))
			}
			if k > 0 { // the first warms up
				ours[i] = append(ours[i], d)
			} else {
				first[i] = d
			}
			bodies[i] = rec.Body.Bytes()
		}
		stop()
	}
	var theirs map[string]duckResult
	if f.python != "" {
		fmt.Fprintf(stderr, "tracebench: the same queries with DuckDB\n")
		if theirs, err = runDuckDBSQL(ctx, f, cases, runs, stderr); err != nil {
			return err
		}
	}
	fmt.Fprintln(stdout, "| TraceQL query | runs | serve's Tempo API P50 ms | P99 ms | first ms | heap growth MiB | DuckDB P50 ms | DuckDB / serve | same answer |")
	fmt.Fprintln(stdout, "|---|--:|--:|--:|--:|--:|--:|--:|---|")
	var bad []string
	for i, c := range cases {
		p50 := benchstats.Percentile(ours[i], 50)
		dp50, ratio, same := "-", "-", "not checked here"
		if d, ok := theirs[c.name]; ok {
			dl := make([]time.Duration, len(d.Seconds))
			for k, s := range d.Seconds {
				dl[k] = time.Duration(s * float64(time.Second))
			}
			dp := benchstats.Percentile(dl, 50)
			dp50, ratio = benchstats.MS(dp), fmt.Sprintf("%.1f×", float64(dp)/float64(max(p50, 1)))
			same = "yes"
			if why := c.check(bodies[i], d.Rows); why != "" {
				same = "**no**: " + why
				bad = append(bad, c.name+": "+why)
			}
		}
		fmt.Fprintf(stdout, "| %s | %d | %s | %s | %s | %.1f | %s | %s | %s |\n", c.name, len(ours[i]), benchstats.MS(p50), benchstats.MS(benchstats.Percentile(ours[i], 99)), benchstats.MS(first[i]), float64(heap[i])/(1<<20), dp50, ratio, same)
	}
	if len(bad) > 0 {
		return fmt.Errorf("answers differ from DuckDB's: %s", strings.Join(bad, "; "))
	}
	return nil
}

// watchHeap samples the live heap every 2 ms (after a collection to
// start from what is held) and keeps in max the most it grew, until the
// returned stop is called: what the queries run meanwhile held at once,
// garbage not yet collected included (an upper bound).
func watchHeap(max *uint64) (stop func()) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > base && v-base > *max {
				*max = v - base
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// duckResult is DuckDB's latencies of a query and the rows it checks.
type duckResult struct {
	Seconds []float64  `json:"seconds"`
	Rows    [][]string `json:"rows"`
}

// runDuckDBSQL runs each case's SQL (runs times after one to warm up)
// with tracebench_traceql.py.
func runDuckDBSQL(ctx context.Context, f *tracebenchFlags, cases []traceqlCase, runs int, stderr io.Writer) (map[string]duckResult, error) {
	script, err := os.CreateTemp("", "tracebench-traceql-*.py")
	if err != nil {
		return nil, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(tracebenchTraceQL); err != nil {
		return nil, err
	}
	script.Close()
	type q struct {
		Name   string `json:"name"`
		SQL    string `json:"sql"`
		Verify string `json:"verify,omitempty"`
	}
	var qs []q
	for _, c := range cases {
		if c.sql != "" {
			qs = append(qs, q{c.name, c.sql, c.verify})
		}
	}
	in, err := json.Marshal(map[string]any{"root": f.dir, "runs": runs, "queries": qs})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, f.python, script.Name())
	cmd.Stdin, cmd.Stderr = strings.NewReader(string(in)), stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("DuckDB: %w", err)
	}
	res := map[string]duckResult{}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("DuckDB's output: %w", err)
	}
	return res, nil
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
