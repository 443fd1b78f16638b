package xdr

import (
	"fmt"
	"io"
)

// Writer encodes XDR items onto an io.Writer through an internal buffer.
// Errors are sticky: after the first encoding or write error every method
// is a no-op and Flush (and Err) return that error, so a run of writes
// needs one check. Call Flush when done.
type Writer struct {
	w   io.Writer
	buf []byte
	n   int64 // bytes handed to w
	err error
}

// writerFlushAt is the buffered size above which a Writer flushes.
const writerFlushAt = 32 << 10

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, 4096)}
}

// Reset discards buffered data and any error and makes z write to w,
// keeping the buffer's capacity.
func (z *Writer) Reset(w io.Writer) {
	z.w, z.buf, z.n, z.err = w, z.buf[:0], 0, nil
}

func (z *Writer) maybeFlush() {
	if len(z.buf) >= writerFlushAt {
		z.flush()
	}
}

func (z *Writer) flush() {
	if z.err != nil || len(z.buf) == 0 {
		return
	}
	n, err := z.w.Write(z.buf)
	z.n += int64(n)
	if err == nil && n < len(z.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		z.err = fmt.Errorf("write xdr: %w", err)
	}
	z.buf = z.buf[:0]
}

func (z *Writer) setErr(err error) {
	if z.err == nil && err != nil {
		if e, ok := err.(*Error); ok {
			// Report the offset in the stream, not in the buffer.
			e.Offset += int(z.n)
		}
		z.err = err
	}
}

// Uint32 writes an unsigned int.
func (z *Writer) Uint32(v uint32) {
	if z.err == nil {
		z.buf = AppendUint32(z.buf, v)
		z.maybeFlush()
	}
}

// Int32 writes an int or enum value.
func (z *Writer) Int32(v int32) { z.Uint32(uint32(v)) }

// Uint64 writes an unsigned hyper.
func (z *Writer) Uint64(v uint64) {
	if z.err == nil {
		z.buf = AppendUint64(z.buf, v)
		z.maybeFlush()
	}
}

// Int64 writes a hyper.
func (z *Writer) Int64(v int64) { z.Uint64(uint64(v)) }

// Bool writes a bool.
func (z *Writer) Bool(v bool) {
	if z.err == nil {
		z.buf = AppendBool(z.buf, v)
		z.maybeFlush()
	}
}

// Float32 writes a float.
func (z *Writer) Float32(v float32) {
	if z.err == nil {
		z.buf = AppendFloat32(z.buf, v)
		z.maybeFlush()
	}
}

// Float64 writes a double.
func (z *Writer) Float64(v float64) {
	if z.err == nil {
		z.buf = AppendFloat64(z.buf, v)
		z.maybeFlush()
	}
}

// Quadruple writes a quadruple as its 16 bytes.
func (z *Writer) Quadruple(v Quadruple) {
	if z.err == nil {
		z.buf = AppendQuadruple(z.buf, v)
		z.maybeFlush()
	}
}

// Count writes the element count of a variable-length array of at most max
// elements; the caller then writes the elements.
func (z *Writer) Count(n int, max uint32) {
	if z.err == nil {
		var err error
		z.buf, err = AppendCount(z.buf, n, max)
		z.setErr(err)
		z.maybeFlush()
	}
}

// FixedOpaque writes fixed-length opaque data and its padding.
func (z *Writer) FixedOpaque(b []byte) {
	if z.err == nil {
		z.buf = AppendFixedOpaque(z.buf, b)
		z.maybeFlush()
	}
}

// Opaque writes variable-length opaque data of at most max bytes.
func (z *Writer) Opaque(b []byte, max uint32) {
	if z.err == nil {
		var err error
		z.buf, err = AppendOpaque(z.buf, b, max)
		z.setErr(err)
		z.maybeFlush()
	}
}

// String writes a string of at most max bytes.
func (z *Writer) String(s string, max uint32) {
	if z.err == nil {
		var err error
		z.buf, err = AppendString(z.buf, s, max)
		z.setErr(err)
		z.maybeFlush()
	}
}

// Encode writes a generated value (anything with AppendXDR).
func (z *Writer) Encode(v Marshaler) {
	if z.err == nil {
		var err error
		z.buf, err = v.AppendXDR(z.buf)
		z.setErr(err)
		z.maybeFlush()
	}
}

// Flush writes any buffered bytes and returns the sticky error, if any.
func (z *Writer) Flush() error {
	z.flush()
	return z.err
}

// Err returns the sticky error without flushing.
func (z *Writer) Err() error { return z.err }

// Written returns the number of bytes handed to the underlying writer.
func (z *Writer) Written() int64 { return z.n }
