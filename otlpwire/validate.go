package otlpwire

import (
	"google.golang.org/protobuf/encoding/protowire"
)

// Validate walks the whole request, every record and every attribute, and
// returns the first structural error as an *Error with the path and offset
// relative to the request: truncation, overlong varints, wrong wire types,
// groups, bad id lengths, malformed packed fields and AnyValue nesting
// deeper than MaxAnyValueDepth. Unknown fields are skipped. It does not
// check semantics (e.g. that bucket counts match bounds). It does not
// allocate unless it fails.
func (r LogsRequest) Validate() error {
	return eachChild(r, fieldResources, "resource_logs", func(rl []byte) error {
		return validateContainer(rl, resourceLogsSchema, validateResource, func(sl []byte) error {
			return validateContainer(sl, scopeLogsSchema, validateScope, validateLogRecord)
		})
	})
}

// Validate is LogsRequest.Validate for traces.
func (r TracesRequest) Validate() error {
	return eachChild(r, fieldResources, "resource_spans", func(rs []byte) error {
		return validateContainer(rs, resourceSpansSchema, validateResource, func(ss []byte) error {
			return validateContainer(ss, scopeSpansSchema, validateScope, validateSpan)
		})
	})
}

// Validate is LogsRequest.Validate for metrics.
func (r MetricsRequest) Validate() error {
	return eachChild(r, fieldResources, "resource_metrics", func(rm []byte) error {
		return validateContainer(rm, resourceMetricsSchema, validateResource, func(sm []byte) error {
			return validateContainer(sm, scopeMetricsSchema, validateScope, validateMetric)
		})
	})
}

// eachChild calls fn for every occurrence of the repeated message field num
// of msg and places its error at the child's index and offset.
func eachChild(msg []byte, num protowire.Number, name string, fn func([]byte) error) error {
	idx := 0
	var inner error
	err := repeated(msg, num, name, func(c []byte, base int) bool {
		if e := fn(c); e != nil {
			inner = within(e, name, idx, base)
			return false
		}
		idx++
		return true
	})
	if inner != nil {
		return inner
	}
	return err
}

// each is eachChild over a List.
func (l List[T]) each(fn func(T) error) error {
	if len(l.b) == 0 {
		return nil
	}
	err := eachChild(l.b, protowire.Number(l.num), l.name.String(), func(c []byte) error { return fn(T(c)) })
	return shift(err, int(l.off))
}

func containerSchema(header, child string) *schema {
	return newSchema(map[protowire.Number]fieldSpec{fieldHeader: bytesf(header), fieldChildren: bytesf(child), fieldSchemaURL: bytesf("schema_url")})
}

var (
	resourceLogsSchema    = containerSchema("resource", "scope_logs")
	scopeLogsSchema       = containerSchema("scope", "log_records")
	resourceSpansSchema   = containerSchema("resource", "scope_spans")
	scopeSpansSchema      = containerSchema("scope", "spans")
	resourceMetricsSchema = containerSchema("resource", "scope_metrics")
	scopeMetricsSchema    = containerSchema("scope", "metrics")
)

// validateContainer checks a resource or scope container: its header
// (field 1), its children (field 2) and schema_url (field 3).
func validateContainer(msg []byte, sc *schema, header, child func([]byte) error) error {
	headerName, childName := sc.fields[fieldHeader].name, sc.fields[fieldChildren].name
	idx := 0
	for i := 0; i < len(msg); {
		n, typ, _, s, j, err := next(msg, i)
		if err != nil && n == fieldChildren {
			return within(err, childName, idx, 0)
		}
		if err != nil || sc.bad(uint64(n)<<3|uint64(typ)) {
			if err := sc.fail(n, typ, i, err); err != nil {
				return err
			}
		}
		switch n {
		case fieldHeader:
			err = within(header(s), headerName, -1, j-len(s))
		case fieldChildren:
			err = within(child(s), childName, idx, j-len(s))
			idx++
		}
		if err != nil {
			return err
		}
		i = j
	}
	return nil
}

