// Package overrides holds per-tenant limits, read from a YAML file that
// is re-read when it changes, without a restart, as Mimir's and Loki's
// runtime overrides are:
//
//	defaults:               # every tenant not listed below
//	  logs: {records_per_second: 50000}
//	overrides:
//	  team-a:               # starts from the defaults
//	    logs:    {records_per_second: 1000, bytes_per_second: 1MiB}
//	    traces:  {records_per_second: 5000, records_burst: 20000}
//	    metrics: {records_per_second: 20000}
//	    inflight_share: 0.25
//	    lake_retention: 7d
//	    metrics_retention: 24h
//	    max_active_series: 100000
//	    max_concurrent_queries: 2
//	    max_query_range: 30d
//
// The default tenant goes by its configured name (serve: lake.tenant).
// Unknown fields are errors. A file that fails to read or parse later
// leaves the limits in force, is logged and counted
// (wirehouse_overrides_reloads_total{result="error"}), and is read again
// once it changes.
//
// Ingestion rates are token buckets (golang.org/x/time/rate) per tenant
// and signal, for records and for bytes; Admit takes a request from both
// or neither, and its refusal is the pipeline's own: KindOverloaded with
// the wait after which the request would fit (429 with Retry-After over
// HTTP, RESOURCE_EXHAUSTED with RetryInfo over gRPC: exporters retry),
// or KindTooLarge for a request larger than a burst. Nothing refused was
// acknowledged. The in-flight share bounds the bytes one tenant's
// requests hold in the receiver's in-flight budget, so one tenant's burst
// cannot take it all. max_active_series goes to the metric store
// (metricstore.Config.SeriesLimit). lake_retention replaces
// lake.retention for the tenant's partitions (lake.Retention.TenantMaxAge,
// local or in a bucket); metrics_retention removes the tenant's samples
// older than it from the metric store every minute
// (metricstore.Store.TenantRetention: tombstones, then the blocks
// rewritten without them). The query limits go to the query budget
// (querybudget.Config.PerTenant): max_concurrent_queries in place of
// limits.queries' per-tenant bound, and max_query_range, which every read
// API checks (readapi.CheckRange) before it reads.
package overrides
