package otlpwire

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestPartValidate checks the Validate methods of the parts a walk may
// skip against the request's Validate on the same damage: each refuses
// with the same sentinel, and accepts the undamaged part.
func TestPartValidate(t *testing.T) {
	kv := func(num protowire.Number, k string, v []byte) []byte {
		return msg(num, cat(msg(1, []byte(k)), msg(2, v)))
	}
	good := kv(1, "k", msg(1, []byte("v")))
	deep := msg(1, []byte("x"))
	for range MaxAnyValueDepth + 1 {
		deep = msg(6, kv(1, "k", deep)) // AnyValue{kvlist_value: {values: [{k: deep}]}}
	}
	tooDeep := kv(1, "k", deep)
	wrongType := kv(1, "k", protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1))

	fixed := func(num protowire.Number) []byte {
		return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), 1)
	}
	exemplar := func(attr []byte) []byte { // filtered_attributes are field 7
		if len(attr) > 0 {
			attr = cat(attr[:1:1], attr[1:])
			attr[0] = byte(7<<3 | protowire.BytesType)
		}
		return cat(fixed(2), fixed(3), attr)
	}
	for _, tc := range []struct {
		name string
		bad  []byte
		want error
	}{{"too deep", tooDeep, ErrTooDeep}, {"wrong wire type", wrongType, ErrWireType}} {
		t.Run(tc.name, func(t *testing.T) {
			parts := []struct {
				what      string
				validate  func(b []byte) error
				wrap      func(b []byte) []byte // the part as the attribute list b
				inRequest func(part []byte) []byte
			}{
				{"Attributes", func(b []byte) error { return Attributes{b: b, num: 1}.Validate() }, func(b []byte) []byte { return b },
					func(p []byte) []byte { return msg(1, msg(1, p)) }}, // a resource's attributes
				{"Resource", func(b []byte) error { return Resource(b).Validate() }, func(b []byte) []byte { return b },
					func(p []byte) []byte { return msg(1, msg(1, p)) }},
				{"Scope", func(b []byte) error { return Scope(b).Validate() }, func(b []byte) []byte { return retag(b, 3) },
					func(p []byte) []byte { return msg(1, msg(2, msg(1, p))) }},
				{"Exemplar", func(b []byte) error { return Exemplar(b).Validate() }, exemplar,
					func(p []byte) []byte { // in a gauge point's exemplars (field 5)
						return msg(1, msg(2, msg(2, cat(msg(1, []byte("m")), msg(5, msg(1, msg(5, p)))))))
					}},
			}
			for _, p := range parts {
				t.Run(p.what, func(t *testing.T) {
					if err := p.validate(p.wrap(good)); err != nil {
						t.Errorf("%s.Validate on a valid part: %v", p.what, err)
					}
					if err := MetricsRequest(p.inRequest(p.wrap(good))).Validate(); err != nil {
						t.Errorf("the valid request fails: %v", err)
					}
					if err := p.validate(p.wrap(tc.bad)); !errors.Is(err, tc.want) {
						t.Errorf("%s.Validate = %v, want %v", p.what, err, tc.want)
					}
					if err := MetricsRequest(p.inRequest(p.wrap(tc.bad))).Validate(); !errors.Is(err, tc.want) {
						t.Errorf("request Validate = %v, want %v", err, tc.want)
					}
				})
			}
		})
	}
}

// retag gives the first field of b the number num.
func retag(b []byte, num protowire.Number) []byte {
	out := cat(b)
	out[0] = byte(num)<<3 | out[0]&7
	return out
}

// TestRepeatedHeader checks that Resource and Scope, which return the last
// occurrence, refuse a request whose earlier occurrence Validate refuses.
func TestRepeatedHeader(t *testing.T) {
	bad := msg(1, cat(msg(1, []byte("k")), msg(2, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1))))
	good := msg(1, cat(msg(1, []byte("k")), msg(2, msg(1, []byte("v")))))
	rm := cat(msg(1, bad), msg(1, good))
	if err := MetricsRequest(msg(1, rm)).Validate(); !errors.Is(err, ErrWireType) {
		t.Fatalf("Validate = %v", err)
	}
	if _, err := ResourceMetrics(rm).Resource(); !errors.Is(err, ErrWireType) {
		t.Errorf("Resource() = %v, want ErrWireType", err)
	}
	if _, err := ResourceLogs(rm).Resource(); !errors.Is(err, ErrWireType) {
		t.Errorf("ResourceLogs.Resource() = %v, want ErrWireType", err)
	}
	sm := cat(msg(1, retag(bad, 3)), msg(1, retag(good, 3)))
	if _, err := ScopeSpans(sm).Scope(); !errors.Is(err, ErrWireType) {
		t.Errorf("Scope() = %v, want ErrWireType", err)
	}
	r, err := ResourceMetrics(cat(msg(1, good), msg(1, good))).Resource()
	if err != nil || len(r) != len(good) {
		t.Errorf("valid repeated resource: %x, %v", r, err)
	}
}
