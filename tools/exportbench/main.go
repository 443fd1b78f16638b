// Command exportbench compares metric export formats through the real
// OpenTelemetry Collector exporters and receivers: OTLP over gRPC, over
// HTTP as protobuf and as JSON, and STEF, each plain, zstd- and (for OTLP)
// gzip-compressed, and the relay wirehouse itself would use to forward
// (the request's own bytes, never re-marshalled).
//
// Every format exports the same batches of ExportMetricsServiceRequest
// into a Collector receiver (otlpreceiver or stefreceiver) in a child
// process, through a loopback TCP proxy that counts the bytes on the wire.
// The clock stops when the receiver's sink holds every data point; one
// extra pass per format checks that every point arrived intact.
//
// Usage:
//
//	exportbench [--input-dir DIR] [--iterations N] [--formats a,b] [--consumers N] [--csv|--json]
//
// Without --input-dir it exports a built-in dataset written by `wirehouse
// gen`. Results go to stdout, progress to stderr.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"time"
)

func main() {
	if os.Getenv(receiverEnv) == "1" {
		if err := runReceiver(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "exportbench receiver:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "exportbench:", err)
		}
		os.Exit(2)
	}
}

// defaultTimeout is the longest wait for a pass to arrive.
const defaultTimeout = 2 * time.Minute

