package eval

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/wirehouse/wirehouse/internal/traceql"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// AddOTLP adds the spans of an encoded OTLP TracesData (or
// ExportTraceServiceRequest) to the traces of byID, by trace id, making
// the Trace of an id it has not seen; order lists the ids in the order
// they were first seen. Strings are copied: the traces do not alias td.
func AddOTLP(byID map[[16]byte]*Trace, order *[][16]byte, td []byte) error {
	var res, scopeAttrs []KeyValue
	var scopeName, scopeVersion string
	return otlpwire.TracesRequest(td).Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(rs otlpwire.ResourceSpans) error {
			r, err := rs.Resource()
			if err != nil {
				return err
			}
			attrs, err := r.Attributes()
			if err != nil {
				return err
			}
			res, err = keyValues(attrs)
			return err
		},
		ScopeSpans: func(ss otlpwire.ScopeSpans) error {
			sc, err := ss.Scope()
			if err != nil {
				return err
			}
			var f otlpwire.ScopeFields
			if err := sc.Read(&f); err != nil {
				return err
			}
			scopeName, scopeVersion = string(f.Name), string(f.Version)
			scopeAttrs, err = keyValues(f.Attributes)
			return err
		},
		Span: func(sp otlpwire.Span) error {
			var f otlpwire.SpanFields
			if err := sp.Read(&f); err != nil {
				return err
			}
			s := Span{Name: string(f.Name), Kind: traceql.Kind(min(max(f.Kind, 0), int32(traceql.KindConsumer))),
				StatusMessage: string(f.StatusMessage), StartUnixNano: int64(f.StartTime), EndUnixNano: int64(f.EndTime),
				Resource: res, ScopeName: scopeName, ScopeVersion: scopeVersion, ScopeAttrs: scopeAttrs}
			copy(s.TraceID[:], f.TraceID)
			copy(s.SpanID[:], f.SpanID)
			copy(s.ParentID[:], f.ParentSpanID)
			switch f.StatusCode { // OTLP: 0 unset, 1 ok, 2 error
			case 1:
				s.Status = traceql.StatusOk
			case 2:
				s.Status = traceql.StatusError
			}
			var err error
			if s.Attrs, err = keyValues(f.Attributes); err != nil {
				return err
			}
			for ev, err := range f.Events.All() {
				if err != nil {
					return err
				}
				var ef otlpwire.SpanEventFields
				if err := ev.Read(&ef); err != nil {
					return err
				}
				e := Event{Name: string(ef.Name), TimeUnixNano: int64(ef.Time)}
				if e.Attrs, err = keyValues(ef.Attributes); err != nil {
					return err
				}
				s.Events = append(s.Events, e)
			}
			for ln, err := range f.Links.All() {
				if err != nil {
					return err
				}
				var lf otlpwire.SpanLinkFields
				if err := ln.Read(&lf); err != nil {
					return err
				}
				l := Link{}
				copy(l.TraceID[:], lf.TraceID)
				copy(l.SpanID[:], lf.SpanID)
				if l.Attrs, err = keyValues(lf.Attributes); err != nil {
					return err
				}
				s.Links = append(s.Links, l)
			}
			t := byID[s.TraceID]
			if t == nil {
				t = &Trace{}
				byID[s.TraceID] = t
				*order = append(*order, s.TraceID)
			}
			t.Spans = append(t.Spans, s)
			return nil
		},
	})
}

// keyValues decodes attributes into TraceQL values: strings, integers,
// floats and booleans as they are; bytes as hex, arrays and maps as JSON
// text (which TraceQL compares as strings).
func keyValues(a otlpwire.Attributes) ([]KeyValue, error) {
	var out []KeyValue
	for kv, err := range a.All() {
		if err != nil {
			return nil, err
		}
		v, err := value(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", kv.Key, err)
		}
		out = append(out, KeyValue{Key: string(kv.Key), Value: v})
	}
	return out, nil
}

func value(v otlpwire.Value) (Value, error) {
	switch v.Type() {
	case otlpwire.ValueString:
		return str(string(v.Str())), nil
	case otlpwire.ValueInt:
		return Value{Type: traceql.TypeInt, I: v.Int()}, nil
	case otlpwire.ValueDouble:
		return Value{Type: traceql.TypeFloat, F: v.Double()}, nil
	case otlpwire.ValueBool:
		return Value{Type: traceql.TypeBool, B: v.Bool()}, nil
	case otlpwire.ValueBytes:
		return str(hex.EncodeToString(v.Bytes())), nil
	case otlpwire.ValueArray, otlpwire.ValueKVList:
		x, err := plain(v)
		if err != nil {
			return Value{}, err
		}
		b, err := json.Marshal(x)
		if err != nil {
			return Value{}, fmt.Errorf("encode value: %w", err)
		}
		return str(string(b)), nil
	}
	return Value{}, nil
}

// plain converts a value to Go's plain types, for JSON.
func plain(v otlpwire.Value) (any, error) {
	switch v.Type() {
	case otlpwire.ValueArray:
		out := []any{}
		for x, err := range v.Array().All() {
			if err != nil {
				return nil, err
			}
			p, err := plain(x)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, nil
	case otlpwire.ValueKVList:
		out := map[string]any{}
		for kv, err := range v.KVList().All() {
			if err != nil {
				return nil, err
			}
			p, err := plain(kv.Value)
			if err != nil {
				return nil, err
			}
			out[string(kv.Key)] = p
		}
		return out, nil
	}
	x, err := value(v)
	switch x.Type {
	case traceql.TypeString:
		return x.S, err
	case traceql.TypeInt:
		return x.I, err
	case traceql.TypeFloat:
		return x.F, err
	case traceql.TypeBool:
		return x.B, err
	}
	return nil, err
}
