package lake

import (
	"encoding/hex"

	"github.com/parquet-go/parquet-go"
)

// Schema version 2 (docs/format/lake-parquet.md lists every column, and
// TestFormatDocMatchesSchema fails when the page and this code disagree).
// Every file of a signal has the same columns, so that DuckDB, pyarrow,
// Spark and Trino read a whole lake without union_by_name:
//
//   - times are TIMESTAMP(NANOS, UTC); durations int64 nanoseconds;
//   - span kind and status code are their OTLP enum names (SPAN_KIND_SERVER,
//     STATUS_CODE_ERROR), dictionary-encoded strings;
//   - service_name is always set, "unknown_service" when the resource has
//     no string service.name (as the SDKs name it);
//   - attributes is a map of every attribute of the record, values as
//     text (strings as they are, ints and doubles in decimal, bools as
//     true/false, bytes in base64, arrays and key-value lists as JSON),
//     null for an empty value; resource_attributes and scope_attributes
//     are JSON objects (the JSON logical type), the same for every row of
//     a resource or scope and so dictionary encoded: a map there would be
//     written again on every row (~25 % of the CPU of a traces file in
//     BenchmarkSpansToParquet). The first occurrence of a key repeated in
//     one list is kept;
//   - attribute_types (and one in each event and link) is the type
//     signature of the map (appendTypes): a reader has every value back
//     with its OTLP type. The JSON of resource and scope attributes (and
//     of arrays and key-value lists anywhere) types its values itself: a
//     double always has a fraction or an exponent; bytes there read back
//     as their base64 string, and NaN and ±Inf as the strings proto3 JSON
//     writes for them;
//   - the hot keys (hotKeys) also have a typed column each, null where the
//     row has no value of that type;
//   - a span's events and links are lists of structs, with their own
//     attribute maps;
//   - resource_schema_url and scope_schema_url are kept.
//
// The key-value metadata "wirehouse.schema_version" is "2"; files without
// it are version 1.

// SchemaVersion is the version of the lake files a Writer writes by
// default; SchemaVersionKey is the key-value metadata that holds it.
const (
	SchemaVersion    = 2
	SchemaVersionKey = "wirehouse.schema_version"
)

// unknownService is the service_name of a resource without a string
// service.name, as the OpenTelemetry SDKs name it.
const unknownService = "unknown_service"

// A hotKey is an attribute that gets a typed column of its own in version
// 2, besides its place in the map: the semantic-convention keys queries
// filter and group by most (where a service runs; HTTP, RPC and database
// calls; errors). Its column is ColumnName(origin, key); a value of
// another type is null there (and text in the map). Every file has every
// hot column, mostly null: each costs ~3 % of the CPU of writing a traces
// file (BenchmarkSpansToParquet), which is why there are few.
type hotKey struct {
	origin Origin
	key    string
	kind   Kind // KindString or KindInt
}

var hotKeys = []hotKey{
	{OriginResource, "service.version", KindString},
	{OriginResource, "deployment.environment.name", KindString},
	{OriginResource, "k8s.namespace.name", KindString},
	{OriginResource, "k8s.pod.name", KindString},
	{OriginResource, "host.name", KindString},
	{OriginRecord, "http.request.method", KindString},
	{OriginRecord, "http.response.status_code", KindInt},
	{OriginRecord, "http.route", KindString},
	{OriginRecord, "rpc.method", KindString},
	{OriginRecord, "db.system.name", KindString},
	{OriginRecord, "error.type", KindString},
}

// hotSet holds the kinds of hotKeys by origin and key.
var hotSet = func() map[hotKey]Kind {
	m := make(map[hotKey]Kind, len(hotKeys))
	for _, h := range hotKeys {
		m[hotKey{origin: h.origin, key: h.key}] = h.kind
	}
	return m
}()

// The OTLP names of span kinds and status codes, by number.
var (
	spanKindNames   = byteStrings("SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER")
	statusCodeNames = byteStrings("STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR")
)

func byteStrings(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, v := range s {
		out[i] = []byte(v)
	}
	return out
}

