package lakeread_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// valueText renders v for comparison. inJSON: v is held as JSON by the
// lake (resource and scope attributes, and everything inside arrays and
// key-value lists), whose documented losses apply: bytes come back as
// their base64 string, NaN and ±Inf as strings, invalid UTF-8 as U+FFFD.
func valueText(v pcommon.Value, inJSON bool) string {
	str := func(s string) string {
		if inJSON {
			s = string([]rune(s))
		}
		return "s:" + strconv.Quote(s)
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return str(v.Str())
	case pcommon.ValueTypeInt:
		return "i:" + strconv.FormatInt(v.Int(), 10)
	case pcommon.ValueTypeDouble:
		f := v.Double()
		if inJSON && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return str(map[bool]string{true: "NaN"}[math.IsNaN(f)] + map[int]string{1: "Infinity", -1: "-Infinity", 0: ""}[sign(f)])
		}
		return "d:" + strconv.FormatFloat(f, 'g', -1, 64)
	case pcommon.ValueTypeBool:
		return "b:" + strconv.FormatBool(v.Bool())
	case pcommon.ValueTypeBytes:
		if inJSON {
			return str(base64.StdEncoding.EncodeToString(v.Bytes().AsRaw()))
		}
		return "y:" + strconv.Quote(string(v.Bytes().AsRaw()))
	case pcommon.ValueTypeSlice:
		var parts []string
		for _, e := range v.Slice().All() {
			parts = append(parts, valueText(e, true))
		}
		return "a:[" + strings.Join(parts, ",") + "]"
	case pcommon.ValueTypeMap:
		return "m:{" + mapText(v.Map(), true) + "}"
	}
	return "n"
}

func sign(f float64) int {
	switch {
	case math.IsInf(f, 1):
		return 1
	case math.IsInf(f, -1):
		return -1
	}
	return 0
}

// mapText renders m in order; the lake keeps a key's first occurrence
// (with every key as sent at the top level of a map, and inside JSON as
// the rules above).
func mapText(m pcommon.Map, inJSON bool) string {
	var b strings.Builder
	seen := map[string]bool{}
	for k, v := range m.All() {
		if !inJSON && seen[k] {
			continue
		}
		seen[k] = true
		if inJSON {
			k = string([]rune(k))
		}
		fmt.Fprintf(&b, "%q=%s;", k, valueText(v, inJSON))
	}
	return b.String()
}

// topMapText is mapText for a map the lake stores as JSON as a whole
// (resource and scope attributes): a key once, and the JSON rules.
func topMapText(m pcommon.Map) string {
	var b strings.Builder
	seen := map[string]bool{}
	for k, v := range m.All() {
		if seen[k] {
			continue
		}
		seen[k] = true
		fmt.Fprintf(&b, "%q=%s;", string([]rune(k)), valueText(v, true))
	}
	return b.String()
}

// spanText renders a span with its resource and scope, as the reader
// should give it back.
func spanText(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) string {
	var b strings.Builder
	fmt.Fprintf(&b, "res{%s url=%q} scope{%q %q %s url=%q} ",
		topMapText(rs.Resource().Attributes()), rs.SchemaUrl(),
		ss.Scope().Name(), ss.Scope().Version(), topMapText(ss.Scope().Attributes()), ss.SchemaUrl())
	fmt.Fprintf(&b, "%s %s %s %q %q kind=%d t=%d-%d attrs{%s} dropped=%d/%d/%d status=%d %q flags=%d",
		sp.TraceID(), sp.SpanID(), sp.ParentSpanID(), sp.TraceState().AsRaw(), sp.Name(), sp.Kind(),
		sp.StartTimestamp(), sp.EndTimestamp(), mapText(sp.Attributes(), false),
		sp.DroppedAttributesCount(), sp.DroppedEventsCount(), sp.DroppedLinksCount(),
		sp.Status().Code(), sp.Status().Message(), sp.Flags())
	for _, e := range sp.Events().All() {
		fmt.Fprintf(&b, " event{%d %q {%s} %d}", e.Timestamp(), e.Name(), mapText(e.Attributes(), false), e.DroppedAttributesCount())
	}
	for _, l := range sp.Links().All() {
		fmt.Fprintf(&b, " link{%s %s %q %d {%s} %d}", l.TraceID(), l.SpanID(), l.TraceState().AsRaw(), l.Flags(), mapText(l.Attributes(), false), l.DroppedAttributesCount())
	}
	return b.String()
}

