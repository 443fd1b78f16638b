package lakeread

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/lake"
)

// Schema version 1 (files without wirehouse.schema_version): fixed
// columns, one column per attribute key and origin typed per file (its
// "wirehouse.columns" metadata says which key and type each holds), JSON
// objects for the attributes past the column limit, events and links as
// JSON text, int64 nanosecond times, kind and status as numbers. Such files
// are read row by row into the same spans as version 2: for trace by id
// (bloom filter and trace_id pages as for version 2), and by a full scan
// for search and names (files of earlier releases: correct, not fast).
//
// What version 1 did not keep stays lost: schema URLs, and the type of a
// key whose values had several types in one file (its column holds their
// text, read back as strings); bytes inside JSON come back as their
// base64 string, as in version 2.

// v1Role is what a column of a version-1 traces file holds.
type v1Role uint8

const (
	v1None v1Role = iota
	v1TraceID
	v1SpanID
	v1ParentSpanID
	v1TraceState
	v1Name
	v1Kind
	v1Start
	v1End
	v1StatusCode
	v1StatusMessage
	v1Events
	v1Links
	v1Flags
	v1DroppedAttrs
	v1DroppedEvents
	v1DroppedLinks
	v1ScopeName
	v1ScopeVersion
	v1Attr     // a dynamic column: origin, key and type in v1Column
	v1Overflow // a JSON object of an origin's attributes past the column limit
)

var v1Fixed = map[string]v1Role{
	"trace_id": v1TraceID, "span_id": v1SpanID, "parent_span_id": v1ParentSpanID, "trace_state": v1TraceState,
	"name": v1Name, "kind": v1Kind, "start_time": v1Start, "end_time": v1End, "status_code": v1StatusCode,
	"status_message": v1StatusMessage, "events": v1Events, "links": v1Links, "flags": v1Flags,
	"dropped_attributes_count": v1DroppedAttrs, "dropped_events_count": v1DroppedEvents,
	"dropped_links_count": v1DroppedLinks, "scope_name": v1ScopeName, "scope_version": v1ScopeVersion,
}

// v1Column is a column of a version-1 file.
type v1Column struct {
	role   v1Role
	origin string // "resource", "scope" or "record"
	key    string
	typ    string // "string", "int64", "double", "bool", "bytes", "json", "json_object"
}

// v1Columns maps a version-1 file's columns to what they hold.
type v1Columns struct {
	cols    []v1Column // by column index
	traceID int
}

func v1ColumnsOf(pf *parquet.File) (*v1Columns, error) {
	var meta map[string]struct {
		Origin string `json:"origin"`
		Key    string `json:"key"`
		Type   string `json:"type"`
	}
	if m, ok := pf.Lookup("wirehouse.columns"); ok {
		if err := json.Unmarshal([]byte(m), &meta); err != nil {
			return nil, fmt.Errorf("wirehouse.columns: %w", err)
		}
	}
	c := &v1Columns{traceID: -1}
	for i, path := range pf.Schema().Columns() {
		var col v1Column
		if len(path) == 1 {
			if r, ok := v1Fixed[path[0]]; ok {
				col.role = r
			} else if m, ok := meta[path[0]]; ok {
				col = v1Column{role: v1Attr, origin: m.Origin, key: m.Key, typ: m.Type}
				if m.Type == "json_object" {
					col.role = v1Overflow
				}
			}
		}
		if col.role == v1TraceID {
			c.traceID = i
		}
		c.cols = append(c.cols, col)
	}
	if c.traceID < 0 {
		return nil, fmt.Errorf("not a traces file: no trace_id column")
	}
	return c, nil
}

// v1KindNames and v1StatusNames are the lake's names of the OTLP enums.
var v1StatusNames = [...]string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}

