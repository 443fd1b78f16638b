package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestUsage: -h prints the usage and succeeds; a command line without
// --dir is a usage error.
func TestUsage(t *testing.T) {
	var out, errw bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, &errw); err != nil || !strings.Contains(errw.String(), "usage: go run ./tools/logbench") {
		t.Errorf("-h: %v, %q", err, errw.String())
	}
	var ue usageError
	if err := run(context.Background(), nil, &out, &errw); !errors.As(err, &ue) {
		t.Errorf("no --dir: %v, want a usage error", err)
	}
}

// TestRun: a run over a lake of a thousand logs builds it, queries it
// and prints the table.
func TestRun(t *testing.T) {
	var out, errw bytes.Buffer
	dir := t.TempDir()
	if err := run(context.Background(), []string{"--dir", dir, "--logs", "1000", "--queries", "1"}, &out, &errw); err != nil {
		t.Fatalf("%v\n%s", err, errw.String())
	}
	for _, want := range []string{"|= over 1 h, limit 1000", "count by severity, 1m steps over 6 h", "lake: 1000 logs"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, out.String())
		}
	}
}