// spansOf renders every span of td whose trace id is id.
func spansOf(td ptrace.Traces, id pcommon.TraceID) []string {
	var out []string
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.TraceID() == id {
					out = append(out, spanText(rs, ss, sp))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// writeLake writes traces requests reqs to a version-2 lake in dir.
func writeLake(t testing.TB, dir string, reqs ...[]byte) {
	t.Helper()
	writeSignal(t, dir, otlpwire.SignalTraces, reqs...)
}

// writeLogsLake writes logs requests reqs to a version-2 lake in dir.
func writeLogsLake(t testing.TB, dir string, reqs ...[]byte) {
	t.Helper()
	writeSignal(t, dir, otlpwire.SignalLogs, reqs...)
}

// writeSignal writes reqs of signal sig, tenant acme, to a version-2
// lake in dir.
func writeSignal(t testing.TB, dir string, sig otlpwire.Signal, reqs ...[]byte) {
	t.Helper()
	cfg := lake.DefaultWriterConfig()
	cfg.Dir = dir
	w, err := lake.NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if _, err := w.Append(sig, "acme", r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func newReader(t testing.TB, dir string, set ...func(*lakeread.Config)) *lakeread.Reader {
	t.Helper()
	cfg := lakeread.DefaultConfig()
	cfg.Bucket = bucket.NewLocal(dir)
	for _, f := range set {
		f(&cfg)
	}
	r, err := lakeread.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTraceRoundTrip: every trace of random requests (every value type,
// repeated keys, empty values, events and links with attributes) and of
// realistic traces comes back by its id from the lake, each span once with
// every field, attribute, event and link as sent (pdata is the oracle),
// but for the documented losses of values held as JSON.
func TestTraceRoundTrip(t *testing.T) {
	for seed := range uint64(12) {
		dir := t.TempDir()
		var reqs [][]byte
		sent := ptrace.NewTraces()
		for i := range uint64(3) {
			reqs = append(reqs, synth.Random(rand.New(rand.NewPCG(seed, i)), otlpwire.SignalTraces, synth.Ascending))
		}
		reqs = append(reqs, synth.Traces(synth.Config{Seed: int64(seed), Resources: 3, ScopesPerResource: 2, TotalRecords: 300}))
		for _, b := range reqs {
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(b); err != nil {
				t.Fatal(err)
			}
			req.Traces().ResourceSpans().MoveAndAppendTo(sent.ResourceSpans())
		}
		writeLake(t, dir, reqs...)
		// The chunk cache's readers (and dictionaries) reused from one
		// lookup to the next, evicted all along in a small cache, or none.
		cache := []int64{lakeread.DefaultChunkCacheBytes, 64 << 10, 0}[seed%3]
		r := newReader(t, dir, func(c *lakeread.Config) { c.ChunkCacheBytes = cache })
		ids := map[pcommon.TraceID]bool{}
		for _, rs := range sent.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if !sp.TraceID().IsEmpty() {
						ids[sp.TraceID()] = true
					}
				}
			}
		}
		checked, spans := 0, 0
		defer func() { t.Logf("seed %d: %d traces, %d spans compared", seed, checked, spans) }()
		var order []pcommon.TraceID
		for id := range ids {
			if len(order) == 40 {
				break
			}
			order = append(order, id)
		}
		for _, id := range append(order, order...) { // each twice, readers reused
			checked++
			res, err := r.Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
			if err != nil {
				t.Fatalf("seed %d, trace %s: %v", seed, id, err)
			}
			b, err := res.Spans.AppendProto(nil)
			if err != nil {
				t.Fatalf("seed %d, trace %s: %v", seed, id, err)
			}
			got, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
			if err != nil {
				t.Fatalf("seed %d, trace %s: the reader's TracesData does not unmarshal: %v", seed, id, err)
			}
			want := spansOf(sent, id)
			spans += len(want)
			if g := spansOf(got, id); !slices.Equal(g, want) {
				t.Fatalf("seed %d, trace %s: %d spans, want %d\n got  %q\n want %q", seed, id, len(g), len(want), g, want)
			}
			if got.SpanCount() != len(want) {
				t.Fatalf("seed %d, trace %s: %d spans in all, %d of the trace", seed, id, got.SpanCount(), len(want))
			}
		}
	}
}

// TestTraceNotFoundAndPruned: an id the lake does not have gives no
// spans; a time range outside every partition opens no file; bloom
// filters keep most row groups unread.
func TestTraceNotFoundAndPruned(t *testing.T) {
	dir := t.TempDir()
	writeLake(t, dir, synth.Traces(synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 2000}))
	r := newReader(t, dir)
	res, err := r.Trace(context.Background(), "acme", [16]byte{0xde, 0xad}, time.Time{}, time.Time{})
	if err != nil || res.Spans.Len() != 0 || res.FilesOpened+res.FilesPassed == 0 {
		t.Fatalf("unknown id: %+v, %v", res, err)
	}
	if res.RowGroups != 0 {
		t.Logf("bloom filter false positive: %d row groups read", res.RowGroups)
	}
	res, err = r.Trace(context.Background(), "acme", [16]byte{0xde, 0xad}, time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1990, 1, 2, 0, 0, 0, 0, time.UTC))
	if err != nil || res.FilesOpened != 0 {
		t.Fatalf("outside every partition: %+v, %v", res, err)
	}
	res, err = r.Trace(context.Background(), "globex", [16]byte{0xde, 0xad}, time.Time{}, time.Time{})
	if err != nil || res.FilesOpened != 0 {
		t.Fatalf("another tenant: %+v, %v", res, err)
	}
}

// TestTraceLimits: past MaxBytes or MaxSpans a query fails with a
// *LimitError, and a cancelled context stops it.
func TestTraceLimits(t *testing.T) {
	dir := t.TempDir()
	body := synth.Traces(synth.Config{Seed: 2, Resources: 2, ScopesPerResource: 1, TotalRecords: 500})
	writeLake(t, dir, body)
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	id := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	var le *lakeread.LimitError
	_, err := newReader(t, dir, func(c *lakeread.Config) { c.MaxBytes = 1000 }).Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
	if !errors.As(err, &le) || le.What != "bytes read" {
		t.Errorf("MaxBytes 1000: %v, want a *LimitError on bytes", err)
	}
	_, err = newReader(t, dir, func(c *lakeread.Config) { c.MaxSpans = 1 }).Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
	if !errors.As(err, &le) || le.What != "spans" {
		t.Errorf("MaxSpans 1: %v, want a *LimitError on spans", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newReader(t, dir).Trace(ctx, "acme", id, time.Time{}, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestServicesAndOperations: the services and operations of the lake are
// those of the spans sent (pdata is the oracle), all or of one service or
// kind, and none outside the partitions' hours.
func TestServicesAndOperations(t *testing.T) {
	dir := t.TempDir()
	var reqs [][]byte
	for i := range int64(3) {
		reqs = append(reqs, synth.Traces(synth.Config{Seed: i, Resources: 3, ScopesPerResource: 2, TotalRecords: 400}))
	}
	writeLake(t, dir, reqs...)
	kinds := []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}
	services := map[string]bool{}
	ops := map[string]map[lakeread.Operation]bool{}
	for _, b := range reqs {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.Traces().ResourceSpans().All() {
			svc := "unknown_service"
			if v, ok := rs.Resource().Attributes().Get("service.name"); ok && v.Str() != "" {
				svc = v.Str()
			}
			services[svc] = true
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if ops[svc] == nil {
						ops[svc] = map[lakeread.Operation]bool{}
					}
					ops[svc][lakeread.Operation{Name: sp.Name(), Kind: kinds[sp.Kind()]}] = true
				}
			}
		}
	}
	r := newReader(t, dir)
	ctx := context.Background()
	got, err := r.Services(ctx, "acme", time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(maps.Keys(services))
	if !slices.Equal(got, want) {
		t.Errorf("services %q, want %q", got, want)
	}
	for svc, set := range ops {
		gotOps, err := r.Operations(ctx, "acme", svc, "", time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		wantOps := slices.SortedFunc(maps.Keys(set), func(a, b lakeread.Operation) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind))
		})
		if !slices.Equal(gotOps, wantOps) {
			t.Errorf("operations of %s: %v, want %v", svc, gotOps, wantOps)
		}
		servers, err := r.Operations(ctx, "acme", svc, "SPAN_KIND_SERVER", time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for op := range set {
			if op.Kind == "SPAN_KIND_SERVER" {
				n++
			}
		}
		if len(servers) != n {
			t.Errorf("server operations of %s: %d, want %d", svc, len(servers), n)
		}
	}
	if got, err := r.Services(ctx, "acme", time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1990, 1, 2, 0, 0, 0, 0, time.UTC)); err != nil || len(got) != 0 {
		t.Errorf("services in 1990: %q, %v", got, err)
	}
}

// TestFindTraces: a search finds the traces with a span that matches
// every condition — service, operation, span or resource attributes as
// text, error, start window, duration bounds — as the pdata oracle finds
// them, the most recent first, at most Limit.
func TestFindTraces(t *testing.T) {
	dir := t.TempDir()
	var reqs [][]byte
	for i := range int64(3) {
		reqs = append(reqs, synth.Traces(synth.Config{Seed: i + 10, Resources: 3, ScopesPerResource: 2, TotalRecords: 400}))
	}
	writeLake(t, dir, reqs...)
	sent := ptrace.NewTraces()
	for _, b := range reqs {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		req.Traces().ResourceSpans().MoveAndAppendTo(sent.ResourceSpans())
	}
	// Pick values from the data.
	rs0 := sent.ResourceSpans().At(0)
	svc, _ := rs0.Resource().Attributes().Get("service.name")
	host, _ := rs0.Resource().Attributes().Get("host.name")
	sp0 := rs0.ScopeSpans().At(0).Spans().At(0)
	var attrKey, attrVal string
	for k, v := range sp0.Attributes().All() {
		if v.Type() == pcommon.ValueTypeStr {
			attrKey, attrVal = k, v.Str()
			break
		}
	}
	var intKey, intVal string
	for _, rs := range sent.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				for k, v := range sp.Attributes().All() {
					if v.Type() == pcommon.ValueTypeInt && intKey == "" {
						intKey, intVal = k, v.AsString()
					}
				}
			}
		}
	}
	start := time.Unix(0, int64(sp0.StartTimestamp())).UTC()
	queries := map[string]lakeread.Query{
		"service":           {Service: svc.Str(), Limit: 1000},
		"service+operation": {Service: svc.Str(), Operation: sp0.Name(), Limit: 1000},
		"span attribute":    {Attributes: map[string]string{attrKey: attrVal}, Limit: 1000},
		"int attribute":     {Attributes: map[string]string{intKey: intVal}, Limit: 1000},
		"resource attr":     {Attributes: map[string]string{"host.name": host.Str()}, Limit: 1000},
		"error":             {Attributes: map[string]string{"error": "true"}, Limit: 1000},
		"error status":      {ErrorStatus: true, Limit: 1000},
		"service, error":    {Service: svc.Str(), ErrorStatus: true, Limit: 1000},
		"min duration":      {DurationMin: 50 * time.Millisecond, Limit: 1000},
		"max duration":      {Service: svc.Str(), DurationMax: time.Millisecond, Limit: 1000},
		"start window":      {StartMin: start.Add(-time.Second), StartMax: start.Add(time.Second), Limit: 1000},
		"limit 5":           {Service: svc.Str(), Limit: 5},
	}
	r := newReader(t, dir)
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			want := expectFind(sent, q)
			got, err := r.FindTraces(context.Background(), "acme", q)
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []string
			for _, f := range got {
				gotIDs = append(gotIDs, pcommon.TraceID(f.ID).String())
			}
			if !slices.Equal(gotIDs, want) {
				t.Errorf("found %d traces, want %d\n got  %v\n want %v", len(gotIDs), len(want), gotIDs, want)
			}
			if len(want) == 0 {
				t.Errorf("the query matches nothing: pick another value")
			}
		})
	}
}

