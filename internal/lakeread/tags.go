package lakeread

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TagScope is where a span attribute lives, as Tempo's tag APIs name
// them.
type TagScope string

const (
	TagSpan            TagScope = "span"
	TagResource        TagScope = "resource"
	TagEvent           TagScope = "event"
	TagLink            TagScope = "link"
	TagInstrumentation TagScope = "instrumentation"
)

// TagScopes are the scopes TraceTagNames answers, in Tempo's order.
var TagScopes = []TagScope{TagResource, TagSpan, TagEvent, TagLink, TagInstrumentation}

// tagColumns are the columns of a version-2 traces file that hold each
// scope's attribute names: a map's key column, or a JSON object column.
var tagColumns = map[TagScope]struct {
	col  string
	json bool
}{
	TagSpan:            {"attributes.key_value.key", false},
	TagEvent:           {"events.list.element.attributes.key_value.key", false},
	TagLink:            {"links.list.element.attributes.key_value.key", false},
	TagResource:        {"resource_attributes", true},
	TagInstrumentation: {"scope_attributes", true},
}

// tagCache keeps each traces file's attribute names by scope.
type tagCache = fileMemo[map[TagScope][]string]

// TraceTagNames returns the attribute names of tenant's spans in the
// partitions that overlap [start, end), and of the spans not in files
// yet, by scope, each sorted. A file's names come from its columns'
// dictionaries (or, for a column not all dictionary-coded, its values),
// read once and kept.
func (r *Reader) TraceTagNames(ctx context.Context, tenant string, start, end time.Time) (map[TagScope][]string, error) {
	seen := map[TagScope]map[string]bool{}
	for _, s := range TagScopes {
		seen[s] = map[string]bool{}
	}
	q := r.newQuery(tenant, start, end)
	err := q.fresh(ctx, func(p []byte) error { return freshTagNames(p, seen) })
	if err != nil {
		return nil, err
	}
	files, err := q.list(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		names, ok := r.tags.get(keyOf(f))
		if !ok {
			err := q.file(ctx, f, func(_ lake.DataFile, pf *parquet.File) error {
				var err error
				names, err = fileTagNames(pf)
				return err
			})
			if err != nil {
				return nil, err
			}
			r.tags.put(keyOf(f), names)
		}
		for s, ns := range names {
			for _, n := range ns {
				seen[s][n] = true
			}
		}
	}
	out := map[TagScope][]string{}
	for s, m := range seen {
		out[s] = slices.Sorted(maps.Keys(m))
	}
	return out, nil
}

// fileTagNames reads a traces file's attribute names by scope (none for
// a version-1 file).
func fileTagNames(pf *parquet.File) (map[TagScope][]string, error) {
	out := map[TagScope][]string{}
	if isV1(pf) {
		return out, nil
	}
	for s, c := range tagColumns {
		vals, err := distinctValues(pf, c.col)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.col, err)
		}
		if !c.json {
			for _, v := range vals {
				out[s] = append(out[s], string(v))
			}
			continue
		}
		keys := map[string]bool{}
		for _, v := range vals {
			objectKeys(v, keys)
		}
		out[s] = slices.Sorted(maps.Keys(keys))
	}
	return out, nil
}

// distinctValues returns the distinct non-null byte array values of
// column name (dotted path) of pf: its dictionaries' entries when every
// data page of it is dictionary-coded, else every value read.
func distinctValues(pf *parquet.File, name string) ([][]byte, error) {
	lc, found := pf.Schema().Lookup(strings.Split(name, ".")...)
	if !found {
		return nil, nil
	}
	seen := map[string]bool{}
	var out [][]byte
	add := func(b []byte) {
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, bytes.Clone(b))
		}
	}
	md := pf.Metadata()
	for i, rg := range pf.RowGroups() {
		if rg.NumRows() == 0 {
			continue
		}
		cc := rg.ColumnChunks()[lc.ColumnIndex]
		if i < len(md.RowGroups) && lc.ColumnIndex < len(md.RowGroups[i].Columns) && allDictionary(md.RowGroups[i].Columns[lc.ColumnIndex].MetaData.EncodingStats) {
			pages := cc.Pages()
			d, err := readDictionary(pages)
			pages.Close()
			if err != nil {
				return nil, err
			}
			for j := range d.Len() {
				add(d.Index(int32(j)).ByteArray())
			}
			continue
		}
		vals, err := columnValues(cc, nil)
		if err != nil {
			return nil, err
		}
		for _, v := range vals {
			if !v.IsNull() {
				add(v.ByteArray())
			}
		}
	}
	return out, nil
}

