package otlpwire

import (
	"errors"
	"fmt"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// Hand-built malformed inputs, one per kind of damage, each checked for the
// sentinel, the path and the offset.

func msg(num protowire.Number, body []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(body)))
	return append(b, body...)
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// logRecord is a minimal valid LogRecord body: time and a string body.
func logRecord(t uint64) []byte {
	b := protowire.AppendTag(nil, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, t)
	return append(b, msg(5, msg(1, []byte("hello")))...)
}

func TestErrorPathAndOffset(t *testing.T) {
	var scope []byte
	for i := range 7 {
		scope = append(scope, msg(2, logRecord(uint64(i)))...)
	}
	badAt := len(scope) + 1 // the length prefix of the eighth record
	scope = append(scope, 0x12, 50, 1, 2, 3)
	res := msg(2, scope)
	req := msg(1, res)
	// Offsets of the scope's content within the request: request tag and
	// length (2 bytes), resource tag and length (2 bytes).
	wantOff := 2 + 2 + badAt
	if len(scope) >= 128 || len(res) >= 128 {
		wantOff += 2 // two-byte length prefixes
	}
	_, err := LogsRequest(req).LogRecordCount()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrTruncated) {
		t.Fatalf("err = %v, want *Error wrapping ErrTruncated", err)
	}
	if e.Path() != "resource_logs[0].scope_logs[0].log_records[7]" {
		t.Errorf("path = %q", e.Path())
	}
	if e.Offset != wantOff {
		t.Errorf("offset = %d, want %d", e.Offset, wantOff)
	}
	want := fmt.Sprintf("resource_logs[0].scope_logs[0].log_records[7]: truncated length-delimited field at offset %d", wantOff)
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	// Validate reports the same place.
	if verr := LogsRequest(req).Validate(); verr == nil || verr.Error() != want {
		t.Errorf("Validate = %v, want %q", verr, want)
	}
}

func TestMalformed(t *testing.T) {
	deep := msg(1, []byte("x"))
	for range MaxAnyValueDepth + 5 {
		deep = msg(5, msg(1, deep)) // AnyValue{array_value: ArrayValue{values: [deep]}}
	}
	deepRecord := cat(logRecord(1), msg(6, cat(msg(1, []byte("k")), msg(2, deep))))

	groupRecord := cat(logRecord(1), protowire.AppendTag(nil, 20, protowire.StartGroupType), protowire.AppendTag(nil, 20, protowire.EndGroupType))

	overlong := []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}

	wrongType := cat(logRecord(1), protowire.AppendTag(nil, 9, protowire.VarintType), []byte{1}) // trace_id as varint

	badID := cat(logRecord(1), msg(9, []byte{1, 2, 3}))

	wrap := func(rec []byte) []byte { return msg(1, msg(2, msg(2, rec))) }

	tests := []struct {
		name string
		in   []byte
		want error
		path string
	}{
		{"truncated tag", []byte{0x0a, 0x05, 0x12}, ErrTruncated, "resource_logs[0]"},
		{"length past end", []byte{0x0a, 0x7f}, ErrTruncated, "resource_logs[0]"},
		{"truncated varint", []byte{0x08, 0x80}, ErrTruncated, ""},
		{"overlong varint", overlong, ErrOverflow, "resource_logs[0]"},
		{"wrong wire type for resource_logs", []byte{0x08, 0x01}, ErrWireType, "resource_logs[0]"},
		{"reserved wire type", []byte{0x0e}, ErrWireType, ""},
		{"field number zero", []byte{0x00, 0x01}, ErrFieldNumber, ""},
		{"group", wrap(groupRecord), ErrGroup, "resource_logs[0].scope_logs[0].log_records[0]"},
		{"wrong wire type for trace_id", wrap(wrongType), ErrWireType, "resource_logs[0].scope_logs[0].log_records[0]"},
		{"bad trace id length", wrap(badID), ErrIDLength, "resource_logs[0].scope_logs[0].log_records[0]"},
		{"deep AnyValue", wrap(deepRecord), ErrTooDeep, "resource_logs[0].scope_logs[0].log_records[0]"},
		{"truncated fixed64 time", wrap([]byte{0x09, 1, 2, 3}), ErrTruncated, "resource_logs[0].scope_logs[0].log_records[0].time_unix_nano"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := LogsRequest(tt.in).Validate()
			if !errors.Is(err, tt.want) {
				t.Fatalf("Validate = %v, want %v", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Validate = %T, want *Error", err)
			}
			if p := e.Path(); p != tt.path && !(len(p) > len(tt.path) && p[:len(tt.path)] == tt.path) {
				t.Errorf("path = %q, want prefix %q", p, tt.path)
			}
			if e.Offset < 0 || e.Offset > len(tt.in) {
				t.Errorf("offset %d outside input of %d bytes", e.Offset, len(tt.in))
			}
		})
	}
}