// spanColumnsV2 are the columns of a traces file, version 2.
func spanColumnsV2(r *SpanRows, n int) []fileCol {
	cols := []fileCol{
		idCol("trace_id", &r.TraceID),
		idCol("span_id", &r.SpanID),
		idCol("parent_span_id", &r.ParentSpanID),
		stringCol("trace_state", &r.TraceState, false),
		stringCol("name", &r.Name, true),
		enumCol("kind", r.Kind, spanKindNames),
		timeCol("start_time", r.StartTime),
		timeCol("end_time", r.EndTime),
		int64Col("duration", func(i int32) int64 { return r.EndTime[i] - r.StartTime[i] }),
		enumCol("status_code", r.StatusCode, statusCodeNames),
		stringCol("status_message", &r.StatusMessage, true),
		uint32Col("flags", r.Flags),
		uint32Col("dropped_attributes_count", r.DroppedAttributes),
		uint32Col("dropped_events_count", r.DroppedEvents),
		uint32Col("dropped_links_count", r.DroppedLinks),
		eventsCol(r),
		linksCol(r),
	}
	return append(cols, commonColumnsV2(&r.attrRows, &r.ScopeName, &r.ScopeVersion, n)...)
}

// logColumnsV2 are the columns of a logs file, version 2.
func logColumnsV2(r *LogRows, n int) []fileCol {
	cols := []fileCol{
		timeCol("timestamp", r.Time),
		timeCol("observed_timestamp", r.ObservedTime),
		int32Col("severity_number", r.SeverityNumber),
		stringCol("severity_text", &r.SeverityText, true),
		bodyCol(r),
		idCol("trace_id", &r.TraceID),
		idCol("span_id", &r.SpanID),
		uint32Col("flags", r.Flags),
		stringCol("event_name", &r.EventName, true),
		uint32Col("dropped_attributes_count", r.DroppedAttributes),
	}
	return append(cols, commonColumnsV2(&r.attrRows, &r.ScopeName, &r.ScopeVersion, n)...)
}

// commonColumnsV2 are the columns both signals have: service, scope,
// schema URLs, the attribute maps and the hot keys.
func commonColumnsV2(a *attrRows, scopeName, scopeVersion *Strings, n int) []fileCol {
	cols := []fileCol{
		stringCol("service_name", &a.ServiceName, true),
		stringCol("scope_name", scopeName, true),
		stringCol("scope_version", scopeVersion, true),
		stringCol("resource_schema_url", &a.ResourceSchemaURL, true),
		stringCol("scope_schema_url", &a.ScopeSchemaURL, true),
		jsonCol("resource_attributes", &a.ResourceAttrs),
		jsonCol("scope_attributes", &a.ScopeAttrs),
		mapCol("attributes", a),
		stringCol("attribute_types", &a.AttrTypes, true),
	}
	for _, h := range hotKeys {
		cols = append(cols, hotCol(a, h, n))
	}
	return cols
}