// expectFind is the oracle of FindTraces: the ids of the traces with a
// span matching q, by the latest end of their matching spans, then id.
func expectFind(td ptrace.Traces, q lakeread.Query) []string {
	ends := map[pcommon.TraceID]int64{}
	text := func(m pcommon.Map, k string) (string, bool) {
		v, ok := m.Get(k)
		if !ok || v.Type() == pcommon.ValueTypeEmpty {
			return "", false
		}
		if v.Type() == pcommon.ValueTypeStr {
			return v.Str(), true
		}
		return v.AsString(), true
	}
	for _, rs := range td.ResourceSpans().All() {
		svc := "unknown_service"
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok && v.Str() != "" {
			svc = v.Str()
		}
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				st, d := int64(sp.StartTimestamp()), int64(sp.EndTimestamp())-int64(sp.StartTimestamp())
				switch {
				case q.Service != "" && svc != q.Service, q.Operation != "" && sp.Name() != q.Operation,
					!q.StartMin.IsZero() && st < q.StartMin.UnixNano(), !q.StartMax.IsZero() && st >= q.StartMax.UnixNano(),
					q.DurationMin > 0 && d < int64(q.DurationMin), q.DurationMax > 0 && d > int64(q.DurationMax),
					q.ErrorStatus && sp.Status().Code() != ptrace.StatusCodeError, sp.TraceID().IsEmpty():
					continue
				}
				ok := true
				for k, want := range q.Attributes {
					if k == "error" && want == "true" && sp.Status().Code() == ptrace.StatusCodeError {
						continue
					}
					found := false
					for _, m := range []pcommon.Map{sp.Attributes(), rs.Resource().Attributes(), ss.Scope().Attributes()} {
						if v, has := text(m, k); has && v == want {
							found = true
						}
					}
					ok = ok && found
				}
				if !ok {
					continue
				}
				if e := st + d; e > ends[sp.TraceID()] || ends[sp.TraceID()] == 0 {
					ends[sp.TraceID()] = e
				}
			}
		}
	}
	ids := slices.Collect(maps.Keys(ends))
	slices.SortFunc(ids, func(a, b pcommon.TraceID) int {
		if c := cmp.Compare(ends[b], ends[a]); c != 0 {
			return c
		}
		return strings.Compare(a.String(), b.String())
	})
	var out []string
	for _, id := range ids[:min(len(ids), q.Limit)] {
		out = append(out, id.String())
	}
	return out
}

