package lake

import (
	"iter"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// attrRows is the part of a batch that both signals share: the dynamic
// columns, the staged resource and scope values of the resource and scope
// being appended, and the service name of every row.
type attrRows struct {
	ServiceName Strings // the resource's service.name string, for sorting; empty if none

	cols    columns
	recent  [256]*Column // record attribute columns by keySlot, to skip most map lookups
	res     []staged
	scope   []staged
	scratch []byte
}

// Columns returns the dynamic columns in order of first appearance. The
// slice and columns are owned by the batch and valid until its next Append
// or Reset.
func (r *attrRows) Columns() []*Column { return r.cols.list }

func (r *attrRows) reset() {
	r.ServiceName.Reset()
	r.cols.reset()
}

func (r *attrRows) truncate(n, ncols int) {
	r.ServiceName.spans = r.ServiceName.spans[:n]
	r.cols.rollback(int32(n), ncols)
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
	return nil
}

// addAttrs gives row the staged resource and scope values, its service
// name and the record's own attributes.
func (r *attrRows) addAttrs(row int32, svc Ref, attrs otlpwire.Attributes) error {
	for _, s := range r.res {
		s.col.add(row, s.kind, s.num, s.ref)
	}
	for _, s := range r.scope {
		s.col.add(row, s.kind, s.num, s.ref)
	}
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
		c.add(row, s.kind, s.num, s.ref)
	}
	r.ServiceName.AppendRef(svc)
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

// appendRequest walks the resource and scope containers of a logs or
// traces request: it stages each resource's and scope's attributes, stores
// the scope's name and version in names and versions, and calls record for
// each record of the scope with the refs of its service name, scope name
// and scope version. The accessors are the signal's container methods.
func appendRequest[RC, SC, Rec any](r *attrRows, names, versions *Strings,
	resources iter.Seq2[RC, error], resource func(RC) (otlpwire.Resource, error),
	scopes func(RC) iter.Seq2[SC, error], scope func(SC) (otlpwire.Scope, error),
	records func(SC) iter.Seq2[Rec, error], record func(rec Rec, svc, name, version Ref) error,
) error {
	var (
		rf otlpwire.ResourceFields
		sf otlpwire.ScopeFields
	)
	for rc, err := range resources {
		if err != nil {
			return err
		}
		res, err := resource(rc)
		if err != nil {
			return err
		}
		if err := res.Read(&rf); err != nil {
			return err
		}
		svc, err := r.stageResource(rf.Attributes)
		if err != nil {
			return err
		}
		for sc, err := range scopes(rc) {
			if err != nil {
				return err
			}
			s, err := scope(sc)
			if err != nil {
				return err
			}
			if err := s.Read(&sf); err != nil {
				return err
			}
			if err := r.stageScope(sf.Attributes); err != nil {
				return err
			}
			name, version := names.store(sf.Name), versions.store(sf.Version)
			for rec, err := range records(sc) {
				if err != nil {
					return err
				}
				if err := record(rec, svc, name, version); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
