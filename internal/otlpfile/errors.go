package otlpfile

import (
	"errors"
	"strconv"
)

// Sentinel errors, wrapped in an *Error, for errors.Is.
var (
	// ErrUnknownFormat: a named file whose extension is none of .binpb,
	// .pb and .json, with or without .gz or .zst.
	ErrUnknownFormat = errors.New("unknown file extension (want .binpb, .pb or .json, optionally followed by .gz or .zst)")
	// ErrTooLarge: the decompressed content is larger than the Reader's
	// maximum file size.
	ErrTooLarge = errors.New("decompressed content larger than the maximum file size")
	// ErrLengthPrefix: a length-delimited stream ends inside a 4-byte
	// length prefix, or a prefix claims more bytes than remain.
	ErrLengthPrefix = errors.New("bad length prefix")
	// ErrWrongSignal: a JSON document holds another signal's requests.
	ErrWrongSignal = errors.New("wrong signal")
)

// Error is a file that could not be read.
type Error struct {
	Path string // the file; empty for errors of SplitDelimited
	// Offset is the byte offset in the decompressed content where reading
	// failed: the start of a bad length prefix or JSON document, the
	// position of a JSON syntax error, or how many bytes a broken
	// compressed stream yielded. -1 when there is none, as for a file
	// that cannot be opened.
	Offset int64
	Err    error
}

func (e *Error) Error() string {
	var b []byte
	if e.Path != "" {
		b = append(b, e.Path...)
		b = append(b, ": "...)
	}
	if e.Offset >= 0 {
		b = append(b, "offset "...)
		b = strconv.AppendInt(b, e.Offset, 10)
		b = append(b, ": "...)
	}
	return string(append(b, e.Err.Error()...))
}

func (e *Error) Unwrap() error { return e.Err }
