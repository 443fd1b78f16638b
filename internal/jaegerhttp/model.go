package jaegerhttp

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// The Jaeger UI's JSON model, as Jaeger's query service writes it (its
// internal/uimodel): field names, order and omissions are the contract.

type keyValue struct {
	Key   string `json:"key"`
	Type  string `json:"type,omitempty"`
	Value any    `json:"value"`
}

type process struct {
	ServiceName string     `json:"serviceName"`
	Tags        []keyValue `json:"tags"`
}

type reference struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

type logEntry struct {
	Timestamp uint64     `json:"timestamp"`
	Fields    []keyValue `json:"fields"`
}

type span struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []reference `json:"references"`
	StartTime     uint64      `json:"startTime"`
	Duration      uint64      `json:"duration"`
	Tags          []keyValue  `json:"tags"`
	Logs          []logEntry  `json:"logs"`
	ProcessID     string      `json:"processID,omitempty"`
	Warnings      []string    `json:"warnings"`

	proc   *process
	id     uint64
	parent uint64 // 0: none
	start  time.Time
	dur    time.Duration
}

type trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []span             `json:"spans"`
	Processes map[string]process `json:"processes"`
	Warnings  []string           `json:"warnings"`
}

// Value types of the Jaeger model, in the order its KeyValues sort them.
const (
	typeString = iota
	typeBool
	typeInt64
	typeFloat64
	typeBinary
)

var typeNames = [...]string{"string", "bool", "int64", "float64", "binary"}

// tag is a Jaeger KeyValue before it becomes JSON: kept typed so that tags
// sort and compare as Jaeger's do.
type tag struct {
	key string
	typ int
	s   string // string, or binary bytes
	i   int64  // int64 or bool (0, 1)
	f   float64
}

func (t tag) json() keyValue {
	kv := keyValue{Key: t.key, Type: typeNames[t.typ]}
	switch t.typ {
	case typeString:
		kv.Value = t.s
	case typeBool:
		kv.Value = t.i != 0
	case typeInt64:
		// Past JavaScript's safe integers, as a string, as Jaeger does.
		if t.i > 1<<53-1 || t.i < -(1<<53-1) {
			kv.Value = strconv.FormatInt(t.i, 10)
		} else {
			kv.Value = t.i
		}
	case typeFloat64:
		if math.IsNaN(t.f) || math.IsInf(t.f, 0) {
			kv.Value = strconv.FormatFloat(t.f, 'g', -1, 64) // JSON has no such numbers
		} else {
			kv.Value = t.f
		}
	case typeBinary:
		kv.Value = []byte(t.s)
	}
	return kv
}

func compareTags(a, b tag) int {
	return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.typ, b.typ),
		cmp.Compare(a.s, b.s), cmp.Compare(a.i, b.i), cmp.Compare(a.f, b.f))
}

func sortTags(ts []tag) { slices.SortStableFunc(ts, compareTags) }

func tagsJSON(ts []tag) []keyValue {
	out := make([]keyValue, len(ts))
	for i, t := range ts {
		out[i] = t.json()
	}
	return out
}

// builder turns OTLP spans into Jaeger traces, as Jaeger's query service
// does with what a remote storage returns: the Collector's OTLP to Jaeger
// translation, then the query service's standard adjusters (tags sorted,
// identical spans once, clock skew checked but not adjusted — its
// max_clock_skew_adjust default of 0 —, numeric IP tags as text, SDK tags
// moved to the process, references with no trace dropped, the parent
// first).
type builder struct {
	traces map[[16]byte]*rawTrace
	order  [][16]byte
}

type rawTrace struct {
	spans []rawSpan
}

type rawSpan struct {
	traceID  [16]byte
	id       uint64
	name     string
	refs     []rawRef
	start    time.Time
	dur      time.Duration
	tags     []tag
	logs     [][]tag
	logTimes []time.Time
	proc     procTags
	warnings []string
}

type rawRef struct {
	trace    [16]byte
	span     uint64
	followed bool // FOLLOWS_FROM, else CHILD_OF
}

type procTags struct {
	service string
	tags    []tag
}

