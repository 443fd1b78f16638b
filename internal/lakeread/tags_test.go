package lakeread_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/lakeread/lakereadtest"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// tagSpans is one request of spans of service svc with attributes of
// every type, an event and a link, the names prefixed by p.
func tagSpans(t *testing.T, svc, p string, status int64) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", svc)
	rs.Resource().Attributes().PutInt(p+"res.int", 7)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().Attributes().PutStr(p+"scope.attr", "x")
	for i := range 3 {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(len(p)), byte(i + 1)})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		sp.SetName("op")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(-time.Minute)))
		sp.SetEndTimestamp(sp.StartTimestamp() + 1000)
		a := sp.Attributes()
		a.PutStr(p+"str", "v")
		a.PutInt("http.status_code", status+int64(i%2)) // a hot key: also a column of its own
		a.PutDouble(p+"ratio", 0.5)
		a.PutBool(p+"ok", i == 0)
		a.PutStr("mixed", "text")
		if i == 2 {
			a.PutInt("mixed", 3) // the same key as another type (overwrites: a key is once)
		}
		sp.Events().AppendEmpty().Attributes().PutStr(p+"ev.attr", "e")
		// A second event of other keys, one of an int, after an event of
		// none: values are placed by element and pair.
		sp.Events().AppendEmpty()
		ev := sp.Events().AppendEmpty().Attributes()
		ev.PutDouble(p+"ev.ratio", 0.25)
		ev.PutInt(p+"ev.n", int64(i))
		ln := sp.Links().AppendEmpty().Attributes()
		ln.PutStr(p+"link.attr", "l")
		ln.PutBool(p+"link.ok", true)
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type freshTraces [][]byte

func (f freshTraces) Fresh(_ context.Context, sig otlpwire.Signal, _ string, fn func([]byte) error) (uint64, error) {
	if sig != otlpwire.SignalTraces {
		return 0, nil
	}
	for _, b := range f {
		if err := fn(b); err != nil {
			return 0, err
		}
	}
	return 1 << 62, nil
}

