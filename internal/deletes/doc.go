// Package deletes keeps and carries out delete requests: Loki's
// /loki/api/v1/delete (internal/lokiapi answers it), a LogQL stream
// selector with optional line filters and a time range, for one tenant,
// whose log records are removed from the lake.
//
// A request is an object of the lake's bucket (Prefix, JSON; the format
// is docs/format/deletes.md), so it survives restarts and is seen by
// whichever node of a shared bucket holds the compaction lease. It is
// carried out by the lake loader's pass (lakeload.Config.Rewrite), with
// its write lock and lease, once the records the node that took it had
// in its spool then are in the lake's files (Request.Through): those are
// waited for and removed with the rest. Until a request is carried out,
// the LogQL engine hides the records it selects, in the spool and the
// lake alike (Pending; Loki's filter-and-delete mode), so they leave
// every answer, rules' included, the moment the request is made; and
// the lake loader's writes leave them out (Drop, lake.WriterConfig.Drop),
// so those still in the spool never reach the lake's files, for DuckDB
// either. Each of the tenant's logs files of the
// hours the request spans is read (lakeread.MatchLogRows: the column
// filters first, then every record left tested by the LogQL engine's
// own selection, eval.Selection) and rewritten without the records
// selected (lake.RewriteFile, a file at a time: the compaction's intent and swap, so a
// reader counts every other row once, and a crash is settled by the
// next pass). Progress (files rewritten, rows removed) is written after
// each file; after a crash the request is started over, which finds
// nothing more in the files already rewritten. A request is processed
// when a pass finds nothing left; it may be canceled until then (what
// it removed stays removed). List reads a processed or canceled request
// once, and again only when the listing shows its object changed.
package deletes
