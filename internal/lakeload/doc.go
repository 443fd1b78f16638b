// Package lakeload moves logs and traces from the spool into the Parquet
// lake, so that every record the receiver acknowledged (spoolsink spooled
// it first) reaches the lake, and none twice.
//
// # Exactly once
//
// Loader consumes the spool into lake.Writers in manual-flush mode. It
// writes the buffered rows when a batch reaches its size, buffer or age
// limit (age: the configured max delay, so data is queryable within it),
// in the background while a second writer takes the next records, naming
// every file of one write after the spool records it holds:
// <first>-<last>.parquet, sequence numbers of 20 digits (lake.RangeName;
// with Config.Node, <node>.<first>-<last>.parquet). Writes run one at a
// time, in spool order. The order within one is
//
//  1. write the intent file <lake>/.flush ("[<node>.]<first>-<last>", docs/format/lakeload-intent.md), fsynced;
//  2. write and rename (or upload) every Parquet file of the range;
//  3. commit the consumer cursor to last;
//  4. remove the intent file.
//
// After a crash the consumer replays from its cursor. If an intent file
// names the range that starts there, the replay stops at the same last
// record and writes under the same names, so each file it rewrites
// replaces the one an earlier attempt put in place: every record ends up
// in the lake exactly once (TestReplayAfterInterruptedWrite; in
// cmd/wirehouse, TestServeKill9Lake: 20 kill -9 cycles under gRPC and HTTP
// senders, checked with parquet-go and DuckDB). If the spool lost records
// of that range (a power loss under the interval or never fsync policy),
// the rewrite holds the records that remain. A failed write is retried
// (every second or sooner) and nothing is committed meanwhile, so a store
// that is down holds the cursor: the spool grows, and at its limit clients
// get 429 / RESOURCE_EXHAUSTED.
//
// Records of signals the lake does not store (a gateway's, kept only to be
// forwarded) are passed, committed without rows; the loader's spool tap
// takes them as they are appended so the spool need not keep them in
// memory (TestPassesOtherSignals, TestTapPassesOtherSignals).
//
// # Large requests
//
// A spooled request over 8 MiB is written on its own, cut on the wire
// (otlpwire.Splitter) into parts of at most 4 MiB of protobuf, each
// decoded and written as <seq>-<seq>-p<N>.parquet before the next, so one
// 64 MiB request never holds 64 MiB of decoded rows. Its intent names
// <seq>-<seq>, so a replay cuts it the same way (both sizes are constants
// for that reason) and rewrites the same parts (TestLargeRecord).
//
// # Quarantine
//
// Nothing a client sends can stop the loader: a panic while decoding rows
// or encoding Parquet is an error (lake.ErrEncode for the encoder; the
// write removes the files it had put in place, so none of its rows stays).
// A request the lake cannot decode, or a write that fails with ErrEncode,
// makes the loader go back to its first uncommitted record and write the
// range one record at a time: the record that still cannot be written goes
// to the quarantine (<data_dir>/quarantine/<signal>/ spool-<seq>.binpb
// with a .json saying why; internal/quarantine), is counted
// (wirehouse_quarantined_requests_total,
// wirehouse_lake_refused_records_total) and logged, and the cursor moves
// past it. A replay therefore never fails the same way twice
// (TestQuarantine).
//
// # Fresh records
//
// Fresh gives the traces and logs acknowledged but not yet in the lake's
// files, and a high-water mark: files of records past it (a write under
// way, or a crashed one being replayed) are passed over by readers, so
// each record is read once (TestFreshTracesOnce, at each step of the
// loader). The records the loader read since its last write come from the
// copies the spool kept in memory (a consecutive run up to the last record
// read, at most FreshMemory, 16 MiB), the others from the spool
// (spool.Scan).
//
// # Compaction and retention
//
// At start and then every minute (Config.PruneEvery) the loader runs a
// pass under the lock its writes hold, so it never touches a partition a
// write is filling: compaction first (lake.Compact, with Config.Compact:
// hour partitions over for an hour plus twice the max delay, at least 5
// minutes), taking the lock partition by partition and starting no merge
// after 10 s or once serve shuts down, then Config.Rewrite (the delete
// requests' rewrites, internal/deletes, with the lock per partition; Kick
// asks for a pass at once), then retention (lake.Prune:
// Config.Retention's age and size), which also removes temporary files
// crashed writes left and measures the lake for /metrics
// (wirehouse_lake_size_bytes, wirehouse_lake_parquet_files, and per signal
// and tenant wirehouse_lake_usage_bytes and wirehouse_lake_usage_files).
// With compaction off, interrupted compactions are still finished
// (TestLoaderCompacts, TestLoaderRetention).
//
// # Many nodes, one bucket
//
// With Config.Bucket and Config.Node, several serve nodes share one lake
// in an object store, and nothing else: each node acknowledges from its
// own spool and names its files after itself (lake.NodeName), so spool
// numbers of different nodes never meet in one name, and a replay after a
// crash rewrites the same objects (an upload replaces an object whole).
// The intent and the files being encoded stay on the node's disk. At every
// pass each node publishes its committed cursor at NodesPrefix<node>.json.
// Compaction and retention run only on the node that holds the lease
// CompactionLease (internal/lease; wirehouse_lake_compaction_lease_held is
// 1 there, and only that node measures the lake's size). The holder merges
// a node's files only up to that node's published cursor (never files a
// node may still rewrite), each merge of one node's files, named like
// them. A merge's inputs stay Config.CompactGrace (2 minutes) after the
// swap so that a query that listed them still reads them; readers leave
// them out meanwhile through the merge's intent (lake.DataFiles).
// TestCompactionRaceOnS3 runs two nodes' passes at once while a reader
// samples the bucket: one node does every merge and every sample counts
// every row once. A node can be added or removed at any time; a node
// removed for good leaves its cursor object, and its files are merged up
// to it.
package lakeload
