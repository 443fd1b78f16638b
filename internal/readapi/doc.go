// Package readapi is the contract every read API of the admin port
// shares, so that an API keeps only its wire format: the kinds of failure
// and their HTTP and gRPC codes (Kind, Classify), which tenant a request
// reads (TenantRule), the limits every API obeys (Limits), the parsers of
// times and trace ids, the admission of a query into the query budget
// (Admit), and the one wrapper that runs an endpoint and writes what it
// returns (Handle).
//
// An endpoint is a Func: it reads its request and returns an answer or an
// error, and writes nothing. Handle resolves the request's tenant by the
// API's TenantRule and puts it in the context (tenant.NewContext), runs
// the Func, turns a panic into an Internal error, and hands the answer or
// the error to the API's Wire: Prometheus' JSON envelope, Loki's JSON and
// text errors, Jaeger's data/errors envelope, Tempo's protobuf or JSON and
// text errors. Each Wire writes an error with the status of its kind
// (Classify), in its own shape; a client that went away gets the Canceled
// kind's 499, which only the access log reads.
//
// Admit wraps an API's query endpoints: it admits each request for its
// tenant, or answers the refusal through the API's own error writer,
// carries the query's ticket in the request's context for the layers
// below to charge, bounds how long the answer may take to write (a client
// that stops reading cannot hold a slot), and gives the slot back when
// the handler returns. A client that goes away cancels the request's
// context, and with it the query.
//
// The Jaeger remote-storage gRPC API (jaegerstorage) uses the same rule
// (TenantRule.Choose) and the kind table's gRPC codes.
package readapi
