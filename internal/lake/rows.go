package lake

import (
	"slices"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// attrRows is the part of a batch that both signals share: the dynamic
// columns, the staged resource and scope values of the resource and scope
// being appended, and the service name of every row.
type attrRows struct {
	ServiceName Strings // the resource's service.name string, for sorting; empty if none
	// The schema URLs of each row's resource and scope.
	ResourceSchemaURL, ScopeSchemaURL Strings

	cols    columns
	recent  [256]*Column // record attribute columns by keySlot, to skip most map lookups
	res     []staged
	scope   []staged
	scratch []byte
	sig     []byte // a type signature being built

	// With keepPairs (schema version 2), every record's attribute pairs,
	// for the attributes map column, a key's first occurrence only:
	// rowPairs[i] are row i's, in pairs, which also holds the pairs of
	// nested messages (events, links). The resource's and the scope's are
	// JSON objects (ResourceAttrs, ScopeAttrs: one stored per resource or
	// scope, referenced by each row).
	keepPairs                 bool
	pairs                     []staged
	rowPairs                  []pairRange
	ResourceAttrs, ScopeAttrs Strings
	curResAttrs, curScAttrs   Ref
	// The type signature (appendTypes) of each row's attributes.
	AttrTypes           Strings
	curResURL, curScURL Ref
	// nested holds the attribute keys of nested messages (events, links),
	// which get no column of their own: its columns hold their values.
	nested columns
}

// pairRange is the pairs [lo, hi) of attrRows.pairs.
type pairRange struct{ lo, hi uint32 }

func (p pairRange) len() int { return int(p.hi - p.lo) }

// attrMark is where a batch's pair lists stood, to roll an append back to.
type attrMark struct{ pairs int }

func (r *attrRows) mark() attrMark { return attrMark{len(r.pairs)} }

// Columns returns the dynamic columns in order of first appearance. The
// slice and columns are owned by the batch and valid until its next Append
// or Reset.
func (r *attrRows) Columns() []*Column { return r.cols.list }

func (r *attrRows) reset() {
	r.ServiceName.Reset()
	r.ResourceSchemaURL.Reset()
	r.ScopeSchemaURL.Reset()
	r.ResourceAttrs.Reset()
	r.ScopeAttrs.Reset()
	r.AttrTypes.Reset()
	r.cols.reset()
	r.nested.reset()
	clear(r.pairs)
	r.pairs, r.rowPairs = r.pairs[:0], r.rowPairs[:0]
}

func (r *attrRows) truncate(n, ncols int) {
	r.ServiceName.spans = r.ServiceName.spans[:n]
	r.ResourceSchemaURL.spans = r.ResourceSchemaURL.spans[:n]
	r.ScopeSchemaURL.spans = r.ScopeSchemaURL.spans[:n]
	if r.keepPairs {
		r.ResourceAttrs.spans, r.ScopeAttrs.spans = r.ResourceAttrs.spans[:n], r.ScopeAttrs.spans[:n]
		r.AttrTypes.spans = r.AttrTypes.spans[:n]
	}
	r.cols.rollback(int32(n), ncols)
	if len(r.rowPairs) > n {
		r.rollbackPairs(attrMark{int(r.rowPairs[n].lo)})
		r.rowPairs = r.rowPairs[:n]
	}
}

// rollbackPairs drops the pairs appended since m.
func (r *attrRows) rollbackPairs(m attrMark) {
	clear(r.pairs[m.pairs:])
	r.pairs = r.pairs[:m.pairs]
}

// typeChars are the characters of a type signature, by
// otlpwire.ValueType: n(one), s(tring), b(ool), i(nt), d(ouble),
// a(rray), m(ap: a key-value list), y (bytes).
const typeChars = "nsbidamy"

// appendTypes appends the type signature of pairs to dst: one character
// of typeChars per pair, in order. A map or JSON object of attributes
// holds their values as text; with its signature a reader has them back
// with their types. Rows of one shape share a signature, so the columns
// of them, dictionary encoded, cost next to nothing.
func appendTypes(dst []byte, pairs []staged) []byte {
	for _, p := range pairs {
		dst = append(dst, typeChars[p.vt])
	}
	return dst
}

// storeJSON stores vals, staged resource or scope values, in arena as a
// JSON object, a key once (its first occurrence), as appendJSON writes
// the values (an empty value as null).
func (r *attrRows) storeJSON(arena *Strings, vals []staged) Ref {
	b := append(r.scratch[:0], '{')
	for i, s := range vals {
		if slices.ContainsFunc(vals[:i], func(p staged) bool { return p.col == s.col }) {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s.col.keyb)
		b = append(b, ':')
		if s.kind == 0 {
			b = append(b, "null"...)
		} else {
			b = appendJSONValue(b, s.kind, s.num, s.col.Strs.at(s.ref))
		}
	}
	b = append(b, '}')
	r.scratch = b
	return arena.store(b)
}

// nestedPairs stages the attributes of a nested message (an event, a
// link) as pairs, a key once, and returns their range.
func (r *attrRows) nestedPairs(attrs otlpwire.Attributes) (pairRange, error) {
	lo := uint32(len(r.pairs))
	for kv, err := range attrs.All() {
		if err != nil {
			return pairRange{}, err
		}
		c := r.nested.get(OriginRecord, kv.Key)
		if slices.ContainsFunc(r.pairs[lo:], func(p staged) bool { return p.col == c }) {
			continue
		}
		s, err := c.stage(kv.Value, &r.scratch)
		if err != nil {
			return pairRange{}, err
		}
		r.pairs = append(r.pairs, s)
	}
	return pairRange{lo, uint32(len(r.pairs))}, nil
}

// stageResource decodes a resource's attributes once, to be added to each
// of its rows, and returns its service.name (the first occurrence, as with
// pdata's Map.Get; empty unless a string).
func (r *attrRows) stageResource(attrs otlpwire.Attributes) (svc Ref, err error) {
	r.res = r.res[:0]
	seen := false
	for kv, err := range attrs.All() {
		if err != nil {
			return svc, err
		}
		s, err := r.cols.get(OriginResource, kv.Key).stage(kv.Value, &r.scratch)
		if err != nil {
			return svc, err
		}
		r.res = append(r.res, s)
		if !seen && string(kv.Key) == "service.name" {
			seen = true
			if kv.Value.Type() == otlpwire.ValueString {
				svc = r.ServiceName.store(kv.Value.Str())
			}
		}
	}
	if r.keepPairs {
		r.curResAttrs = r.storeJSON(&r.ResourceAttrs, r.res)
		if svc.n == 0 {
			svc = r.ServiceName.store([]byte(unknownService))
		}
	}
	return svc, nil
}

// stageScope decodes a scope's attributes once.
func (r *attrRows) stageScope(attrs otlpwire.Attributes) error {
	r.scope = r.scope[:0]
	for kv, err := range attrs.All() {
		if err != nil {
			return err
		}
		s, err := r.cols.get(OriginScope, kv.Key).stage(kv.Value, &r.scratch)
		if err != nil {
			return err
		}
		r.scope = append(r.scope, s)
	}
	if r.keepPairs {
		r.curScAttrs = r.storeJSON(&r.ScopeAttrs, r.scope)
	}
	return nil
}

// addAttrs gives row the staged resource and scope values, its service
// name and the record's own attributes.
func (r *attrRows) addAttrs(row int32, svc Ref, attrs otlpwire.Attributes) error {
	// With keepPairs, only the hot keys' columns are written: the others
	// are left empty, their values in pairs.
	for _, s := range r.res {
		if !r.keepPairs || s.col.hot {
			s.col.add(row, s.kind, s.num, s.ref)
		}
	}
	for _, s := range r.scope {
		if !r.keepPairs || s.col.hot {
			s.col.add(row, s.kind, s.num, s.ref)
		}
	}
	recLo := uint32(len(r.pairs))
	for kv, err := range attrs.All() {
		if err != nil {
			return err
		}
		// Records repeat a small set of keys: a direct-mapped cache on a
		// cheap hash of the key finds most columns with one comparison,
		// where the map would hash the whole key.
		slot := keySlot(kv.Key)
		c := r.recent[slot]
		if c == nil || c.gen != r.cols.gen || c.Key != string(kv.Key) {
			c = r.cols.get(OriginRecord, kv.Key)
			r.recent[slot] = c
		}
		s, err := c.stage(kv.Value, &r.scratch)
		if err != nil {
			return err
		}
		if r.keepPairs {
			if c.taken == row+1 {
				continue // a key repeated in the list: the first wins
			}
			r.pairs = append(r.pairs, s)
			if !c.hot {
				c.taken = row + 1
				continue
			}
		}
		c.add(row, s.kind, s.num, s.ref)
	}
	r.ServiceName.AppendRef(svc)
	r.ResourceSchemaURL.AppendRef(r.curResURL)
	r.ScopeSchemaURL.AppendRef(r.curScURL)
	if r.keepPairs {
		r.rowPairs = append(r.rowPairs, pairRange{recLo, uint32(len(r.pairs))})
		r.ResourceAttrs.AppendRef(r.curResAttrs)
		r.ScopeAttrs.AppendRef(r.curScAttrs)
		r.sig = appendTypes(r.sig[:0], r.pairs[recLo:])
		r.AttrTypes.Append(r.sig)
	}
	return nil
}

// keySlot is a slot of attrRows.recent for an attribute key: its length
// and three of its bytes, which tell apart the keys of one source.
func keySlot(k []byte) uint8 {
	n := len(k)
	if n == 0 {
		return 0
	}
	return uint8(n*31 + int(k[0])*7 + int(k[n/2])*3 + int(k[n-1]))
}

// resourceContainer is a ResourceLogs or a ResourceSpans, and
// scopeContainer a ScopeLogs or a ScopeSpans: what a batch reads of them
// besides their records.
type (
	resourceContainer interface {
		Resource() (otlpwire.Resource, error)
		SchemaURL() ([]byte, error)
	}
	scopeContainer interface {
		Scope() (otlpwire.Scope, error)
		SchemaURL() ([]byte, error)
	}
)

// startResource stages the attributes and schema URL of the resource of
// rc, for the rows of its records, and returns the ref of its service
// name.
func startResource[RC resourceContainer](r *attrRows, rc RC) (svc Ref, err error) {
	res, err := rc.Resource()
	if err != nil {
		return svc, err
	}
	var rf otlpwire.ResourceFields
	if err := res.Read(&rf); err != nil {
		return svc, err
	}
	if svc, err = r.stageResource(rf.Attributes); err != nil {
		return svc, err
	}
	url, err := rc.SchemaURL()
	if err != nil {
		return svc, err
	}
	r.curResURL = r.ResourceSchemaURL.store(url)
	return svc, nil
}

// startScope stages the attributes and schema URL of the scope of sc, for
// the rows of its records, stores its name and version in names and
// versions, and returns their refs.
func startScope[SC scopeContainer](r *attrRows, names, versions *Strings, sc SC) (name, version Ref, err error) {
	s, err := sc.Scope()
	if err != nil {
		return name, version, err
	}
	var sf otlpwire.ScopeFields
	if err := s.Read(&sf); err != nil {
		return name, version, err
	}
	if err := r.stageScope(sf.Attributes); err != nil {
		return name, version, err
	}
	url, err := sc.SchemaURL()
	if err != nil {
		return name, version, err
	}
	r.curScURL = r.ScopeSchemaURL.store(url)
	return names.store(sf.Name), versions.store(sf.Version), nil
}
