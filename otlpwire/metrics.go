package otlpwire

import (
	"io"
	"iter"

	"google.golang.org/protobuf/encoding/protowire"
)

// MetricsRequest is an encoded
// opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest:
//
//	message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
//
// Every value read from it aliases it.
type MetricsRequest []byte

// ResourceMetrics iterates the resource containers. A malformed container
// header ends the iteration with a non-nil error as the last pair.
func (r MetricsRequest) ResourceMetrics() iter.Seq2[ResourceMetrics, error] {
	return func(yield func(ResourceMetrics, error) bool) {
		seq(r, fieldResources, "resource_metrics", func(b []byte, err error) bool { return yield(ResourceMetrics(b), err) })
	}
}

// ResourceCount counts the resource containers.
func (r MetricsRequest) ResourceCount() (int, error) {
	return count(r, fieldResources, "resource_metrics")
}

// MetricCount counts the metrics of the whole request.
func (r MetricsRequest) MetricCount() (int, error) {
	return countIn(r, fieldResources, metricLevels, nil)
}

// DataPointCount counts the data points of every kind in the whole request.
// It reads the framing down to the data containers, not the points.
func (r MetricsRequest) DataPointCount() (int, error) {
	return countIn(r, fieldResources, metricLevels, metricDataPoints)
}

var metricLevels = []string{"resource_metrics", "scope_metrics", "metrics"}

// metricDataPoints counts one metric's data points, for countIn.
func metricDataPoints(m []byte) (int, error) { return Metric(m).DataPointCount() }

// ResourceMetrics is the encoded body of a ResourceMetrics:
//
//	message ResourceMetrics {
//	  Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; string schema_url = 3;
//	}
type ResourceMetrics []byte

// Resource returns the resource (the last one, if repeated: the earlier ones
// are validated, as Validate would); empty if absent.
func (rm ResourceMetrics) Resource() (Resource, error) {
	return header(rm, "resource", validateResource)
}

// SchemaURL returns schema_url.
func (rm ResourceMetrics) SchemaURL() ([]byte, error) { return schemaURL(rm) }

// ScopeMetrics iterates the scope containers.
func (rm ResourceMetrics) ScopeMetrics() iter.Seq2[ScopeMetrics, error] {
	return func(yield func(ScopeMetrics, error) bool) {
		seq(rm, fieldChildren, "scope_metrics", func(b []byte, err error) bool { return yield(ScopeMetrics(b), err) })
	}
}

// MetricCount counts the metrics of all scopes.
func (rm ResourceMetrics) MetricCount() (int, error) {
	return countIn(rm, fieldChildren, metricLevels[1:], nil)
}

// DataPointCount counts the data points of all scopes.
func (rm ResourceMetrics) DataPointCount() (int, error) {
	return countIn(rm, fieldChildren, metricLevels[1:], metricDataPoints)
}

// AppendTo appends to dst an ExportMetricsServiceRequest holding only this
// resource and returns the extended slice. With a dst of enough capacity it
// does not allocate.
func (rm ResourceMetrics) AppendTo(dst []byte) []byte { return appendRequest(dst, rm) }

// WriteTo writes the request AppendTo would append. It does not allocate.
func (rm ResourceMetrics) WriteTo(w io.Writer) (int64, error) { return writeRequest(w, rm) }

// ScopeMetrics is the encoded body of a ScopeMetrics:
//
//	message ScopeMetrics {
//	  InstrumentationScope scope = 1; repeated Metric metrics = 2; string schema_url = 3;
//	}
type ScopeMetrics []byte

// Scope returns the instrumentation scope (the last one, if repeated: the
// earlier ones are validated, as Validate would); empty if absent.
func (sm ScopeMetrics) Scope() (Scope, error) { return header(sm, "scope", validateScope) }

// SchemaURL returns schema_url.
func (sm ScopeMetrics) SchemaURL() ([]byte, error) { return schemaURL(sm) }

// Metrics iterates the metrics.
func (sm ScopeMetrics) Metrics() iter.Seq2[Metric, error] {
	return func(yield func(Metric, error) bool) {
		seq(sm, fieldChildren, "metrics", func(b []byte, err error) bool { return yield(Metric(b), err) })
	}
}