// decode decodes a row of a version-1 traces file into a span.
func (c *v1Columns) decode(row parquet.Row) (span, error) {
	var sp span
	var res, scope jsonObject
	for _, v := range row {
		i := v.Column()
		if i < 0 || i >= len(c.cols) {
			return sp, fmt.Errorf("value of column %d of %d", i, len(c.cols))
		}
		col := &c.cols[i]
		if v.IsNull() {
			continue
		}
		switch col.role {
		case v1TraceID:
			sp.traceID = v.ByteArray()
		case v1SpanID:
			sp.spanID = v.ByteArray()
		case v1ParentSpanID:
			sp.parentSpanID = v.ByteArray()
		case v1TraceState:
			sp.traceState = v.ByteArray()
		case v1Name:
			sp.name = v.ByteArray()
		case v1Kind:
			sp.kind = []byte(kindName(v.Int32()))
		case v1Start:
			sp.start = v.Int64()
		case v1End:
			sp.end = v.Int64()
		case v1StatusCode:
			if k := v.Int32(); k >= 0 && int(k) < len(v1StatusNames) {
				sp.statusCode = []byte(v1StatusNames[k])
			} else {
				sp.statusCode = []byte(strconv.Itoa(int(k)))
			}
		case v1StatusMessage:
			sp.statusMessage = v.ByteArray()
		case v1Flags:
			sp.flags = v.Uint32()
		case v1DroppedAttrs:
			sp.droppedAttrs = v.Uint32()
		case v1DroppedEvents:
			sp.droppedEvents = v.Uint32()
		case v1DroppedLinks:
			sp.droppedLinks = v.Uint32()
		case v1ScopeName:
			sp.scopeName = v.ByteArray()
		case v1ScopeVersion:
			sp.scopeVersion = v.ByteArray()
		case v1Events:
			evs, err := eventsOfJSON(v.ByteArray())
			if err != nil {
				return sp, fmt.Errorf("events: %w", err)
			}
			sp.events = evs
		case v1Links:
			ls, err := linksOfJSON(v.ByteArray())
			if err != nil {
				return sp, fmt.Errorf("links: %w", err)
			}
			sp.links = ls
		case v1Attr:
			text, typ := v1Text(col.typ, v)
			switch col.origin {
			case "resource":
				res.add(col.key, typ, text)
			case "scope":
				scope.add(col.key, typ, text)
			default:
				sp.attrs = append(sp.attrs, attr{key: []byte(col.key), text: text, typ: typ})
			}
		case v1Overflow:
			attrs, err := attrsOfJSON(v.ByteArray())
			if err != nil {
				return sp, fmt.Errorf("overflow attributes: %w", err)
			}
			for _, a := range attrs {
				switch col.origin {
				case "resource":
					res.add(string(a.key), a.typ, a.text)
				case "scope":
					scope.add(string(a.key), a.typ, a.text)
				default:
					sp.attrs = append(sp.attrs, a)
				}
			}
		}
	}
	sp.resourceAttrs, sp.scopeAttrs = res.bytes(), scope.bytes()
	return sp, nil
}

// v1Text is a dynamic column's value as text and type character.
func v1Text(typ string, v parquet.Value) ([]byte, byte) {
	switch typ {
	case "int64":
		return strconv.AppendInt(nil, v.Int64(), 10), 'i'
	case "double":
		return strconv.AppendFloat(nil, v.Double(), 'g', -1, 64), 'd'
	case "bool":
		return strconv.AppendBool(nil, v.Boolean()), 'b'
	case "bytes":
		return base64.StdEncoding.AppendEncode(nil, v.ByteArray()), 'y'
	case "json":
		b := v.ByteArray()
		if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
			return b, 'a'
		}
		return b, 'm'
	}
	return v.ByteArray(), 's' // strings, and the text of a key of several types
}

// jsonObject builds a JSON object of attributes, self-typed as version 2
// writes resource and scope attributes: a double always has a fraction or
// an exponent.
type jsonObject struct{ b []byte }

func (o *jsonObject) add(key string, typ byte, text []byte) {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	k, _ := json.Marshal(key)
	o.b = append(append(o.b, k...), ':')
	switch typ {
	case 'i', 'b', 'a', 'm':
		o.b = append(o.b, text...)
	case 'd':
		f, _ := strconv.ParseFloat(string(text), 64)
		switch {
		case math.IsNaN(f):
			o.b = append(o.b, `"NaN"`...)
		case math.IsInf(f, 1):
			o.b = append(o.b, `"Infinity"`...)
		case math.IsInf(f, -1):
			o.b = append(o.b, `"-Infinity"`...)
		default:
			o.b = append(o.b, text...)
			if !bytes.ContainsAny(text, ".eE") {
				o.b = append(o.b, ".0"...)
			}
		}
	case 'n':
		o.b = append(o.b, "null"...)
	default: // strings, base64 bytes
		s, _ := json.Marshal(string(text))
		o.b = append(o.b, s...)
	}
}

func (o *jsonObject) bytes() []byte {
	if len(o.b) == 0 {
		return nil
	}
	return append(o.b, '}')
}

// attrsOfJSON reads a JSON object of attributes into attrs typed by their
// JSON: strings, ints (no fraction or exponent), doubles, bools, arrays,
// objects, null.
func attrsOfJSON(obj []byte) ([]attr, error) {
	var m []struct {
		k string
		v json.RawMessage
	}
	d := json.NewDecoder(bytes.NewReader(obj))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %.40q", obj)
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil, err
		}
		k, _ := t.(string)
		m = append(m, struct {
			k string
			v json.RawMessage
		}{k, raw})
	}
	out := make([]attr, 0, len(m))
	for _, kv := range m {
		a := attr{key: []byte(kv.k)}
		raw := bytes.TrimSpace(kv.v)
		switch {
		case len(raw) == 0 || string(raw) == "null":
			a.typ, a.null = 'n', true
		case raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			a.typ, a.text = 's', []byte(s)
		case raw[0] == '[':
			a.typ, a.text = 'a', raw
		case raw[0] == '{':
			a.typ, a.text = 'm', raw
		case string(raw) == "true" || string(raw) == "false":
			a.typ, a.text = 'b', raw
		case bytes.ContainsAny(raw, ".eE"):
			a.typ, a.text = 'd', raw
		default:
			a.typ, a.text = 'i', raw
		}
		out = append(out, a)
	}
	return out, nil
}

