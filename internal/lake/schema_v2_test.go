package lake

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// The rows of version-2 files as a reader sees them, read with
// parquet-go's generic reader (columns matched by name).

type v2Event struct {
	Time       int64              `parquet:"time"`
	Name       string             `parquet:"name"`
	Attributes map[string]*string `parquet:"attributes"`
	Types      string             `parquet:"attribute_types"`
	Dropped    uint32             `parquet:"dropped_attributes_count"`
}

type v2Link struct {
	TraceID    string             `parquet:"trace_id"`
	SpanID     string             `parquet:"span_id"`
	TraceState string             `parquet:"trace_state"`
	Flags      uint32             `parquet:"flags"`
	Attributes map[string]*string `parquet:"attributes"`
	Types      string             `parquet:"attribute_types"`
	Dropped    uint32             `parquet:"dropped_attributes_count"`
}

// v2Common are the columns both signals have.
type v2Common struct {
	ServiceName        string             `parquet:"service_name"`
	ScopeName          string             `parquet:"scope_name"`
	ScopeVersion       string             `parquet:"scope_version"`
	ResourceSchemaURL  string             `parquet:"resource_schema_url"`
	ScopeSchemaURL     string             `parquet:"scope_schema_url"`
	ResourceAttributes string             `parquet:"resource_attributes"`
	ScopeAttributes    string             `parquet:"scope_attributes"`
	Attributes         map[string]*string `parquet:"attributes"`
	AttrTypes          string             `parquet:"attribute_types"`
	Dropped            uint32             `parquet:"dropped_attributes_count"`
	hot                string             // the hot columns read, as text
}

// v2Hot are three of the hot columns.
type v2Hot struct {
	HTTPMethod *string `parquet:"attr_http_request_method,optional"`
	HTTPStatus *int64  `parquet:"attr_http_response_status_code,optional"`
	HostName   *string `parquet:"resource_host_name,optional"`
}

func (h v2Hot) text() string {
	return optText(h.HTTPMethod) + "/" + optText(h.HTTPStatus) + "/" + optText(h.HostName)
}

type v2Span struct {
	TraceID       *string   `parquet:"trace_id,optional"`
	SpanID        *string   `parquet:"span_id,optional"`
	ParentSpanID  *string   `parquet:"parent_span_id,optional"`
	TraceState    string    `parquet:"trace_state"`
	Name          string    `parquet:"name"`
	Kind          string    `parquet:"kind"`
	StartTime     int64     `parquet:"start_time"`
	EndTime       int64     `parquet:"end_time"`
	Duration      int64     `parquet:"duration"`
	StatusCode    string    `parquet:"status_code"`
	StatusMessage string    `parquet:"status_message"`
	Flags         uint32    `parquet:"flags"`
	DroppedEvents uint32    `parquet:"dropped_events_count"`
	DroppedLinks  uint32    `parquet:"dropped_links_count"`
	Events        []v2Event `parquet:"events,list"`
	Links         []v2Link  `parquet:"links,list"`
	HTTPMethod    *string   `parquet:"attr_http_request_method,optional"`
	HTTPStatus    *int64    `parquet:"attr_http_response_status_code,optional"`
	HostName      *string   `parquet:"resource_host_name,optional"`
	v2Common
}

type v2Log struct {
	Time           int64   `parquet:"timestamp"`
	ObservedTime   int64   `parquet:"observed_timestamp"`
	SeverityNumber int32   `parquet:"severity_number"`
	SeverityText   string  `parquet:"severity_text"`
	Body           *string `parquet:"body,optional"`
	TraceID        *string `parquet:"trace_id,optional"`
	SpanID         *string `parquet:"span_id,optional"`
	Flags          uint32  `parquet:"flags"`
	EventName      string  `parquet:"event_name"`
	HTTPMethod     *string `parquet:"attr_http_request_method,optional"`
	HTTPStatus     *int64  `parquet:"attr_http_response_status_code,optional"`
	HostName       *string `parquet:"resource_host_name,optional"`
	v2Common
}

// readV2 reads every Parquet file of signal under root as rows of T,
// checking that each is of schema version 2 and has the same schema.
func readV2[T any](t *testing.T, root, signal string) []T {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, signal, "*", "*", "*", "*.parquet"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no %s files under %s: %v", signal, root, err)
	}
	var out []T
	var schema string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(strings.NewReader(string(b)), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if v, _ := pf.Lookup(SchemaVersionKey); v != "2" {
			t.Fatalf("%s: schema version %q", p, v)
		}
		if s := pf.Schema().String(); schema == "" {
			schema = s
		} else if s != schema {
			t.Fatalf("%s: schema differs from another file's:\n%s\n%s", p, s, schema)
		}
		r := parquet.NewGenericReader[T](pf)
		rows := make([]T, pf.NumRows())
		n, err := r.Read(rows)
		if int64(n) != pf.NumRows() {
			t.Fatalf("%s: read %d of %d rows: %v", p, n, pf.NumRows(), err)
		}
		out = append(out, rows...)
	}
	return out
}

