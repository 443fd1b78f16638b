package tracemetrics

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Span kinds and the error status code, as OTLP numbers them.
const (
	kindUnspecified = 0
	kindInternal    = 1
	kindServer      = 2
	kindClient      = 3
	kindProducer    = 4
	kindConsumer    = 5
	statusError     = 2
)

var (
	kindNames   = [...]string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}
	statusNames = [...]string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}
)

// Stats count what the bounds turned away, since New.
type Stats struct {
	Spans        uint64 // spans counted
	Overflow     uint64 // spans of a new dimension set past MaxSeries, in the overflow series
	GraphDropped uint64 // edges of a new graph series past MaxGraphSeries, not counted
	EdgesDropped uint64 // spans that would have opened an edge past MaxEdges
	Expired      uint64 // edges that became virtual-node edges, or were dropped, at their TTL
}

// Generator is the cumulative state of every tenant's span metrics and
// service graph. Its methods may be called from several goroutines.
type Generator struct {
	cfg   Config
	start uint64 // ns: the service graph's series' start time, as the connector's

	mu      sync.Mutex
	tenants map[string]*tenantState
	stats   Stats
	key     []byte // scratch for series keys
	attrs   [][]byte
}

type tenantState struct {
	resources map[uint64]*resourceState // by the resource's attributes' identity hash (in any order)
	order     []*resourceState
	nSeries   int
	overflow  *spanSeries // in an empty resource; nil until needed

	graph      map[string]*graphSeries
	graphOrder []*graphSeries
	edges      map[edgeKey]*edge
	fifo       []*edge // edges by expiry; completed ones are skipped
}

type resourceState struct {
	resource []byte // the Resource message, copied
	series   map[string]*spanSeries
	order    []*spanSeries
}

// spanSeries is one span-metric series: its calls and its duration
// histogram share the attributes.
type spanSeries struct {
	attrs   [][]byte // KeyValue messages
	start   uint64   // ns
	flushed bool
	dirty   bool // counted since its last write
	calls   uint64
	counts  []uint64
	sum     float64
	// exemplars of the spans counted since the last write (with
	// Config.Exemplars); the first exWritten of them are in the write
	// under way.
	exemplars []exemplar
	exWritten int
}

// zeroTraceID is the empty trace id, which makes no exemplar.
var zeroTraceID [16]byte

// exemplar is a span counted in a span-metric series.
type exemplar struct {
	traceID [16]byte
	spanID  [8]byte
	hasSpan bool
	ms      float64
}

// graphSeries is one service-graph series: its request and failed
// counts and its server and client latency histograms (whose count is
// total) share the attributes.
type graphSeries struct {
	attrs     [][]byte
	flushed   bool
	dirty     bool // counted since its last write
	total     uint64
	failed    uint64
	server    []uint64
	serverSum float64
	client    []uint64
	clientSum float64
}

type edgeKey [24]byte // trace id, then the client's span id

type edge struct {
	key                  edgeKey
	client, server       []byte // service names (server: an AnyValue's text)
	connType             string
	failed               bool
	clientLat, serverLat float64 // seconds
	peer                 []byte
	expires              time.Time
	done                 bool
}

// New returns a Generator of cfg; its service-graph series start at now.
func New(cfg Config, now time.Time) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Generator{cfg: cfg, start: uint64(now.UnixNano()), tenants: map[string]*tenantState{}}, nil
}

// Stats returns the counts of what the bounds turned away.
func (g *Generator) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats
}

func (g *Generator) tenant(t string) *tenantState {
	ts := g.tenants[t]
	if ts == nil {
		ts = &tenantState{resources: map[uint64]*resourceState{}, graph: map[string]*graphSeries{}, edges: map[edgeKey]*edge{}}
		g.tenants[t] = ts
	}
	return ts
}

