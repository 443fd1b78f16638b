package eval

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"time"
	"unsafe"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// selection is a log query compiled: what the source can filter, and
// the rest.
type selection struct {
	lq       Scan
	matchers []func(*entry) bool
	stages   []stage
}

// compile compiles q's selector and pipeline into a selection of the
// records in [start, end).
func (ev *evaluator) compile(q *logql.LogQuery, start, end time.Time) (*selection, error) {
	s := &selection{lq: Scan{Start: start, End: end}}
	var svc []func(string) bool
	for _, m := range q.Matchers {
		test, err := matcherTest(m)
		if err != nil {
			return nil, err
		}
		if m.Name == "service_name" {
			svc = append(svc, test)
			continue
		}
		name := m.Name
		if name == "level" {
			// level, as Grafana names it, is detected_level unless a
			// record has a label of its own called level.
			s.matchers = append(s.matchers, func(e *entry) bool {
				if v, ok := e.labels["level"]; ok {
					return test(v)
				}
				return test(e.labels["detected_level"])
			})
			continue
		}
		s.matchers = append(s.matchers, func(e *entry) bool { return test(e.labels[name]) })
	}
	if len(svc) > 0 {
		s.lq.Service = func(v string) bool {
			for _, t := range svc {
				if !t(v) {
					return false
				}
			}
			return true
		}
	}
	// The source tests what it can on its columns: |= and |~ filters on
	// the line and label filters name="v" on attributes, those before any
	// stage that changes the line or makes labels (the stages
	// still test them).
	for _, m := range q.Matchers {
		if m.Op == logql.MatchEqual {
			s.lq.AttrValues, s.lq.AttrNames = appendAttrValue(s.lq.AttrValues, s.lq.AttrNames, m.Name, m.Value)
		}
	}
pushdown:
	for _, st := range q.Pipeline {
		switch f := st.(type) {
		case *logql.LineFilter:
			if len(f.Values) != 1 {
				continue
			}
			switch f.Op {
			case logql.LineContains:
				s.lq.Contains = append(s.lq.Contains, []byte(f.Values[0]))
			case logql.LineMatches:
				re, err := regexp.Compile(f.Values[0])
				if err != nil {
					return nil, fmt.Errorf("line filter %s %q: %w", f.Op, f.Values[0], err)
				}
				s.lq.Matches = append(s.lq.Matches, re)
			}
		case *logql.LabelFilter:
			s.lq.AttrValues, s.lq.AttrNames = appendAttrValues(s.lq.AttrValues, s.lq.AttrNames, f.Pred)
		default:
			break pushdown
		}
	}
	var err error
	s.stages, err = compilePipeline(q.Pipeline)
	return s, err
}

// appendAttrValues appends to vals the values that pred's string
// equalities on attribute labels ask a record to have (both sides of an
// and; nothing of an or), and to names their labels.
func appendAttrValues(vals, names []string, pred logql.LabelPred) ([]string, []string) {
	switch p := pred.(type) {
	case *logql.LabelAnd:
		vals, names = appendAttrValues(vals, names, p.L)
		return appendAttrValues(vals, names, p.R)
	case *logql.LabelCompare:
		if p.Kind == logql.ValueString && p.Op == "=" {
			return appendAttrValue(vals, names, p.Label, p.Str)
		}
	}
	return vals, names
}

// recordLabels are the labels a record has from other than its
// attributes (metadata, streamLabels), and level, which may be
// detected_level.
var recordLabels = map[string]bool{"service_name": true, "scope_name": true, "scope_version": true,
	"severity_text": true, "severity_number": true, "trace_id": true, "span_id": true,
	"detected_level": true, "level": true}

// appendAttrValue appends v to vals, and name to names, if a record with label name = v must
// have v as the value of one of its attributes (Scan.AttrValues): name
// is no label of other origin and v is not empty. v must also be plain
// printable ASCII that JSON writes as it is (no quote, backslash, <, >
// or &), since the source looks for it in the resource's JSON.
func appendAttrValue(vals, names []string, name, v string) ([]string, []string) {
	if v == "" || recordLabels[name] {
		return vals, names
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return vals, names
		}
	}
	return append(vals, v), append(names, name)
}

