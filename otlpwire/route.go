package otlpwire

import (
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
	"google.golang.org/protobuf/encoding/protowire"
)

// RouteKey says what a Router hashes to choose the shard of a part of a
// request.
type RouteKey uint8

// The route keys.
const (
	// RouteByResource keeps each resource container whole and hashes its
	// resource's attributes (Resource.Hash): every record of one resource
	// reaches the same shard.
	RouteByResource RouteKey = iota + 1
	// RouteByService keeps each resource container whole and hashes the
	// string value of its resource's service.name attribute (an empty
	// string when there is none): every resource of one service reaches
	// the same shard.
	RouteByService
	// RouteByTraceID cuts traces span by span and hashes each span's
	// trace_id: every span of one trace reaches the same shard. Traces
	// only.
	RouteByTraceID
)

// String returns "resource", "service" or "traceID", the names
// ParseRouteKey reads (the OpenTelemetry Collector's loadbalancing
// exporter calls its keys the same).
func (k RouteKey) String() string {
	switch k {
	case RouteByResource:
		return "resource"
	case RouteByService:
		return "service"
	case RouteByTraceID:
		return "traceID"
	}
	return fmt.Sprintf("RouteKey(%d)", uint8(k))
}

// ParseRouteKey parses "resource", "service" or "traceID".
func ParseRouteKey(s string) (RouteKey, error) {
	for _, k := range [...]RouteKey{RouteByResource, RouteByService, RouteByTraceID} {
		if s == k.String() {
			return k, nil
		}
	}
	return 0, fmt.Errorf("parse route key %q: %w: want resource, service or traceID", s, ErrRouteKey)
}

// ErrRouteKey is wrapped by the errors of a route key that is unknown or
// does not apply to the signal (RouteByTraceID for logs or metrics).
var ErrRouteKey = errors.New("invalid route key")

// TraceIDKey is the routing key of a trace id under RouteByTraceID, for
// callers that place spans read elsewhere on the same shards.
func TraceIDKey(id []byte) uint64 { return xxhash.Sum64(id) }

// ServiceKey is the routing key of a service name under RouteByService.
func ServiceKey(name []byte) uint64 { return xxhash.Sum64(name) }

// Router cuts export requests into one export request per shard without
// decoding them: resource containers go whole to the shard of their key,
// or, routed by trace id, each span goes to the shard of its trace and
// takes the fields of its resource and scope containers (everything but
// the repeated child field) with it, copied byte for byte. Records keep
// their order within a shard, and a container's spans that all go to one
// shard stay in one container.
//
// A Router reuses its scratch space; once it has seen the largest
// request it does not allocate. It is not safe for concurrent use.
type Router struct {
	key RouteKey
	// scratch for RouteByTraceID, per resource container
	shardOf []int32 // the shard of each span, in order
	scopeN  []int   // per scope container × shard: bytes of span fields
	resN    []int   // per shard: bytes of the resource container's body
	lens    []int   // len(dst[i]) on entry, to undo on error
}

// NewRouter returns a Router that routes by key.
func NewRouter(key RouteKey) (*Router, error) {
	if key < RouteByResource || key > RouteByTraceID {
		return nil, fmt.Errorf("new router: %w: %v", ErrRouteKey, key)
	}
	return &Router{key: key}, nil
}

// Key returns the Router's route key.
func (r *Router) Key() RouteKey { return r.key }

