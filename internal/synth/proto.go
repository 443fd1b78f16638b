package synth

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers of the OTLP messages (opentelemetry-proto v1.x), grouped by
// message. Within a group the constants are listed in pdata's declaration
// order, which is the order the writers in this package must use: the
// encoder reverses it for Descending and sorts it for Ascending.

// opentelemetry.proto.collector.{logs,trace,metrics}.v1.Export*ServiceRequest
const (
	requestResources protowire.Number = 1 // resource_logs, resource_spans, resource_metrics
)

// opentelemetry.proto.{logs,trace,metrics}.v1.Resource{Logs,Spans,Metrics}
// and Scope{Logs,Spans,Metrics}: the two container levels share numbers.
const (
	resourceContainerResource  protowire.Number = 1 // resource
	resourceContainerScopes    protowire.Number = 2 // scope_logs, scope_spans, scope_metrics
	resourceContainerSchemaURL protowire.Number = 3 // schema_url

	scopeContainerScope     protowire.Number = 1 // scope
	scopeContainerRecords   protowire.Number = 2 // log_records, spans, metrics
	scopeContainerSchemaURL protowire.Number = 3 // schema_url
)

// opentelemetry.proto.resource.v1.Resource
const (
	resourceAttributes   protowire.Number = 1
	resourceDroppedAttrs protowire.Number = 2
)

// opentelemetry.proto.common.v1.InstrumentationScope
const (
	scopeName         protowire.Number = 1
	scopeVersion      protowire.Number = 2
	scopeAttributes   protowire.Number = 3
	scopeDroppedAttrs protowire.Number = 4
)

// opentelemetry.proto.common.v1.KeyValue, AnyValue, ArrayValue, KeyValueList
const (
	keyValueKey   protowire.Number = 1
	keyValueValue protowire.Number = 2

	anyValueString protowire.Number = 1
	anyValueBool   protowire.Number = 2
	anyValueInt    protowire.Number = 3
	anyValueDouble protowire.Number = 4
	anyValueArray  protowire.Number = 5
	anyValueKvlist protowire.Number = 6
	anyValueBytes  protowire.Number = 7

	arrayValueValues   protowire.Number = 1
	keyValueListValues protowire.Number = 1
)

// opentelemetry.proto.logs.v1.LogRecord
const (
	logTime           protowire.Number = 1  // fixed64 time_unix_nano
	logObservedTime   protowire.Number = 11 // fixed64 observed_time_unix_nano
	logSeverityNumber protowire.Number = 2  // SeverityNumber
	logSeverityText   protowire.Number = 3  // string
	logBody           protowire.Number = 5  // AnyValue
	logAttributes     protowire.Number = 6  // repeated KeyValue
	logDroppedAttrs   protowire.Number = 7  // uint32
	logFlags          protowire.Number = 8  // fixed32
	logTraceID        protowire.Number = 9  // bytes
	logSpanID         protowire.Number = 10 // bytes
	logEventName      protowire.Number = 12 // string
)

// opentelemetry.proto.trace.v1.Span, Span.Event, Span.Link, Status
const (
	spanTraceID       protowire.Number = 1  // bytes
	spanSpanID        protowire.Number = 2  // bytes
	spanTraceState    protowire.Number = 3  // string
	spanParentSpanID  protowire.Number = 4  // bytes
	spanFlags         protowire.Number = 16 // fixed32
	spanName          protowire.Number = 5  // string
	spanKind          protowire.Number = 6  // SpanKind
	spanStartTime     protowire.Number = 7  // fixed64
	spanEndTime       protowire.Number = 8  // fixed64
	spanAttributes    protowire.Number = 9  // repeated KeyValue
	spanDroppedAttrs  protowire.Number = 10 // uint32
	spanEvents        protowire.Number = 11 // repeated Event
	spanDroppedEvents protowire.Number = 12 // uint32
	spanLinks         protowire.Number = 13 // repeated Link
	spanDroppedLinks  protowire.Number = 14 // uint32
	spanStatus        protowire.Number = 15 // Status

	eventTime         protowire.Number = 1 // fixed64
	eventName         protowire.Number = 2 // string
	eventAttributes   protowire.Number = 3 // repeated KeyValue
	eventDroppedAttrs protowire.Number = 4 // uint32

	linkTraceID      protowire.Number = 1 // bytes
	linkSpanID       protowire.Number = 2 // bytes
	linkTraceState   protowire.Number = 3 // string
	linkAttributes   protowire.Number = 4 // repeated KeyValue
	linkDroppedAttrs protowire.Number = 5 // uint32
	linkFlags        protowire.Number = 6 // fixed32

	statusMessage protowire.Number = 2 // string
	statusCode    protowire.Number = 3 // StatusCode
)

