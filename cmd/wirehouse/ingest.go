package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/otlpfile"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/otlpwire"
)

const ingestUsage = `usage: wirehouse ingest --out DIR [flags] FILE|DIR...

Ingest reads OTLP files and writes their log records or spans as partitioned
Parquet files under DIR/<signal>/tenant=<tenant>/date=YYYY-MM-DD/hour=HH/.

Files are protobuf (.binpb, .pb) or OTLP/JSON (.json), each optionally
compressed (.gz, .zst), e.g. logs-000001.binpb.zst. Directories are walked
recursively for files with those extensions, in lexical order. A protobuf
file holds one Export*ServiceRequest (as wirehouse gen writes) or, if its
first byte is below 0x08, a sequence of requests each prefixed by a 4-byte
big-endian length (the Collector file exporter's proto format). A JSON file
holds one or more documents: JSON lines or one pretty-printed document.

Each file's signal is told from its content (a JSON document's top-level
field; for protobuf, the one signal under which the request is valid and
holds records) unless --signal names it. Metrics files are skipped: the
lake holds logs and spans, and serve's OTLP endpoints take metrics.

A file that is corrupt, truncated or of another signal is reported on stderr
with its byte offset and skipped whole; the others are written, and ingest
then exits with status 1. Progress goes to stderr every 2s on long runs, the
summary to stdout (--json for JSON). Ctrl-C stops between files, writes what
was read and prints the partial summary.

flags:
`

// ingestProgressEvery is how often progress is written; tests shorten it.
var ingestProgressEvery = 2 * time.Second

// ingestFlags are the flags of the ingest command and the values parsed
// from them.
type ingestFlags struct {
	signal, tenant, out string
	fileSize, maxFile   int64
	maxBuffer           int64
	rowGroupRows        int
	asJSON              bool
	paths               []string

	sig otlpwire.Signal
}

