package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// runArgs runs the command line args and returns its stdout and stderr.
func runArgs(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// readRequest reads and decompresses a file written by gen.
func readRequest(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	switch filepath.Ext(name) {
	case ".gz":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	case ".zst":
		zr, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		if b, err = zr.DecodeAll(b, nil); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// count decodes an OTLP request with pdata and returns its record count.
func count(t *testing.T, signal string, b []byte) int {
	t.Helper()
	switch signal {
	case "logs":
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			t.Fatal(err)
		}
		return ld.LogRecordCount()
	case "traces":
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			t.Fatal(err)
		}
		return td.SpanCount()
	case "metrics":
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		if err != nil {
			t.Fatal(err)
		}
		return md.DataPointCount()
	}
	t.Fatalf("unknown signal %q", signal)
	return 0
}

func TestGen(t *testing.T) {
	for _, tc := range []struct {
		signal, compress, ext string
	}{
		{"logs", "none", ""},
		{"traces", "gzip", ".gz"},
		{"metrics", "zstd", ".zst"},
	} {
		t.Run("signal="+tc.signal, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			stdout, _, err := runArgs(t, "gen", "--signal", tc.signal, "--requests", "3", "--per-request", "250",
				"--resources", "2", "--scopes", "3", "--seed", "7", "--order", "desc", "--compress", tc.compress, "--out", dir)
			if err != nil {
				t.Fatal(err)
			}
			want := "files=3 requests=3 records=750 "
			if !strings.Contains(stdout, want) {
				t.Errorf("summary %q lacks %q", stdout, want)
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) != 3 {
				t.Fatalf("%d files in %s, want 3 (%v)", len(entries), dir, err)
			}
			sig, _ := otlpwire.ParseSignal(tc.signal)
			for i, want := range []string{"-000000", "-000001", "-000002"} {
				b := readRequest(t, filepath.Join(dir, tc.signal+want+".binpb"+tc.ext))
				if n := count(t, tc.signal, b); n != 250 {
					t.Errorf("file %d: %d records, want 250", i, n)
				}
				cfg := synth.Config{Seed: 7 + int64(i), Order: synth.Descending, Resources: 2, ScopesPerResource: 3, TotalRecords: 250}
				if !bytes.Equal(b, synth.Generate(sig, cfg)) {
					t.Errorf("file %d differs from synth.Generate with seed %d", i, cfg.Seed)
				}
			}
		})
	}
}

func TestGenFixture(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := runArgs(t, "gen", "--fixture", "--signal", "metrics", "--out", dir); err != nil {
		t.Fatal(err)
	}
	b := readRequest(t, filepath.Join(dir, "metrics-000000.binpb"))
	if n := count(t, "metrics", b); n != 500 {
		t.Errorf("%d data points, want 500", n)
	}
	if !bytes.Equal(b, synth.Fixture(otlpwire.SignalMetrics, synth.Ascending)) {
		t.Error("file differs from synth.Fixture")
	}
}

func TestGenBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string // the error must name it
	}{
		{[]string{"--signal", "profiles"}, "--signal"},
		{[]string{"--order", "sideways"}, "--order"},
		{[]string{"--compress", "lz4"}, "--compress"},
		{[]string{"--requests", "0"}, "--requests"},
		{[]string{"--requests", "many"}, "-requests"},
		{[]string{"--per-request", "-1"}, "--per-request"},
		{[]string{"--resources", "0"}, "--resources"},
		{[]string{"--scopes", "-2"}, "--scopes"},
		{[]string{"--fixture", "--seed", "3"}, "--seed"},
		{[]string{"--fixture", "--per-request", "10"}, "--per-request"},
		{[]string{"--bogus"}, "-bogus"},
		{[]string{"extra"}, `"extra"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"gen", "--out", t.TempDir()}, tc.args...)
			_, _, err := runArgs(t, args...)
			if err == nil || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("error %v does not name %s", err, tc.flag)
			}
			if _, ok := err.(usageError); !ok {
				t.Errorf("%T is not a usageError", err)
			}
		})
	}
	if _, _, err := runArgs(t, "gen"); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Errorf("no --out: error %v does not name --out", err)
	}
}

func TestGenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout bytes.Buffer
	err := run(ctx, []string{"gen", "--requests", "5", "--out", t.TempDir()}, &stdout, io.Discard)
	if err == nil || !strings.Contains(stdout.String(), "files=0") {
		t.Errorf("canceled run: error %v, summary %q", err, stdout.String())
	}
}

func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"help"}, {"--help"}} {
		stdout, _, err := runArgs(t, args...)
		if err != nil || !strings.Contains(stdout, "gen ") {
			t.Errorf("%v: error %v, output %q lacks the gen command", args, err, stdout)
		}
	}
	if _, _, err := runArgs(t, "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown command: error %v", err)
	}
	if _, stderr, err := runArgs(t, "gen", "-h"); err != nil || !strings.Contains(stderr, "--out DIR") {
		t.Errorf("gen -h: error %v, stderr %q", err, stderr)
	}
}
