package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/wirehouse/wirehouse/internal/otlpfile"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// runInspect prints, for each OTLP request file, one line per resource:
// service.name, scope count, record count, size and identity hash, then a
// total. Files are read as ingest reads them (protobuf, length-delimited
// streams, OTLP/JSON; gzip or zstd), whatever their name: an unknown
// extension is told from the content. The signal comes from --signal or
// from the content (see otlpfile.DetectSignal); a file that cannot be read
// says why, and which signal it was read as.
func runInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	sig := fs.String("signal", "", "signal of every file: logs, traces or metrics (default: told from each file's content)")
	maxSize := fs.Int64("max-size", 256<<20, "largest decompressed file to read, in bytes")
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
	reader, err := otlpfile.NewReader(otlpfile.Config{Signal: fixed, MaxFileSize: *maxSize})
	if err != nil {
		return err
	}
	defer reader.Close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "FILE\tSIGNAL\tRESOURCE\tSERVICE\tSCOPES\tRECORDS\tBYTES\tHASH\t")
	var total inspectTotals
	var failed []string
	for _, path := range fs.Args() {
		if err := ctx.Err(); err != nil {
			break
		}
		in, err := otlpfile.Sniff(path)
		if err != nil {
			failed = append(failed, fmt.Sprintf("inspect %v", err))
			continue
		}
		file, err := reader.ReadFile(in)
		if err != nil {
			failed = append(failed, fmt.Sprintf("inspect %v", err))
			continue
		}
		for i, req := range file.Requests {
			name := filepath.Base(path)
			if len(file.Requests) > 1 {
				name += "#" + strconv.Itoa(i)
			}
			if err := inspectRequest(tw, name, file.Signal, req, &total); err != nil {
				how := "given"
				if fixed == 0 {
					how = file.SignalFrom
				}
				failed = append(failed, fmt.Sprintf("inspect %s: request %d as %s (%s): %v", path, i, file.Signal, how, err))
			}
		}
	}
	fmt.Fprintf(tw, "total\t\t%d\t\t%d\t%d\t%d\t\t\n", total.resources, total.scopes, total.records, total.bytes)
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
	case 0: // a file without records
		total.bytes += len(body)
		return nil
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
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%016x\t\n", name, s, i, info.service, info.scopes, info.records, info.size, info.hash)
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
