package loadgen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Config describes a load run. Start from DefaultConfig.
type Config struct {
	// Endpoint is host:port (gRPC), a base URL or host:port (HTTP; the
	// signal's /v1/... path is appended) or the full URL of the remote
	// write handler (remote-write).
	Endpoint    string
	Transport   string // "grpc", "http" or "remote-write" (metrics only)
	Encoding    string // "proto" or "json" (HTTP only)
	Compression string // "none", "gzip" or "zstd"
	Signal      otlpwire.Signal
	Batch       int // records per request
	Resources   int // resources per request (at most Batch)
	Concurrency int
	// Rate is the total requests per second over all workers; 0 sends as
	// fast as responses come back.
	Rate float64
	// Count is the number of requests to send; 0 means run for Duration.
	Count    int
	Duration time.Duration
	Timeout  time.Duration // per request
	Variants int           // distinct pre-generated requests, sent round robin
	Seed     int64
	// Repeat makes every variant carry the same records (those of Seed)
	// at successive times, one second apart: the same series moving
	// forward, as a periodic exporter sends them. With Count, one variant
	// is generated per request, so no sample is sent twice.
	Repeat bool
	// Exporters, with Repeat and more than 1, sends that many copies of
	// the metric series (synth.Config.Copy), as that many exporters of
	// the same targets: request n belongs to exporter n mod Exporters and
	// carries its round n / Exporters, and at most Exporters requests are
	// in flight, so every exporter's series stay in time order (several
	// senders of one series set deliver out of order, which the TSDB
	// takes through its slower out-of-order path).
	Exporters int
	// Payload, if set (metrics only, with Count), replaces the Kubernetes
	// metric set with a synth.SeriesRequest stream over Series series:
	// request n carries points n×Batch.. of the rounds that give every
	// series one point per second, so nothing is sent twice.
	Payload synth.Payload
	Series  int
	// BearerToken, if set, is sent with every OTLP request as
	// "Authorization: Bearer <token>" (gRPC: authorization metadata).
	BearerToken string
	// AdminBearerToken, if set, is sent the same way to the admin server:
	// with remote-write requests and Verify's queries.
	AdminBearerToken string
	// TLS, if not nil, sends over TLS (internal/tlsfiles builds it): gRPC
	// with it as transport credentials, HTTP to an https endpoint (a
	// host:port endpoint becomes https://host:port). Verify's queries to
	// an https query endpoint use it too.
	TLS *tls.Config
	// OnStart, if set, is called once the requests are generated and the
	// senders are ready, just before the first request: the start of what
	// Result measures.
	OnStart func()
}

// DefaultConfig returns 1,000-record log requests over gRPC to
// localhost:4317 from one worker for 10 seconds.
func DefaultConfig() Config {
	return Config{
		Endpoint: "localhost:4317", Transport: "grpc", Encoding: "proto", Compression: "none",
		Signal: otlpwire.SignalLogs, Batch: 1000, Resources: 1, Concurrency: 1,
		Duration: 10 * time.Second, Timeout: 10 * time.Second, Variants: 16, Series: 2000,
	}
}

