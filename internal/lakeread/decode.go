package lakeread

import (
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// A role is what a leaf column of a version-2 traces file holds.
type role uint8

const (
	roleNone role = iota // a column this reader does not use (hot keys)
	roleTraceID
	roleSpanID
	roleParentSpanID
	roleTraceState
	roleName
	roleKind
	roleStart
	roleEnd
	roleStatusCode
	roleStatusMessage
	roleFlags
	roleDroppedAttrs
	roleDroppedEvents
	roleDroppedLinks
	roleResourceAttrs
	roleScopeAttrs
	roleResourceURL
	roleScopeURL
	roleScopeName
	roleScopeVersion
	roleAttrKey
	roleAttrValue
	roleAttrTypes
	roleEventTime
	roleEventName
	roleEventAttrKey
	roleEventAttrValue
	roleEventAttrTypes
	roleEventDropped
	roleLinkTraceID
	roleLinkSpanID
	roleLinkTraceState
	roleLinkFlags
	roleLinkAttrKey
	roleLinkAttrValue
	roleLinkAttrTypes
	roleLinkDropped
	numRoles
)

// rolePaths are the leaf paths of the roles, as lake's schema_v2.go
// writes them.
var rolePaths = map[string]role{
	"trace_id": roleTraceID, "span_id": roleSpanID, "parent_span_id": roleParentSpanID,
	"trace_state": roleTraceState, "name": roleName, "kind": roleKind,
	"start_time": roleStart, "end_time": roleEnd, "status_code": roleStatusCode, "status_message": roleStatusMessage,
	"flags": roleFlags, "dropped_attributes_count": roleDroppedAttrs,
	"dropped_events_count": roleDroppedEvents, "dropped_links_count": roleDroppedLinks,
	"resource_attributes": roleResourceAttrs, "scope_attributes": roleScopeAttrs,
	"resource_schema_url": roleResourceURL, "scope_schema_url": roleScopeURL,
	"scope_name": roleScopeName, "scope_version": roleScopeVersion,
	"attributes.key_value.key": roleAttrKey, "attributes.key_value.value": roleAttrValue, "attribute_types": roleAttrTypes,
	"events.list.element.time": roleEventTime, "events.list.element.name": roleEventName,
	"events.list.element.attributes.key_value.key":   roleEventAttrKey,
	"events.list.element.attributes.key_value.value": roleEventAttrValue,
	"events.list.element.attribute_types":            roleEventAttrTypes,
	"events.list.element.dropped_attributes_count":   roleEventDropped,
	"links.list.element.trace_id":                    roleLinkTraceID, "links.list.element.span_id": roleLinkSpanID,
	"links.list.element.trace_state": roleLinkTraceState, "links.list.element.flags": roleLinkFlags,
	"links.list.element.attributes.key_value.key":   roleLinkAttrKey,
	"links.list.element.attributes.key_value.value": roleLinkAttrValue,
	"links.list.element.attribute_types":            roleLinkAttrTypes,
	"links.list.element.dropped_attributes_count":   roleLinkDropped,
}

// columns maps a file's leaf columns to their roles.
type columns struct {
	roles   []role // by column index
	traceID int    // the column index of trace_id
}

// columnsOf reads the roles of schema's leaves; every role must be there.
func columnsOf(schema *parquet.Schema) (*columns, error) {
	c := &columns{traceID: -1}
	seen := make([]bool, numRoles)
	for i, path := range schema.Columns() {
		r := rolePaths[strings.Join(path, ".")]
		c.roles = append(c.roles, r)
		seen[r] = true
		if r == roleTraceID {
			c.traceID = i
		}
	}
	for r := roleTraceID; r < numRoles; r++ {
		if !seen[r] {
			return nil, fmt.Errorf("not a version-2 traces file: a column is missing (role %d)", r)
		}
	}
	return c, nil
}

// attr is an attribute as a file holds it: its key, its value as text
// (null: an empty value) and, from the signature, its type character.
type attr struct {
	key, text []byte
	null      bool
	typ       byte
}

type event struct {
	time    int64
	name    []byte
	attrs   []attr
	nvals   int // values of attrs set
	types   []byte
	dropped uint32
}

type link struct {
	traceID, spanID, traceState []byte // ids in hex, empty when absent
	flags, dropped              uint32
	attrs                       []attr
	nvals                       int
	types                       []byte
}

// span is one decoded row. Its byte slices alias the row it was decoded
// from, which it keeps.
type span struct {
	traceID, spanID, parentSpanID                  []byte // hex, nil when null
	traceState, name, kind, statusMessage          []byte
	statusCode                                     []byte
	start, end                                     int64
	flags, droppedAttrs, droppedEvents             uint32
	droppedLinks                                   uint32
	resourceAttrs, scopeAttrs                      []byte // JSON objects
	resourceURL, scopeURL, scopeName, scopeVersion []byte
	attrs                                          []attr
	types                                          []byte
	events                                         []event
	links                                          []link
}

// decode decodes a row of a version-2 traces file. A row's values come
// column by column, in the schema's leaf order; the values of a leaf of an
// event or link are told apart by repetition level (0 or 1 starts an
// element, 2 is another entry of its attribute map), so each leaf counts
// its own elements.
func (c *columns) decode(row parquet.Row) (span, error) {
	var (
		sp   span
		elem [numRoles]int // the element the last value of a nested leaf was in, +1
	)
	for _, v := range row {
		col := v.Column()
		if col < 0 || col >= len(c.roles) {
			return sp, fmt.Errorf("value of column %d, past the schema's %d", col, len(c.roles))
		}
		rep, def := v.RepetitionLevel(), v.DefinitionLevel()
		r := c.roles[col]
		switch r {
		case roleTraceID:
			sp.traceID = bytesOrNil(v)
		case roleSpanID:
			sp.spanID = bytesOrNil(v)
		case roleParentSpanID:
			sp.parentSpanID = bytesOrNil(v)
		case roleTraceState:
			sp.traceState = v.ByteArray()
		case roleName:
			sp.name = v.ByteArray()
		case roleKind:
			sp.kind = v.ByteArray()
		case roleStart:
			sp.start = v.Int64()
		case roleEnd:
			sp.end = v.Int64()
		case roleStatusCode:
			sp.statusCode = v.ByteArray()
		case roleStatusMessage:
			sp.statusMessage = v.ByteArray()
		case roleFlags:
			sp.flags = uint32(v.Int32())
		case roleDroppedAttrs:
			sp.droppedAttrs = uint32(v.Int32())
		case roleDroppedEvents:
			sp.droppedEvents = uint32(v.Int32())
		case roleDroppedLinks:
			sp.droppedLinks = uint32(v.Int32())
		case roleResourceAttrs:
			sp.resourceAttrs = v.ByteArray()
		case roleScopeAttrs:
			sp.scopeAttrs = v.ByteArray()
		case roleResourceURL:
			sp.resourceURL = v.ByteArray()
		case roleScopeURL:
			sp.scopeURL = v.ByteArray()
		case roleScopeName:
			sp.scopeName = v.ByteArray()
		case roleScopeVersion:
			sp.scopeVersion = v.ByteArray()
		case roleAttrTypes:
			sp.types = v.ByteArray()
		case roleAttrKey:
			if def >= 1 {
				sp.attrs = append(sp.attrs, attr{key: v.ByteArray()})
			}
		case roleAttrValue:
			if def >= 1 {
				elem[r]++
				if err := setValue(sp.attrs, elem[r]-1, v, 2); err != nil {
					return sp, fmt.Errorf("attributes: %w", err)
				}
			}
		case roleNone:
		default:
			if def == 0 {
				continue // no events, or no links
			}
			if rep <= 1 {
				elem[r]++
			}
			if err := sp.nested(r, elem[r]-1, v, def); err != nil {
				return sp, err
			}
		}
	}
	return sp, sp.typeAttrs()
}

// nested sets value v of leaf r of element i of the span's events or
// links, making the element if it is the first value of it.
func (sp *span) nested(r role, i int, v parquet.Value, def int) error {
	if i < 0 {
		return fmt.Errorf("a value of an event or link before its first element")
	}
	if r >= roleEventTime && r <= roleEventDropped {
		for len(sp.events) <= i {
			sp.events = append(sp.events, event{})
		}
		e := &sp.events[i]
		switch r {
		case roleEventTime:
			e.time = v.Int64()
		case roleEventName:
			e.name = v.ByteArray()
		case roleEventAttrTypes:
			e.types = v.ByteArray()
		case roleEventDropped:
			e.dropped = uint32(v.Int32())
		case roleEventAttrKey:
			if def >= 2 {
				e.attrs = append(e.attrs, attr{key: v.ByteArray()})
			}
		case roleEventAttrValue:
			if def >= 2 {
				e.nvals++
				return setValue(e.attrs, e.nvals-1, v, 3)
			}
		}
		return nil
	}
	for len(sp.links) <= i {
		sp.links = append(sp.links, link{})
	}
	l := &sp.links[i]
	switch r {
	case roleLinkTraceID:
		l.traceID = v.ByteArray()
	case roleLinkSpanID:
		l.spanID = v.ByteArray()
	case roleLinkTraceState:
		l.traceState = v.ByteArray()
	case roleLinkFlags:
		l.flags = uint32(v.Int32())
	case roleLinkAttrTypes:
		l.types = v.ByteArray()
	case roleLinkDropped:
		l.dropped = uint32(v.Int32())
	case roleLinkAttrKey:
		if def >= 2 {
			l.attrs = append(l.attrs, attr{key: v.ByteArray()})
		}
	case roleLinkAttrValue:
		if def >= 2 {
			l.nvals++
			return setValue(l.attrs, l.nvals-1, v, 3)
		}
	}
	return nil
}

// setValue sets the value of attrs[i] from v, a map value leaf whose
// definition level is full when not null.
func setValue(attrs []attr, i int, v parquet.Value, full int) error {
	if i >= len(attrs) {
		return fmt.Errorf("value %d of a map of %d keys", i, len(attrs))
	}
	if v.DefinitionLevel() < full {
		attrs[i].null = true
		return nil
	}
	attrs[i].text = v.ByteArray()
	return nil
}

// typeAttrs gives every attribute its type character from the signatures.
func (sp *span) typeAttrs() error {
	if err := typeOf(sp.attrs, sp.types); err != nil {
		return fmt.Errorf("attributes: %w", err)
	}
	for i := range sp.events {
		if err := typeOf(sp.events[i].attrs, sp.events[i].types); err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	for i := range sp.links {
		if err := typeOf(sp.links[i].attrs, sp.links[i].types); err != nil {
			return fmt.Errorf("link %d: %w", i, err)
		}
	}
	return nil
}

func typeOf(attrs []attr, sig []byte) error {
	if len(sig) != len(attrs) {
		return fmt.Errorf("type signature of %d characters for %d attributes", len(sig), len(attrs))
	}
	for i := range attrs {
		attrs[i].typ = sig[i]
	}
	return nil
}

// bytesOrNil is v's bytes, nil for a null.
func bytesOrNil(v parquet.Value) []byte {
	if v.IsNull() {
		return nil
	}
	return v.ByteArray()
}
