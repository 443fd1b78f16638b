package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// runInspect prints, for each OTLP request file, one line per resource:
// service.name, scope count, record count, size and identity hash, then a
// total. Files are raw protobuf, or gzip (.gz) or zstd (.zst) compressed;
// the signal comes from --signal or from the file name (logs-*, traces-*,
// metrics-*, as written by wirehouse gen).
func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sig := fs.String("signal", "", "signal of every file: logs, traces or metrics (default: from each file name)")
	maxSize := fs.Int64("max-size", 256<<20, "largest decompressed request to read, in bytes")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: wirehouse inspect [flags] FILE...\n\nPrints per-resource counts, service.name and sizes of OTLP request files.\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err: err, printed: true}
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError{err: errors.New("inspect: no files given"), printed: false}
	}
	if *maxSize <= 0 {
		return usageError{err: fmt.Errorf("flag -max-size: %d is not positive", *maxSize)}
	}
	var fixed otlpwire.Signal
	if *sig != "" {
		s, err := otlpwire.ParseSignal(*sig)
		if err != nil {
			return usageError{err: fmt.Errorf("flag -signal: %w", err)}
		}
		fixed = s
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "FILE\tRESOURCE\tSERVICE\tSCOPES\tRECORDS\tBYTES\tHASH\t")
	var total inspectTotals
	var failed []string
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			break
		}
		s := fixed
		if s == 0 {
			var err error
			if s, err = signalFromName(path); err != nil {
				failed = append(failed, err.Error())
				continue
			}
		}
		body, err := readRequestFile(path, *maxSize)
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		if err := inspectRequest(tw, filepath.Base(path), s, body, &total); err != nil {
			failed = append(failed, fmt.Sprintf("inspect %s: %v", path, err))
		}
	}
	fmt.Fprintf(tw, "total\t%d\t\t%d\t%d\t%d\t\t\n", total.resources, total.scopes, total.records, total.bytes)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range failed {
		fmt.Fprintln(stderr, f)
	}
	if len(failed) > 0 {
		return fmt.Errorf("inspect: %d of %d files failed", len(failed), fs.NArg())
	}
	return nil
}

type inspectTotals struct{ resources, scopes, records, bytes int }

func signalFromName(path string) (otlpwire.Signal, error) {
	base := filepath.Base(path)
	for _, s := range []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces, otlpwire.SignalMetrics} {
		if strings.HasPrefix(base, s.String()) {
			return s, nil
		}
	}
	return 0, fmt.Errorf("inspect %s: cannot tell the signal from the file name; use -signal", path)
}

// readRequestFile reads a request file, decompressing .gz and .zst, and
// refuses one that decompresses to more than max bytes.
func readRequestFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	switch {
	case strings.HasSuffix(path, ".gz"):
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	case strings.HasSuffix(path, ".zst"):
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max)))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if n > max {
		return nil, fmt.Errorf("read %s: larger than -max-size %d bytes", path, max)
	}
	return buf.Bytes(), nil
}

// resourceInfo is what inspect prints about one resource container.
type resourceInfo struct {
	service []byte
	scopes  int
	records int
	size    int
	hash    uint64
}

func describe(r otlpwire.Resource, size, scopes, records int) (resourceInfo, error) {
	info := resourceInfo{size: size, scopes: scopes, records: records}
	var err error
	if info.service, err = r.ServiceName(); err != nil {
		return info, err
	}
	info.hash, err = r.Hash()
	return info, err
}

func inspectRequest(w io.Writer, name string, s otlpwire.Signal, body []byte, total *inspectTotals) error {
	var infos []resourceInfo
	var err error
	switch s {
	case otlpwire.SignalLogs:
		req := otlpwire.LogsRequest(body)
		infos, err = describeAll(req.Validate, req.ResourceLogs(), otlpwire.ResourceLogs.Resource,
			otlpwire.ResourceLogs.LogRecordCount, otlpwire.ResourceLogs.ScopeLogs)
	case otlpwire.SignalTraces:
		req := otlpwire.TracesRequest(body)
		infos, err = describeAll(req.Validate, req.ResourceSpans(), otlpwire.ResourceSpans.Resource,
			otlpwire.ResourceSpans.SpanCount, otlpwire.ResourceSpans.ScopeSpans)
	default:
		req := otlpwire.MetricsRequest(body)
		infos, err = describeAll(req.Validate, req.ResourceMetrics(), otlpwire.ResourceMetrics.Resource,
			otlpwire.ResourceMetrics.DataPointCount, otlpwire.ResourceMetrics.ScopeMetrics)
	}
	if err != nil {
		return err
	}
	for i, info := range infos {
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%d\t%d\t%016x\t\n", name, i, info.service, info.scopes, info.records, info.size, info.hash)
		total.resources++
		total.scopes += info.scopes
		total.records += info.records
	}
	total.bytes += len(body)
	return nil
}

// describeAll validates a request and describes each of its resource
// containers, given the signal's accessors.
func describeAll[RC ~[]byte, SC any](validate func() error, containers iter.Seq2[RC, error],
	resource func(RC) (otlpwire.Resource, error), records func(RC) (int, error),
	scopes func(RC) iter.Seq2[SC, error]) ([]resourceInfo, error) {
	if err := validate(); err != nil {
		return nil, err
	}
	var infos []resourceInfo
	for rc, err := range containers {
		if err != nil {
			return nil, err
		}
		r, err := resource(rc)
		if err != nil {
			return nil, err
		}
		n, err := records(rc)
		if err != nil {
			return nil, err
		}
		ns := 0
		for _, err := range scopes(rc) {
			if err != nil {
				return nil, err
			}
			ns++
		}
		info, err := describe(r, len(rc), ns, n)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}
