// Command xdrgen generates Go encoders and decoders from RFC 4506 XDR
// language (.x) files, using the runtime in github.com/wirehouse/wirehouse/xdr.
//
// Usage:
//
//	xdrgen [-o out.go] [-pkg name] file.x [file.x ...]
//
// All inputs go into one Go file (stdout if -o is not given). Typical use:
//
//	//go:generate go run github.com/wirehouse/wirehouse/cmd/xdrgen -o types_xdr.go -pkg mypkg types.x
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/wirehouse/wirehouse/internal/xdrgen"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "xdrgen:", err)
		}
		os.Exit(2)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("xdrgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "write the generated Go to `file` (default stdout)")
	pkg := fs.String("pkg", "", "Go package `name` for the output (default: $GOPACKAGE under go generate)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: xdrgen [-o out.go] [-pkg name] file.x [file.x ...]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pkg == "" {
		*pkg = os.Getenv("GOPACKAGE")
	}
	if *pkg == "" {
		return errors.New("flag -pkg: package name required (or run under go generate)")
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no input .x files")
	}
	var srcs []xdrgen.Source
	for _, name := range fs.Args() {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		srcs = append(srcs, xdrgen.Source{Name: name, Text: string(b)})
	}
	code, err := xdrgen.Compile(*pkg, srcs)
	if err != nil {
		return err
	}
	if *out == "" {
		_, err = stdout.Write(code)
		return err
	}
	if err := os.WriteFile(*out, code, 0o644); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
