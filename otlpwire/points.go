package otlpwire

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// PointValueType says which of a number data point's or exemplar's value
// fields is set.
type PointValueType uint8

// The number value kinds, as in pdata.
const (
	PointValueEmpty PointValueType = iota
	PointValueInt
	PointValueDouble
)

// NumberDataPoint is the encoded body of a NumberDataPoint:
//
//	message NumberDataPoint {
//	  repeated KeyValue attributes = 7; fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3;
//	  oneof value { double as_double = 4; sfixed64 as_int = 6; }
//	  repeated Exemplar exemplars = 5; uint32 flags = 8;
//	}
type NumberDataPoint []byte

// NumberDataPointFields holds every field of a NumberDataPoint.
type NumberDataPointFields struct {
	Attributes      Attributes
	StartTime, Time uint64
	ValueType       PointValueType
	Int             int64
	Double          float64
	Exemplars       List[Exemplar]
	Flags           uint32
}

// Read decodes every field of the point into f in one scan.
func (p NumberDataPoint) Read(f *NumberDataPointFields) error {
	*f = NumberDataPointFields{}
	var attrs, exemplars span
	for i := 0; i < len(p); {
		// Fast path: the usual fields, recognized by their whole tag byte;
		// anything else, and every error, takes the general path below.
		if i+1 < len(p) {
			switch p[i] {
			case 0x3a: // attributes
				if j := skipRun(p, i, 0x3a); j > i {
					attrs.add(i, j)
					i = j
					continue
				}
			case 0x11: // start_time_unix_nano
				if v, ok := le64(p, i); ok {
					f.StartTime, i = v, i+9
					continue
				}
			case 0x19: // time_unix_nano
				if v, ok := le64(p, i); ok {
					f.Time, i = v, i+9
					continue
				}
			case 0x21: // as_double
				if v, ok := le64(p, i); ok {
					f.ValueType, f.Double, f.Int, i = PointValueDouble, math.Float64frombits(v), 0, i+9
					continue
				}
			case 0x31: // as_int
				if v, ok := le64(p, i); ok {
					f.ValueType, f.Int, f.Double, i = PointValueInt, int64(v), 0, i+9
					continue
				}
			}
		}
		t, v, _, j := field(p, i)
		if j < 0 || numberSchema.bad(t) {
			if err := numberSchema.failAt(p, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 7:
			j = skipRun(p, j, 0x3a)
			attrs.add(i, j)
		case 2:
			f.StartTime = v
		case 3:
			f.Time = v
		case 4:
			f.ValueType, f.Double, f.Int = PointValueDouble, math.Float64frombits(v), 0
		case 6:
			f.ValueType, f.Int, f.Double = PointValueInt, int64(v), 0
		case 5:
			j = skipRun(p, j, 0x2a)
			exemplars.add(i, j)
		case 8:
			f.Flags = uint32(v)
		}
		i = j
	}
	f.Attributes.set(p, attrs, 7)
	f.Exemplars.set(p, exemplars, 5, nameExemplars)
	return nil
}

var numberSchema = newSchema(map[protowire.Number]fieldSpec{
	7: bytesf("attributes"), 2: fixed("start_time_unix_nano"), 3: fixed("time_unix_nano"),
	4: fixed("as_double"), 6: fixed("as_int"), 5: bytesf("exemplars"), 8: varintf("flags"),
})

// HistogramDataPoint is the encoded body of a HistogramDataPoint:
//
//	message HistogramDataPoint {
//	  repeated KeyValue attributes = 9; fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3; fixed64 count = 4; optional double sum = 5;
//	  repeated fixed64 bucket_counts = 6; repeated double explicit_bounds = 7;
//	  repeated Exemplar exemplars = 8; uint32 flags = 10;
//	  optional double min = 11; optional double max = 12;
//	}
type HistogramDataPoint []byte

// HistogramDataPointFields holds every field of a HistogramDataPoint.
type HistogramDataPointFields struct {
	Attributes             Attributes
	StartTime, Time        uint64
	Count                  uint64
	Sum, Min, Max          float64
	HasSum, HasMin, HasMax bool
	BucketCounts           Fixed64s
	ExplicitBounds         Float64s
	Exemplars              List[Exemplar]
	Flags                  uint32
}

// Read decodes every field of the point into f in one scan.
func (p HistogramDataPoint) Read(f *HistogramDataPointFields) error {
	*f = HistogramDataPointFields{}
	var attrs, exemplars, buckets, bounds span
	for i := 0; i < len(p); {
		t, v, s, j := field(p, i)
		if j < 0 || histogramSchema.bad(t) {
			if err := histogramSchema.failAt(p, i, t, j); err != nil {
				return err
			}
		}
		n, typ := protowire.Number(t>>3), protowire.Type(t&7)
		switch n {
		case 9:
			j = skipRun(p, j, 0x4a)
			attrs.add(i, j)
		case 2:
			f.StartTime = v
		case 3:
			f.Time = v
		case 4:
			f.Count = v
		case 5:
			f.Sum, f.HasSum = math.Float64frombits(v), true
		case 6:
			if err := checkPacked(typ, s, 8, i, "bucket_counts"); err != nil {
				return err
			}
			buckets.add(i, j)
		case 7:
			if err := checkPacked(typ, s, 8, i, "explicit_bounds"); err != nil {
				return err
			}
			bounds.add(i, j)
		case 8:
			j = skipRun(p, j, 0x42)
			exemplars.add(i, j)
		case 10:
			f.Flags = uint32(v)
		case 11:
			f.Min, f.HasMin = math.Float64frombits(v), true
		case 12:
			f.Max, f.HasMax = math.Float64frombits(v), true
		}
		i = j
	}
	f.Attributes.set(p, attrs, 9)
	f.BucketCounts = Fixed64s{newPacked(p, buckets, 6)}
	f.ExplicitBounds = Float64s{newPacked(p, bounds, 7)}
	f.Exemplars.set(p, exemplars, 8, nameExemplars)
	return nil
}

var histogramSchema = newSchema(map[protowire.Number]fieldSpec{
	9: bytesf("attributes"), 2: fixed("start_time_unix_nano"), 3: fixed("time_unix_nano"), 4: fixed("count"),
	5: fixed("sum"), 6: packedf("bucket_counts", wireFixed64), 7: packedf("explicit_bounds", wireFixed64),
	8: bytesf("exemplars"), 10: varintf("flags"), 11: fixed("min"), 12: fixed("max"),
})

// checkPacked reports a packed fixed-width field whose length is not a
// multiple of the element size.
func checkPacked(typ protowire.Type, s []byte, size, off int, name string) error {
	if typ == wireBytes && len(s)%size != 0 {
		return newErr(ErrPackedLength, off, "for field "+name)
	}
	return nil
}

// ExponentialHistogramDataPoint is the encoded body of an
// ExponentialHistogramDataPoint:
//
//	message ExponentialHistogramDataPoint {
//	  repeated KeyValue attributes = 1; fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3; fixed64 count = 4; optional double sum = 5;
//	  sint32 scale = 6; fixed64 zero_count = 7; Buckets positive = 8;
//	  Buckets negative = 9; uint32 flags = 10; repeated Exemplar exemplars = 11;
//	  optional double min = 12; optional double max = 13; double zero_threshold = 14;
//	  message Buckets { sint32 offset = 1; repeated uint64 bucket_counts = 2; }
//	}
type ExponentialHistogramDataPoint []byte

// ExponentialBuckets holds one side of an exponential histogram.
type ExponentialBuckets struct {
	Offset       int32
	BucketCounts Uint64s
}

// ExponentialHistogramDataPointFields holds every field of an
// ExponentialHistogramDataPoint.
type ExponentialHistogramDataPointFields struct {
	Attributes             Attributes
	StartTime, Time        uint64
	Count                  uint64
	Sum, Min, Max          float64
	HasSum, HasMin, HasMax bool
	Scale                  int32
	ZeroCount              uint64
	ZeroThreshold          float64
	Positive, Negative     ExponentialBuckets
	Exemplars              List[Exemplar]
	Flags                  uint32
}

// Read decodes every field of the point into f in one scan.
func (p ExponentialHistogramDataPoint) Read(f *ExponentialHistogramDataPointFields) error {
	*f = ExponentialHistogramDataPointFields{}
	var attrs, exemplars span
	for i := 0; i < len(p); {
		t, v, s, j := field(p, i)
		if j < 0 || expSchema.bad(t) {
			if err := expSchema.failAt(p, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			j = skipRun(p, j, 0x0a)
			attrs.add(i, j)
		case 2:
			f.StartTime = v
		case 3:
			f.Time = v
		case 4:
			f.Count = v
		case 5:
			f.Sum, f.HasSum = math.Float64frombits(v), true
		case 6:
			f.Scale = int32(protowire.DecodeZigZag(v & math.MaxUint32))
		case 7:
			f.ZeroCount = v
		case 8, 9:
			name, side := "positive", &f.Positive
			if n == 9 {
				name, side = "negative", &f.Negative
			}
			if err := readBuckets(s, side, j-len(s)); err != nil {
				return within(err, name, -1, j-len(s))
			}
		case 10:
			f.Flags = uint32(v)
		case 11:
			j = skipRun(p, j, 0x5a)
			exemplars.add(i, j)
		case 12:
			f.Min, f.HasMin = math.Float64frombits(v), true
		case 13:
			f.Max, f.HasMax = math.Float64frombits(v), true
		case 14:
			f.ZeroThreshold = math.Float64frombits(v)
		}
		i = j
	}
	f.Attributes.set(p, attrs, 1)
	f.Exemplars.set(p, exemplars, 11, nameExemplars)
	return nil
}

var expSchema = newSchema(map[protowire.Number]fieldSpec{
	1: bytesf("attributes"), 2: fixed("start_time_unix_nano"), 3: fixed("time_unix_nano"), 4: fixed("count"),
	5: fixed("sum"), 6: varintf("scale"), 7: fixed("zero_count"), 8: bytesf("positive"), 9: bytesf("negative"),
	10: varintf("flags"), 11: bytesf("exemplars"), 12: fixed("min"), 13: fixed("max"), 14: fixed("zero_threshold"),
})

// readBuckets merges a Buckets message, found at offset base of the data
// point, into side: the offset merges, and the counts of the last
// occurrence that has any replace earlier ones (their offsets made
// relative to the data point).
func readBuckets(b []byte, side *ExponentialBuckets, base int) error {
	var counts span
	for i := 0; i < len(b); {
		t, v, _, j := field(b, i)
		if j < 0 || bucketsSchema.bad(t) {
			if err := bucketsSchema.failAt(b, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			side.Offset = int32(protowire.DecodeZigZag(v & math.MaxUint32))
		case 2:
			counts.add(i, j)
		}
		i = j
	}
	if counts.last != 0 {
		side.BucketCounts = Uint64s{newPacked(b, counts, 2)}
		side.BucketCounts.p.off = clampOff(int(side.BucketCounts.p.off) + base)
	}
	return nil
}

var bucketsSchema = newSchema(map[protowire.Number]fieldSpec{1: varintf("offset"), 2: packedf("bucket_counts", wireVarint)})

// SummaryDataPoint is the encoded body of a SummaryDataPoint:
//
//	message SummaryDataPoint {
//	  repeated KeyValue attributes = 7; fixed64 start_time_unix_nano = 2;
//	  fixed64 time_unix_nano = 3; fixed64 count = 4; double sum = 5;
//	  repeated ValueAtQuantile quantile_values = 6; uint32 flags = 8;
//	  message ValueAtQuantile { double quantile = 1; double value = 2; }
//	}
type SummaryDataPoint []byte

// SummaryDataPointFields holds every field of a SummaryDataPoint.
type SummaryDataPointFields struct {
	Attributes      Attributes
	StartTime, Time uint64
	Count           uint64
	Sum             float64
	QuantileValues  List[ValueAtQuantile]
	Flags           uint32
}

// Read decodes every field of the point into f in one scan.
func (p SummaryDataPoint) Read(f *SummaryDataPointFields) error {
	*f = SummaryDataPointFields{}
	var attrs, quantiles span
	for i := 0; i < len(p); {
		t, v, _, j := field(p, i)
		if j < 0 || summarySchema.bad(t) {
			if err := summarySchema.failAt(p, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 7:
			j = skipRun(p, j, 0x3a)
			attrs.add(i, j)
		case 2:
			f.StartTime = v
		case 3:
			f.Time = v
		case 4:
			f.Count = v
		case 5:
			f.Sum = math.Float64frombits(v)
		case 6:
			j = skipRun(p, j, 0x32)
			quantiles.add(i, j)
		case 8:
			f.Flags = uint32(v)
		}
		i = j
	}
	f.Attributes.set(p, attrs, 7)
	f.QuantileValues.set(p, quantiles, 6, nameQuantileValues)
	return nil
}

var summarySchema = newSchema(map[protowire.Number]fieldSpec{
	7: bytesf("attributes"), 2: fixed("start_time_unix_nano"), 3: fixed("time_unix_nano"), 4: fixed("count"),
	5: fixed("sum"), 6: bytesf("quantile_values"), 8: varintf("flags"),
})

// ValueAtQuantile is the encoded body of a SummaryDataPoint.ValueAtQuantile.
type ValueAtQuantile []byte

// Read returns the quantile and its value.
func (q ValueAtQuantile) Read() (quantile, value float64, err error) {
	for i := 0; i < len(q); {
		t, v, _, j := field(q, i)
		if j < 0 || quantileSchema.bad(t) {
			if err := quantileSchema.failAt(q, i, t, j); err != nil {
				return 0, 0, err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			quantile = math.Float64frombits(v)
		case 2:
			value = math.Float64frombits(v)
		}
		i = j
	}
	return quantile, value, nil
}

var quantileSchema = newSchema(map[protowire.Number]fieldSpec{1: fixed("quantile"), 2: fixed("value")})

// Exemplar is the encoded body of an Exemplar:
//
//	message Exemplar {
//	  repeated KeyValue filtered_attributes = 7; fixed64 time_unix_nano = 2;
//	  oneof value { double as_double = 3; sfixed64 as_int = 6; }
//	  bytes span_id = 4; bytes trace_id = 5;
//	}
type Exemplar []byte

// ExemplarFields holds every field of an Exemplar.
type ExemplarFields struct {
	FilteredAttributes Attributes
	Time               uint64
	ValueType          PointValueType
	Int                int64
	Double             float64
	SpanID, TraceID    []byte
}

// Read decodes every field of the exemplar into f in one scan.
func (e Exemplar) Read(f *ExemplarFields) error {
	*f = ExemplarFields{}
	var attrs span
	for i := 0; i < len(e); {
		t, v, s, j := field(e, i)
		if j < 0 || exemplarSchema.bad(t) {
			if err := exemplarSchema.failAt(e, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 7:
			j = skipRun(e, j, 0x3a)
			attrs.add(i, j)
		case 2:
			f.Time = v
		case 3:
			f.ValueType, f.Double, f.Int = PointValueDouble, math.Float64frombits(v), 0
		case 6:
			f.ValueType, f.Int, f.Double = PointValueInt, int64(v), 0
		case 4:
			if err := checkID(s, 8, i, "span_id"); err != nil {
				return err
			}
			f.SpanID = s
		case 5:
			if err := checkID(s, 16, i, "trace_id"); err != nil {
				return err
			}
			f.TraceID = s
		}
		i = j
	}
	f.FilteredAttributes.set(e, attrs, 7)
	return nil
}

var exemplarSchema = newSchema(map[protowire.Number]fieldSpec{
	7: bytesf("filtered_attributes"), 2: fixed("time_unix_nano"), 3: fixed("as_double"), 6: fixed("as_int"),
	4: bytesf("span_id"), 5: bytesf("trace_id"),
})
