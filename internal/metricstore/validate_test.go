package metricstore

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Wire builders for requests that pdata would not produce.

func msg(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func lenField(num protowire.Number, b []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
}

func fixedField(num protowire.Number, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(protowire.AppendTag(nil, num, protowire.Fixed64Type), v)
}

func varintField(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func strAttr(num protowire.Number, k, v string) []byte {
	return lenField(num, msg(lenField(1, []byte(k)), lenField(2, lenField(1, []byte(v)))))
}

// badAttr is a KeyValue whose AnyValue holds string_value as a varint.
func badAttr(num protowire.Number) []byte {
	return lenField(num, msg(lenField(1, []byte("k")), lenField(2, varintField(1, 1))))
}

// TestAppendValidates checks the parts of a request that AppendOTLP's walk
// does not read for its samples, each after a valid request has filled the
// caches with the same resource, scope and attribute bytes: the request is
// refused with Validate's error and nothing of it is stored.
func TestAppendValidates(t *testing.T) {
	ts := uint64(t0.UnixNano())
	resource := msg(strAttr(1, "service.name", "svc"))
	scope := msg(lenField(1, []byte("lib")))
	pointAttrs := msg(strAttr(7, "host", "a"))
	point := func(extra ...[]byte) []byte {
		return msg(fixedField(3, ts), fixedField(4, math.Float64bits(1)), pointAttrs, msg(extra...))
	}
	gauge := func(name string, extra ...[]byte) []byte {
		return msg(lenField(1, []byte(name)), lenField(5, lenField(1, point(extra...))))
	}
	request := func(rm ...[]byte) []byte {
		var b []byte
		for _, r := range rm {
			b = append(b, lenField(1, r)...)
		}
		return b
	}
	container := func(res, scope []byte, metrics ...[]byte) []byte {
		sm := lenField(1, scope)
		for _, m := range metrics {
			sm = append(sm, lenField(2, m)...)
		}
		return msg(lenField(1, res), lenField(2, sm))
	}

	deltaSum := msg(lenField(1, []byte("d")), lenField(7, msg(
		lenField(1, msg(fixedField(3, ts), fixedField(4, math.Float64bits(1)), badAttr(7))),
		varintField(2, 1)))) // AGGREGATION_TEMPORALITY_DELTA
	cases := []struct {
		name string
		req  []byte
	}{
		{"metric metadata", request(container(resource, scope, msg(gauge("m"), badAttr(12))))},
		{"exemplar of a gauge (exemplars off)", request(container(resource, scope,
			gauge("m", lenField(5, msg(fixedField(2, ts), fixedField(3, math.Float64bits(1)), badAttr(7))))))},
		{"attributes of a point of a refused delta sum", request(container(resource, scope, deltaSum))},
		{"resource container schema_url", request(msg(container(resource, scope, gauge("m")), varintField(3, 1)))},
		{"an earlier resource of a repeated field", request(msg(lenField(1, badAttr(1)), container(resource, scope, gauge("m"))))},
		{"scope attributes", request(container(resource, msg(scope, badAttr(3)), gauge("m")))},
	}
	s := open(t, t.TempDir())
	defer s.Close()
	valid := request(container(resource, scope, gauge("m")))
	if err := otlpwire.MetricsRequest(valid).Validate(); err != nil {
		t.Fatalf("valid request: %v", err)
	}
	res, err := s.AppendOTLP(context.Background(), valid)
	if err != nil || res.Accepted != 1 {
		t.Fatalf("valid request: %+v, %v", res, err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			verr := otlpwire.MetricsRequest(tc.req).Validate()
			if verr == nil {
				t.Fatal("the test request is valid")
			}
			_, before := seriesAndSamples(t, s)
			_, err := s.AppendOTLP(context.Background(), tc.req)
			var we *otlpwire.Error
			if !errors.As(err, &we) || we.Error() != verr.Error() {
				t.Fatalf("AppendOTLP: %v; want Validate's %v", err, verr)
			}
			if _, after := seriesAndSamples(t, s); after != before {
				t.Fatalf("refused request stored %d samples", after-before)
			}
		})
	}
}