// allDictionary reports whether encoding stats say every data page is
// dictionary-coded (false without stats: not known).
func allDictionary(stats []format.PageEncodingStats) bool {
	if len(stats) == 0 {
		return false
	}
	for _, s := range stats {
		if (s.PageType == format.DataPage || s.PageType == format.DataPageV2) && s.Count > 0 &&
			s.Encoding != format.RLEDictionary && s.Encoding != format.PlainDictionary {
			return false
		}
	}
	return true
}

// freshTagNames adds the attribute names of an OTLP traces request.
func freshTagNames(payload []byte, seen map[TagScope]map[string]bool) error {
	keys := func(s TagScope, a otlpwire.Attributes) error {
		for kv, err := range a.All() {
			if err != nil {
				return err
			}
			seen[s][string(kv.Key)] = true
		}
		return nil
	}
	return otlpwire.TracesRequest(payload).Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(rs otlpwire.ResourceSpans) error {
			res, err := rs.Resource()
			if err != nil {
				return err
			}
			a, err := res.Attributes()
			if err != nil {
				return err
			}
			return keys(TagResource, a)
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
			return keys(TagInstrumentation, f.Attributes)
		},
		Span: func(sp otlpwire.Span) error {
			var f otlpwire.SpanFields
			if err := sp.Read(&f); err != nil {
				return err
			}
			if err := keys(TagSpan, f.Attributes); err != nil {
				return err
			}
			return eachNestedAttributes(&f, keys)
		},
	})
}

// TagValue is an attribute value and its type, as Tempo's v2 tag values
// API types them: "string", "int", "float", "bool".
type TagValue struct {
	Type, Value string
}