// TestFindTracesAcrossHours: a search over several hours with a small
// limit gives the most recent traces (by end) — read newest hour first,
// passing over hours that cannot change the answer — including a long
// span of an older hour that ends after every newer one.
func TestFindTracesAcrossHours(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for h := range 3 {
		reqs = append(reqs, synth.Traces(synth.Config{Seed: int64(h), Resources: 2, ScopesPerResource: 1, TotalRecords: 200,
			Start: base.Add(time.Duration(h)*time.Hour + 10*time.Minute)}))
	}
	long := ptrace.NewTraces()
	rs := long.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "long-runner")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{0x10, 15: 1})
	sp.SetSpanID(pcommon.SpanID{1})
	sp.SetName("batch")
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(base.Add(5 * time.Minute)))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(base.Add(5 * time.Hour)))
	b, err := ptraceotlp.NewExportRequestFromTraces(long).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	reqs = append(reqs, b)
	writeLake(t, dir, reqs...)
	sent := ptrace.NewTraces()
	for _, b := range reqs {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		req.Traces().ResourceSpans().MoveAndAppendTo(sent.ResourceSpans())
	}
	svc, _ := sent.ResourceSpans().At(0).Resource().Attributes().Get("service.name")
	r := newReader(t, dir)
	for name, q := range map[string]lakeread.Query{
		"limit 1":             {Limit: 1},
		"limit 7":             {Limit: 7},
		"service, limit 3":    {Service: svc.Str(), Limit: 3},
		"min duration, limit": {DurationMin: 10 * time.Millisecond, Limit: 4},
	} {
		want := expectFind(sent, q)
		got, err := r.FindTraces(context.Background(), "acme", q)
		if err != nil {
			t.Fatal(err)
		}
		var gotIDs []string
		for _, f := range got {
			gotIDs = append(gotIDs, pcommon.TraceID(f.ID).String())
		}
		if !slices.Equal(gotIDs, want) || len(want) == 0 {
			t.Errorf("%s: got %v, want %v", name, gotIDs, want)
		}
	}
}

