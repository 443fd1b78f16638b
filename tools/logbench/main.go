// Command logbench measures LogQL over a lake of logs, as Grafana's Loki
// data source asks: a service's newest 1000 lines holding a string over
// the last hour, and the lines per severity per minute over six hours,
// with the engine wirehouse serve runs (internal/logql/eval over the
// lake), and with DuckDB running the equivalent SQL on the same files in
// the same run (--python, a Python with duckdb). If --dir holds no lake it
// first builds one of --logs logs from internal/synth and keeps it.
// Results go to stdout as a table, progress to stderr; docs/BENCHMARKS.md
// has the numbers and the command lines.
//
// Usage:
//
//	go run ./tools/logbench --dir /tmp/lb --python bin/pyenv/bin/python
//	go run ./tools/logbench -h
//
// The exit status is 0 on success, 2 for a bad command line and 1 for any
// other error.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/lokiapi"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
	"github.com/wirehouse/wirehouse/tools/internal/benchstats"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ue usageError
		isUsage := errors.As(err, &ue)
		if !isUsage || !ue.printed {
			fmt.Fprintln(os.Stderr, "logbench:", err)
		}
		if isUsage {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is an error in the command line; main exits with status 2.
type usageError struct {
	err     error
	printed bool // already written to stderr, with the usage, by the flag.FlagSet
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

const logbenchUsage = `usage: go run ./tools/logbench --dir DIR [flags]

Logbench measures LogQL over a lake of logs, as Grafana's Loki data source
asks: a service's newest 1000 lines holding a string over the last hour
({service_name="X"} |= "deadline exceeded"), and the lines per severity
per minute over six hours (sum by (severity_text)
(count_over_time({service_name="X"}[1m]))), with the engine serve runs,
and with DuckDB running the equivalent SQL on the same files in the same
run (--python). If DIR holds no lake it first builds one of --logs logs
from internal/synth (16 services, about 5.5 hours ending now) and keeps
it. It reports the largest heap seen during the queries.

flags:
`

// logbenchDuckDB is DuckDB's side of the benchmark, run with --python.
//
//go:embed logbench_duckdb.py
var logbenchDuckDB string

// run runs the benchmark of args, the table to stdout, progress to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var dir, python string
	var logs, queries int
	fs := flag.NewFlagSet("logbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), logbenchUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&dir, "dir", "", "the lake's directory; built there if it holds none (required)")
	fs.IntVar(&logs, "logs", 10_000_000, "log records of the lake built")
	fs.IntVar(&queries, "queries", 50, "queries of each kind measured (after 5 to warm up)")
	fs.StringVar(&python, "python", "", "a Python with duckdb, to run DuckDB on the same queries")
	kindList := "grep,volume,bytes,fields,patterns"
	fs.StringVar(&kindList, "kinds", kindList, "the kinds of query run (grep, volume; Drilldown's bytes, fields, patterns)")
	var cpuprofile string
	fs.StringVar(&cpuprofile, "cpuprofile", "", "write a CPU profile of the engine's queries to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err: err, printed: true}
	}
	if dir == "" || fs.NArg() > 0 || logs < 1 || queries < 1 {
		return usageError{err: errors.New("--dir is required; --logs and --queries must be positive")}
	}
	kinds := strings.Split(kindList, ",")
	for _, k := range kinds {
		if !slices.Contains([]string{"grep", "volume", "bytes", "fields", "patterns"}, k) {
			return usageError{err: fmt.Errorf("--kinds: unknown kind %q", k)}
		}
	}
	meta := filepath.Join(dir, "logbench.json")
	var info struct {
		Logs     int       `json:"logs"`
		End      time.Time `json:"end"`
		Services []string  `json:"services"`
	}
	if b, err := os.ReadFile(meta); err == nil {
		if err := json.Unmarshal(b, &info); err != nil {
			return err
		}
	} else {
		const perRequest = 1000
		requests := (logs + perRequest - 1) / perRequest
		info.End = time.Now().UTC().Truncate(time.Second)
		start := info.End.Add(-2 * time.Duration(requests) * time.Second)
		wcfg := lake.DefaultWriterConfig()
		wcfg.Dir = dir
		w, err := lake.NewWriter(wcfg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "logbench: building a lake of %d logs in %s\n", requests*perRequest, dir)
		began := time.Now()
		svcs := map[string]bool{}
		for i := range requests {
			if err := ctx.Err(); err != nil {
				w.Close()
				return err
			}
			// Seed i is its Start plus i seconds: a request every 2 s.
			body := synth.Logs(synth.Config{Seed: int64(i), Resources: 4, ScopesPerResource: 2, TotalRecords: perRequest, Start: start.Add(time.Duration(i) * time.Second)})
			if _, err := w.Append(otlpwire.SignalLogs, "default", body); err != nil {
				w.Close()
				return err
			}
			if i < 50 {
				for rl := range otlpwire.LogsRequest(body).ResourceLogs() {
					if res, err := rl.Resource(); err == nil {
						if s, err := res.ServiceName(); err == nil {
							svcs[string(s)] = true
						}
					}
				}
			}
		}
		if err := w.Close(); err != nil {
			return err
		}
		info.Logs = requests * perRequest
		for s := range svcs {
			info.Services = append(info.Services, s)
		}
		slices.Sort(info.Services)
		fmt.Fprintf(stderr, "logbench: written in %s\n", time.Since(began).Round(time.Second))
		b, _ := json.Marshal(info)
		if err := os.WriteFile(meta, b, 0o644); err != nil {
			return err
		}
	}
	rcfg := lakeread.DefaultConfig()
	rcfg.Bucket = bucket.NewLocal(dir)
	r, err := lakeread.New(rcfg)
	if err != nil {
		return err
	}
	defer r.Close()
	eng := lokiapi.NewEngine(r, 10_000, 11_000, nil) // the engine serve runs, over the lake

	type benchQ struct {
		Kind       string    `json:"kind"`
		Service    string    `json:"service"`
		Needle     string    `json:"needle,omitempty"`
		Start, End time.Time `json:"-"`
		StartS     string    `json:"start"`
		EndS       string    `json:"end"`
	}
	const needle = "deadline exceeded"
	rng := rand.New(rand.NewPCG(1, 2))
	var qs []benchQ
	for _, kind := range kinds {
		for range queries + 5 {
			svc := info.Services[rng.IntN(len(info.Services))]
			q := benchQ{Kind: kind, Service: svc, End: info.End.Add(time.Second)}
			if kind == "grep" || kind == "fields" || kind == "patterns" {
				q.Needle, q.Start = needle, q.End.Add(-time.Hour)
			} else {
				// Whole minutes, so that the engine's windows and DuckDB's
				// buckets are the same minutes.
				q.End = info.End.Truncate(time.Minute)
				q.Start = q.End.Add(-6 * time.Hour)
			}
			q.StartS, q.EndS = q.Start.Format(time.RFC3339Nano), q.End.Format(time.RFC3339Nano)
			qs = append(qs, q)
		}
	}
	// The largest heap seen while the queries run.
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				if ms.HeapAlloc > peak.Load() {
					peak.Store(ms.HeapAlloc)
				}
			}
		}
	}()
	if cpuprofile != "" {
		pf, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
	}
	ours := map[string][]time.Duration{}
	oursRows := map[string][]int{}
	var oursLines []int // the lines each volume query counted
	var oursBytes []int // the bytes each bytes query summed
	seen := map[string]int{}
	fmt.Fprintf(stderr, "logbench: %d queries with the Loki API's engine\n", len(qs))
	api := lokiapi.DefaultConfig()
	api.Reader, api.Tenant = r, "default"
	handler, err := lokiapi.New(api)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	handler.Register(mux)
	for _, q := range qs {
		if q.Kind == "bytes" || q.Kind == "fields" || q.Kind == "patterns" {
			// Drilldown's endpoints, through the API's handler in
			// process: what serve answers, JSON included.
			d, n, total, err := drilldown(mux, q.Kind, q.Service, q.Start, q.End)
			if err != nil {
				return err
			}
			if seen[q.Kind]++; seen[q.Kind] > 5 {
				ours[q.Kind] = append(ours[q.Kind], d)
				oursRows[q.Kind] = append(oursRows[q.Kind], n)
				if q.Kind == "bytes" {
					oursBytes = append(oursBytes, total)
				}
			}
			continue
		}
		var text string
		var lq eval.Query
		if q.Kind == "grep" {
			text = fmt.Sprintf(`{service_name=%q} |= %q`, q.Service, q.Needle)
			lq = eval.Query{Start: q.Start, End: q.End.Add(-1), Limit: 1000, Step: time.Minute}
		} else {
			text = fmt.Sprintf(`sum by (severity_text) (count_over_time({service_name=%q}[1m]))`, q.Service)
			lq = eval.Query{Start: q.Start.Add(time.Minute), End: q.End, Step: time.Minute}
		}
		e, err := logql.Parse(text)
		if err != nil {
			return err
		}
		lq.Expr, lq.Tenant = e, "default"
		t := time.Now()
		res, err := eng.Exec(ctx, lq)
		d := time.Since(t)
		if err != nil {
			return fmt.Errorf("%s: %w", text, err)
		}
		n, lines := 0, 0.0
		for _, s := range res.Streams {
			n += len(s.Entries)
		}
		for _, s := range res.Series {
			n += len(s.Points)
			for _, p := range s.Points {
				lines += p.V
			}
		}
		if seen[q.Kind]++; seen[q.Kind] > 5 {
			ours[q.Kind] = append(ours[q.Kind], d)
			oursRows[q.Kind] = append(oursRows[q.Kind], n)
			if q.Kind == "volume" {
				oursLines = append(oursLines, int(lines))
			}
		}
	}
	close(stop)
	pprof.StopCPUProfile()
	theirs := map[string][]time.Duration{}
	version := ""
	if python != "" {
		fmt.Fprintf(stderr, "logbench: the same queries with DuckDB\n")
		script, err := os.CreateTemp("", "logbench-*.py")
		if err != nil {
			return err
		}
		defer os.Remove(script.Name())
		script.WriteString(logbenchDuckDB) //nolint:errcheck
		script.Close()
		in, _ := json.Marshal(map[string]any{"root": dir, "warm_up": 5, "queries": qs})
		cmd := exec.CommandContext(ctx, python, script.Name())
		cmd.Stdin, cmd.Stderr = strings.NewReader(string(in)), stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("DuckDB: %w", err)
		}
		var res struct {
			Version string               `json:"version"`
			Seconds map[string][]float64 `json:"seconds"`
			Rows    struct {
				Grep   []int    `json:"grep"`
				Volume [][2]int `json:"volume"` // cells, lines
				Bytes  [][2]int `json:"bytes"`  // cells, bytes
			} `json:"rows"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return err
		}
		version = res.Version
		for k, secs := range res.Seconds {
			for _, s := range secs {
				theirs[k] = append(theirs[k], time.Duration(s*float64(time.Second)))
			}
		}
		// The same answers, or the times mean nothing: lines for the
		// grep; (severity, minute) cells and the lines they count for the
		// volume.
		var cells, counted []int
		for _, v := range res.Rows.Volume {
			cells, counted = append(cells, v[0]), append(counted, v[1])
		}
		if !slices.Equal(oursRows["grep"], res.Rows.Grep) || !slices.Equal(oursRows["volume"], cells) || !slices.Equal(oursLines, counted) {
			return fmt.Errorf("the engine and DuckDB gave different answers: grep lines %v and %v; volume cells %v and %v, lines counted %v and %v",
				oursRows["grep"], res.Rows.Grep, oursRows["volume"], cells, oursLines, counted)
		}
		var bcells, bsum []int
		for _, v := range res.Rows.Bytes {
			bcells, bsum = append(bcells, v[0]), append(bsum, v[1])
		}
		if slices.Contains(kinds, "bytes") && (!slices.Equal(oursRows["bytes"], bcells) || !slices.Equal(oursBytes, bsum)) {
			return fmt.Errorf("volume_range and DuckDB gave different answers: cells %v and %v, bytes %v and %v", oursRows["bytes"], bcells, oursBytes, bsum)
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "query\tengine\tqueries\trows\tP50 ms\tP99 ms\tmean ms\tP50 ratio\t\n")
	for _, k := range kinds {
		name := map[string]string{"grep": `|= over 1 h, limit 1000`, "volume": "count by severity, 1m steps over 6 h",
			"bytes": "volume_range of every service, 1m steps over 6 h", "fields": "detected_fields of a service, 1 h",
			"patterns": "patterns of a service, 1 h"}[k]
		p50 := benchstats.Percentile(ours[k], 50)
		fmt.Fprintf(tw, "%s\tlokiapi\t%d\t%d\t%s\t%s\t%s\t\t\n", name, len(ours[k]), benchstats.Sum(oursRows[k]), benchstats.MS(p50), benchstats.MS(benchstats.Percentile(ours[k], 99)), benchstats.MS(benchstats.Mean(ours[k])))
		if d := theirs[k]; len(d) > 0 {
			fmt.Fprintf(tw, "%s\tDuckDB %s\t%d\t%d\t%s\t%s\t%s\t%.1f×\t\n", name, version, len(d), benchstats.Sum(oursRows[k]), benchstats.MS(benchstats.Percentile(d, 50)), benchstats.MS(benchstats.Percentile(d, 99)), benchstats.MS(benchstats.Mean(d)),
				float64(benchstats.Percentile(d, 50))/float64(max(p50, 1)))
		}
	}
	fmt.Fprintf(tw, "lake: %d logs, %s; largest heap during the queries: %.0f MiB\t\t\t\t\t\t\t\t\n", info.Logs, dir, float64(peak.Load())/(1<<20))
	return tw.Flush()
}

// drilldown times one of Logs Drilldown's requests through the Loki
// API's handler: bytes, /index/volume_range of every service over
// [start, end) at 1-minute steps (it returns the points and the bytes
// summed); fields, /detected_fields of service over the range (the
// fields); patterns, /patterns of service over the range (the patterns).
func drilldown(mux *http.ServeMux, kind, service string, start, end time.Time) (d time.Duration, n, total int, err error) {
	p := url.Values{"start": {fmt.Sprint(start.UnixNano())}, "end": {fmt.Sprint(end.UnixNano())}}
	path := ""
	switch kind {
	case "bytes":
		// volume_range's windows end at each step: from a minute after
		// start, as the volume query's (and DuckDB's buckets).
		p.Set("start", fmt.Sprint(start.Add(time.Minute).UnixNano()))
		p.Set("end", fmt.Sprint(end.UnixNano()))
		path, p["query"], p["step"], p["targetLabels"], p["limit"] = "/loki/api/v1/index/volume_range", []string{`{service_name=~".+"}`}, []string{"60s"}, []string{"service_name"}, []string{"1000"}
	case "fields":
		path, p["query"] = "/loki/api/v1/detected_fields", []string{fmt.Sprintf(`{service_name=%q}`, service)}
	case "patterns":
		path, p["query"] = "/loki/api/v1/patterns", []string{fmt.Sprintf(`{service_name=%q}`, service)}
	}
	req := httptest.NewRequest(http.MethodGet, path+"?"+p.Encode(), nil)
	rec := httptest.NewRecorder()
	t := time.Now()
	mux.ServeHTTP(rec, req)
	d = time.Since(t)
	if rec.Code != http.StatusOK {
		return d, 0, 0, fmt.Errorf("%s: %d %s", path, rec.Code, rec.Body.String())
	}
	var body struct {
		Data   json.RawMessage `json:"data"`
		Fields []any           `json:"fields"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		return d, 0, 0, err
	}
	switch kind {
	case "bytes":
		var m struct {
			Result []struct {
				Values [][2]any `json:"values"`
			} `json:"result"`
		}
		if err := json.Unmarshal(body.Data, &m); err != nil {
			return d, 0, 0, err
		}
		for _, s := range m.Result {
			for _, v := range s.Values {
				n++
				var b int
				fmt.Sscan(v[1].(string), &b)
				total += b
			}
		}
	case "fields":
		n = len(body.Fields)
	case "patterns":
		var ps []any
		if err := json.Unmarshal(body.Data, &ps); err != nil {
			return d, 0, 0, err
		}
		n = len(ps)
	}
	return d, n, total, nil
}
