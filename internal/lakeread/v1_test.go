package lakeread_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// writeLakeV1 writes reqs to a lake of schema version 1 in dir, as
// earlier releases did.
func writeLakeV1(t testing.TB, dir string, reqs ...[]byte) {
	t.Helper()
	cfg := lake.DefaultWriterConfig()
	cfg.Dir, cfg.SchemaVersion = dir, 1
	w, err := lake.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if _, err := w.Append(otlpwire.SignalTraces, "acme", r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// spanTextV1 is spanText for what version 1 keeps: no schema URLs, and
// attributes in the file's column order (compared sorted).
func spanTextV1(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) string {
	sorted := func(m pcommon.Map, top bool) string {
		var parts []string
		seen := map[string]bool{}
		for k, v := range m.All() {
			if seen[k] {
				continue
			}
			seen[k] = true
			parts = append(parts, fmt.Sprintf("%q=%s;", k, valueText(v, top)))
		}
		slices.Sort(parts)
		return strings.Join(parts, "")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "res{%s} scope{%q %q %s} ", sorted(rs.Resource().Attributes(), true),
		ss.Scope().Name(), ss.Scope().Version(), sorted(ss.Scope().Attributes(), true))
	fmt.Fprintf(&b, "%s %s %s %q %q kind=%d t=%d-%d attrs{%s} dropped=%d/%d/%d status=%d %q flags=%d",
		sp.TraceID(), sp.SpanID(), sp.ParentSpanID(), sp.TraceState().AsRaw(), sp.Name(), sp.Kind(),
		sp.StartTimestamp(), sp.EndTimestamp(), sorted(sp.Attributes(), false),
		sp.DroppedAttributesCount(), sp.DroppedEventsCount(), sp.DroppedLinksCount(),
		sp.Status().Code(), sp.Status().Message(), sp.Flags())
	for _, e := range sp.Events().All() {
		fmt.Fprintf(&b, " event{%d %q {%s} %d}", e.Timestamp(), e.Name(), sorted(e.Attributes(), true), e.DroppedAttributesCount())
	}
	for _, l := range sp.Links().All() {
		fmt.Fprintf(&b, " link{%s %s %q %d {%s} %d}", l.TraceID(), l.SpanID(), l.TraceState().AsRaw(), l.Flags(), sorted(l.Attributes(), true), l.DroppedAttributesCount())
	}
	return b.String()
}

// TestVersion1Files: a lake written by an earlier release (schema version
// 1) is read by the same queries: each trace by id with every field,
// attribute (typed by its column), event and link as sent but for what
// version 1 never kept; search and names as for version 2.
func TestVersion1Files(t *testing.T) {
	dir := t.TempDir()
	var reqs [][]byte
	for i := range int64(3) {
		reqs = append(reqs, synth.Traces(synth.Config{Seed: i + 30, Resources: 3, ScopesPerResource: 2, TotalRecords: 300}))
	}
	writeLakeV1(t, dir, reqs...)
	sent := ptrace.NewTraces()
	for _, b := range reqs {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		req.Traces().ResourceSpans().MoveAndAppendTo(sent.ResourceSpans())
	}
	r := newReader(t, dir)
	want := map[pcommon.TraceID][]string{}
	for _, rs := range sent.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				want[sp.TraceID()] = append(want[sp.TraceID()], spanTextV1(rs, ss, sp))
			}
		}
	}
	checked := 0
	for id, w := range want {
		if checked++; checked > 40 {
			break
		}
		res, err := r.Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
		if err != nil {
			t.Fatalf("trace %s: %v", id, err)
		}
		if res.FilesSkipped != 0 {
			t.Fatalf("trace %s: %d files skipped", id, res.FilesSkipped)
		}
		b, err := res.Spans.AppendProto(nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			t.Fatal(err)
		}
		var g []string
		for _, rs := range got.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					g = append(g, spanTextV1(rs, ss, sp))
				}
			}
		}
		slices.Sort(g)
		slices.Sort(w)
		if !slices.Equal(g, w) {
			t.Fatalf("trace %s:\n got  %q\n want %q", id, g, w)
		}
	}

	svc, _ := sent.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
	sp0 := sent.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	for name, q := range map[string]lakeread.Query{
		"service":           {Service: svc.Str(), Limit: 1000},
		"service+operation": {Service: svc.Str(), Operation: sp0.Name(), Limit: 1000},
		"error":             {Attributes: map[string]string{"error": "true"}, Limit: 1000},
		"min duration":      {DurationMin: 50 * time.Millisecond, Limit: 1000},
		"limit 5":           {Service: svc.Str(), Limit: 5},
	} {
		exp := expectFind(sent, q)
		found, err := r.FindTraces(context.Background(), "acme", q)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, f := range found {
			ids = append(ids, pcommon.TraceID(f.ID).String())
		}
		if !slices.Equal(ids, exp) || len(exp) == 0 {
			t.Errorf("search %s: %d traces, want %d", name, len(ids), len(exp))
		}
	}
	svcs, err := r.Services(context.Background(), "acme", time.Time{}, time.Time{})
	if err != nil || !slices.Contains(svcs, svc.Str()) {
		t.Errorf("services %q, %v", svcs, err)
	}
	ops, err := r.Operations(context.Background(), "acme", svc.Str(), "", time.Time{}, time.Time{})
	if err != nil || !slices.ContainsFunc(ops, func(o lakeread.Operation) bool { return o.Name == sp0.Name() }) {
		t.Errorf("operations %v, %v", ops, err)
	}
}
