// Package grafanacheck holds one end-to-end test: `wirehouse serve`, built
// from this repository, queried through Grafana's Prometheus data source
// library (github.com/grafana/grafana/pkg/promlib), as a Grafana server
// configured with a Prometheus data source pointing at serve's admin port
// would query it.
//
// The test sends known metrics over OTLP/HTTP JSON, then checks what
// Grafana makes of serve's answers: the data source health check and its
// Prometheus-or-Mimir heuristics, range and instant queries (values and
// timestamps against the samples sent), exemplars, native histograms,
// PromQL errors, and the resource calls of Grafana's query editor (labels,
// label values, series, metadata, suggestions), with the data source set to
// POST and to GET.
//
// Run it with `go test ./...` in this directory (make test does); it needs
// the go command to build wirehouse.
package grafanacheck
