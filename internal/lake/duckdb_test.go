package lake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestDuckDBReadsLake writes a lake and reads it with DuckDB and pyarrow
// (testdata/lakecheck.py): row counts, a GROUP BY resource_service_name,
// a trace_id lookup, the hive partition columns, and one attribute of each
// type with its SQL and Arrow type. `make test` installs duckdb and
// pyarrow into a venv under ./bin and points WIREHOUSE_PYTHON at its
// interpreter; a plain `go test` without it skips this test.
func TestDuckDBReadsLake(t *testing.T) {
	python := os.Getenv("WIREHOUSE_PYTHON")
	if python == "" {
		t.Skip("WIREHOUSE_PYTHON not set; `make test` installs duckdb and pyarrow in a venv and sets it")
	}
	root := t.TempDir()
	cfg := DefaultWriterConfig()
	cfg.Dir, cfg.FileSize = root, 256<<10 // several files per partition
	cfg.SchemaVersion = 1                 // lakecheck.py reads version 1's columns
	w, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantService := map[string]int{}
	wantLogs := 0
	for i := range 8 {
		body := synth.SeedLogs(synth.Config{Seed: int64(i), Resources: 3, ScopesPerResource: 2, TotalRecords: 500})
		n, err := w.Append(otlpwire.SignalLogs, []string{"acme", "globex"}[i%2], body)
		if err != nil {
			t.Fatal(err)
		}
		wantLogs += n
		countServices(t, body, wantService)
	}
	typed := typedLogs(t)
	if _, err := w.Append(otlpwire.SignalLogs, "acme", typed); err != nil {
		t.Fatal(err)
	}
	wantLogs++
	wantService["typed"]++
	traces := synth.Traces(synth.Config{Seed: 9, Resources: 2, ScopesPerResource: 2, TotalRecords: 600})
	nspans, err := w.Append(otlpwire.SignalTraces, "acme", traces)
	if err != nil {
		t.Fatal(err)
	}
	treq := ptraceotlp.NewExportRequest()
	if err := treq.UnmarshalProto(traces); err != nil {
		t.Fatal(err)
	}
	first := treq.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	wantOfTrace := 0
	rss := treq.Traces().ResourceSpans()
	for i := range rss.Len() {
		for j := range rss.At(i).ScopeSpans().Len() {
			spans := rss.At(i).ScopeSpans().At(j).Spans()
			for k := range spans.Len() {
				if spans.At(k).TraceID() == first {
					wantOfTrace++
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Files < 4 {
		t.Fatalf("only %d files; the test wants several per partition", st.Files)
	}

	cmd := exec.Command(python, filepath.Join("testdata", "lakecheck.py"), root, first.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lakecheck.py: %v\n%s", err, stderr.String())
	}
	type cell struct {
		Value any    `json:"value"`
		Type  string `json:"type"`
	}
	var got struct {
		DuckDB       string          `json:"duckdb_version"`
		Logs         int             `json:"logs"`
		Traces       int             `json:"traces"`
		ByService    map[string]int  `json:"by_service"`
		Tenants      []string        `json:"tenants"`
		SpansOfTrace int             `json:"spans_of_trace"`
		DuckDBTyped  map[string]cell `json:"duckdb_typed"`
		ArrowLogs    int             `json:"arrow_logs"`
		ArrowTyped   map[string]cell `json:"arrow_typed"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("lakecheck.py output %q: %v", out, err)
	}
	t.Logf("DuckDB %s read %d logs, %d spans", got.DuckDB, got.Logs, got.Traces)
	if got.Logs != wantLogs || got.ArrowLogs != wantLogs {
		t.Errorf("logs: DuckDB %d, pyarrow %d, want %d", got.Logs, got.ArrowLogs, wantLogs)
	}
	if got.Traces != nspans {
		t.Errorf("spans: DuckDB %d, want %d", got.Traces, nspans)
	}
	if fmt.Sprint(got.ByService) != fmt.Sprint(wantService) {
		t.Errorf("GROUP BY resource_service_name:\n got  %v\n want %v", got.ByService, wantService)
	}
	if fmt.Sprint(got.Tenants) != "[acme globex]" {
		t.Errorf("tenant partition values %v, want [acme globex]", got.Tenants)
	}
	if got.SpansOfTrace != wantOfTrace {
		t.Errorf("spans of trace %s: %d, want %d", first, got.SpansOfTrace, wantOfTrace)
	}
	// The values put into typedLogs, as each reader shows them.
	wantDuck := map[string]cell{
		"attr_t_str":    {"héllo", "VARCHAR"},
		"attr_t_int":    {float64(-7), "BIGINT"},
		"attr_t_double": {2.5, "DOUBLE"},
		"attr_t_bool":   {true, "BOOLEAN"},
		"attr_t_bytes":  {"01ff", "BLOB"},
		"attr_t_array":  {`[1,"a"]`, "VARCHAR"},
		"attr_t_map":    {`{"k":true}`, "VARCHAR"},
	}
	wantArrow := map[string]cell{
		"attr_t_str":    {"héllo", "string"},
		"attr_t_int":    {float64(-7), "int64"},
		"attr_t_double": {2.5, "double"},
		"attr_t_bool":   {true, "bool"},
		"attr_t_bytes":  {"01ff", "binary"},
		"attr_t_array":  {`[1,"a"]`, "string"},
		"attr_t_map":    {`{"k":true}`, "string"},
	}
	if fmt.Sprint(got.DuckDBTyped) != fmt.Sprint(wantDuck) {
		t.Errorf("DuckDB typed attributes:\n got  %v\n want %v", got.DuckDBTyped, wantDuck)
	}
	if fmt.Sprint(got.ArrowTyped) != fmt.Sprint(wantArrow) {
		t.Errorf("pyarrow typed attributes:\n got  %v\n want %v", got.ArrowTyped, wantArrow)
	}
}

// countServices adds the records of a logs request per service.name.
func countServices(t *testing.T, body []byte, dst map[string]int) {
	t.Helper()
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	rls := req.Logs().ResourceLogs()
	for i := range rls.Len() {
		svc := "<null>"
		if v, ok := rls.At(i).Resource().Attributes().Get("service.name"); ok {
			svc = v.Str()
		}
		for j := range rls.At(i).ScopeLogs().Len() {
			dst[svc] += rls.At(i).ScopeLogs().At(j).LogRecords().Len()
		}
	}
}

// typedLogs is one log of service "typed" with one attribute of each kind.
func typedLogs(t *testing.T) []byte {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "typed")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)))
	lr.Body().SetStr("typed values")
	a := lr.Attributes()
	a.PutStr("t.str", "héllo")
	a.PutInt("t.int", -7)
	a.PutDouble("t.double", 2.5)
	a.PutBool("t.bool", true)
	a.PutEmptyBytes("t.bytes").FromRaw([]byte{0x01, 0xff})
	arr := a.PutEmptySlice("t.array")
	arr.AppendEmpty().SetInt(1)
	arr.AppendEmpty().SetStr("a")
	a.PutEmptyMap("t.map").PutBool("k", true)
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDuckDBReadsLakeV2: DuckDB and pyarrow read a lake of schema version
// 2 as one table per signal, without union_by_name: times as timestamps,
// kinds by name, events and links as lists of structs, attributes as a
// map (and resource attributes as JSON), one span's every kind of field
// as sent. WIREHOUSE_PYTHON as for TestDuckDBReadsLake.
func TestDuckDBReadsLakeV2(t *testing.T) {
	python := os.Getenv("WIREHOUSE_PYTHON")
	if python == "" {
		t.Skip("WIREHOUSE_PYTHON not set; `make test` installs duckdb and pyarrow in a venv and sets it")
	}
	root := t.TempDir()
	cfg := DefaultWriterConfig()
	cfg.Dir, cfg.FileSize = root, 256<<10 // several files per partition
	w, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantService := map[string]int{}
	nspans := 0
	var first pcommon.TraceID
	for i := range 6 {
		body := synth.Traces(synth.Config{Seed: int64(i), Resources: 3, ScopesPerResource: 2, TotalRecords: 2000})
		n, err := w.Append(otlpwire.SignalTraces, "acme", body)
		if err != nil {
			t.Fatal(err)
		}
		nspans += n
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.Traces().ResourceSpans().All() {
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for _, ss := range rs.ScopeSpans().All() {
				wantService[svc.Str()] += ss.Spans().Len()
				if i == 0 && first.IsEmpty() && ss.Spans().Len() > 0 {
					first = ss.Spans().At(0).TraceID()
				}
			}
		}
	}
	typed := typedSpan(t)
	if _, err := w.Append(otlpwire.SignalTraces, "acme", typed); err != nil {
		t.Fatal(err)
	}
	wantService["typed"]++
	nspans++
	logs := synth.Logs(synth.Config{Seed: 9, Resources: 2, ScopesPerResource: 1, TotalRecords: 300})
	nlogs, err := w.Append(otlpwire.SignalLogs, "acme", logs)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st := w.Stats(); st.Files < 4 {
		t.Fatalf("only %d files; the test wants several", st.Files)
	}
	wantOfTrace := 0
	for i := range 6 {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(synth.Traces(synth.Config{Seed: int64(i), Resources: 3, ScopesPerResource: 2, TotalRecords: 2000})); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.Traces().ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if sp.TraceID() == first {
						wantOfTrace++
					}
				}
			}
		}
	}

	cmd := exec.Command(python, filepath.Join("testdata", "lakecheck_v2.py"), root, first.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lakecheck_v2.py: %v\n%s", err, stderr.String())
	}
	var got struct {
		DuckDB       string            `json:"duckdb_version"`
		Logs         int               `json:"logs"`
		Traces       int               `json:"traces"`
		ByService    map[string]int    `json:"by_service"`
		SpansOfTrace int               `json:"spans_of_trace"`
		Types        map[string]string `json:"types"`
		LogTypes     map[string]string `json:"log_types"`
		Typed        []string          `json:"typed"`
		ArrowTraces  int               `json:"arrow_traces"`
		ArrowTypes   map[string]string `json:"arrow_types"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("lakecheck_v2.py output %q: %v", out, err)
	}
	t.Logf("DuckDB %s read %d logs, %d spans; pyarrow %d spans", got.DuckDB, got.Logs, got.Traces, got.ArrowTraces)
	if got.Logs != nlogs || got.Traces != nspans || got.ArrowTraces != nspans {
		t.Errorf("DuckDB read %d logs, %d spans, pyarrow %d spans; want %d logs, %d spans", got.Logs, got.Traces, got.ArrowTraces, nlogs, nspans)
	}
	if fmt.Sprint(got.ByService) != fmt.Sprint(wantService) {
		t.Errorf("GROUP BY service_name:\n got  %v\n want %v", got.ByService, wantService)
	}
	if got.SpansOfTrace != wantOfTrace {
		t.Errorf("spans of trace %s: %d, want %d", first, got.SpansOfTrace, wantOfTrace)
	}
	mapType := "MAP(VARCHAR, VARCHAR)"
	wantTypes := map[string]string{
		"start_time": "TIMESTAMPTZ_NS", "duration": "BIGINT", "kind": "VARCHAR", "status_code": "VARCHAR",
		"events":     "STRUCT(attribute_types VARCHAR, attributes " + mapType + ", dropped_attributes_count UINTEGER, \"name\" VARCHAR, \"time\" TIMESTAMPTZ_NS)[]",
		"links":      "STRUCT(attribute_types VARCHAR, attributes " + mapType + ", dropped_attributes_count UINTEGER, flags UINTEGER, span_id VARCHAR, trace_id VARCHAR, trace_state VARCHAR)[]",
		"attributes": mapType, "resource_attributes": "JSON", "attr_http_response_status_code": "BIGINT",
	}
	if fmt.Sprint(got.Types) != fmt.Sprint(wantTypes) {
		t.Errorf("DuckDB types:\n got  %v\n want %v", got.Types, wantTypes)
	}
	if want := map[string]string{"timestamp": "TIMESTAMPTZ_NS", "attributes": mapType, "body": "VARCHAR"}; fmt.Sprint(got.LogTypes) != fmt.Sprint(want) {
		t.Errorf("DuckDB log types:\n got  %v\n want %v", got.LogTypes, want)
	}
	// typedSpan's fields, as DuckDB shows them.
	wantTyped := []string{"SPAN_KIND_SERVER", "STATUS_CODE_ERROR", "1795428000000000123", "héllo", "-7", `{"k":true}`,
		"node-1", "2", "boot", "1795428000000000456", "2.5", "0102030405060708090a0b0c0d0e0f10", "true", "POST", "503",
		"https://opentelemetry.io/schemas/1.30.0"}
	if fmt.Sprint(got.Typed) != fmt.Sprint(wantTyped) {
		t.Errorf("DuckDB typed span:\n got  %q\n want %q", got.Typed, wantTyped)
	}
	wantArrow := map[string]string{
		"start_time": "timestamp[ns, tz=UTC]", "kind": "string",
		"events":              "list<element: struct<attribute_types: string not null, attributes: map<string, string ('attributes')> not null, dropped_attributes_count: uint32 not null, name: string not null, time: timestamp[ns, tz=UTC] not null> not null>",
		"attributes":          "map<string, string ('attributes')>",
		"resource_attributes": "string",
	}
	if fmt.Sprint(got.ArrowTypes) != fmt.Sprint(wantArrow) {
		t.Errorf("pyarrow types:\n got  %v\n want %v", got.ArrowTypes, wantArrow)
	}
}

// typedSpan is one span of service "typed" with a field of every kind.
func typedSpan(t *testing.T) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "typed")
	rs.Resource().Attributes().PutStr("host.name", "node-1")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.SetSchemaUrl("https://opentelemetry.io/schemas/1.30.0")
	sp := ss.Spans().AppendEmpty()
	start := time.Date(2026, 11, 23, 10, 0, 0, 123, time.UTC)
	sp.SetName("typed")
	sp.SetTraceID([16]byte{9})
	sp.SetKind(ptrace.SpanKindServer)
	sp.Status().SetCode(ptrace.StatusCodeError)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
	a := sp.Attributes()
	a.PutStr("t.str", "héllo")
	a.PutInt("t.int", -7)
	a.PutEmptyMap("t.map").PutBool("k", true)
	a.PutStr("http.request.method", "POST")
	a.PutInt("http.response.status_code", 503)
	ev := sp.Events().AppendEmpty()
	ev.SetName("boot")
	ev.SetTimestamp(pcommon.NewTimestampFromTime(start.Add(333)))
	ev.Attributes().PutDouble("e.k", 2.5)
	sp.Events().AppendEmpty().SetName("second")
	l := sp.Links().AppendEmpty()
	l.SetTraceID([16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	l.Attributes().PutBool("l.k", true)
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
