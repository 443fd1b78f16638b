package xdrgen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the generator's output")

// TestGolden compiles each .x file under the repository's testdata/xdr and
// compares with testdata/<name>.golden. Run with -update to accept changes.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("..", "..", "testdata", "xdr", "*.x"))
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no inputs: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".x")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Compile("golden", []Source{{Name: in, Text: string(src)}})
			if err != nil {
				t.Fatal(err)
			}
			again, _ := Compile("golden", []Source{{Name: in, Text: string(src)}})
			if !bytes.Equal(got, again) {
				t.Fatal("output is not deterministic")
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s; run go test ./internal/xdrgen -update and review the diff", golden)
			}
		})
	}
}

// TestErrors checks that bad input is reported with file:line:col.
func TestErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"undeclared type", "struct s {\n  foo x;\n};", "in.x:2:3: undeclared identifier foo"},
		{"undeclared size", "typedef opaque h[N];", "in.x:1:18: undeclared identifier N"},
		{"size is a type", "struct t { int a; };\ntypedef int v<t>;", "in.x:2:15: size t is a type, not a constant"},
		{"duplicate case", "union u switch (int k) {\ncase 1: void;\ncase 1: int x;\n};", "in.x:3:6: duplicate case value 1 in union u (previous at in.x:2:6)"},
		{"duplicate case via const", "const ONE = 1;\nunion u switch (int k) {\ncase 1: void;\ncase ONE: int x;\n};", "in.x:4:6: duplicate case value 1"},
		{"string discriminant", "union u switch (string k<>) {\ncase 1: void;\n};", "in.x:1:24: discriminant k must be a plain int"},
		{"hyper discriminant", "union u switch (hyper k) {\ncase 1: void;\n};", "in.x:1:17: discriminant k has type hyper"},
		{"struct discriminant", "struct s { int a; };\nunion u switch (s k) {\ncase 1: void;\n};", "in.x:2:17: discriminant k has type s, which is not an integer or enum"},
		{"case not in enum", "enum e { A = 1 };\nunion u switch (e k) {\ncase 2: void;\n};", "in.x:3:6: case value 2 is not a member of enum e"},
		{"redeclared", "const A = 1;\nenum e { A = 2 };", "in.x:2:10: A redeclared (previous declaration at in.x:1:7)"},
		{"self containment", "struct s {\n  s inner;\n};", "contains itself"},
		{"typedef cycle", "typedef t *t;", "in.x:1:12: typedef t refers to itself"},
		{"syntax", "struct s { int a }", "in.x:1:18: expected \";\", found \"}\""},
		{"string without max", "struct s { string a; };", "in.x:1:19: string a needs a maximum"},
		{"void field", "struct s { void; };", "in.x:1:12: void is only allowed as a union arm"},
		{"bad char", "struct s { int a; } @", "in.x:1:21: unexpected character '@'"},
		{"unterminated comment", "/* oops", "in.x:1:1: unterminated /* comment"},
		{"negative size", "typedef opaque o<-1>;", "in.x:1:18: size -1 out of range"},
		{"const is not a type", "const C = 1;\nstruct s { C x; };", "in.x:2:12: C is a constant, not a type"},
		{"go name collision", "struct a_b { int x; };\nstruct aB { int y; };", "Go name AB of aB collides with a_b"},
		{"duplicate field", "struct s { int a; int a; };", "in.x:1:23: field a redeclared"},
		{"program", "program P { version V { void NULL(void) = 0; } = 1; } = 1;", "in.x:1:1: expected definition"},
		{"pass-through line", "%0\nstruct s { int a; };", "in.x:1:1: %-line is not valid Go: expected declaration, found 0"},
		{"huge array", "struct a { hyper x[268435455]; };\nstruct b { a y[3]; };", "in.x:2:14: array y encodes to more than 4 GiB"},
		{"huge struct", "struct a { opaque x[2147483644]; opaque y[2147483644]; hyper z; };", "in.x:1:8: struct a encodes to more than 4 GiB"},
		{"huge union", "struct a { opaque x[2147483644]; opaque y[2147483644]; int z; };\nunion u switch (int k) { case 1: a v; };", "in.x:2:7: union u encodes to more than 4 GiB"},
		{"line directive in a pass-through", "%/*line other.go:1*/ var y = 2\n%var x = 1\n%var z = )\nconst A = 1;", "in.x:3:1: %-line is not valid Go"},
		{"invalid UTF-8", "const A = 1;\n/* \xe9t\xe9 */", "in.x:2:4: invalid UTF-8"},
		{"NUL", "const A\x00 = 1;", "in.x:1:8: NUL byte"},
		{"unclosed pass-through", "const A = 1;\n%func f() {\n%\treturn\nstruct s { int a; };", "in.x:3:1: %-line is not valid Go"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile("p", []Source{{Name: "in.x", Text: c.src}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"filekind": "Filekind", "FILE_EXEC": "FileExec", "file_name": "FileName",
		"fileName": "FileName", "x": "X", "MAX_NAME2": "MaxName2",
	} {
		t.Run(in, func(t *testing.T) {
			if got := goName(in); got != want {
				t.Errorf("goName = %q, want %q", got, want)
			}
		})
	}
}

func TestConstants(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "10": 10, "-7": -7, "0x1F": 31, "010": 8, "-0x10": -16} {
		t.Run(in, func(t *testing.T) {
			if got, err := parseNumber(in); err != nil || got != want {
				t.Errorf("parseNumber = %d, %v", got, err)
			}
		})
	}
	if _, err := parseNumber("09"); err == nil {
		t.Error("09 accepted as octal")
	}
}
