package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "t.x")
	if err := os.WriteFile(in, []byte("const N = 2;\nstruct pair { int v[N]; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "t_xdr.go")
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-o", out, "-pkg", "demo", in}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(b), "package demo") || !strings.Contains(string(b), "type Pair struct") {
		t.Fatalf("output %q, %v", b, err)
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"-pkg", "demo", in}, &stdout, &stderr); err != nil || !bytes.Equal(stdout.Bytes(), b) {
		t.Fatalf("stdout output differs: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	t.Setenv("GOPACKAGE", "")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.x")
	os.WriteFile(bad, []byte("struct s {\n  nope x;\n};\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"x.x"}, "flag -pkg"},
		{[]string{"-pkg", "p"}, "no input"},
		{[]string{"-pkg", "p", filepath.Join(dir, "missing.x")}, "read input"},
		{[]string{"-pkg", "p", bad}, "bad.x:2:3: undeclared identifier nope"},
		{[]string{"-nosuchflag"}, "not defined"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.args, err, c.want)
		}
	}
}
