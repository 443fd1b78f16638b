package otlpwire_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/wirehouse/wirehouse/internal/wirewalk"
	"github.com/wirehouse/wirehouse/otlpwire"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// deepWalkProtowire does the deep walk's work (wirewalk.Deep: the same
// checksum of every record's timestamp and every attribute's key and typed
// value) with nothing but google.golang.org/protobuf/encoding/protowire: the
// straightforward wire-level scan, one callback per field, none of
// otlpwire's validation or error paths (no wire-type or id-length checks,
// no body decoding: a little less work than the otlpwire walk). BenchmarkDeepWalk/impl=protowire
// measures it beside otlpwire and pdata: what walking the bytes costs
// without a parse tree, done the obvious way.
func deepWalkProtowire(s otlpwire.Signal, in []byte) (int, error) {
	n := 0
	err := eachField(in, func(num protowire.Number, _ uint64, rx []byte) error {
		if num != 1 {
			return nil
		}
		// The resource's attributes count once per scope container, as
		// the otlpwire walk adds them to each scope's headers; the
		// resource may come before or after the scope containers.
		var resAttrs int
		err := eachField(rx, func(num protowire.Number, _ uint64, b []byte) error {
			if num != 1 {
				return nil
			}
			a, err := pwAttrs(b, 1)
			resAttrs = a
			return err
		})
		if err != nil {
			return err
		}
		return eachField(rx, func(num protowire.Number, _ uint64, b []byte) error {
			if num != 2 { // scope container
				return nil
			}
			n += resAttrs
			return eachField(b, func(num protowire.Number, _ uint64, b []byte) error {
				switch num {
				case 1: // scope: name and attributes
					return eachField(b, func(num protowire.Number, _ uint64, b []byte) error {
						switch num {
						case 1:
							n += len(b)
						case 3:
							a, err := pwKV(b)
							n += a
							return err
						}
						return nil
					})
				case 2: // record
					k, err := pwRecord(s, b)
					n += k
					return err
				}
				return nil
			})
		})
	})
	return n, err
}

// pwRecord is one log record, span or metric: timestamps and
// attributes.
func pwRecord(s otlpwire.Signal, b []byte) (int, error) {
	switch s {
	case otlpwire.SignalLogs:
		return pwPoint(b, 1, 6)
	case otlpwire.SignalTraces:
		return pwPoint(b, 7, 9)
	}
	n := 0
	err := eachField(b, func(num protowire.Number, _ uint64, b []byte) error {
		var attrs protowire.Number // the points' attributes field, by kind
		switch num {
		case 5, 7, 11: // gauge, sum, summary
			attrs = 7
		case 9: // histogram
			attrs = 9
		case 10: // exponential histogram
			attrs = 1
		default:
			return nil
		}
		return eachField(b, func(num protowire.Number, _ uint64, p []byte) error {
			if num != 1 {
				return nil
			}
			k, err := pwPoint(p, 3, attrs)
			n += k
			return err
		})
	})
	return n, err
}

// pwPoint adds the low byte of the fixed64 field timeField to the
// attributes' checksum.
func pwPoint(b []byte, timeField, attrsField protowire.Number) (int, error) {
	n := 0
	err := eachField(b, func(num protowire.Number, v uint64, b []byte) error {
		switch num {
		case timeField:
			n += int(v & 0xff)
		case attrsField:
			a, err := pwKV(b)
			n += a
			return err
		}
		return nil
	})
	return n, err
}

// pwAttrs is the checksum of the KeyValues in field num of b.
func pwAttrs(b []byte, num protowire.Number) (int, error) {
	n := 0
	err := eachField(b, func(f protowire.Number, _ uint64, kv []byte) error {
		if f != num {
			return nil
		}
		a, err := pwKV(kv)
		n += a
		return err
	})
	return n, err
}

// pwKV is useValue's checksum of one KeyValue: the key's length plus
// the value's.
func pwKV(kv []byte) (int, error) {
	n := 0
	err := eachField(kv, func(num protowire.Number, _ uint64, b []byte) error {
		switch num {
		case 1:
			n += len(b)
		case 2:
			return eachField(b, func(num protowire.Number, v uint64, b []byte) error {
				switch num {
				case 1, 7: // string, bytes
					n += len(b)
				case 2:
					if v != 0 {
						n++
					}
				case 3:
					n += int(int64(v))
				case 4:
					n += int(math.Float64frombits(v))
				case 5, 6:
					n++
				}
				return nil
			})
		}
		return nil
	})
	return n, err
}

var errPwMalformed = errors.New("malformed field")

// eachField calls f with each field of b: its number and, by wire type,
// its scalar value or its bytes.
func eachField(b []byte, f func(num protowire.Number, v uint64, s []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errPwMalformed
		}
		b = b[n:]
		var v uint64
		var s []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var v32 uint32
			v32, n = protowire.ConsumeFixed32(b)
			v = uint64(v32)
		case protowire.BytesType:
			s, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return errPwMalformed
		}
		b = b[n:]
		if err := f(num, v, s); err != nil {
			return err
		}
	}
	return nil
}

// TestProtowireWalk: the protowire walk computes the otlpwire walk's
// checksum on random requests of every signal in both field orders
// (synth.Random: every AnyValue kind, all five point kinds, unknown
// fields), so BenchmarkDeepWalk's impl=protowire does the same walk.
func TestProtowireWalk(t *testing.T) {
	for _, s := range benchSignals {
		for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
			for seed := range uint64(200) {
				in := synth.Random(rand.New(rand.NewPCG(seed, 7)), s, o)
				want, err := wirewalk.Deep(s, in)
				if err != nil {
					t.Fatalf("%v %v seed %d: otlpwire walk: %v", s, o, seed, err)
				}
				got, err := deepWalkProtowire(s, in)
				if err != nil || got != want {
					t.Errorf("%v %v seed %d: protowire walk = %d, %v; otlpwire %d", s, o, seed, got, err, want)
				}
			}
		}
	}
}
