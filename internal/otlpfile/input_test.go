package otlpfile

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name string
		f    Format
		c    Compression
		ok   bool
	}{
		{"logs-000001.binpb", FormatProto, CompressionNone, true},
		{"x.pb", FormatProto, CompressionNone, true},
		{"dir.json/x.binpb.gz", FormatProto, CompressionGzip, true},
		{"x.binpb.zst", FormatProto, CompressionZstd, true},
		{"x.json", FormatJSON, CompressionNone, true},
		{"x.json.gz", FormatJSON, CompressionGzip, true},
		{"X.JSON.ZST", FormatJSON, CompressionZstd, true},
		{"x.gz", 0, 0, false},
		{"x.zst.gz", 0, 0, false},
		{"x.gz.binpb", FormatProto, CompressionNone, true},
		{"x.txt", 0, 0, false},
		{"binpb", 0, 0, false},
		{"x.jsonl", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, c, ok := ParseName(tc.name)
			if f != tc.f || c != tc.c || ok != tc.ok {
				t.Errorf("ParseName = %v, %v, %v; want %v, %v, %v", f, c, ok, tc.f, tc.c, tc.ok)
			}
		})
	}
}

func TestCollect(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{
		"b/2.binpb", "b/10.binpb.gz", "a.json", "c/d/e.pb.zst", "notes.txt", "b/skip.jsonl", "c/z.json.gz",
	} {
		writeFile(t, dir, name, []byte("x"))
	}
	if err := os.Symlink(filepath.Join(dir, "a.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "c"), filepath.Join(dir, "linkdir.json")); err != nil {
		t.Fatal(err)
	}
	odd := writeFile(t, t.TempDir(), "named.PB", []byte("xyz"))
	in, err := Collect([]string{dir, odd})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range in {
		rel, err := filepath.Rel(dir, f.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = filepath.Base(f.Path)
		}
		got = append(got, rel+":"+f.Format.String()+"/"+f.Compression.String())
	}
	want := []string{
		"a.json:json/none", "b/10.binpb.gz:proto/gzip", "b/2.binpb:proto/none", "c/d/e.pb.zst:proto/zstd",
		"c/z.json.gz:json/gzip", "link.json:json/none", "named.PB:proto/none",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Collect =\n%q\nwant\n%q", got, want)
	}
	if in[len(in)-1].Size != 3 || in[0].Size != 1 {
		t.Errorf("sizes %d, %d; want 1, 3", in[0].Size, in[len(in)-1].Size)
	}

	bad := writeFile(t, dir, "named.txt", nil)
	_, err = Collect([]string{dir, bad})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrUnknownFormat) || e.Path != bad || !strings.Contains(err.Error(), "named.txt") {
		t.Errorf("Collect of a .txt file: %v, want an *Error naming it wrapping ErrUnknownFormat", err)
	}
	_, err = Collect([]string{filepath.Join(dir, "missing")})
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Collect of a missing path: %v", err)
	}
	if in, err := Collect([]string{t.TempDir()}); err != nil || len(in) != 0 {
		t.Errorf("empty directory: %v, %v", in, err)
	}
}