// Consume counts the spans of req, an OTLP traces request, for tenant t,
// received at now. Spans of a resource without a service.name are not
// counted, as the connectors skip them. It keeps no reference to req.
func (g *Generator) Consume(t string, req []byte, now time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	ts := g.tenant(t)
	var f otlpwire.SpanFields
	for rs, err := range otlpwire.TracesRequest(req).ResourceSpans() {
		if err != nil {
			return fmt.Errorf("read traces request: %w", err)
		}
		res, err := rs.Resource()
		if err != nil {
			return fmt.Errorf("read resource: %w", err)
		}
		rattrs, err := res.Attributes()
		if err != nil {
			return fmt.Errorf("read resource: %w", err)
		}
		svc, ok, err := rattrs.Get("service.name")
		if err != nil || !ok || svc.Type() != otlpwire.ValueString {
			continue
		}
		service := svc.Str()
		var rst *resourceState
		dbName, hasDB := lookup(rattrs, "db.name")
		for ss, err := range rs.ScopeSpans() {
			if err != nil {
				return fmt.Errorf("read scope spans: %w", err)
			}
			for sp, err := range ss.Spans() {
				if err != nil {
					return fmt.Errorf("read span: %w", err)
				}
				if err := sp.Read(&f); err != nil {
					return fmt.Errorf("read span: %w", err)
				}
				if rst == nil {
					if rst, err = g.resource(ts, res, rattrs); err != nil {
						return err
					}
				}
				g.stats.Spans++
				g.spanMetrics(ts, rst, service, &f, rattrs, now)
				g.graphSpan(ts, service, &f, dbName, hasDB, now)
			}
		}
	}
	return nil
}

// resource returns the state of res, made if new: resources are one
// when their attributes are, in whatever order (as the connector keys
// them by a hash of the attribute map).
func (g *Generator) resource(ts *tenantState, res otlpwire.Resource, attrs otlpwire.Attributes) (*resourceState, error) {
	h, err := attrs.Hash()
	if err != nil {
		return nil, fmt.Errorf("read resource: %w", err)
	}
	if r := ts.resources[h]; r != nil {
		return r, nil
	}
	r := &resourceState{resource: slices.Clone([]byte(res)), series: map[string]*spanSeries{}}
	ts.resources[h] = r
	ts.order = append(ts.order, r)
	return r, nil
}

// spanMetrics counts f in its span-metric series.
func (g *Generator) spanMetrics(ts *tenantState, rst *resourceState, service []byte, f *otlpwire.SpanFields, rattrs otlpwire.Attributes, now time.Time) {
	kind := kindName(f.Kind)
	status := statusName(f.StatusCode)
	k := append(g.key[:0], f.Name...)
	k = append(k, 0)
	k = append(k, kind...)
	k = append(k, 0)
	k = append(k, status...)
	dims := g.attrs[:0]
	for _, d := range g.cfg.Dimensions {
		kv, ok := dimension(d, f.Attributes, rattrs)
		k = append(k, 0)
		if ok {
			k = append(k, kv...)
			dims = append(dims, kv)
		}
	}
	g.key, g.attrs = k, dims
	s := rst.series[string(k)]
	if s == nil {
		if ts.nSeries >= g.cfg.MaxSeries {
			g.stats.Overflow++
			if ts.overflow == nil {
				ts.overflow = &spanSeries{attrs: [][]byte{boolKV("otel.metric.overflow", true)},
					start: uint64(now.UnixNano()), counts: make([]uint64, len(SpanBoundsMs)+1)}
			}
			s = ts.overflow
		} else {
			attrs := [][]byte{stringKV("service.name", service), stringKV("span.name", f.Name),
				stringKV("span.kind", []byte(kind)), stringKV("status.code", []byte(status))}
			if g.cfg.InstanceID != "" {
				attrs = append(attrs, stringKV("collector.instance.id", []byte(g.cfg.InstanceID)))
			}
			for _, kv := range dims {
				attrs = append(attrs, slices.Clone(kv))
			}
			s = &spanSeries{attrs: attrs, start: uint64(now.UnixNano()), counts: make([]uint64, len(SpanBoundsMs)+1)}
			rst.series[string(k)] = s
			rst.order = append(rst.order, s)
			ts.nSeries++
		}
	}
	var ms float64
	if f.EndTime > f.StartTime {
		ms = float64(f.EndTime-f.StartTime) / 1e6
	}
	s.calls++
	s.dirty = true
	s.counts[sort.SearchFloat64s(SpanBoundsMs, ms)]++
	s.sum += ms
	// As the connector: none in the overflow series, none of a span
	// without a trace id.
	if g.cfg.Exemplars && s != ts.overflow && len(s.exemplars) < g.cfg.MaxExemplarsPerPoint &&
		len(f.TraceID) == 16 && string(f.TraceID) != string(zeroTraceID[:]) {
		e := exemplar{ms: ms, hasSpan: len(f.SpanID) == 8}
		copy(e.traceID[:], f.TraceID)
		copy(e.spanID[:], f.SpanID)
		s.exemplars = append(s.exemplars, e)
	}
}

