// Command readcompare times the same read queries against wirehouse serve
// and a peer holding the same data, side by side in one run: logs with
// wirehouse's Loki API against VictoriaLogs' LogsQL API, traces with
// wirehouse's Jaeger API against the Jaeger query service (Badger
// storage). Each query runs once to warm up and then --runs times on each
// side; both answers are normalized (lines as (time, line) pairs, metric
// queries as per-step counts, traces as their span ids) and must be
// equal, or the command fails with a short diff. The server CPU of each
// query is read from /proc/PID/stat (user+system) before and after its
// repetitions, which stop early (after at least 3) once they have taken
// --budget. Results go to stdout as a markdown table, a row as each query
// ends, progress to stderr; scripts/compare-log-reads.sh and scripts/compare-trace-reads.sh
// start the servers, load them and call it.
//
// Usage:
//
//	readcompare logs --wirehouse http://127.0.0.1:9090 --wirehouse-pid 123 \
//		--peer http://127.0.0.1:9428 --peer-pid 456 --start T0 --end T1
//	readcompare traces --wirehouse http://127.0.0.1:9090 --peer http://127.0.0.1:16686 ...
//	readcompare tee --listen 127.0.0.1:4318 --to URL --to URL
//
// tee is the load's fan-out: an OTLP/HTTP endpoint that sends every
// request it takes, byte for byte, to each --to URL and answers 200 only
// when all of them did, so one `wirehouse load` puts identical data in
// both servers.
//
// The exit status is 0 on success, 2 for a bad command line and 1 for any
// other error, a mismatch between the answers included.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ue usageError
		isUsage := errors.As(err, &ue)
		if !isUsage || !ue.printed {
			fmt.Fprintln(os.Stderr, "readcompare:", err)
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

const readcompareUsage = `usage: readcompare logs|traces|tee [flags]

  logs    wirehouse's Loki API (/loki/api/v1) against VictoriaLogs' LogsQL
          API (/select/logsql): needles with and without a stream selector,
          an attribute filter, volume by level, counts by service, topk
  traces  wirehouse's Jaeger API (/jaeger/api) against the Jaeger query
          service (/api): services, trace by id, search by service and by
          service and tag
  tee     an OTLP/HTTP endpoint that sends each request to every --to URL

Each query of logs and traces runs once to warm up, then --runs times on
each side; the answers must be equal. "readcompare CMD -h" lists a
command's flags.
`

// run runs the command of args, results to stdout, progress to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, readcompareUsage)
		return usageError{err: errors.New("a command is required: logs, traces or tee"), printed: true}
	}
	switch args[0] {
	case "logs", "traces":
		return runCompare(ctx, args[0], args[1:], stdout, stderr)
	case "tee":
		return runTee(ctx, args[1:], stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, readcompareUsage)
		return nil
	}
	fmt.Fprint(stderr, readcompareUsage)
	return usageError{err: fmt.Errorf("unknown command %q: logs, traces or tee", args[0]), printed: true}
}