// add adds the spans of an encoded OTLP TracesData.
func (b *builder) add(td []byte) error {
	if b.traces == nil {
		b.traces = map[[16]byte]*rawTrace{}
	}
	var proc *procTags
	var sf otlpwire.ScopeFields
	return otlpwire.TracesRequest(td).Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(rs otlpwire.ResourceSpans) error {
			p, hasScopes, err := resourceProcess(rs)
			if err == nil && p == nil && !hasScopes {
				return otlpwire.Skip
			}
			proc = p
			return err
		},
		ScopeSpans: func(ss otlpwire.ScopeSpans) error {
			sc, err := ss.Scope()
			if err != nil {
				return err
			}
			return sc.Read(&sf)
		},
		Span: func(sp otlpwire.Span) error { return b.addSpan(sp, &sf, proc) },
	})
}

// resourceProcess is the Jaeger process of a resource: its service.name
// (Jaeger's "OTLPResourceNoServiceName" for a resource with no
// attributes) and its other attributes as tags; nil, false for a
// resource with neither attributes nor scopes, which Jaeger drops.
func resourceProcess(rs otlpwire.ResourceSpans) (*procTags, bool, error) {
	res, err := rs.Resource()
	if err != nil {
		return nil, false, err
	}
	var rf otlpwire.ResourceFields
	if err := res.Read(&rf); err != nil {
		return nil, false, err
	}
	p := &procTags{}
	n := 0
	found := false
	for kv, err := range rf.Attributes.All() {
		if err != nil {
			return nil, false, err
		}
		n++
		if string(kv.Key) == "service.name" && !found {
			found = true
			p.service = string(kv.Value.Str())
			continue
		}
		p.tags = append(p.tags, attrTag(kv))
	}
	hasScopes := false
	for _, err := range rs.ScopeSpans() {
		if err != nil {
			return nil, false, err
		}
		hasScopes = true
		break
	}
	if n == 0 {
		if !hasScopes {
			return nil, false, nil
		}
		p.service = "OTLPResourceNoServiceName"
	}
	return p, hasScopes, nil
}

var zeroTrace [16]byte

func (b *builder) addSpan(sp otlpwire.Span, sc *otlpwire.ScopeFields, proc *procTags) error {
	var f otlpwire.SpanFields
	if err := sp.Read(&f); err != nil {
		return err
	}
	var rsp rawSpan
	copy(rsp.traceID[:], f.TraceID)
	rsp.id = id64(f.SpanID)
	rsp.name = string(f.Name)
	rsp.start = time.Unix(0, int64(f.StartTime)).UTC()
	rsp.dur = time.Duration(int64(f.EndTime) - int64(f.StartTime))
	cp := *proc
	cp.tags = slices.Clone(proc.tags)
	rsp.proc = cp

	if parent := id64(f.ParentSpanID); parent != 0 {
		rsp.refs = append(rsp.refs, rawRef{trace: rsp.traceID, span: parent})
	}
	for l, err := range f.Links.All() {
		if err != nil {
			return err
		}
		var lf otlpwire.SpanLinkFields
		if err := l.Read(&lf); err != nil {
			return err
		}
		var ref rawRef
		copy(ref.trace[:], lf.TraceID)
		ref.span = id64(lf.SpanID)
		ref.followed = true
		if v, ok, err := lf.Attributes.Get("opentracing.ref_type"); err != nil {
			return err
		} else if ok && v.Type() == otlpwire.ValueString && string(v.Str()) == "child_of" {
			ref.followed = false
		}
		if len(rsp.refs) > 0 && rsp.refs[0].trace == ref.trace && rsp.refs[0].span == ref.span && f.ParentSpanID != nil {
			rsp.refs[0].followed = ref.followed
			continue
		}
		rsp.refs = append(rsp.refs, ref)
	}

	if len(sc.Name) > 0 {
		rsp.tags = append(rsp.tags, tag{key: "otel.scope.name", s: string(sc.Name)})
	}
	if len(sc.Version) > 0 {
		rsp.tags = append(rsp.tags, tag{key: "otel.scope.version", s: string(sc.Version)})
	}
	for kv, err := range f.Attributes.All() {
		if err != nil {
			return err
		}
		if string(kv.Key) == "@jaeger@warnings" && kv.Value.Type() == otlpwire.ValueArray {
			for v, err := range kv.Value.Array().All() {
				if err != nil {
					return err
				}
				rsp.warnings = append(rsp.warnings, string(v.Str()))
			}
			continue
		}
		rsp.tags = append(rsp.tags, attrTag(kv))
	}
	if k := spanKinds[f.Kind]; k != "" {
		rsp.tags = append(rsp.tags, tag{key: "span.kind", s: k})
	}
	switch f.StatusCode {
	case 1:
		rsp.tags = append(rsp.tags, tag{key: "otel.status_code", s: "OK"})
	case 2:
		rsp.tags = append(rsp.tags, tag{key: "otel.status_code", s: "ERROR"}, tag{key: "error", typ: typeBool, i: 1})
	}
	if len(f.StatusMessage) > 0 {
		rsp.tags = append(rsp.tags, tag{key: "otel.status_description", s: string(f.StatusMessage)})
	}
	if len(f.TraceState) > 0 {
		rsp.tags = append(rsp.tags, tag{key: "w3c.tracestate", s: string(f.TraceState)})
	}

	for e, err := range f.Events.All() {
		if err != nil {
			return err
		}
		var ef otlpwire.SpanEventFields
		if err := e.Read(&ef); err != nil {
			return err
		}
		var fields []tag
		_, named, err := ef.Attributes.Get("event")
		if err != nil {
			return err
		}
		if len(ef.Name) > 0 && !named {
			fields = append(fields, tag{key: "event", s: string(ef.Name)})
		}
		for kv, err := range ef.Attributes.All() {
			if err != nil {
				return err
			}
			fields = append(fields, attrTag(kv))
		}
		rsp.logs = append(rsp.logs, fields)
		rsp.logTimes = append(rsp.logTimes, time.Unix(0, int64(ef.Time)).UTC())
	}

	t := b.traces[rsp.traceID]
	if t == nil {
		t = &rawTrace{}
		b.traces[rsp.traceID] = t
		b.order = append(b.order, rsp.traceID)
	}
	t.spans = append(t.spans, rsp)
	return nil
}

