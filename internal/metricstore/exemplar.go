package metricstore

import (
	"encoding/hex"
	"slices"
	"unicode/utf8"

	"github.com/prometheus/prometheus/model/exemplar"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// maxExemplarRunes is Prometheus' limit on an exemplar's label set
// (exemplar.ExemplarMaxLabelSetLength): filtered attributes are kept only
// if the whole set stays within it.
const maxExemplarRunes = exemplar.ExemplarMaxLabelSetLength

// readExemplars decodes the exemplars of a point into a.exAll, in their
// order on the wire, as Prometheus' getPromExemplars builds them: labels
// trace_id and span_id (lowercase hex) when the ids are not all zero, plus
// the filtered attributes under their own, unsanitized keys (one named
// trace_id or span_id gives way to the id) if the label set stays within
// 128 runes; the value (an int is converted); the time in ms. Unlike
// Prometheus, which gives up the rest of the metric at an exemplar without
// a value, such an exemplar is dropped alone. It allocates only for points
// that have exemplars.
func (a *appendState) readExemplars(list otlpwire.List[otlpwire.Exemplar]) error {
	a.exAll = a.exAll[:0]
	if !a.s.cfg.exemplars {
		return nil
	}
	return list.Each(func(e otlpwire.Exemplar) error {
		f := &a.exf
		if err := e.Read(f); err != nil {
			return err
		}
		var ex exemplar.Exemplar
		switch f.ValueType {
		case otlpwire.PointValueInt:
			ex.Value = float64(f.Int)
		case otlpwire.PointValueDouble:
			ex.Value = f.Double
		default:
			return nil
		}
		ex.Ts = exemplarTime(f.Time)
		ex.HasTs = ex.Ts != 0
		// Names and values go into one scratch buffer, turned into one
		// string for all of them: two allocations per exemplar with
		// Labels.
		buf, pairs := a.exScratch[:0], a.exPairs[:0]
		add := func(name []byte, value func([]byte) ([]byte, error)) error {
			n0 := len(buf)
			buf = append(buf, name...)
			v0 := len(buf)
			var err error
			if buf, err = value(buf); err != nil {
				return err
			}
			pairs = append(pairs, [3]int{n0, v0, len(buf)})
			return nil
		}
		hexOf := func(id []byte) func([]byte) ([]byte, error) {
			return func(b []byte) ([]byte, error) { return hex.AppendEncode(b, id), nil }
		}
		hasTrace, hasSpan := !allZero(f.TraceID), !allZero(f.SpanID)
		if hasTrace {
			add([]byte("trace_id"), hexOf(f.TraceID))
		}
		if hasSpan {
			add([]byte("span_id"), hexOf(f.SpanID))
		}
		ids := len(pairs)
		runes := len(buf) // ids and their names are ASCII
		for kv, err := range f.FilteredAttributes.All() {
			if err != nil {
				return err
			}
			if (hasTrace && string(kv.Key) == "trace_id") || (hasSpan && string(kv.Key) == "span_id") {
				continue
			}
			v := kv.Value
			if err := add(kv.Key, func(b []byte) ([]byte, error) { return appendValueString(b, v) }); err != nil {
				return err
			}
			p := pairs[len(pairs)-1]
			runes += utf8.RuneCount(buf[p[0]:p[1]]) + utf8.RuneCount(buf[p[1]:p[2]])
		}
		if runes > maxExemplarRunes {
			pairs = pairs[:ids] // the filtered attributes would pass the limit
		}
		str := string(buf)
		b := &a.exb
		b.Reset()
		for _, p := range pairs {
			b.Add(str[p[0]:p[1]], str[p[1]:p[2]])
		}
		b.Sort()
		ex.Labels = b.Labels()
		a.exScratch, a.exPairs = buf, pairs
		a.exAll = append(a.exAll, ex)
		return nil
	})
}

// exemplarTime is Prometheus' timestamp.FromTime(Timestamp.AsTime()) for
// an exemplar's time: ns to ms rounded down, with times past 2262 wrapping
// negative as int64 does.
func exemplarTime(ns uint64) int64 {
	n := int64(ns)
	ms := n / 1_000_000
	if n%1_000_000 < 0 {
		ms--
	}
	return ms
}

// withinTime drops, in place, the exemplars after notAfter (ms), as
// Prometheus' OTLP endpoint does: a far-future exemplar would make every
// later one of its series out of order.
func withinTime(exs []exemplar.Exemplar, notAfter int64) []exemplar.Exemplar {
	out := exs[:0]
	for _, e := range exs {
		if e.Ts <= notAfter {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// allZero reports whether an id is empty or all zero bytes.
func allZero(id []byte) bool {
	for _, c := range id {
		if c != 0 {
			return false
		}
	}
	return true
}

// sortedExemplars returns exs sorted as appenders require (by time, then
// value, then labels), or nil if there are none.
func sortedExemplars(exs []exemplar.Exemplar) []exemplar.Exemplar {
	if len(exs) == 0 {
		return nil
	}
	slices.SortFunc(exs, exemplar.Compare)
	return exs
}