// matcherTest is the test of a drop/keep or selector matcher; nil for a
// bare name.
func matcherTest(m logql.Matcher) (func(string) bool, error) {
	switch m.Op {
	case "":
		return nil, nil
	case logql.MatchEqual:
		return func(v string) bool { return v == m.Value }, nil
	case logql.MatchNotEqual:
		return func(v string) bool { return v != m.Value }, nil
	case logql.MatchRegexp, logql.MatchNotRegexp:
		re, err := regexp.Compile("^(?:" + m.Value + ")$")
		if err != nil {
			return nil, fmt.Errorf("matcher %s: %w", m, err)
		}
		if m.Op == logql.MatchRegexp {
			return re.MatchString, nil
		}
		return func(v string) bool { return !re.MatchString(v) }, nil
	}
	return nil, fmt.Errorf("matcher %s: unknown operator", m)
}

// each calls fn with each entry of the selection that passes the
// pipeline; fn returns false to stop.
func (ev *evaluator) each(ctx context.Context, s *selection, fn func(*entry) bool) error {
	return ev.e.src.Logs(ctx, ev.q.Tenant, s.lq, func(r *Record) bool {
		ev.stats.Lines++
		ev.stats.Bytes += int64(len(r.Line))
		e := newEntry(r)
		if !s.passes(e) {
			return true
		}
		return fn(e)
	})
}

// newEntry is record r as the pipeline takes it: its stream labels, then
// its structured metadata.
func newEntry(r *Record) *entry {
	stream, md := streamLabels(r), metadata(r)
	e := &entry{ts: r.Time, line: r.Line, labels: make(map[string]string, len(stream)+len(md)), stream: stream,
		order: make([]string, 0, len(stream)+len(md))}
	for _, l := range e.stream {
		e.set(l.Name, l.Value)
	}
	for _, l := range md {
		if _, ok := e.labels[l.Name]; !ok {
			e.set(l.Name, l.Value)
		}
	}
	e.init = len(e.order)
	return e
}

// passes reports whether e passes the selection's matchers and stages
// (which may change it).
func (s *selection) passes(e *entry) bool {
	for _, m := range s.matchers {
		if !m(e) {
			return false
		}
	}
	for _, st := range s.stages {
		if !st(e) {
			return false
		}
	}
	return true
}

// logs evaluates a log query: the newest (or oldest) Limit lines of
// [Start, End], grouped into streams by their labels.
func (ev *evaluator) logs(ctx context.Context, q *logql.LogQuery) ([]Stream, error) {
	s, err := ev.compile(q, ev.q.Start, ev.q.End.Add(1))
	if err != nil {
		return nil, err
	}
	if ev.q.Forward {
		s.lq.Oldest = true
	} else {
		s.lq.Newest = true
	}
	limit := ev.q.Limit
	s.lq.Limit = limit
	byKey := map[string]*Stream{}
	var order []string
	n := 0
	var chargeErr error
	err = ev.each(ctx, s, func(e *entry) bool {
		ls := e.stream
		var en Entry
		size := int64(len(e.line)) + int64(unsafe.Sizeof(Entry{}))
		if ev.q.Categorize {
			en.Metadata, en.Parsed = e.categorized()
			size += en.Metadata.size() + en.Parsed.size()
		} else {
			ls = e.sorted()
		}
		k := ls.key()
		st := byKey[k]
		if st == nil {
			st = &Stream{Labels: ls}
			byKey[k] = st
			order = append(order, k)
		}
		if cerr := ev.tk.Charge(size); cerr != nil {
			chargeErr = cerr
			return false
		}
		en.Time, en.Line = e.ts, string(e.line)
		st.Entries = append(st.Entries, en)
		n++
		return limit <= 0 || n < limit
	})
	out := make([]Stream, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	ev.stats.Returned = int64(n)
	return out, cmp.Or(err, chargeErr)
}