var spanKinds = map[int32]string{1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}

func id64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// attrTag is the Jaeger tag of an OTLP attribute: maps and arrays as
// their JSON text, as the Collector's translator writes them.
func attrTag(kv otlpwire.KeyValue) tag {
	t := tag{key: string(kv.Key)}
	v := kv.Value
	switch v.Type() {
	case otlpwire.ValueString:
		t.s = string(v.Str())
	case otlpwire.ValueBool:
		t.typ = typeBool
		if v.Bool() {
			t.i = 1
		}
	case otlpwire.ValueInt:
		t.typ, t.i = typeInt64, v.Int()
	case otlpwire.ValueDouble:
		t.typ, t.f = typeFloat64, v.Double()
	case otlpwire.ValueBytes:
		t.typ, t.s = typeBinary, string(v.Bytes())
	case otlpwire.ValueArray, otlpwire.ValueKVList:
		b, err := json.Marshal(rawValue(v))
		if err == nil {
			t.s = string(b)
		}
	}
	return t
}

// rawValue is v as Go values for encoding/json, as pdata's AsRaw gives
// them (the translator's AsString of a map or array marshals that).
func rawValue(v otlpwire.Value) any {
	switch v.Type() {
	case otlpwire.ValueString:
		return string(v.Str())
	case otlpwire.ValueBool:
		return v.Bool()
	case otlpwire.ValueInt:
		return v.Int()
	case otlpwire.ValueDouble:
		return v.Double()
	case otlpwire.ValueBytes:
		return v.Bytes()
	case otlpwire.ValueArray:
		out := []any{}
		for e, err := range v.Array().All() {
			if err != nil {
				break
			}
			out = append(out, rawValue(e))
		}
		return out
	case otlpwire.ValueKVList:
		out := map[string]any{}
		for kv, err := range v.KVList().All() {
			if err != nil {
				break
			}
			out[string(kv.Key)] = rawValue(kv.Value)
		}
		return out
	}
	return nil
}

// traces returns the traces added, in the order their first spans came,
// adjusted and ready to encode.
func (b *builder) result() []trace {
	out := make([]trace, 0, len(b.order))
	for _, id := range b.order {
		out = append(out, b.traces[id].build())
	}
	return out
}

