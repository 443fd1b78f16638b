package spool

import (
	"errors"
	"strconv"
)

// Errors returned by Append, Next and Commit, for errors.Is.
var (
	// ErrFull: the record would take the spool past its Config.MaxBytes
	// limit, or the file system has no space left (then the error also
	// wraps the system's ENOSPC). It clears as consumers commit and
	// segments are deleted; the caller should retry later (OTLP: 429 /
	// RESOURCE_EXHAUSTED with a retry delay).
	ErrFull = errors.New("spool: full")
	// ErrTooLarge: the payload is larger than MAX_PAYLOAD, or the record
	// alone is larger than the Config.MaxBytes limit; retrying cannot help.
	ErrTooLarge = errors.New("spool: record too large")
	// ErrClosed: the Spool has been closed.
	ErrClosed = errors.New("spool: closed")
	// ErrConsumerRemoved: the Consumer was removed with RemoveConsumer.
	ErrConsumerRemoved = errors.New("spool: consumer removed")
)

// Causes of corruption, the Err of a *CorruptError (possibly wrapping
// more detail), for errors.Is.
var (
	// ErrTorn: the file ends inside a record's header or payload, as
	// when a crash interrupts a write.
	ErrTorn = errors.New("record cut short by the end of the file")
	// ErrChecksum: the record's CRC-32C does not match its bytes.
	ErrChecksum = errors.New("checksum mismatch")
	// ErrHeader: a header field is invalid: an undeclared record type or
	// signal, a tenant longer than MAX_TENANT, a payload longer than
	// MAX_PAYLOAD, non-zero padding, or a sequence number out of order.
	// For cursor files, any undecodable content.
	ErrHeader = errors.New("bad header")
)

// CorruptError reports a corrupt record. Open returns none: it repairs
// what it finds and lists the repairs in Repairs. Next returns one if a
// record read back does not match its checksum.
type CorruptError struct {
	// Segment is the file's name in the spool directory: a segment
	// (00000000000000000001.seg) or, for a cursor that could not be read,
	// a consumer's cursor file (name.cursor).
	Segment string
	// Offset is the byte offset of the first bad record; the segment was
	// truncated there.
	Offset int64
	// Dropped is how many bytes the repair cut off (0 when Next reports
	// the error, since reading repairs nothing).
	Dropped int64
	Err     error
}

func (e *CorruptError) Error() string {
	b := append([]byte("spool: corrupt "), e.Segment...)
	b = append(b, " at offset "...)
	b = strconv.AppendInt(b, e.Offset, 10)
	if e.Dropped > 0 {
		b = append(b, " (dropped "...)
		b = strconv.AppendInt(b, e.Dropped, 10)
		b = append(b, " bytes)"...)
	}
	b = append(b, ": "...)
	return string(append(b, e.Err.Error()...))
}

func (e *CorruptError) Unwrap() error { return e.Err }
