// Package wirewalk holds the deep walks over OTLP requests that otlpwire's
// benchmarks, allocation tests and the tools/wirecompare harness share.
// They are ordinary code in a package other than otlpwire, written as a
// consumer would write them, so what they cost is what such a consumer
// pays: otlpwire's promises (no heap allocation, its speed) are about that
// caller, not about code inside the package.
package wirewalk

import "github.com/wirehouse/wirehouse/otlpwire"

func useValue(v otlpwire.Value) int {
	switch v.Type() {
	case otlpwire.ValueString:
		return len(v.Str())
	case otlpwire.ValueInt:
		return int(v.Int())
	case otlpwire.ValueDouble:
		return int(v.Double())
	case otlpwire.ValueBool:
		if v.Bool() {
			return 1
		}
	case otlpwire.ValueBytes:
		return len(v.Bytes())
	case otlpwire.ValueArray, otlpwire.ValueKVList:
		return 1
	}
	return 0
}

func walkAttrs(a otlpwire.Attributes) (int, error) {
	n := 0
	for kv, err := range a.All() {
		if err != nil {
			return 0, err
		}
		n += len(kv.Key) + useValue(kv.Value)
	}
	return n, nil
}

func walkHeaders(r otlpwire.Resource, s otlpwire.Scope) (int, error) {
	var rf otlpwire.ResourceFields
	if err := r.Read(&rf); err != nil {
		return 0, err
	}
	var sf otlpwire.ScopeFields
	if err := s.Read(&sf); err != nil {
		return 0, err
	}
	a, err := walkAttrs(rf.Attributes)
	if err != nil {
		return 0, err
	}
	c, err := walkAttrs(sf.Attributes)
	return a + c + len(sf.Name), err
}

func deepWalkLogs(in []byte) (int, error) {
	n := 0
	var f otlpwire.LogRecordFields
	for rl, err := range otlpwire.LogsRequest(in).ResourceLogs() {
		if err != nil {
			return 0, err
		}
		r, err := rl.Resource()
		if err != nil {
			return 0, err
		}
		for sl, err := range rl.ScopeLogs() {
			if err != nil {
				return 0, err
			}
			s, err := sl.Scope()
			if err != nil {
				return 0, err
			}
			h, err := walkHeaders(r, s)
			if err != nil {
				return 0, err
			}
			n += h
			for lr, err := range sl.LogRecords() {
				if err != nil {
					return 0, err
				}
				if err := lr.Read(&f); err != nil {
					return 0, err
				}
				a, err := walkAttrs(f.Attributes)
				if err != nil {
					return 0, err
				}
				n += int(f.Time&0xff) + a
			}
		}
	}
	return n, nil
}

func deepWalkTraces(in []byte) (int, error) {
	n := 0
	var f otlpwire.SpanFields
	for rs, err := range otlpwire.TracesRequest(in).ResourceSpans() {
		if err != nil {
			return 0, err
		}
		r, err := rs.Resource()
		if err != nil {
			return 0, err
		}
		for ss, err := range rs.ScopeSpans() {
			if err != nil {
				return 0, err
			}
			s, err := ss.Scope()
			if err != nil {
				return 0, err
			}
			h, err := walkHeaders(r, s)
			if err != nil {
				return 0, err
			}
			n += h
			for sp, err := range ss.Spans() {
				if err != nil {
					return 0, err
				}
				if err := sp.Read(&f); err != nil {
					return 0, err
				}
				a, err := walkAttrs(f.Attributes)
				if err != nil {
					return 0, err
				}
				n += int(f.StartTime&0xff) + a
			}
		}
	}
	return n, nil
}

func deepWalkMetrics(in []byte) (int, error) {
	n := 0
	var mf otlpwire.MetricFields
	for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
		if err != nil {
			return 0, err
		}
		r, err := rm.Resource()
		if err != nil {
			return 0, err
		}
		for sm, err := range rm.ScopeMetrics() {
			if err != nil {
				return 0, err
			}
			s, err := sm.Scope()
			if err != nil {
				return 0, err
			}
			h, err := walkHeaders(r, s)
			if err != nil {
				return 0, err
			}
			n += h
			for m, err := range sm.Metrics() {
				if err != nil {
					return 0, err
				}
				if err := m.Read(&mf); err != nil {
					return 0, err
				}
				k, err := walkPoints(&mf)
				if err != nil {
					return 0, err
				}
				n += k
			}
		}
	}
	return n, nil
}

func walkPoints(mf *otlpwire.MetricFields) (int, error) {
	n := 0
	var nf otlpwire.NumberDataPointFields
	for p, err := range mf.NumberDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&nf); err != nil {
			return 0, err
		}
		a, err := walkAttrs(nf.Attributes)
		if err != nil {
			return 0, err
		}
		n += int(nf.Time&0xff) + a
	}
	var hf otlpwire.HistogramDataPointFields
	for p, err := range mf.HistogramDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&hf); err != nil {
			return 0, err
		}
		a, err := walkAttrs(hf.Attributes)
		if err != nil {
			return 0, err
		}
		n += int(hf.Time&0xff) + a
	}
	var ef otlpwire.ExponentialHistogramDataPointFields
	for p, err := range mf.ExponentialHistogramDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&ef); err != nil {
			return 0, err
		}
		a, err := walkAttrs(ef.Attributes)
		if err != nil {
			return 0, err
		}
		n += int(ef.Time&0xff) + a
	}
	var sf otlpwire.SummaryDataPointFields
	for p, err := range mf.SummaryDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&sf); err != nil {
			return 0, err
		}
		a, err := walkAttrs(sf.Attributes)
		if err != nil {
			return 0, err
		}
		n += int(sf.Time&0xff) + a
	}
	return n, nil
}

