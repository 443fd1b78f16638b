package xdrgen

import (
	"bytes"
	goparser "go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCompile feeds arbitrary text to the .x compiler, seeded with the
// repository's real XDR files (the test specs and the spool's on-disk
// records) and the error cases of TestErrors. It must never panic; a
// rejected source gets an error that says where (in.x:line:col) unless the
// problem is a name clash of the generated Go; an accepted one compiles to
// the same Go source twice, and that source parses as Go.
func FuzzCompile(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("..", "..", "testdata", "xdr", "*.x"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds: %v", err)
	}
	seeds = append(seeds, filepath.Join("..", "spool", "record.x"))
	for _, name := range seeds {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	for _, s := range []string{
		"struct s {\n  foo x;\n};",
		"union u switch (int k) {\ncase 1: void;\ncase 1: int x;\n};",
		"typedef t *t;",
		"struct s {\n  s inner;\n};",
		"struct a_b { int x; };\nstruct aB { int y; };",
		"/* oops",
		"const A = 0x7fffffff; typedef opaque o[A];",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		out, err := Compile("fuzz", []Source{{Name: "in.x", Text: src}})
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "in.x:") && !strings.Contains(msg, "Go name") {
				t.Fatalf("error without a position: %v", err)
			}
			return
		}
		again, err := Compile("fuzz", []Source{{Name: "in.x", Text: src}})
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("second compile differs (err %v)", err)
		}
		if _, err := goparser.ParseFile(gotoken.NewFileSet(), "out.go", out, goparser.AllErrors); err != nil {
			t.Fatalf("generated Go does not parse: %v\n%s", err, out)
		}
	})
}
