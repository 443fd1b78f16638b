package synth

import (
	"fmt"

	"github.com/wirehouse/wirehouse/otlpwire"
	"google.golang.org/protobuf/encoding/protowire"
)

// field is a field of a message in the test schema: its number, wire type
// and, for embedded messages, the message's name.
type field struct {
	num protowire.Number
	typ protowire.Type
	msg string
}

const (
	vt  = protowire.VarintType
	f32 = protowire.Fixed32Type
	f64 = protowire.Fixed64Type
	bt  = protowire.BytesType
)

// schema lists the fields of the OTLP messages in pdata's declaration
// order, written independently of proto.go.
var schema = map[string][]field{
	"ExportLogsServiceRequest":    {{1, bt, "ResourceLogs"}},
	"ExportTraceServiceRequest":   {{1, bt, "ResourceSpans"}},
	"ExportMetricsServiceRequest": {{1, bt, "ResourceMetrics"}},
	"ResourceLogs":                {{1, bt, "Resource"}, {2, bt, "ScopeLogs"}, {3, bt, ""}},
	"ResourceSpans":               {{1, bt, "Resource"}, {2, bt, "ScopeSpans"}, {3, bt, ""}},
	"ResourceMetrics":             {{1, bt, "Resource"}, {2, bt, "ScopeMetrics"}, {3, bt, ""}},
	"ScopeLogs":                   {{1, bt, "InstrumentationScope"}, {2, bt, "LogRecord"}, {3, bt, ""}},
	"ScopeSpans":                  {{1, bt, "InstrumentationScope"}, {2, bt, "Span"}, {3, bt, ""}},
	"ScopeMetrics":                {{1, bt, "InstrumentationScope"}, {2, bt, "Metric"}, {3, bt, ""}},
	"Resource":                    {{1, bt, "KeyValue"}, {2, vt, ""}},
	"InstrumentationScope":        {{1, bt, ""}, {2, bt, ""}, {3, bt, "KeyValue"}, {4, vt, ""}},
	"KeyValue":                    {{1, bt, ""}, {2, bt, "AnyValue"}},
	"AnyValue":                    {{1, bt, ""}, {2, vt, ""}, {3, vt, ""}, {4, f64, ""}, {5, bt, "ArrayValue"}, {6, bt, "KeyValueList"}, {7, bt, ""}},
	"ArrayValue":                  {{1, bt, "AnyValue"}},
	"KeyValueList":                {{1, bt, "KeyValue"}},
	"LogRecord": {{1, f64, ""}, {11, f64, ""}, {2, vt, ""}, {3, bt, ""}, {5, bt, "AnyValue"}, {6, bt, "KeyValue"},
		{7, vt, ""}, {8, f32, ""}, {9, bt, ""}, {10, bt, ""}, {12, bt, ""}},
	"Span": {{1, bt, ""}, {2, bt, ""}, {3, bt, ""}, {4, bt, ""}, {16, f32, ""}, {5, bt, ""}, {6, vt, ""},
		{7, f64, ""}, {8, f64, ""}, {9, bt, "KeyValue"}, {10, vt, ""}, {11, bt, "Event"}, {12, vt, ""},
		{13, bt, "Link"}, {14, vt, ""}, {15, bt, "Status"}},
	"Event":  {{1, f64, ""}, {2, bt, ""}, {3, bt, "KeyValue"}, {4, vt, ""}},
	"Link":   {{1, bt, ""}, {2, bt, ""}, {3, bt, ""}, {4, bt, "KeyValue"}, {5, vt, ""}, {6, f32, ""}},
	"Status": {{2, bt, ""}, {3, vt, ""}},
	"Metric": {{1, bt, ""}, {2, bt, ""}, {3, bt, ""}, {5, bt, "Gauge"}, {7, bt, "Sum"}, {9, bt, "Histogram"},
		{10, bt, "ExponentialHistogram"}, {11, bt, "Summary"}, {12, bt, "KeyValue"}},
	"Gauge":                {{1, bt, "NumberDataPoint"}},
	"Sum":                  {{1, bt, "NumberDataPoint"}, {2, vt, ""}, {3, vt, ""}},
	"Histogram":            {{1, bt, "HistogramDataPoint"}, {2, vt, ""}},
	"ExponentialHistogram": {{1, bt, "ExponentialHistogramDataPoint"}, {2, vt, ""}},
	"Summary":              {{1, bt, "SummaryDataPoint"}},
	"NumberDataPoint": {{7, bt, "KeyValue"}, {2, f64, ""}, {3, f64, ""}, {4, f64, ""}, {6, f64, ""},
		{5, bt, "Exemplar"}, {8, vt, ""}},
	"HistogramDataPoint": {{9, bt, "KeyValue"}, {2, f64, ""}, {3, f64, ""}, {4, f64, ""}, {5, f64, ""},
		{6, bt, ""}, {7, bt, ""}, {8, bt, "Exemplar"}, {10, vt, ""}, {11, f64, ""}, {12, f64, ""}},
	"ExponentialHistogramDataPoint": {{1, bt, "KeyValue"}, {2, f64, ""}, {3, f64, ""}, {4, f64, ""},
		{5, f64, ""}, {6, vt, ""}, {7, f64, ""}, {8, bt, "Buckets"}, {9, bt, "Buckets"}, {10, vt, ""},
		{11, bt, "Exemplar"}, {12, f64, ""}, {13, f64, ""}, {14, f64, ""}},
	"Buckets":          {{1, vt, ""}, {2, bt, ""}},
	"SummaryDataPoint": {{7, bt, "KeyValue"}, {2, f64, ""}, {3, f64, ""}, {4, f64, ""}, {5, f64, ""}, {6, bt, "ValueAtQuantile"}, {8, vt, ""}},
	"ValueAtQuantile":  {{1, f64, ""}, {2, f64, ""}},
	"Exemplar":         {{7, bt, "KeyValue"}, {2, f64, ""}, {3, f64, ""}, {6, f64, ""}, {5, bt, ""}, {4, bt, ""}},
}

