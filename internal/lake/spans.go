package lake

import (
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// SpanRows is a batch of spans as columns. Row i of every fixed column
// belongs to the same span; dynamic columns carry their row numbers.
type SpanRows struct {
	TraceID, SpanID, ParentSpanID Strings // raw bytes (16, 8, 8), empty when absent or all zero
	TraceState, Name              Strings
	Kind                          []int32
	StartTime, EndTime            []int64 // ns since the Unix epoch; duration is EndTime-StartTime
	StatusCode                    []int32
	StatusMessage                 Strings
	Flags                         []uint32
	DroppedAttributes             []uint32
	DroppedEvents, DroppedLinks   []uint32
	Events, Links                 Strings // version 1: JSON arrays, "[]" when none; see appendEvents and appendLinks
	ScopeName, ScopeVersion       Strings

	// Version 2: the events and links of each row (rowEvents[i],
	// rowLinks[i] index events and links), their strings in nestedStrs.
	events              []eventRow
	links               []linkRow
	rowEvents, rowLinks []pairRange
	nestedStrs          Strings

	attrRows // dynamic columns and ServiceName
}

// eventRow is a span event of version 2.
type eventRow struct {
	time        int64
	name, types Ref // types: the attributes' type signature
	attrs       pairRange
	dropped     uint32
}

// linkRow is a span link of version 2.
type linkRow struct {
	traceID, spanID, traceState, types Ref
	flags, dropped                     uint32
	attrs                              pairRange
}

// Len is the number of rows.
func (r *SpanRows) Len() int { return len(r.StartTime) }

// Reset empties the batch and keeps its capacity.
func (r *SpanRows) Reset() { r.truncate(0, 0); r.attrRows.reset() }

func (r *SpanRows) strings() [9]*Strings {
	return [...]*Strings{&r.TraceID, &r.SpanID, &r.ParentSpanID, &r.TraceState, &r.Name, &r.StatusMessage, &r.Events, &r.Links, &r.ScopeName}
}

func (r *SpanRows) truncate(n, ncols int) {
	for _, s := range r.strings() {
		s.spans = s.spans[:n]
		if n == 0 {
			s.arena = s.arena[:0]
		}
	}
	r.ScopeVersion.spans = r.ScopeVersion.spans[:n]
	if n == 0 {
		r.ScopeVersion.arena = r.ScopeVersion.arena[:0]
	}
	r.Kind, r.StatusCode = r.Kind[:n], r.StatusCode[:n]
	r.StartTime, r.EndTime = r.StartTime[:n], r.EndTime[:n]
	r.Flags, r.DroppedAttributes = r.Flags[:n], r.DroppedAttributes[:n]
	r.DroppedEvents, r.DroppedLinks = r.DroppedEvents[:n], r.DroppedLinks[:n]
	if len(r.rowEvents) > n {
		r.events = r.events[:r.rowEvents[n].lo]
		r.links = r.links[:r.rowLinks[n].lo]
		r.rowEvents, r.rowLinks = r.rowEvents[:n], r.rowLinks[:n]
	}
	if n == 0 {
		r.events, r.links = r.events[:0], r.links[:0]
		r.nestedStrs.Reset()
	}
	r.attrRows.truncate(n, ncols)
}

// AppendTraces appends the spans of an ExportTraceServiceRequest. On error
// the batch is left as it was before the call; the error is an
// *otlpwire.Error (or wraps one) naming where the request is malformed.
func (r *SpanRows) AppendTraces(req []byte) error {
	row0, ncols, m := r.Len(), len(r.cols.list), r.mark()
	nev, nlk := len(r.events), len(r.links)
	if err := r.appendTraces(otlpwire.TracesRequest(req)); err != nil {
		r.truncate(row0, ncols)
		r.events, r.links = r.events[:nev], r.links[:nlk]
		r.rollbackPairs(m)
		return err
	}
	return nil
}

func (r *SpanRows) appendTraces(req otlpwire.TracesRequest) error {
	var (
		f                  otlpwire.SpanFields
		svc, name, version Ref // of the current resource and scope
	)
	return req.Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(rs otlpwire.ResourceSpans) (err error) {
			svc, err = startResource(&r.attrRows, rs)
			return err
		},
		ScopeSpans: func(ss otlpwire.ScopeSpans) (err error) {
			name, version, err = startScope(&r.attrRows, &r.ScopeName, &r.ScopeVersion, ss)
			return err
		},
		Span: func(sp otlpwire.Span) error {
			if err := sp.Read(&f); err != nil {
				return err
			}
			return r.appendSpan(&f, svc, name, version)
		},
	})
}

func (r *SpanRows) appendSpan(f *otlpwire.SpanFields, svc, scopeName, scopeVersion Ref) error {
	if err := r.addAttrs(int32(len(r.StartTime)), svc, f.Attributes); err != nil {
		return err
	}
	if r.keepPairs {
		if err := r.appendNested(f); err != nil {
			return err
		}
	} else {
		var err error
		if r.scratch, err = appendEvents(r.scratch[:0], f.Events); err != nil {
			return fmt.Errorf("events: %w", err)
		}
		r.Events.Append(r.scratch)
		if r.scratch, err = appendLinks(r.scratch[:0], f.Links); err != nil {
			return fmt.Errorf("links: %w", err)
		}
		r.Links.Append(r.scratch)
	}
	r.TraceID.Append(validID(f.TraceID))
	r.SpanID.Append(validID(f.SpanID))
	r.ParentSpanID.Append(validID(f.ParentSpanID))
	r.TraceState.Append(f.TraceState)
	r.Name.Append(f.Name)
	r.StatusMessage.Append(f.StatusMessage)
	r.ScopeName.AppendRef(scopeName)
	r.ScopeVersion.AppendRef(scopeVersion)
	r.Kind = append(r.Kind, f.Kind)
	r.StatusCode = append(r.StatusCode, f.StatusCode)
	r.StartTime = append(r.StartTime, int64(f.StartTime))
	r.EndTime = append(r.EndTime, int64(f.EndTime))
	r.Flags = append(r.Flags, f.Flags)
	r.DroppedAttributes = append(r.DroppedAttributes, f.DroppedAttributesCount)
	r.DroppedEvents = append(r.DroppedEvents, f.DroppedEventsCount)
	r.DroppedLinks = append(r.DroppedLinks, f.DroppedLinksCount)
	return nil
}

