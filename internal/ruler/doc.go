// Package ruler evaluates recording and alerting rules, per tenant, with
// Prometheus' own rules package and sends the alerts with its notifier.
//
// Each tenant named in Config.Tenants gets two rules.Managers, each with
// a context carrying the tenant (internal/tenant), so that every query a
// rule runs and every sample it writes (recorded series, ALERTS,
// ALERTS_FOR_STATE) is that tenant's alone in the metric store:
//
//   - a Prometheus one over PromQL: its files in Prometheus' rule format,
//     its queries run by the PromQL engine over the metric store;
//   - a LogQL one: files in the format of Loki's ruler (Prometheus' rule
//     format with LogQL expressions), each expr parsed by the LogQL parser
//     and kept as a logqlExpr, a parser.Expr that only prints itself, and
//     evaluated as an instant metric query by internal/logql/eval over
//     the lake and the spool. Its results are recorded, and alert, as a
//     PromQL rule's would.
//
// Every evaluation is a query of the read side: it is admitted into the
// query budget (querybudget.Gate) as the tenant's, and refused as the
// APIs' queries are when the budget is spent, which shows as the rule's
// health "err" and its lastError until a later evaluation succeeds.
//
// Rule files are globs, expanded again at every load. Reload (SIGHUP in
// serve) and a change of the set of files or of any file (looked at every
// Config.WatchEvery) load them all again; when any fails to load or
// parse, every manager keeps the rules it had and Reload returns the
// error, as Prometheus keeps its previous rule set. At start, New refuses
// a bad file with its error.
//
// Pending alerts survive a restart as in Prometheus: each alerting rule
// writes ALERTS_FOR_STATE, and a new manager restores its alerts'
// active-since from it (within Config.OutageTolerance, with
// Config.ForGracePeriod), so an alert pending at a kill -9 is still
// pending after, with its original start.
//
// Notifications go to the Alertmanagers of Config.Alerting (Prometheus'
// alerting block: alertmanagers with their static_configs, auth, TLS,
// path prefix, API version and timeout, and alert_relabel_configs),
// through one notifier.Manager fed by a discovery.Manager, as Prometheus
// does. An alert of tenant t carries the label TenantLabel="t" (none for
// the default tenant), added when it is sent; a LogQL alert's generator
// URL opens the web UI's logs page on its query.
package ruler
