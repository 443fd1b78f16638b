package otlpfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wirehouse/wirehouse/internal/otlpjson"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// jsonState is what a Reader keeps between JSON files.
type jsonState struct {
	raw json.RawMessage // the current document; its capacity is reused
}

// readJSON streams the OTLP/JSON documents of r.src and appends each,
// transcoded to protobuf, to r.reqs, with its offset to r.offs.
func (r *Reader) readJSON() error {
	// The Collector's file exporter writes JSON with compression as a
	// length-delimited stream of zstd-compressed documents; its first
	// byte tells, as for protobuf.
	var first [1]byte
	n, err := io.ReadFull(&r.src, first[:])
	if n == 0 {
		if err == io.EOF {
			return nil
		}
		return err
	}
	if first[0] < 0x08 {
		return r.readDelimitedJSON(first[0])
	}
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(first[:]), &r.src))
	for {
		start := dec.InputOffset()
		err := dec.Decode(&r.json.raw)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var e *Error
			if errors.As(err, &e) { // from r.src: decompression or size
				return e
			}
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return &Error{Offset: se.Offset, Err: fmt.Errorf("json: %w", err)}
			}
			return &Error{Offset: start, Err: fmt.Errorf("json: %w", err)} // e.g. io.ErrUnexpectedEOF
		}
		off := dec.InputOffset() - int64(len(r.json.raw))
		req, err := r.transcode(r.json.raw)
		if err != nil {
			return &Error{Offset: off, Err: err}
		}
		r.reqs = append(r.reqs, req)
		r.offs = append(r.offs, off)
	}
}

// readDelimitedJSON reads a length-delimited stream of OTLP/JSON
// documents, each possibly zstd-compressed, whose first byte was read.
func (r *Reader) readDelimitedJSON(first byte) error {
	r.buf = append(r.buf[:0], first)
	if err := r.fillMore(); err != nil {
		return err
	}
	var err error
	if r.reqs, r.offs, err = SplitDelimited(r.reqs, r.offs, r.buf); err != nil {
		return err
	}
	if err := r.inflate(); err != nil {
		return err
	}
	for i, doc := range r.reqs {
		req, err := r.transcode(doc)
		if err != nil {
			return &Error{Offset: r.offs[i], Err: err}
		}
		r.reqs[i] = req
	}
	return nil
}

// transcode transcodes doc as a request of the file's signal, telling it
// from doc's top-level field when the Reader was given none.
func (r *Reader) transcode(doc []byte) ([]byte, error) {
	if r.fsig == 0 {
		sig, key, ok := otlpjson.SignalOf(doc)
		if !ok {
			return nil, fmt.Errorf("%w: the document has no resourceLogs, resourceSpans or resourceMetrics field (or fields of two)", ErrUnknownSignal)
		}
		r.fsig, r.why = sig, "JSON field "+key
	}
	return transcodeJSON(r.fsig, doc)
}

// transcodeJSON turns one OTLP/JSON export request of signal sig into
// protobuf, as the receiver does. The result is a new slice. Unknown
// fields are ignored, so a document of another signal would transcode to
// an empty request; that case is checked for and refused.
func transcodeJSON(sig otlpwire.Signal, doc []byte) ([]byte, error) {
	b, err := otlpjson.ToProto(sig, doc)
	if err != nil {
		return nil, fmt.Errorf("otlp/json %s: %w", sig, err)
	}
	if len(b) == 0 {
		if key := otlpjson.OtherSignalKey(sig, doc); key != "" {
			return nil, fmt.Errorf("%w: the document holds %s, not %s", ErrWrongSignal, key, sig)
		}
	}
	return b, nil
}