// mapText renders a map column's value, sorted by key.
func mapText(m map[string]*string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		v := "null"
		if m[k] != nil {
			v = strconv.Quote(*m[k])
		}
		fmt.Fprintf(&b, "%q=%s ", k, v)
	}
	return b.String()
}

// expectMap is what a map column holds for m, by the documented rule:
// values as text (expectCell's string form), null for an empty value,
// the first occurrence of a repeated key.
func expectMap(m pcommon.Map) map[string]*string {
	out := map[string]*string{}
	for k, v := range m.All() {
		if _, ok := out[k]; ok {
			continue
		}
		if v.Type() == pcommon.ValueTypeEmpty {
			out[k] = nil
			continue
		}
		s, err := strconv.Unquote(expectCell(v, "string"))
		if err != nil {
			panic(err)
		}
		out[k] = &s
	}
	return out
}

// expectTypes is the type signature of m: a character per distinct key
// (the first occurrence), by the documented alphabet.
func expectTypes(m pcommon.Map) string {
	chars := map[pcommon.ValueType]byte{
		pcommon.ValueTypeEmpty: 'n', pcommon.ValueTypeStr: 's', pcommon.ValueTypeBool: 'b', pcommon.ValueTypeInt: 'i',
		pcommon.ValueTypeDouble: 'd', pcommon.ValueTypeSlice: 'a', pcommon.ValueTypeMap: 'm', pcommon.ValueTypeBytes: 'y',
	}
	var b []byte
	seen := map[string]bool{}
	for k, v := range m.All() {
		if !seen[k] {
			seen[k] = true
			b = append(b, chars[v.Type()])
		}
	}
	return string(b)
}

// expectJSON is what resource_attributes or scope_attributes holds for
// m: a JSON object, a key once (the first), values as pdataJSON writes
// them.
func expectJSON(m pcommon.Map) string {
	var b strings.Builder
	b.WriteByte('{')
	seen := map[string]bool{}
	for k, v := range m.All() {
		if seen[k] {
			continue
		}
		seen[k] = true
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(appendJSONString(nil, []byte(k)))
		b.WriteByte(':')
		b.WriteString(pdataJSON(v))
	}
	b.WriteByte('}')
	return b.String()
}

func optText[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// v2ID is an id as the files hold it: lowercase hex, nil when all zero
// (invalid, as OTLP defines it) or absent.
func v2ID(b []byte) *string {
	if !slices.ContainsFunc(b, func(c byte) bool { return c != 0 }) {
		return nil
	}
	s := hex.EncodeToString(b)
	return &s
}

func (c v2Common) text() string {
	return fmt.Sprintf("svc=%q scope=%q/%q urls=%q/%q res=%s scopeattrs=%s attrs={%s} types=%s dropped=%d hot=%s",
		c.ServiceName, c.ScopeName, c.ScopeVersion, c.ResourceSchemaURL, c.ScopeSchemaURL,
		c.ResourceAttributes, c.ScopeAttributes, mapText(c.Attributes), c.AttrTypes, c.Dropped, c.hot)
}

// expectCommon is v2Common for a record of resource res and scope sc
// (with their schema URLs) and attributes attrs.
func expectCommon(res pcommon.Resource, resURL string, sc pcommon.InstrumentationScope, scURL string, attrs pcommon.Map, dropped uint32) v2Common {
	c := v2Common{
		ServiceName: unknownService, ScopeName: sc.Name(), ScopeVersion: sc.Version(),
		ResourceSchemaURL: resURL, ScopeSchemaURL: scURL,
		ResourceAttributes: expectJSON(res.Attributes()), ScopeAttributes: expectJSON(sc.Attributes()),
		Attributes: expectMap(attrs), Dropped: dropped,
		AttrTypes: expectTypes(attrs),
	}
	if v, ok := res.Attributes().Get("service.name"); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		c.ServiceName = v.Str()
	}
	var h v2Hot
	if v, ok := attrs.Get("http.request.method"); ok && v.Type() == pcommon.ValueTypeStr {
		s := v.Str()
		h.HTTPMethod = &s
	}
	if v, ok := attrs.Get("http.response.status_code"); ok && v.Type() == pcommon.ValueTypeInt {
		n := v.Int()
		h.HTTPStatus = &n
	}
	if v, ok := res.Attributes().Get("host.name"); ok && v.Type() == pcommon.ValueTypeStr {
		s := v.Str()
		h.HostName = &s
	}
	c.hot = h.text()
	return c
}