// ingestSummary is what ingest reports on stdout.
type ingestSummary struct {
	Signal         string  `json:"signal"` // --signal, or "auto"
	LogRecords     int64   `json:"log_records"`
	Spans          int64   `json:"spans"`
	Tenant         string  `json:"tenant"`
	Out            string  `json:"out"`
	Files          int     `json:"files"`         // found
	FilesRead      int     `json:"files_read"`    // and written
	FilesSkipped   int     `json:"files_skipped"` // corrupt or unreadable
	Records        int64   `json:"records"`
	DiskBytes      int64   `json:"bytes_in"`    // of the files read, as stored
	ProtoBytes     int64   `json:"proto_bytes"` // of their requests as protobuf
	ParquetFiles   int     `json:"parquet_files"`
	ParquetBytes   int64   `json:"parquet_bytes"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
	RecordsPerSec  float64 `json:"records_per_second"`
	Interrupted    bool    `json:"interrupted"`
}

func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseIngestFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	inputs, err := otlpfile.Collect(f.paths)
	if errors.Is(err, otlpfile.ErrUnknownFormat) {
		return usageError{err: fmt.Errorf("ingest: %w", err)}
	}
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	if len(inputs) == 0 {
		return fmt.Errorf("ingest: no .binpb, .pb or .json files (optionally .gz or .zst) in %q", f.paths)
	}
	// Two readers: one reads and decompresses the next file while the
	// other's requests are appended, on the other core.
	var readers [2]*otlpfile.Reader
	for i := range readers {
		if readers[i], err = otlpfile.NewReader(otlpfile.Config{Signal: f.sig, MaxFileSize: f.maxFile}); err != nil {
			return err
		}
		defer readers[i].Close()
	}
	if !tenant.Valid(f.tenant) {
		return usageError{err: fmt.Errorf("--tenant %q: want 1 to 128 of [A-Za-z0-9._-]", f.tenant)}
	}
	wc := lake.DefaultWriterConfig()
	wc.Dir, wc.FileSize, wc.MaxBuffer = f.out, f.fileSize, f.maxBuffer
	if f.rowGroupRows > 0 {
		wc.RowGroupRows = f.rowGroupRows
	}
	w, err := lake.NewWriter(wc)
	if err != nil {
		return err
	}
	sum := ingestSummary{Signal: f.signal, Tenant: f.tenant, Out: f.out, Files: len(inputs)}
	start := time.Now()
	lastProgress := start
	var fatal error
	files, stop := readAhead(readers, inputs)
	defer stop()
	for _, in := range inputs {
		if ctx.Err() != nil {
			sum.Interrupted = true
			break
		}
		r := <-files
		skip, err := ingestFile(r.file, r.err, w, f, in, &sum)
		r.done()
		if err != nil {
			fatal = fmt.Errorf("ingest: write %s: %w", f.out, err)
			break
		}
		if skip != nil {
			sum.FilesSkipped++
			fmt.Fprintf(stderr, "ingest: skipped %v\n", skip)
		}
		if now := time.Now(); now.Sub(lastProgress) >= ingestProgressEvery {
			lastProgress = now
			el := max(now.Sub(start).Seconds(), 1e-3)
			fmt.Fprintf(stderr, "ingest: %d/%d files, %d records, %.1f MB in, %.0f records/s\n",
				sum.FilesRead+sum.FilesSkipped, len(inputs), sum.Records, float64(sum.DiskBytes)/1e6, float64(sum.Records)/el)
		}
	}
	if err := w.Close(); err != nil && fatal == nil {
		fatal = fmt.Errorf("ingest: write %s: %w", f.out, err)
	}
	st := w.Stats()
	sum.ParquetFiles, sum.ParquetBytes = st.Files, st.BytesOut
	sum.ElapsedSeconds = time.Since(start).Seconds()
	if sum.ElapsedSeconds > 0 {
		sum.RecordsPerSec = float64(sum.Records) / sum.ElapsedSeconds
	}
	if err := writeIngestSummary(stdout, f.asJSON, sum); err != nil {
		return err
	}
	switch {
	case fatal != nil:
		return fatal
	case sum.Interrupted:
		return fmt.Errorf("ingest interrupted after %d of %d files (%d skipped): %w",
			sum.FilesRead+sum.FilesSkipped, sum.Files, sum.FilesSkipped, ctx.Err())
	case sum.FilesSkipped > 0:
		return fmt.Errorf("ingest: %d of %d files skipped", sum.FilesSkipped, sum.Files)
	}
	return nil
}

// readFile is a file read ahead: done hands its reader back.
type readFile struct {
	file otlpfile.File
	err  error
	done func()
}

// readAhead reads inputs in order in the background, each with the reader
// its predecessor's predecessor used once that one is done, so at most
// two files are in memory: the one being appended and the next. stop ends
// the reading early; it must be called.
func readAhead(readers [2]*otlpfile.Reader, inputs []otlpfile.Input) (<-chan readFile, func()) {
	out := make(chan readFile)
	free := make(chan *otlpfile.Reader, len(readers))
	for _, r := range readers {
		free <- r
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for _, in := range inputs {
			var r *otlpfile.Reader
			select {
			case r = <-free:
			case <-quit:
				return
			}
			file, err := r.ReadFile(in)
			select {
			case out <- readFile{file: file, err: err, done: func() { free <- r }}:
			case <-quit:
				return
			}
		}
	}()
	return out, func() { close(quit); <-finished }
}

// ingestFile appends all the requests of a file read (or refused with
// readErr) in one call, adding to sum what was appended. A file the Reader
// or the lake refuses is returned as skip, an *otlpfile.Error with the
// offset of the failing request; err is a write error of the lake, after
// which the file's rows are appended but not all written.
func ingestFile(file otlpfile.File, readErr error, w *lake.Writer, f *ingestFlags, in otlpfile.Input, sum *ingestSummary) (skip, err error) {
	if readErr != nil {
		return readErr, nil
	}
	switch file.Signal {
	case otlpwire.SignalMetrics:
		return &otlpfile.Error{Path: in.Path, Offset: -1, Err: fmt.Errorf("a metrics file (%s): the lake holds logs and traces; send metrics to serve's OTLP endpoint", file.SignalFrom)}, nil
	case 0: // no records
		sum.FilesRead++
		sum.DiskBytes += file.DiskBytes
		sum.ProtoBytes += file.ProtoBytes
		return nil, nil
	}
	n, err := w.Append(file.Signal, f.tenant, file.Requests...)
	var ae *lake.AppendError
	if errors.As(err, &ae) {
		off := int64(-1)
		if ae.Index >= 0 && ae.Index < len(file.Offsets) {
			off = file.Offsets[ae.Index]
		}
		return &otlpfile.Error{Path: in.Path, Offset: off, Err: fmt.Errorf("as %s (%s): %w", file.Signal, file.SignalFrom, ae)}, nil
	}
	sum.FilesRead++
	sum.Records += int64(n)
	if file.Signal == otlpwire.SignalLogs {
		sum.LogRecords += int64(n)
	} else {
		sum.Spans += int64(n)
	}
	sum.DiskBytes += file.DiskBytes
	sum.ProtoBytes += file.ProtoBytes
	return nil, err
}

// writeIngestSummary writes s as a short table, or as JSON.
func writeIngestSummary(w io.Writer, asJSON bool, s ingestSummary) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	status := ""
	if s.Interrupted {
		status = " (interrupted)"
	}
	_, err := fmt.Fprintf(w, `%s of tenant %s into %s%s
files      %d read, %d skipped, of %d
records    %d in %.2fs, %.0f records/s (%d log records, %d spans)
bytes in   %d on disk, %d protobuf
parquet    %d files, %d bytes
`, s.Signal, s.Tenant, s.Out, status,
		s.FilesRead, s.FilesSkipped, s.Files,
		s.Records, s.ElapsedSeconds, s.RecordsPerSec, s.LogRecords, s.Spans,
		s.DiskBytes, s.ProtoBytes,
		s.ParquetFiles, s.ParquetBytes)
	return err
}

// parseIngestFlags parses and checks the flags of ingest.
func parseIngestFlags(args []string, stderr io.Writer) (*ingestFlags, error) {
	f := &ingestFlags{}
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), ingestUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.signal, "signal", "auto", "signal of every file: logs or traces; auto tells each file's from its content")
	fs.StringVar(&f.tenant, "tenant", "default", "tenant partition to write to")
	fs.StringVar(&f.out, "out", "", "root directory of the lake, created if missing (required)")
	lakeDefaults := lake.DefaultWriterConfig()
	fs.Int64Var(&f.fileSize, "file-size", lakeDefaults.FileSize, "Parquet file size to aim at, in bytes (at least 1024)")
	fs.Int64Var(&f.maxBuffer, "max-buffer", lakeDefaults.MaxBuffer, "write a file once this many protobuf bytes are buffered, whatever --file-size says; memory is about 2x this (at least 1024)")
	fs.IntVar(&f.rowGroupRows, "row-group-rows", 0, "most rows in a Parquet row group (default: the lake's, 131072)")
	fs.Int64Var(&f.maxFile, "max-file-size", otlpfile.DefaultMaxFileSize, "largest decompressed input file, in bytes")
	fs.BoolVar(&f.asJSON, "json", false, "print the summary as JSON")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err: err, printed: true}
	}
	f.paths = fs.Args()
	if err := f.check(); err != nil {
		return nil, usageError{err: err}
	}
	return f, nil
}

// check validates the flags and derives the parsed values.
func (f *ingestFlags) check() error {
	var err error
	if f.signal == "auto" {
		f.sig = 0
	} else if f.sig, err = otlpwire.ParseSignal(f.signal); err != nil || (f.sig != otlpwire.SignalLogs && f.sig != otlpwire.SignalTraces) {
		return fmt.Errorf("--signal: %q is not logs, traces or auto", f.signal)
	}
	switch {
	case f.out == "":
		return errors.New("--out: a directory is required")
	case f.tenant == "":
		return errors.New("--tenant: empty")
	case f.fileSize < 1<<10:
		return fmt.Errorf("--file-size: %d is below 1024", f.fileSize)
	case f.maxBuffer < 1<<10:
		return fmt.Errorf("--max-buffer: %d is below 1024", f.maxBuffer)
	case f.rowGroupRows < 0:
		return fmt.Errorf("--row-group-rows: %d is negative", f.rowGroupRows)
	case f.maxFile < 1:
		return fmt.Errorf("--max-file-size: %d is not positive", f.maxFile)
	case len(f.paths) == 0:
		return errors.New("ingest: no files or directories given")
	}
	return nil
}