// config is the parsed command line.
type config struct {
	inputDir   string
	iterations int
	formats    []Format
	pass       passOptions
	gen        genOptions
	output     string // markdown, csv or json
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{output: "markdown"}
	fs := flag.NewFlagSet("exportbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var formats string
	var asCSV, asJSON bool
	fs.StringVar(&c.inputDir, "input-dir", "", "directory of .pb/.binpb files, each an ExportMetricsServiceRequest (default: the built-in generated dataset)")
	fs.IntVar(&c.iterations, "iterations", 3, "timed passes per format, after one verifying pass")
	fs.StringVar(&formats, "formats", "all", "comma-separated formats to run")
	fs.IntVar(&c.pass.Consumers, "consumers", 10, "sending-queue consumers (concurrent exports) of every exporter; the Collector's default is 10")
	fs.DurationVar(&c.pass.Timeout, "timeout", defaultTimeout, "longest wait for the receiver to hold every data point of a pass")
	fs.IntVar(&c.gen.Batches, "gen-batches", 20, "built-in dataset: batches (requests)")
	fs.IntVar(&c.gen.Points, "gen-points", 1000, "built-in dataset: data points per batch")
	fs.IntVar(&c.gen.Resources, "gen-resources", 10, "built-in dataset: resources (scrape targets) per batch")
	fs.BoolVar(&c.gen.Churn, "gen-churn", false, "built-in dataset: every batch other series, not the same targets a second later")
	fs.StringVar(&c.gen.Values, "gen-values", "noisy", "built-in dataset: noisy (scrape times jitter, counters grow unevenly, gauges jump, as real values do) or smooth (exactly linear counters and sine gauges, the best case for delta coding)")
	fs.StringVar(&c.gen.Wirehouse, "wirehouse", "", "wirehouse binary that generates the built-in dataset (default: go run ./cmd/wirehouse in this repository)")
	fs.BoolVar(&asCSV, "csv", false, "write CSV instead of a markdown table")
	fs.BoolVar(&asJSON, "json", false, "write JSON instead of a markdown table")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if c.formats, err = parseFormats(formats); err != nil {
		return nil, fmt.Errorf("--formats: %w", err)
	}
	switch {
	case asCSV && asJSON:
		return nil, errors.New("--csv and --json: pick one")
	case asCSV:
		c.output = "csv"
	case asJSON:
		c.output = "json"
	}
	switch {
	case c.iterations < 1:
		return nil, fmt.Errorf("--iterations: %d is less than 1", c.iterations)
	case c.pass.Consumers < 1:
		return nil, fmt.Errorf("--consumers: %d is less than 1", c.pass.Consumers)
	case c.pass.Timeout <= 0:
		return nil, fmt.Errorf("--timeout: %v is not positive", c.pass.Timeout)
	case c.gen.Batches < 2:
		return nil, fmt.Errorf("--gen-batches: %d is less than 2 (one cold, at least one steady)", c.gen.Batches)
	case c.gen.Points < 1 || c.gen.Resources < 1:
		return nil, errors.New("--gen-points and --gen-resources: must be at least 1")
	case c.gen.Values != "noisy" && c.gen.Values != "smooth":
		return nil, fmt.Errorf("--gen-values: %q is not noisy or smooth", c.gen.Values)
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var ds *dataset
	if c.inputDir != "" {
		ds, err = loadDir(c.inputDir)
	} else {
		ds, err = generate(ctx, c.gen, stderr)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "exportbench: %d batches, %d data points, %d bytes of protobuf\n", len(ds.batches), ds.points, ds.raw)

	rp, err := startReceiver(stderr)
	if err != nil {
		return err
	}
	defer rp.Close()
	var results []Result
	failed := 0
	for _, f := range c.formats {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "exportbench: %s\n", f.Name)
		r := measure(ctx, rp, f, ds, c.pass, c.iterations, stderr)
		if r.Err != "" || !r.Intact {
			failed++
			fmt.Fprintf(stderr, "exportbench: %s: error %q, lost %q\n", f.Name, r.Err, r.Lost)
		}
		results = append(results, r)
	}
	rep := report{Dataset: ds.name, Batches: len(ds.batches), Points: ds.points, RawBytes: ds.raw,
		Iterations: c.iterations, Consumers: c.pass.Consumers, GOMAXPROCS: runtime.GOMAXPROCS(0),
		Date: time.Now().UTC().Format("2006-01-02"), Results: results}
	switch c.output {
	case "csv":
		err = rep.writeCSV(stdout)
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	default:
		err = rep.writeMarkdown(stdout)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d formats failed or lost data", failed, len(results))
	}
	return nil
}

// report is the whole output.
type report struct {
	Dataset    string   `json:"dataset"`
	Batches    int      `json:"batches"`
	Points     int64    `json:"points"`
	RawBytes   int64    `json:"raw_bytes"`
	Iterations int      `json:"iterations"`
	Consumers  int      `json:"consumers"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	Date       string   `json:"date"`
	Results    []Result `json:"results"`
}

const settingsNote = "Every exporter: sending queue on with %d consumers, room for every batch (block_on_overflow), no re-batching, no retries, wait_for_result off; the relay sends from the same kind of queue with %d workers. " +
	"The clock stops when the receiver's sink holds every data point. Steady = batches 2..n of a pass; cold = its first batch, on a new connection or stream. " +
	"Wire bytes are TCP payload client→server through a counting proxy (headers and framing included). Allocations are per data point in the steady phase, sender and receiver processes apart.\n"

func (rep report) writeMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "Dataset: %s — %d batches, %d data points, %s of protobuf. %d timed passes per format after one verifying pass; GOMAXPROCS %d; %s.\n\n",
		rep.Dataset, rep.Batches, rep.Points, mb(rep.RawBytes), rep.Iterations, rep.GOMAXPROCS, rep.Date)
	fmt.Fprintf(w, settingsNote, rep.Consumers, rep.Consumers)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| format | wire bytes | ratio vs raw | ns/point | wire B/point | sender allocs/point | sender B/point | receiver allocs/point | receiver B/point | cold bytes | steady bytes/batch | intact |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, r := range rep.Results {
		if r.Err != "" {
			fmt.Fprintf(w, "| %s | failed: %s |||||||||||\n", r.Format, r.Err)
			continue
		}
		intact := "yes"
		if !r.Intact {
			intact = "no: " + r.Lost
		}
		fmt.Fprintf(w, "| %s | %s | %.2f× | %.0f | %.1f | %.2f | %.0f | %.2f | %.0f | %s | %s | %s |\n",
			r.Format, mb(r.WireBytes), r.Ratio, r.NsPerPoint, r.WireBytesPerPoint,
			r.SendAllocsPerPoint, r.SendBytesPerPoint, r.RecvAllocsPerPoint, r.RecvBytesPerPoint,
			kb(r.ColdBytes), kb(int64(r.SteadyBytesPerBatch)), intact)
	}
	return nil
}

func (rep report) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"format", "batches", "points", "raw_bytes", "wire_bytes", "response_bytes", "ratio_vs_raw",
		"ns_per_point", "wire_bytes_per_point", "sender_allocs_per_point", "sender_bytes_per_point",
		"receiver_allocs_per_point", "receiver_bytes_per_point", "cold_bytes", "steady_bytes_per_batch",
		"cold_ms", "connections", "passes", "intact", "lost", "error"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	i := func(x int64) string { return strconv.FormatInt(x, 10) }
	for _, r := range rep.Results {
		cw.Write([]string{r.Format, strconv.Itoa(r.Batches), i(r.Points), i(r.RawBytes), i(r.WireBytes), i(r.ResponseBytes),
			f(r.Ratio), f(r.NsPerPoint), f(r.WireBytesPerPoint), f(r.SendAllocsPerPoint), f(r.SendBytesPerPoint),
			f(r.RecvAllocsPerPoint), f(r.RecvBytesPerPoint), i(r.ColdBytes), f(r.SteadyBytesPerBatch),
			f(r.ColdMillis), f(r.Connections), strconv.Itoa(r.Passes), strconv.FormatBool(r.Intact), r.Lost, r.Err})
	}
	cw.Flush()
	return cw.Error()
}

func mb(n int64) string { return fmt.Sprintf("%.2f MB", float64(n)/1e6) }

func kb(n int64) string {
	if n < 10_000 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f kB", float64(n)/1e3)
}
