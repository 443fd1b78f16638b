// Package otlpwire counts, iterates, validates, splits and hashes OTLP
// export requests directly on their protobuf encoding, without building
// generated structs or pdata object graphs.
//
// # Types
//
// Every OTLP message has a byte-slice type holding its encoded body:
// LogsRequest, TracesRequest and MetricsRequest for the three
// Export*ServiceRequest messages, ExportResponse for their answers;
// ResourceLogs, ScopeLogs, LogRecord; ResourceSpans, ScopeSpans, Span,
// SpanEvent, SpanLink; ResourceMetrics, ScopeMetrics, Metric,
// NumberDataPoint, HistogramDataPoint, ExponentialHistogramDataPoint,
// SummaryDataPoint, Exemplar, ValueAtQuantile; Resource, Scope, AnyValue.
// Converting a []byte to one of them costs nothing. Above each type is the
// .proto message it reads, with field numbers.
//
// # Ownership
//
// Nothing is copied. Every slice, Value, Attributes or List returned by this
// package aliases the bytes it was read from, with its capacity capped so
// that appending to it cannot overwrite the input. The caller owns the
// input and must keep it unchanged while it uses anything read from it;
// copy what must outlive it.
//
// # Reading
//
// Containers are walked with range-over-func iterators that yield the
// element and an error; a malformed element ends the iteration with a
// non-nil error as the last pair:
//
//	for rl, err := range otlpwire.LogsRequest(body).ResourceLogs() {
//		if err != nil { return err }
//		for sl, err := range rl.ScopeLogs() { ... }
//	}
//
// A consumer that reads every resource, scope and record can Walk the
// request instead (LogsRequest.Walk, TracesRequest.Walk,
// MetricsRequest.Walk): a visitor holds one callback per level, each
// container comes before what it holds (and a resource container again
// after it, for a consumer that acts on a resource as a whole), and a
// callback returns Skip to pass over the rest of a container.
//
// Records are read in one scan each by Read methods (LogRecord.Read,
// Span.Read, NumberDataPoint.Read, ...) that fill a caller-owned Fields
// struct with every scalar field and locate the repeated fields, so that a
// deep walk reads each field once (attributes are stepped over to locate
// them, then decoded when iterated) instead of rescanning the record for
// every accessor. Attribute values are typed Values; Attributes.Get finds a
// key without allocating. Fields are accepted in any order: the
// OpenTelemetry SDKs write ascending field numbers, pdata (mostly)
// descending. Unknown fields are skipped. A singular field that occurs more
// than once follows pdata: scalars and oneofs, last one wins; the status of
// a span and the value of a key-value pair merge. Two cases follow the
// protobuf specification instead: a resource or scope message given twice
// in one container is read as the last one (pdata merges them), and a
// packed repeated scalar split over several fields is concatenated (pdata
// keeps the last run). Groups, field numbers above 2^29-1 and varints that
// overflow 64 bits are errors, as in protowire (pdata skips or truncates
// them).
//
// No method allocates on success, in this package or in the caller's:
// iterators cost no heap allocation when ranged over directly (for x, err
// := range r.ResourceLogs()), and neither does a closure passed to Each
// that does not escape, nor do the callbacks of a visitor built where Walk
// is called. To keep 0 in your own code, range over the
// iterator where you get it: storing an iter.Seq2 in a variable, a field
// or an interface, or passing it to a function that is not inlined, can make
// the compiler move the loop's state to the heap (2-4 allocations a loop).
// TestZeroAllocs and TestZeroAllocsOutside (package otlpwire_test) and the
// benchmarks, all in an external package, measure what a caller pays.
//
// # Counting, splitting and hashing
//
// LogRecordCount, SpanCount, DataPointCount and MetricCount exist at the
// request, resource and scope level (DataPointCount also per Metric). They
// read only the framing above the records they count: a request that
// counts cleanly may still fail Validate.
//
// ResourceLogs.AppendTo (and the Spans and Metrics versions) write one
// resource as a standalone export request; WriteTo does the same to an
// io.Writer. A Splitter cuts a request into chunks of bounded record count
// and byte size. Resource.Hash and Attributes.Hash give a stable,
// order-independent 64-bit identity hash, documented in hash.go.
// MigrateDeprecated moves the scope containers that exporters built on
// OTLP 0.15–0.19 may send in the deprecated instrumentation_library_*
// field (1000), which every reader here skips, to scope_* (2), as the
// Collector's receivers do; call it on requests from such exporters.
// NeedsMigration says, without allocating, whether a copy may be needed.
//
// # Signals and routing
//
// Signal is the one signal enum of the code base: it names each signal's
// OTLP/HTTP path, gRPC service, Export method and request message, and
// counts and validates its requests. SignalLogs and SignalTraces are the
// codes wirehouse's spool stores on disk, so they never change.
//
// A Router cuts a request into one request per shard: resource
// containers whole, by Resource.Hash or by the hash of service.name, or
// span by span by the hash of the trace id, each span taking its resource
// and scope fields (copied byte for byte) with it. It makes two passes:
// the first finds each span's shard and every shard's container sizes,
// the second writes with the lengths known, appending to the caller's
// per-shard buffers (export requests concatenate, so one buffer can gather
// the parts of several requests). It allocates nothing once its scratch
// has grown. The forwarder shards with it.
//
// # Framing and views
//
// A field (tag and value) is read whole, with a fast path for one- and
// two-byte tags and lengths; the hot record readers first try the usual
// fields by their whole tag byte, which fixes field number and wire type
// at once. Repeated fields of a record (attributes, events, exemplars,
// packed buckets) are located as a byte range and decoded only when
// iterated. The views a walk passes by value (Value, Attributes, List,
// the packed scalars) are at most four machine words, so the compiler
// keeps them in registers (offsets are int32, a list's field name a
// one-byte index); a larger view is copied through memory at each call,
// which cost a validating metrics walk 8 % (measured 2026-11-26;
// TestViewsFitRegisters holds the size).
//
// # Errors
//
// Errors are *Error values carrying the OTLP path of the failing element
// (e.g. "resource_logs[2].scope_logs[0].log_records[7]"), the byte offset
// and one of the sentinel errors (ErrTruncated, ErrWireType, ErrOverflow,
// ErrGroup, ...) for errors.Is. Paths and offsets are relative to the value
// the method was called on. Validate walks a whole request and reports the
// first structural error. A consumer that walks the request itself can
// instead validate as it goes: the Read methods check a record's own
// fields, and Attributes, Resource, Scope and Exemplar have a Validate of
// their own for what such a walk may skip. The walk must still reach every
// record, and the packed varint fields Read does not walk (exponential
// histogram buckets); test it against Validate, as the metric store's fuzz
// target does. No length read from the input is used before it
// is checked against the bytes that remain, and nothing is allocated in
// proportion to it.
//
// # Tests
//
// Every field, count, split, route and migration is compared with pdata
// (v1.70; used only in tests and benchmarks) on thousands of generated
// requests in both field orders (internal/synth), and the fuzz targets
// (FuzzCount, FuzzValidate, FuzzIterate, FuzzSplit, FuzzHash, FuzzRoute,
// FuzzMigrate, FuzzValidatingWalk) do the same on mutated input. The
// messages are those of pdata v1.70, including the profiles dictionary
// references AnyValue.string_value_strindex (read as an empty value, as
// pdata's Value shows it) and KeyValue.key_strindex (wire type checked,
// value unused). The deep walks the benchmarks and allocation tests use
// live in internal/wirewalk, outside this package, so that what they
// measure is what a caller pays.
package otlpwire
