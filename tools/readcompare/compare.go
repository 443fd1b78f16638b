package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/tools/internal/benchstats"
)

const compareUsage = `usage: readcompare %[1]s --wirehouse URL --peer URL --start TIME --end TIME [flags]

Runs the %[1]s query set against wirehouse (the base URL of its admin
port) and the peer (%[2]s, the base URL of its query API), over data
both hold between --start and --end (RFC 3339): each query once to warm
up, then --runs times on each side (fewer, at least 3, once they have
taken --budget). The answers must be equal: the table marks those that
are not, and the command then fails with a short diff. With
--wirehouse-pid and --peer-pid it waits until both servers are idle
(under 5%% of a CPU for 2 s; at most --settle) and reads each server's
CPU time from /proc/PID/stat before and after a query's repetitions.

flags:
`

// compareFlags are the flags of logs and traces.
type compareFlags struct {
	ours, peer       string
	oursPID, peerPID int
	start, end       time.Time
	runs             int
	budget           time.Duration
	settle           time.Duration
	limit            int
	service          string
}

// runCompare runs mode's (logs or traces) query set on both servers and
// prints the table; a mismatch is an error, after the table.
func runCompare(ctx context.Context, mode string, args []string, stdout, stderr io.Writer) error {
	f := compareFlags{}
	var start, end string
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	fs.SetOutput(stderr)
	peerName := map[string]string{"logs": "VictoriaLogs", "traces": "Jaeger"}[mode]
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), compareUsage, mode, peerName)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.ours, "wirehouse", "", "base URL of wirehouse's admin port, e.g. http://127.0.0.1:9090 (required)")
	fs.StringVar(&f.peer, "peer", "", "base URL of the peer's query API, e.g. http://127.0.0.1:9428 (required)")
	fs.IntVar(&f.oursPID, "wirehouse-pid", 0, "wirehouse's process id, to read its CPU time (0: not measured)")
	fs.IntVar(&f.peerPID, "peer-pid", 0, "the peer's process id, to read its CPU time (0: not measured)")
	fs.StringVar(&start, "start", "", "RFC 3339 time before the data's first record (required)")
	fs.StringVar(&end, "end", "", "RFC 3339 time after the data's last record (required)")
	fs.IntVar(&f.runs, "runs", 20, "measured repetitions of each query on each side, after one to warm up")
	fs.DurationVar(&f.budget, "budget", time.Minute, "time after which a query's repetitions on a side stop early, once it has had 3")
	fs.DurationVar(&f.settle, "settle", 5*time.Minute, "how long to wait at most for both servers to go idle (compactions, merges) before querying")
	fs.StringVar(&f.service, "service", "checkout", "the service of the queries that select one")
	f.limit = 1
	if mode == "logs" {
		fs.IntVar(&f.limit, "limit", 1000, "lines a line query returns at most (newest first; wirehouse's most is 5000)")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err: err, printed: true}
	}
	var err error
	if f.ours == "" || f.peer == "" || start == "" || end == "" || fs.NArg() > 0 {
		return usageError{err: errors.New("--wirehouse, --peer, --start and --end are required, and no arguments")}
	}
	if f.start, err = time.Parse(time.RFC3339Nano, start); err != nil {
		return usageError{err: fmt.Errorf("--start: %w", err)}
	}
	if f.end, err = time.Parse(time.RFC3339Nano, end); err != nil {
		return usageError{err: fmt.Errorf("--end: %w", err)}
	}
	if !f.start.Before(f.end) || f.runs < 1 || f.limit < 1 {
		return usageError{err: errors.New("--start must be before --end; --runs and --limit must be positive")}
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	ours := &server{name: "wirehouse", base: strings.TrimRight(f.ours, "/"), pid: f.oursPID, client: client}
	peer := &server{name: peerName, base: strings.TrimRight(f.peer, "/"), pid: f.peerPID, client: client}
	var qs []query
	if mode == "logs" {
		qs, err = logQueries(ctx, ours, f, stderr)
	} else {
		qs, err = traceQueries(ctx, ours, f, stderr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "readcompare: waiting until the servers are idle\n")
	if err := settle(ctx, []int{ours.pid, peer.pid}, f.settle, stderr); err != nil {
		return err
	}
	return compare(ctx, qs, ours, peer, f.runs, f.budget, stdout, stderr)
}

// compare runs every query on both servers, prints the table to stdout
// a row at a time and returns an error naming the queries whose answers
// differ or that failed.
func compare(ctx context.Context, qs []query, ours, peer *server, runs int, budget time.Duration, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "| query | answer | runs | %[1]s P50 ms | %[1]s P99 ms | %[2]s P50 ms | %[2]s P99 ms | %[1]s CPU ms/query | %[2]s CPU ms/query | P50 %[1]s/%[2]s | same answer |\n", ours.name, peer.name)
	fmt.Fprintln(stdout, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	var bad []string
	for _, q := range qs {
		fmt.Fprintf(stderr, "readcompare: %s (%d calls a run)\n", q.name, len(q.ours))
		a, err := measure(ctx, ours, q.ours, runs, budget)
		var b sideResult
		if err == nil {
			b, err = measure(ctx, peer, q.peer, runs, budget)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			fmt.Fprintf(stdout, "| %s | - | - | - | - | - | - | - | - | - | **error** |\n", q.name)
			bad = append(bad, fmt.Sprintf("%s: %v", q.name, err))
			continue
		}
		size, diff := 0, ""
		for i := range a.answers {
			x, y := a.answers[i], b.answers[i]
			if q.trim != nil {
				x, y = q.trim(x, y)
			}
			if d := diffAnswers(x, y, ours.name, peer.name); d != "" && diff == "" {
				diff = fmt.Sprintf("call %d of %d: %s", i+1, len(a.answers), d)
			}
			size += a.answers[i].size
		}
		same := "yes"
		if diff != "" {
			same = "**NO**"
			bad = append(bad, fmt.Sprintf("%s: %s", q.name, diff))
		}
		p50a, p50b := benchstats.Percentile(a.lat, 50), benchstats.Percentile(b.lat, 50)
		fmt.Fprintf(stdout, "| %s | %d %s | %d/%d | %s | %s | %s | %s | %s | %s | %.2f | %s |\n", q.name, size, q.unit, a.runs, b.runs,
			benchstats.MS(p50a), benchstats.MS(benchstats.Percentile(a.lat, 99)),
			benchstats.MS(p50b), benchstats.MS(benchstats.Percentile(b.lat, 99)),
			cpuPerCall(a, ours.pid), cpuPerCall(b, peer.pid),
			float64(p50a)/float64(max(p50b, 1)), same)
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d of %d queries failed or differ:\n%s", len(bad), len(qs), strings.Join(bad, "\n"))
	}
	return nil
}

// cpuPerCall is the server CPU a measured call took, in ms; "-" when the
// process was not given.
func cpuPerCall(r sideResult, pid int) string {
	if pid == 0 || r.calls == 0 {
		return "-"
	}
	return benchstats.MS(r.cpu / time.Duration(r.calls))
}

// diffAnswers is "" when a and b hold the same items, else a short
// account: the counts and the first items only one side has.
func diffAnswers(a, b answer, an, bn string) string {
	if slices.Equal(a.items, b.items) {
		return ""
	}
	onlyA, onlyB := minus(a.items, b.items), minus(b.items, a.items)
	var s strings.Builder
	fmt.Fprintf(&s, "%s has %d items, %s %d; %d only in %s, %d only in %s", an, len(a.items), bn, len(b.items), len(onlyA), an, len(onlyB), bn)
	for _, side := range []struct {
		name  string
		items []string
	}{{an, onlyA}, {bn, onlyB}} {
		for i, it := range side.items {
			if i == 3 {
				fmt.Fprintf(&s, "\n    … %d more only in %s", len(side.items)-3, side.name)
				break
			}
			fmt.Fprintf(&s, "\n    only in %s: %s", side.name, clip(it, 200))
		}
	}
	return s.String()
}

// minus is the items of sorted a not in sorted b, as multisets.
func minus(a, b []string) []string {
	var out []string
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			j++
			continue
		}
		out = append(out, x)
	}
	return out
}
