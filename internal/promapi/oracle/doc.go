// Package oracle holds one test, TestOracle: Prometheus' own HTTP API
// (web/api/v1, the code behind every Prometheus server's /api/v1) and
// wirehouse's promapi, each over the same TSDB, get the same corpus of
// requests, and must answer each with the same status code and the same
// JSON, but for the few differences the test names and explains.
//
// It is a module of its own (see go.mod) and so not part of `go test ./...`
// at the repository root: run it with `go test ./...` in this directory.
package oracle
