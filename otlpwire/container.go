package otlpwire

import (
	"encoding/binary"
	"io"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
)

// The request, resource and scope containers of the three signals share one
// shape:
//
//	message Export{Logs,Trace,Metrics}ServiceRequest { repeated Resource{Logs,Spans,Metrics} resource_* = 1; }
//	message Resource{Logs,Spans,Metrics} { Resource resource = 1; repeated Scope* scope_* = 2; string schema_url = 3; }
//	message Scope{Logs,Spans,Metrics} { InstrumentationScope scope = 1; repeated <record> * = 2; string schema_url = 3; }
//
// These helpers implement them once; each signal's file names its fields.

const (
	fieldResources = 1 // in a request
	fieldHeader    = 1 // resource or scope, in a resource or scope container
	fieldChildren  = 2 // scopes or records, in a resource or scope container
	fieldSchemaURL = 3
)

// header returns the last resource or scope message of a container.
// Earlier occurrences (protobuf merges them; no SDK writes them) are checked
// with check, as Validate checks every occurrence, so that a consumer that
// reads only the header it uses still refuses what Validate refuses.
func header(msg []byte, name string, check func([]byte) error) ([]byte, error) {
	out, n, err := lastCount(msg, fieldHeader, name)
	if err != nil || n < 2 {
		return out, err
	}
	idx := 0
	var inner error
	err = repeated(msg, fieldHeader, name, func(h []byte, base int) bool {
		if idx++; idx == n {
			return false // the last one is the caller's to read
		}
		if e := check(h); e != nil {
			inner = within(e, name, -1, base)
			return false
		}
		return true
	})
	if inner != nil {
		return nil, inner
	}
	return out, err
}

// schemaURL returns the container's schema_url.
func schemaURL(msg []byte) ([]byte, error) {
	return last(msg, fieldSchemaURL, "schema_url")
}

// countIn counts the leaves below msg: names[0] is the repeated field of msg
// (number num0), names[1:] the repeated field 2 of each level below it. At
// the last level each element is counted as one, or as leaf(element) when
// leaf is not nil (a metric's data points).
func countIn(msg []byte, num0 protowire.Number, names []string, leaf func([]byte) (int, error)) (int, error) {
	if len(names) == 1 && leaf == nil {
		return count(msg, num0, names[0])
	}
	total, idx := 0, 0
	var inner error
	err := repeated(msg, num0, names[0], func(child []byte, base int) bool {
		var n int
		var err error
		if len(names) == 1 {
			n, err = leaf(child)
		} else {
			n, err = countIn(child, fieldChildren, names[1:], leaf)
		}
		if err != nil {
			inner = within(err, names[0], idx, base)
			return false
		}
		total += n
		idx++
		return true
	})
	if inner != nil {
		return total, inner
	}
	return total, err
}

// appendRequest appends a standalone export request holding the one
// resource container rc: the field-1 tag, its length and rc itself.
func appendRequest(dst, rc []byte) []byte {
	dst = protowire.AppendTag(dst, fieldResources, wireBytes)
	dst = protowire.AppendVarint(dst, uint64(len(rc)))
	return append(dst, rc...)
}

// headerBufs holds scratch space for writing a request header to an
// io.Writer without a per-call allocation.
var headerBufs = sync.Pool{New: func() any { return new([1 + binary.MaxVarintLen64]byte) }}

// writeRequest writes the same bytes appendRequest appends.
func writeRequest(w io.Writer, rc []byte) (int64, error) {
	hp := headerBufs.Get().(*[1 + binary.MaxVarintLen64]byte)
	h := protowire.AppendTag(hp[:0], fieldResources, wireBytes)
	h = protowire.AppendVarint(h, uint64(len(rc)))
	n, err := w.Write(h)
	headerBufs.Put(hp)
	if err != nil {
		return int64(n), err
	}
	m, err := w.Write(rc)
	return int64(n + m), err
}
