package eval

import (
	"context"
	"errors"
	"time"

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
	Need       SpanNeed  // the fields the query reads of each span
}

// SpanNeed names fields of a SpanPoint.
type SpanNeed uint8

const (
	NeedService SpanNeed = 1 << iota
	NeedName
	NeedKind
	NeedStatus
	NeedDuration
)

// SpanPoint is a span as a span-local metrics query reads it; Service
// and Name are the caller's only during the call that gives them.
type SpanPoint struct {
	Service, Name []byte
	Kind, Status  int32 // OTLP's numbers
	Start         int64 // Unix nanoseconds
	Duration      int64 // nanoseconds
}

// SpanSource is a Source that also gives the spans a SpanFilter selects
// one by one, read from columns, for metrics over spans that need no
// trace around them. SpanPoints returns ErrNeedTraces when it cannot
// (the range holds files it does not read that way); fn's batches come
// from one goroutine at a time.
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
	if m == nil || m.Compare != nil || len(q.Pipeline.Stages) != 1 {
		return f, false
	}
	st, ok := q.Pipeline.Stages[0].(traceql.SpansetStage)
	if !ok {
		return f, false
	}
	filter, ok := st.Spanset.(traceql.Filter)
	if !ok {
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
	return f, true
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
	// The series key: the by() values' types and text, as observe's.
	a.key = a.key[:0]
	for _, b := range a.m.By {
		lv := pointValue(b, pt)
		a.key = append(a.key, byte(lv.Type))
		a.key = append(a.key, lv.String()...)
		a.key = append(a.key, 0)
	}
	s := a.series[string(a.key)]
	if s == nil {
		labels := make([]Label, len(a.m.By))
		for k, b := range a.m.By {
			labels[k] = Label{Name: b.String(), Value: pointValue(b, pt)}
		}
		s = &seriesAcc{labels: labels, steps: map[int]*stepAcc{}}
		a.series[string(a.key)] = s
		a.order = append(a.order, string(a.key))
	}
	s.add(step, v, a.keep)
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