// graphSpan pairs f into its edge, if it is a client, producer, server or
// consumer span.
func (g *Generator) graphSpan(ts *tenantState, service []byte, f *otlpwire.SpanFields, dbName []byte, hasDB bool, now time.Time) {
	if len(f.TraceID) != 16 {
		return
	}
	var key edgeKey
	copy(key[:16], f.TraceID)
	// An end before the start wraps, as the connector's uint64
	// subtraction does: the +Inf bucket.
	lat := float64(f.EndTime-f.StartTime) / 1e9
	failed := f.StatusCode == statusError
	switch f.Kind {
	case kindClient, kindProducer:
		if len(f.SpanID) != 8 {
			return
		}
		copy(key[16:], f.SpanID)
		connType := ""
		if f.Kind == kindProducer {
			connType = "messaging_system"
		}
		spanDB, hasSpanDB, peer, hasPeer := g.clientAttrs(f.Attributes)
		if !hasDB {
			dbName, hasDB = spanDB, hasSpanDB
		}
		e, ok := g.edgeFor(ts, key, now)
		if !ok {
			return
		}
		e.connType, e.client, e.clientLat = connType, append(e.client[:0], service...), lat
		e.failed = e.failed || failed
		if hasPeer {
			e.peer = append(e.peer[:0], peer...)
		}
		if hasDB {
			e.connType, e.server, e.serverLat = "database", append(e.server[:0], dbName...), lat
		}
		g.settle(ts, e)
	case kindServer, kindConsumer:
		if len(f.ParentSpanID) == 8 {
			copy(key[16:], f.ParentSpanID)
		} else if len(f.ParentSpanID) != 0 {
			return
		}
		connType := ""
		if f.Kind == kindConsumer {
			connType = "messaging_system"
		}
		e, ok := g.edgeFor(ts, key, now)
		if !ok {
			return
		}
		e.connType, e.server, e.serverLat = connType, append(e.server[:0], service...), lat
		e.failed = e.failed || failed
		g.settle(ts, e)
	}
}

// clientAttrs reads a client span's attributes once for what its edge
// needs: its db.name, and the first attribute of
// VirtualNodePeerAttributes (in their order) it has as a scalar, the
// virtual node's name should no server span come. Each is the text
// lookup gives, of the first attribute of its key.
func (g *Generator) clientAttrs(attrs otlpwire.Attributes) (dbName []byte, hasDB bool, peer []byte, hasPeer bool) {
	peers := g.cfg.VirtualNodePeerAttributes
	rank := len(peers) // of the peer found: its index in peers
	dbSeen := false
	var seen uint64 // the keys of peers already met: only the first of a key counts
	for kv, err := range attrs.All() {
		if err != nil {
			break
		}
		if !dbSeen && string(kv.Key) == "db.name" {
			dbSeen = true
			dbName, hasDB = text(kv.Value)
		}
		for i, p := range peers[:min(rank, 64)] {
			if string(kv.Key) != p {
				continue
			}
			if seen&(1<<i) != 0 {
				break // a key met before (or named twice in peers): its first counts
			}
			seen |= 1 << i
			if v, ok := text(kv.Value); ok {
				peer, hasPeer, rank = v, true, i
			}
			break
		}
	}
	return dbName, hasDB, peer, hasPeer
}

