package eval

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"github.com/wirehouse/wirehouse/internal/spanpoint"
	"github.com/wirehouse/wirehouse/internal/traceql"
)

// SpanFilter is what a span-local metrics query asks of each span: every
// condition on a field a spans file holds in a plain column. A span is
// selected when every condition holds.
type SpanFilter struct {
	Start, End time.Time // span start in [Start, End)
	Service    string    // resource.service.name = Service ("": any)
	Name       string    // name = Name ("": any)
	Kind       int32     // kind (OTLP's number); -1 any
	Status     int32     // status (OTLP's code); -1 any
	MinDur     int64     // duration >= MinDur, nanoseconds
	MaxDur     int64     // duration <= MaxDur; 0: no bound
	// Ints are conditions span.Key Op Value on span attributes of
	// integer values (searches only: see spanSearch).
	Ints []IntCond
	Need SpanNeed // the fields the query reads of each span
	// Counted says the query counts spans by whole minutes (a rate or a
	// count over a grid of whole minutes): the source may give a point
	// for many spans (SpanPoint.N) at the start of their minute.
	Counted bool
}

// IntCond is a condition on a span attribute of integer values.
type IntCond struct {
	Key   string
	Op    string // = != > >= < <=
	Value int64
}

// SpanNeed names fields of a SpanPoint.
type SpanNeed uint8

const (
	NeedService SpanNeed = 1 << iota
	NeedName
	NeedKind
	NeedStatus
	NeedDuration
	NeedTraceID
	NeedEnd // the span's end; asked alone (no NeedDuration), Start may be left zero
)

// SpanPoint is a span as a SpanSource reads it from columns
// (spanpoint.Point, the type lakeread gives): its Service and Name are
// valid only during the call that hands it over.
type SpanPoint = spanpoint.Point

// SpanSource is a Source that also gives the spans a SpanFilter selects
// one by one, read from columns, for metrics over spans that need no
// trace around them. SpanPoints returns ErrNeedTraces when it cannot
// (the range holds files it does not read that way); fn's batches come
// from one goroutine at a time. The bytes of a point's Service and Name
// are never changed once handed over (a metrics query takes two points
// whose Service and Name are the very same bytes for one series).
type SpanSource interface {
	Source
	SpanPoints(ctx context.Context, tenant string, f SpanFilter, fn func([]SpanPoint) error) error
}

// ErrNeedTraces says a SpanSource cannot answer a SpanFilter: the query
// is run over whole traces instead.
var ErrNeedTraces = errors.New("span points need whole traces here")

// spanLocal returns the SpanFilter of q when its answer needs no trace
// around a span: a single spanset filter whose conditions are all
// equalities of resource.service.name, name, kind and status, and bounds
// of duration, joined by && (or none: { }), with a metrics field of
// duration or none, and by() of those four fields.
func spanLocal(q *traceql.Query, rng Range) (SpanFilter, bool) {
	f := SpanFilter{Start: rng.Start, End: rng.End, Kind: -1, Status: -1}
	m := q.Metrics
	filter, ok := onlyFilter(q)
	if m == nil || m.Compare != nil || !ok {
		return f, false
	}
	for _, c := range conjuncts(filter.Expr) {
		if !f.add(c) {
			return f, false
		}
	}
	switch fd := m.Field.(type) {
	case nil:
	case traceql.Intrinsic:
		if fd != traceql.IntrinsicDuration {
			return f, false
		}
		f.Need |= NeedDuration
	default:
		return f, false
	}
	for _, b := range m.By {
		need, ok := byNeed(b)
		if !ok {
			return f, false
		}
		f.Need |= need
	}
	whole := func(d time.Duration) bool { return d%time.Minute == 0 }
	f.Counted = (m.Fn == "rate" || m.Fn == "count_over_time") && m.Field == nil &&
		whole(time.Duration(rng.Start.UnixNano())) && whole(time.Duration(rng.End.UnixNano())) && whole(rng.Step)
	return f, true
}

