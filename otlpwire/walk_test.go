package otlpwire_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// visited is one call of a walk: the level (0 resource, 1 scope, 2
// record, 3 the resource's end) and the element's bytes.
type visited struct {
	level int
	b     []byte
}

// walkVisits lists what Walk visits in in, a request of signal s.
func walkVisits(s otlpwire.Signal, in []byte) ([]visited, error) {
	var out []visited
	add := func(level int, b []byte) error {
		out = append(out, visited{level, b})
		return nil
	}
	var err error
	switch s {
	case otlpwire.SignalLogs:
		err = otlpwire.LogsRequest(in).Walk(otlpwire.LogVisitor{
			ResourceLogs:    func(rl otlpwire.ResourceLogs) error { return add(0, rl) },
			ScopeLogs:       func(sl otlpwire.ScopeLogs) error { return add(1, sl) },
			LogRecord:       func(lr otlpwire.LogRecord) error { return add(2, lr) },
			ResourceLogsEnd: func(rl otlpwire.ResourceLogs) error { return add(3, rl) },
		})
	case otlpwire.SignalTraces:
		err = otlpwire.TracesRequest(in).Walk(otlpwire.SpanVisitor{
			ResourceSpans:    func(rs otlpwire.ResourceSpans) error { return add(0, rs) },
			ScopeSpans:       func(ss otlpwire.ScopeSpans) error { return add(1, ss) },
			Span:             func(sp otlpwire.Span) error { return add(2, sp) },
			ResourceSpansEnd: func(rs otlpwire.ResourceSpans) error { return add(3, rs) },
		})
	default:
		err = otlpwire.MetricsRequest(in).Walk(otlpwire.MetricVisitor{
			ResourceMetrics:    func(rm otlpwire.ResourceMetrics) error { return add(0, rm) },
			ScopeMetrics:       func(sm otlpwire.ScopeMetrics) error { return add(1, sm) },
			Metric:             func(m otlpwire.Metric) error { return add(2, m) },
			ResourceMetricsEnd: func(rm otlpwire.ResourceMetrics) error { return add(3, rm) },
		})
	}
	return out, err
}

// rangeVisits lists what the nested iterators yield, in the same form.
func rangeVisits(t *testing.T, s otlpwire.Signal, in []byte) []visited {
	var out []visited
	check := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	switch s {
	case otlpwire.SignalLogs:
		for rl, err := range otlpwire.LogsRequest(in).ResourceLogs() {
			check(err)
			out = append(out, visited{0, rl})
			for sl, err := range rl.ScopeLogs() {
				check(err)
				out = append(out, visited{1, sl})
				for lr, err := range sl.LogRecords() {
					check(err)
					out = append(out, visited{2, lr})
				}
			}
			out = append(out, visited{3, rl})
		}
	case otlpwire.SignalTraces:
		for rs, err := range otlpwire.TracesRequest(in).ResourceSpans() {
			check(err)
			out = append(out, visited{0, rs})
			for ss, err := range rs.ScopeSpans() {
				check(err)
				out = append(out, visited{1, ss})
				for sp, err := range ss.Spans() {
					check(err)
					out = append(out, visited{2, sp})
				}
			}
			out = append(out, visited{3, rs})
		}
	default:
		for rm, err := range otlpwire.MetricsRequest(in).ResourceMetrics() {
			check(err)
			out = append(out, visited{0, rm})
			for sm, err := range rm.ScopeMetrics() {
				check(err)
				out = append(out, visited{1, sm})
				for m, err := range sm.Metrics() {
					check(err)
					out = append(out, visited{2, m})
				}
			}
			out = append(out, visited{3, rm})
		}
	}
	return out
}

func sameVisits(a, b []visited) bool {
	return slices.EqualFunc(a, b, func(x, y visited) bool { return x.level == y.level && bytes.Equal(x.b, y.b) })
}

