package spool

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/formatdoc"
	"github.com/wirehouse/wirehouse/internal/xdrgen"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// formatPage is docs/format/spool.md, relative to this package.
const formatPage = "../../docs/format/spool.md"

// TestFormatDocMatchesXDR holds docs/format/spool.md to record.x: the
// page's tables of record_header and cursor_file list the structs'
// fields in order, each with its XDR type, size and offset, and its
// table of constants has every constant and enum value of the file. A
// field added, renamed or retyped in record.x fails here until the page
// says so too.
func TestFormatDocMatchesXDR(t *testing.T) {
	page := readFormatPage(t)
	src, err := os.ReadFile("record.x")
	if err != nil {
		t.Fatal(err)
	}
	var spec xdrgen.Spec
	if err := xdrgen.Parse(&spec, "record.x", string(src)); err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	structs := map[string]*xdrgen.Def{}
	for _, d := range spec.Defs {
		switch d.Kind {
		case xdrgen.DefConst:
			consts[d.Name] = valueText(d.Value)
		case xdrgen.DefEnum:
			for _, m := range d.Members {
				consts[m.Name] = valueText(m.Value)
			}
		case xdrgen.DefStruct:
			structs[d.Name] = d
		}
	}
	for _, name := range []string{"record_header", "cursor_file"} {
		d := structs[name]
		if d == nil {
			t.Fatalf("record.x has no struct %s", name)
		}
		rows := pageTable(t, page, name)
		fixed, variable := 0, 0
		for i, f := range d.Fields {
			size, n := xdrSize(f)
			want := map[string]string{
				"field":    f.Name,
				"XDR type": xdrType(f),
				"bytes":    size,
				"offset":   offsetText(fixed, variable),
			}
			if i >= len(rows) {
				t.Errorf("%s: field %s (%s) is not in the page's table", name, f.Name, want["XDR type"])
				continue
			}
			for k, v := range want {
				if rows[i][k] != v {
					t.Errorf("%s: field %d, %s: %s is %q in record.x, %q in the page", name, i, f.Name, k, v, rows[i][k])
				}
			}
			if n < 0 {
				variable++
			} else {
				fixed += n
			}
		}
		for _, row := range rows[min(len(rows), len(d.Fields)):] {
			if row["field"] != "payload" || name != "record_header" { // the payload follows the header
				t.Errorf("%s: the page lists field %s, which record.x does not have", name, row["field"])
			}
		}
	}
	documented := map[string]bool{}
	for _, row := range pageTable(t, page, "constants") {
		documented[row["name"]] = true
		if v, ok := consts[row["name"]]; !ok {
			t.Errorf("the page lists constant %s, which record.x does not have", row["name"])
		} else if row["value"] != v {
			t.Errorf("constant %s is %s in record.x, %s in the page", row["name"], v, row["value"])
		}
	}
	for name, v := range consts {
		if !documented[name] {
			t.Errorf("constant %s = %s of record.x is not in the page's table", name, v)
		}
	}
	if got, want := fmt.Sprintf("%d to %d bytes", minHeaderLen, maxHeaderLen), "a header takes "; !strings.Contains(page, want+got) {
		t.Errorf("the page does not say %q", want+got)
	}
}

