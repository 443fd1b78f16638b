package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/lakeread"
)

// benchQuery is one query of the benchmark.
type benchQuery struct {
	Kind     string        `json:"kind"` // "id" or "search"
	TraceID  string        `json:"trace_id,omitempty"`
	Search   *searchSample `json:"search,omitempty"`
	StartMin time.Time     `json:"start_min"`
	StartMax time.Time     `json:"start_max"`
}

// queries draws the warm-up and measured queries of each kind.
func (s *tracebenchSamples) queries(f *tracebenchFlags) (byID, search []benchQuery) {
	rng := rand.New(rand.NewPCG(uint64(f.seed), 11))
	n := f.queries + warmUp
	for range n {
		if len(s.Traces) > 0 {
			byID = append(byID, benchQuery{Kind: "id", TraceID: s.Traces[rng.IntN(len(s.Traces))]})
		}
		if len(s.Search) > 0 {
			ss := s.Search[rng.IntN(len(s.Search))]
			search = append(search, benchQuery{Kind: "search", Search: &ss, StartMin: s.End.Add(-time.Hour), StartMax: s.End.Add(time.Second)})
		}
	}
	return byID, search
}

// warmUp queries run before the measured ones, unmeasured.
const warmUp = 20

// traceByID reads the trace as Jaeger's /api/traces/{id} asks it (no time
// range) and encodes it as OTLP; it returns its spans.
func (q benchQuery) traceByID(ctx context.Context, r *lakeread.Reader) (int, error) {
	var id [16]byte
	if _, err := hex.Decode(id[:], []byte(q.TraceID)); err != nil {
		return 0, err
	}
	res, err := r.Trace(ctx, "default", id, time.Time{}, time.Time{})
	if err != nil {
		return 0, err
	}
	if res.Spans.Len() == 0 {
		return 0, fmt.Errorf("trace %s not found", q.TraceID)
	}
	_, err = res.Spans.AppendProto(nil)
	return res.Spans.Len(), err
}

// search finds the 20 most recent traces that match, and reads each whole,
// as Jaeger's /api/traces?service=... does; it returns the spans read.
func (q benchQuery) search(ctx context.Context, r *lakeread.Reader) (int, error) {
	s := q.Search
	found, err := r.FindTraces(ctx, "default", lakeread.Query{Service: s.Service, Operation: s.Operation,
		Attributes: map[string]string{s.Key: s.Value}, DurationMin: s.Duration,
		StartMin: q.StartMin, StartMax: q.StartMax, Limit: 20})
	if err != nil {
		return 0, err
	}
	if len(found) == 0 {
		return 0, fmt.Errorf("search %+v found nothing", *s)
	}
	all, err := r.FoundTracesSpans(ctx, "default", found)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, spans := range all {
		if _, err := spans.AppendProto(nil); err != nil {
			return 0, err
		}
		n += spans.Len()
	}
	return n, nil
}

// timeQueries runs qs in order and returns the latencies of those after
// the warm-up, and the spans each read.
func timeQueries(ctx context.Context, qs []benchQuery, run func(benchQuery) (int, error)) ([]time.Duration, []int, error) {
	var out []time.Duration
	var spans []int
	for i, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		t := time.Now()
		n, err := run(q)
		if err != nil {
			return nil, nil, fmt.Errorf("%s query %d: %w", q.Kind, i, err)
		}
		if i >= warmUp {
			out = append(out, time.Since(t))
			spans = append(spans, n)
		}
	}
	return out, spans, nil
}

// runDuckDB runs the queries with DuckDB (tracebench_duckdb.py) and
// returns its latencies and the rows of each query by kind, and its
// version.
func runDuckDB(ctx context.Context, f *tracebenchFlags, byID, search []benchQuery, stderr io.Writer) (map[string][]time.Duration, map[string][]int, string, error) {
	script, err := os.CreateTemp("", "tracebench-*.py")
	if err != nil {
		return nil, nil, "", err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString(tracebenchDuckDB); err != nil {
		return nil, nil, "", err
	}
	script.Close()
	in, err := json.Marshal(map[string]any{"root": f.dir, "warm_up": warmUp, "queries": append(slices.Clone(byID), search...)})
	if err != nil {
		return nil, nil, "", err
	}
	cmd := exec.CommandContext(ctx, f.python, script.Name())
	cmd.Stdin, cmd.Stderr = strings.NewReader(string(in)), stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, "", fmt.Errorf("DuckDB: %w", err)
	}
	var res struct {
		Version string               `json:"version"`
		Seconds map[string][]float64 `json:"seconds"`
		Rows    map[string][]int     `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, nil, "", fmt.Errorf("DuckDB's output: %w", err)
	}
	lat := map[string][]time.Duration{}
	for k, secs := range res.Seconds {
		for _, s := range secs {
			lat[k] = append(lat[k], time.Duration(s*float64(time.Second)))
		}
	}
	return lat, res.Rows, res.Version, nil
}