// Validate reports the first invalid setting, naming its flag.
func (c Config) Validate() error {
	switch {
	case c.Endpoint == "":
		return errors.New("--endpoint must be set")
	case c.Transport != "grpc" && c.Transport != "http" && c.Transport != "remote-write":
		return fmt.Errorf("--transport: %q is not grpc, http or remote-write", c.Transport)
	case c.Transport == "remote-write" && c.Signal != otlpwire.SignalMetrics:
		return errors.New("--transport remote-write needs --signal metrics")
	case c.Transport == "remote-write" && (c.Encoding != "proto" || c.Compression != "none"):
		return errors.New("--transport remote-write is always snappy protobuf: leave --encoding and --compress unset")
	case c.Encoding != "proto" && c.Encoding != "json":
		return fmt.Errorf("--encoding: %q is not proto or json", c.Encoding)
	case c.Encoding == "json" && c.Transport != "http":
		return errors.New("--encoding json needs --transport http (OTLP/gRPC is protobuf only)")
	case c.Compression != "none" && c.Compression != "gzip" && c.Compression != "zstd":
		return fmt.Errorf("--compress: %q is not none, gzip or zstd", c.Compression)
	case c.Batch < 1:
		return fmt.Errorf("--batch must be at least 1, got %d", c.Batch)
	case c.Resources < 1 || c.Resources > c.Batch:
		return fmt.Errorf("--resources must be between 1 and --batch (%d), got %d", c.Batch, c.Resources)
	case c.Concurrency < 1:
		return fmt.Errorf("--concurrency must be at least 1, got %d", c.Concurrency)
	case c.Rate < 0:
		return fmt.Errorf("--rate must not be negative, got %g", c.Rate)
	case c.Count < 0:
		return fmt.Errorf("--count must not be negative, got %d", c.Count)
	case c.Count == 0 && c.Duration <= 0:
		return errors.New("set --count or a positive --duration")
	case c.Timeout <= 0:
		return fmt.Errorf("--timeout must be positive, got %s", c.Timeout)
	case c.Variants < 1:
		return fmt.Errorf("--variants must be at least 1, got %d", c.Variants)
	case c.Repeat && c.Count == 0:
		return errors.New("--repeat needs --count (one request is generated per request sent)")
	case c.Exporters < 0:
		return fmt.Errorf("--exporters must not be negative, got %d", c.Exporters)
	case c.Exporters > 1 && (!c.Repeat || c.Signal != otlpwire.SignalMetrics || c.Transport == "remote-write"):
		return errors.New("--exporters needs --repeat, --signal metrics and an OTLP transport")
	case c.Payload != 0 && c.Signal != otlpwire.SignalMetrics:
		return errors.New("--payload needs --signal metrics")
	case c.Payload != 0 && c.Count == 0:
		return errors.New("--payload needs --count (one request is generated per request sent)")
	case c.Payload != 0 && c.Transport == "remote-write":
		return errors.New("--payload is sent over OTLP: --transport grpc or http")
	case c.Payload != 0 && c.Repeat:
		return errors.New("--payload and --repeat exclude each other (a payload stream already moves forward)")
	case c.Payload != 0 && c.Resources != 1:
		return errors.New("--resources has no effect with --payload (its series come 100 to a resource)")
	case c.Payload != 0 && c.Series < 1:
		return fmt.Errorf("--series must be at least 1, got %d", c.Series)
	case (c.Repeat || c.Payload != 0) && int64(c.Count)*int64(c.Batch) > 50_000_000:
		return fmt.Errorf("--repeat and --payload pre-generate every request: --count × --batch must be at most 50,000,000, got %d", int64(c.Count)*int64(c.Batch))
	}
	return nil
}

// Result summarizes a run. Latencies cover every request that got a
// response, successful or not; requests that failed without one (e.g. a
// refused connection) count only in Errors.
type Result struct {
	Requests     int64            `json:"requests"`
	OK           int64            `json:"ok"`
	Failed       int64            `json:"failed"`
	Records      int64            `json:"records_sent"`
	Accepted     int64            `json:"records_accepted"`
	Rejected     int64            `json:"records_rejected"` // partial-success rejections
	BytesSent    int64            `json:"bytes_sent"`       // request bodies as sent (HTTP: compressed)
	Elapsed      time.Duration    `json:"elapsed_ns"`
	RequestsPerS float64          `json:"requests_per_second"`
	RecordsPerS  float64          `json:"records_per_second"`
	Latency      Latency          `json:"latency"`
	Errors       map[string]int64 `json:"errors"`
	Interrupted  bool             `json:"interrupted"`
	// Stored is the accepted records a server can store: for OTLP metrics
	// sent round robin from Variants requests, the acknowledged data
	// points that are distinct by series and millisecond (a point sent
	// again, or a second point of a series in a millisecond, is one sample
	// in a TSDB: a server acknowledges it, and drops or refuses it), at most
	// Accepted; Accepted otherwise (see storable).
	Stored     int64   `json:"records_stored"`
	StoredPerS float64 `json:"records_stored_per_second"`
	// ServerCPU is the CPU time the server process used from the start of
	// the run until it settled after the last response, when the caller
	// measured it (wirehouse load --server-pid); 0 otherwise.
	ServerCPU time.Duration `json:"server_cpu_ns,omitempty"`
	// RecordsPerServerCPUSecond is Stored / ServerCPU.
	RecordsPerServerCPUSecond float64 `json:"records_per_server_cpu_second,omitempty"`
	// ClientCPU is the CPU time this process (the load generator) used
	// while sending, from the first request to the last response: on a
	// machine the client shares with the server, what it took from it.
	// 0 where getrusage is unavailable.
	ClientCPU time.Duration `json:"client_cpu_ns,omitempty"`
	// Written is what remote write got acknowledged, for Verify; nil for
	// the OTLP transports.
	Written *Written `json:"-"`
	// AckedByVariant counts the acknowledged requests of each pre-generated
	// OTLP request (request n is variant n mod Variants); nil for remote
	// write.
	AckedByVariant []int64 `json:"-"`
	// Start is the time of seed 0 of the generated OTLP requests, for
	// Verify to generate them again.
	Start time.Time `json:"-"`
}