// Route appends to dst[i] the parts of req, an export request of signal
// sig, whose key shard maps to i; shard must return a value in
// [0, len(dst)). Each part is one resource container field, so every
// dst[i] that held an export request of the same signal before (an empty
// one included) holds one after: export requests concatenate. dst's
// slices are grown with append and owned by the caller, who may retain
// them; Route keeps no reference to them or to req.
//
// A malformed request is an error and leaves every dst[i] as it was; a
// request that Validate accepts is never refused. RouteByTraceID with a
// signal other than traces is an ErrRouteKey error.
func (r *Router) Route(sig Signal, dst [][]byte, req []byte, shard func(key uint64) int) error {
	if !sig.Valid() {
		return fmt.Errorf("route: signal %d: %w", sig, ErrRouteKey)
	}
	if r.key == RouteByTraceID && sig != SignalTraces {
		return fmt.Errorf("route %v: %w: traceID routes traces only", sig, ErrRouteKey)
	}
	r.lens = r.lens[:0]
	for _, d := range dst {
		r.lens = append(r.lens, len(d))
	}
	err := r.route(dst, req, shard)
	if err != nil {
		for i, n := range r.lens {
			dst[i] = dst[i][:n]
		}
		return fmt.Errorf("route %v: %w", sig, err)
	}
	return nil
}

func (r *Router) route(dst [][]byte, req []byte, shard func(uint64) int) error {
	idx := 0
	for i := 0; i < len(req); {
		n, typ, j, err := tag(req, i)
		if err != nil {
			return err
		}
		if n != fieldResources {
			if i, err = skip(req, j, typ); err != nil {
				return err
			}
			continue
		}
		if typ != wireBytes {
			return within(newErr(ErrWireType, 0, ""), "resource", idx, i)
		}
		body, end, err := bytesField(req, j)
		if err != nil {
			return within(err, "resource", idx, 0)
		}
		if r.key == RouteByTraceID {
			err = r.spans(dst, req[i:end], body, shard)
		} else {
			var k uint64
			if k, err = r.resourceKey(body); err == nil {
				s, serr := pick(shard, k, len(dst))
				if serr != nil {
					return serr
				}
				dst[s] = append(dst[s], req[i:end]...)
			}
		}
		if err != nil {
			return within(err, "resource", idx, end-len(body))
		}
		idx++
		i = end
	}
	return nil
}

func pick(shard func(uint64) int, k uint64, n int) (int, error) {
	s := shard(k)
	if s < 0 || s >= n {
		return 0, fmt.Errorf("shard %d of key %#x: %w: out of [0, %d)", s, k, ErrRouteKey, n)
	}
	return s, nil
}

// resourceKey is the key of a resource container under RouteByResource
// or RouteByService.
func (r *Router) resourceKey(container []byte) (uint64, error) {
	res, err := header(container, "resource", validateResource)
	if err != nil {
		return 0, err
	}
	if r.key == RouteByResource {
		return Resource(res).Hash()
	}
	name, err := Resource(res).ServiceName()
	if err != nil {
		return 0, err
	}
	return ServiceKey(name), nil
}

