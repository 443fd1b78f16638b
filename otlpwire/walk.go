package otlpwire

import "errors"

// Walks: one callback per container and per record, for a consumer that
// reads the whole request resource by resource, scope by scope. They
// replace the three nested range loops (each with its error check) that
// such a consumer otherwise writes:
//
//	err := otlpwire.TracesRequest(body).Walk(otlpwire.SpanVisitor{
//		ResourceSpans: func(rs otlpwire.ResourceSpans) error { ... },
//		Span:          func(sp otlpwire.Span) error { ... },
//	})
//
// A walk costs no heap allocation when the callbacks do not escape: build
// the visitor where Walk is called, as above. The Walk methods are kept
// out of their callers (go:noinline): inlined, they would hand the
// callbacks to the generic walk from the caller's package, and the
// compiler treats a function value handed to a generic function of another
// package as escaping (see seq), which costs a heap allocation a callback.

// Skip, returned by a ResourceX or ScopeX callback of a Walk, passes over
// the contents of that container, unread: its scopes, or its records.
// Returned by a record callback, it passes over the rest of that scope's
// records; returned by a ResourceXEnd callback, it changes nothing. Walk
// never returns it.
var Skip = errors.New("otlpwire: skip the rest of this container")

// errStopped carries a callback's error up through the levels of a walk,
// which leave it alone (within changes *Error values only); the walk then
// returns the callback's error itself.
var errStopped = errors.New("otlpwire: walk stopped by its callback")

// LogVisitor holds the callbacks of LogsRequest.Walk. A nil callback is not
// called; the walk goes on below it.
//
// ResourceLogsEnd is called with a resource container once its scopes have
// been walked, for what a consumer does with a resource as a whole (flush
// what it gathered from the records): not when ResourceLogs returned Skip
// for it, nor when the walk stopped within it.
type LogVisitor struct {
	ResourceLogs    func(ResourceLogs) error // before the resource's scopes
	ScopeLogs       func(ScopeLogs) error    // before the scope's records
	LogRecord       func(LogRecord) error
	ResourceLogsEnd func(ResourceLogs) error // after the resource's scopes
}

// Walk calls v's callbacks with every resource container, scope container
// and log record of the request, in order, each container before what it
// holds, and each resource container again after it (ResourceLogsEnd). It
// returns the first error: a callback's as it is (Skip excepted), or a
// malformed container's as an *Error with the path and offset relative to
// the request. It reads the containers' framing only, as the iterators do:
// what the callbacks do not read is not checked. It does not allocate
// unless a container is malformed.
//
//go:noinline
func (r LogsRequest) Walk(v LogVisitor) error {
	return walk(r, logLevels, v.ResourceLogs, v.ScopeLogs, v.LogRecord, v.ResourceLogsEnd)
}

// SpanVisitor holds the callbacks of TracesRequest.Walk, as LogVisitor
// does for logs.
type SpanVisitor struct {
	ResourceSpans    func(ResourceSpans) error // before the resource's scopes
	ScopeSpans       func(ScopeSpans) error    // before the scope's spans
	Span             func(Span) error
	ResourceSpansEnd func(ResourceSpans) error // after the resource's scopes
}

// Walk is LogsRequest.Walk for traces: every resource container, scope
// container and span.
//
//go:noinline
func (r TracesRequest) Walk(v SpanVisitor) error {
	return walk(r, spanLevels, v.ResourceSpans, v.ScopeSpans, v.Span, v.ResourceSpansEnd)
}

// MetricVisitor holds the callbacks of MetricsRequest.Walk, as LogVisitor
// does for logs.
type MetricVisitor struct {
	ResourceMetrics    func(ResourceMetrics) error // before the resource's scopes
	ScopeMetrics       func(ScopeMetrics) error    // before the scope's metrics
	Metric             func(Metric) error
	ResourceMetricsEnd func(ResourceMetrics) error // after the resource's scopes
}

// Walk is LogsRequest.Walk for metrics: every resource container, scope
// container and metric (the data points are the Metric callback's to
// read).
//
//go:noinline
func (r MetricsRequest) Walk(v MetricVisitor) error {
	return walk(r, metricLevels, v.ResourceMetrics, v.ScopeMetrics, v.Metric, v.ResourceMetricsEnd)
}

// walk is the Walk of the three signals: the resource containers of req,
// the scopes of each (field 2) and the records of each scope (field 2),
// named by names for errors, then onResourceEnd with each resource.
func walk[RC, SC, Rec ~[]byte](req []byte, names []string, onResource func(RC) error, onScope func(SC) error, onRecord func(Rec) error, onResourceEnd func(RC) error) error {
	var failed error // the callback's error that stopped the walk
	err := eachChild(req, fieldResources, names[0], func(rc []byte) error {
		if skip, err := visit(onResource, rc, &failed); skip || err != nil {
			return err
		}
		err := eachChild(rc, fieldChildren, names[1], func(sc []byte) error {
			if skip, err := visit(onScope, sc, &failed); skip || err != nil {
				return err
			}
			err := eachChild(sc, fieldChildren, names[2], func(rec []byte) error {
				skip, err := visit(onRecord, rec, &failed)
				if skip {
					return Skip // ends this scope's records
				}
				return err
			})
			if err == Skip {
				return nil
			}
			return err
		})
		if err != nil {
			return err
		}
		_, err = visit(onResourceEnd, rc, &failed) // Skip changes nothing
		return err
	})
	if err == errStopped {
		return failed
	}
	return err
}

// visit calls fn, if set, with b and says whether it returned Skip. Any
// other error it keeps in *failed, and returns errStopped.
func visit[T ~[]byte](fn func(T) error, b []byte, failed *error) (skip bool, err error) {
	if fn == nil {
		return false, nil
	}
	switch err := fn(T(b)); err {
	case nil:
		return false, nil
	case Skip:
		return true, nil
	default:
		*failed = err
		return false, errStopped
	}
}
