package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/loadgen"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/internal/tlsfiles"
	"github.com/wirehouse/wirehouse/otlpwire"
)

const loadUsage = `usage: wirehouse load [flags]

Load sends synthetic OTLP requests (the same generator as gen) to an OTLP
server and reports requests/s, records/s, latency percentiles and errors by
status code. Records are counted sent, accepted (acknowledged, less those a
partial success rejected) and stored: for --signal metrics sent round robin
over --variants requests, the accepted data points distinct by series and
millisecond, the samples a TSDB keeps (a point sent again is acknowledged
and kept once); --repeat and --payload send only new points. Requests are generated before the clock starts; latency runs from
sending a request to receiving its whole response. Progress goes to stderr
once a second, the summary to stdout (a table, or --csv / --json). Ctrl-C
stops early and prints the partial summary.

--transport remote-write (with --signal metrics) sends Prometheus remote
write 1.0 requests of --batch samples instead, one sample per series of
synth's Kubernetes metric set (metric name plus 40 labels); --variants×--batch
series, each moving one millisecond forward per round. --verify then reads
the run back through the server's Prometheus API (--query-endpoint) and
fails if an acknowledged series or sample is missing: exactly per series
for remote write, as totals of gauge and sum points for OTLP.

flags:
`

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, opts, err := parseLoadFlags(args, stderr)
	format, quiet, prof := opts.format, opts.quiet, opts.prof
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	// The profile file is created now, so that a bad path fails before the
	// requests are generated, and the profile started with the first
	// request; a run that never got there removes the empty file.
	var (
		profFile    *os.File
		profStarted bool
		profErr     error
	)
	if prof != "" {
		if profFile, err = os.Create(prof); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer func() {
			profFile.Close()
			if !profStarted {
				os.Remove(prof)
			}
		}()
	}
	var progress io.Writer = stderr
	if quiet {
		progress = nil
	}
	var (
		cpu0    time.Duration
		cpu0Err error
	)
	if opts.serverPID > 0 {
		if _, err := loadgen.ProcessCPU(opts.serverPID); err != nil {
			return fmt.Errorf("--server-pid: %w", err)
		}
		// From the first request on: not while the requests are generated.
		cfg.OnStart = func() { cpu0, cpu0Err = loadgen.ProcessCPU(opts.serverPID) }
	}
	if profFile != nil {
		// The sending phase only: generating the requests and verifying
		// them afterwards would otherwise dominate the profile.
		onStart := cfg.OnStart
		cfg.OnStart = func() {
			profErr = pprof.StartCPUProfile(profFile)
			profStarted = profErr == nil
			if onStart != nil {
				onStart()
			}
		}
	}
	// The sending phase only, as for the profile: generating the requests
	// and verifying them afterwards keep every processor.
	procs, prevProcs := loadProcs(opts.procs, cfg.Concurrency), 0
	if procs > 0 {
		onStart := cfg.OnStart
		cfg.OnStart = func() {
			prevProcs = runtime.GOMAXPROCS(procs)
			if onStart != nil {
				onStart()
			}
		}
	}
	res, err := loadgen.Run(ctx, cfg, progress)
	if prevProcs > 0 {
		// Setting GOMAXPROCS turned off the runtime's own tracking of the
		// CPUs available; give that back unless the environment chose.
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.SetDefaultGOMAXPROCS()
		} else {
			runtime.GOMAXPROCS(prevProcs)
		}
	}
	if profStarted {
		pprof.StopCPUProfile()
	}
	if profErr != nil {
		// The run itself is fine: say so and go on to its results.
		fmt.Fprintf(stderr, "wirehouse load: --cpuprofile: %v\n", profErr)
	}
	if err != nil {
		return err
	}
	if cpu0Err != nil {
		return fmt.Errorf("--server-pid: %w", cpu0Err)
	}
	if opts.serverPID > 0 {
		// Work a server defers past its response (flushes, compaction of
		// what was just written) still counts: wait for it to settle.
		select {
		case <-ctx.Done():
		case <-time.After(opts.settle):
		}
		cpu1, err := loadgen.ProcessCPU(opts.serverPID)
		if err != nil {
			return fmt.Errorf("--server-pid: %w", err)
		}
		res.ServerCPU = cpu1 - cpu0
		if res.ServerCPU > 0 {
			res.RecordsPerServerCPUSecond = float64(res.Stored) / res.ServerCPU.Seconds()
		}
	}
	if err := writeLoadResult(stdout, format, cfg, res); err != nil {
		return err
	}
	if res.Requests > 0 && res.OK == 0 {
		return fmt.Errorf("load: all %d requests failed", res.Requests)
	}
	if !opts.verify {
		return nil
	}
	v, err := loadgen.Verify(ctx, opts.queryEndpoint, cfg, res)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "verify     %s: series %d expected, %d found; samples %d expected, %d found; missing %d series, %d samples\n",
		v.Rule, v.SeriesExpected, v.SeriesFound, v.SamplesExpected, v.SamplesFound, v.MissingSeries, v.MissingSamples)
	if !v.OK() {
		return fmt.Errorf("load: verify: missing %d series, %d samples at %s: %s",
			v.MissingSeries, v.MissingSamples, opts.queryEndpoint, strings.Join(v.Missing, "; "))
	}
	return nil
}

