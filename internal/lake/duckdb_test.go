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