// listingBucket records the prefixes listed through it.
type listingBucket struct {
	bucket.Bucket
	prefixes []string
}

func (b *listingBucket) List(ctx context.Context, prefix string) iter.Seq2[bucket.Attrs, error] {
	b.prefixes = append(b.prefixes, prefix)
	return b.Bucket.List(ctx, prefix)
}

// TestListsHoursOfRange: a query over a few hours lists their partitions
// alone, and finds the records of every one of them; a query without a
// range lists the tenant's tree.
func TestListsHoursOfRange(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for h := range 4 { // hours 9 to 12
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(h), Resources: 2, ScopesPerResource: 1, TotalRecords: 50, Start: base.Add(time.Duration(h)*time.Hour + 10*time.Minute)}))
	}
	writeLogsLake(t, dir, reqs...)
	lb := &listingBucket{Bucket: bucket.NewLocal(dir)}
	r := newReader(t, dir, func(c *lakeread.Config) { c.Bucket = lb })
	defer r.Close()
	// Hours 10 and 11: two partitions listed, their 100 records found.
	q := lakeread.LogQuery{Start: base.Add(time.Hour), End: base.Add(3 * time.Hour)}
	n := 0
	if err := r.Logs(context.Background(), "acme", q, func(*lakeread.LogRecord) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	want := []string{lake.HourPrefix(otlpwire.SignalLogs, "acme", base.Add(time.Hour)), lake.HourPrefix(otlpwire.SignalLogs, "acme", base.Add(2*time.Hour))}
	if n != 100 || !slices.Equal(lb.prefixes, want) {
		t.Fatalf("%d records from listing %q, want 100 from %q", n, lb.prefixes, want)
	}
	// A range past maxListedHours lists the tenant, and finds all 200.
	lb.prefixes, n = nil, 0
	q = lakeread.LogQuery{Start: base.Add(-72 * time.Hour), End: base.Add(24 * time.Hour)}
	if err := r.Logs(context.Background(), "acme", q, func(*lakeread.LogRecord) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	if want := []string{lake.TenantPrefix(otlpwire.SignalLogs, "acme")}; n != 200 || !slices.Equal(lb.prefixes, want) {
		t.Fatalf("%d records from listing %q, want 200 from %q", n, lb.prefixes, want)
	}
}