// Deep reads every record of in (a request of signal s): its timestamp,
// every attribute of the record, its resource and its scope, and the
// scope's name, through the Read methods and attribute iterators, and
// returns a checksum of what it read. The metrics walk reads every point
// kind. It checks what it reads, not the rest (exemplars, metric
// metadata, nested values): see ValidatingMetrics.
func Deep(s otlpwire.Signal, in []byte) (int, error) {
	switch s {
	case otlpwire.SignalLogs:
		return deepWalkLogs(in)
	case otlpwire.SignalTraces:
		return deepWalkTraces(in)
	}
	return deepWalkMetrics(in)
}

// checkAttrs is walkAttrs that also checks each pair's nested value, as
// Validate does.
func checkAttrs(a otlpwire.Attributes) (int, error) {
	n := 0
	for kv, err := range a.All() {
		if err != nil {
			return 0, err
		}
		if err := kv.Value.Validate(); err != nil {
			return 0, err
		}
		n += len(kv.Key) + useValue(kv.Value)
	}
	return n, nil
}

// ValidatingMetrics is Deep for metrics that also checks what Deep does
// not read (schema URLs, metric metadata, exemplars, exponential buckets,
// quantiles, nested attribute values), so that it accepts exactly the
// requests MetricsRequest.Validate accepts: it validates as it reads, in
// one pass, where a consumer would otherwise call Validate and then walk.
func ValidatingMetrics(in []byte) (int, error) {
	n := 0
	var mf otlpwire.MetricFields
	var rf otlpwire.ResourceFields
	var sf otlpwire.ScopeFields
	for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
		if err != nil {
			return 0, err
		}
		r, err := rm.Resource()
		if err != nil {
			return 0, err
		}
		if _, err := rm.SchemaURL(); err != nil {
			return 0, err
		}
		if err := r.Read(&rf); err != nil {
			return 0, err
		}
		ra, err := checkAttrs(rf.Attributes)
		if err != nil {
			return 0, err
		}
		for sm, err := range rm.ScopeMetrics() {
			if err != nil {
				return 0, err
			}
			s, err := sm.Scope()
			if err != nil {
				return 0, err
			}
			if _, err := sm.SchemaURL(); err != nil {
				return 0, err
			}
			if err := s.Read(&sf); err != nil {
				return 0, err
			}
			a, err := checkAttrs(sf.Attributes)
			if err != nil {
				return 0, err
			}
			n += ra + a + len(sf.Name) // as Deep counts: the resource's once per scope
			for m, err := range sm.Metrics() {
				if err != nil {
					return 0, err
				}
				if err := m.Read(&mf); err != nil {
					return 0, err
				}
				if _, err := checkAttrs(mf.Metadata); err != nil {
					return 0, err
				}
				k, err := checkPoints(&mf)
				if err != nil {
					return 0, err
				}
				n += k
			}
		}
	}
	return n, nil
}

// checkExemplars checks a point's exemplars. Most points have none: Len
// answers that without a scan, and the iterator is set up only for the
// others.
func checkExemplars(l otlpwire.List[otlpwire.Exemplar]) error {
	if n, err := l.Len(); n == 0 || err != nil {
		return err
	}
	var xf otlpwire.ExemplarFields
	for x, err := range l.All() {
		if err != nil {
			return err
		}
		if err := x.Read(&xf); err != nil {
			return err
		}
		if _, err := checkAttrs(xf.FilteredAttributes); err != nil {
			return err
		}
	}
	return nil
}

func checkPoints(mf *otlpwire.MetricFields) (int, error) {
	n := 0
	var nf otlpwire.NumberDataPointFields
	for p, err := range mf.NumberDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&nf); err != nil {
			return 0, err
		}
		a, err := checkAttrs(nf.Attributes)
		if err != nil {
			return 0, err
		}
		if err := checkExemplars(nf.Exemplars); err != nil {
			return 0, err
		}
		n += int(nf.Time&0xff) + a
	}
	var hf otlpwire.HistogramDataPointFields
	for p, err := range mf.HistogramDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&hf); err != nil {
			return 0, err
		}
		a, err := checkAttrs(hf.Attributes)
		if err != nil {
			return 0, err
		}
		if err := checkExemplars(hf.Exemplars); err != nil {
			return 0, err
		}
		n += int(hf.Time&0xff) + a
	}
	var ef otlpwire.ExponentialHistogramDataPointFields
	for p, err := range mf.ExponentialHistogramDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&ef); err != nil {
			return 0, err
		}
		if _, err := ef.Positive.BucketCounts.Len(); err != nil {
			return 0, err
		}
		if _, err := ef.Negative.BucketCounts.Len(); err != nil {
			return 0, err
		}
		a, err := checkAttrs(ef.Attributes)
		if err != nil {
			return 0, err
		}
		if err := checkExemplars(ef.Exemplars); err != nil {
			return 0, err
		}
		n += int(ef.Time&0xff) + a
	}
	var sf otlpwire.SummaryDataPointFields
	for p, err := range mf.SummaryDataPoints().All() {
		if err != nil {
			return 0, err
		}
		if err := p.Read(&sf); err != nil {
			return 0, err
		}
		a, err := checkAttrs(sf.Attributes)
		if err != nil {
			return 0, err
		}
		for q, err := range sf.QuantileValues.All() {
			if err != nil {
				return 0, err
			}
			if _, _, err := q.Read(); err != nil {
				return 0, err
			}
		}
		n += int(sf.Time&0xff) + a
	}
	return n, nil
}
