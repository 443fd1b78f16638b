package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestUsage: -h prints the usage and succeeds; a command line without
// --dir, or with an argument, is a usage error.
func TestUsage(t *testing.T) {
	var out, errw bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, &errw); err != nil || !strings.Contains(errw.String(), "usage: go run ./tools/tracebench") {
		t.Errorf("-h: %v, %q", err, errw.String())
	}
	for _, args := range [][]string{nil, {"--dir", t.TempDir(), "extra"}} {
		var ue usageError
		if err := run(context.Background(), args, &out, &errw); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// TestRun: a run over a lake of a thousand spans builds it, queries it
// and prints the table.
func TestRun(t *testing.T) {
	var out, errw bytes.Buffer
	dir := t.TempDir()
	if err := run(context.Background(), []string{"--dir", dir, "--spans", "1000", "--queries", "1"}, &out, &errw); err != nil {
		t.Fatalf("%v\n%s", err, errw.String())
	}
	for _, want := range []string{"trace by id", "services + operations", "lake: 1000 spans"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}
