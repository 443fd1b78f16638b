// Package receiver is wirehouse's OTLP front end: OTLP/gRPC and OTLP/HTTP
// servers that keep every request as protobuf bytes from the socket to the
// sinks.
//
// # gRPC
//
// The three Export services are registered from otlpgrpc.ServiceDesc and
// served through otlpgrpc.Codec, a codec named "proto" that passes a
// *otlpgrpc.Message (a byte slice) instead of unmarshalling. A message
// gRPC delivers in one buffer is referenced; one spread over several
// frames is copied once into a pooled buffer. The server's buffer pool
// (framepool.go) has grpc-go's tiers but does not clear a buffer before a
// frame is read over it (grpc-go's default pool does, which cost 6–8 % of
// the server's CPU at batch 100 in profiles of 2026-11-23). gzip and zstd
// (klauspost/compress) are registered as compressors (compress.go).
//
// # HTTP
//
// POST /v1/{metrics,logs,traces} with application/x-protobuf or
// application/json, and a Content-Encoding of gzip, zstd, deflate (the
// zlib format; also "zlib", the Collector's name) or none, in any case
// (http.go, body.go). The body is read into a pooled buffer under
// Config.MaxRequestBytes (refused from Content-Length alone when it
// announces too much) and decompressed under Config.MaxDecompressedBytes,
// so a compression bomb stops at the limit; JSON is transcoded to protobuf
// by internal/otlpjson. The answer uses the request's content type. With
// Config.CORS, web pages from the listed origins (exact, one * wildcard,
// or *) may export (cors.go, github.com/rs/cors as in the Collector):
// preflights are answered without a token, browser credentials are not
// allowed, a bearer token header is, and refusals to an allowed origin
// (401 included) carry Access-Control-Allow-Origin so a page can read why.
//
// # Loki push
//
// POST /loki/api/v1/push (loki.go), as Loki serves it: snappy protobuf
// (application/x-protobuf, or no type; Content-Encoding: snappy is that
// too) or JSON, gzipped or not, transcoded by internal/lokipush to an OTLP
// logs request that takes the same path as OTLP's below (the same
// credentials; without them X-Scope-OrgID names the tenant). Loki's
// answers: 204 once stored, the refusals' statuses with their reason as
// plain text, and 400 naming the first reason when some entries were
// refused by Loki's limits (their stream's labels, their time, their
// size) and the others stored. serve mounts the same handler on the admin
// port, beside Loki's query API (LokiPushHandlerBehind).
//
// # One path for both
//
// A request is authenticated first (Config.Authenticator: the
// Authorization header, or the gRPC authorization metadata checked in the
// transport's tap before a stream is created; internal/bearer implements
// it), and the tenant it names travels in the request's context to the
// sinks (pipeline.Request.Tenant). Requests from exporters of OTLP
// 0.15–0.19 are migrated (otlpwire.MigrateDeprecated). Then the bytes are
// checked with otlpwire's Validate, counted, and handed to each
// pipeline.Sink of the signal in turn (receiver.go). A first sink marked
// pipeline.Validating (the metric store) checks the request itself, so the
// receiver skips Validate and answers that sink's refusal as a failed
// Validate. A request is acknowledged only after every sink returned;
// partial success (rejected_*, error_message) comes from the sinks'
// Outcomes. Refusals follow one table, pipeline.Kind's: 400 bad data, 413
// too large, 415 unsupported media type or encoding, 429 with Retry-After
// / RESOURCE_EXHAUSTED with RetryInfo when over the in-flight budget or a
// sink is overloaded, 503 / UNAVAILABLE when a sink fails, 401 with
// WWW-Authenticate / UNAUTHENTICATED without valid credentials; HTTP error
// bodies are google.rpc.Status in the request's content type.
//
// A sink that panics (a bug) would stop the process, since grpc-go does
// not recover handler panics: the receiver recovers it, hands the request
// to Config.Quarantine (serve's is <data_dir>/quarantine), logs it with
// its stack and refuses it 500 / INTERNAL, which OTLP exporters do not
// retry.
//
// # Limits
//
// Every byte a request holds (body, decompressed body, JSON decoding, the
// gRPC message, the copy a deprecated layout needs) is reserved from a
// non-blocking in-flight budget (Config.MaxInflightBytes, 128 MiB) before
// it is held (budget.go); past the budget the request is refused, never
// queued, so memory stays bounded under overload. OTLP/JSON reserves 6
// times its size for pdata's decoding (jsonFactor: measured on 2026-11-26
// at 5.7 times for one record of a million small attributes, 3 times for
// typical logs), so a JSON request over about a seventh of the budget is
// refused 413 (send it as protobuf, or in smaller requests). gRPC reads a
// call's whole message before any handler runs, so the tap reserves the
// largest message (twice for a compressed call) when the call starts, the
// handler gives back what the message did not need, and a stats handler
// releases the rest when the call ends; the default budget then admits 16
// compressed calls at once. A request that could not fit even on an idle
// server is refused as too large, one that does not fit now as busy. HTTP
// header, read, write and idle timeouts and the gRPC handshake timeout
// close slow clients.
//
// # Metrics
//
// wirehouse_receiver_requests_total (by signal, transport, outcome,
// reason), wirehouse_receiver_accepted_records_total and
// wirehouse_receiver_refused_records_total, request size and duration
// histograms, wirehouse_receiver_inflight_bytes and its limit.
//
// # Clients tested
//
// The OpenTelemetry Go SDK's exporters (gRPC and HTTP, gzip; e2e_test.go),
// telemetrygen (telemetrygen_test.go, TLS included), raw HTTP for JSON and
// zstd (http_test.go), and in cmd/wirehouse the OpenTelemetry Python SDK's
// exporters (TestServePythonSDK reads every log and span back from the
// lake and the metrics through PromQL). Malformed, oversized, lying,
// stalled and slow clients: badinput_test.go, FuzzHTTPBody.
package receiver
