// Package wirecompare measures otlpwire against the other ways of reading
// OTLP on the wire, in one run, from outside every package measured:
// otlp-wire (go.olly.garden/otlp-wire, fetched from its repository by
// fetch-otlp-wire.sh) and a hand-written single pass with
// github.com/VictoriaMetrics/easyproto. Run it with ./run.sh.
package wirecompare

import (
	"fmt"
	"testing"

	"github.com/VictoriaMetrics/easyproto"
	owire "go.olly.garden/otlp-wire"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/internal/wirewalk"
	"github.com/wirehouse/wirehouse/otlpwire"
)

var sink int

// fixture is the seed-000 fixture: 5 resources × 100 records, 3 resource
// attributes, 2 record attributes; its metrics are gauges.
func fixture(s otlpwire.Signal) []byte { return synth.Fixture(s, synth.Ascending) }

var signals = []otlpwire.Signal{otlpwire.SignalMetrics, otlpwire.SignalLogs, otlpwire.SignalTraces}

// BenchmarkCount counts the records of the whole request.
func BenchmarkCount(b *testing.B) {
	for _, s := range signals {
		in := fixture(s)
		b.Run(fmt.Sprintf("signal=%v/impl=otlpwire", s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var n int
				var err error
				switch s {
				case otlpwire.SignalLogs:
					n, err = otlpwire.LogsRequest(in).LogRecordCount()
				case otlpwire.SignalTraces:
					n, err = otlpwire.TracesRequest(in).SpanCount()
				default:
					n, err = otlpwire.MetricsRequest(in).DataPointCount()
				}
				if err != nil {
					b.Fatal(err)
				}
				sink += n
			}
		})
		b.Run(fmt.Sprintf("signal=%v/impl=otlp-wire", s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var n int
				var err error
				switch s {
				case otlpwire.SignalLogs:
					n, err = owire.ExportLogsServiceRequest(in).LogRecordCount()
				case otlpwire.SignalTraces:
					n, err = owire.ExportTracesServiceRequest(in).SpanCount()
				default:
					n, err = owire.ExportMetricsServiceRequest(in).DataPointCount()
				}
				if err != nil {
					b.Fatal(err)
				}
				sink += n
			}
		})
	}
}

// BenchmarkResources iterates the resource containers and takes each one's
// Resource, ranging over the iterators directly (otlp-wire's …Seq
// methods, its zero-allocation form).
func BenchmarkResources(b *testing.B) {
	for _, s := range signals {
		in := fixture(s)
		b.Run(fmt.Sprintf("signal=%v/impl=otlpwire", s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink += resourcesOtlpwire(s, in)
			}
		})
		b.Run(fmt.Sprintf("signal=%v/impl=otlp-wire", s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink += resourcesOtlpWire(s, in)
			}
		})
	}
}

func resourcesOtlpwire(s otlpwire.Signal, in []byte) int {
	n := 0
	switch s {
	case otlpwire.SignalLogs:
		for rl, err := range otlpwire.LogsRequest(in).ResourceLogs() {
			if err != nil {
				return -1
			}
			r, err := rl.Resource()
			if err != nil {
				return -1
			}
			n += len(r)
		}
	case otlpwire.SignalTraces:
		for rs, err := range otlpwire.TracesRequest(in).ResourceSpans() {
			if err != nil {
				return -1
			}
			r, err := rs.Resource()
			if err != nil {
				return -1
			}
			n += len(r)
		}
	default:
		for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
			if err != nil {
				return -1
			}
			r, err := rm.Resource()
			if err != nil {
				return -1
			}
			n += len(r)
		}
	}
	return n
}

