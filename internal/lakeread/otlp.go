package lakeread

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
)

// Spans are spans read from the lake, grouped as OTLP groups them: by
// resource (its attributes and schema URL), then by scope.
type Spans struct {
	resources []*resourceGroup
	extra     [][]byte // encoded ResourceSpans of spans not read from files
	n         int
	size      int64 // bytes the spans hold, about (for the query's ticket)
}

// Size returns about how many bytes of memory the spans hold.
func (s *Spans) Size() int64 { return s.size }

type resourceGroup struct {
	attrs, url []byte
	scopes     []*scopeGroup
}

type scopeGroup struct {
	name, version, attrs, url []byte
	spans                     []span
}

// Len is the number of spans.
func (s *Spans) Len() int { return s.n }

func (s *Spans) add(sp span) {
	s.n++
	s.size += sp.size()
	var rg *resourceGroup
	for _, g := range s.resources {
		if bytes.Equal(g.attrs, sp.resourceAttrs) && bytes.Equal(g.url, sp.resourceURL) {
			rg = g
			break
		}
	}
	if rg == nil {
		rg = &resourceGroup{attrs: sp.resourceAttrs, url: sp.resourceURL}
		s.resources = append(s.resources, rg)
	}
	for _, g := range rg.scopes {
		if bytes.Equal(g.name, sp.scopeName) && bytes.Equal(g.version, sp.scopeVersion) &&
			bytes.Equal(g.attrs, sp.scopeAttrs) && bytes.Equal(g.url, sp.scopeURL) {
			g.spans = append(g.spans, sp)
			return
		}
	}
	rg.scopes = append(rg.scopes, &scopeGroup{name: sp.scopeName, version: sp.scopeVersion, attrs: sp.scopeAttrs, url: sp.scopeURL, spans: []span{sp}})
}

// size is about how many bytes sp holds.
func (sp *span) size() int64 {
	n := int(unsafe.Sizeof(*sp)) + len(sp.traceID) + len(sp.spanID) + len(sp.parentSpanID) + len(sp.traceState) +
		len(sp.name) + len(sp.kind) + len(sp.statusMessage) + len(sp.statusCode) + len(sp.resourceAttrs) +
		len(sp.scopeAttrs) + len(sp.resourceURL) + len(sp.scopeURL) + len(sp.scopeName) + len(sp.scopeVersion) + len(sp.types)
	for _, a := range sp.attrs {
		n += int(unsafe.Sizeof(a)) + len(a.key) + len(a.text)
	}
	for _, e := range sp.events {
		n += int(unsafe.Sizeof(e)) + len(e.name) + len(e.types)
		for _, a := range e.attrs {
			n += int(unsafe.Sizeof(a)) + len(a.key) + len(a.text)
		}
	}
	for _, l := range sp.links {
		n += int(unsafe.Sizeof(l)) + len(l.traceID) + len(l.spanID) + len(l.traceState) + len(l.types)
		for _, a := range l.attrs {
			n += int(unsafe.Sizeof(a)) + len(a.key) + len(a.text)
		}
	}
	return int64(n)
}

// AppendProto appends the spans to dst as an encoded OTLP TracesData
// (which is also an ExportTraceServiceRequest) and returns it. A value the
// files hold that cannot be decoded fails it; the spans were written by
// this program, so that is a bug or a damaged file, and the error says
// which value.
func (s *Spans) AppendProto(dst []byte) ([]byte, error) {
	var err error
	for _, rg := range s.resources {
		dst, err = appendMessage(dst, 1, func(b []byte) ([]byte, error) { return rg.appendProto(b) })
		if err != nil {
			return dst, err
		}
	}
	for _, rs := range s.extra {
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendBytes(dst, rs)
	}
	return dst, nil
}

// appendMessage appends field num holding the message that body appends.
func appendMessage(dst []byte, num protowire.Number, body func([]byte) ([]byte, error)) ([]byte, error) {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	// Reserve the most a length takes, write the body, then move it
	// back over what the length did not need.
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0, 0)
	dst, err := body(dst)
	if err != nil {
		return dst, err
	}
	n := len(dst) - at - 5
	var lb [5]byte
	l := protowire.AppendVarint(lb[:0], uint64(n))
	copy(dst[at:], l)
	copy(dst[at+len(l):], dst[at+5:])
	return dst[:at+len(l)+n], nil
}