// TraceTagValues returns the distinct values (at most max) of attribute
// key in scope (TagSpan or TagResource) of tenant's spans in the
// partitions that overlap [start, end), and of the spans not in files
// yet, sorted by type then value. Resource values come from the
// resource column's dictionaries; span values from the places of key in
// the attributes map, typed by attribute_types.
func (r *Reader) TraceTagValues(ctx context.Context, tenant string, scope TagScope, key string, start, end time.Time, max int) ([]TagValue, error) {
	nested := map[TagScope]string{TagEvent: "events", TagLink: "links"}[scope]
	if scope != TagSpan && scope != TagResource && scope != TagInstrumentation && nested == "" {
		return nil, fmt.Errorf("lakeread: tag values of scope %q are not kept apart", scope)
	}
	seen := map[TagValue]bool{}
	full := func() bool { return len(seen) >= max }
	q := r.newQuery(tenant, start, end)
	err := q.fresh(ctx, func(p []byte) error { return freshTagValues(p, scope, key, seen, max) })
	if err != nil {
		return nil, err
	}
	if scope == TagResource || scope == TagInstrumentation {
		// A file's resources and scopes are few: their values by key are
		// worked out once a file (resValues; a scope's keys prefixed by
		// scopeKey) and not read again.
		mkey := key
		if scope == TagInstrumentation {
			mkey = scopeKey + key
		}
		files, err := q.list(ctx)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if full() {
				break
			}
			vals, ok := r.resValues.get(keyOf(f))
			var objs, scopes [][]byte
			read := func() error {
				return q.file(ctx, f, func(_ lake.DataFile, pf *parquet.File) error {
					if isV1(pf) {
						return nil
					}
					var err error
					if objs, err = distinctValues(pf, "resource_attributes"); err != nil {
						return err
					}
					scopes, err = distinctValues(pf, "scope_attributes")
					return err
				})
			}
			if !ok {
				if err := read(); err != nil {
					return nil, err
				}
				vals = resourceTagValues(objs, "", resValuesPerKey)
				for k, vs := range resourceTagValues(scopes, "", resValuesPerKey) {
					vals[scopeKey+k] = vs
				}
				r.resValues.put(keyOf(f), vals)
			}
			vs, has := vals[mkey]
			if has && vs == nil { // more values than the memo keeps
				if objs == nil && scopes == nil {
					if err := read(); err != nil {
						return nil, err
					}
				}
				from := objs
				if scope == TagInstrumentation {
					from = scopes
				}
				vs = resourceTagValues(from, key, 0)[key]
			}
			for _, v := range vs {
				if !full() {
					seen[v] = true
				}
			}
		}
	} else {
		// A key's values in a file are read once (its places in the
		// attributes map of every row) and kept (spanValues).
		files, err := q.list(ctx)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			if full() {
				break
			}
			// A span attribute's, or (nested) an event's or a link's:
			// their memo keys are prefixed by the list's name.
			read := func(pf *parquet.File, into map[TagValue]bool, most int) error {
				if nested != "" {
					return nestedTagValues(pf, nested, key, into, most)
				}
				return spanTagValues(pf, key, into, most)
			}
			mkey := key
			if nested != "" {
				mkey = "\x00" + nested + "\x00" + key
			}
			m, _ := r.spanValues.get(keyOf(f))
			kv, ok := m[mkey]
			if ok && kv.cut && max > spanValuesPerKey {
				// More than the memo keeps: read for this request alone.
				err := q.file(ctx, f, func(_ lake.DataFile, pf *parquet.File) error {
					if isV1(pf) {
						return nil
					}
					return read(pf, seen, max)
				})
				if err != nil {
					return nil, err
				}
				continue
			}
			if !ok {
				set := map[TagValue]bool{}
				err := q.file(ctx, f, func(_ lake.DataFile, pf *parquet.File) error {
					if isV1(pf) {
						return nil
					}
					return read(pf, set, spanValuesPerKey+1)
				})
				if err != nil {
					return nil, err
				}
				kv = spanKeyValues{vals: slices.Collect(maps.Keys(set)), cut: len(set) > spanValuesPerKey}
				if kv.cut {
					kv.vals = kv.vals[:spanValuesPerKey]
				}
				next := maps.Clone(m)
				if next == nil {
					next = map[string]spanKeyValues{}
				}
				next[mkey] = kv
				r.spanValues.put(keyOf(f), next)
			}
			for _, v := range kv.vals {
				if !full() {
					seen[v] = true
				}
			}
		}
	}
	out := slices.Collect(maps.Keys(seen))
	slices.SortFunc(out, func(a, b TagValue) int {
		return cmp.Or(strings.Compare(a.Type, b.Type), strings.Compare(a.Value, b.Value))
	})
	return out, nil
}

// scopeKey prefixes the keys of scope (instrumentation) attributes in a
// file's resValues, beside its resource attributes' keys.
const scopeKey = "\x00scope\x00"

// resValuesPerKey is the most distinct values of a resource attribute a
// file's memo keeps: a key with more (an instance id, a pod's uid) is
// kept as "many" and its values read from the file when asked, so the
// memo holds the low-cardinality keys of many files.
const resValuesPerKey = 64

// resourceTagValues are the values, typed, of the keys (only's, or
// every key when only is "") of the JSON objects of attributes objs, each
// value once; a key with more than per values (per > 0) maps to nil.
func resourceTagValues(objs [][]byte, only string, per int) map[string][]TagValue {
	sets := map[string]map[TagValue]bool{}
	add := func(k string, v TagValue) {
		if only != "" && k != only {
			return
		}
		set := sets[k]
		if set == nil {
			set = map[TagValue]bool{}
			sets[k] = set
		}
		if per <= 0 || len(set) <= per {
			set[v] = true
		}
	}
	var pairs []typedKV
	for _, obj := range objs {
		var flat bool
		if pairs, flat = flatTagValues(obj, pairs[:0]); !flat {
			pairs = jsonTagValues(obj, pairs[:0])
		}
		for _, p := range pairs {
			add(p.key, p.v)
		}
	}
	out := make(map[string][]TagValue, len(sets))
	for k, set := range sets {
		if per > 0 && len(set) > per {
			out[k] = nil
			continue
		}
		out[k] = slices.Collect(maps.Keys(set))
	}
	return out
}

// typedKV is an attribute's key and typed value.
type typedKV struct {
	key string
	v   TagValue
}

