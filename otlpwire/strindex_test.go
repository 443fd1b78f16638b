package otlpwire

import (
	"errors"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestStringValueStrindex: AnyValue's string_value_strindex (field 8, a
// profiles dictionary reference) is a member of the oneof: it replaces an
// earlier value and is replaced by a later one, and it reads as empty, as
// pdata shows it. A fuzzed request found otlpwire skipping it as unknown.
func TestStringValueStrindex(t *testing.T) {
	intValue := protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 7)
	strindex := protowire.AppendVarint(protowire.AppendTag(nil, 8, protowire.VarintType), 2)
	for _, tc := range []struct {
		name  string
		value []byte
		want  ValueType
	}{
		{"int", intValue, ValueInt},
		{"strindex", strindex, ValueEmpty},
		{"int then strindex", append(append([]byte(nil), intValue...), strindex...), ValueEmpty},
		{"strindex then int", append(append([]byte(nil), strindex...), intValue...), ValueInt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := logsWithResourceAttr(tc.value)
			var got ValueType
			for rl, err := range LogsRequest(req).ResourceLogs() {
				if err != nil {
					t.Fatal(err)
				}
				r, err := rl.Resource()
				if err != nil {
					t.Fatal(err)
				}
				attrs, err := r.Attributes()
				if err != nil {
					t.Fatal(err)
				}
				v, ok, err := attrs.Get("k")
				if err != nil || !ok {
					t.Fatalf("Get: %v, %v", ok, err)
				}
				got = v.Type()
			}
			if got != tc.want {
				t.Errorf("otlpwire: %v, want %v", got, tc.want)
			}
			if err := LogsRequest(req).Validate(); err != nil {
				t.Errorf("Validate: %v", err)
			}
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(req)
			if err != nil {
				t.Fatal(err)
			}
			pv, _ := ld.ResourceLogs().At(0).Resource().Attributes().Get("k")
			if pv.Type().String() != got.String() {
				t.Errorf("pdata: %v, otlpwire %v", pv.Type(), got)
			}
		})
	}
	// A field 8 of another wire type is refused, as pdata refuses it.
	bad := logsWithResourceAttr(protowire.AppendBytes(protowire.AppendTag(nil, 8, protowire.BytesType), []byte("x")))
	if err := LogsRequest(bad).Validate(); !errors.Is(err, ErrWireType) {
		t.Errorf("Validate of a length-delimited field 8: %v, want ErrWireType", err)
	}
	if _, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(bad); err == nil {
		t.Error("pdata accepted a length-delimited field 8")
	}
	// KeyValue's key_strindex (3) likewise: a varint is skipped, another
	// wire type refused.
	for _, tc := range []struct {
		name  string
		field []byte
		ok    bool
	}{
		{"varint", protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 1), true},
		{"length-delimited", protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), []byte("x")), false},
	} {
		t.Run("key_strindex "+tc.name, func(t *testing.T) {
			kv := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("k"))
			kv = append(kv, tc.field...)
			res := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), kv)
			rl := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), res)
			req := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rl)
			_, perr := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(req)
			werr := LogsRequest(req).Validate()
			if (perr == nil) != tc.ok || (werr == nil) != tc.ok {
				t.Errorf("pdata %v, Validate %v, want accepted %v", perr, werr, tc.ok)
			}
		})
	}
}

// logsWithResourceAttr is a logs request of one resource with one
// attribute "k" whose AnyValue body is value.
func logsWithResourceAttr(value []byte) []byte {
	kv := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("k"))
	kv = protowire.AppendBytes(protowire.AppendTag(kv, 2, protowire.BytesType), value)
	res := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), kv)
	rl := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), res)
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rl)
}