func (rg *resourceGroup) appendProto(b []byte) ([]byte, error) {
	b, err := appendMessage(b, 1, func(b []byte) ([]byte, error) { return appendJSONAttributes(b, 1, rg.attrs) })
	if err != nil {
		return b, fmt.Errorf("resource attributes: %w", err)
	}
	for _, sg := range rg.scopes {
		if b, err = appendMessage(b, 2, sg.appendProto); err != nil {
			return b, err
		}
	}
	if len(rg.url) > 0 {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendBytes(b, rg.url)
	}
	return b, nil
}

func (sg *scopeGroup) appendProto(b []byte) ([]byte, error) {
	b, err := appendMessage(b, 1, func(b []byte) ([]byte, error) {
		b = appendString(b, 1, sg.name)
		b = appendString(b, 2, sg.version)
		return appendJSONAttributes(b, 3, sg.attrs)
	})
	if err != nil {
		return b, fmt.Errorf("scope: %w", err)
	}
	for i := range sg.spans {
		if b, err = appendMessage(b, 2, sg.spans[i].appendProto); err != nil {
			return b, err
		}
	}
	return appendString(b, 3, sg.url), nil
}

// The OTLP enums by name; a name that is a number is that number.
var (
	spanKinds   = map[string]int32{"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2, "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}
	statusCodes = map[string]int32{"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
)

func enumOf(names map[string]int32, b []byte) (int32, error) {
	if n, ok := names[string(b)]; ok {
		return n, nil
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("enum value %q", b)
	}
	return int32(n), nil
}

func (sp *span) appendProto(b []byte) ([]byte, error) {
	var err error
	if b, err = appendID(b, 1, sp.traceID); err != nil {
		return b, fmt.Errorf("trace_id: %w", err)
	}
	if b, err = appendID(b, 2, sp.spanID); err != nil {
		return b, fmt.Errorf("span_id: %w", err)
	}
	b = appendString(b, 3, sp.traceState)
	if b, err = appendID(b, 4, sp.parentSpanID); err != nil {
		return b, fmt.Errorf("parent_span_id: %w", err)
	}
	b = appendString(b, 5, sp.name)
	kind, err := enumOf(spanKinds, sp.kind)
	if err != nil {
		return b, err
	}
	if kind != 0 {
		b = protowire.AppendTag(b, 6, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(kind)))
	}
	b = appendFixed64(b, 7, uint64(sp.start))
	b = appendFixed64(b, 8, uint64(sp.end))
	if b, err = appendAttrs(b, 9, sp.attrs); err != nil {
		return b, err
	}
	b = appendUint(b, 10, sp.droppedAttrs)
	for i := range sp.events {
		e := &sp.events[i]
		if b, err = appendMessage(b, 11, func(b []byte) ([]byte, error) {
			b = appendFixed64(b, 1, uint64(e.time))
			b = appendString(b, 2, e.name)
			b, err := appendAttrs(b, 3, e.attrs)
			return appendUint(b, 4, e.dropped), err
		}); err != nil {
			return b, fmt.Errorf("event %d: %w", i, err)
		}
	}
	b = appendUint(b, 12, sp.droppedEvents)
	for i := range sp.links {
		l := &sp.links[i]
		if b, err = appendMessage(b, 13, func(b []byte) ([]byte, error) {
			b, err := appendID(b, 1, l.traceID)
			if err == nil {
				b, err = appendID(b, 2, l.spanID)
			}
			b = appendString(b, 3, l.traceState)
			if err == nil {
				b, err = appendAttrs(b, 4, l.attrs)
			}
			b = appendUint(b, 5, l.dropped)
			if l.flags != 0 {
				b = protowire.AppendTag(b, 6, protowire.Fixed32Type)
				b = protowire.AppendFixed32(b, l.flags)
			}
			return b, err
		}); err != nil {
			return b, fmt.Errorf("link %d: %w", i, err)
		}
	}
	b = appendUint(b, 14, sp.droppedLinks)
	code, err := enumOf(statusCodes, sp.statusCode)
	if err != nil {
		return b, err
	}
	if code != 0 || len(sp.statusMessage) > 0 {
		b, _ = appendMessage(b, 15, func(b []byte) ([]byte, error) {
			b = appendString(b, 2, sp.statusMessage)
			if code != 0 {
				b = protowire.AppendTag(b, 3, protowire.VarintType)
				b = protowire.AppendVarint(b, uint64(int64(code)))
			}
			return b, nil
		})
	}
	if sp.flags != 0 {
		b = protowire.AppendTag(b, 16, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, sp.flags)
	}
	return b, nil
}

func appendString(b []byte, num protowire.Number, s []byte) []byte {
	if len(s) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, s)
}

