// Package promapi serves Prometheus' HTTP API over any storage.Queryable,
// with Prometheus' own PromQL engine, so that promtool, Grafana's
// Prometheus data source and the client_golang API client work against
// wirehouse unchanged: the read side, and as Config sets, the exemplar,
// metadata, TSDB status and admin endpoints:
//
//	GET|POST /api/v1/query               query, time, timeout, limit
//	GET|POST /api/v1/query_range         query, start, end, step, timeout, limit
//	GET|POST /api/v1/series              match[], start, end, limit
//	GET|POST /api/v1/labels              match[], start, end, limit
//	GET      /api/v1/label/<name>/values match[], start, end, limit
//	GET|POST /api/v1/format_query        query
//	GET      /api/v1/status/buildinfo
//	GET|POST /api/v1/query_exemplars     query, start, end (with Config.Exemplars; else empty)
//	GET      /api/v1/metadata            metric, limit, limit_per_metric (with Config.Metadata; else empty)
//	GET      /api/v1/status/tsdb         limit (with Config.Head)
//	GET      /api/v1/rules               match[], type, exclude_alerts, rule_name[], rule_group[], file[], group_limit, group_next_token (Config.Rules)
//	GET      /api/v1/alerts              (Config.Rules)
//	GET      /api/v1/alertmanagers       (Config.Alertmanagers)
//	GET      /api/v1/targets, /api/v1/targets/metadata (always empty)
//	POST|PUT /api/v1/admin/tsdb/delete_series    match[], start, end (with Config.Admin; else 503)
//	POST|PUT /api/v1/admin/tsdb/clean_tombstones (with Config.Admin; else 503; default tenant only)
//	POST|PUT /api/v1/admin/tsdb/snapshot         skip_head (with Config.Admin; else 503; default tenant only)
//
// Parameters (read in Prometheus' order, so that of several bad ones the
// same is named), response envelopes ({"status":"success","data":...} or
// {"status":"error","errorType":...,"error":...}), error messages, status
// codes (204 and no body where there is no data: the admin endpoints that
// return nothing, query_exemplars of an expression without selectors; 400
// bad data, 422 execution error, 503 timeout or unavailable, 499
// canceled, 500 internal) and value encodings (timestamps as seconds,
// sample values as strings, native histograms with their buckets) are
// Prometheus'; values are written with Prometheus' util/jsonutil, scalars
// and strings as promql's MarshalJSON writes them.
//
// status/buildinfo gives wirehouse's version, with "application":
// "wirehouse" and "prometheusVersion", the engine's Prometheus version,
// beside it, and no "features", so that Grafana takes the server for a
// Prometheus (not a Mimir). rules and alerts are those of the request's
// tenant's RulesSource (internal/ruler's managers in serve; none: empty,
// as a Prometheus without rule files), in web/api/v1's shapes
// (RulesAnswer and AlertsAnswer, which lokiapi's ruler endpoints answer
// with too); targets are always empty. Responses
// are gzipped for clients that accept it. The files follow the endpoints:
// api.go the routes, wire.go the answers and how they are written,
// response.go the errors, params.go, query.go, series.go, exemplars.go,
// metadata.go, status.go, admin.go, rules.go, targets.go.
//
// Handlers return a result and one wrapper writes it, as Prometheus'
// web/api/v1 does with apiFuncResult and wrap. Each endpoint is a
// readapi.Func that reads its parameters, asks the storage and returns an
// answer (its data's writer, its warnings, what to release once it is
// written) or an error, writing nothing; readapi.Handle runs it and wire,
// Prometheus' wire format, writes what it returns: the success envelope,
// 204 and no body for an answer without data, or the error envelope,
// with the errorType of the handler's apiError or, for any other error (a
// panic in a handler; the query budget's refusals, which API.WriteError
// answers), the one of its readapi kind.
//
// # Why not Prometheus' web/api/v1
//
// Serving the API with Prometheus' own web/api/v1 was measured on
// 2026-11-26 with Prometheus v0.316.0: it added 81 packages (an OpenAPI
// library, Alertmanager's models, the rule manager, notifier and
// templates) and 41 % to the binary (+13.5 MB stripped; since serve
// evaluates rules, internal/ruler links the rule manager and notifier
// anyway), and its 44-argument NewAPI needs eight stubs. It reads metadata only from scrape
// targets, and serves TSDB status and the admin calls without a request
// context, so OTLP metadata, per-tenant status and the tenant 403 would
// sit in front of it anyway. So this package has its own handlers over
// Prometheus' engine, and the oracle below holds them to web/api/v1.
//
// # The oracle
//
// The module in ./oracle runs Prometheus' own web/api/v1 and this API over
// one TSDB and compares their answers to a corpus of requests (run `go
// test ./...` there; make test does); it keeps web/api/v1's modules out
// of wirehouse's go.mod. They differ on purpose in: 503, not Prometheus' 500,
// for errorType "unavailable" (the disabled admin endpoints); query times
// outside the years PromQL can evaluate (1677 to 2262) and NaN times,
// which Prometheus wraps around or misreads and this API refuses; series
// and label windows beyond Prometheus' time bounds, which here are the
// bounds; a bare context deadline from storage, a timeout here and an
// execution error there; metadata, which Prometheus has from its scrape
// targets and this API from a MetadataSource; and tenants (below).
// Prometheus' endpoints for what wirehouse does not have (configuration,
// flags, runtime information, scrape pools, the TSDB block list, WAL
// replay, notifications, search, parse_query, the OpenAPI document) are
// not served.
//
// # Tenants
//
// The API knows nothing of tenants but what it passes on (its handlers
// have no readapi.TenantRule): every storage call gets the request's
// context, which may carry a tenant (internal/tenant, set by the server's
// authentication), and the storage (metricstore) answers for that
// tenant alone: the Queryable's Select, LabelNames and LabelValues, the
// exemplar querier, the MetadataSource, the HeadStatser and the AdminDB's
// Delete. The two admin endpoints that act on the whole TSDB,
// clean_tombstones and snapshot, answer 403 (errorType "forbidden", which
// Prometheus does not have) to a request whose context carries a tenant
// other than the default.
//
// # Clients tested
//
// promtool; the client_golang API client; and internal/serve's
// TestPrometheusAPIClient, which makes the calls Grafana's Prometheus
// data source makes, by POST and by GET, with an admin bearer token: "Save
// & test", range and instant queries checked point by point against the
// samples sent over OTLP, native histograms, exemplars, a parse error,
// label names and values with matchers, series, metadata, format_query,
// and the 401 without the token. What Grafana's data source library does
// on its own side (data frames, legend templates) is not tested here: that
// library is AGPL-3.0.
package promapi
