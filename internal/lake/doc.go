// Package lake turns OTLP logs and spans into Parquet files in a
// Hive-partitioned lake that wirehouse's read APIs and any Parquet engine
// (DuckDB, pyarrow, Trino, Spark) read. The column layout of each schema
// version is in docs/format/lake-parquet.md; this comment says how the
// lake is built and why.
//
// # Storage seam
//
// The lake reaches its files only through a bucket.Bucket
// (internal/bucket): bucket.NewLocal of a directory by default,
// WriterConfig.Bucket, CompactBucket and PruneBucket for another (an S3
// bucket). partition.go builds and parses every name in it, and nowhere
// else does:
// <root>/<signal>/tenant=<t>/date=YYYY-MM-DD/hour=HH/<id>.parquet, signal
// logs or traces, the hour in UTC of the record's time (a log's timestamp,
// else its observed_timestamp; a span's start_time; a time before 1970 or
// after 2100 falls back to when the batch began). Names starting with "."
// are the lake's own bookkeeping; objects under _wirehouse/ are
// lakeload's. scratch.go holds the local scratch files each Parquet file
// is encoded into before it is uploaded (on the local bucket, renamed into
// place with one rename and a directory fsync).
//
// # Rows
//
// LogRows.AppendLogs and SpanRows.AppendTraces decode a request in one
// pass with otlpwire into columns held as slices and byte arenas. Resource
// and scope values are copied once per resource or scope and referenced
// from each of their rows; columns survive Reset with their capacity, so
// in the steady state rows cost no allocation. A malformed request rolls
// the batch back to where it was. All-zero trace and span ids are absent,
// as OTLP and pdata define them; the first occurrence of a repeated
// attribute key wins, as with pdata's Map.Get.
//
// # Files
//
// Writer buffers rows per signal and tenant and writes a batch when its
// rows would make a file of about WriterConfig.FileSize (estimated from
// the compression of earlier files), when its requests reach MaxBuffer
// protobuf bytes (a process holds about 2.5 to 3 times that per full
// batch), when its first row is older than MaxAge, and on Flush and Close:
// rows sorted by (partition hour, service, time; trace id before time for
// version-2 spans), one file per hour, each encoded into a hidden scratch
// file, fsynced and uploaded. A crash leaves at most hidden .tmp files; a
// failed write keeps the rows buffered for the next flush. Append takes
// several requests all or none (*AppendError names the bad one). With
// ManualFlush the caller (lakeload) names each file after the spool
// records it holds, so a replay rewrites the same names.
//
// Every file is zstd-compressed (fastest level, encoders with a 128 KiB
// window: zstd.go), with 64 KiB pages, row groups of up to 131,072 rows,
// dictionary encoding for low-cardinality columns, column chunk statistics
// and page indexes, a bloom filter on trace_id, and sorting_columns naming
// the sort. A logs file of version 2 also holds, in its key-value
// metadata, its records counted by service, severity and minute
// (counts.go, wirehouse.counts), and, in a region spliced in just before
// its footer, a bloom filter of its bodies' 4-byte substrings per block
// of up to 1024 rows of one service (grams.go, gramsregion.go,
// wirehouse.grams.region), laid out so that a needle reads one run of
// blocks a gram, not the file's whole index: so that volume queries and
// needles read little. Compaction adds the inputs' up (reading the
// footer index, wirehouse.grams, of files of earlier releases). They
// cost ~54 and ~250-305 ns a log to make (BenchmarkLogIndexes, against
// ~7 us a log to encode the file) and ~8 bytes a log. A spans file holds,
// in a region before its footer too, the fingerprints of its trace ids
// (traceids.go, wirehouse.traceids.region: 4 bytes a trace), so a lookup
// by trace id opens only the files that may hold it; compaction makes a
// merge's from its rows. WriterConfig.NoIndexes leaves them all out.
//
// # Schema version 2
//
// Version 2 (schema_v2.go; the default for traces files, metadata
// wirehouse.schema_version = 2) is written for the readers people use: every file of a signal has
// the same columns, so DuckDB and pyarrow read a whole lake as one table
// without union_by_name (TestDuckDBReadsLakeV2 also checks the types each
// shows). Its choices:
//
//   - Times are TIMESTAMP(NANOS, UTC), span kind and status their OTLP
//     enum names, ids lowercase hex (32 and 16 characters) so they
//     compare with what tracing UIs show, service_name always set
//     (unknown_service when the resource has none, as the SDKs say).
//   - attributes is a MAP<string, string> of every record attribute,
//     values as text, and attribute_types its type signature, one
//     character per entry (n empty, s string, b bool, i int, d double,
//     a array, m key-value list, y bytes), so that our readers have
//     every value back with its OTLP type; rows of one shape share a
//     signature, which the dictionary stores once. DuckDB:
//     attributes['http.route'].
//   - resource_attributes and scope_attributes are JSON objects,
//     dictionary encoded (one stored value per resource): as a map
//     they would be written again on every row (a map of 15 resource
//     attributes was ~25 % of the CPU of a traces file in
//     BenchmarkSpansToParquet, 2026-11-26). A JSON double always has a
//     fraction or an exponent, so it is told from an int. DuckDB reads
//     them as JSON (resource_attributes->>'$."k8s.pod.name"'), Spark
//     with from_json(resource_attributes, 'map<string,string>'), Trino
//     with CAST(json_parse(resource_attributes) AS MAP(VARCHAR,
//     VARCHAR)).
//   - Eleven hot keys get a typed column each besides their place in
//     the map (resource_service_version, resource_k8s_pod_name,
//     attr_http_route, attr_http_response_status_code, ...; hotKeys):
//     the semantic-convention keys searches filter and group by most,
//     with statistics and page indexes that prune. Each costs ~3 % of
//     the CPU of writing a traces file (BenchmarkSpansToParquet,
//     2026-11-26), hence few.
//   - Events and links are lists of structs with their own attribute
//     maps.
//   - The information is that of the Collector's ClickHouse exporter
//     (otel_traces, otel_logs) column for column, with lists of
//     structs where it has Nested columns, JSON for resource and scope
//     attributes, and the dropped counts it lacks.
//   - Spark 3.2 and later refuse TIMESTAMP(NANOS) by default
//     (SPARK-40819); spark.sql.legacy.parquet.nanosAsLong=true reads
//     the times as int64 nanoseconds.
//
// A traces file is sorted by (service, trace id, start time), as Tempo
// sorts its blocks: a trace's spans of one service are adjacent rows and
// each trace_id page covers a narrow range of ids, so the page index finds
// them. Its pages hold at most 512 rows (spanPageRows), and a row group
// ends where the service changes once it holds 2,048 rows
// (spanGroupMinRows): the trace_id bloom filter of a row group then
// speaks for one service, and a trace by id reads only the services that
// hold the trace. What version 2 costs against version 1 (CPU per record, bytes per
// record) is in docs/BENCHMARKS.md, "Schema version 2 (2026-11-26)" and
// "Spans ordered by trace id (2026-11-26)".
//
// A logs file (schema versions 2 and 3) is sorted by (service, time);
// every column's data pages are cut where the service changes, as
// written (encoder.pageCut) and as compacted (writePaged), so that a
// query on one service decompresses its pages alone: at the 64 KiB cut
// alone a page of a narrow column held several services' rows, and a
// sparse read of one service (a label filter matching one row in a
// hundred) inflated every service's. It costs a page header, a page
// index entry and a zstd frame a column and service.
//
// # Schema version 3 (logs)
//
// Version 3 (schema_v3.go; the default for logs files, metadata
// wirehouse.schema_version = 3; traces files stay version 2) is version 2
// with the attributes frequent in a file out of the map: a record key
// with values of one kind (string, int, double, bool) in at least 1/32
// of the file's rows gets a typed column of its own, attr_<key>, the 64
// most frequent keys (planKeyColumns), and those values, with the hot
// columns' values, are no longer also in the map; wirehouse.columns
// names every such column (KeyColumns reads it). Why: the map's values,
// interleaved key after key, compressed 2.9x and were two thirds of a
// log's bytes; a column a key is what VictoriaLogs keeps per block, and
// a label filter reads the key's column by its dictionary
// (docs/BENCHMARKS.md, "Logs: a column a frequent attribute"). A key
// keeps the kind it first got a column as in this process (Column.sticky),
// so one writer's files of an hour merge. What it costs readers that
// want one table: files differ in columns (DuckDB's union_by_name), a
// key is coalesce(attr_<key>, attributes['<key>']), and the order of a
// record's attributes across columns is not kept. The key columns'
// values of each row group are listed once from the staged pairs
// (keyPlan.group), not copied into per-key Columns at append time, so a
// batch holds no more memory than for version 2.
//
// # Schema version 1
//
// Version 1 (WriterConfig.SchemaVersion 1; files without
// wirehouse.schema_version) is the layout of earlier releases, kept for
// lakes written before and for comparison. Times are plain int64
// nanoseconds, and every attribute key of a file gets an optional typed
// column of its own (ColumnName: resource_<k>, scope_<k>, attr_<k>, <k>
// lowercased with every byte outside [a-z0-9] replaced by _; collisions
// numbered _2, _3, ... in a fixed order; the key-value metadata
// wirehouse.columns maps each column to its origin, key and type). A key
// whose values have several types in one file is a string column; files
// may type a key differently (DuckDB's union_by_name reads them together).
// At most MaxAttributeColumns (1,000) attribute columns a file: parquet-go
// writes at most 32,767 leaves, and a request with 70,000 distinct keys
// must still make a file; past it the keys with the fewest values go, per
// row, into a JSON object per origin (resource_attributes_overflow,
// scope_attributes_overflow, attributes_overflow), so none is lost. Events
// and links are JSON text. Not kept: schema URLs; in either version, scope
// dropped_attributes_count.
//
// # Compaction
//
// With a one-minute max delay a quiet partition gets a file a minute.
// Compact (compact.go) merges the files of each hour partition that is
// over: only the lake loader's own files, of records the spool cursor
// committed, and earlier merges, in runs of about equal size of at most 4
// MiB (the merge holds ~16 times a run's bytes in memory; planRuns cuts
// runs at even marks of the running total so no short run is left), a run
// merged when it has at least 4 files. parquet-go's MergeRowGroups merges
// them sorted as they were, into the union of their columns with the same
// encodings, statistics, page index and bloom filter. Inputs that disagree
// on a column's type or on the sort, or that cannot be read (a corrupt
// file; a parquet-go panic is recovered), are left alone and logged, and
// the run is tried again only when its files change or an hour later
// (CompactMemo). Files of one schema version are merged only together.
//
// A merge is written to a local scratch file, its row count checked
// against the inputs', synced; then an intent (.compact in the partition)
// names the output and its inputs; the output is uploaded, the inputs
// removed (after CompactOptions.Grace in a shared bucket), the intent
// removed. After a crash, or an upload that failed, the next pass reads
// the intent: output in place, the remaining inputs go; output missing,
// nothing happened. Nothing is inferred from names, which a spool that
// lost its tail under the never fsync policy can reuse. TestCompact
// compares every cell before and after and reads the output with DuckDB
// and pyarrow; TestCompactSeqReuse and TestCompactCorruptInput cover the
// rest.
//
// A Hive-style lake has no atomic multi-file swap, so while a merge's
// inputs and output are both listed, a reader globbing the partition sees
// the merged rows twice. DataFiles, which every wirehouse reader lists
// with, leaves out the inputs an intent names once its output is listed.
// Other engines that must count exactly during a merge should leave out
// the files named by inputs in any .compact of a partition whose output
// exists, or read partitions whose hour ended more than the compaction
// delay plus three minutes ago.
//
// # Rewrites
//
// RewriteFile (rewrite.go) removes rows from a file, for a delete
// request (internal/deletes): its other rows are streamed, in their
// order, into a new file swapped in as a merge is (the intent, the
// upload, the input removed, or kept for the grace period), so a reader
// counts each row that stays once and memory does not grow with the
// file. The output has no counts or
// body index (they would count the rows removed); a spans file gets its
// trace-id index anew.
//
// # Retention
//
// Prune (retention.go) removes whole hour partitions of any signal and
// tenant: first those whose hour ended more than Retention.MaxAge ago
// (or the tenant's own, Retention.TenantMaxAge),
// then, while the lake's Parquet files hold more than Retention.MaxSize,
// first partitions more than an hour in the future (records from clients
// with wrong clocks, farthest first, which would otherwise keep the lake
// over its size while every past hour is deleted), then the oldest, never
// the current or the next hour. Both are 0 by default: the lake is the
// archive and keeps everything. On the local bucket a partition is renamed
// into <root>/.trash and deleted there, so a reader globbing the lake sees
// all of it or none. The same pass sweeps hidden .*.tmp files older than
// an hour (a crashed write's or merge's) and measures the lake
// (PruneUsage). Names outside the layout are never touched.
package lake