// loadProcs is the GOMAXPROCS load sends with, or 0 to leave it as it is.
// By default it is the number of requests in flight (concurrency), at most
// what the runtime chose (the CPUs available to the process): with one request in flight there is never more
// than one goroutine with work, and with a second processor the runtime
// hands each response from gRPC's reader goroutine to the waiting worker on
// another thread. On a VM whose idle vCPUs halt, that wake-up is paid on
// every request and measured as the server's latency. An explicit --procs
// wins, and so does a GOMAXPROCS environment variable over the default.
// The setting is process-wide: two loads in one process (tests) must not
// run at once.
func loadProcs(procs, concurrency int) int {
	if procs > 0 {
		return procs
	}
	if os.Getenv("GOMAXPROCS") != "" {
		return 0
	}
	if n := runtime.GOMAXPROCS(0); concurrency < n {
		return concurrency
	}
	return 0
}

// loadOptions are the flags of load that are not loadgen.Config.
type loadOptions struct {
	format        string
	quiet         bool
	prof          string
	verify        bool
	queryEndpoint string
	serverPID     int
	settle        time.Duration
	procs         int
}

func parseLoadFlags(args []string, stderr io.Writer) (cfg loadgen.Config, o loadOptions, err error) {
	cfg = loadgen.DefaultConfig()
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), loadUsage)
		fs.PrintDefaults()
	}
	var endpoint, signal, payload string
	var asCSV, asJSON, useTLS bool
	var tlsClient tlsfiles.Client
	fs.StringVar(&endpoint, "endpoint", "", "server address: host:port, or a URL for HTTP (default localhost:4317 for grpc, localhost:4318 for http, "+loadgen.DefaultRemoteWriteEndpoint+" for remote-write)")
	fs.StringVar(&cfg.Transport, "transport", cfg.Transport, "grpc, http or remote-write (Prometheus remote write 1.0, --signal metrics)")
	fs.StringVar(&cfg.Encoding, "encoding", cfg.Encoding, "HTTP body encoding: proto or json")
	fs.StringVar(&cfg.Compression, "compress", cfg.Compression, "compression: none, gzip or zstd")
	fs.StringVar(&signal, "signal", "logs", "signal: logs, traces or metrics")
	fs.IntVar(&cfg.Batch, "batch", cfg.Batch, "records (log records, spans, data points) per request")
	fs.IntVar(&cfg.Resources, "resources", cfg.Resources, "resources per request")
	fs.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "concurrent workers, each with one request outstanding")
	fs.Float64Var(&cfg.Rate, "rate", 0, "total requests per second; 0 sends as fast as responses return")
	fs.IntVar(&cfg.Count, "count", 0, "requests to send; 0 runs for --duration")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long to run when --count is 0")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "per-request timeout")
	fs.IntVar(&cfg.Variants, "variants", cfg.Variants, "distinct pre-generated requests, sent round robin")
	fs.Int64Var(&cfg.Seed, "seed", 0, "seed of the first generated request")
	fs.BoolVar(&cfg.Repeat, "repeat", false, "send the same records in every request, one second later each time (needs --count; one request is generated per request sent): a periodic exporter's steady state")
	fs.IntVar(&cfg.Exporters, "exporters", 1, "with --repeat (metrics, OTLP): send this many copies of the series (copy k > 0 with service.instance.id suffixed /k), as that many exporters, each in time order (at most this many requests in flight)")
	fs.StringVar(&payload, "payload", "", "metrics only, with --count: instead of the Kubernetes set, a stream over --series series with one point per series per second: gauge (2 resource + 2 point attributes), rich (20 + 10) or histogram (16 bounds)")
	fs.IntVar(&cfg.Series, "series", cfg.Series, "distinct series of a --payload stream; at most --series/--batch requests are in flight, whatever --concurrency says, so that no series is sent out of order")
	fs.IntVar(&o.serverPID, "server-pid", 0, "also measure this local server process's CPU time (user+system, /proc/<pid>/stat) over the run and report records per server CPU-second")
	fs.DurationVar(&o.settle, "server-settle", 2*time.Second, "with --server-pid, how long to wait after the last response before reading the server's CPU time, so deferred work counts")
	fs.BoolVar(&asCSV, "csv", false, "print the summary as CSV")
	fs.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&o.verify, "verify", false, "after the run, check through the Prometheus API that every acknowledged series and sample is stored (--signal metrics)")
	fs.StringVar(&o.queryEndpoint, "query-endpoint", "", "base URL of the Prometheus HTTP API for --verify (default: the --endpoint host on port 9090 for remote-write, else http://localhost:9090)")
	var tokenFile string
	fs.StringVar(&cfg.BearerToken, "bearer-token", "", "send Authorization: Bearer <token> with every OTLP request (visible in the process list; see --bearer-token-file)")
	fs.StringVar(&tokenFile, "bearer-token-file", "", "read the bearer token from the first line of this file")
	fs.StringVar(&cfg.AdminBearerToken, "admin-bearer-token", "", "send Authorization: Bearer <token> to the admin server: remote-write requests and --verify's queries")
	fs.BoolVar(&useTLS, "tls", false, "send over TLS, verifying the server against the system's CAs (implied by the other --tls flags)")
	fs.StringVar(&tlsClient.CAFile, "tls-ca-file", "", "PEM CA certificates that verify the server, in place of the system's")
	fs.StringVar(&tlsClient.CertFile, "tls-cert-file", "", "PEM client certificate, for servers that require one (mutual TLS)")
	fs.StringVar(&tlsClient.KeyFile, "tls-key-file", "", "PEM private key of --tls-cert-file")
	fs.StringVar(&tlsClient.ServerName, "tls-server-name", "", "name the server certificate must carry, if not the endpoint's host")
	fs.BoolVar(&tlsClient.InsecureSkipVerify, "tls-insecure-skip-verify", false, "do not verify the server's certificate (testing only)")
	fs.IntVar(&o.procs, "procs", 0, "Go processors (GOMAXPROCS) the load generator sends with; 0 means --concurrency, at most the CPUs available, unless the GOMAXPROCS environment variable is set")
	fs.StringVar(&o.prof, "cpuprofile", "", "write the load generator's own CPU profile, from its first request to the end of the run (not generating or verifying), to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, o, err
		}
		return cfg, o, usageError{err: err, printed: true}
	}
	if fs.NArg() > 0 {
		return cfg, o, usageError{err: fmt.Errorf("load: unexpected argument %q", fs.Arg(0))}
	}
	if cfg.Signal, err = otlpwire.ParseSignal(signal); err != nil {
		return cfg, o, usageError{err: fmt.Errorf("--signal: %q is not logs, traces or metrics", signal)}
	}
	if payload != "" {
		if cfg.Payload, err = synth.ParsePayload(payload); err != nil {
			return cfg, o, usageError{err: fmt.Errorf("--payload: %q is not gauge, rich or histogram", payload)}
		}
	}
	if tokenFile != "" {
		if cfg.BearerToken != "" {
			return cfg, o, usageError{err: errors.New("--bearer-token and --bearer-token-file exclude each other")}
		}
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return cfg, o, usageError{err: fmt.Errorf("--bearer-token-file: %w", err)}
		}
		cfg.BearerToken, _, _ = strings.Cut(string(b), "\n")
		cfg.BearerToken = strings.TrimSpace(cfg.BearerToken)
	}
	if cfg.BearerToken != "" && cfg.Transport == "remote-write" {
		return cfg, o, usageError{err: errors.New("--bearer-token: OTLP only; remote write goes to the admin server (--admin-bearer-token)")}
	}
	if useTLS || tlsClient != (tlsfiles.Client{}) {
		if cfg.TLS, err = tlsClient.Config(); err != nil {
			return cfg, o, usageError{err: err}
		}
	}
	if o.procs < 0 {
		return cfg, o, usageError{err: fmt.Errorf("--procs: %d is negative", o.procs)}
	}
	if o.settle < 0 {
		return cfg, o, usageError{err: fmt.Errorf("--server-settle: %v is negative", o.settle)}
	}
	cfg.Endpoint = endpoint
	if endpoint == "" {
		switch cfg.Transport {
		case "http":
			cfg.Endpoint = "localhost:4318"
		case "remote-write":
			cfg.Endpoint = loadgen.DefaultRemoteWriteEndpoint
		default:
			cfg.Endpoint = "localhost:4317"
		}
	}
	if o.verify && cfg.Signal != otlpwire.SignalMetrics {
		return cfg, o, usageError{err: errors.New("--verify needs --signal metrics")}
	}
	if o.queryEndpoint == "" {
		o.queryEndpoint = "http://localhost:9090"
		if cfg.Transport == "remote-write" {
			// The remote write handler sits next to the query API.
			if u, err := url.Parse(cfg.Endpoint); err == nil && u.Host != "" {
				o.queryEndpoint = u.Scheme + "://" + u.Host
			}
		}
	}
	o.format = "table"
	switch {
	case asCSV && asJSON:
		return cfg, o, usageError{err: errors.New("--csv and --json exclude each other")}
	case asCSV:
		o.format = "csv"
	case asJSON:
		o.format = "json"
	}
	if err := cfg.Validate(); err != nil {
		return cfg, o, usageError{err: err}
	}
	return cfg, o, nil
}

