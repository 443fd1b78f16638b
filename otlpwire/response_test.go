package otlpwire_test

import (
	"errors"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// partialSuccess encodes an Export*ServiceResponse's partial_success
// field holding body.
func partialSuccess(body []byte) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(b, body)
}

func TestExportResponsePartialSuccess(t *testing.T) {
	var rejected, message, negative []byte
	rejected = protowire.AppendTag(rejected, 1, protowire.VarintType)
	rejected = protowire.AppendVarint(rejected, 300)
	message = protowire.AppendTag(message, 2, protowire.BytesType)
	message = protowire.AppendString(message, "too old")
	negative = protowire.AppendTag(negative, 1, protowire.VarintType)
	negative = protowire.AppendVarint(negative, uint64(0xffffffffffffffff)) // int64 -1
	unknown := protowire.AppendTag(nil, 9, protowire.Fixed32Type)
	unknown = protowire.AppendFixed32(unknown, 7)

	logs := plogotlp.NewExportResponse()
	logs.PartialSuccess().SetRejectedLogRecords(4)
	logs.PartialSuccess().SetErrorMessage("4 records too old")
	traces := ptraceotlp.NewExportResponse()
	traces.PartialSuccess().SetRejectedSpans(5)
	metrics := pmetricotlp.NewExportResponse()
	metrics.PartialSuccess().SetErrorMessage("a warning")
	pdata := func(b []byte, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	for _, c := range []struct {
		name         string
		in           []byte
		wantRejected int64
		wantMessage  string
	}{
		{"full success", nil, 0, ""},
		{"empty partial_success", partialSuccess(nil), 0, ""},
		{"rejected", partialSuccess(rejected), 300, ""},
		{"message", partialSuccess(message), 0, "too old"},
		{"both, unknown fields around", slices.Concat(unknown, partialSuccess(slices.Concat(message, unknown, rejected))), 300, "too old"},
		{"negative", partialSuccess(negative), -1, ""},
		{"merged", slices.Concat(partialSuccess(rejected), partialSuccess(message)), 300, "too old"},
		{"pdata logs", pdata(logs.MarshalProto()), 4, "4 records too old"},
		{"pdata traces", pdata(traces.MarshalProto()), 5, ""},
		{"pdata metrics", pdata(metrics.MarshalProto()), 0, "a warning"},
	} {
		n, msg, err := otlpwire.ExportResponse(c.in).PartialSuccess()
		if err != nil || n != c.wantRejected || string(msg) != c.wantMessage {
			t.Errorf("%s: PartialSuccess = %d, %q, %v; want %d, %q", c.name, n, msg, err, c.wantRejected, c.wantMessage)
		}
	}

	wrongType := protowire.AppendTag(nil, 2, protowire.VarintType) // error_message as a varint
	wrongType = protowire.AppendVarint(wrongType, 1)
	for _, c := range []struct {
		name, in string
		want     error
		path     string
	}{
		{"truncated partial_success", string(partialSuccess(rejected)[:3]), otlpwire.ErrTruncated, "partial_success"},
		{"truncated rejected", string(partialSuccess(rejected[:2])), otlpwire.ErrTruncated, "partial_success.rejected"},
		{"wrong wire type", string(partialSuccess(wrongType)), otlpwire.ErrWireType, "partial_success"},
	} {
		n, msg, err := otlpwire.ExportResponse(c.in).PartialSuccess()
		var e *otlpwire.Error
		if !errors.Is(err, c.want) || !errors.As(err, &e) || e.Path() != c.path || n != 0 || msg != nil {
			t.Errorf("%s: PartialSuccess = %d, %q, %v; want an *Error wrapping %v at %s", c.name, n, msg, err, c.want, c.path)
		}
	}
}

func TestExportResponseZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("instrumentation allocates")
	}
	r := ptraceotlp.NewExportResponse()
	r.PartialSuccess().SetRejectedSpans(5)
	r.PartialSuccess().SetErrorMessage("5 spans too old")
	in, err := r.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() {
		if n, _, err := otlpwire.ExportResponse(in).PartialSuccess(); n != 5 || err != nil {
			t.Fatal(n, err)
		}
	}); a != 0 {
		t.Errorf("%v allocs per run, want 0", a)
	}
}
