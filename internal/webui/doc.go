// Package webui serves wirehouse's web pages on the admin port: a status
// page at / (what comes in, what is refused, the spool, the lake, the
// metric store, forwarding, the build and settings), a PromQL explorer at
// /graph, trace search (Jaeger's form, or TraceQL with completion of
// scopes, attribute names and values; above the results, the searched
// service's RED panels: its server and consumer spans' rate, error ratio
// and p95 duration from the span metrics, none when it has none) and trace
// view at /traces and /trace/{id}, a service map at /services (the service
// graph's nodes, virtual ones included, and client → server edges over a
// time range, as an SVG graph laid out in layers from the callers no one
// calls, colored by error ratio, edges as thick as their rate, and a table
// of the edges with their type, rate, failed share and p50/p95 latency; a
// service's node opens its trace search), a LogQL log browser at /logs
// (with Logs Drilldown's tabs: the query's detected fields and their
// values, its patterns, and the services by volume, each with filters to
// add), and the alerts and rules at /alerts (as Prometheus' /alerts and
// /rules: the firing then pending alerts with their labels, value and
// active-since; the PromQL and LogQL rule groups, each rule with its
// state, health and last error, last evaluation and its duration, its
// query opening /graph or /logs as the alerts' generator URLs do; a filter
// by state, health and text; the Alertmanagers).
//
// The pages are static files embedded in the binary (static/: HTML, CSS
// and ES modules with no build step; uPlot 1.6.32, vendored with its MIT
// licence, draws the charts) that call the admin port's own APIs from the
// browser, as Grafana would: Prometheus' /api/v1/query_range, query,
// labels, label values and status/tsdb (the RED panels and the service map
// query the series internal/tracemetrics makes, traces_span_metrics_* and
// traces_service_graph_*); Jaeger's /jaeger/api/...; Tempo's
// /tempo/api/search and its tag names and values; Loki's
// /loki/api/v1/query_range, labels and label values (the log volume is a
// sum by (detected_level) (count_over_time(...)) range query),
// detected_fields and detected_field values, patterns and index/volume;
// the rules in Prometheus' shape, /api/v1/rules (PromQL) and Loki's
// /prometheus/api/v1/rules (LogQL), and /api/v1/alertmanagers; and one of
// this package, /api/wirehouse/status. Each file is gzipped once at start
// (about 105 KB in all; TestAssetsEmbedded fails past 500 KiB) and served
// with a content ETag, Cache-Control: no-cache (revalidated, so a new
// binary's files are never mixed with an old one's) and a
// Content-Security-Policy that allows this origin only (no CDN, no web
// font, no inline script).
//
// # Status history
//
// A Sampler gathers the server's registry (what /metrics shows) every
// Config.Interval (5 s) into a ring of Config.Window (15 minutes): the
// families the page draws (views in sampler.go), each summed over the
// labels it does not keep; at most 5,000 series, a series gone for a whole
// window forgotten. /api/wirehouse/status answers the ring as JSON: per
// view its series' values (per-second rates for counters, a reset counting
// from zero), the newest total, the last minute's rate, the age of the
// oldest spooled request not in the lake yet, the build and the settings
// in brief (no secrets). So the status page draws the last minutes the
// moment it opens. It answers as the read APIs do: readapi.Handle runs it
// with the request's tenant in its context and writes what it returns as
// JSON, or an error as {"error": message} with its kind's status. serve
// runs the sampler with the lake loader and stops it before the storage
// closes.
//
// # Auth
//
// The pages' code is the same for everyone and holds no data, so the admin
// server serves it without a bearer token (Public says which requests
// those are): a browser sends no Authorization header when it navigates.
// The pages ask for a token when an API answers 401, keep it in the tab's
// sessionStorage and send it with every API call; every API,
// /api/wirehouse/status included, still needs it. With Config.Restrict
// (serve: admin bearer tokens) the status history shows a request the
// tenant-labelled series (records per service, the lake's usage) of its
// own tenant only (its token's, else Config.Tenant, by readapi.TenantRule;
// no header names one), and an operator's token (Config.AllTenants) every
// tenant's: TenantRule names one tenant, so seeing all is this package's
// own rule.
//
// # Tests
//
// Unit tests hold the files embedded and small, the serving (gzip, 304,
// headers), Public, the top bar's links (each a page app.js routes), and
// the sampler's rates, ring and tenant filter.
// TestBrowser starts a real serve fed by internal/loadgen and drives the
// pages in headless Chromium (chromedp; WIREHOUSE_CHROMIUM, which make
// test sets): rates per signal on the status page, a PromQL graph and its
// completions, a trace search whose trace view has as many rows as the
// Jaeger API has spans, log lines with their metadata and a trace link,
// the alerts page against the rules APIs of that serve's rule files
// (browser_alerts_test.go: firing, pending and inactive alerts, a failing
// rule's error, a PromQL and a LogQL group, the Alertmanager, a fake one
// recording the notifications; the query links and the notifications'
// generator URLs open the metrics and logs pages on the rule's query), the
// service map and RED panels (browser_services_test.go: a serve of their
// own fed internal/tracemetrics/graphtest's trace over OTLP/HTTP, trace
// metrics flushed every second: the nodes and their kinds, the edges drawn
// and tabled with their type, rate, failed share and latencies, a node
// opening the traces search whose RED panels draw, and their link back to
// the map focused on the service), the token form, then the alerts page's
// and the service map's empty states; any console error or failed request
// fails it. It logs each page's first contentful paint and the time until
// its data is drawn, and writes the README's screenshots with
// WIREHOUSE_SCREENSHOTS (make screenshots).
//
// The files: webui.go the Handler and its routes, assets.go the embedded
// files, sampler.go the metrics history, status.go its JSON and the
// status API's wire format.
package webui