// MetricCount counts the metrics.
func (sm ScopeMetrics) MetricCount() (int, error) { return count(sm, fieldChildren, "metrics") }

// DataPointCount counts the data points of all metrics.
func (sm ScopeMetrics) DataPointCount() (int, error) {
	return countIn(sm, fieldChildren, metricLevels[2:], metricDataPoints)
}

// MetricType is the kind of data a metric carries.
type MetricType uint8

// The metric kinds, numbered as in pdata.
const (
	MetricTypeEmpty MetricType = iota
	MetricTypeGauge
	MetricTypeSum
	MetricTypeHistogram
	MetricTypeExponentialHistogram
	MetricTypeSummary
)

var metricTypeNames = [...]string{"Empty", "Gauge", "Sum", "Histogram", "ExponentialHistogram", "Summary"}

// String returns the pdata name of the kind.
func (t MetricType) String() string {
	if int(t) < len(metricTypeNames) {
		return metricTypeNames[t]
	}
	return "Unknown"
}

// metricDataFields maps a Metric field number to the kind it holds.
var metricDataFields = [...]MetricType{5: MetricTypeGauge, 7: MetricTypeSum, 9: MetricTypeHistogram, 10: MetricTypeExponentialHistogram, 11: MetricTypeSummary}

var metricDataNames = [...]string{MetricTypeGauge: "gauge", MetricTypeSum: "sum", MetricTypeHistogram: "histogram", MetricTypeExponentialHistogram: "exponential_histogram", MetricTypeSummary: "summary"}

// Metric is the encoded body of an opentelemetry.proto.metrics.v1.Metric:
//
//	message Metric {
//	  string name = 1; string description = 2; string unit = 3;
//	  oneof data { Gauge gauge = 5; Sum sum = 7; Histogram histogram = 9;
//	    ExponentialHistogram exponential_histogram = 10; Summary summary = 11; }
//	  repeated KeyValue metadata = 12;
//	}
//	message Gauge { repeated NumberDataPoint data_points = 1; }
//	message Sum { repeated NumberDataPoint data_points = 1;
//	  AggregationTemporality aggregation_temporality = 2; bool is_monotonic = 3; }
//	message Histogram { repeated HistogramDataPoint data_points = 1;
//	  AggregationTemporality aggregation_temporality = 2; }
//	message ExponentialHistogram { repeated ExponentialHistogramDataPoint data_points = 1;
//	  AggregationTemporality aggregation_temporality = 2; }
//	message Summary { repeated SummaryDataPoint data_points = 1; }
//
// When the data oneof occurs more than once, the last occurrence wins, as
// in protobuf and pdata.
type Metric []byte

// MetricFields holds every field of a Metric and of its data container,
// read in one pass by Metric.Read. Byte slices alias the request.
type MetricFields struct {
	Name, Description, Unit []byte
	Type                    MetricType
	AggregationTemporality  int32 // Sum, Histogram, ExponentialHistogram
	IsMonotonic             bool  // Sum
	Metadata                Attributes
	points                  packed // data_points (num 1) of the container
}

// NumberDataPoints returns the points of a Gauge or Sum; empty otherwise.
func (m *MetricFields) NumberDataPoints() List[NumberDataPoint] {
	return pointList[NumberDataPoint](m, MetricTypeGauge, MetricTypeSum)
}

// HistogramDataPoints returns the points of a Histogram; empty otherwise.
func (m *MetricFields) HistogramDataPoints() List[HistogramDataPoint] {
	return pointList[HistogramDataPoint](m, MetricTypeHistogram, MetricTypeHistogram)
}

// ExponentialHistogramDataPoints returns the points of an
// ExponentialHistogram; empty otherwise.
func (m *MetricFields) ExponentialHistogramDataPoints() List[ExponentialHistogramDataPoint] {
	return pointList[ExponentialHistogramDataPoint](m, MetricTypeExponentialHistogram, MetricTypeExponentialHistogram)
}

// SummaryDataPoints returns the points of a Summary; empty otherwise.
func (m *MetricFields) SummaryDataPoints() List[SummaryDataPoint] {
	return pointList[SummaryDataPoint](m, MetricTypeSummary, MetricTypeSummary)
}

