package otlpwire_test

import "github.com/wirehouse/wirehouse/otlpwire"

// The deep walks the benchmarks and the allocation test share. They are
// in the external test package on purpose: what they cost is what a
// caller in another package pays, and the package's promises (no heap
// allocation) are about that caller.

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

func deepWalkWire(s otlpwire.Signal, in []byte) (int, error) {
	switch s {
	case otlpwire.SignalLogs:
		return deepWalkLogs(in)
	case otlpwire.SignalTraces:
		return deepWalkTraces(in)
	}
	return deepWalkMetrics(in)
}