func validateResource(b []byte) error {
	var f ResourceFields
	if err := Resource(b).Read(&f); err != nil {
		return err
	}
	return validateAttrs(f.Attributes, 1)
}

func validateScope(b []byte) error {
	var f ScopeFields
	if err := Scope(b).Read(&f); err != nil {
		return err
	}
	return validateAttrs(f.Attributes, 1)
}

// Validate checks the parts of a request a walk may skip, as the request's
// Validate would: every pair and every nested value of the attributes, to
// MaxAnyValueDepth. Offsets in the error are relative to Raw.
//
// A consumer that reads the records of a request itself can combine these
// with its reads instead of calling the request's Validate first: Read
// checks a record's own fields, Validate on its Attributes, Resource, Scope
// and Exemplars the rest (see the request's Validate for the full list).
func (a Attributes) Validate() error { return validateAttrs(a, 1) }

// Validate checks a value's nested contents: every element of an array
// and every pair of a key-value list, to MaxAnyValueDepth. A scalar value
// has nothing left to check once read, and Validate returns nil for it at
// once. Offsets in the error are relative to the value's bytes.
//
// With Attributes.All it lets a consumer check the attributes it reads as
// it reads them: ranging over All checks each pair, Validate on a pair's
// value checks what the pair holds.
func (v Value) Validate() error {
	if v.typ != ValueArray && v.typ != ValueKVList {
		return nil
	}
	return validateValue(v, 1)
}

// Validate checks the resource's fields and attributes, as the request's
// Validate does for each resource.
func (r Resource) Validate() error { return validateResource(r) }

// Validate checks the scope's fields and attributes, as the request's
// Validate does for each scope.
func (s Scope) Validate() error { return validateScope(s) }

// Validate checks the exemplar's fields and filtered attributes, as the
// request's Validate does for each exemplar.
func (e Exemplar) Validate() error { return validateExemplar(e) }

// validateAttrs checks every pair and every nested value; depth is the
// nesting depth of the pairs' values.
func validateAttrs(a Attributes, depth int) error {
	for kv, err := range a.All() {
		if err != nil {
			return err
		}
		if err := validateValue(kv.Value, depth); err != nil {
			return err
		}
	}
	return nil
}

func validateValue(v Value, depth int) error {
	if depth > MaxAnyValueDepth {
		return newErr(ErrTooDeep, 0, "")
	}
	switch v.typ {
	case ValueArray:
		for e, err := range v.Array().All() {
			if err != nil {
				return err
			}
			if err := validateValue(e, depth+1); err != nil {
				return err
			}
		}
	case ValueKVList:
		return validateAttrs(v.KVList(), depth+1)
	}
	return nil
}

func validateLogRecord(b []byte) error {
	var f LogRecordFields
	pairs := 0
	if err := LogRecord(b).read(&f, &pairs); err != nil { // attributes checked on the way
		return err
	}
	return validateValue(f.Body, 1)
}

// checkPairRun checks the KeyValue fields with the one-byte tag tag and
// one-byte lengths that follow at b[i:], as validateAttrs would, and
// returns where they end; *idx counts the pairs, for error paths.
func checkPairRun(b []byte, i int, tag byte, idx *int) (int, error) {
	for i+1 < len(b) && b[i] == tag {
		l := int(b[i+1])
		if l >= 0x80 || l > len(b)-i-2 {
			break
		}
		if err := checkPair(b[i+2:i+2+l], *idx, i+2); err != nil {
			return i, err
		}
		*idx++
		i += 2 + l
	}
	return i, nil
}

