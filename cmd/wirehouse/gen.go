package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

const genUsage = `usage: wirehouse gen --out DIR [flags]

Gen writes deterministic synthetic OTLP protobuf requests (Export*ServiceRequest)
to DIR/<signal>-000000.binpb, -000001.binpb, ... with a .gz or .zst suffix when
compressed. Request i is generated with seed+i; the same flags always write the
same files. With --fixture it writes the benchmark fixture (5 resources × 100
records) as a single file instead.

flags:
`

// genFlags are the flags of the gen command and the values parsed from them.
type genFlags struct {
	signal, order, compress, out string
	requests, perRequest         int
	resources, scopes            int
	seed                         int64
	fixture                      bool
	seedLogs                     bool
	repeat, noise                bool

	sig otlpwire.Signal
	ord synth.Order
	zip *compressor
}

func runGen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseGenFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.zip.close()
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}

	cfg := synth.Config{
		Seed:              f.seed,
		Order:             f.ord,
		Resources:         f.resources,
		ScopesPerResource: f.scopes,
		TotalRecords:      f.perRequest,
		Repeat:            f.repeat,
		Noise:             f.noise,
	}
	requests, records := f.requests, f.perRequest
	if f.fixture {
		requests, records = 1, 500
	}
	var st genStats
	lastProgress := time.Now()
	var buf []byte
	for i := range requests {
		if err := ctx.Err(); err != nil {
			st.report(stdout, f, records)
			return fmt.Errorf("gen interrupted after %d of %d requests: %w", st.files, requests, err)
		}
		var req []byte
		if f.fixture {
			req = synth.Fixture(f.sig, f.ord)
		} else if f.seedLogs {
			cfg.Seed = f.seed + int64(i)
			req = synth.SeedLogs(cfg)
		} else {
			cfg.Seed = f.seed + int64(i)
			req = synth.Generate(f.sig, cfg)
		}
		if buf, err = f.zip.compress(buf[:0], req); err != nil {
			return err
		}
		name := filepath.Join(f.out, fmt.Sprintf("%s-%06d.binpb%s", f.sig, i, f.zip.ext))
		if err := os.WriteFile(name, buf, 0o644); err != nil {
			st.report(stdout, f, records)
			return err
		}
		st.files++
		st.raw += int64(len(req))
		st.written += int64(len(buf))
		if time.Since(lastProgress) >= time.Second {
			lastProgress = time.Now()
			fmt.Fprintf(stderr, "gen: %d/%d requests, %d bytes\n", st.files, requests, st.written)
		}
	}
	st.report(stdout, f, records)
	return nil
}

// genStats counts what gen wrote.
type genStats struct {
	files        int
	raw, written int64
}

// report writes the summary line.
func (st genStats) report(w io.Writer, f *genFlags, recordsPerRequest int) {
	fmt.Fprintf(w, "signal=%s files=%d requests=%d records=%d bytes=%d uncompressed_bytes=%d dir=%s\n",
		f.sig, st.files, st.files, st.files*recordsPerRequest, st.written, st.raw, f.out)
}

// parseGenFlags parses and checks the flags of gen.
func parseGenFlags(args []string, stderr io.Writer) (*genFlags, error) {
	f := &genFlags{}
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), genUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.signal, "signal", "logs", "signal: logs, traces or metrics")
	fs.IntVar(&f.requests, "requests", 100, "number of requests (files) to write")
	fs.IntVar(&f.perRequest, "per-request", 1000, "log records, spans or data points per request, spread over resources×scopes")
	fs.StringVar(&f.out, "out", "", "directory to write to, created if missing (required)")
	fs.IntVar(&f.resources, "resources", 1, "resources per request")
	fs.IntVar(&f.scopes, "scopes", 1, "scopes per resource")
	fs.Int64Var(&f.seed, "seed", 0, "seed of the first request; request i uses seed+i")
	fs.StringVar(&f.order, "order", "asc", "field order: asc (OpenTelemetry SDKs) or desc (Collector pdata)")
	fs.StringVar(&f.compress, "compress", "none", "compression: none, gzip or zstd")
	fs.BoolVar(&f.repeat, "repeat", false, "every request carries the records of the first, one second later each: the same series with moving values, as a periodic exporter sends")
	fs.BoolVar(&f.noise, "noise", false, "with --repeat and --signal metrics: values move as real ones do (scrape times jitter, counters grow by uneven steps, gauges jump) instead of along perfect lines")
	fs.BoolVar(&f.fixture, "fixture", false, "write the benchmark fixture (5 resources × 100 records) as one file")
	fs.BoolVar(&f.seedLogs, "seed-logs", false, "logs shaped like the lake seed's: ~47-byte bodies, ~15 attributes per log (with --signal logs)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err: err, printed: true}
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.check(fs.Args(), set); err != nil {
		return nil, usageError{err: err}
	}
	return f, nil
}

