package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestIngestKill9 kills a real `wirehouse ingest` process with SIGKILL
// while it writes Parquet files, at several moments, and checks that every
// visible .parquet file is complete: its footer opens and all its rows
// read. Only hidden .<id>.parquet.tmp files may be partial.
func TestIngestKill9(t *testing.T) {
	in := t.TempDir()
	for i := range 60 {
		body := synth.SeedLogs(synth.Config{Seed: int64(i), Resources: 2, ScopesPerResource: 1, TotalRecords: 400})
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("logs-%03d.binpb", i)), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, delay := range []time.Duration{0, 20 * time.Millisecond, 80 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(fmt.Sprint("delay=", delay), func(t *testing.T) {
			out := t.TempDir()
			// A tiny file size writes a file after every input file.
			cmd := exec.Command(os.Args[0], "ingest", "--out", out, "--file-size", "1024", in)
			cmd.Env = append(os.Environ(), "WIREHOUSE_TEST_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Kill once the first file is in place, after the delay.
			deadline := time.Now().Add(30 * time.Second)
			for len(parquetFiles(t, out)) == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(delay)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Logf("process ended before the kill (%v): %s", err, stderr.String())
			}
			files := parquetFiles(t, out)
			if len(files) == 0 {
				t.Fatal("no file written before the kill")
			}
			rows := 0
			for _, p := range files {
				rows += readAllRows(t, p)
			}
			tmp := 0
			filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasSuffix(p, ".parquet.tmp") {
					tmp++
				}
				return err
			})
			t.Logf("%d complete files (%d rows), %d hidden temporary files", len(files), rows, tmp)
		})
	}
}

// parquetFiles lists the visible .parquet files under root.
func parquetFiles(t *testing.T, root string) []string {
	var files []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a directory may vanish or appear while walking
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.HasPrefix(d.Name(), ".") {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// readAllRows opens a Parquet file and reads every row, failing the test
// if the file is not complete.
func readAllRows(t *testing.T, p string) int {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("visible file %s is not a complete Parquet file: %v", p, err)
	}
	r := parquet.NewReader(bytes.NewReader(b))
	rows := make([]parquet.Row, 256)
	n := 0
	for {
		k, err := r.ReadRows(rows)
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: row %d: %v", p, n, err)
		}
	}
	if int64(n) != pf.NumRows() {
		t.Fatalf("%s: read %d rows, footer says %d", p, n, pf.NumRows())
	}
	return n
}