var (
	otlpKindNames   = []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}
	otlpStatusNames = []string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}
)

func enumText(names []string, v int32) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return strconv.Itoa(int(v))
}

func (s v2Span) text() string {
	if s.hot == "" { // read from a file; an expectation has it
		s.hot = v2Hot{s.HTTPMethod, s.HTTPStatus, s.HostName}.text()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s/%s ts=%q name=%q kind=%s t=%d-%d d=%d status=%s %q flags=%d dropped=%d/%d %s",
		optText(s.TraceID), optText(s.SpanID), optText(s.ParentSpanID), s.TraceState, s.Name, s.Kind,
		s.StartTime, s.EndTime, s.Duration, s.StatusCode, s.StatusMessage, s.Flags, s.DroppedEvents, s.DroppedLinks, s.v2Common.text())
	for _, e := range s.Events {
		fmt.Fprintf(&b, " event{%d %q {%s} %s %d}", e.Time, e.Name, mapText(e.Attributes), e.Types, e.Dropped)
	}
	for _, l := range s.Links {
		fmt.Fprintf(&b, " link{%s %s %q %d {%s} %s %d}", l.TraceID, l.SpanID, l.TraceState, l.Flags, mapText(l.Attributes), l.Types, l.Dropped)
	}
	return b.String()
}

func expectSpanV2(rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) string {
	tid, sid, pid := sp.TraceID(), sp.SpanID(), sp.ParentSpanID()
	s := v2Span{
		TraceID: v2ID(tid[:]), SpanID: v2ID(sid[:]), ParentSpanID: v2ID(pid[:]),
		TraceState: sp.TraceState().AsRaw(), Name: sp.Name(), Kind: enumText(otlpKindNames, int32(sp.Kind())),
		StartTime: int64(sp.StartTimestamp()), EndTime: int64(sp.EndTimestamp()),
		Duration:   int64(sp.EndTimestamp()) - int64(sp.StartTimestamp()),
		StatusCode: enumText(otlpStatusNames, int32(sp.Status().Code())), StatusMessage: sp.Status().Message(),
		Flags: sp.Flags(), DroppedEvents: sp.DroppedEventsCount(), DroppedLinks: sp.DroppedLinksCount(),
		v2Common: expectCommon(rs.Resource(), rs.SchemaUrl(), ss.Scope(), ss.SchemaUrl(), sp.Attributes(), sp.DroppedAttributesCount()),
	}
	for _, e := range sp.Events().All() {
		s.Events = append(s.Events, v2Event{Time: int64(e.Timestamp()), Name: e.Name(), Attributes: expectMap(e.Attributes()), Types: expectTypes(e.Attributes()), Dropped: e.DroppedAttributesCount()})
	}
	for _, l := range sp.Links().All() {
		lt, ls := l.TraceID(), l.SpanID()
		// A link's ids are required strings: empty when absent.
		s.Links = append(s.Links, v2Link{TraceID: strings.TrimPrefix(optText(v2ID(lt[:])), "null"), SpanID: strings.TrimPrefix(optText(v2ID(ls[:])), "null"), TraceState: l.TraceState().AsRaw(), Flags: l.Flags(), Attributes: expectMap(l.Attributes()), Types: expectTypes(l.Attributes()), Dropped: l.DroppedAttributesCount()})
	}
	return s.text()
}

// TestSpansV2RoundTrip: every span of random requests (every value type,
// repeated keys, empty values, events and links with attributes, absent
// service names and ids) and of realistic traces reads back from the
// version-2 files field by field as the pdata oracle has it, every file
// with the same schema.
func TestSpansV2RoundTrip(t *testing.T) {
	for seed := range uint64(20) {
		root := t.TempDir()
		cfg := testConfig(root)
		cfg.SchemaVersion = 2
		w := newTestWriter(t, cfg)
		var reqs [][]byte
		for i := range uint64(3) {
			reqs = append(reqs, synth.Random(rand.New(rand.NewPCG(seed, i)), otlpwire.SignalTraces, synth.Ascending))
		}
		reqs = append(reqs, synth.Traces(synth.Config{Seed: int64(seed), Resources: 2, ScopesPerResource: 2, TotalRecords: 60}))
		if _, err := w.Append(otlpwire.SignalTraces, "t1", reqs...); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, s := range readV2[v2Span](t, root, "traces") {
			got = append(got, s.text())
		}
		for _, body := range reqs {
			req := ptraceotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				t.Fatal(err)
			}
			for _, rs := range req.Traces().ResourceSpans().All() {
				for _, ss := range rs.ScopeSpans().All() {
					for _, sp := range ss.Spans().All() {
						want = append(want, expectSpanV2(rs, ss, sp))
					}
				}
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: rows differ\n%s", seed, diffLines(got, want))
		}
	}
}