func resourcesOtlpWire(s otlpwire.Signal, in []byte) int {
	n := 0
	switch s {
	case otlpwire.SignalLogs:
		for rl, err := range owire.ExportLogsServiceRequest(in).ResourceLogsSeq {
			if err != nil {
				return -1
			}
			r, err := rl.Resource()
			if err != nil {
				return -1
			}
			n += len(r)
		}
	case otlpwire.SignalTraces:
		for rs, err := range owire.ExportTracesServiceRequest(in).ResourceSpansSeq {
			if err != nil {
				return -1
			}
			r, err := rs.Resource()
			if err != nil {
				return -1
			}
			n += len(r)
		}
	default:
		for rm, err := range owire.ExportMetricsServiceRequest(in).ResourceMetricsSeq {
			if err != nil {
				return -1
			}
			r, err := rm.Resource()
			if err != nil {
				return -1
			}
			n += len(r)
		}
	}
	return n
}

// BenchmarkDeepMetrics reads every point of the seed-000 metrics fixture
// (gauges): timestamp and attributes, plus the resource and scope
// attributes and the scope name, and computes one checksum that every
// side must agree on.
//
//   - impl=otlpwire: wirewalk.Deep, the Read-based walk, which checks every
//     field it passes (wire types, lengths, ids) and every attribute pair;
//   - impl=otlpwire-validating: wirewalk.ValidatingMetrics, the same walk
//     checking, as it reads, everything MetricsRequest.Validate checks
//     (FuzzValidatingWalk in otlpwire holds it to that): full validation
//     in one pass;
//   - impl=otlpwire-validate-then-walk: Validate, then the walk;
//   - impl=easyproto: one pass with easyproto's FieldContext, gauges and
//     sums only, checking only what easyproto's reads check.
func BenchmarkDeepMetrics(b *testing.B) {
	in := fixture(otlpwire.SignalMetrics)
	want, err := wirewalk.Deep(otlpwire.SignalMetrics, in)
	if err != nil {
		b.Fatal(err)
	}
	if got, err := walkEasyproto(in); err != nil || got != want {
		b.Fatalf("easyproto checksum %d (%v), otlpwire %d", got, err, want)
	}
	if got, err := wirewalk.ValidatingMetrics(in); err != nil || got != want {
		b.Fatalf("validating walk checksum %d (%v), otlpwire %d", got, err, want)
	}
	impls := []struct {
		name string
		walk func([]byte) (int, error)
	}{
		{"otlpwire", func(in []byte) (int, error) { return wirewalk.Deep(otlpwire.SignalMetrics, in) }},
		{"otlpwire-validating", wirewalk.ValidatingMetrics},
		{"otlpwire-validate-then-walk", func(in []byte) (int, error) {
			if err := otlpwire.MetricsRequest(in).Validate(); err != nil {
				return 0, err
			}
			return wirewalk.Deep(otlpwire.SignalMetrics, in)
		}},
		{"easyproto", walkEasyproto},
	}
	for _, impl := range impls {
		b.Run("impl="+impl.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				n, err := impl.walk(in)
				if err != nil {
					b.Fatal(err)
				}
				sink += n
			}
		})
	}
}

var errBad = fmt.Errorf("malformed")

// walkEasyproto is the single pass: the nesting is spelled out by hand,
// as a program that knows only gauges and sums would write it.
func walkEasyproto(in []byte) (int, error) {
	n := 0
	var fc easyproto.FieldContext
	for src := in; len(src) > 0; {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		if fc.FieldNum != 1 {
			continue
		}
		rm, ok := fc.MessageData()
		if !ok {
			return 0, errBad
		}
		k, err := epResourceMetrics(rm)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

// epResourceMetrics counts the resource's attributes once per scope, as
// wirewalk.Deep does.
func epResourceMetrics(src []byte) (int, error) {
	n, ra, scopes := 0, 0, 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		switch fc.FieldNum {
		case 1: // resource
			r, ok := fc.MessageData()
			if !ok {
				return 0, errBad
			}
			k, err := epAttrsIn(r, 1)
			if err != nil {
				return 0, err
			}
			ra = k
		case 2: // scope_metrics
			scopes++
			sm, ok := fc.MessageData()
			if !ok {
				return 0, errBad
			}
			k, err := epScopeMetrics(sm)
			if err != nil {
				return 0, err
			}
			n += k
		}
	}
	return n + ra*scopes, nil
}

func epScopeMetrics(src []byte) (int, error) {
	n := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		switch fc.FieldNum {
		case 1: // scope
			s, ok := fc.MessageData()
			if !ok {
				return 0, errBad
			}
			k, err := epScope(s)
			if err != nil {
				return 0, err
			}
			n += k
		case 2: // metrics
			m, ok := fc.MessageData()
			if !ok {
				return 0, errBad
			}
			k, err := epMetric(m)
			if err != nil {
				return 0, err
			}
			n += k
		}
	}
	return n, nil
}