func (t *rawTrace) build() trace {
	spans := t.spans
	for i := range spans {
		sp := &spans[i]
		sortTags(sp.tags)
		sortTags(sp.proc.tags)
		for _, l := range sp.logs {
			off := 0
			for j, f := range l {
				if f.key == "event" && f.typ == typeString {
					l[0], l[j] = l[j], l[0]
					off = 1
					break
				}
			}
			if len(l) > 1 {
				sortTags(l[off:])
			}
		}
	}
	spans = dedupe(spans)
	checkSkew(spans)
	for i := range spans {
		sp := &spans[i]
		ipTags(sp.tags)
		ipTags(sp.proc.tags)
		// SDK tags of a span belong to its process.
		kept := sp.tags[:0]
		for _, tg := range sp.tags {
			if sdkKeys[tg.key] {
				sp.proc.tags = append(sp.proc.tags, tg)
				continue
			}
			kept = append(kept, tg)
		}
		sp.tags = kept
		sortTags(sp.proc.tags)
		refs := sp.refs[:0]
		for _, r := range sp.refs {
			if r.trace == zeroTrace {
				sp.warnings = append(sp.warnings, fmt.Sprintf("Invalid span reference removed %+v",
					struct {
						TraceID string
						SpanID  string
						RefType string
					}{traceIDString(r.trace), spanIDString(r.span), refType(r)}))
				continue
			}
			refs = append(refs, r)
		}
		sp.refs = refs
		first := -1
		for j, r := range sp.refs {
			if r.trace == sp.traceID && !r.followed {
				first = j
				break
			}
		}
		if first < 0 {
			for j, r := range sp.refs {
				if r.trace == sp.traceID {
					first = j
					break
				}
			}
		}
		if first > 0 {
			sp.refs[0], sp.refs[first] = sp.refs[first], sp.refs[0]
		}
	}

	tr := trace{Spans: make([]span, len(spans)), Processes: map[string]process{}}
	var procs []procTags
	for i := range spans {
		sp := &spans[i]
		if i == 0 {
			tr.TraceID = traceIDString(sp.traceID)
		}
		pid := ""
		for j, p := range procs {
			if p.service == sp.proc.service && slices.EqualFunc(p.tags, sp.proc.tags, func(a, b tag) bool { return compareTags(a, b) == 0 }) {
				pid = "p" + strconv.Itoa(j+1)
				break
			}
		}
		if pid == "" {
			procs = append(procs, sp.proc)
			pid = "p" + strconv.Itoa(len(procs))
			tr.Processes[pid] = process{ServiceName: sp.proc.service, Tags: tagsJSON(sp.proc.tags)}
		}
		js := span{
			TraceID: traceIDString(sp.traceID), SpanID: spanIDString(sp.id), OperationName: sp.name,
			References: make([]reference, len(sp.refs)),
			StartTime:  uint64(sp.start.UnixNano() / 1000), Duration: uint64(sp.dur.Nanoseconds() / 1000),
			Tags: tagsJSON(sp.tags), Logs: make([]logEntry, len(sp.logs)), ProcessID: pid, Warnings: sp.warnings,
		}
		for j, r := range sp.refs {
			js.References[j] = reference{RefType: refType(r), TraceID: traceIDString(r.trace), SpanID: spanIDString(r.span)}
		}
		for j, l := range sp.logs {
			js.Logs[j] = logEntry{Timestamp: uint64(sp.logTimes[j].UnixNano() / 1000), Fields: tagsJSON(l)}
		}
		tr.Spans[i] = js
	}
	return tr
}

var sdkKeys = map[string]bool{
	"telemetry.sdk.language": true, "telemetry.sdk.name": true, "telemetry.sdk.version": true,
	"telemetry.distro.name": true, "telemetry.distro.version": true,
}

// ipTags turns numeric ip and peer.ipv4 tags into dotted quads.
func ipTags(ts []tag) {
	for i, t := range ts {
		if t.key != "ip" && t.key != "peer.ipv4" {
			continue
		}
		var v uint32
		switch t.typ {
		case typeInt64:
			v = uint32(t.i)
		case typeFloat64:
			v = uint32(t.f)
		default:
			continue
		}
		ts[i] = tag{key: t.key, s: fmt.Sprintf("%d.%d.%d.%d", byte(v>>24), byte(v>>16), byte(v>>8), byte(v))}
	}
}

// dedupe drops the spans equal in every field to an earlier one (a
// client that sent a span twice), ordering the rest by start time and
// span id.
func dedupe(spans []rawSpan) []rawSpan {
	slices.SortStableFunc(spans, func(a, b rawSpan) int {
		return cmp.Or(a.start.Compare(b.start), cmp.Compare(a.id, b.id))
	})
	// Equal spans have the same start and id, so sit together: only a
	// run of those is compared field by field.
	out := spans[:0]
	for i := 0; i < len(spans); {
		j := i + 1
		for j < len(spans) && spans[j].id == spans[i].id && spans[j].start.Equal(spans[i].start) {
			j++
		}
		if j == i+1 {
			out = append(out, spans[i])
			i = j
			continue
		}
		seen := map[string]bool{}
		for k := i; k < j; k++ {
			if key := spanKey(&spans[k]); !seen[key] {
				seen[key] = true
				out = append(out, spans[k])
			}
		}
		i = j
	}
	return out
}