func pointList[T ~[]byte](m *MetricFields, a, b MetricType) List[T] {
	if (m.Type != a && m.Type != b) || len(m.points.b) == 0 {
		return List[T]{}
	}
	return List[T]{b: m.points.b, off: m.points.off, num: 1, name: nameDataPoints}
}

// Read decodes the metric and its data container into f in one scan of
// each. Data points are located, not decoded.
func (m Metric) Read(f *MetricFields) error {
	*f = MetricFields{}
	var meta span
	var data []byte
	dataOff := 0
	for i := 0; i < len(m); {
		t, _, s, j := field(m, i)
		if j < 0 || metricSchema.bad(t) {
			if err := metricSchema.failAt(m, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			f.Name = s
		case 2:
			f.Description = s
		case 3:
			f.Unit = s
		case 5, 7, 9, 10, 11:
			f.Type, data, dataOff = metricDataFields[n], s, j-len(s)
		case 12:
			j = skipRun(m, j, 0x62)
			meta.add(i, j)
		}
		i = j
	}
	f.Metadata.set(m, meta, 12)
	if f.Type == MetricTypeEmpty {
		return nil
	}
	if err := readMetricData(data, f); err != nil {
		return within(err, metricDataNames[f.Type], -1, dataOff)
	}
	f.points.off = clampOff(int(f.points.off) + dataOff)
	return nil
}

var metricSchema = newSchema(map[protowire.Number]fieldSpec{
	1: bytesf("name"), 2: bytesf("description"), 3: bytesf("unit"), 5: bytesf("gauge"), 7: bytesf("sum"),
	9: bytesf("histogram"), 10: bytesf("exponential_histogram"), 11: bytesf("summary"), 12: bytesf("metadata"),
})

// readMetricData reads a Gauge, Sum, Histogram, ExponentialHistogram or
// Summary body.
func readMetricData(b []byte, f *MetricFields) error {
	sc := metricDataSchemas[f.Type]
	var pts span
	for i := 0; i < len(b); {
		t, v, _, j := field(b, i)
		if j < 0 || sc.bad(t) {
			if err := sc.failAt(b, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch {
		case n == 1:
			pts.add(i, j)
		case n == 2 && len(sc.fields) > 2:
			f.AggregationTemporality = int32(v)
		case n == 3 && len(sc.fields) > 3:
			f.IsMonotonic = v != 0
		}
		i = j
	}
	f.points = newPacked(b, pts, 1)
	return nil
}

var metricDataSchemas = [...]*schema{
	MetricTypeGauge:                newSchema(map[protowire.Number]fieldSpec{1: bytesf("data_points")}),
	MetricTypeSum:                  newSchema(map[protowire.Number]fieldSpec{1: bytesf("data_points"), 2: varintf("aggregation_temporality"), 3: varintf("is_monotonic")}),
	MetricTypeHistogram:            newSchema(map[protowire.Number]fieldSpec{1: bytesf("data_points"), 2: varintf("aggregation_temporality")}),
	MetricTypeExponentialHistogram: newSchema(map[protowire.Number]fieldSpec{1: bytesf("data_points"), 2: varintf("aggregation_temporality")}),
	MetricTypeSummary:              newSchema(map[protowire.Number]fieldSpec{1: bytesf("data_points")}),
}

// DataPointCount counts the metric's data points. It reads the metric and
// its data container, not the points.
func (m Metric) DataPointCount() (int, error) {
	var data []byte
	kind := MetricTypeEmpty
	dataOff := 0
	for i := 0; i < len(m); {
		n, typ, _, s, j, err := next(m, i)
		if isDataField(n) {
			if err != nil || typ != wireBytes {
				return 0, metricSchema.fail(n, typ, i, err)
			}
			kind, data, dataOff = metricDataFields[n], s, j-len(s)
		} else if err != nil {
			return 0, err
		}
		i = j
	}
	if kind == MetricTypeEmpty {
		return 0, nil
	}
	c, err := count(data, 1, "data_points")
	if err != nil {
		return 0, within(err, metricDataNames[kind], -1, dataOff)
	}
	return c, nil
}