// flatTagValues appends to out the typed values of a flat object (as
// eachFlatJSON reads them; the last of a repeated key, as encoding/json
// keeps), ~20x faster than jsonTagValues; false if obj is not flat.
func flatTagValues(obj []byte, out []typedKV) ([]typedKV, bool) {
	n := len(out)
	flat := eachFlatJSON(obj, func(k, v string, str bool) {
		t := flatType(v, str)
		for i := n; i < len(out); i++ {
			if out[i].key == k {
				out = slices.Delete(out, i, i+1)
				break
			}
		}
		if t != "" {
			out = append(out, typedKV{k, TagValue{t, v}})
		}
	})
	return out, flat
}

// jsonTagValues appends to out the typed values (rawTagValue's) of the
// JSON object obj, decoded by encoding/json: none if it is not one.
func jsonTagValues(obj []byte, out []typedKV) []typedKV {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return out
	}
	for k, raw := range m {
		if v, ok := rawTagValue(raw); ok {
			out = append(out, typedKV{k, v})
		}
	}
	return out
}

// flatType is the TagValue type of a flat JSON value (eachFlatJSON's),
// as rawTagValue types the same value: "" for none (an integer past
// int64).
func flatType(v string, str bool) string {
	switch {
	case str:
		return "string"
	case v == "true" || v == "false":
		return "bool"
	case strings.ContainsAny(v, ".eE"):
		return "float"
	}
	if _, err := strconv.ParseInt(v, 10, 64); err != nil {
		return ""
	}
	return "int"
}

// spanKeyValues are a span attribute's values in a file: all of them,
// or (cut) spanValuesPerKey of more.
type spanKeyValues struct {
	vals []TagValue
	cut  bool
}

// spanValuesPerKey is the most values of a span attribute a file's memo
// keeps: the tags API's most (a request asking for more reads the file).
const spanValuesPerKey = 1000

// spanValuesSize is what a file's span attribute values cost
// SpanValuesMemoBytes.
func spanValuesSize(m map[string]spanKeyValues) int64 {
	n := int64(64)
	for k, kv := range m {
		n += int64(len(k)) + 64
		for _, v := range kv.vals {
			n += int64(len(v.Type)+len(v.Value)) + 32
		}
	}
	return n
}

// resValuesSize is what a file's resource values cost resValuesMemoBytes.
func resValuesSize(m map[string][]TagValue) int64 {
	n := int64(64)
	for k, vs := range m {
		n += int64(len(k)) + 48
		for _, v := range vs {
			n += int64(len(v.Type)+len(v.Value)) + 32
		}
	}
	return n
}

// ResValuesMemoBytes bounds the resource attribute values a Reader keeps
// per spans file, SpanValuesMemoBytes the span attribute values.
const (
	ResValuesMemoBytes  = 4 << 20
	SpanValuesMemoBytes = 4 << 20
)

// rawTagValue is a JSON attribute value, typed: strings, booleans,
// floats and ints; not null, arrays or objects.
func rawTagValue(raw json.RawMessage) (TagValue, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return TagValue{"string", s}, true
	}
	text := string(raw)
	switch {
	case text == "true" || text == "false":
		return TagValue{"bool", text}, true
	case bytes.ContainsAny(raw, ".eE"):
		return TagValue{"float", text}, true
	}
	if _, err := strconv.ParseInt(text, 10, 64); err == nil {
		return TagValue{"int", text}, true
	}
	return TagValue{}, false // null, an array, an object
}

// typeNames are the TagValue types of attribute_types' characters.
var typeNames = map[byte]string{'s': "string", 'b': "bool", 'i': "int", 'd': "float"}