// opentelemetry.proto.metrics.v1.Metric and its data messages
const (
	metricName                 protowire.Number = 1
	metricDescription          protowire.Number = 2
	metricUnit                 protowire.Number = 3
	metricGauge                protowire.Number = 5
	metricSum                  protowire.Number = 7
	metricHistogram            protowire.Number = 9
	metricExponentialHistogram protowire.Number = 10
	metricSummary              protowire.Number = 11
	metricMetadata             protowire.Number = 12

	// Gauge, Sum, Histogram, ExponentialHistogram, Summary
	dataPoints      protowire.Number = 1 // repeated *DataPoint
	dataTemporality protowire.Number = 2 // AggregationTemporality (not Gauge, Summary)
	dataIsMonotonic protowire.Number = 3 // bool (Sum only)
)

// opentelemetry.proto.metrics.v1.NumberDataPoint
const (
	numberAttributes protowire.Number = 7
	numberStartTime  protowire.Number = 2 // fixed64
	numberTime       protowire.Number = 3 // fixed64
	numberAsDouble   protowire.Number = 4 // oneof value: double
	numberAsInt      protowire.Number = 6 // oneof value: sfixed64
	numberExemplars  protowire.Number = 5
	numberFlags      protowire.Number = 8 // uint32
)

// opentelemetry.proto.metrics.v1.HistogramDataPoint
const (
	histAttributes     protowire.Number = 9
	histStartTime      protowire.Number = 2  // fixed64
	histTime           protowire.Number = 3  // fixed64
	histCount          protowire.Number = 4  // fixed64
	histSum            protowire.Number = 5  // optional double
	histBucketCounts   protowire.Number = 6  // packed fixed64
	histExplicitBounds protowire.Number = 7  // packed double
	histExemplars      protowire.Number = 8  // repeated Exemplar
	histFlags          protowire.Number = 10 // uint32
	histMin            protowire.Number = 11 // optional double
	histMax            protowire.Number = 12 // optional double
)

// opentelemetry.proto.metrics.v1.ExponentialHistogramDataPoint and Buckets
const (
	expAttributes    protowire.Number = 1
	expStartTime     protowire.Number = 2  // fixed64
	expTime          protowire.Number = 3  // fixed64
	expCount         protowire.Number = 4  // fixed64
	expSum           protowire.Number = 5  // optional double
	expScale         protowire.Number = 6  // sint32
	expZeroCount     protowire.Number = 7  // fixed64
	expPositive      protowire.Number = 8  // Buckets
	expNegative      protowire.Number = 9  // Buckets
	expFlags         protowire.Number = 10 // uint32
	expExemplars     protowire.Number = 11 // repeated Exemplar
	expMin           protowire.Number = 12 // optional double
	expMax           protowire.Number = 13 // optional double
	expZeroThreshold protowire.Number = 14 // double

	bucketsOffset       protowire.Number = 1 // sint32
	bucketsBucketCounts protowire.Number = 2 // packed uint64
)

// opentelemetry.proto.metrics.v1.SummaryDataPoint and ValueAtQuantile
const (
	summaryAttributes     protowire.Number = 7
	summaryStartTime      protowire.Number = 2 // fixed64
	summaryTime           protowire.Number = 3 // fixed64
	summaryCount          protowire.Number = 4 // fixed64
	summarySum            protowire.Number = 5 // double
	summaryQuantileValues protowire.Number = 6 // repeated ValueAtQuantile
	summaryFlags          protowire.Number = 8 // uint32

	quantileQuantile protowire.Number = 1 // double
	quantileValue    protowire.Number = 2 // double
)

// opentelemetry.proto.metrics.v1.Exemplar
const (
	exemplarFilteredAttributes protowire.Number = 7
	exemplarTime               protowire.Number = 2 // fixed64
	exemplarAsDouble           protowire.Number = 3 // oneof value: double
	exemplarAsInt              protowire.Number = 6 // oneof value: sfixed64
	exemplarTraceID            protowire.Number = 5 // bytes
	exemplarSpanID             protowire.Number = 4 // bytes
)

// Enum values used by the generators.
const (
	temporalityCumulative = 2 // AGGREGATION_TEMPORALITY_CUMULATIVE

	statusOK    = 1 // STATUS_CODE_OK
	statusError = 2 // STATUS_CODE_ERROR

	spanKindInternal = 1
	spanKindServer   = 2
	spanKindClient   = 3
	spanKindProducer = 4
	spanKindConsumer = 5
)
