// Command tracebench measures reading traces back from a lake: trace by
// id and search (service, operation, one attribute, a minimum duration,
// the last hour, the 20 most recent traces, each read whole), as Jaeger's
// API asks them, with lakeread (what wirehouse serve answers with), and
// with DuckDB running the equivalent SQL on the same files in the same run
// (--python, a Python with duckdb). If --dir holds no lake it first builds
// one of --spans spans from internal/synth, ending now, and keeps it for
// the next run. Results go to stdout as a table, progress to stderr;
// docs/BENCHMARKS.md has the numbers and the command lines.
//
// Usage:
//
//	go run ./tools/tracebench --dir /tmp/tb --python bin/pyenv/bin/python
//	go run ./tools/tracebench -h
//
// The exit status is 0 on success, 2 for a bad command line and 1 for any
// other error.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lakeread"
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
			fmt.Fprintln(os.Stderr, "tracebench:", err)
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

const tracebenchUsage = `usage: go run ./tools/tracebench --dir DIR [flags]

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

// tracebenchDuckDB is DuckDB's side of the benchmark, run with --python.
//
//go:embed tracebench_duckdb.py
var tracebenchDuckDB string

// tracebenchFlags are the command line's flags.
type tracebenchFlags struct {
	dir, python string
	kinds       string
	cpuprofile  string
	traceqlOnly string
	s3Endpoint  string
	s3Bucket    string
	spans       int
	queries     int
	seed        int64
}

// run runs the benchmark of args, the table to stdout, progress to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	fs.StringVar(&f.kinds, "kinds", "id,search,names", "the kinds of query to run: id, search, names (services then a service's operations), traceql (issue 43's TraceQL queries through the Tempo API), comma-separated")
	fs.StringVar(&f.traceqlOnly, "traceql-only", "", "run only the TraceQL queries whose names contain this text (with --kinds traceql)")
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
		return usageError{err: fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	case f.dir == "":
		return usageError{err: errors.New("--dir is required")}
	case f.spans < 1 || f.queries < 1:
		return usageError{err: errors.New("--spans and --queries must be positive")}
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
	spansRead := [2]int{benchstats.Sum(oursRows["id"]), benchstats.Sum(oursRows["search"])}
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
	if strings.Contains(f.kinds, "traceql") {
		if err := runTraceQL(ctx, f, r, samples, stdout, stderr); err != nil {
			return err
		}
	}
	pprof.StopCPUProfile()
	theirs := map[string][]time.Duration{}
	if f.python != "" && len(byID)+len(search) > 0 {
		fmt.Fprintf(stderr, "tracebench: the same queries with DuckDB\n")
		var theirRows map[string][]int
		if theirs, theirRows, samples.duckdbVersion, err = runDuckDB(ctx, f, byID, search, stderr); err != nil {
			return err
		}
		// Both must give the same answers, or the times mean nothing.
		for _, kind := range []string{"id", "search"} {
			if !slices.Equal(oursRows[kind], theirRows[kind]) {
				return fmt.Errorf("lakeread and DuckDB read different spans for the %s queries: %v and %v", kind, oursRows[kind], theirRows[kind])
			}
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "query\tengine\tqueries\tspans read\tP50 ms\tP99 ms\tmean ms\tP50 ratio\t\n")
	for i, kind := range []string{"id", "search"} {
		if len(ours[kind]) == 0 {
			continue // not asked (--kinds)
		}
		name := map[string]string{"id": "trace by id", "search": "search"}[kind]
		p50 := benchstats.Percentile(ours[kind], 50)
		fmt.Fprintf(tw, "%s\tlakeread\t%d\t%d\t%s\t%s\t%s\t\t\n", name, len(ours[kind]), spansRead[i], benchstats.MS(p50), benchstats.MS(benchstats.Percentile(ours[kind], 99)), benchstats.MS(benchstats.Mean(ours[kind])))
		if d := theirs[kind]; len(d) > 0 {
			fmt.Fprintf(tw, "%s\tDuckDB %s\t%d\t%d\t%s\t%s\t%s\t%.1f×\t\n", name, samples.duckdbVersion, len(d), spansRead[i], benchstats.MS(benchstats.Percentile(d, 50)), benchstats.MS(benchstats.Percentile(d, 99)), benchstats.MS(benchstats.Mean(d)),
				float64(benchstats.Percentile(d, 50))/float64(max(p50, 1)))
		}
	}
	if d := ours["names"]; len(d) > 0 {
		fmt.Fprintf(tw, "services + operations\tlakeread\t%d\t\t%s\t%s\t%s\t\t\n", len(d), benchstats.MS(benchstats.Percentile(d, 50)), benchstats.MS(benchstats.Percentile(d, 99)), benchstats.MS(benchstats.Mean(d)))
	}
	fmt.Fprintf(tw, "lake: %d spans, %d files, %.1f MiB, %s\t\t\t\t\t\t\t\t\n", samples.Spans, samples.files, float64(samples.bytes)/(1<<20), f.dir)
	return tw.Flush()
}