// spanTagValues adds the values of span attribute key in pf: the places
// of key in each row's map, the values at those places, their types from
// the row's attribute_types.
func spanTagValues(pf *parquet.File, key string, seen map[TagValue]bool, max int) error {
	leaves, err := leavesOf(pf, []string{"attributes.key_value.key", "attributes.key_value.value", "attribute_types"})
	if err != nil {
		return err
	}
	for _, rg := range pf.RowGroups() {
		if len(seen) >= max {
			return nil
		}
		type place struct {
			row int64
			at  int
		}
		var at []place
		err := scanPages(rg.ColumnChunks()[leaves[0].index], nil, func(p parquet.Page, first int64) error {
			eq, any := stringEq(p, key)
			if !any {
				return nil
			}
			walkPage(p, first, leaves[0], nil, func(row int64, i, k int) {
				if k >= 0 && eq(k) {
					at = append(at, place{row, i})
				}
			})
			return nil
		})
		if err != nil {
			return err
		}
		if len(at) == 0 {
			continue
		}
		rows := make([]int64, 0, len(at))
		for _, a := range at {
			rows = append(rows, a.row) // a key is once in a map: one place a row
		}
		types := map[int64]string{}
		err = scanPages(rg.ColumnChunks()[leaves[2].index], rows, func(p parquet.Page, first int64) error {
			get := bytesAt(p)
			walkPage(p, first, leaves[2], rows, func(row int64, _, k int) {
				if k >= 0 {
					types[row] = string(get(k))
				}
			})
			return nil
		})
		if err != nil {
			return err
		}
		j := 0
		err = scanPages(rg.ColumnChunks()[leaves[1].index], rows, func(p parquet.Page, first int64) error {
			get := bytesAt(p)
			walkPage(p, first, leaves[1], rows, func(row int64, i, k int) {
				for j < len(at) && (at[j].row < row || at[j].row == row && at[j].at < i) {
					j++
				}
				if j < len(at) && at[j].row == row && at[j].at == i && k >= 0 && len(seen) < max {
					sig := types[row]
					if i < len(sig) {
						if t, ok := typeNames[sig[i]]; ok {
							seen[TagValue{t, string(get(k))}] = true
						}
					}
				}
			})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// bytesAt returns the k-th non-null value of a byte array page.
func bytesAt(p parquet.Page) func(k int) []byte {
	data := p.Data()
	if d := p.Dictionary(); d != nil && data.Kind() == encoding.Int32 {
		idx := data.Int32()
		return func(k int) []byte { return d.Index(idx[k]).ByteArray() }
	}
	if data.Kind() != encoding.ByteArray {
		return func(int) []byte { return nil }
	}
	b, offs := data.ByteArray()
	return func(k int) []byte {
		if k+1 >= len(offs) {
			return nil
		}
		return b[offs[k]:offs[k+1]]
	}
}

// freshTagValues adds the values of key in scope of an OTLP traces
// request.
func freshTagValues(payload []byte, scope TagScope, key string, seen map[TagValue]bool, max int) error {
	add := func(a otlpwire.Attributes) error {
		v, ok, err := a.Get(key)
		if err != nil || !ok || len(seen) >= max {
			return err
		}
		switch v.Type() {
		case otlpwire.ValueString:
			seen[TagValue{"string", string(v.Str())}] = true
		case otlpwire.ValueInt:
			seen[TagValue{"int", strconv.FormatInt(v.Int(), 10)}] = true
		case otlpwire.ValueDouble:
			seen[TagValue{"float", strconv.FormatFloat(v.Double(), 'g', -1, 64)}] = true
		case otlpwire.ValueBool:
			seen[TagValue{"bool", strconv.FormatBool(v.Bool())}] = true
		}
		return nil
	}
	return otlpwire.TracesRequest(payload).Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(rs otlpwire.ResourceSpans) error {
			if scope != TagResource {
				return nil
			}
			res, err := rs.Resource()
			if err != nil {
				return err
			}
			a, err := res.Attributes()
			if err != nil {
				return err
			}
			return add(a)
		},
		ScopeSpans: func(ss otlpwire.ScopeSpans) error {
			if scope != TagInstrumentation {
				return nil
			}
			sc, err := ss.Scope()
			if err != nil {
				return err
			}
			var f otlpwire.ScopeFields
			if err := sc.Read(&f); err != nil {
				return err
			}
			return add(f.Attributes)
		},
		Span: func(sp otlpwire.Span) error {
			if scope != TagSpan && scope != TagEvent && scope != TagLink {
				return nil
			}
			var f otlpwire.SpanFields
			if err := sp.Read(&f); err != nil {
				return err
			}
			if scope == TagSpan {
				return add(f.Attributes)
			}
			return eachNestedAttributes(&f, func(s TagScope, a otlpwire.Attributes) error {
				if s != scope {
					return nil
				}
				return add(a)
			})
		},
	})
}

// eachNestedAttributes calls fn with the attributes of each of span f's
// events (TagEvent) then links (TagLink).
func eachNestedAttributes(f *otlpwire.SpanFields, fn func(TagScope, otlpwire.Attributes) error) error {
	for ev, err := range f.Events.All() {
		if err != nil {
			return err
		}
		var ef otlpwire.SpanEventFields
		if err := ev.Read(&ef); err != nil {
			return err
		}
		if err := fn(TagEvent, ef.Attributes); err != nil {
			return err
		}
	}
	for ln, err := range f.Links.All() {
		if err != nil {
			return err
		}
		var lf otlpwire.SpanLinkFields
		if err := ln.Read(&lf); err != nil {
			return err
		}
		if err := fn(TagLink, lf.Attributes); err != nil {
			return err
		}
	}
	return nil
}

// nestedTagValues adds the values of attribute key of the events or
// links (list, "events" or "links") of spans file pf: the slots of key in
// each element's attributes map, the values in the same slots, their
// types from the element's attribute_types. A slot is placed by the
// repetition levels: 0 starts a row, 1 an element, 2 the next pair of
// its map (1 for the types, a string an element).
func nestedTagValues(pf *parquet.File, list, key string, seen map[TagValue]bool, max int) error {
	base := list + ".list.element."
	leaves, err := leavesOf(pf, []string{base + "attributes.key_value.key", base + "attributes.key_value.value", base + "attribute_types"})
	if err != nil {
		return err
	}
	type place struct {
		row        int64
		slot       int // among the row's slots of the map leaves
		elem, pair int
	}
	// walk calls fn with each slot of a page of leaf l: its row, its
	// ordinal in the row, its element and pair, and its index among the
	// page's non-null values (-1: none).
	walk := func(p parquet.Page, first int64, l leaf, fn func(row int64, slot, elem, pair, k int)) {
		rep, def := p.RepetitionLevels(), p.DefinitionLevels()
		row, slot, elem, pair, k := first-1, 0, 0, 0, 0
		for i := range int(p.NumValues()) {
			switch {
			case rep == nil || rep[i] == 0:
				row, slot, elem, pair = row+1, 0, 0, 0
			case rep[i] == 1:
				slot, elem, pair = slot+1, elem+1, 0
			default:
				slot, pair = slot+1, pair+1
			}
			if def == nil || def[i] == l.maxDef {
				fn(row, slot, elem, pair, k)
				k++
			} else {
				fn(row, slot, elem, pair, -1)
			}
		}
	}
	for _, rg := range pf.RowGroups() {
		if len(seen) >= max {
			return nil
		}
		ccs := rg.ColumnChunks()
		var at []place
		err := scanPages(ccs[leaves[0].index], nil, func(p parquet.Page, first int64) error {
			eq, any := stringEq(p, key)
			if !any {
				return nil
			}
			walk(p, first, leaves[0], func(row int64, slot, elem, pair, k int) {
				if k >= 0 && eq(k) {
					at = append(at, place{row, slot, elem, pair})
				}
			})
			return nil
		})
		if err != nil {
			return err
		}
		if len(at) == 0 {
			continue
		}
		var rows []int64
		for _, a := range at {
			if len(rows) == 0 || rows[len(rows)-1] != a.row {
				rows = append(rows, a.row)
			}
		}
		types := map[[2]int64]string{} // (row, element): its types
		err = scanPages(ccs[leaves[2].index], rows, func(p parquet.Page, first int64) error {
			get := bytesAt(p)
			walk(p, first, leaves[2], func(row int64, _, elem, _, k int) {
				if k >= 0 {
					if _, ok := slices.BinarySearch(rows, row); ok {
						types[[2]int64{row, int64(elem)}] = string(get(k))
					}
				}
			})
			return nil
		})
		if err != nil {
			return err
		}
		j := 0
		err = scanPages(ccs[leaves[1].index], rows, func(p parquet.Page, first int64) error {
			get := bytesAt(p)
			walk(p, first, leaves[1], func(row int64, slot, _, _, k int) {
				for j < len(at) && (at[j].row < row || at[j].row == row && at[j].slot < slot) {
					j++
				}
				if j < len(at) && at[j].row == row && at[j].slot == slot && k >= 0 && len(seen) < max {
					sig := types[[2]int64{row, int64(at[j].elem)}]
					if at[j].pair < len(sig) {
						if t, ok := typeNames[sig[at[j].pair]]; ok {
							seen[TagValue{t, string(get(k))}] = true
						}
					}
				}
			})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