// Latency percentiles, in nanoseconds when encoded as JSON.
type Latency struct {
	P50  time.Duration `json:"p50_ns"`
	P90  time.Duration `json:"p90_ns"`
	P99  time.Duration `json:"p99_ns"`
	Max  time.Duration `json:"max_ns"`
	Mean time.Duration `json:"mean_ns"`
}

// sender sends one pre-encoded request.
type sender interface {
	// send sends request n and returns the records the server rejected
	// (partial success), the body size as sent, the error code ("" on
	// success) and whether a response arrived.
	send(ctx context.Context, n int64) (rejected, size int64, code string, responded bool)
	close() error
}

// sequencer is implemented by senders whose requests must not overtake
// each other: acquire (before the clock starts) waits for request n's turn
// and returns false if ctx ended first; release ends it.
type sequencer interface {
	acquire(ctx context.Context, n int64) bool
	release(n int64, ok bool)
}

// Run sends the load and returns its summary. Progress goes to progress
// (nil for none) once a second. If ctx ends early the partial result is
// returned with Interrupted set.
func Run(ctx context.Context, cfg Config, progress io.Writer) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	records := cfg.Batch
	var s sender
	var err error
	var acked []atomic.Int64
	genStart := generationStart(cfg)
	var reqs [][]byte
	switch cfg.Transport {
	case "grpc":
		reqs = generate(cfg, genStart)
		s, err = newGRPCSender(cfg, reqs)
	case "http":
		reqs = generate(cfg, genStart)
		s, err = newHTTPSender(cfg, reqs)
	default:
		s, err = newRemoteWriteSender(cfg)
	}
	if err != nil {
		return Result{}, err
	}
	defer s.close()
	seq, _ := s.(sequencer)
	if seq == nil {
		acked = make([]atomic.Int64, variants(cfg))
	}
	var win *window
	switch {
	case cfg.Payload != 0 && cfg.Concurrency > 1:
		win = newWindow(cfg.Count, cfg.Batch, cfg.Series)
	case cfg.Exporters > 1 && cfg.Concurrency > 1:
		win = newWindow(cfg.Count, 1, cfg.Exporters)
	}

	var (
		issued   atomic.Int64
		done     atomic.Int64
		failed   atomic.Int64
		rejected atomic.Int64
		sent     atomic.Int64
		mu       sync.Mutex
		errs     = map[string]int64{}
		lats     [][]time.Duration
		wg       sync.WaitGroup
	)
	runCtx := ctx
	if cfg.Count == 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	if cfg.OnStart != nil {
		cfg.OnStart()
	}
	cpu0 := selfCPU()
	start := time.Now()
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) / cfg.Rate)
	}
	for range cfg.Concurrency {
		wg.Go(func() {
			var mine []time.Duration
			defer func() {
				mu.Lock()
				lats = append(lats, mine)
				mu.Unlock()
			}()
			for {
				n := issued.Add(1) - 1
				if cfg.Count > 0 && n >= int64(cfg.Count) {
					return
				}
				if interval > 0 {
					if !sleepUntil(runCtx, start.Add(time.Duration(n)*interval)) {
						return
					}
				}
				if ended(runCtx) {
					return
				}
				if seq != nil && !seq.acquire(runCtx, n) {
					return
				}
				if win != nil && !win.acquire(runCtx, n) {
					return
				}
				rctx, rcancel := context.WithTimeout(runCtx, cfg.Timeout)
				t0 := time.Now()
				rej, size, code, responded := s.send(rctx, n)
				lat := time.Since(t0)
				rcancel()
				if win != nil {
					win.release(n)
				}
				if seq != nil {
					seq.release(n, code == "")
				} else if code == "" {
					acked[n%int64(len(acked))].Add(1)
				}
				if code != "" && ended(runCtx) {
					return // cut off by the end of the run, not a server error
				}
				done.Add(1)
				sent.Add(size)
				if responded {
					mine = append(mine, lat)
				}
				if code != "" {
					failed.Add(1)
					mu.Lock()
					errs[code]++
					mu.Unlock()
				}
				rejected.Add(rej)
			}
		})
	}
	stopProgress := make(chan struct{})
	var pwg sync.WaitGroup
	if progress != nil {
		pwg.Go(func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			var last int64
			for {
				select {
				case <-stopProgress:
					return
				case now := <-t.C:
					d := done.Load()
					fmt.Fprintf(progress, "%6.1fs  requests %d (%d/s)  records %d  errors %d\n",
						now.Sub(start).Seconds(), d, d-last, d*int64(records), failed.Load())
					last = d
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	clientCPU := selfCPU() - cpu0
	close(stopProgress)
	pwg.Wait()

	res := Result{
		Start:    genStart,
		Requests: done.Load(), Failed: failed.Load(), Rejected: rejected.Load(), BytesSent: sent.Load(),
		Elapsed: elapsed, Errors: errs, Interrupted: ended(ctx), ClientCPU: clientCPU,
	}
	res.OK = res.Requests - res.Failed
	res.Records = res.Requests * int64(records)
	res.Accepted = res.OK*int64(records) - res.Rejected
	res.Stored = res.Accepted
	if seq == nil {
		res.AckedByVariant = make([]int64, len(acked))
		for i := range acked {
			res.AckedByVariant[i] = acked[i].Load()
		}
		if res.Stored, err = storable(cfg, reqs, res.AckedByVariant, res.Accepted); err != nil {
			return res, err
		}
	}
	if s := elapsed.Seconds(); s > 0 {
		res.RequestsPerS = float64(res.Requests) / s
		res.RecordsPerS = float64(res.Accepted) / s
		res.StoredPerS = float64(res.Stored) / s
	}
	res.Latency = percentiles(slices.Concat(lats...))
	if rw, ok := s.(*remoteWriteSender); ok {
		res.Written = rw.written()
	}
	return res, nil
}

// storable returns how many of the accepted records a server can store
// (Result.Stored). Only OTLP metrics sent round robin from Variants
// requests send a point twice: when more requests are sent than there are
// variants, every variant after the first round repeats its points (same
// series, time and value), which a TSDB acknowledges and keeps once; and a
// generated request may hold two points of a series in one millisecond.
// So it counts the distinct series and milliseconds of the points of the
// variants acknowledged at least once, at most accepted (a rejected point
// is one of them or a repeat). With Repeat or a Payload every request is
// generated for its own time, one second after the last: nothing repeats.
func storable(cfg Config, reqs [][]byte, acked []int64, accepted int64) (int64, error) {
	if cfg.Signal != otlpwire.SignalMetrics || cfg.Repeat || cfg.Payload != 0 || len(reqs) == 0 {
		return accepted, nil
	}
	d := newDistinct()
	for i, b := range reqs {
		if i < len(acked) && acked[i] > 0 {
			if err := d.add(otlpwire.MetricsRequest(b)); err != nil {
				return 0, fmt.Errorf("count the storable points of request %d: %w", i, err)
			}
		}
	}
	return min(d.n, accepted), nil
}

// ended reports whether ctx is done or past its deadline: a context's
// timer can fire late on a busy machine, and requests sent meanwhile fail
// fast with DeadlineExceeded without being server errors.
func ended(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func percentiles(l []time.Duration) Latency {
	if len(l) == 0 {
		return Latency{}
	}
	slices.Sort(l)
	at := func(q float64) time.Duration { return l[min(int(q*float64(len(l))), len(l)-1)] }
	var sum time.Duration
	for _, d := range l {
		sum += d
	}
	return Latency{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: l[len(l)-1], Mean: sum / time.Duration(len(l))}
}

// variants is the number of requests generate builds.
func variants(cfg Config) int {
	if cfg.Repeat || cfg.Payload != 0 {
		return cfg.Count
	}
	return cfg.Variants
}

// generationStart is the time of seed 0 that puts the last variant at
// now, so a server that stores by time takes the requests as current.
func generationStart(cfg Config) time.Time {
	if cfg.Payload != 0 {
		points := int64(cfg.Count) * int64(cfg.Batch)
		rounds := (points + int64(cfg.Series) - 1) / int64(cfg.Series)
		return time.Now().Add(-time.Duration(rounds) * time.Second)
	}
	rounds := int64(variants(cfg))
	if cfg.Exporters > 1 {
		rounds = (rounds + int64(cfg.Exporters) - 1) / int64(cfg.Exporters)
	}
	return time.Now().Add(-time.Duration(cfg.Seed+rounds) * time.Second)
}

// generate builds the distinct protobuf requests of cfg.Batch records each
// (variants(cfg) of them), variant i one second after variant i-1, seed 0
// at start. The same cfg and start give the same bytes.
func generate(cfg Config, start time.Time) [][]byte {
	out := make([][]byte, variants(cfg))
	if cfg.Payload != 0 {
		sc := synth.SeriesConfig{Payload: cfg.Payload, Series: cfg.Series, Batch: cfg.Batch, Start: start}
		for i := range out {
			out[i] = synth.SeriesRequest(sc, int64(i))
		}
		return out
	}
	exporters := max(cfg.Exporters, 1)
	for i := range out {
		out[i] = synth.Generate(cfg.Signal, synth.Config{
			Seed: cfg.Seed + int64(i/exporters), Resources: cfg.Resources, ScopesPerResource: 1, TotalRecords: cfg.Batch,
			Start: start, Repeat: cfg.Repeat, Copy: i % exporters,
		})
	}
	return out
}
