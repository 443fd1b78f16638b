package xdr

import (
	"errors"
	"strconv"
)

// Sentinel errors. Every error returned by this package and by generated
// code is an *Error wrapping one of these, so callers can test the cause with
// errors.Is and the position with errors.As.
var (
	// ErrTruncated means the input ended before the item being decoded.
	ErrTruncated = errors.New("xdr: truncated input")
	// ErrPadding means a pad byte after opaque or string data was not zero.
	ErrPadding = errors.New("xdr: non-zero padding")
	// ErrBool means a bool or an optional-data flag was neither 0 nor 1.
	ErrBool = errors.New("xdr: bool not 0 or 1")
	// ErrEnum means an enum value is not one of the declared values.
	ErrEnum = errors.New("xdr: undeclared enum value")
	// ErrDiscriminant means a union discriminant matches no case and the
	// union has no default arm.
	ErrDiscriminant = errors.New("xdr: unknown union discriminant")
	// ErrTooLong means a length or element count exceeds the declared
	// maximum. (A length that only exceeds what the remaining input could
	// hold is ErrTruncated.)
	ErrTooLong = errors.New("xdr: length exceeds maximum")
	// ErrTrailing means Unmarshal found bytes after the value.
	ErrTrailing = errors.New("xdr: trailing bytes after value")
	// ErrDepth means nesting exceeded the decoder's depth limit or, when
	// encoding, DefaultMaxDepth (a cyclic value fails this way).
	ErrDepth = errors.New("xdr: nesting too deep")
	// ErrLength means a fixed-length item was given data of the wrong length.
	ErrLength = errors.New("xdr: wrong fixed length")
)

// Error describes where encoding or decoding failed.
//
// For decoding, Offset is the byte offset in the decoder's input at which
// the offending item starts. For encoding, Offset is len(dst) at the point of
// failure, that is the offset in the caller's buffer (including whatever the
// caller had already put there).
type Error struct {
	Offset int    // byte offset of the failing item
	Op     string // what was being done, e.g. "decode bool"
	Err    error  // one of the sentinel errors above
}

// NewError returns an *Error. Generated code uses it to report enum and
// discriminant failures with the same shape as the runtime's own errors.
func NewError(offset int, op string, err error) error {
	return &Error{Offset: offset, Op: op, Err: err}
}

func (e *Error) Error() string {
	return e.Op + " at offset " + strconv.Itoa(e.Offset) + ": " + e.Err.Error()
}

// Unwrap returns the sentinel cause.
func (e *Error) Unwrap() error { return e.Err }