// check validates the flags, given the remaining arguments and the names
// of the flags set on the command line, and derives the parsed values.
func (f *genFlags) check(rest []string, set map[string]bool) error {
	var err error
	if len(rest) > 0 {
		return fmt.Errorf("gen: unexpected argument %q", rest[0])
	}
	if f.sig, err = otlpwire.ParseSignal(f.signal); err != nil {
		return fmt.Errorf("--signal: %q is not logs, traces or metrics", f.signal)
	}
	if f.ord, err = synth.ParseOrder(f.order); err != nil {
		return fmt.Errorf("--order: %q is not asc or desc", f.order)
	}
	if f.out == "" {
		return errors.New("--out: a directory is required")
	}
	if f.seedLogs && (f.sig != otlpwire.SignalLogs || f.fixture) {
		return errors.New("--seed-logs: only with --signal logs and without --fixture")
	}
	if f.noise && (!f.repeat || f.sig != otlpwire.SignalMetrics) {
		return errors.New("--noise: only with --repeat and --signal metrics")
	}
	if f.fixture {
		for _, name := range []string{"requests", "per-request", "resources", "scopes", "seed", "repeat", "noise"} {
			if set[name] {
				return fmt.Errorf("--%s: the fixture has a fixed shape; drop --%s or --fixture", name, name)
			}
		}
	}
	switch {
	case f.requests < 1:
		return fmt.Errorf("--requests: %d is less than 1", f.requests)
	case f.perRequest < 0:
		return fmt.Errorf("--per-request: %d is negative", f.perRequest)
	case f.resources < 1:
		return fmt.Errorf("--resources: %d is less than 1", f.resources)
	case f.scopes < 1:
		return fmt.Errorf("--scopes: %d is less than 1", f.scopes)
	}
	if f.zip, err = newCompressor(f.compress); err != nil {
		return fmt.Errorf("--compress: %w", err)
	}
	return nil
}

// compressor compresses whole files.
type compressor struct {
	ext   string // file name suffix
	zw    *gzip.Writer
	zs    *zstd.Encoder
	gzBuf bytes.Buffer
}

// newCompressor returns the compressor called name: none, gzip or zstd.
func newCompressor(name string) (*compressor, error) {
	switch name {
	case "none":
		return &compressor{}, nil
	case "gzip":
		c := &compressor{ext: ".gz"}
		c.zw = gzip.NewWriter(&c.gzBuf)
		return c, nil
	case "zstd":
		zs, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return &compressor{ext: ".zst", zs: zs}, nil
	}
	return nil, fmt.Errorf("%q is not none, gzip or zstd", name)
}

// compress appends src, compressed, to dst.
func (c *compressor) compress(dst, src []byte) ([]byte, error) {
	switch {
	case c.zs != nil:
		return c.zs.EncodeAll(src, dst), nil
	case c.zw != nil:
		c.gzBuf.Reset()
		c.zw.Reset(&c.gzBuf)
		if _, err := c.zw.Write(src); err != nil {
			return nil, err
		}
		if err := c.zw.Close(); err != nil {
			return nil, err
		}
		return append(dst, c.gzBuf.Bytes()...), nil
	}
	return append(dst, src...), nil
}

// close releases the compressor's resources.
func (c *compressor) close() {
	if c.zs != nil {
		c.zs.Close()
	}
}
