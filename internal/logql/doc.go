// Package logql parses LogQL, the query language of Loki's HTTP API, into
// an expression tree: log queries (a stream selector and a pipeline of
// line filters, parsers, label filters and formatters) and metric queries
// (range aggregations over log queries, vector aggregations, binary
// operations). internal/logql/eval evaluates the tree; this package
// imports no net/http and evaluates nothing.
//
// The files follow Loki's own layout of its syntax package: lex.go the
// hand-written lexer, parse.go the recursive-descent parser, ast.go the
// tree and String. It is written from Loki's public LogQL documentation
// (Loki is AGPL-3.0: none of its code is used). Errors carry the line and
// column of the problem. String gives a query back in a canonical form
// that parses to the same tree; FuzzParse holds the parser to that and to
// never panicking.
package logql
