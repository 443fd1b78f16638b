package main

import (
	"context"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

const tracebenchUsage = `usage: wirehouse tracebench --dir DIR [flags]

Tracebench measures reading traces back from a lake: trace by id and
search (service, operation, one attribute, a minimum duration, the last
hour, the 20 most recent traces, each read whole), as Jaeger's API asks
them, with lakeread (what serve answers with), and with DuckDB running
the equivalent SQL on the same files in the same run (--python, a Python
with duckdb). If DIR holds no lake it first builds one of --spans spans
from internal/synth, ending now, and keeps it (with the queries' samples in
DIR/tracebench.json) for the next run. Results go to stdout as a table.

flags:
`

//go:embed tracebench_duckdb.py
var tracebenchDuckDB string

type tracebenchFlags struct {
	dir, python string
	kinds       string
	cpuprofile  string
	s3Endpoint  string
	s3Bucket    string
	spans       int
	queries     int
	seed        int64
}

func runTracebench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := &tracebenchFlags{}
	fs := flag.NewFlagSet("tracebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), tracebenchUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.dir, "dir", "", "the lake's directory; built there if it holds none (required)")
	fs.IntVar(&f.spans, "spans", 10_000_000, "spans of the lake built")
	fs.IntVar(&f.queries, "queries", 200, "queries of each kind measured (after 20 to warm up)")
	fs.StringVar(&f.python, "python", "", "a Python with duckdb, to run DuckDB on the same queries; none: lakeread alone")
	fs.Int64Var(&f.seed, "seed", 1, "seed of the query choice")
	fs.StringVar(&f.kinds, "kinds", "id,search,names", "the kinds of query to run: id, search, names (services then a service's operations), comma-separated")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of lakeread's queries to this file")
	fs.StringVar(&f.s3Endpoint, "s3-endpoint", "", "read the lake from this S3-compatible store (path-style; credentials from the AWS environment), uploading --dir's lake into --s3-bucket first if that holds none")
	fs.StringVar(&f.s3Bucket, "s3-bucket", "lake", "the bucket of --s3-endpoint")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err: err, printed: true}
	}
	switch {
	case fs.NArg() > 0:
		return usageError{err: fmt.Errorf("tracebench: unexpected argument %q", fs.Arg(0))}
	case f.dir == "":
		return usageError{err: errors.New("tracebench: --dir is required")}
	case f.spans < 1 || f.queries < 1:
		return usageError{err: errors.New("tracebench: --spans and --queries must be positive")}
	}
	samples, err := loadOrBuildLake(ctx, f, stderr)
	if err != nil {
		return err
	}
	byID, search := samples.queries(f)
	if !strings.Contains(f.kinds, "id") {
		byID = nil
	}
	if !strings.Contains(f.kinds, "search") {
		search = nil
	}
	rcfg := lakeread.DefaultConfig()
	rcfg.Bucket = bucket.NewLocal(f.dir)
	var s3b *bucket.S3
	if f.s3Endpoint != "" {
		if s3b, err = s3Lake(ctx, f, stderr); err != nil {
			return err
		}
		rcfg.Bucket, rcfg.Remote = s3b, true
	}
	r, err := lakeread.New(rcfg)
	if err != nil {
		return err
	}
	defer r.Close()
	if s3b != nil {
		gets0, bytes0 := s3b.GETs(), s3b.BytesRead()
		defer func() {
			n := float64(max(len(byID)+len(search), 1))
			gets, read := s3b.GETs()-gets0, s3b.BytesRead()-bytes0
			fmt.Fprintf(stdout, "S3 GET requests: %d for %d queries (%.1f and %.0f KiB a query, warm-up and opening the files included)\n",
				gets, len(byID)+len(search), float64(gets)/n, float64(read)/1024/n)
		}()
	}
	fmt.Fprintf(stderr, "tracebench: %d trace-by-id and %d search queries with lakeread\n", len(byID), len(search))
	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pf.Close()
	}
	ours := map[string][]time.Duration{}
	oursRows := map[string][]int{}
	if ours["id"], oursRows["id"], err = timeQueries(ctx, byID, func(q benchQuery) (int, error) { return q.traceByID(ctx, r) }); err != nil {
		return err
	}
	if ours["search"], oursRows["search"], err = timeQueries(ctx, search, func(q benchQuery) (int, error) { return q.search(ctx, r) }); err != nil {
		return err
	}
	spansRead := [2]int{sum(oursRows["id"]), sum(oursRows["search"])}
	if strings.Contains(f.kinds, "names") {
		// Jaeger's UI asks for the services, then a service's operations.
		var names []benchQuery
		for range f.queries + warmUp {
			names = append(names, benchQuery{Kind: "names"})
		}
		svcs := []string{""}
		if ours["names"], _, err = timeQueries(ctx, names, func(benchQuery) (int, error) {
			s, err := r.Services(ctx, "default", time.Time{}, time.Time{})
			if err != nil || len(s) == 0 {
				return 0, fmt.Errorf("services: %q, %v", s, err)
			}
			svcs = s
			ops, err := r.Operations(ctx, "default", svcs[len(svcs)/2], "", time.Time{}, time.Time{})
			return len(ops), err
		}); err != nil {
			return err
		}
	}
	pprof.StopCPUProfile()
	theirs := map[string][]time.Duration{}
	if f.python != "" {
		fmt.Fprintf(stderr, "tracebench: the same queries with DuckDB\n")
		var theirRows map[string][]int
		if theirs, theirRows, samples.duckdbVersion, err = runDuckDB(ctx, f, byID, search, stderr); err != nil {
			return err
		}
		// Both must give the same answers, or the times mean nothing.
		for _, kind := range []string{"id", "search"} {
			if !slices.Equal(oursRows[kind], theirRows[kind]) {
				return fmt.Errorf("tracebench: lakeread and DuckDB read different spans for the %s queries: %v and %v", kind, oursRows[kind], theirRows[kind])
			}
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "query\tengine\tqueries\tspans read\tP50 ms\tP99 ms\tmean ms\tP50 ratio\t\n")
	for i, kind := range []string{"id", "search"} {
		name := map[string]string{"id": "trace by id", "search": "search"}[kind]
		p50 := percentile(ours[kind], 50)
		fmt.Fprintf(tw, "%s\tlakeread\t%d\t%d\t%s\t%s\t%s\t\t\n", name, len(ours[kind]), spansRead[i], ms(p50), ms(percentile(ours[kind], 99)), ms(mean(ours[kind])))
		if d := theirs[kind]; len(d) > 0 {
			fmt.Fprintf(tw, "%s\tDuckDB %s\t%d\t%d\t%s\t%s\t%s\t%.1f×\t\n", name, samples.duckdbVersion, len(d), spansRead[i], ms(percentile(d, 50)), ms(percentile(d, 99)), ms(mean(d)),
				float64(percentile(d, 50))/float64(max(p50, 1)))
		}
	}
	if d := ours["names"]; len(d) > 0 {
		fmt.Fprintf(tw, "services + operations\tlakeread\t%d\t\t%s\t%s\t%s\t\t\n", len(d), ms(percentile(d, 50)), ms(percentile(d, 99)), ms(mean(d)))
	}
	fmt.Fprintf(tw, "lake: %d spans, %d files, %.1f MiB, %s\t\t\t\t\t\t\t\t\n", samples.Spans, samples.files, float64(samples.bytes)/(1<<20), f.dir)
	return tw.Flush()
}

