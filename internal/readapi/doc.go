// Package readapi is the contract every read API of the admin port
// shares: which tenant a request reads (TenantRule) and the admission of
// its query into the query budget (Admit, over querybudget.Gate), so
// that an API keeps only its wire format.
//
// Admit wraps an API's query handlers: it admits each request for its
// tenant, or answers the refusal through the API's own error writer
// (Prometheus' JSON, Loki's text, Jaeger's errors[] envelope, Tempo's
// text), carries the query's ticket in the request's context for the
// layers below to charge, bounds how long the answer may take to write
// (a client that stops reading cannot hold a slot), and gives the slot
// back when the handler returns. A client that goes away cancels the
// request's context, and with it the query.
package readapi
