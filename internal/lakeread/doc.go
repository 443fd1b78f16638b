// Package lakeread reads spans and log records back from the lake's
// Parquet files (internal/lake) for every read API: a trace by id as OTLP,
// trace search, services and operations for Jaeger's and Tempo's APIs, and
// log records and streams for the LogQL engine.
//
// # Files
//
// One Reader serves every API. A query lists the tenant's partitions that
// overlap its time range (lake.DataFiles, which leaves out a merge's
// inputs; newest hour first): a range of up to 48 hours lists its hour
// partitions one by one (lake.HourPrefix), a longer or open one the
// tenant's tree. It reads through a cache of up to
// Config.OpenFiles (256) files kept open with their footers parsed
// (filecache.go; keyed by name, size and upload time, dropped when a
// listing no longer shows them), so a footer is decoded once, not per
// query (decoding footers dominated a trace by id). An open file serves
// one query at a time, so the bytes read through it are charged to that
// query alone. What is worked out once from a file (its distinct span
// names, its log streams) is kept per file (memo.go), so listing services
// or Loki labels walks a few hundred names per file rather than its rows.
// The open files' column chunk readers (parquet-go's FilePages) are kept
// between queries too, with the dictionaries they decoded and the last
// page each read (a logs file's only of chunks with a dictionary: a
// reader of one without saves nothing but would hold its last page, up
// to 64 KiB), in an LRU of Config.ChunkCacheBytes (32 MiB;
// chunkcache.go): a point read (a trace by id, the log records a
// query selected) that touches a column of a file read before does not
// decode its dictionary page again (half of a trace by id's column reads
// before). A scan takes a reader out and puts it back; a file's readers
// close with the file. The trace_id bloom filters are kept in it as well,
// read whole, so that checking one does not read the file again (a
// system call a check with parquet-go's). The log filters' wide scans, which read many pages
// a column, do not use it: a run of compare-log-reads.sh with them on it
// had serve's peak RSS at 461 MiB (337 without) and those scans up to
// 2-3.5x slower, the cause not yet found (docs/BENCHMARKS.md); the few
// blocks a body index leaves do (below).
//
// # Traces
//
// Trace and Traces (several ids in one walk) first ask each listed spans
// file's trace-id index (its region, lake.TraceIDs: read once, kept up to
// TraceIDsMemoBytes, 32 MiB; traceids.go) which ids it may hold, and open
// only the files that may hold one: a lookup opens about as many files as
// hold the trace, however many the lake has (at 10M spans in 256 files, 5.0
// ms a lookup became 1.5 ms). A file without an index, or with a damaged
// one, is searched as below. The open files' parsed footers are bounded by
// Config.OpenFileBytes (128 MiB) and the span-names memo by NamesMemoBytes
// (64 MiB), both in serve's memory ceiling: unbounded and outside it, they
// left the soft limit just above the live heap and the collector ran every
// few megabytes. In a file, they use, per row group, the ids
// its trace_id bloom filter admits (a spans file gives each service of
// 2,048 spans or more row groups of its own, so the filter passes over
// the services without the trace); for those, only the trace_id pages
// whose column-index bounds admit one (files are sorted by service, then
// trace id: about one page per service and id), read once each and
// compared on the page's own data (dictionary index or bytes), not as
// decoded values; then the matching rows column by column (readColumns):
// in each column the columns a span needs (not the hot-key ones), only
// the page holding the rows (by the offset index; a spans file's pages
// hold at most 512 rows), and in it only the rows' values (the page
// sliced). That costs ~30 % less CPU than
// parquet-go's row reader, which sought every column at each run of rows
// (scripts/trace-lookup-cost.sh: 7.0-8.0 ms against 10.1 ms a lookup,
// 100k spans, 2026-11-29; BenchmarkTrace). Values are decoded by their leaf's role
// (decode.go), attributes typed again from their signature and resource
// and scope attributes from their JSON, and the spans grouped by resource
// and scope into an OTLP TracesData written with protowire, no pdata
// (TestTraceRoundTrip checks every field against pdata).
//
// FindTraces is Jaeger's search: the traces with a span matching service,
// operation, start window, duration bounds and attributes (span, resource
// or scope, compared as text; error=true also matches an error status).
// Row groups are pruned by the statistics of service_name, name and
// start_time; then it reads column by column, each only in the pages that
// hold rows still in the running (scan.go), on the pages' encoded data (a
// dictionary string compared by its index), a hot key's typed column
// instead of the map (a value sent with another type than the convention's
// is then not found), resource and scope JSON tested once per dictionary
// entry, trace ids last. Once it holds Limit traces ending no earlier than
// anything a row group can hold, the rest is passed over, so a search of
// common spans reads the last hour alone (TestFindTraces,
// TestFindTracesAcrossHours). Query.ErrorStatus narrows by status_code
// alone (TraceQL's status = error), and plain resource and scope JSON
// values are tested once each too.
//
// SpanPoints (spanpoints.go) gives TraceQL's span-local metrics and
// searches the spans a SpanFilter selects: service, name, kind, status,
// duration bounds and conditions on hot integer attributes, rows narrowed
// column by column as FindTraces does, then only the fields asked for
// read; files a few at a time on every core, no trace assembled. A
// filter marked Counted (a rate or count over whole minutes, of service,
// kind and status only) is answered from each file's span counts
// (lake.SpanCountsKey), a point for many spans; a search asks for the
// spans' ends alone (NeedEnd: end_time, not start and duration), and
// through NewestSpanPoints reads files latest end first (their row
// groups' end_time bounds), stopping once it has the n latest ends past
// every file left: a search of the last hour's newest traces reads the
// newest file or two, not the hour (TestNewestSpanPoints). Tag
// values of resource attributes come from each file's resources, worked
// out once a file (resValues: keys with at most 64 values a file; a key
// with more is read again when asked); those of a span attribute from its
// places in each file's attributes map, read the first time the key is
// asked and kept (spanValues, at most 1000 a key and file). Both memos
// are bounded (4 MiB each) and in the memory ceiling.
//
// Files of schema version 1 are read too (v1.go): trace by id as for
// version 2, search and names by a full scan (TestVersion1Files). What
// version 1 never kept stays lost: schema URLs, and the type of a key with
// values of several types in one file (read back as strings).
//
// # Logs
//
// An hour partition's listing is kept while its directory's time is
// unchanged (listings; bucket.Local.Modified), so a query over hours
// that no longer change does not walk and stat their files again.
//
// Logs reads the log records of a time range from the logs files of
// schema versions 2 and 3 (version-1 logs files are not read; a
// version-3 file's record attributes are its map's and its key columns',
// keyLeaves), newest or oldest hour first or in
// no order, and the records not in files yet: a service_name matcher
// (tested once per dictionary entry), leading line filters, substrings
// and regular expressions (page by page on the body column), and values
// the records' attributes must hold (AttrValues: the map's value
// column, once per dictionary entry, the resource's JSON when one of the
// file's resource keys has the value's label (the keys read once per open
// file from the column's dictionaries, resourceKeys), and the key
// columns whose key's label is the value's (AttrNames, AttrLabel); one
// scan of each for every value, rowsWithValues) select rows
// before anything else is read (a regular expression's required literals,
// requiredLiterals, are tested as substrings before it, and serve the
// body index as needles); in
// order, an hour's files are filtered newest (oldest) first by the time
// bounds their counts give (fileBounds), a few at a time, and after each
// few the candidates no unread file can precede are sorted by time and
// decoded a thousand at a time (the records handed to the caller on a
// goroutine of their own, delivery, while the next files are read), so a
// query that stops at its limit
// reads the newest files and little of them; in no order, files are
// read a few at a time; batches double up to 64k records while the last
// held at most 8 MiB of records (maxBatchBytes), so memory stays small.
// LogQuery.Fields names the columns the caller needs. CountLogs counts
// the records a range selects by service, severity and a time bucket the
// caller chooses, from the time, service and severity columns (and the
// body for line filters) without decoding a record: what LogQL's volume
// and count queries need. A page whose index bounds fall in one bucket
// (times) or are one name (services, severities) is counted from the
// index, unread; severities are read only when the counts are by them;
// consecutive rows of one key are counted as a run (BenchmarkCountLogs,
// 500k logs: 28 ms by service, 51 ms by service and severity, against 61
// and 70 ms before, 2026-11-29).
//
// Two indexes the writer keeps in each logs file (counts in its key-value
// metadata, grams in a region before its footer:
// docs/format/lake-parquet.md) answer most of it without the columns:
//   - counts (lake.Counts: records by service, severity and minute):
//     countFromCounts adds up the minutes that lie whole in one bucket
//     of the query's grid and in its range, and reads the columns for the
//     rest (the range's ends, at most four stretches; a grid not on whole
//     minutes reads the file as before). BenchmarkCountLogs: 0.14 ms
//     against 33 ms without them. Counts once parsed are kept
//     (Reader.counts, 4 MiB: boundedMemo), so a file they answer whole
//     is not opened again, even past OpenFiles. A file whose counts hold no minute of
//     a selected service in the range is not read at all (noneInRange):
//     the files of an hour partition cover the whole hour, and a record
//     timed by its observed time puts a file's timestamp bounds at 0,
//     so they cannot tell (otherwise rowsInRange cuts row groups and
//     pages by those bounds before a body is scanned).
//   - grams (lake.Grams: a bloom filter of the bodies' 4-byte substrings
//     per block of up to 1024 rows of one service): narrowByGrams keeps,
//     for |= needles of 4 bytes or more, the services and timestamp
//     ranges of the blocks that may hold every needle (LogQuery.within,
//     tested on the timestamp column's page index, then its values), and
//     passes over a file none of whose blocks may. The region is read
//     before the file is opened (gramsFirst): its table once (kept in
//     gramsTables, 8 MiB, about 40 bytes a block, with the first 1024
//     files kept open for their runs), then for each gram
//     of a needle one run of filter blocks a class of filter sizes, so a
//     file no block of which may hold the needle is never opened and a
//     query over more files than OpenFiles does not decode their
//     footers again. When the blocks left hold at most 4096 rows of a
//     file (pointScanRows: a rare token), their rows are scanned through
//     the chunk cache, whose kept dictionaries are most of what such a
//     scan decodes.
//
// Counts (and the grams of earlier files, in the footer) are parsed once
// per open file (filecache.go); each is trusted only if it parses, its
// checksums hold and it accounts for the file's rows (a region's table
// also only once the footer names a region of its length); otherwise the
// columns are read. Config.NoIndexes reads the columns
// always (TestCountLogsAsRecords and TestNeedlesWithAndWithoutGrams
// compare both ways with pdata). LogStreams gives the
// distinct (service, resource attributes) of the range, what Loki's label
// and series endpoints list.
//
// # Parallel reads
//
// Work on independent files, and on the columns of one row group, runs on
// one goroutine a core (parallel.go, inParallel): CountLogs counts a few
// files at a time, each into a tally of its own; Logs filters the files
// of an hour a few at a time and decodes a batch's files, and a row
// group's columns, in parallel; readColumns reads a trace's columns in
// parallel. Files are opened and released, and bytes charged, by the
// query's goroutine alone; a worker only reads the files it is handed.
//
// # Fresh records
//
// A record is readable as soon as its request is acknowledged:
// Config.Fresh (the lake loader's Loader.Fresh) gives the requests not yet
// in files and a high-water mark; files of records past it are passed
// over, so each record is read once (lakeload's TestFreshTracesOnce).
//
// # Limits
//
// Bytes read and spans returned are bounded (Config.MaxBytes, MaxSpans; a
// *LimitError past them). The memory a logs query holds (the fresh records
// it selected, an hour's candidates, a decoded batch) is charged to the
// query's querybudget ticket while it holds it. A damaged file is an error
// naming it (FuzzTraceFile); a file removed since the listing is skipped.
package lakeread
