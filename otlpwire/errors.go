package otlpwire

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them inside an *Error, so callers branch with errors.Is and read the
// position with errors.As.
var (
	// ErrTruncated: a tag, varint, fixed-width value or length-delimited
	// field runs past the end of its enclosing message.
	ErrTruncated = errors.New("truncated")
	// ErrOverflow: a varint is longer than ten bytes or overflows 64 bits.
	ErrOverflow = errors.New("overlong varint")
	// ErrWireType: a known field arrived with a wire type its .proto
	// declaration does not allow, or a tag carries wire type 6 or 7.
	ErrWireType = errors.New("wrong wire type")
	// ErrGroup: a deprecated group (wire types 3 and 4). OTLP never uses
	// groups, so they are refused rather than skipped.
	ErrGroup = errors.New("group wire type not supported")
	// ErrFieldNumber: a tag with field number 0 or above 2^29-1.
	ErrFieldNumber = errors.New("invalid field number")
	// ErrTooDeep: AnyValue arrays and key-value lists nest deeper than
	// MaxAnyValueDepth.
	ErrTooDeep = errors.New("AnyValue nesting too deep")
	// ErrIDLength: a trace id that is not 0 or 16 bytes, or a span id that
	// is not 0 or 8 bytes.
	ErrIDLength = errors.New("invalid id length")
	// ErrPackedLength: a packed fixed-width field whose length is not a
	// multiple of the element size.
	ErrPackedLength = errors.New("packed field length not a multiple of element size")
)

// MaxAnyValueDepth is the deepest nesting of AnyValue arrays and key-value
// lists that Validate and Hash accept. A value directly in an attribute is at
// depth 1. OTLP has no limit of its own; 64 is far beyond anything an SDK
// emits and keeps recursion on hostile input bounded.
const MaxAnyValueDepth = 64

// Error describes where a request is malformed.
//
// Path() names the message in OTLP field names with repeated-field indexes,
// relative to the value the failing method was called on (for methods on a
// request, relative to the request), e.g.
// "resource_logs[2].scope_logs[0].log_records[7]". Offset is the byte
// offset of the failing tag or value relative to the same value.
type Error struct {
	Offset int
	What   string // what was being read, e.g. "length-delimited field"
	Err    error  // one of the package's sentinel errors
	segs   []pathSeg
	inline [8]pathSeg // backing for segs, so that typical paths cost no extra allocation
}

// pathSeg is one step of an error's path; index < 0 for a singular field.
type pathSeg struct {
	name  string
	index int
}

// Path returns the OTLP path of the failing element, outermost first.
func (e *Error) Path() string {
	var sb strings.Builder
	e.writePath(&sb)
	return sb.String()
}

func (e *Error) writePath(sb *strings.Builder) {
	for i := len(e.segs) - 1; i >= 0; i-- {
		s := e.segs[i]
		if i < len(e.segs)-1 && s.name != "" {
			sb.WriteByte('.')
		}
		sb.WriteString(s.name)
		if s.index >= 0 {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(s.index))
			sb.WriteByte(']')
		}
	}
}

func (e *Error) Error() string {
	var sb strings.Builder
	if len(e.segs) > 0 {
		e.writePath(&sb)
		sb.WriteString(": ")
	}
	sb.WriteString(e.Err.Error())
	if e.What != "" {
		sb.WriteByte(' ')
		sb.WriteString(e.What)
	}
	sb.WriteString(" at offset ")
	sb.WriteString(strconv.Itoa(e.Offset))
	return sb.String()
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// newErr is the one constructor for *Error; it runs only on failure paths.
func newErr(sentinel error, off int, what string) error {
	e := &Error{Offset: off, What: what, Err: sentinel}
	e.segs = e.inline[:0]
	return e
}

// within re-bases err, which was produced while reading a nested message
// that starts at byte base of its parent, and adds the field name and index
// (index < 0 for a singular field) as the next outer step of its path. It
// costs no allocation beyond growing the path. Non-*Error values are
// returned unchanged.
func within(err error, name string, index, base int) error {
	e, ok := err.(*Error)
	if !ok {
		return err
	}
	e.segs = append(e.segs, pathSeg{name: name, index: index})
	e.Offset += base
	return e
}

// shift moves the offset of err, produced while reading a sub-range that
// starts at byte off of a message, to be relative to that message.
func shift(err error, off int) error {
	if e, ok := err.(*Error); ok && off != 0 {
		e.Offset += off
	}
	return err
}