// onlyFilter returns q's spanset filter when its pipeline is that
// filter alone.
func onlyFilter(q *traceql.Query) (traceql.Filter, bool) {
	if len(q.Pipeline.Stages) != 1 {
		return traceql.Filter{}, false
	}
	st, ok := q.Pipeline.Stages[0].(traceql.SpansetStage)
	if !ok {
		return traceql.Filter{}, false
	}
	f, ok := st.Spanset.(traceql.Filter)
	return f, ok
}

// byNeed is the field a by() of b reads, if b is one a SpanPoint holds.
func byNeed(b traceql.Field) (SpanNeed, bool) {
	switch b := b.(type) {
	case traceql.Attribute:
		if b.Scope == traceql.ScopeResource && b.Name == "service.name" {
			return NeedService, true
		}
	case traceql.Intrinsic:
		switch b {
		case traceql.IntrinsicName:
			return NeedName, true
		case traceql.IntrinsicKind:
			return NeedKind, true
		case traceql.IntrinsicStatus:
			return NeedStatus, true
		}
	}
	return 0, false
}

// add takes condition c into f, if it is one f holds exactly.
func (f *SpanFilter) add(c traceql.Field) bool {
	if s, ok := c.(traceql.Static); ok {
		return s.Type == traceql.TypeBool && s.B // && true
	}
	b, ok := c.(traceql.Binary)
	if !ok {
		return false
	}
	lit, ok := b.R.(traceql.Static)
	if !ok {
		return false
	}
	switch l := b.L.(type) {
	case traceql.Attribute:
		if l.Scope == traceql.ScopeResource && l.Name == "service.name" && b.Op == "=" && lit.Type == traceql.TypeString && lit.S != "" && f.Service == "" {
			f.Service = lit.S
			return true
		}
	case traceql.Intrinsic:
		switch {
		case l == traceql.IntrinsicName && b.Op == "=" && lit.Type == traceql.TypeString && lit.S != "" && f.Name == "":
			f.Name = lit.S
			return true
		case l == traceql.IntrinsicKind && b.Op == "=" && lit.Type == traceql.TypeKind && f.Kind < 0:
			f.Kind = int32(lit.I)
			return true
		case l == traceql.IntrinsicStatus && b.Op == "=" && lit.Type == traceql.TypeStatus && f.Status < 0:
			f.Status = int32(lit.I)
			return true
		case l == traceql.IntrinsicDuration && lit.Type == traceql.TypeDuration && lit.I >= 0:
			switch b.Op {
			case ">":
				f.MinDur = max(f.MinDur, lit.I+1)
			case ">=":
				f.MinDur = max(f.MinDur, lit.I)
			case "<", "<=":
				hi := lit.I
				if b.Op == "<" {
					hi--
				}
				if hi <= 0 {
					return false // MaxDur 0 is "no bound": leave such a query to the traces
				}
				if f.MaxDur == 0 || hi < f.MaxDur {
					f.MaxDur = hi
				}
			default:
				return false
			}
			return true
		}
	}
	return false
}