// TestWalk: Walk visits what the nested iterators yield, in the same
// order, each resource's end after its scopes, on both field orders and on
// the generated shapes.
func TestWalk(t *testing.T) {
	for _, s := range otlpwire.Signals {
		inputs := append(allocInputs(s), synth.Fixture(s, synth.Descending), nil)
		for i, in := range inputs {
			got, err := walkVisits(s, in)
			if err != nil {
				t.Fatalf("signal=%s input %d: %v", s, i, err)
			}
			if want := rangeVisits(t, s, in); !sameVisits(got, want) {
				t.Errorf("signal=%s input %d: Walk visited %d elements, the iterators %d, or others", s, i, len(got), len(want))
			}
		}
	}
}

// spanRequest builds an ExportTraceServiceRequest of resources, each a
// list of scopes, each a list of span bodies.
func spanRequest(resources ...[][][]byte) []byte {
	var req []byte
	for _, scopes := range resources {
		var rs []byte
		for _, spans := range scopes {
			var ss []byte
			for _, sp := range spans {
				ss = protowire.AppendTag(ss, 2, protowire.BytesType)
				ss = protowire.AppendBytes(ss, sp)
			}
			rs = protowire.AppendTag(rs, 2, protowire.BytesType)
			rs = protowire.AppendBytes(rs, ss)
		}
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, rs)
	}
	return req
}

// spanNamed is a span body holding only a name.
func spanNamed(name string) []byte {
	b := protowire.AppendTag(nil, 5, protowire.BytesType)
	return protowire.AppendString(b, name)
}