// tracebenchSamples is what a lake build keeps for the queries: when the
// lake ends, and spans drawn from it.
type tracebenchSamples struct {
	Spans  int            `json:"spans"`
	End    time.Time      `json:"end"`
	Traces []string       `json:"traces"` // hex trace ids
	Search []searchSample `json:"search"` // spans of the last hour

	files         int
	bytes         int64
	duckdbVersion string
}

type searchSample struct {
	Service, Operation string
	Key, Value         string
	Duration           time.Duration
}

// loadOrBuildLake reads DIR/tracebench.json, or builds the lake and
// writes it.
func loadOrBuildLake(ctx context.Context, f *tracebenchFlags, stderr io.Writer) (*tracebenchSamples, error) {
	meta := filepath.Join(f.dir, "tracebench.json")
	s := &tracebenchSamples{}
	if b, err := os.ReadFile(meta); err == nil {
		if err := json.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("tracebench: read %s: %w", meta, err)
		}
		fmt.Fprintf(stderr, "tracebench: the lake of %s (%d spans, ending %s)\n", f.dir, s.Spans, s.End.Format(time.RFC3339))
	} else {
		if err := buildLake(ctx, f, s, stderr); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(s)
		if err := os.WriteFile(meta, b, 0o644); err != nil {
			return nil, err
		}
	}
	err := filepath.WalkDir(filepath.Join(f.dir, "traces"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.HasPrefix(d.Name(), ".") {
			if fi, err := d.Info(); err == nil {
				s.files++
				s.bytes += fi.Size()
			}
		}
		return err
	})
	return s, err
}