func writeLoadResult(w io.Writer, format string, cfg loadgen.Config, r loadgen.Result) error {
	codes := make([]string, 0, len(r.Errors))
	for c := range r.Errors {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var errs []string
	for _, c := range codes {
		errs = append(errs, fmt.Sprintf("%s=%d", c, r.Errors[c]))
	}
	us := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e3, 'f', 1, 64) }
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Signal      string `json:"signal"`
			Transport   string `json:"transport"`
			Encoding    string `json:"encoding"`
			Compression string `json:"compression"`
			Batch       int    `json:"batch"`
			Concurrency int    `json:"concurrency"`
			loadgen.Result
		}{cfg.Signal.String(), cfg.Transport, cfg.Encoding, cfg.Compression, cfg.Batch, cfg.Concurrency, r})
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write([]string{"signal", "transport", "encoding", "compression", "batch", "concurrency", "requests", "ok", "failed",
			"records_accepted", "records_rejected", "elapsed_s", "requests_per_s", "records_per_s",
			"p50_us", "p90_us", "p99_us", "max_us", "mean_us", "errors",
			"server_cpu_s", "records_per_server_cpu_s", "client_cpu_s", "records_stored", "records_stored_per_s"}) //nolint:errcheck // cw.Error below
		cw.Write([]string{cfg.Signal.String(), cfg.Transport, cfg.Encoding, cfg.Compression, strconv.Itoa(cfg.Batch),
			strconv.Itoa(cfg.Concurrency), strconv.FormatInt(r.Requests, 10), strconv.FormatInt(r.OK, 10),
			strconv.FormatInt(r.Failed, 10), strconv.FormatInt(r.Accepted, 10), strconv.FormatInt(r.Rejected, 10),
			strconv.FormatFloat(r.Elapsed.Seconds(), 'f', 3, 64), strconv.FormatFloat(r.RequestsPerS, 'f', 1, 64),
			strconv.FormatFloat(r.RecordsPerS, 'f', 1, 64), us(r.Latency.P50), us(r.Latency.P90), us(r.Latency.P99),
			us(r.Latency.Max), us(r.Latency.Mean), strings.Join(errs, " "),
			strconv.FormatFloat(r.ServerCPU.Seconds(), 'f', 2, 64),
			strconv.FormatFloat(r.RecordsPerServerCPUSecond, 'f', 0, 64),
			strconv.FormatFloat(r.ClientCPU.Seconds(), 'f', 2, 64),
			strconv.FormatInt(r.Stored, 10), strconv.FormatFloat(r.StoredPerS, 'f', 1, 64)}) //nolint:errcheck
		cw.Flush()
		return cw.Error()
	}
	status := ""
	if r.Interrupted {
		status = " (interrupted)"
	}
	errLine := "none"
	if len(errs) > 0 {
		errLine = strings.Join(errs, ", ")
	}
	_, err := fmt.Fprintf(w, `%s over %s (%s, %s), batch %d, concurrency %d%s
requests   %d sent, %d ok, %d failed in %.2fs
rate       %.1f requests/s, %.0f records/s stored, %.0f records/s accepted
records    %d sent, %d accepted, %d rejected (partial success), %d stored
latency    p50 %sµs  p90 %sµs  p99 %sµs  max %sµs  mean %sµs
errors     %s
`, cfg.Signal, cfg.Transport, cfg.Encoding, cfg.Compression, cfg.Batch, cfg.Concurrency, status,
		r.Requests, r.OK, r.Failed, r.Elapsed.Seconds(),
		r.RequestsPerS, r.StoredPerS, r.RecordsPerS,
		r.Records, r.Accepted, r.Rejected, r.Stored,
		us(r.Latency.P50), us(r.Latency.P90), us(r.Latency.P99), us(r.Latency.Max), us(r.Latency.Mean),
		errLine)
	if err == nil && r.Stored < r.Accepted {
		_, err = fmt.Fprintf(w, "stored     %d of the accepted records repeat a series and millisecond already sent (round robin over --variants %d requests, or two points of a series in one millisecond): a TSDB keeps one sample of each; --repeat or --payload send only new points\n",
			r.Accepted-r.Stored, cfg.Variants)
	}
	if err == nil && r.ClientCPU > 0 {
		_, err = fmt.Fprintf(w, "client     %.2f CPU-seconds while sending (%.0f%% of one core)\n",
			r.ClientCPU.Seconds(), 100*r.ClientCPU.Seconds()/r.Elapsed.Seconds())
	}
	if err == nil && r.ServerCPU > 0 {
		_, err = fmt.Fprintf(w, "server     %.2f CPU-seconds, %.0f records accepted per server CPU-second\n",
			r.ServerCPU.Seconds(), r.RecordsPerServerCPUSecond)
	}
	return err
}
