// Package metricstore stores OTLP metrics in an embedded Prometheus TSDB,
// translating them at the wire level with otlpwire, without pdata.
//
// The TSDB (Prometheus' tsdb package, v0.316) lives in one directory
// (serve: <data_dir>/metrics), its WAL snappy-compressed, compacted in the
// background, with retention by time and size, an out-of-order window and
// the head block duration in Config. AppendOTLP appends a request through
// one appender and commits it: a request is acknowledged once it is in
// the WAL. Remote write (internal/promwrite and Prometheus' own handler)
// writes through Appendable, PromQL and the read APIs read through
// Queryable.
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
//     cumulative non-monotonic sum → gauge; a delta sum, histogram or
//     exponential histogram → the same, made cumulative (see "Delta
//     temporality"), or with Config.RefuseDelta every point rejected with
//     ReasonTemporality, as Prometheus does without its experimental
//     native delta support; unspecified temporality → rejected so;
//   - cumulative histogram → classic _bucket{le}, _sum (when set) and _count,
//     le="+Inf" taken from count; exponential histogram → integer native
//     histogram (scales above 8 merged down; below -4 rejected);
//     summary → {quantile} series, _sum and _count;
//   - service.namespace/service.name → job ("ns/name" or name),
//     service.instance.id → instance; the other resource attributes make a
//     target_info gauge of value 1 at the resource's points' timestamps,
//     one sample per 2.5 minutes from the earliest to the latest (limited to
//     the last 24 hours: Prometheus has no limit);
//     Config.PromotedResourceAttributes copies attributes onto every series;
//   - the scope becomes otel_scope_name, otel_scope_version,
//     otel_scope_schema_url and otel_scope_<attribute> (Config.ScopeLabels;
//     on by default here, off by default in Prometheus);
//   - NaN and ±Inf are stored as they are; a point with the
//     no-recorded-value flag becomes a staleness marker (value.StaleNaN) in
//     every one of its series;
//   - start timestamps become zero samples with
//     Config.StartTimestampZeroSamples (tsdb's EnableSTAsZeroSample), and are
//     ignored otherwise;
//   - exemplars are stored with Config.MaxExemplars (none by default, as in
//     Prometheus), labelled as Prometheus' translator labels them;
//   - metric metadata (type, unit, help) is kept in memory per metric
//     family, see Store.Metadata.
//
// Unlike Prometheus' OTLP receiver, which refuses the whole request at the
// first error (rolling back what it appended), a problem rejects only the
// data point it is in; Result counts accepted and rejected points and the
// reasons (out of order, duplicate timestamp, too old, label limit,
// invalid UTF-8, histogram buckets not matching bounds, ...), with an
// example series for each, which Result.Message puts in the OTLP partial
// success; the Store counts them by reason in
// wirehouse_metricstore_rejected_points_total and logs a warning per
// reason at most every 10 s (see Config.Registerer and Config.Logger).
// Two of those checks are
// stricter than Prometheus, which stores such points: invalid UTF-8 in
// names or values, and bucket counts that do not match the bounds (the
// OTLP data model forbids both). A
// malformed request (what otlpwire's Validate refuses, checked within the
// same walk) is an error and stores nothing.
//
// Because the Store refuses exactly what Validate refuses, wirehouse serve
// runs it as the first, pipeline.Validating, metrics sink, and a
// steady-state request is walked once: resources and scopes are validated
// when first interned, a cached series' point attributes are known valid,
// and the rest (exemplars, metadata, points refused before the lookup) is
// checked explicitly. A request that would create a series is validated
// whole first, because the TSDB keeps the series a rolled-back appender
// created: a refused request leaves no series, samples or metadata
// (FuzzAppendOTLP checks both). TestOracle compares every appended sample,
// and the exemplars, with Prometheus' own translator on pdata's view of
// realistic and random requests in both field orders; TestMetadataOracle
// the metadata.
//
// Two defaults differ from Prometheus' OTLP receiver, both settings: scope
// labels (Config.ScopeLabels, serve's metrics.promote_scope_metadata, on:
// the Collector's Prometheus exporters add them; TestOracleNoScopeLabels
// compares the off setting with Prometheus' translator) and a limit of 128
// labels a series (Config.LabelLimit, metrics.label_limit; 0 for none, as
// in Prometheus), so a series of a thousand labels is a per-point refusal.
// Metadata is recorded when a request that created a series of the family
// ends, so steady-state ingest does not touch it (a changed description
// shows once the cached series lose their references: at the next head
// truncation or a restart); help is cut to 4 KiB and the whole to 32 MiB,
// and after a restart it fills again as series arrive. Prometheus serves
// /api/v1/metadata only from scrape targets, so it shows none for OTLP.
//
// # Order and duplicates
//
// A TSDB series holds one sample per millisecond, in time order. Every
// acknowledged point is stored or counted, with these rules:
//
//   - The points of a request are stored in time order, whatever their
//     order in the request: points of one series out of time order are all
//     stored (the request is appended again, sorted, when its walk meets
//     one; see order.go). Prometheus' appender would drop the later ones
//     at its commit, after acknowledging them.
//   - Of the points of one series that fall in one millisecond (OTLP times
//     are nanoseconds), the first is stored: the earliest in the request
//     once it is in time order, its points of one millisecond kept in
//     request order. A later one with the same values is a duplicate: not
//     an error, accepted, not stored again, counted in Result.Duplicates
//     and wirehouse_metricstore_duplicate_points_total. One with another
//     value is rejected as ReasonDuplicate ("duplicate_timestamp"). All the
//     samples of a point go together: a histogram point whose _count
//     repeats the first point's but whose _sum differs is rejected whole.
//   - Across requests the same rule holds: the first value written to a
//     millisecond stays. A point equal to a sample its series holds (a
//     client's retry) is a duplicate, counted as such; one at a stored
//     millisecond with another value is rejected as ReasonDuplicate. A
//     point older than its series' last sample, at a free millisecond, is
//     rejected as ReasonOutOfOrder (or, with Config.OutOfOrderWindow,
//     stored if within it, else ReasonTooOld); one older than the head
//     allows as ReasonOutOfBounds. The Store keeps, per series, the last
//     sample its head holds (the ledger, ledger.go): the TSDB's appender
//     drops a sample equal to the last one without an error, and a sample
//     another commit overtook between its append and its commit; the
//     ledger tells the first apart, and has a request so overtaken
//     appended again, its points then decided by the rules above. A point
//     older than its series' last is looked up in the TSDB (a query, at
//     most 4096 per request).
//
// # Delta temporality
//
// A point of a delta sum, histogram or exponential histogram is stored as
// the next sample of the cumulative series it belongs to: the series'
// last stored sample plus the point, as the Collector's deltatocumulative
// processor (v0.159 to v0.165) accumulates a stream, so that rate() and
// increase() read it as they read a counter. The state is the TSDB
// itself: the last sample comes from the ledger (see "Order and
// duplicates" and ledger.go), read from the head the first time, so a
// restart, a new cache epoch or a series not seen for hours needs no
// checkpoint and can never count a point twice: a commit stores the
// point's cumulative sample and the point together, or neither; a
// request committed while another was adding to the same series is
// appended again against the new last sample. Per point:
//
//   - no last sample (a new series, or a staleness marker last), or one
//     more than Config.DeltaMaxStale older than the point (in the points'
//     own time; the processor's max_stale, 5 minutes, counts wall time
//     since the stream was last seen) → the series starts at the point's
//     value, its start timestamp kept (a zero sample with
//     Config.StartTimestampZeroSamples);
//   - a point at or before the series' last sample (a retry of a stored
//     request, or points out of time order) → rejected as ReasonOutOfOrder:
//     counted, never added;
//   - otherwise the sum: a gap between the last sample and the point's
//     start, or a later start (an SDK restarted), adds as the processor
//     adds; no start is kept, so, unlike the processor, a point starting
//     before the series' first start is added too;
//   - histogram: each _bucket, _count and _sum series adds its own; a
//     _bucket series without a sample at _count's last time (the bounds
//     changed) starts the histogram again, as the processor resets it;
//     _sum goes on while every point has one;
//   - exponential histogram: bucket by bucket at the lower of the two
//     schemas, scaled down further while either side would span more than
//     160 buckets (the processor's limit), zero and total counts and sums
//     added; the OTLP zero_threshold, which the translation does not
//     keep, is not widened as the processor widens it;
//   - a point with the no-recorded-value flag → a staleness marker, and
//     the next point starts the series again.
//
// The processor's max_streams has no counterpart: the state is the
// stored series, bounded as they are.
//
// # Series cache
//
// The label sets of a data point's series and their TSDB references are
// cached under the exact wire bytes they derive from, so steady-state
// ingest of known series appends by reference without building labels.
// Whenever the head's minimum time moves (a head truncation, which drops
// series without samples) a new cache epoch starts: entries keep their
// labels but not their references, and entries not used for a whole epoch
// are dropped, so the cache holds what the last two to four hours sent.
// See seriesCache. The ledger is 64 independently locked shards keyed by
// series reference, and each cache entry keeps a hint to its ledger entry,
// so a lookup skips the shard's map and a commit takes each shard's lock
// once (classic histograms write a series per bucket: without these, the
// ledger's maps and locks were a fifth of the store's CPU on them,
// profiled 2026-11-26). What the ledger costs is in docs/BENCHMARKS.md,
// "The ledger (2026-11-26)".
//
// # Write errors
//
// A write to the WAL can fail: a full disk, an I/O error. Prometheus'
// wlog then leaves a torn record in the WAL, the first fragments of the
// record whose write failed, followed by the records written once writing
// works again; when the TSDB opens, Prometheus' reader stops at the tear,
// and its repair drops the rest of the segment and every later segment.
// A series created by the failed commit has no series record either, so
// later samples of that series are dropped when the WAL is replayed. So:
//
//   - Every commit reads the failed-writes counters of the WAL and of the
//     out-of-order WBL after it returns (wlog increments them inside the
//     log's mutex, so a commit that wrote after a failed write sees them).
//     From the first failure on, the Store refuses every write with an
//     error wrapping ErrUnavailable, a commit that succeeded after the
//     failure included, and Accepting reports false.
//   - Then, every second, it checks the free space; once the file system
//     has 1 MiB free, and 512 bytes a head series (for the head chunks
//     closing writes), it waits for the queries and appenders using the
//     TSDB, closes it and opens it again (mended, below), its head rebuilt
//     from the WAL, and accepts writes again. Queries read the failed TSDB
//     until then, and fail with ErrUnavailable during the reopen.
//   - Open, and the reopen, zero the torn records first: Prometheus'
//     reader takes zeros for page padding and reads the records after the
//     tear (see planMend; a torn record's write failed, so none of it was
//     acknowledged). What it cannot read otherwise (a checksum mismatch, a
//     record cut short by a crash) is left to Prometheus' repair.
//   - Open, and the reopen, refuse with a *SpaceError, having changed
//     nothing, while the file system has less free space than 1 MiB plus
//     the segments Prometheus' repair would rewrite: a repair that runs
//     out of space truncates the WAL further.
//
// Before these rules, a probe (2026-11-26, the disk filled under load)
// lost 5,000 of 152,200 acknowledged points on the restart after space
// returned, and, restarted while the disk was still full, the repair
// failed half-way having truncated further: 373,850 of 646,650 lost.
//
// Recovery, for operators: free space on the file system that holds the
// data directory (the metrics, the spool and the lake share it) by
// removing or moving other files or growing it; do not delete WAL or spool
// segments by hand (metrics.retention_size and lake.retention_size keep it
// from filling again). A running serve accepts metrics again by itself
// (after the WAL replay, logged as "reopened the TSDB after a write-ahead
// log write error", counted in wirehouse_metricstore_reopens_total;
// wirehouse_metricstore_accepting is 0 meanwhile: alert on it). A stopped
// one refuses to start, changing nothing, until there is room; then it
// zeroes the torn records and replays the WAL. Do not start a wirehouse
// older than this on a WAL a full disk tore: its repair would drop
// everything after the tear.
//
// Tested on a tmpfs the tests mount (they need root, and skip without):
// TestMendWlogTears tears records with wlog's own writer on a full disk
// and reads every record after the tear once mended (TestMendTornRecords
// covers the cases byte by byte); TestStoreDiskFull,
// TestStoreDiskFullRestart and TestStoreReopenWaitsForReaders fill the
// disk under concurrent senders; cmd/wirehouse's TestServeDiskFull fills
// and frees a 48 MiB tmpfs under OTLP metrics, remote write, logs and
// traces, kills serve, checks that a start on the full disk fails and
// leaves the data directory byte for byte as it was, then that every
// acknowledged point, log and span is stored.
//
// One loss remains, Prometheus' own (prometheus/prometheus#9841): its
// head logs a series record in the commit of the appender that created
// the series, so the samples of a request that appended to a series
// another request was creating, and committed first, precede the record
// in the WAL, and a replay (any restart, or the reopen) drops them (it
// takes two concurrent requests writing the same new series). And
// Prometheus panics when it cannot write a head chunk, which it does once
// a minute, so a disk full for longer can crash serve (nothing
// acknowledged is lost: it is in the WAL).
//
// # Tenants
//
// One TSDB holds every tenant's series, told apart by the reserved label
// TenantLabel, which the Store sets on write from the request's tenant
// and matches, then hides, on read from the tenant in the context
// (internal/tenant), as prom-label-proxy injects a tenant's matcher in
// front of a Prometheus. The default tenant ("") writes series without
// it, so a Store used without tenants is what it was before them. See
// TenantLabel, AppendOTLP, Queryable and Appendable.
//
// A client cannot choose the label: an OTLP attribute that translates to
// it is dropped, a remote-written one replaced. The series cache key ends
// with the tenant, metadata is kept per tenant, and the label limit does
// not count the label. Returned series and label names lose it, and
// HeadStats counts each tenant's own head series. snapshot and
// clean_tombstones, which act on every tenant's data, are the default
// tenant's. A TSDB per tenant, as Mimir's ingesters keep, would isolate
// further (retention and limits per tenant), but on one small node it
// costs a head, a WAL, compactions and memory-mapped chunks per tenant,
// and every query would fan out; one TSDB with an injected label costs a
// posting list per tenant and a matcher per selector. Series keep the
// label they were written with, so renaming serve's default tenant
// (lake.tenant) moves nothing.
package metricstore