func appendUint(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(v))
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// appendID appends an id given in hex as its bytes; nothing when empty.
func appendID(b []byte, num protowire.Number, hexID []byte) ([]byte, error) {
	if len(hexID) == 0 {
		return b, nil
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(len(hexID)/2))
	n := len(b)
	b = append(b, make([]byte, len(hexID)/2)...)
	if _, err := hex.Decode(b[n:], hexID); err != nil || len(hexID)%2 != 0 {
		return b, fmt.Errorf("id %q is not hex", hexID)
	}
	return b, nil
}

// appendAttrs appends attrs as KeyValue fields num.
func appendAttrs(b []byte, num protowire.Number, attrs []attr) ([]byte, error) {
	var err error
	for i := range attrs {
		a := &attrs[i]
		if b, err = appendMessage(b, num, func(b []byte) ([]byte, error) {
			b = appendString(b, 1, a.key)
			return appendMessage(b, 2, func(b []byte) ([]byte, error) { return appendTextValue(b, a) })
		}); err != nil {
			return b, fmt.Errorf("attribute %q: %w", a.key, err)
		}
	}
	return b, nil
}

// appendTextValue appends the AnyValue fields of an attribute held as
// text and its type character (see lake's appendTypes).
func appendTextValue(b []byte, a *attr) ([]byte, error) {
	if a.null || a.typ == 'n' {
		return b, nil
	}
	switch a.typ {
	case 's':
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendBytes(b, a.text), nil
	case 'b':
		v, err := strconv.ParseBool(string(a.text))
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v)), err
	case 'i':
		v, err := strconv.ParseInt(string(a.text), 10, 64)
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v)), err
	case 'd':
		v, err := strconv.ParseFloat(string(a.text), 64)
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(v)), err
	case 'y':
		v, err := base64.StdEncoding.DecodeString(string(a.text))
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		return protowire.AppendBytes(b, v), err
	case 'a', 'm':
		return appendJSONValue(b, json.NewDecoder(bytes.NewReader(a.text)))
	}
	return b, fmt.Errorf("type %q", a.typ)
}

// appendJSONAttributes appends the pairs of a JSON object (resource or
// scope attributes) as KeyValue fields num.
func appendJSONAttributes(b []byte, num protowire.Number, obj []byte) ([]byte, error) {
	if len(obj) == 0 {
		return b, nil
	}
	d := json.NewDecoder(bytes.NewReader(obj))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return b, fmt.Errorf("not a JSON object: %.40q", obj)
	}
	return appendJSONPairs(b, num, d)
}

// appendJSONPairs appends the pairs of the object d is in, to its end, as
// KeyValue fields num.
func appendJSONPairs(b []byte, num protowire.Number, d *json.Decoder) ([]byte, error) {
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return b, err
		}
		key, _ := t.(string)
		if b, err = appendMessage(b, num, func(b []byte) ([]byte, error) {
			b = appendString(b, 1, []byte(key))
			return appendMessage(b, 2, func(b []byte) ([]byte, error) { return appendJSONValue(b, d) })
		}); err != nil {
			return b, err
		}
	}
	_, err := d.Token() // '}'
	return b, err
}

// appendJSONValue appends the AnyValue fields of the next JSON value of
// d, as lake's appendJSON wrote it: a number with a fraction or an
// exponent is a double, another an int; null is an empty value.
func appendJSONValue(b []byte, d *json.Decoder) ([]byte, error) {
	d.UseNumber()
	t, err := d.Token()
	if err != nil {
		return b, err
	}
	switch v := t.(type) {
	case string:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendString(b, v), nil
	case bool:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v)), nil
	case json.Number:
		if bytes.ContainsAny([]byte(v), ".eE") {
			f, err := v.Float64()
			b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
			return protowire.AppendFixed64(b, math.Float64bits(f)), err
		}
		n, err := v.Int64()
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(n)), err
	case json.Delim:
		switch v {
		case '[':
			return appendMessage(b, 5, func(b []byte) ([]byte, error) {
				var err error
				for d.More() {
					if b, err = appendMessage(b, 1, func(b []byte) ([]byte, error) { return appendJSONValue(b, d) }); err != nil {
						return b, err
					}
				}
				_, err = d.Token() // ']'
				return b, err
			})
		case '{':
			return appendMessage(b, 6, func(b []byte) ([]byte, error) { return appendJSONPairs(b, 1, d) })
		}
	case nil:
		return b, nil
	}
	return b, fmt.Errorf("JSON token %v", t)
}