// appendNested appends the events and links of a span, version 2.
func (r *SpanRows) appendNested(f *otlpwire.SpanFields) error {
	var (
		ef otlpwire.SpanEventFields
		lf otlpwire.SpanLinkFields
	)
	lo := uint32(len(r.events))
	for e, err := range f.Events.All() {
		if err == nil {
			err = e.Read(&ef)
		}
		if err != nil {
			return fmt.Errorf("events: %w", err)
		}
		attrs, err := r.nestedPairs(ef.Attributes)
		if err != nil {
			return fmt.Errorf("events: %w", err)
		}
		r.sig = appendTypes(r.sig[:0], r.pairs[attrs.lo:attrs.hi])
		r.events = append(r.events, eventRow{time: int64(ef.Time), name: r.nestedStrs.store(ef.Name), types: r.nestedStrs.store(r.sig), attrs: attrs, dropped: ef.DroppedAttributesCount})
	}
	r.rowEvents = append(r.rowEvents, pairRange{lo, uint32(len(r.events))})
	lo = uint32(len(r.links))
	for l, err := range f.Links.All() {
		if err == nil {
			err = l.Read(&lf)
		}
		if err != nil {
			return fmt.Errorf("links: %w", err)
		}
		attrs, err := r.nestedPairs(lf.Attributes)
		if err != nil {
			return fmt.Errorf("links: %w", err)
		}
		r.sig = appendTypes(r.sig[:0], r.pairs[attrs.lo:attrs.hi])
		r.links = append(r.links, linkRow{
			traceID: r.nestedStrs.store(validID(lf.TraceID)), spanID: r.nestedStrs.store(validID(lf.SpanID)), types: r.nestedStrs.store(r.sig),
			traceState: r.nestedStrs.store(lf.TraceState), flags: lf.Flags, dropped: lf.DroppedAttributesCount, attrs: attrs,
		})
	}
	r.rowLinks = append(r.rowLinks, pairRange{lo, uint32(len(r.links))})
	return nil
}

// validID returns id, or nil when it is all zero bytes: OTLP defines an
// all-zero trace or span id as invalid, and pdata reads it as absent, so a
// root span's zero parent id is null like an absent one.
func validID(id []byte) []byte {
	for _, c := range id {
		if c != 0 {
			return id
		}
	}
	return nil
}

// appendEvents writes a span's events as a JSON array of objects
// {"time":ns,"name":s,"attributes":{...}}, with "dropped_attributes_count"
// when it is not zero. Attribute values follow appendJSON.
func appendEvents(dst []byte, events otlpwire.List[otlpwire.SpanEvent]) ([]byte, error) {
	var ef otlpwire.SpanEventFields
	dst = append(dst, '[')
	first := true
	for e, err := range events.All() {
		if err != nil {
			return dst, err
		}
		if err := e.Read(&ef); err != nil {
			return dst, err
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"time":`...)
		dst = strconv.AppendUint(dst, ef.Time, 10)
		dst = append(dst, `,"name":`...)
		dst = appendJSONString(dst, ef.Name)
		if dst, err = appendAttrsJSON(dst, ef.Attributes, ef.DroppedAttributesCount); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendLinks writes a span's links as a JSON array of objects
// {"trace_id":hex,"span_id":hex,"trace_state":s,"flags":n,"attributes":{...}},
// with "dropped_attributes_count" when it is not zero.
func appendLinks(dst []byte, links otlpwire.List[otlpwire.SpanLink]) ([]byte, error) {
	var lf otlpwire.SpanLinkFields
	dst = append(dst, '[')
	first := true
	for l, err := range links.All() {
		if err != nil {
			return dst, err
		}
		if err := l.Read(&lf); err != nil {
			return dst, err
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"trace_id":"`...)
		dst = hex.AppendEncode(dst, validID(lf.TraceID))
		dst = append(dst, `","span_id":"`...)
		dst = hex.AppendEncode(dst, validID(lf.SpanID))
		dst = append(dst, `","trace_state":`...)
		dst = appendJSONString(dst, lf.TraceState)
		dst = append(dst, `,"flags":`...)
		dst = strconv.AppendUint(dst, uint64(lf.Flags), 10)
		if dst, err = appendAttrsJSON(dst, lf.Attributes, lf.DroppedAttributesCount); err != nil {
			return dst, err
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendAttrsJSON writes `,"attributes":{...}` and the dropped count when
// it is not zero. Pairs are written in the order sent, as appendJSON
// writes a key-value list.
func appendAttrsJSON(dst []byte, attrs otlpwire.Attributes, dropped uint32) ([]byte, error) {
	dst = append(dst, `,"attributes":`...)
	dst, err := appendJSONObject(dst, attrs, 1)
	if err != nil {
		return dst, err
	}
	if dropped != 0 {
		dst = append(dst, `,"dropped_attributes_count":`...)
		dst = strconv.AppendUint(dst, uint64(dropped), 10)
	}
	return dst, nil
}
