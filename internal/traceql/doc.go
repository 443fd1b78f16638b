// Package traceql parses TraceQL, the query language of Tempo's search
// and metrics APIs, into a tree: spanset filters over intrinsics and
// scoped attributes, spanset operators (&&, ||, the structural >, >>, <,
// <<, ~, their negations and their unions), pipelines (aggregate
// filters, by, select, coalesce) and metrics functions (rate,
// count_over_time, the *_over_time of a field, quantile_over_time,
// histogram_over_time, compare; by; topk and bottomk; with hints). It
// imports no net/http and evaluates nothing.
//
// It is written from Tempo's public TraceQL documentation (Tempo is
// AGPL-3.0: none of its code is used or read), as internal/logql is for
// LogQL: lex.go the lexer, parse.go a recursive-descent parser, ast.go
// the tree and String. Errors are *ParseError with the line and column of
// the problem, as Tempo answers a malformed query. String gives a query
// back in a canonical form (every operator parenthesised) that parses to
// the same tree; FuzzParse holds the parser to that and to never
// panicking.
//
// Precedence, loosest first: in a spanset expression ||, then &&, then
// the structural operators; in a field expression ||, &&, the
// comparisons (which do not chain), + and -, * / and %, then ^ (right to
// left) and the unary ! and -.
package traceql
