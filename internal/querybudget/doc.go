// Package querybudget keeps queries inside the server's memory ceiling:
// a Gate admits a query when a slot is free (a global and a per-tenant
// bound on the queries running at once) and the query's memory reserve
// is free, or refuses it with a *BusyError after a short wait; the read
// APIs answer that with 429 or 503 and a Retry-After, each in its own
// error shape.
//
// An admitted query gets a Ticket, carried in its context
// (NewContext/FromContext) down to the layers that hold memory: lakeread
// charges the log records and candidates it holds while it holds them,
// the LogQL engine the lines and series it keeps for the answer. A
// ticket starts with a reserve of Memory/MaxConcurrent and borrows from
// what the other queries leave free, up to MaxQueryMemory; a query that
// would pass MaxQueryMemory on its own fails with a *LimitError (413),
// one that finds nothing left to borrow stops with a *BusyError (its
// client may retry), so a query is never refused for the others' size.
// When the query ends (Ticket.Done) its slot and memory go back.
//
// Live tails take a slot of their own (OpenTail), bounded globally and
// per tenant; their polls are queries like the others.
//
// The package imports no net/http: the APIs map its errors to their
// status codes.
package querybudget
