// Package spool is the write-ahead log of wirehouse serve: an
// append-only, segmented log of the OTLP requests it accepted, which
// consumers (the sinks) read back in order and acknowledge with durable
// cursors.
//
// # Records
//
// Append writes one record: a signal (logs, traces or metrics), a tenant name (at
// most MAX_TENANT bytes), the time the request was received and the
// payload (at most MAX_PAYLOAD bytes), and gives it the next sequence
// number: 1, 2, 3, ... in one spool, continuing across restarts.
//
// # Files
//
// A spool is a directory:
//
//	00000000000000000001.seg  segment files, named after their first record's sequence number
//	00000000000000004711.seg  the last one is the current segment, which Append extends
//	<segment name>.free       a consumed segment file kept for reuse (at most 8)
//	<name>.cursor             one per consumer: its committed sequence number
//	<name>.cursor.tmp         a cursor being replaced; Open removes it
//	LOCK                      flock'ed while a Spool has the directory open
//
// A segment is a sequence of records with no file header and nothing
// between records. A record is an XDR record_header (record.x) followed
// by its payload_length bytes of payload:
//
//	offset  bytes  field
//	0       4      type                record_type: 1 = RECORD_OTLP_PROTOBUF
//	4       8      seq                 sequence number
//	12      4      signal              signal_code: 1 = SIGNAL_LOGS, 2 = SIGNAL_TRACES, 3 = SIGNAL_METRICS
//	16      4      tenant length n     at most MAX_TENANT (128)
//	20      n+pad  tenant              zero-padded to a multiple of 4
//	        8      received_unix_nano  0 for the zero time.Time
//	        4      payload_length      at most MAX_PAYLOAD (1 GiB)
//	        4      crc                 CRC-32C (Castagnoli) of the payload followed by the header bytes before crc
//	        ...    payload
//
// all integers big-endian, so a header takes 36 to 164 bytes. The
// sequence numbers in a segment are consecutive, starting at the one in
// its name. A record goes into a new segment when it would take the
// current one past the segment size (Config.SegmentSize); a record larger
// than the segment size gets a segment of its own. The format evolves by
// adding record types, never by changing one; a version that does not
// know a record type treats it as corrupt, so do not downgrade over a
// spool that holds newer records.
//
// A cursor file is an XDR cursor_file: the consumer's name, its
// committed sequence number and a CRC-32C.
//
// # Durability
//
// Append writes its record to the segment file with write(2) before it
// returns, without buffering in the process. What survives a failure:
//
//   - A crash of the process (a panic, SIGKILL, the OOM killer): every
//     record whose Append returned, under every sync policy, since its
//     bytes are in the operating system's page cache.
//
//   - A power loss or kernel crash, with SyncAlways: every record whose
//     Append returned without error. Append returns only after an fsync
//     that started after the record was written. Concurrent Appends
//     share fsyncs (group commit): while one fsync runs, the records
//     written meanwhile wait, and the next fsync covers them all.
//
//   - A power loss with SyncInterval (the default): every record appended
//     before the start of the last fsync that completed. A background
//     goroutine runs one every interval (default 100 ms), so what is lost
//     is at most the records of the last interval plus the duration of an
//     fsync.
//
//   - A power loss with SyncNever: whatever the operating system had
//     written back by itself (on Linux usually what is older than about
//     30 seconds, vm.dirty_expire_centisecs). The spool never fsyncs
//     segment data under this policy, not even in Close.
//
// The creation of a segment file is made durable by an fsync of the
// directory (with the next fsync of data; never under SyncNever). A
// consumer's Commit is durable when it returns under every policy. After
// a power loss a segment keeps its longest valid prefix (see below). A
// sequence number that a consumer committed is never given to another
// record, even if its record was lost: Open continues numbering after
// the highest committed cursor. Every fsync failure is sticky: Append
// fails from then on, since the kernel may have dropped the unwritten
// pages and nothing more can be promised.
//
// # Corruption
//
// Open scans every segment from its start and checks each record: the
// header decodes (a known record type and signal, a tenant of at most
// MAX_TENANT bytes, zero padding), payload_length is at most MAX_PAYLOAD
// and the payload is within the file, the sequence number is the next
// one, and the CRC matches. Lengths read from the file are checked
// against what remains of it before anything is allocated. At the first
// bad record (a torn tail from a crash: a short header or payload; or
// garbage, a bad field, a checksum mismatch) the segment is truncated:
// the bad record and everything after it in that segment are dropped,
// since nothing after a bad record can be trusted to start a record.
// Later segments are scanned on their own and kept, so a corrupt record
// in a segment other than the last loses the rest of that segment only;
// the sequence numbers then skip the lost records. Each repair is a
// *CorruptError (segment, offset, bytes dropped) in Repairs, for the
// caller to log; Open itself succeeds. A cursor file that cannot be read
// is repaired to 0, so that the consumer reads every retained record
// again (at-least-once delivery), and reported the same way.
//
// A segment file may be a recycled one (see Consumers): past its records
// it may still hold whole records of its earlier life, numbered below
// the segment's first. The scan ends the segment at the first of them
// and truncates the file there without calling it a repair; a torn
// record of its earlier life (the new records ending inside one) is a
// repair like any other. Close truncates a recycled current segment, so
// a clean restart finds only its own records.
//
// Appending continues after the last valid record. Next checks each
// record's CRC again when it reads it back.
//
// # Consumers
//
// A Consumer, named, reads the records with Next in sequence order, from
// just after its committed cursor, and blocks for new ones; a record is
// readable as soon as its Append returns, under every sync policy.
// Commit(seq) records durably that every record up to seq is consumed;
// Rewind goes back to the record after the cursor, to retry a failed
// batch. Delivery is at least once: after a restart, Next starts after
// the committed cursor, whatever it had returned.
//
// A consumer registered for the first time starts at the oldest retained
// record. Cursors live on disk: a consumer found by Open holds segments
// back until it is removed with RemoveConsumer, even if it is not asked
// for with Consumer again.
//
// A segment is deleted once every consumer has committed all of its
// records. The current segment is never deleted, and with no consumer at
// all nothing is deleted (records are kept for the first consumer). Up to
// eight consumed segment files are renamed <name>.free instead and
// written over as later segments: the kernel then reuses the pages it
// still caches, which costs less than filling new files and deleting old
// ones. A Next that was reading a segment collected meanwhile (its
// consumer committed beyond it) looks for its next record again rather
// than reading the file's new contents.
//
// SetTap lets a consumer take records as they are appended, under the
// spool's lock, when it has been given every record before them: Next
// then skips them, and a record every consumer took is not copied into
// memory (Config.TailBytes). The tap is only a shortcut: a consumer
// behind, a full window or a busy lock leaves the record to Next, and
// what was acknowledged is on disk first either way. The forwarder routes
// records from the receiver's buffer this way, and the lake loader takes
// the records of signals it does not store.
//
// # Records in memory
//
// With Config.TailBytes (serve: spool.tail_size, 8 MiB) the spool keeps a
// copy of the newest records, and a consumer that keeps up gets them from
// there, without reading the file back or checking the CRC again; one
// that lags reads the files. Copies are kept only while some consumer can
// read them: once every consumer reads behind the oldest copy, copying
// stops until one has caught up, so a lake loader that falls behind a
// burst costs no copies and no memory.
//
// # Disk usage
//
// Config.MaxBytes bounds the total size of the segment files, those kept
// for reuse included; these are deleted first when it is reached. An Append that
// would go past it returns ErrFull (serve answers 429 / RESOURCE_EXHAUSTED) and
// the spool stays as it was. To let the space be reclaimed, a full spool
// starts a new current segment so that the previous one can be deleted
// once consumed; ErrFull clears as consumers commit. A record larger than
// the limit by itself is ErrTooLarge. A file system out of space is
// ErrFull too (wrapping ENOSPC): the partial record is truncated away.
package spool