// timeCol is a required TIMESTAMP(NANOS, UTC) column, DELTA_BINARY_PACKED:
// rows of a service in time order differ by little, and the deltas cost
// about half the bytes of zstd over PLAIN (BenchmarkLogsToParquet: 107.8
// -> 100.6 bytes a log in all; spans 113.3 -> 108.2), and less to read.
func timeCol(name string, s []int64) fileCol {
	return fileCol{name: name, node: parquet.Encoded(parquet.Timestamp(parquet.Nanosecond), &parquet.DeltaBinaryPacked), fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.Int64Value(s[r])
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// enumCol is a required string column of the names of an OTLP enum; a
// number without a name is written as the number. Strings, not the ENUM
// logical type: pyarrow reads ENUM as binary.
func enumCol(name string, s []int32, names [][]byte) fileCol {
	node := parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	return fileCol{name: name, node: node, fill: func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			var b []byte
			if v := s[r]; v >= 0 && int(v) < len(names) {
				b = names[v]
			} else {
				start := len(e.text)
				e.text = appendText(e.text, KindInt, uint64(int64(v)), nil)
				b = e.text[start:len(e.text):len(e.text)]
			}
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.ByteArrayValue(b)
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// hotCol is the typed column of hot key h: the value of rows that have
// one of its kind, else null.
func hotCol(a *attrRows, h hotKey, n int) fileCol {
	name := ColumnName(h.origin, []byte(h.key))
	node := parquet.Optional(parquet.Int(64))
	if h.kind == KindString {
		node = parquet.Optional(parquet.Encoded(parquet.String(), &parquet.RLEDictionary))
	}
	c := a.cols.index[h.origin][h.key]
	if c == nil || c.gen != a.cols.gen {
		return fileCol{name: name, node: node, fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
			null := parquet.Value{}.Level(0, 0, idx)
			for range sel {
				dst = append(dst, null)
			}
			return dst
		}}
	}
	return fileCol{name: name, node: node, dyn: c, n: n, fill: func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		null := parquet.Value{}.Level(0, 0, idx)
		for _, r := range sel {
			i := e.at[r]
			if i < 0 || c.Kinds[i] != h.kind {
				dst = append(dst, null)
				continue
			}
			dst = append(dst, parquet.Value{}) // then set in place: see fillFunc
			if h.kind == KindString {
				dst[len(dst)-1] = parquet.ByteArrayValue(c.Strs.At(int(i)))
			} else {
				dst[len(dst)-1] = parquet.Int64Value(int64(c.Nums[i]))
			}
			dst[len(dst)-1].SetDefinitionLevel(1)
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// mapNode is the node of an attribute map: dictionary-encoded keys,
// optional text values.
func mapNode() parquet.Node {
	return parquet.Map(parquet.Encoded(parquet.String(), &parquet.RLEDictionary), parquet.Optional(parquet.String()))
}

// pairValue appends the map value of pair p to dst: null (def-1) for an
// empty value, else its text at level def.
func (e *encoder) pairValue(dst []parquet.Value, p staged, rep, def, idx int) []parquet.Value {
	switch p.kind {
	case 0:
		dst = append(dst, parquet.Value{})
		dst[len(dst)-1].SetRepetitionLevel(rep)
		dst[len(dst)-1].SetDefinitionLevel(def - 1)
		dst[len(dst)-1].SetColumnIndex(idx)
		return dst
	case KindString, KindJSON:
		dst = append(dst, parquet.Value{})
		dst[len(dst)-1] = parquet.ByteArrayValue(p.col.Strs.at(p.ref))
		dst[len(dst)-1].SetRepetitionLevel(rep)
		dst[len(dst)-1].SetDefinitionLevel(def)
		dst[len(dst)-1].SetColumnIndex(idx)
		return dst
	}
	start := len(e.text)
	e.text = appendText(e.text, p.kind, p.num, p.col.Strs.at(p.ref))
	dst = append(dst, parquet.Value{})
	dst[len(dst)-1] = parquet.ByteArrayValue(e.text[start:len(e.text):len(e.text)])
	dst[len(dst)-1].SetRepetitionLevel(rep)
	dst[len(dst)-1].SetDefinitionLevel(def)
	dst[len(dst)-1].SetColumnIndex(idx)
	return dst
}

// jsonCol is a required column of JSON objects (the JSON logical type),
// dictionary encoded: rows of one resource or scope share one value.
func jsonCol(name string, s *Strings) fileCol {
	node := parquet.Encoded(parquet.JSON(), &parquet.RLEDictionary)
	return fileCol{name: name, node: node, fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.ByteArrayValue(s.At(int(r)))
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// mapCol is the attribute map of every row.
func mapCol(name string, a *attrRows) fileCol {
	fill := func(value bool) fillFunc {
		return func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
			for _, r := range sel {
				pr := a.rowPairs[r]
				if pr.len() == 0 {
					dst = append(dst, parquet.Value{})
					dst[len(dst)-1].SetColumnIndex(idx)
					continue
				}
				for j, p := range a.pairs[pr.lo:pr.hi] {
					rep := min(j, 1)
					if value {
						dst = e.pairValue(dst, p, rep, 2, idx)
					} else {
						dst = append(dst, p.col.keyv)
						dst[len(dst)-1].SetRepetitionLevel(rep)
						dst[len(dst)-1].SetDefinitionLevel(1)
						dst[len(dst)-1].SetColumnIndex(idx)
					}
				}
			}
			return dst
		}
	}
	return fileCol{name: name, node: mapNode(), leaves: []leafCol{
		{path: []string{"key_value", "key"}, fill: fill(false)},
		{path: []string{"key_value", "value"}, fill: fill(true)},
	}}
}

// A nestedList describes a list of structs in each row (a span's events
// or links): the range of its elements in row r, and the attribute pairs
// of element i.
type nestedList struct {
	rows  func(r int32) pairRange
	attrs func(i uint32) pairRange
}

// scalarLeaf is the fill of a required scalar field of the elements of l:
// value(i) of element i at levels (rep, 1), an empty list null at (0, 0).
func (l nestedList) scalarLeaf(value func(e *encoder, i uint32) parquet.Value) fillFunc {
	return func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, r := range sel {
			rg := l.rows(r)
			if rg.len() == 0 {
				dst = append(dst, parquet.Value{})
				dst[len(dst)-1].SetColumnIndex(idx)
				continue
			}
			for i := rg.lo; i < rg.hi; i++ {
				dst = append(dst, value(e, i))
				dst[len(dst)-1].SetRepetitionLevel(min(int(i-rg.lo), 1))
				dst[len(dst)-1].SetDefinitionLevel(1)
				dst[len(dst)-1].SetColumnIndex(idx)
			}
		}
		return dst
	}
}

// mapLeaves are the key and value leaves of the attribute map of the
// elements of l, under path.
func (l nestedList) mapLeaves(a *attrRows, path ...string) []leafCol {
	fill := func(value bool) fillFunc {
		return func(e *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
			for _, r := range sel {
				rg := l.rows(r)
				if rg.len() == 0 {
					dst = append(dst, parquet.Value{})
					dst[len(dst)-1].SetColumnIndex(idx)
					continue
				}
				for i := rg.lo; i < rg.hi; i++ {
					erep := min(int(i-rg.lo), 1)
					pr := l.attrs(i)
					if pr.len() == 0 {
						dst = append(dst, parquet.Value{})
						dst[len(dst)-1].SetRepetitionLevel(erep)
						dst[len(dst)-1].SetDefinitionLevel(1)
						dst[len(dst)-1].SetColumnIndex(idx)
						continue
					}
					for j, p := range a.pairs[pr.lo:pr.hi] {
						rep := erep
						if j > 0 {
							rep = 2
						}
						if value {
							dst = e.pairValue(dst, p, rep, 3, idx)
						} else {
							dst = append(dst, p.col.keyv)
							dst[len(dst)-1].SetRepetitionLevel(rep)
							dst[len(dst)-1].SetDefinitionLevel(2)
							dst[len(dst)-1].SetColumnIndex(idx)
						}
					}
				}
			}
			return dst
		}
	}
	return []leafCol{
		{path: append(append([]string{}, path...), "key_value", "key"), fill: fill(false)},
		{path: append(append([]string{}, path...), "key_value", "value"), fill: fill(true)},
	}
}

func eventsNode() parquet.Node {
	return parquet.List(parquet.Group{
		"time":                     parquet.Timestamp(parquet.Nanosecond),
		"name":                     parquet.Encoded(parquet.String(), &parquet.RLEDictionary),
		"attributes":               mapNode(),
		"attribute_types":          parquet.Encoded(parquet.String(), &parquet.RLEDictionary),
		"dropped_attributes_count": parquet.Uint(32),
	})
}

func linksNode() parquet.Node {
	return parquet.List(parquet.Group{
		"trace_id":                 parquet.String(),
		"span_id":                  parquet.String(),
		"trace_state":              parquet.String(),
		"flags":                    parquet.Uint(32),
		"attributes":               mapNode(),
		"attribute_types":          parquet.Encoded(parquet.String(), &parquet.RLEDictionary),
		"dropped_attributes_count": parquet.Uint(32),
	})
}

// nestedNodes are the nested columns of version 2 by name, as they are
// written, for compaction to write them again (a file's schema as read
// does not say which leaves are dictionary encoded).
var nestedNodes = map[string]func() parquet.Node{
	"attributes": mapNode,
	"events":     eventsNode,
	"links":      linksNode,
}

// eventsCol is a span's events: a list of {time, name, attributes,
// dropped_attributes_count}.
func eventsCol(r *SpanRows) fileCol {
	l := nestedList{
		rows:  func(row int32) pairRange { return r.rowEvents[row] },
		attrs: func(i uint32) pairRange { return r.events[i].attrs },
	}
	node := eventsNode()
	el := []string{"list", "element"}
	leaves := []leafCol{
		{path: append(el[:2:2], "time"), fill: l.scalarLeaf(func(_ *encoder, i uint32) parquet.Value { return parquet.Int64Value(r.events[i].time) })},
		{path: append(el[:2:2], "name"), fill: l.scalarLeaf(func(_ *encoder, i uint32) parquet.Value {
			return parquet.ByteArrayValue(r.nestedStrs.at(r.events[i].name))
		})},
		{path: append(el[:2:2], "dropped_attributes_count"), fill: l.scalarLeaf(func(_ *encoder, i uint32) parquet.Value {
			return parquet.Int32Value(int32(r.events[i].dropped))
		})},
		{path: append(el[:2:2], "attribute_types"), fill: l.scalarLeaf(func(_ *encoder, i uint32) parquet.Value {
			return parquet.ByteArrayValue(r.nestedStrs.at(r.events[i].types))
		})},
	}
	return fileCol{name: "events", node: node, leaves: append(leaves, l.mapLeaves(&r.attrRows, "list", "element", "attributes")...)}
}

// linksCol is a span's links: a list of {trace_id, span_id, trace_state,
// flags, attributes, dropped_attributes_count}, ids in lowercase hex.
func linksCol(r *SpanRows) fileCol {
	l := nestedList{
		rows:  func(row int32) pairRange { return r.rowLinks[row] },
		attrs: func(i uint32) pairRange { return r.links[i].attrs },
	}
	node := linksNode()
	hexOf := func(e *encoder, ref Ref) parquet.Value {
		start := len(e.text)
		e.text = hex.AppendEncode(e.text, r.nestedStrs.at(ref))
		return parquet.ByteArrayValue(e.text[start:len(e.text):len(e.text)])
	}
	el := []string{"list", "element"}
	leaves := []leafCol{
		{path: append(el[:2:2], "trace_id"), fill: l.scalarLeaf(func(e *encoder, i uint32) parquet.Value { return hexOf(e, r.links[i].traceID) })},
		{path: append(el[:2:2], "span_id"), fill: l.scalarLeaf(func(e *encoder, i uint32) parquet.Value { return hexOf(e, r.links[i].spanID) })},
		{path: append(el[:2:2], "trace_state"), fill: l.scalarLeaf(func(_ *encoder, i uint32) parquet.Value {
			return parquet.ByteArrayValue(r.nestedStrs.at(r.links[i].traceState))
		})},
		{path: append(el[:2:2], "flags"), fill: l.scalarLeaf(func(_ *encoder, i uint32) parquet.Value { return parquet.Int32Value(int32(r.links[i].flags)) })},
		{path: append(el[:2:2], "dropped_attributes_count"), fill: l.scalarLeaf(func(_ *encoder, i uint32) parquet.Value {
			return parquet.Int32Value(int32(r.links[i].dropped))
		})},
		{path: append(el[:2:2], "attribute_types"), fill: l.scalarLeaf(func(_ *encoder, i uint32) parquet.Value {
			return parquet.ByteArrayValue(r.nestedStrs.at(r.links[i].types))
		})},
	}
	return fileCol{name: "links", node: node, leaves: append(leaves, l.mapLeaves(&r.attrRows, "list", "element", "attributes")...)}
}

// HotColumn returns the name of the typed column a version-2 file keeps
// for the span or log record attribute key, and whether it holds
// integers (else strings), if key is a hot key: a reader may filter on
// that column rather than the attribute map. A value of the other type
// than the column's is only in the map.
func HotColumn(key string) (name string, isInt bool, ok bool) {
	for _, h := range hotKeys {
		if h.origin == OriginRecord && h.key == key {
			return ColumnName(h.origin, []byte(key)), h.kind == KindInt, true
		}
	}
	return "", false, false
}