func requestMessage(s otlpwire.Signal) string {
	return map[otlpwire.Signal]string{
		otlpwire.SignalLogs:    "ExportLogsServiceRequest",
		otlpwire.SignalTraces:  "ExportTraceServiceRequest",
		otlpwire.SignalMetrics: "ExportMetricsServiceRequest",
	}[s]
}

// checkFieldOrder walks message msg in b and checks, at every level, that
// Ascending fields have non-decreasing numbers (unknown fields included),
// that Descending known fields come in reverse declaration order, and that
// known fields have their wire types.
//
// If seen is not nil, it counts the fields met as "Message.number", and
// unknown fields as "unknown".
func checkFieldOrder(b []byte, msg string, o Order, seen map[string]int) error {
	fields, ok := schema[msg]
	if !ok {
		return fmt.Errorf("no schema for %s", msg)
	}
	rank := func(num protowire.Number) (int, field, bool) {
		for i, f := range fields {
			if f.num == num {
				return i, f, true
			}
		}
		return 0, field{}, false
	}
	prevNum, prevRank := protowire.Number(0), len(fields)
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return fmt.Errorf("%s: bad tag at %d: %v", msg, off, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			return fmt.Errorf("%s: bad field %d at %d: %v", msg, num, off, protowire.ParseError(m))
		}
		value := b[off+n : off+n+m]
		off += n + m
		if o == Ascending && num < prevNum {
			return fmt.Errorf("%s: field %d after field %d", msg, num, prevNum)
		}
		prevNum = num
		r, f, known := rank(num)
		if seen != nil {
			if known {
				seen[fmt.Sprintf("%s.%d", msg, num)]++
			} else {
				seen["unknown"]++
			}
		}
		if !known {
			continue
		}
		if f.typ != typ {
			return fmt.Errorf("%s: field %d has wire type %d, want %d", msg, num, typ, f.typ)
		}
		if o == Descending {
			if r > prevRank {
				return fmt.Errorf("%s: field %d out of pdata order", msg, num)
			}
			prevRank = r
		}
		if f.msg != "" {
			v, k := protowire.ConsumeBytes(value)
			if k < 0 {
				return fmt.Errorf("%s: field %d: %v", msg, num, protowire.ParseError(k))
			}
			if err := checkFieldOrder(v, f.msg, o, seen); err != nil {
				return fmt.Errorf("%s.%d: %w", msg, num, err)
			}
		}
	}
	return nil
}
