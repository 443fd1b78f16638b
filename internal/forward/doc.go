// Package forward sends what the spool holds on to downstream OTLP
// endpoints, durably and sharded, without decoding it.
//
// # Routing and sending
//
// A Destination is one spool consumer (its own durable cursor) and one
// set of endpoints on a consistent-hash ring (Ring). It reads each
// record and cuts it on the wire with otlpwire.Router (logs and metrics
// by resource or service, traces by trace id) straight into each
// endpoint's open batch (export requests concatenate). An endpoint's
// workers send the oldest full batch, or the open one when idle, with
// OTLP/gRPC or OTLP/HTTP. Refusals for good (400 and the like) are
// counted, logged and dropped.
//
// # Retries and recovery
//
// Retryable failures (OTLP's retryable gRPC codes and HTTP statuses,
// connection errors) are retried for as long as it takes, with
// exponential backoff and jitter from Config.RetryInitial to
// Config.RetryMax; a server's RetryInfo or Retry-After delay is honoured
// when longer, and such a wait is never cut short. A failure the server
// did not answer with a delay (connection refused or reset, a timeout)
// marks the endpoint failing and starts its probe: every
// Config.ProbeEvery (1 s) an empty export request, after resetting
// gRPC's own reconnect backoff. The first answer, the probe's or any
// request's (an acceptance, a refusal, a request to wait), closes the
// endpoint's recovery channel, which the workers waiting to retry select
// on beside their timer: they send at once, their backoff started again.
// So the batches held back during an outage (each worker holds the
// oldest of its endpoint) go within about a second of its return rather
// than when a backoff of up to 1.5 × RetryMax ends, and the cursor, which
// cannot pass them, moves again. Retries after a recovery are at most
// Workers per answer.
//
// # Acknowledgements and the cursor
//
// Each record in flight counts its parts not yet done, in total and per
// endpoint (a share). The cursor is committed, every 100 ms, up to the
// last record before the first one with a part not done, so that it is
// exactly "everything up to here was delivered or refused for good".
// Acknowledgements come out of order (several workers per endpoint,
// several endpoints per record), so records after the cursor may be
// delivered already, in full or to some of their endpoints. Once the
// oldest record in flight was read more than a second before (an
// endpoint down or slow), each commit also writes what was delivered
// after the cursor to <spool dir>/forward-<name>.acked (format:
// acked.x; docs/format/forward-acked.md): the runs of records delivered
// in full, and per endpoint the runs whose parts for it were, for the
// records routed on the ring now, with the hash of that routing; an
// empty file once the prefix catches up. The file is replaced durably
// (write, fsync, rename, fsync of the directory), after the cursor.
//
// Run reads it back before it reads the spool: a record delivered in
// full is not sent again (passed over at once), and when the ring and
// route keys hash the same, the parts of a record that an endpoint took
// are dropped (counted as records "skipped") and only the others sent.
// So after a crash what is sent again is what was in flight: the parts
// not acknowledged, and those acknowledged in the last commit interval
// (scripts/gateway-crash.sh, 2026-11-28: a node of three down for 20 s and
// the gateway killed 15 s or 45 s after its return sent 0.1 % of the
// records twice, where without the probe and this file 52 % to 95 % came
// twice when the kill came before the backoff ended).
// A file that does not decode, fails its CRC, or names a cursor beyond
// the consumer's (a cursor repaired to 0) is ignored, and every record
// after the cursor is sent again. A record received after every record
// the file speaks of is never taken for one of them: after a power loss
// the spool may give a lost record's sequence number to a new one.
//
// # Delivery
//
// The cursor moves past a record only when every batch holding a part
// of it, and of every record before it, was delivered or refused for
// good: a destination that is down keeps its records in the spool, which
// fills, and then the receiver answers 429 / RESOURCE_EXHAUSTED. The
// bytes read and not delivered are bounded by Config.Window, past which
// the reader waits. Delivery is at least once: a crash sends the parts
// in flight again, and an endpoint that leaves the ring with batches
// queued has them routed again on the new ring (their records are then
// remembered only once delivered in full).
//
// # Metrics
//
// Per destination: wirehouse_forward_queue_records (spool records not
// delivered in full), wirehouse_forward_queue_bytes (spool bytes the
// cursor pins), wirehouse_forward_queue_age_seconds (since the oldest
// record read and not delivered was received; 0 when everything read is
// delivered), wirehouse_forward_ring_members and
// wirehouse_forward_routed_on_append_total. Shared, with a destination
// label: wirehouse_forward_requests_total, wirehouse_forward_probes_total,
// wirehouse_forward_records_total (sent, rejected, refused, skipped),
// wirehouse_forward_sent_bytes_total and wirehouse_forward_ring_member.
package forward