// edgeFor returns the edge of key, opened if new; false when the store
// is full.
func (g *Generator) edgeFor(ts *tenantState, key edgeKey, now time.Time) (*edge, bool) {
	if e := ts.edges[key]; e != nil {
		return e, true
	}
	if len(ts.edges) >= g.cfg.MaxEdges {
		g.stats.EdgesDropped++
		return nil, false
	}
	e := &edge{key: key, expires: now.Add(g.cfg.EdgeTTL)}
	ts.edges[key] = e
	ts.fifo = append(ts.fifo, e)
	return e, true
}

// settle counts e and closes it once it has both sides.
func (g *Generator) settle(ts *tenantState, e *edge) {
	if len(e.client) == 0 || len(e.server) == 0 {
		return
	}
	g.count(ts, e)
	e.done = true
	delete(ts.edges, e.key)
}

// Expire turns the edges past their TTL at now into virtual-node edges:
// a client's to its peer (or "unknown"), a root server span's from
// "user"; it drops the other unpaired server spans.
func (g *Generator) Expire(now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ts := range g.tenants {
		i := 0
		for ; i < len(ts.fifo); i++ {
			e := ts.fifo[i]
			if e.done {
				continue
			}
			if e.expires.After(now) {
				break
			}
			g.stats.Expired++
			e.done = true
			delete(ts.edges, e.key)
			e.connType = "virtual_node"
			switch {
			case len(e.client) == 0:
				if [8]byte(e.key[16:]) != [8]byte{} {
					continue // a server span whose client never came
				}
				e.client = []byte("user")
			case len(e.server) == 0:
				e.server = e.peer
				if len(e.server) == 0 {
					e.server = []byte("unknown")
				}
			}
			g.count(ts, e)
		}
		ts.fifo = ts.fifo[i:]
		if len(ts.fifo) == 0 {
			ts.fifo = nil
		}
	}
}

// count adds e to its graph series.
func (g *Generator) count(ts *tenantState, e *edge) {
	k := append(g.key[:0], e.client...)
	k = append(k, 0)
	k = append(k, e.server...)
	k = append(k, 0)
	k = append(k, e.connType...)
	if e.failed {
		k = append(k, 0, 1)
	}
	g.key = k
	s := ts.graph[string(k)]
	if s == nil {
		if len(ts.graph) >= g.cfg.MaxGraphSeries {
			g.stats.GraphDropped++
			return
		}
		attrs := [][]byte{stringKV("client", e.client), stringKV("server", e.server)}
		if e.connType != "" {
			attrs = append(attrs, stringKV("connection_type", []byte(e.connType)))
		}
		attrs = append(attrs, boolKV("failed", e.failed))
		s = &graphSeries{attrs: attrs, server: make([]uint64, len(GraphBoundsSec)+1), client: make([]uint64, len(GraphBoundsSec)+1)}
		ts.graph[string(k)] = s
		ts.graphOrder = append(ts.graphOrder, s)
	}
	s.total++
	s.dirty = true
	if e.failed {
		s.failed++
	}
	s.server[sort.SearchFloat64s(GraphBoundsSec, e.serverLat)]++
	s.serverSum += e.serverLat
	s.client[sort.SearchFloat64s(GraphBoundsSec, e.clientLat)]++
	s.clientSum += e.clientLat
}

func kindName(k int32) string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return kindNames[0]
}

func statusName(c int32) string {
	if c >= 0 && int(c) < len(statusNames) {
		return statusNames[c]
	}
	return statusNames[0]
}
