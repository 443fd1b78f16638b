package otlpfile

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Format is the encoding of a file's decompressed content.
type Format uint8

// The formats.
const (
	FormatProto Format = iota + 1 // .binpb, .pb
	FormatJSON                    // .json
)

func (f Format) String() string {
	switch f {
	case FormatProto:
		return "proto"
	case FormatJSON:
		return "json"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Compression is how a file is compressed.
type Compression uint8

// The compressions.
const (
	CompressionNone Compression = iota
	CompressionGzip             // .gz
	CompressionZstd             // .zst
)

func (c Compression) String() string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	case CompressionZstd:
		return "zstd"
	}
	return fmt.Sprintf("Compression(%d)", uint8(c))
}

// Input is a file to read.
type Input struct {
	Path        string
	Format      Format
	Compression Compression
	Size        int64 // bytes on disk when collected
}

// ParseName returns the format and compression that the extension of name
// says, case-insensitively; ok is false for an unknown extension.
func ParseName(name string) (f Format, c Compression, ok bool) {
	name = strings.ToLower(filepath.Base(name))
	switch {
	case strings.HasSuffix(name, ".gz"):
		c, name = CompressionGzip, strings.TrimSuffix(name, ".gz")
	case strings.HasSuffix(name, ".zst"):
		c, name = CompressionZstd, strings.TrimSuffix(name, ".zst")
	}
	switch {
	case strings.HasSuffix(name, ".binpb"), strings.HasSuffix(name, ".pb"):
		return FormatProto, c, true
	case strings.HasSuffix(name, ".json"):
		return FormatJSON, c, true
	}
	return 0, 0, false
}

// Collect returns the files named by paths, in order: a file as named, a
// directory as its files with a known extension, recursively, in lexical
// order (others are passed over). A named file with an unknown extension
// is an *Error wrapping ErrUnknownFormat; a path that cannot be read is an
// *Error wrapping the fs error. Collect returns the first such error.
func Collect(paths []string) ([]Input, error) {
	var in []Input
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, &Error{Path: p, Offset: -1, Err: err}
		}
		if !st.IsDir() {
			f, c, ok := ParseName(p)
			if !ok {
				return nil, &Error{Path: p, Offset: -1, Err: ErrUnknownFormat}
			}
			in = append(in, Input{Path: p, Format: f, Compression: c, Size: st.Size()})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return &Error{Path: path, Offset: -1, Err: err}
			}
			if d.IsDir() {
				return nil
			}
			f, c, ok := ParseName(path)
			if !ok {
				return nil
			}
			info, err := d.Info()
			if err == nil && info.Mode()&fs.ModeSymlink != 0 {
				info, err = os.Stat(path) // WalkDir does not follow links
			}
			if err != nil {
				return &Error{Path: path, Offset: -1, Err: err}
			}
			if !info.Mode().IsRegular() {
				return nil // directories behind links, devices, sockets, pipes
			}
			in = append(in, Input{Path: path, Format: f, Compression: c, Size: info.Size()})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return in, nil
}

// Sniff returns the Input of the file at path whatever its name: the
// format and compression its extension says (see ParseName), or, for a
// name without a known extension, what its first bytes show: the gzip or
// zstd magic number, then, decompressed, a JSON document ('{' after any
// white space) or else protobuf.
func Sniff(path string) (Input, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Input{}, &Error{Path: path, Offset: -1, Err: err}
	}
	in := Input{Path: path, Size: st.Size()}
	if f, c, ok := ParseName(path); ok {
		in.Format, in.Compression = f, c
		return in, nil
	}
	file, err := os.Open(path)
	if err != nil {
		return Input{}, &Error{Path: path, Offset: -1, Err: err}
	}
	defer file.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(file, head)
	head = head[:n]
	var content io.Reader = bytes.NewReader(head)
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		in.Compression = CompressionGzip
		if zr, err := gzip.NewReader(bytes.NewReader(head)); err == nil {
			content = zr
		}
	case bytes.HasPrefix(head, zstdMagic):
		in.Compression = CompressionZstd
		if zr, err := zstd.NewReader(bytes.NewReader(head), zstd.WithDecoderConcurrency(1)); err == nil {
			defer zr.Close()
			content = zr
		}
	}
	first := make([]byte, 64)
	m, _ := io.ReadFull(content, first) // a short read of a truncated frame is enough
	in.Format = FormatProto
	if t := bytes.TrimLeft(first[:m], " \t\r\n"); len(t) > 0 && t[0] == '{' {
		in.Format = FormatJSON
	}
	return in, nil
}