// TestTraceTags: names by scope and typed values, from files and from the
// spans not in files yet; another tenant's are not seen.
func TestTraceTags(t *testing.T) {
	r := lakereadtest.Reader(t, map[string][]byte{"a": tagSpans(t, "api", "", 200), "b": tagSpans(t, "secret", "b.", 500)},
		func(c *lakeread.Config) { c.Fresh = freshTraces{tagSpans(t, "web", "fresh.", 404)} })
	ctx := context.Background()
	names, err := r.TraceTagNames(ctx, "a", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[lakeread.TagScope][]string{
		lakeread.TagResource:        {"fresh.res.int", "res.int", "service.name"},
		lakeread.TagSpan:            {"fresh.ok", "fresh.ratio", "fresh.str", "http.status_code", "mixed", "ok", "ratio", "str"},
		lakeread.TagEvent:           {"ev.attr", "ev.n", "ev.ratio", "fresh.ev.attr", "fresh.ev.n", "fresh.ev.ratio"},
		lakeread.TagLink:            {"fresh.link.attr", "fresh.link.ok", "link.attr", "link.ok"},
		lakeread.TagInstrumentation: {"fresh.scope.attr", "scope.attr"},
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names\n got  %v\n want %v", names, want)
	}
	// Twice: the second round answers from what the Reader keeps of
	// each file.
	for round := range 2 {
		for _, c := range []struct {
			scope lakeread.TagScope
			key   string
			max   int
			want  []lakeread.TagValue
		}{
			{lakeread.TagResource, "service.name", 100, []lakeread.TagValue{{"string", "api"}, {"string", "web"}}},
			{lakeread.TagResource, "res.int", 100, []lakeread.TagValue{{"int", "7"}}},
			{lakeread.TagSpan, "http.status_code", 100, []lakeread.TagValue{{"int", "200"}, {"int", "201"}, {"int", "404"}, {"int", "405"}}},
			{lakeread.TagSpan, "str", 100, []lakeread.TagValue{{"string", "v"}}},
			{lakeread.TagSpan, "ratio", 100, []lakeread.TagValue{{"float", "0.5"}}},
			{lakeread.TagSpan, "ok", 100, []lakeread.TagValue{{"bool", "false"}, {"bool", "true"}}},
			{lakeread.TagSpan, "mixed", 100, []lakeread.TagValue{{"int", "3"}, {"string", "text"}}},
			{lakeread.TagSpan, "nope", 100, nil},
			{lakeread.TagInstrumentation, "scope.attr", 100, []lakeread.TagValue{{"string", "x"}}},
			{lakeread.TagInstrumentation, "fresh.scope.attr", 100, []lakeread.TagValue{{"string", "x"}}},
			{lakeread.TagInstrumentation, "service.name", 100, nil}, // a resource's key, not a scope's
			{lakeread.TagEvent, "ev.attr", 100, []lakeread.TagValue{{"string", "e"}}},
			{lakeread.TagEvent, "fresh.ev.attr", 100, []lakeread.TagValue{{"string", "e"}}},
			{lakeread.TagEvent, "ev.n", 100, []lakeread.TagValue{{"int", "0"}, {"int", "1"}, {"int", "2"}}},
			{lakeread.TagEvent, "ev.ratio", 100, []lakeread.TagValue{{"float", "0.25"}}},
			{lakeread.TagEvent, "str", 100, nil}, // a span's key, not an event's
			{lakeread.TagLink, "link.attr", 100, []lakeread.TagValue{{"string", "l"}}},
			{lakeread.TagLink, "link.ok", 100, []lakeread.TagValue{{"bool", "true"}}},
			{lakeread.TagSpan, "http.status_code", 2, nil}, // at most 2: which two is not said
		} {
			got, err := r.TraceTagValues(ctx, "a", c.scope, c.key, time.Time{}, time.Time{}, c.max)
			if err != nil {
				t.Fatal(err)
			}
			if c.max == 2 {
				if len(got) != 2 {
					t.Errorf("round %d: %s.%s at most 2: %v", round, c.scope, c.key, got)
				}
				continue
			}
			if !reflect.DeepEqual(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Errorf("round %d: %s.%s = %v, want %v", round, c.scope, c.key, got, c.want)
			}
		}
	}
	if _, err := r.TraceTagValues(ctx, "a", lakeread.TagScope("nope"), "x", time.Time{}, time.Time{}, 10); err == nil {
		t.Error("values of an unknown scope answered")
	}
}

// TestResourceTagValuesMany: a resource key with more values in a file
// than the memo keeps of a key (an instance id) is answered whole, the
// first time and from the memo after, beside a key with few values.
func TestResourceTagValuesMany(t *testing.T) {
	td := ptrace.NewTraces()
	const n = 150
	for i := range n {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "api")
		rs.Resource().Attributes().PutStr("service.instance.id", fmt.Sprintf("i-%03d", i))
		rs.Resource().Attributes().PutInt("shard", int64(i%3))
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(pcommon.TraceID{byte(i + 1)})
		sp.SetSpanID(pcommon.SpanID{byte(i + 1)})
		sp.SetName("op")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Now().Add(-time.Minute)))
		sp.SetEndTimestamp(sp.StartTimestamp() + 1000)
	}
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	r := lakereadtest.Reader(t, map[string][]byte{"a": b})
	var ids []lakeread.TagValue
	for i := range n {
		ids = append(ids, lakeread.TagValue{Type: "string", Value: fmt.Sprintf("i-%03d", i)})
	}
	for round := range 2 {
		for _, c := range []struct {
			key  string
			want []lakeread.TagValue
		}{
			{"service.instance.id", ids},
			{"shard", []lakeread.TagValue{{"int", "0"}, {"int", "1"}, {"int", "2"}}},
			{"service.name", []lakeread.TagValue{{"string", "api"}}},
		} {
			got, err := r.TraceTagValues(context.Background(), "a", lakeread.TagResource, c.key, time.Time{}, time.Time{}, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("round %d: %s = %v, want %v", round, c.key, got, c.want)
			}
		}
	}
}