// observePoint adds span pt (selected) to the metrics.
func (a *metricsAcc) observePoint(pt *SpanPoint) {
	start := a.rng.Start.UnixNano()
	if pt.Start < start || pt.Start >= a.rng.End.UnixNano() {
		return
	}
	step := int((pt.Start - start) / int64(a.rng.Step))
	v := 1.0
	if a.field != nil {
		v = float64(pt.Duration) / 1e9 // durations in seconds, as observe has them
	}
	n := max(pt.N, 1) // a point of counts stands for N spans (Counted)
	// The series key: the by() values' types and raw text (a query's
	// points are all keyed so; observe's keys are never mixed with them).
	// A point whose fields are those of the last (its service and name
	// the same bytes: a source hands each distinct one out once) is of
	// the last one's series.
	s := a.lastSeries
	if s == nil || !samePoint(&a.lastPoint, pt) {
		a.key = a.key[:0]
		for _, b := range a.m.By {
			a.key = appendPointKey(a.key, b, pt)
		}
		if s == nil || !bytes.Equal(a.lastKey, a.key) {
			s = a.series[string(a.key)]
			a.lastKey = append(a.lastKey[:0], a.key...)
		}
		a.lastPoint = *pt
	}
	if s == nil {
		labels := make([]Label, len(a.m.By))
		for k, b := range a.m.By {
			labels[k] = Label{Name: b.String(), Value: pointValue(b, pt)}
		}
		s = &seriesAcc{labels: labels, steps: map[int]*stepAcc{}}
		a.series[string(a.key)] = s
		a.order = append(a.order, string(a.key))
		a.grew(int64(256 + len(a.key)))
	}
	a.lastSeries = s
	a.grew(s.addN(step, v, n, a.keep))
}

// samePoint reports whether a and b have the same by() fields for sure:
// the same kind and status, and service and name the very same bytes.
func samePoint(a, b *SpanPoint) bool {
	return a.Kind == b.Kind && a.Status == b.Status && sameBytes(a.Service, b.Service) && sameBytes(a.Name, b.Name)
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.SliceData(a) == unsafe.SliceData(b))
}

