// Package eval evaluates TraceQL (parsed by internal/traceql) over
// traces: Compile turns a query into a Query, whose Eval runs its
// pipeline over one trace's spans and gives the spansets it selects. It
// imports no net/http and reads no storage: the caller gives it traces
// (Span, the fields TraceQL reads), the Tempo API turns the spansets into
// Tempo's JSON.
//
// Semantics, from Tempo's public TraceQL documentation:
//
//   - A filter { cond } keeps the spans for which cond is the boolean
//     true. An attribute that is absent is nil: = nil holds for it, != nil
//     for any present one, and it satisfies no other comparison (!= "x"
//     included). Values of types that do not compare (a string and a
//     number) satisfy none either; integers, floats and durations compare
//     as numbers. =~ and !~ are regular expressions anchored at both ends.
//   - Unscoped attributes (.x) are the span's, else its resource's.
//     Conditions on event. and link. fields hold for a span when they hold
//     with one of its events (and one of its links).
//   - && of spansets: both sides selected spans, and the answer is both
//     sides' spans; ||: either side's. The structural operators > >> < <<
//     ~ keep the right side's spans that are a child, descendant, parent,
//     ancestor or sibling of a left side's span; their negations !> ...
//     the right side's spans that are not; their unions &> ... the spans
//     of both sides that stand in the relation.
//   - Structure is the spans the trace has: a span whose parent is not
//     among them is a root of what was read (nestedSetParent -1), and
//     rootName and rootServiceName are those of the earliest span without
//     a parent id.
//   - A pipeline's stages see the spansets of the one before: a spanset
//     filter keeps their matching spans, a scalar filter (count(), avg,
//     min, max, sum of a field over the spans that have a number for it)
//     keeps the spansets it holds for, by() splits them by the values of
//     fields, coalesce() merges them, select() names fields for the
//     answer.
//
// Metrics (metrics.go) run a query's pipeline over each trace with a span
// its hint admits, at most MetricsLimits.MaxTraces of them; compare()
// (compare.go) too, counting each selected span's attributes (resource,
// span, and name, kind, status) by value in the selection or the baseline
// (TestMetricsCompare). A span-local
// query (spanwise.go: one spanset filter of resource.service.name, name,
// kind and status equalities and duration bounds joined by &&; a field of
// duration or none; by() of those four) needs no trace around a span: a
// SpanSource gives its spans one at a time, read from columns, with no
// bound on their number (FuzzMetricsSpanwise and TestMetricsSpanwise hold
// its answers to the evaluator's over whole traces). Two edges differ in
// principle: a service.name that is not a string or is empty groups under
// nil, and OTLP kinds or status codes outside their enums are compared as
// sent (the trace path clamps them).
//
// A search whose filter is span-local and has a condition span.key op
// integer (which no hint narrows) asks a SpanSource for the matching spans
// in the range (spanSearch: their attribute from a typed integer column,
// so a value sent as a double is not matched), takes their traces most
// recent first and reads only those whole (TestSearchSpanwise). A
// NewestSource is first asked for the newest spans alone (4*Limit of them
// past a cutoff it names, every span ending after it given): the traces
// ending after the cutoff are the first of the whole order, so when Limit
// of them match they are the answer, and otherwise every span is read
// (TestSearchNewest).
package eval