// spans routes the spans of one resource container (field holds its tag,
// length and body) in two passes: the first finds each span's shard and
// the size of every shard's containers, the second writes them with
// their lengths known.
func (r *Router) spans(dst [][]byte, field, body []byte, shard func(uint64) int) error {
	ns := len(dst)
	r.shardOf = r.shardOf[:0]
	r.scopeN = r.scopeN[:0]
	r.resN = extendZero(r.resN[:0], ns)
	resHdr := 0
	first, one := int32(-1), true
	// Pass 1.
	scope := 0
	for i := 0; i < len(body); {
		n, typ, j, err := tag(body, i)
		if err != nil {
			return err
		}
		end, err := skip(body, j, typ)
		if err != nil {
			return err
		}
		if n != fieldChildren {
			resHdr += end - i
			i = end
			continue
		}
		if typ != wireBytes {
			return within(newErr(ErrWireType, 0, ""), "scope_spans", scope, i)
		}
		sb, _, err := bytesField(body, j)
		if err != nil {
			return within(err, "scope_spans", scope, 0)
		}
		base := len(r.scopeN)
		r.scopeN = extendZero(r.scopeN, base+ns)
		scopeHdr := 0
		for k, sp := 0, 0; k < len(sb); {
			n, typ, l, err := tag(sb, k)
			if err != nil {
				return within(err, "scope_spans", scope, end-len(sb))
			}
			e, err := skip(sb, l, typ)
			if err != nil {
				return within(err, "scope_spans", scope, end-len(sb))
			}
			if n != fieldChildren {
				scopeHdr += e - k
				k = e
				continue
			}
			if typ != wireBytes {
				return within(within(newErr(ErrWireType, 0, ""), "spans", sp, k), "scope_spans", scope, end-len(sb))
			}
			span, _, err := bytesField(sb, l)
			if err != nil {
				return within(within(err, "spans", sp, 0), "scope_spans", scope, end-len(sb))
			}
			id, err := spanTraceID(span)
			if err != nil {
				return within(within(err, "spans", sp, e-len(span)), "scope_spans", scope, end-len(sb))
			}
			s, err := pick(shard, TraceIDKey(id), ns)
			if err != nil {
				return err
			}
			if first < 0 {
				first = int32(s)
			} else if int32(s) != first {
				one = false
			}
			r.shardOf = append(r.shardOf, int32(s))
			r.scopeN[base+s] += e - k
			sp++
			k = e
		}
		for s := range ns {
			if c := r.scopeN[base+s]; c > 0 {
				c += scopeHdr
				r.resN[s] += 1 + protowire.SizeVarint(uint64(c)) + c
				r.scopeN[base+s] = c // from now on: the scope container's body
			}
		}
		scope++
		i = end
	}
	if first < 0 {
		return nil // no spans: nothing to send anywhere
	}
	if one {
		dst[first] = append(dst[first], field...)
		return nil
	}
	// Pass 2.
	for s := range ns {
		if c := r.resN[s]; c > 0 {
			c += resHdr
			dst[s] = protowire.AppendTag(dst[s], fieldResources, wireBytes)
			dst[s] = protowire.AppendVarint(dst[s], uint64(c))
			dst[s] = appendHeader(dst[s], body)
		}
	}
	scope, spanIdx := 0, 0
	for i := 0; i < len(body); {
		n, typ, j, _ := tag(body, i)
		end, _ := skip(body, j, typ)
		if n != fieldChildren {
			i = end
			continue
		}
		sb, _, _ := bytesField(body, j)
		base := scope * ns
		for s := range ns {
			if c := r.scopeN[base+s]; c > 0 {
				dst[s] = protowire.AppendTag(dst[s], fieldChildren, wireBytes)
				dst[s] = protowire.AppendVarint(dst[s], uint64(c))
				dst[s] = appendHeader(dst[s], sb)
			}
		}
		for k := 0; k < len(sb); {
			n, typ, l, _ := tag(sb, k)
			e, _ := skip(sb, l, typ)
			if n == fieldChildren {
				s := r.shardOf[spanIdx]
				dst[s] = append(dst[s], sb[k:e]...)
				spanIdx++
			}
			k = e
		}
		scope++
		i = end
	}
	return nil
}

// appendHeader appends every field of a container but its children.
// The container's framing was checked.
func appendHeader(dst, container []byte) []byte {
	for i := 0; i < len(container); {
		n, typ, j, _ := tag(container, i)
		end, _ := skip(container, j, typ)
		if n != fieldChildren {
			dst = append(dst, container[i:end]...)
		}
		i = end
	}
	return dst
}

// spanTraceID returns a span's trace_id (the last one, as protobuf
// merges), checking its wire type and length.
func spanTraceID(span []byte) ([]byte, error) {
	var id []byte
	for i := 0; i < len(span); {
		n, typ, j, err := tag(span, i)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			if typ != wireBytes {
				return nil, newErr(ErrWireType, i, "trace_id")
			}
			v, end, err := bytesField(span, j)
			if err != nil {
				return nil, err
			}
			if err := checkID(v, 16, i, "trace_id"); err != nil {
				return nil, err
			}
			id, i = v, end
			continue
		}
		if i, err = skip(span, j, typ); err != nil {
			return nil, err
		}
	}
	return id, nil
}

// extendZero returns s extended to length n with zeros.
func extendZero(s []int, n int) []int {
	m := len(s)
	if cap(s) < n {
		s = append(s[:cap(s)], make([]int, n-cap(s))...)
	}
	s = s[:n]
	clear(s[m:])
	return s
}
