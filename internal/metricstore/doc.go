// Package metricstore stores OTLP metrics in an embedded Prometheus TSDB,
// translating them at the wire level with otlpwire, without pdata.
//
// # Translation
//
// AppendOTLP follows Prometheus' OTLP endpoint (storage/remote/otlptranslator
// in Prometheus v0.316) with its default translation strategy,
// UnderscoreEscapingWithSuffixes, and its default label name options
// (underscore sanitization and multiple underscores preserved):
//
//   - metric names by otlptranslator.MetricNamer with unit and type suffixes;
//     label names by otlptranslator.LabelNamer; attributes whose names
//     collide after sanitization are joined with ';' in key order; empty
//     values drop the label; non-string values are formatted as pdata's
//     AsString formats them;
//   - gauge → gauge; cumulative monotonic sum → counter (_total);
//     cumulative non-monotonic sum → gauge; delta (or unspecified)
//     temporality of a sum or histogram → every point rejected with
//     ReasonTemporality, as Prometheus does without its experimental native
//     delta support;
//   - cumulative histogram → classic _bucket{le}, _sum (when set) and _count,
//     le="+Inf" taken from count; exponential histogram → integer native
//     histogram (scales above 8 merged down; below -4 rejected);
//     summary → {quantile} series, _sum and _count;
//   - service.namespace/service.name → job ("ns/name" or name),
//     service.instance.id → instance; the other resource attributes make a
//     target_info gauge of value 1 at the resource's points' timestamps,
//     one sample per 2.5 minutes from the earliest to the latest (limited to
//     the last 24 hours: Prometheus has no limit);
//     WithPromotedResourceAttributes copies attributes onto every series;
//   - the scope becomes otel_scope_name, otel_scope_version,
//     otel_scope_schema_url and otel_scope_<attribute> (WithScopeLabels;
//     on by default here, off by default in Prometheus);
//   - NaN and ±Inf are stored as they are; a point with the
//     no-recorded-value flag becomes a staleness marker (value.StaleNaN) in
//     every one of its series;
//   - start timestamps become zero samples with
//     WithStartTimestampZeroSamples (tsdb's EnableSTAsZeroSample), and are
//     ignored otherwise;
//   - exemplars are stored with WithMaxExemplars (none by default, as in
//     Prometheus), labelled as Prometheus' translator labels them;
//   - metric metadata (type, unit, help) is kept in memory per metric
//     family, see Store.Metadata.
//
// Unlike Prometheus' OTLP receiver, which refuses the whole request at the
// first error (rolling back what it appended), a problem rejects only the
// data point it is in; Result counts accepted and rejected points and the
// reasons (out of order, duplicate, too old, label limit, invalid UTF-8,
// histogram buckets not matching bounds, ...). Two of those checks are
// stricter than Prometheus, which stores such points: invalid UTF-8 in
// names or values, and bucket counts that do not match the bounds (the
// OTLP data model forbids both). A
// malformed request (what otlpwire's Validate refuses, checked within the
// same walk) is an error and stores nothing.
//
// # Series cache
//
// The label sets of a data point's series and their TSDB references are
// cached under the exact wire bytes they derive from, so steady-state
// ingest of known series appends by reference without building labels.
// See seriesCache.
package metricstore