func epScope(src []byte) (int, error) {
	n := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		switch fc.FieldNum {
		case 1: // name
			s, ok := fc.String()
			if !ok {
				return 0, errBad
			}
			n += len(s)
		case 3: // attributes
			kv, ok := fc.MessageData()
			if !ok {
				return 0, errBad
			}
			k, err := epKeyValue(kv)
			if err != nil {
				return 0, err
			}
			n += k
		}
	}
	return n, nil
}

func epMetric(src []byte) (int, error) {
	n := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		switch fc.FieldNum {
		case 5, 7: // gauge, sum: data_points = 1
			g, ok := fc.MessageData()
			if !ok {
				return 0, errBad
			}
			var gc easyproto.FieldContext
			for len(g) > 0 {
				if g, err = gc.NextField(g); err != nil {
					return 0, err
				}
				if gc.FieldNum != 1 {
					continue
				}
				p, ok := gc.MessageData()
				if !ok {
					return 0, errBad
				}
				k, err := epNumberPoint(p)
				if err != nil {
					return 0, err
				}
				n += k
			}
		}
	}
	return n, nil
}

func epNumberPoint(src []byte) (int, error) {
	n := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		switch fc.FieldNum {
		case 3: // time_unix_nano
			t, ok := fc.Fixed64()
			if !ok {
				return 0, errBad
			}
			n += int(t & 0xff)
		case 4: // as_double
			if _, ok := fc.Double(); !ok {
				return 0, errBad
			}
		case 6: // as_int
			if _, ok := fc.Sfixed64(); !ok {
				return 0, errBad
			}
		case 7: // attributes
			kv, ok := fc.MessageData()
			if !ok {
				return 0, errBad
			}
			k, err := epKeyValue(kv)
			if err != nil {
				return 0, err
			}
			n += k
		}
	}
	return n, nil
}

// epAttrsIn sums the KeyValue pairs of field num of src.
func epAttrsIn(src []byte, num uint32) (int, error) {
	n := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		if fc.FieldNum != num {
			continue
		}
		kv, ok := fc.MessageData()
		if !ok {
			return 0, errBad
		}
		k, err := epKeyValue(kv)
		if err != nil {
			return 0, err
		}
		n += k
	}
	return n, nil
}

func epKeyValue(src []byte) (int, error) {
	n := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		switch fc.FieldNum {
		case 1:
			k, ok := fc.String()
			if !ok {
				return 0, errBad
			}
			n += len(k)
		case 2:
			v, ok := fc.MessageData()
			if !ok {
				return 0, errBad
			}
			k, err := epAnyValue(v)
			if err != nil {
				return 0, err
			}
			n += k
		}
	}
	return n, nil
}

func epAnyValue(src []byte) (int, error) {
	n := 0
	var fc easyproto.FieldContext
	for len(src) > 0 {
		var err error
		if src, err = fc.NextField(src); err != nil {
			return 0, err
		}
		var ok bool
		switch fc.FieldNum {
		case 1:
			var s string
			s, ok = fc.String()
			n = len(s)
		case 2:
			var x bool
			x, ok = fc.Bool()
			n = 0
			if x {
				n = 1
			}
		case 3:
			var x int64
			x, ok = fc.Int64()
			n = int(x)
		case 4:
			var x float64
			x, ok = fc.Double()
			n = int(x)
		case 5, 6:
			_, ok = fc.MessageData()
			n = 1
		case 7:
			var x []byte
			x, ok = fc.Bytes()
			n = len(x)
		default:
			ok = true
		}
		if !ok {
			return 0, errBad
		}
	}
	return n, nil
}