// eventsOfJSON reads a version-1 events column:
// [{"time":ns,"name":…,"attributes":{…},"dropped_attributes_count":n}].
func eventsOfJSON(b []byte) ([]event, error) {
	var raw []struct {
		Time    int64           `json:"time"`
		Name    string          `json:"name"`
		Attrs   json.RawMessage `json:"attributes"`
		Dropped uint32          `json:"dropped_attributes_count"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make([]event, len(raw))
	for i, e := range raw {
		out[i] = event{time: e.Time, name: []byte(e.Name), dropped: e.Dropped}
		if len(e.Attrs) > 0 {
			attrs, err := attrsOfJSON(e.Attrs)
			if err != nil {
				return nil, err
			}
			out[i].attrs = attrs
		}
	}
	return out, nil
}

// linksOfJSON reads a version-1 links column: [{"trace_id":hex,"span_id":hex,
// "trace_state":…,"flags":n,"attributes":{…},"dropped_attributes_count":n}].
func linksOfJSON(b []byte) ([]link, error) {
	var raw []struct {
		TraceID    string          `json:"trace_id"`
		SpanID     string          `json:"span_id"`
		TraceState string          `json:"trace_state"`
		Flags      uint32          `json:"flags"`
		Attrs      json.RawMessage `json:"attributes"`
		Dropped    uint32          `json:"dropped_attributes_count"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make([]link, len(raw))
	for i, l := range raw {
		out[i] = link{traceID: []byte(l.TraceID), spanID: []byte(l.SpanID), traceState: []byte(l.TraceState), flags: l.Flags, dropped: l.Dropped}
		if len(l.Attrs) > 0 {
			attrs, err := attrsOfJSON(l.Attrs)
			if err != nil {
				return nil, err
			}
			out[i].attrs = attrs
		}
	}
	return out, nil
}

// isV1 reports whether pf is a version-1 file.
func isV1(pf *parquet.File) bool {
	v, ok := pf.Lookup(lake.SchemaVersionKey)
	return !ok || v == "1"
}

// serviceOf is a decoded span's service: its resource's string
// service.name, else unknown_service, as the lake's service_name column.
func serviceOf(sp *span) string {
	if len(sp.resourceAttrs) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(sp.resourceAttrs, &m) == nil {
			var s string
			if json.Unmarshal(m["service.name"], &s) == nil && s != "" {
				return s
			}
		}
	}
	return "unknown_service"
}

// searchV1 adds the traces of version-1 file pf that q matches to found,
// decoding every row.
func (q *Query) searchV1(pf *parquet.File, found map[[16]byte]*FoundTrace) error {
	return eachRow(pf, func(sp *span) error {
		if q.Service != "" && serviceOf(sp) != q.Service || q.Operation != "" && string(sp.name) != q.Operation {
			return nil
		}
		if !q.StartMin.IsZero() && sp.start < q.StartMin.UnixNano() || !q.StartMax.IsZero() && sp.start >= q.StartMax.UnixNano() {
			return nil
		}
		d := time.Duration(sp.end - sp.start)
		if q.DurationMin > 0 && d < q.DurationMin || q.DurationMax > 0 && d > q.DurationMax {
			return nil
		}
		for k, want := range q.Attributes {
			if k == "error" && want == "true" && string(sp.statusCode) == "STATUS_CODE_ERROR" {
				continue
			}
			if !spanHasAttribute(sp, k, want) {
				return nil
			}
		}
		var id [16]byte
		if len(sp.traceID) != 32 {
			return nil
		}
		if _, err := hex.Decode(id[:], sp.traceID); err != nil {
			return nil
		}
		start := time.Unix(0, sp.start).UTC()
		end := start.Add(d)
		if t := found[id]; t == nil {
			found[id] = &FoundTrace{ID: id, Start: start, End: end}
		} else {
			t.Start, t.End = minTime(t.Start, start), maxTime(t.End, end)
		}
		return nil
	})
}

// spanHasAttribute reports whether sp, its resource or its scope has
// attribute k with text want.
func spanHasAttribute(sp *span, k, want string) bool {
	for _, a := range sp.attrs {
		if string(a.key) == k && !a.null && string(a.text) == want {
			return true
		}
	}
	for _, obj := range [][]byte{sp.resourceAttrs, sp.scopeAttrs} {
		if v, ok := jsonAttributeText(obj, k); ok && v == want {
			return true
		}
	}
	return false
}

// namesV1 reads the distinct span names of version-1 file pf.
func namesV1(pf *parquet.File) ([]spanName, error) {
	seen := map[spanName]struct{}{}
	err := eachRow(pf, func(sp *span) error {
		seen[spanName{serviceOf(sp), string(sp.name), string(sp.kind)}] = struct{}{}
		return nil
	})
	out := make([]spanName, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	return out, err
}