func TestUnknownFieldsSkipped(t *testing.T) {
	unknown := cat(
		protowire.AppendVarint(protowire.AppendTag(nil, 100, protowire.VarintType), 300),
		protowire.AppendFixed32(protowire.AppendTag(nil, 101, protowire.Fixed32Type), 7),
		protowire.AppendFixed64(protowire.AppendTag(nil, 102, protowire.Fixed64Type), 7),
		msg(103, []byte("opaque")),
	)
	rec := cat(unknown, logRecord(1), unknown)
	scope := cat(unknown, msg(2, rec), unknown, msg(2, rec), unknown)
	res := cat(unknown, msg(2, scope), unknown)
	req := cat(unknown, msg(1, res), unknown, msg(1, res))
	n, err := LogsRequest(req).LogRecordCount()
	if err != nil || n != 4 {
		t.Fatalf("LogRecordCount = %d, %v; want 4", n, err)
	}
	if err := LogsRequest(req).Validate(); err != nil {
		t.Fatal(err)
	}
	var f LogRecordFields
	if err := LogRecord(rec).Read(&f); err != nil || f.Time != 1 || string(f.Body.Str()) != "hello" {
		t.Fatalf("Read = %+v, %v", f, err)
	}
}

// A length prefix claiming far more than the input holds is refused
// without allocating anything in proportion to it.
func TestHugeLengthClaim(t *testing.T) {
	in := protowire.AppendVarint([]byte{0x0a}, 1<<62)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, err := LogsRequest(in).LogRecordCount(); !errors.Is(err, ErrTruncated) {
			t.Fatalf("err = %v", err)
		}
		if err := LogsRequest(in).Validate(); !errors.Is(err, ErrTruncated) {
			t.Fatalf("err = %v", err)
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 100*2*1024 {
		t.Fatalf("allocated %d bytes for 200 failed parses", d)
	}
}

func TestSplitterOptions(t *testing.T) {
	for _, o := range []SplitOption{WithMaxRecords(0), WithMaxRecords(-1), WithMaxBytes(0)} {
		if _, err := NewSplitter(o); !errors.Is(err, ErrSplitOption) {
			t.Errorf("NewSplitter = %v, want ErrSplitOption", err)
		}
	}
}

// An error deep inside nested AnyValues costs a handful of allocations,
// growing with the logarithm of the nesting, not with any claimed length.
func TestDeepErrorAllocs(t *testing.T) {
	deep := msg(1, []byte("x"))
	for range MaxAnyValueDepth + 5 {
		deep = msg(5, msg(1, deep))
	}
	rec := cat(logRecord(1), msg(6, cat(msg(1, []byte("k")), msg(2, deep))))
	req := msg(1, msg(2, msg(2, rec)))
	var err error
	allocs := testing.AllocsPerRun(10, func() { err = LogsRequest(req).Validate() })
	if !errors.Is(err, ErrTooDeep) {
		t.Fatalf("Validate = %v, want ErrTooDeep", err)
	}
	if allocs > 8 {
		t.Errorf("%v allocations for an error %d levels deep", allocs, MaxAnyValueDepth)
	}
}

// TestBucketCountsOffsetAfterRepeatedSide: when a data point repeats its
// positive buckets and only the first occurrence has counts, a malformed
// count is still reported at its offset within the data point.
func TestBucketCountsOffsetAfterRepeatedSide(t *testing.T) {
	point := []byte{
		0x42, 0x03, 0x12, 0x01, 0x80, // positive { bucket_counts: [truncated varint at offset 4] }
		0x42, 0x02, 0x08, 0x01, // positive { offset: -1 }, no counts
	}
	var f ExponentialHistogramDataPointFields
	if err := ExponentialHistogramDataPoint(point).Read(&f); err != nil {
		t.Fatal(err)
	}
	if f.Positive.Offset != -1 {
		t.Errorf("offset %d, want -1 (merged from the second occurrence)", f.Positive.Offset)
	}
	var err error
	for _, e := range f.Positive.BucketCounts.All() {
		err = e
	}
	var we *Error
	if !errors.As(err, &we) || !errors.Is(err, ErrTruncated) {
		t.Fatalf("error %v, want a truncated *Error", err)
	}
	if we.Offset != 4 {
		t.Errorf("error at offset %d, want 4", we.Offset)
	}
}