// checkPair checks one KeyValue, the idx-th pair, whose bytes start at off
// of the message, as validateAttrs would: a malformed pair is an error
// within attributes[idx], what its value holds is checked by
// validateValue. A pair of a short key and a short value is recognized
// without parseKeyValue, as Attributes.All does.
func checkPair(s []byte, idx, off int) error {
	if len(s) >= 4 {
		f0, l0 := s[0], int(s[1])
		p := 2 + l0
		if l0 < 0x80 && p+2 <= len(s) {
			f1, l1 := s[p], int(s[p+1])
			if l1 < 0x80 && p+2+l1 == len(s) {
				var v []byte
				switch {
				case f0 == 0x0a && f1 == 0x12:
					v = s[p+2:]
				case f0 == 0x12 && f1 == 0x0a:
					v = s[2:p]
				}
				if len(v) > 2 && v[0] == 0x0a && int(v[1]) == len(v)-2 {
					return nil // a string
				}
				if val, ok := shortAnyValue(v); ok {
					return validateValue(val, 1)
				}
			}
		}
	}
	kv, err := parseKeyValue(s)
	if err != nil {
		return within(err, "attributes", idx, off)
	}
	return validateValue(kv.Value, 1)
}

func validateSpan(b []byte) error {
	var f SpanFields
	pairs := 0
	if err := Span(b).read(&f, &pairs); err != nil { // its attributes checked on the way
		return err
	}
	err := f.Events.each(func(e SpanEvent) error {
		var ef SpanEventFields
		if err := e.Read(&ef); err != nil {
			return err
		}
		return validateAttrs(ef.Attributes, 1)
	})
	if err != nil {
		return err
	}
	return f.Links.each(func(l SpanLink) error {
		var lf SpanLinkFields
		if err := l.Read(&lf); err != nil {
			return err
		}
		return validateAttrs(lf.Attributes, 1)
	})
}

func validateMetric(b []byte) error {
	var f MetricFields
	if err := Metric(b).Read(&f); err != nil {
		return err
	}
	if err := validateAttrs(f.Metadata, 1); err != nil {
		return err
	}
	switch f.Type {
	case MetricTypeGauge, MetricTypeSum:
		return f.NumberDataPoints().each(func(p NumberDataPoint) error {
			var pf NumberDataPointFields
			if err := p.Read(&pf); err != nil {
				return err
			}
			return validatePointCommon(pf.Attributes, pf.Exemplars)
		})
	case MetricTypeHistogram:
		return f.HistogramDataPoints().each(func(p HistogramDataPoint) error {
			var pf HistogramDataPointFields
			if err := p.Read(&pf); err != nil {
				return err
			}
			return validatePointCommon(pf.Attributes, pf.Exemplars)
		})
	case MetricTypeExponentialHistogram:
		return f.ExponentialHistogramDataPoints().each(func(p ExponentialHistogramDataPoint) error {
			var pf ExponentialHistogramDataPointFields
			if err := p.Read(&pf); err != nil {
				return err
			}
			if _, err := pf.Positive.BucketCounts.Len(); err != nil {
				return within(err, "positive", -1, 0)
			}
			if _, err := pf.Negative.BucketCounts.Len(); err != nil {
				return within(err, "negative", -1, 0)
			}
			return validatePointCommon(pf.Attributes, pf.Exemplars)
		})
	case MetricTypeSummary:
		return f.SummaryDataPoints().each(func(p SummaryDataPoint) error {
			var pf SummaryDataPointFields
			if err := p.Read(&pf); err != nil {
				return err
			}
			if err := validateAttrs(pf.Attributes, 1); err != nil {
				return err
			}
			return pf.QuantileValues.each(func(q ValueAtQuantile) error {
				_, _, err := q.Read()
				return err
			})
		})
	}
	return nil
}

func validatePointCommon(attrs Attributes, exemplars List[Exemplar]) error {
	if err := validateAttrs(attrs, 1); err != nil {
		return err
	}
	return exemplars.each(validateExemplar)
}

func validateExemplar(e Exemplar) error {
	var ef ExemplarFields
	if err := e.Read(&ef); err != nil {
		return err
	}
	return validateAttrs(ef.FilteredAttributes, 1)
}
