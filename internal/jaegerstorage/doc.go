// Package jaegerstorage serves Jaeger's remote storage API — the
// jaeger.storage.v2 TraceReader and DependencyReader gRPC services, whose
// messages jaeger-idl's storage/v2 protos define — from the lake, so that
// the Jaeger query service (the jaeger binary with a grpc storage backend)
// runs on wirehouse unchanged. Messages are read and written with
// protowire; traces go out as OTLP TracesData (docs/notes/
// jaeger-tempo-contracts.md has the contract and its traps).
//
// Served: GetTraces (a stream of one chunk per trace found, none for an id
// not found), FindTraces (likewise, for the traces a search finds, most
// recent first), FindTraceIDs, GetServices, GetOperations, and
// GetDependencies (Config.Dependencies: the service graph
// internal/tracemetrics makes; empty without). wirehouse serve runs it on its own gRPC listener
// (jaeger.storage_listen, localhost:17271), with otlpgrpc's bytes codec.
//
// What Jaeger's query service needs, beyond the protos: a chunk is never
// empty, nor one whose first scope has no span (either crashes Jaeger's
// aggregator); Jaeger's year-1 timestamps (Go's zero time) mean unset;
// span kinds are Jaeger's lowercase names in GetOperations. GetTraces
// reads every id of a call in one walk over the files (lakeread.Traces);
// FindTraces reads each trace lakeread.FindTraces finds whole, by its id,
// in the hours its matching spans cover; a search returns at most
// Config.MaxTraces (readapi.Limits, 1,000). Every call is admitted into
// the query budget (Config.Gate) and bounded by Config.Timeout; refusals
// are gRPC codes by readapi.Kind (RESOURCE_EXHAUSTED with RetryInfo when
// busy).
//
// cmd/wirehouse's TestServeJaegerQuery runs the real Jaeger v1.76.0 (built
// from tools/jaeger) with deploy/jaeger-query.yaml against serve and checks
// services, operations, traces by id span by span, and searches (service,
// minDuration, tags={"error":"true"}) trace by trace; TestJaegerStorageAuth
// and TestJaegerStorageTLS the tokens and TLS below.
//
// # Tenants and authentication
//
// Every call reads one tenant's spans, by the read side's tenant rule
// (readapi.TenantRule), its refusals the gRPC codes of their kinds.
// Without Config.Auth it is the tenant the call's tenant header
// (Config.TenantHeader, x-tenant) names, as Jaeger's multi_tenancy
// forwards it, else Config.Tenant: whoever reaches the listener reads any
// tenant (a header that is not a tenant name is InvalidArgument).
//
// With Config.Auth (wirehouse serve passes its admin bearer tokens) every
// call, GetDependencies too, needs a token, and reads its token's tenant
// (Config.Tenant for a token naming none), before its request is read:
//
//   - no token, or an unknown one: Unauthenticated;
//   - a tenant header naming another tenant: PermissionDenied (it may be
//     absent, or repeat the token's tenant).
//
// The token comes in the authorization metadata, "Bearer <token>", which
// Jaeger's grpc backend sends for a fixed token from its headers setting:
//
//	jaeger_storage:
//	  backends:
//	    wirehouse:
//	      grpc:
//	        endpoint: wirehouse:17271
//	        headers:
//	          authorization: "Bearer ${env:WIREHOUSE_TOKEN}"
//
// or, without authorization metadata, as the bare token of the
// bearer.token metadata, which the Jaeger query service sends with
// bearer_token_propagation: true, so that each request to Jaeger's HTTP
// API reads with the token in its own Authorization header. (Jaeger's grpc
// backend refuses an auth extension.)
//
// TLS is the gRPC server's own (the caller's grpc.Creds); wirehouse serve
// sets it from jaeger.storage_tls, whose certificate it re-reads when the
// files change, and Jaeger's grpc backend verifies it with tls.ca_file.
package jaegerstorage