// buildLake writes f.spans spans of synth traces, 1000 a request (4
// resources × 2 scopes; 16 services; traces of 1 to 8 spans), one request
// a second of span time ending now, through one lake writer, then merges
// each hour's files as the loader's compaction does.
func buildLake(ctx context.Context, f *tracebenchFlags, s *tracebenchSamples, stderr io.Writer) error {
	const perRequest = 1000
	requests := (f.spans + perRequest - 1) / perRequest
	s.End = time.Now().UTC().Truncate(time.Second)
	start := s.End.Add(-time.Duration(requests) * time.Second)
	wcfg := lake.DefaultWriterConfig()
	wcfg.Dir = f.dir
	w, err := lake.NewWriter(wcfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tracebench: building a lake of %d spans in %s\n", requests*perRequest, f.dir)
	rng := rand.New(rand.NewPCG(uint64(f.seed), 7))
	began := time.Now()
	for i := range requests {
		if err := ctx.Err(); err != nil {
			w.Close()
			return err
		}
		body := synth.Traces(synth.Config{Seed: int64(i), Resources: 4, ScopesPerResource: 2, TotalRecords: perRequest, Start: start})
		if _, err := w.Append(otlpwire.SignalTraces, "default", body); err != nil {
			w.Close()
			return err
		}
		s.sample(body, rng, start.Add(time.Duration(i)*time.Second), s.End)
		if i%1000 == 999 {
			fmt.Fprintf(stderr, "tracebench: %d spans, %.0f spans/s\n", (i+1)*perRequest, float64((i+1)*perRequest)/time.Since(began).Seconds())
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	s.Spans = requests * perRequest
	fmt.Fprintf(stderr, "tracebench: written in %s; compacting\n", time.Since(began).Round(time.Second))
	c, err := lake.Compact(ctx, f.dir, 0, time.Now().Add(2*time.Hour), lake.CompactOptions{})
	if err != nil {
		return fmt.Errorf("tracebench: compact: %w", err)
	}
	fmt.Fprintf(stderr, "tracebench: compacted %+v\n", c)
	return nil
}

// sample keeps one trace id of each request, and from requests of the
// last hour a span to search for: its service, name, one of its string
// attributes and a minimum duration it passes.
func (s *tracebenchSamples) sample(body []byte, rng *rand.Rand, at, end time.Time) {
	wantSearch := at.After(end.Add(-time.Hour)) && rng.IntN(4) == 0
	var picked bool
	for rs, err := range otlpwire.TracesRequest(body).ResourceSpans() {
		if err != nil || picked {
			return
		}
		res, _ := rs.Resource()
		svc, _ := res.ServiceName()
		for ss, err := range rs.ScopeSpans() {
			if err != nil {
				return
			}
			for sp, err := range ss.Spans() {
				if err != nil || rng.IntN(100) != 0 {
					continue
				}
				var fl otlpwire.SpanFields
				if sp.Read(&fl) != nil {
					continue
				}
				s.Traces = append(s.Traces, hex.EncodeToString(fl.TraceID))
				picked = true
				if !wantSearch {
					return
				}
				var strs [][2]string
				seen := map[string]int{}
				for kv, err := range fl.Attributes.All() {
					if err == nil {
						seen[string(kv.Key)]++
						if kv.Value.Type() == otlpwire.ValueString {
							strs = append(strs, [2]string{string(kv.Key), string(kv.Value.Str())})
						}
					}
				}
				// A key sent twice keeps one value in the lake: not a
				// fair question.
				strs = slices.DeleteFunc(strs, func(kv [2]string) bool { return seen[kv[0]] > 1 })
				if len(strs) == 0 {
					return
				}
				kv := strs[rng.IntN(len(strs))]
				d := time.Duration(fl.EndTime-fl.StartTime) / 2
				s.Search = append(s.Search, searchSample{Service: string(svc), Operation: string(fl.Name), Key: kv[0], Value: kv[1], Duration: d.Truncate(time.Microsecond)})
				return
			}
		}
	}
}

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
			return nil, nil, fmt.Errorf("tracebench: %s query %d: %w", q.Kind, i, err)
		}
		if i >= warmUp {
			out = append(out, time.Since(t))
			spans = append(spans, n)
		}
	}
	return out, spans, nil
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
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
		return nil, nil, "", fmt.Errorf("tracebench: DuckDB: %w", err)
	}
	var res struct {
		Version string               `json:"version"`
		Seconds map[string][]float64 `json:"seconds"`
		Rows    map[string][]int     `json:"rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, nil, "", fmt.Errorf("tracebench: DuckDB's output: %w", err)
	}
	lat := map[string][]time.Duration{}
	for k, secs := range res.Seconds {
		for _, s := range secs {
			lat[k] = append(lat[k], time.Duration(s*float64(time.Second)))
		}
	}
	return lat, res.Rows, res.Version, nil
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// s3Lake returns the bucket of --s3-endpoint, with --dir's lake uploaded
// into it if it holds no traces yet.
func s3Lake(ctx context.Context, f *tracebenchFlags, stderr io.Writer) (*bucket.S3, error) {
	b, err := bucket.NewS3(ctx, bucket.S3Config{Bucket: f.s3Bucket, Endpoint: f.s3Endpoint, PathStyle: true})
	if err != nil {
		return nil, err
	}
	for _, err := range b.List(ctx, "traces/") {
		if err != nil {
			return nil, err
		}
		return b, nil // it has a lake already
	}
	local := bucket.NewLocal(f.dir)
	n := 0
	for a, err := range local.List(ctx, "traces/") {
		if err != nil {
			return nil, err
		}
		rc, err := local.Get(ctx, a.Name)
		if err != nil {
			return nil, err
		}
		err = b.Upload(ctx, a.Name, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		n++
	}
	fmt.Fprintf(stderr, "tracebench: uploaded %d files of %s to %s/%s\n", n, f.dir, f.s3Endpoint, f.s3Bucket)
	return b, nil
}