// TestFormatDocExamples: the page's examples are the bytes a spool writes
// for the same records and commit: its first segment file after two
// Appends, and a consumer's cursor file after a Commit.
func TestFormatDocExamples(t *testing.T) {
	examples := pageExamples(t, readFormatPage(t))
	dir := t.TempDir()
	s, err := Open(config(dir, func(c *Config) { c.Sync = SyncNever }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	received := time.Date(2030, 5, 1, 10, 15, 0, 0, time.UTC)
	payload := []byte{0x0a, 0x00} // an ExportLogsServiceRequest with one empty ResourceLogs
	if _, err := s.Append(otlpwire.SignalLogs, "acme", received, payload); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(otlpwire.SignalTraces, "default", time.Time{}, payload); err != nil {
		t.Fatal(err)
	}
	c, err := s.Consumer("lake")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Commit(1); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{segName(1), "lake" + cursorSuffix} {
		want, ok := examples[file]
		if !ok {
			t.Errorf("the page has no example of %s", file)
			continue
		}
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the page's example differs from what the spool wrote:\npage %x\ncode %x", file, want, got)
		}
	}
	if len(examples) != 2 {
		t.Errorf("the page has %d examples, this test checks 2", len(examples))
	}
}

func readFormatPage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(formatPage)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pageTable returns the rows of page's table name (formatdoc.Table).
func pageTable(t *testing.T, page, name string) []map[string]string {
	t.Helper()
	rows, err := formatdoc.Table(page, name)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// exampleRE finds the page's examples: a line "<!-- example: <file> -->"
// and the ```hex block after it.
var exampleRE = regexp.MustCompile("(?s)<!-- example: (\\S+) -->\\s*```hex\n(.*?)```")

// pageExamples returns the bytes of each example by file name; in a hex
// block, what follows # on a line is a comment.
func pageExamples(t *testing.T, page string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, m := range exampleRE.FindAllStringSubmatch(page, -1) {
		var digits strings.Builder
		for line := range strings.Lines(m[2]) {
			line, _, _ = strings.Cut(line, "#")
			digits.WriteString(strings.Join(strings.Fields(line), ""))
		}
		b, err := hex.DecodeString(digits.String())
		if err != nil {
			t.Fatalf("example %s: %v", m[1], err)
		}
		out[m[1]] = b
	}
	return out
}

// valueText is a constant as record.x writes it.
func valueText(v *xdrgen.Value) string {
	if v.Ident != "" {
		return v.Ident
	}
	return strconv.FormatInt(v.Lit, 10)
}

// xdrType is a declaration's type as the page writes it: the type, and
// for a variable-length one its bound, string<MAX_TENANT>.
func xdrType(d *xdrgen.Decl) string {
	var name string
	switch d.Type.Kind {
	case xdrgen.TInt:
		name = "int"
	case xdrgen.TUint:
		name = "unsigned int"
	case xdrgen.THyper:
		name = "hyper"
	case xdrgen.TUhyper:
		name = "unsigned hyper"
	case xdrgen.TFloat:
		name = "float"
	case xdrgen.TDouble:
		name = "double"
	case xdrgen.TQuad:
		name = "quadruple"
	case xdrgen.TBool:
		name = "bool"
	case xdrgen.TOpaque:
		name = "opaque"
	case xdrgen.TString:
		name = "string"
	default:
		name = d.Type.Name
	}
	switch d.Kind {
	case xdrgen.DeclFixed:
		return name + "[" + valueText(d.Size) + "]"
	case xdrgen.DeclVar:
		if d.Size == nil {
			return name + "<>"
		}
		return name + "<" + valueText(d.Size) + ">"
	case xdrgen.DeclOptional:
		return name + " *"
	}
	return name
}

// xdrSize is a scalar declaration's size on the wire, as text and in
// bytes; n is -1 for a variable-length one ("4 + n + pad": its length,
// its bytes and the zeros to a multiple of 4). Enums are 4 bytes.
func xdrSize(d *xdrgen.Decl) (string, int) {
	if d.Kind != xdrgen.DeclScalar {
		return "4 + n + pad", -1
	}
	switch d.Type.Kind {
	case xdrgen.THyper, xdrgen.TUhyper, xdrgen.TDouble:
		return "8", 8
	case xdrgen.TQuad:
		return "16", 16
	}
	return "4", 4
}

// offsetText is a field's offset after fixed bytes and variable fields:
// "16", or "20 + n + pad" after one variable-length field.
func offsetText(fixed, variable int) string {
	switch variable {
	case 0:
		return strconv.Itoa(fixed)
	case 1:
		return strconv.Itoa(fixed+4) + " + n + pad"
	}
	return "…"
}
