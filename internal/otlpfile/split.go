package otlpfile

import (
	"encoding/binary"
	"fmt"
)

// prefixLen is the size of a length prefix of the Collector file
// exporter's proto format.
const prefixLen = 4

// IsDelimited reports whether content b is a length-delimited stream rather
// than one raw protobuf request: whether its first byte is below 0x08,
// which no protobuf tag starts with (see the package doc).
func IsDelimited(b []byte) bool { return len(b) > 0 && b[0] < 0x08 }

// SplitProto appends to reqs the protobuf requests of content b, and to
// offs the offset of each in b: all of b as one request, or for a
// length-delimited stream (IsDelimited) what SplitDelimited finds. Empty b
// holds no request. The requests alias b; errors are as SplitDelimited's.
func SplitProto(reqs [][]byte, offs []int64, b []byte) ([][]byte, []int64, error) {
	switch {
	case len(b) == 0:
		return reqs, offs, nil
	case IsDelimited(b):
		return SplitDelimited(reqs, offs, b)
	}
	return append(reqs, b[:len(b):len(b)]), append(offs, 0), nil
}

// SplitDelimited appends to reqs the messages of b, a sequence of messages
// each prefixed by its length as a 4-byte big-endian integer, and to offs
// the offset in b of each message's first byte (after its prefix). The
// messages alias b, with their capacity capped so that appending to one
// cannot overwrite the next. A prefix cut short by the end of b, or one
// claiming more bytes than remain, is an *Error wrapping ErrLengthPrefix
// with the prefix's offset; reqs and offs are then returned with the
// messages before it. Every length is checked against the bytes that
// remain before it is used.
func SplitDelimited(reqs [][]byte, offs []int64, b []byte) ([][]byte, []int64, error) {
	for off := 0; off < len(b); {
		rest := len(b) - off
		if rest < prefixLen {
			return reqs, offs, &Error{Offset: int64(off), Err: fmt.Errorf("%w: %d bytes left, a prefix takes %d", ErrLengthPrefix, rest, prefixLen)}
		}
		n := uint64(binary.BigEndian.Uint32(b[off:]))
		if n > uint64(rest-prefixLen) {
			return reqs, offs, &Error{Offset: int64(off), Err: fmt.Errorf("%w: length %d, only %d bytes follow", ErrLengthPrefix, n, rest-prefixLen)}
		}
		start := off + prefixLen
		end := start + int(n)
		reqs = append(reqs, b[start:end:end])
		offs = append(offs, int64(start))
		off = end
	}
	return reqs, offs, nil
}