func spanKey(sp *rawSpan) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%x|%d|%q|%v|%d|%d|%q|", sp.traceID, sp.id, sp.name, sp.refs, sp.start.UnixNano(), sp.dur, sp.proc.service)
	for _, ts := range append([][]tag{sp.tags, sp.proc.tags}, sp.logs...) {
		fmt.Fprintf(&b, "%d%+v|", len(ts), ts)
	}
	fmt.Fprintf(&b, "%v%v", sp.logTimes, sp.warnings)
	return b.String()
}

// checkSkew adds the warnings Jaeger's clock skew adjuster adds when
// adjusting is off: a child that does not fit in its parent (on another
// host, or with no ip tag) gets "clock skew adjustment disabled", with the
// delta it would have been moved by, and so do its descendants on its
// host; a span whose parent is not in the trace, or whose id repeats,
// gets its warning too.
func checkSkew(spans []rawSpan) {
	byID := map[uint64]int{}
	for i := range spans {
		if _, ok := byID[spans[i].id]; ok {
			spans[i].warnings = append(spans[i].warnings, "duplicate span IDs; skipping clock skew adjustment")
			continue
		}
		byID[spans[i].id] = i
	}
	children := map[int][]int{}
	var roots []int
	for i := range spans {
		if byID[spans[i].id] != i {
			continue
		}
		p := parentOf(&spans[i])
		if p == 0 {
			roots = append(roots, i)
			continue
		}
		if pi, ok := byID[p]; ok {
			children[pi] = append(children[pi], i)
			continue
		}
		spans[i].warnings = append(spans[i].warnings,
			fmt.Sprintf("invalid parent span IDs=%s; skipping clock skew adjustment", spanIDString(p)))
		roots = append(roots, i)
	}
	var walk func(n, parent int, host string, delta time.Duration)
	walk = func(n, parent int, host string, delta time.Duration) {
		h := hostOf(&spans[n])
		if parent >= 0 && (h != host || h == "") {
			host, delta = h, skew(&spans[n], &spans[parent])
		}
		if delta != 0 {
			spans[n].warnings = append(spans[n].warnings,
				fmt.Sprintf("clock skew adjustment disabled; not applying calculated delta of %v", delta))
		}
		for _, c := range children[n] {
			walk(c, n, host, delta)
		}
	}
	for _, r := range roots {
		walk(r, -1, hostOf(&spans[r]), 0)
	}
}

// parentOf is the span id of sp's first reference of its own trace, as
// Jaeger's ParentSpanID: CHILD_OF first, else the first.
func parentOf(sp *rawSpan) uint64 {
	for _, r := range sp.refs {
		if r.trace == sp.traceID && !r.followed {
			return r.span
		}
	}
	for _, r := range sp.refs {
		if r.trace == sp.traceID {
			return r.span
		}
	}
	return 0
}

func hostOf(sp *rawSpan) string {
	for _, t := range sp.proc.tags {
		if t.key != "ip" {
			continue
		}
		switch t.typ {
		case typeString:
			return t.s
		case typeInt64:
			v := uint32(t.i)
			return fmt.Sprintf("%d.%d.%d.%d", byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
		}
		return ""
	}
	return ""
}

// skew is how far a child that does not fit in its parent would move to
// sit in the middle of it (or to start with it, if it is the longer).
func skew(child, parent *rawSpan) time.Duration {
	pEnd, cEnd := parent.start.Add(parent.dur), child.start.Add(child.dur)
	if child.dur > parent.dur {
		if child.start.Before(parent.start) {
			return parent.start.Sub(child.start)
		}
		return 0
	}
	if !child.start.Before(parent.start) && !cEnd.After(pEnd) {
		return 0
	}
	return parent.start.Add((parent.dur - child.dur) / 2).Sub(child.start)
}

func refType(r rawRef) string {
	if r.followed {
		return "FOLLOWS_FROM"
	}
	return "CHILD_OF"
}

// traceIDString is Jaeger's text of a trace id: 16 hex digits when its
// high half is zero, else 32.
func traceIDString(id [16]byte) string {
	if binary.BigEndian.Uint64(id[:8]) == 0 {
		return hex.EncodeToString(id[8:])
	}
	return hex.EncodeToString(id[:])
}

func spanIDString(id uint64) string { return fmt.Sprintf("%016x", id) }