// TestWalkSkip: Skip passes over a resource's scopes, a scope's spans, or
// the rest of a scope's spans, and the walk goes on after it.
func TestWalkSkip(t *testing.T) {
	req := otlpwire.TracesRequest(spanRequest(
		[][][]byte{{spanNamed("a"), spanNamed("b")}, {spanNamed("c")}},
		[][][]byte{{spanNamed("d")}, {spanNamed("e"), spanNamed("f"), spanNamed("g")}},
	))
	var f otlpwire.SpanFields
	names := func(res, scope int, span string) string {
		var got []byte
		r, sc := -1, -1
		err := req.Walk(otlpwire.SpanVisitor{
			ResourceSpans: func(otlpwire.ResourceSpans) error {
				r, sc = r+1, -1
				if r == res {
					return otlpwire.Skip
				}
				return nil
			},
			ScopeSpans: func(otlpwire.ScopeSpans) error {
				if sc++; sc == scope {
					return otlpwire.Skip
				}
				return nil
			},
			Span: func(sp otlpwire.Span) error {
				if err := sp.Read(&f); err != nil {
					return err
				}
				got = append(got, f.Name...)
				if string(f.Name) == span {
					return otlpwire.Skip
				}
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	for _, c := range []struct {
		res, scope int
		span, want string
	}{
		{-1, -1, "", "abcdefg"},
		{0, -1, "", "defg"},
		{1, -1, "", "abc"},
		{-1, 0, "", "cefg"},
		{-1, 1, "", "abd"},
		{-1, -1, "a", "acdefg"},
		{-1, -1, "e", "abcde"},
		{-1, -1, "g", "abcdefg"},
	} {
		if got := names(c.res, c.scope, c.span); got != c.want {
			t.Errorf("skip resource %d, scope %d, after span %q: walked %q, want %q", c.res, c.scope, c.span, got, c.want)
		}
	}
}

// TestWalkResourceEnd: ResourceSpansEnd comes with each resource once
// its spans are walked, a resource whose spans a Skip cut short included,
// but not a resource its ResourceSpans callback passed over; its Skip
// changes nothing, and its error ends the walk and comes back as it is.
func TestWalkResourceEnd(t *testing.T) {
	req := otlpwire.TracesRequest(spanRequest(
		[][][]byte{{spanNamed("a"), spanNamed("b")}, {spanNamed("c")}},
		[][][]byte{{spanNamed("d")}},
		[][][]byte{{spanNamed("e")}},
	))
	stop := errors.New("stop")
	var f otlpwire.SpanFields
	for _, c := range []struct {
		name      string
		skipRes   int    // the resource ResourceSpans skips
		skipAfter string // the span after which Span returns Skip
		endErr    error  // what ResourceSpansEnd returns
		want      string // the span names, "|" for each end
		wantErr   error
	}{
		{"no skip", -1, "", nil, "abc|d|e|", nil},
		{"resource skipped", 1, "", nil, "abc|e|", nil},
		{"spans cut short", -1, "a", nil, "ac|d|e|", nil},
		{"skip at the end", -1, "", otlpwire.Skip, "abc|d|e|", nil},
		{"error at the end", -1, "", stop, "abc|", stop},
	} {
		var got []byte
		var cur otlpwire.ResourceSpans
		r := -1
		err := req.Walk(otlpwire.SpanVisitor{
			ResourceSpans: func(rs otlpwire.ResourceSpans) error {
				cur = rs
				if r++; r == c.skipRes {
					return otlpwire.Skip
				}
				return nil
			},
			Span: func(sp otlpwire.Span) error {
				if err := sp.Read(&f); err != nil {
					return err
				}
				got = append(got, f.Name...)
				if string(f.Name) == c.skipAfter {
					return otlpwire.Skip
				}
				return nil
			},
			ResourceSpansEnd: func(rs otlpwire.ResourceSpans) error {
				if !bytes.Equal(rs, cur) {
					t.Errorf("%s: the end of another container than resource %d", c.name, r)
				}
				got = append(got, '|')
				return c.endErr
			},
		})
		if string(got) != c.want || err != c.wantErr {
			t.Errorf("%s: walked %q, %v; want %q, %v", c.name, got, err, c.want, c.wantErr)
		}
	}
}

// TestWalkCallbackError: a callback's error ends the walk at once and
// comes back as it is, an *Error of a record's Read included (its path
// stays relative to the record).
func TestWalkCallbackError(t *testing.T) {
	in := fixture(otlpwire.SignalLogs)
	stop := errors.New("stop")
	for level := range 3 {
		calls := 0
		fail := func(l int) error {
			calls++
			if l == level {
				return stop
			}
			return nil
		}
		err := otlpwire.LogsRequest(in).Walk(otlpwire.LogVisitor{
			ResourceLogs: func(otlpwire.ResourceLogs) error { return fail(0) },
			ScopeLogs:    func(otlpwire.ScopeLogs) error { return fail(1) },
			LogRecord:    func(otlpwire.LogRecord) error { return fail(2) },
		})
		if err != stop || calls != level+1 {
			t.Errorf("error at level %d: Walk = %v after %d calls, want %v after %d", level, err, calls, stop, level+1)
		}
	}
	bad := protowire.AppendTag(nil, 1, protowire.BytesType) // trace_id with no length
	req := otlpwire.TracesRequest(spanRequest([][][]byte{{spanNamed("a"), bad}}))
	var f otlpwire.SpanFields
	var readErr error
	err := req.Walk(otlpwire.SpanVisitor{Span: func(sp otlpwire.Span) error {
		readErr = sp.Read(&f)
		return readErr
	}})
	var e *otlpwire.Error
	if err == nil || err != readErr || !errors.As(err, &e) || e.Path() != "trace_id" || e.Offset != 1 {
		t.Errorf("Walk = %v, want the Read error, unchanged: trace_id at offset 1 of the span", err)
	}
}

// TestWalkMalformed: Walk reads the framing the counts read, and refuses
// what they refuse with the same error, path and offset relative to the
// request, on every truncation of a request.
func TestWalkMalformed(t *testing.T) {
	for _, s := range otlpwire.Signals {
		in := synth.Generate(s, synth.Config{Seed: 3, Resources: 2, ScopesPerResource: 2, RecordsPerScope: 3})
		for n := range len(in) {
			cut := in[:n:n]
			_, err := walkVisits(s, cut)
			var want error
			switch s {
			case otlpwire.SignalLogs:
				_, want = otlpwire.LogsRequest(cut).LogRecordCount()
			case otlpwire.SignalTraces:
				_, want = otlpwire.TracesRequest(cut).SpanCount()
			default:
				_, want = otlpwire.MetricsRequest(cut).MetricCount()
			}
			if fmt.Sprint(err) != fmt.Sprint(want) {
				t.Fatalf("signal=%s cut at %d: Walk = %v, count = %v", s, n, err, want)
			}
		}
	}
	// A span field of the wrong wire type in the second resource.
	bad := spanRequest([][][]byte{{spanNamed("a")}}, [][][]byte{{spanNamed("b"), nil}})
	at := bytes.LastIndexByte(bad, 0x12) // the second span's tag ...
	bad[at] = 0x10                       // ... now a varint
	err := otlpwire.TracesRequest(bad).Walk(otlpwire.SpanVisitor{})
	var e *otlpwire.Error
	if !errors.As(err, &e) || !errors.Is(err, otlpwire.ErrWireType) || e.Path() != "resource_spans[1].scope_spans[0].spans[1]" || e.Offset != at {
		t.Errorf("Walk = %v, want a wrong wire type at resource_spans[1].scope_spans[0].spans[1], offset %d", err, at)
	}
}

// walkSum reads every record of in (a request of signal s) with Walk, and
// each resource and scope, counts the resources' ends, and returns a
// checksum.
func walkSum(s otlpwire.Signal, in []byte) (int, error) {
	n := 0
	var rf otlpwire.ResourceFields
	var sf otlpwire.ScopeFields
	resource := func(r otlpwire.Resource, err error) error {
		if err == nil {
			err = r.Read(&rf)
		}
		n += len(r)
		return err
	}
	scope := func(sc otlpwire.Scope, err error) error {
		if err == nil {
			err = sc.Read(&sf)
		}
		n += len(sf.Name)
		return err
	}
	end := func([]byte) error {
		n++
		return nil
	}
	switch s {
	case otlpwire.SignalLogs:
		var f otlpwire.LogRecordFields
		err := otlpwire.LogsRequest(in).Walk(otlpwire.LogVisitor{
			ResourceLogs: func(rl otlpwire.ResourceLogs) error { return resource(rl.Resource()) },
			ScopeLogs:    func(sl otlpwire.ScopeLogs) error { return scope(sl.Scope()) },
			LogRecord: func(lr otlpwire.LogRecord) error {
				err := lr.Read(&f)
				n += int(f.Time & 0xff)
				return err
			},
			ResourceLogsEnd: func(rl otlpwire.ResourceLogs) error { return end(rl) },
		})
		return n, err
	case otlpwire.SignalTraces:
		var f otlpwire.SpanFields
		err := otlpwire.TracesRequest(in).Walk(otlpwire.SpanVisitor{
			ResourceSpans: func(rs otlpwire.ResourceSpans) error { return resource(rs.Resource()) },
			ScopeSpans:    func(ss otlpwire.ScopeSpans) error { return scope(ss.Scope()) },
			Span: func(sp otlpwire.Span) error {
				err := sp.Read(&f)
				n += int(f.StartTime & 0xff)
				return err
			},
			ResourceSpansEnd: func(rs otlpwire.ResourceSpans) error { return end(rs) },
		})
		return n, err
	}
	var f otlpwire.MetricFields
	err := otlpwire.MetricsRequest(in).Walk(otlpwire.MetricVisitor{
		ResourceMetrics: func(rm otlpwire.ResourceMetrics) error { return resource(rm.Resource()) },
		ScopeMetrics:    func(sm otlpwire.ScopeMetrics) error { return scope(sm.Scope()) },
		Metric: func(m otlpwire.Metric) error {
			err := m.Read(&f)
			n += len(f.Name)
			return err
		},
		ResourceMetricsEnd: func(rm otlpwire.ResourceMetrics) error { return end(rm) },
	})
	return n, err
}

// BenchmarkWalk reads every resource, scope and record of the fixture
// with Walk, the callbacks capturing and updating locals: no allocation.
//
//	go test -run='^$' -bench=BenchmarkWalk -benchmem ./otlpwire/
func BenchmarkWalk(b *testing.B) {
	for _, s := range benchSignals {
		in := fixture(s)
		want, err := walkSum(s, in)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("signal=%s/impl=walk", s), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				n, err := walkSum(s, in)
				if err != nil || n != want {
					b.Fatal(n, err)
				}
				sink += n
			}
		})
	}
}