// selectFirst reorders s so that the k elements that come first in the
// order of cmp are first, in no order: a quickselect, O(len(s)) on
// average.
func selectFirst[T any](s []T, k int, cmp func(a, b T) int) {
	lo, hi := 0, len(s)-1
	for lo < hi {
		p := s[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for cmp(s[i], p) < 0 {
				i++
			}
			for cmp(s[j], p) > 0 {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		// s[lo:j+1] <= p <= s[i:hi+1], and s[j+1:i] == p
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// appendPointKey appends to key what tells pointValue(b, pt) from the
// values of other points, without making the value: its type, its raw
// text, a 0.
func appendPointKey(key []byte, b traceql.Field, pt *SpanPoint) []byte {
	switch b.(type) {
	case traceql.Attribute:
		if len(pt.Service) == 0 {
			return append(key, byte(traceql.TypeNil), 0)
		}
		key = append(key, byte(traceql.TypeString))
		return append(append(key, pt.Service...), 0)
	case traceql.Intrinsic:
		if b == traceql.IntrinsicName {
			key = append(key, byte(traceql.TypeString))
			return append(append(key, pt.Name...), 0)
		}
	}
	v := pointValue(b, pt) // kinds and statuses: no text to make
	key = append(key, byte(v.Type))
	return append(strconv.AppendInt(key, v.I, 10), 0)
}

// pointValue is the value of by() field b (one byNeed accepts) of pt, as
// the evaluator has it over a trace: kinds past consumer are consumer,
// status codes other than ok and error unset, and a span without a
// string service.name (service_name empty) nil.
func pointValue(b traceql.Field, pt *SpanPoint) Value {
	switch b := b.(type) {
	case traceql.Attribute:
		if len(pt.Service) == 0 {
			return Value{}
		}
		return str(string(pt.Service))
	case traceql.Intrinsic:
		switch b {
		case traceql.IntrinsicName:
			return str(string(pt.Name))
		case traceql.IntrinsicKind:
			return Value{Type: traceql.TypeKind, I: int64(min(max(pt.Kind, 0), int32(traceql.KindConsumer)))}
		case traceql.IntrinsicStatus:
			st := traceql.StatusUnset
			switch pt.Status {
			case 1:
				st = traceql.StatusOk
			case 2:
				st = traceql.StatusError
			}
			return Value{Type: traceql.TypeStatus, I: int64(st)}
		}
	}
	return Value{}
}

// spanSearch returns the SpanFilter of a search whose spanset filter a
// SpanSource can answer from columns and that the hint cannot narrow
// well: one filter of spanLocal's conditions and at least one condition
// span.key op integer. Such an attribute read from a typed integer column
// leaves out values sent as doubles, which TraceQL would compare as
// numbers; the source says ErrNeedTraces for a key it has no such column
// of.
//
// Its traces are those with a span starting in [start, end) that the
// filter selects, as the candidates' search has them when the hint is the
// whole filter (a bounded hint's candidates need a span in the range that
// holds the hint, and the filter may then match anywhere in the trace).
func spanSearch(q *traceql.Query, start, end time.Time) (SpanFilter, bool) {
	f := SpanFilter{Start: start, End: end, Kind: -1, Status: -1, Need: NeedTraceID | NeedEnd}
	filter, ok := onlyFilter(q)
	if q.Metrics != nil || !ok {
		return f, false
	}
	for _, c := range conjuncts(filter.Expr) {
		if f.add(c) {
			continue
		}
		b, ok := c.(traceql.Binary)
		if !ok {
			return f, false
		}
		a, okA := b.L.(traceql.Attribute)
		lit, okL := b.R.(traceql.Static)
		switch {
		case !okA || !okL || a.Scope != traceql.ScopeSpan || lit.Type != traceql.TypeInt:
			return f, false
		case b.Op == "=" || b.Op == "!=" || b.Op == ">" || b.Op == ">=" || b.Op == "<" || b.Op == "<=":
			f.Ints = append(f.Ints, IntCond{Key: a.Name, Op: b.Op, Value: lit.I})
		default:
			return f, false
		}
	}
	return f, len(f.Ints) > 0
}

// maxSpanSearchTraces bounds the traces a span-local search keeps the
// ends of; past it the search reads candidates by its hint instead.
const maxSpanSearchTraces = 1 << 20

// NewestSource is a SpanSource that can give the newest spans alone:
// NewestSpanPoints is SpanPoints, except that it may leave out spans that
// end at or before the cutoff it returns (math.MinInt64: none left out),
// reading less once it has given n spans ending later. Only filters that
// need NeedEnd are read that way.
type NewestSource interface {
	NewestSpanPoints(ctx context.Context, tenant string, f SpanFilter, n int, fn func([]SpanPoint) error) (cutoff int64, err error)
}

// searchSpans is Search of a span-local filter f: the traces with a span
// f selects, most recent first (by their selected spans' latest end, then
// id, as Candidates orders them), each read whole and evaluated until
// Limit match. ok false: the source cannot answer f (or too many traces
// match), and Search reads candidates instead.
//
// A NewestSource is first asked for the newest spans alone: the traces
// ending after its cutoff are then the first traces of the whole order,
// with their latest ends, and if Limit of them match that is the answer;
// if not, every span is read.
func searchSpans(ctx context.Context, src SpanSource, tenant string, q *Query, f SpanFilter, lim SearchLimits) (res SearchResult, ok bool, err error) {
	if ns, is := src.(NewestSource); is && f.Need&NeedEnd != 0 && lim.Limit > 0 {
		var cutoff int64
		ends, ok, err := spanEnds(ctx, f, func(fn func([]SpanPoint) error) (err error) {
			cutoff, err = ns.NewestSpanPoints(ctx, tenant, f, 4*lim.Limit, fn)
			return err
		})
		if !ok || err != nil {
			return res, ok, err
		}
		res, done, err := pickTraces(ctx, src, tenant, q, ends, cutoff, lim)
		if done || err != nil || cutoff == math.MinInt64 {
			return res, true, err
		}
	}
	ends, ok, err := spanEnds(ctx, f, func(fn func([]SpanPoint) error) error { return src.SpanPoints(ctx, tenant, f, fn) })
	if !ok || err != nil {
		return res, ok, err
	}
	res, _, err = pickTraces(ctx, src, tenant, q, ends, math.MinInt64, lim)
	return res, true, err
}

// spanEnds returns the latest end of each trace's spans that read gives
// (read calls its fn with batches of points). ok false: the source
// cannot answer f, or too many traces match.
func spanEnds(ctx context.Context, f SpanFilter, read func(fn func([]SpanPoint) error) error) (ends map[[16]byte]int64, ok bool, err error) {
	ends = map[[16]byte]int64{}
	tooMany := errors.New("too many traces")
	err = read(func(pts []SpanPoint) error {
		for i := range pts {
			p := &pts[i]
			if p.TraceID == ([16]byte{}) {
				continue // no trace id: not a trace a search can give
			}
			if e, seen := ends[p.TraceID]; !seen || p.End > e {
				ends[p.TraceID] = p.End
			}
		}
		if len(ends) > maxSpanSearchTraces {
			return tooMany
		}
		return ctx.Err()
	})
	if errors.Is(err, ErrNeedTraces) || errors.Is(err, tooMany) {
		return nil, false, nil
	}
	return ends, err == nil, err
}

// pickTraces reads the traces of ends newest first and keeps those q
// matches, up to Limit. With a cutoff (not math.MinInt64) only the
// traces that end after it are read, and done says whether they gave the
// whole answer (Limit matches, or more of them than MaxCandidates): the
// answer over every trace would be the same.
func pickTraces(ctx context.Context, src Source, tenant string, q *Query, ends map[[16]byte]int64, cutoff int64, lim SearchLimits) (res SearchResult, done bool, err error) {
	// The newest first: sorted as pairs (a comparison that looked the ends
	// up in the map cost a search an eighth of its CPU).
	type idEnd struct {
		id  [16]byte
		end int64
	}
	byEnd := make([]idEnd, 0, len(ends))
	for id, e := range ends {
		if cutoff == math.MinInt64 || e > cutoff {
			byEnd = append(byEnd, idEnd{id, e})
		}
	}
	newest := func(a, b idEnd) int {
		return cmp.Or(cmp.Compare(b.end, a.end), bytes.Compare(a.id[:], b.id[:]))
	}
	// Most searches read a few traces of many: the 4*Limit newest are
	// picked out and sorted (a full sort of every matching trace was 7 %
	// of a search's CPU); the rest only if those run out.
	head := min(len(byEnd), 4*lim.Limit)
	if head < len(byEnd) {
		selectFirst(byEnd, head, newest)
	}
	slices.SortFunc(byEnd[:head], newest)
	sortedRest := false
	ids := make([][16]byte, 0, len(byEnd))
	for _, x := range byEnd[:head] {
		ids = append(ids, x.id)
	}
	rest := func() [][16]byte {
		if !sortedRest {
			sortedRest = true
			slices.SortFunc(byEnd[head:], newest)
			for _, x := range byEnd[head:] {
				ids = append(ids, x.id)
			}
		}
		return ids
	}
	total := min(len(byEnd), lim.MaxCandidates)
	res.Truncated = len(byEnd) > lim.MaxCandidates
	// Every trace holds a selected span, so it matches (unless Keep says
	// no): read as many as are still wanted at a time, not a batch.
	full := false
	for next := 0; next < total && !full && err == nil; {
		if next == len(ids) {
			ids = rest()
		}
		n := min(len(ids)-next, total-next, lim.Limit-len(res.Matches))
		err = eachTrace(ctx, src, tenant, ids[next:next+n], func(id [16]byte, t *Trace) bool {
			res.Inspected++
			if sets := q.Eval(t); len(sets) > 0 && (lim.Keep == nil || lim.Keep(t)) {
				res.Matches = append(res.Matches, Match{ID: id, Trace: t, Spansets: sets})
				full = len(res.Matches) == lim.Limit
			}
			return !full
		})
		next += n
	}
	if full {
		res.Truncated = false
	}
	return res, full || res.Truncated || cutoff == math.MinInt64, err
}