func (l v2Log) text() string {
	if l.hot == "" {
		l.hot = v2Hot{l.HTTPMethod, l.HTTPStatus, l.HostName}.text()
	}
	return fmt.Sprintf("t=%d/%d sev=%d %q body=%s ids=%s/%s flags=%d event=%q %s",
		l.Time, l.ObservedTime, l.SeverityNumber, l.SeverityText, optText(l.Body), optText(l.TraceID), optText(l.SpanID),
		l.Flags, l.EventName, l.v2Common.text())
}

func expectLogV2(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) string {
	tid, sid := lr.TraceID(), lr.SpanID()
	l := v2Log{
		Time: int64(lr.Timestamp()), ObservedTime: int64(lr.ObservedTimestamp()),
		SeverityNumber: int32(lr.SeverityNumber()), SeverityText: lr.SeverityText(),
		TraceID: v2ID(tid[:]), SpanID: v2ID(sid[:]), Flags: uint32(lr.Flags()), EventName: lr.EventName(),
		v2Common: expectCommon(rl.Resource(), rl.SchemaUrl(), sl.Scope(), sl.SchemaUrl(), lr.Attributes(), lr.DroppedAttributesCount()),
	}
	switch lr.Body().Type() {
	case pcommon.ValueTypeEmpty:
	case pcommon.ValueTypeStr:
		s := lr.Body().Str()
		l.Body = &s
	default:
		s := pdataJSON(lr.Body())
		l.Body = &s
	}
	return l.text()
}

// TestLogsV2RoundTrip is TestSpansV2RoundTrip for logs.
func TestLogsV2RoundTrip(t *testing.T) {
	for seed := range uint64(20) {
		root := t.TempDir()
		cfg := testConfig(root)
		cfg.SchemaVersion = 2
		w := newTestWriter(t, cfg)
		var reqs [][]byte
		for i := range uint64(3) {
			reqs = append(reqs, synth.Random(rand.New(rand.NewPCG(seed, i)), otlpwire.SignalLogs, synth.Ascending))
		}
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(seed), Resources: 2, ScopesPerResource: 2, TotalRecords: 60}))
		if _, err := w.Append(otlpwire.SignalLogs, "t1", reqs...); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, l := range readV2[v2Log](t, root, "logs") {
			got = append(got, l.text())
		}
		for _, body := range reqs {
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				t.Fatal(err)
			}
			for _, rl := range req.Logs().ResourceLogs().All() {
				for _, sl := range rl.ScopeLogs().All() {
					for _, lr := range sl.LogRecords().All() {
						want = append(want, expectLogV2(rl, sl, lr))
					}
				}
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: rows differ\n%s", seed, diffLines(got, want))
		}
	}
}

// TestCompactV2: compaction merges version-2 files into one that keeps
// the version, the schema and every row.
func TestCompactV2(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.SchemaVersion, cfg.ManualFlush = 2, true
	w := newTestWriter(t, cfg)
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	var want []string
	for i := range 4 {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc%d", i%2))
		ss := rs.ScopeSpans().AppendEmpty()
		for j := range 5 {
			sp := ss.Spans().AppendEmpty()
			sp.SetName(fmt.Sprintf("op%d", j))
			sp.SetTraceID([16]byte{byte(i), byte(j), 1})
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(hour.Add(time.Duration(i*5+j) * time.Second)))
			sp.Attributes().PutInt("i", int64(i))
			sp.Events().AppendEmpty().SetName("ev")
			sp.Links().AppendEmpty().Attributes().PutStr("k", "v")
			want = append(want, expectSpanV2(rs, ss, sp))
		}
		b, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(otlpwire.SignalTraces, "t", b); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(uint64(i+1), uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Compact(t.Context(), root, 1000, hour.Add(3*time.Hour), CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Merges != 1 || c.Inputs != 4 || len(c.Skipped) != 0 {
		t.Fatalf("nothing merged: %+v", c)
	}
	paths, _ := filepath.Glob(filepath.Join(root, "traces", "*", "*", "*", "*.parquet"))
	if len(paths) != 1 {
		t.Fatalf("%d files after compaction: %v", len(paths), paths)
	}
	var got []string
	for _, s := range readV2[v2Span](t, root, "traces") {
		got = append(got, s.text())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("rows differ\n%s", diffLines(got, want))
	}
}
