// Command wirehouse receives, stores and generates OpenTelemetry data.
//
// Usage:
//
//	wirehouse <command> [flags]
//
// Run "wirehouse help" for the list of commands and "wirehouse help <command>"
// or "wirehouse <command> -h" for a command's flags. Results go to stdout, progress and errors to
// stderr. The exit status is 0 on success, 2 for a bad command line and 1
// for any other error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/wirehouse/wirehouse/internal/buildinfo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ue usageError
		isUsage := errors.As(err, &ue)
		if !isUsage || !ue.printed {
			fmt.Fprintln(os.Stderr, "wirehouse:", err)
		}
		if isUsage {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// command is a subcommand: run gets the arguments after the command name.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are the subcommands by name; each lives in its own file. The
// benchmark drivers are commands of their own: tools/tracebench and
// tools/logbench.
var commands = map[string]command{
	"gen":     {summary: "write deterministic synthetic OTLP requests to files", run: runGen},
	"ingest":  {summary: "read OTLP files (protobuf or JSON, optionally compressed) into partitioned Parquet", run: runIngest},
	"inspect": {summary: "print per-resource counts, service.name and sizes of OTLP request files", run: runInspect},
	"load":    {summary: "send synthetic OTLP load over gRPC or HTTP and report throughput and latency", run: runLoad},
	"serve":   {summary: "receive OTLP over gRPC (:4317) and HTTP (:4318) and store it", run: runServe},
	"version": {summary: "print the version, revision and Go version wirehouse was built with", run: runVersion},
}

// runVersion prints the build information on stdout.
func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "-help" {
		return usageError{err: fmt.Errorf("version takes no arguments, got %q", args[0])}
	}
	_, err := fmt.Fprintln(stdout, buildinfo.Get())
	return err
}

// run runs the command named by args[0] with the rest of args.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usage(stdout)
	}
	switch args[0] {
	case "--version", "-version", "-v":
		return runVersion(ctx, nil, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if cmd, ok := commands[args[1]]; ok {
				return cmd.run(ctx, []string{"-h"}, stdout, stderr)
			}
		}
		return usage(stdout)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return usageError{err: fmt.Errorf("unknown command %q; run 'wirehouse help' for the list", args[0])}
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
}

// usage writes the command list to w.
func usage(w io.Writer) error {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	fmt.Fprintf(w, "usage: wirehouse <command> [flags]\n\ncommands:\n")
	for _, name := range names {
		fmt.Fprintf(w, "  %-10s %s\n", name, commands[name].summary)
	}
	_, err := fmt.Fprintf(w, "\nRun 'wirehouse <command> -h' for a command's flags.\n")
	return err
}

// usageError is an error in the command line; main exits with status 2.
type usageError struct {
	err     error
	printed bool // already written to stderr, with the usage, by a flag.FlagSet
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }
