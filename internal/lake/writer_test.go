package lake

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// lakeFile is a Parquet file read back with parquet-go.
type lakeFile struct {
	path    string
	names   []string // leaf column names by column index
	rows    []parquet.Row
	columns map[string]columnMeta // from "wirehouse.columns"
	file    *parquet.File
}

func (f *lakeFile) value(row parquet.Row, name string) (parquet.Value, bool) {
	for _, v := range row {
		if f.names[v.Column()] == name {
			return v, true
		}
	}
	return parquet.Value{}, false
}

// readLake reads every .parquet file under root, and fails on any other
// file but directories.
func readLake(t *testing.T, root string) []*lakeFile {
	t.Helper()
	var files []*lakeFile
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !strings.HasSuffix(p, ".parquet") || strings.HasPrefix(d.Name(), ".") {
			return fmt.Errorf("unexpected file %s", p)
		}
		files = append(files, readParquetFile(t, p))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func readParquetFile(t *testing.T, p string) *lakeFile {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	lf := &lakeFile{path: p, file: pf}
	for _, path := range pf.Schema().Columns() {
		lf.names = append(lf.names, path[0])
	}
	meta, ok := pf.Lookup("wirehouse.columns")
	if _, v2 := pf.Lookup(SchemaVersionKey); !ok && v2 {
		meta = "{}" // version 2 names no columns
	} else if !ok {
		t.Fatalf("%s: no wirehouse.columns metadata", p)
	}
	if err := json.Unmarshal([]byte(meta), &lf.columns); err != nil {
		t.Fatalf("%s: wirehouse.columns: %v", p, err)
	}
	r := parquet.NewReader(bytes.NewReader(b))
	buf := make([]parquet.Row, 128)
	for {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			lf.rows = append(lf.rows, row.Clone())
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	if int64(len(lf.rows)) != pf.NumRows() {
		t.Fatalf("%s: read %d rows, footer says %d", p, len(lf.rows), pf.NumRows())
	}
	return lf
}

// cellText renders a Parquet value for comparison; null is "null".
func cellText(v parquet.Value) string {
	if v.IsNull() {
		return "null"
	}
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean())
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Double:
		return "f" + strconv.FormatUint(math.Float64bits(v.Double()), 16)
	}
	return strconv.Quote(string(v.ByteArray()))
}

// expectCell is how a pdata attribute value should read back from a
// column of type typ ("string" when the column's types conflicted). The
// conversions are written from the documented rules, not from appendText.
func expectCell(v pcommon.Value, typ string) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return strconv.Quote(v.Str())
	case pcommon.ValueTypeInt:
		if typ == "string" {
			return strconv.Quote(strconv.FormatInt(v.Int(), 10))
		}
		return strconv.FormatInt(v.Int(), 10)
	case pcommon.ValueTypeDouble:
		if typ == "string" {
			return strconv.Quote(strconv.FormatFloat(v.Double(), 'g', -1, 64))
		}
		return "f" + strconv.FormatUint(math.Float64bits(v.Double()), 16)
	case pcommon.ValueTypeBool:
		if typ == "string" {
			return strconv.Quote(strconv.FormatBool(v.Bool()))
		}
		return strconv.FormatBool(v.Bool())
	case pcommon.ValueTypeBytes:
		if typ == "string" {
			return strconv.Quote(base64.StdEncoding.EncodeToString(v.Bytes().AsRaw()))
		}
		return strconv.Quote(string(v.Bytes().AsRaw()))
	}
	return strconv.Quote(pdataJSON(v))
}

// attrCells renders the dynamic columns of one parquet row as
// "origin/key=value" (nulls omitted), sorted.
func (f *lakeFile) attrCells(row parquet.Row) []string {
	var out []string
	for _, v := range row {
		name := f.names[v.Column()]
		m, ok := f.columns[name]
		if !ok || v.IsNull() {
			continue
		}
		out = append(out, m.Origin+"/"+m.Key+"="+cellText(v))
	}
	slices.Sort(out)
	return out
}

// expectAttrCells renders pdata attributes the way attrCells renders the
// columns: first occurrence of each key, empty values omitted, typed by
// the file's column type for that key.
func expectAttrCells(dst []string, f *lakeFile, origin string, m pcommon.Map) []string {
	seen := map[string]bool{}
	m.Range(func(k string, v pcommon.Value) bool {
		if seen[k] || v.Type() == pcommon.ValueTypeEmpty {
			seen[k] = true
			return true
		}
		seen[k] = true
		typ := ""
		for _, c := range f.columns {
			if c.Origin == origin && c.Key == k {
				typ = c.Type
			}
		}
		dst = append(dst, origin+"/"+k+"="+expectCell(v, typ))
		return true
	})
	return dst
}

func hexID(b []byte) string {
	if len(b) == 0 {
		return "null"
	}
	return strconv.Quote(fmt.Sprintf("%x", b))
}

// logRowText renders one parquet logs row, fixed columns then attributes.
func (f *lakeFile) logRowText(t *testing.T, row parquet.Row) string {
	var b strings.Builder
	for _, name := range []string{"timestamp", "observed_timestamp", "severity_number", "severity_text", "body", "trace_id", "span_id", "flags", "event_name", "scope_name", "scope_version", "dropped_attributes_count"} {
		v, ok := f.value(row, name)
		if !ok {
			t.Fatalf("%s: no column %s", f.path, name)
		}
		fmt.Fprintf(&b, "%s=%s ", name, cellText(v))
	}
	fmt.Fprint(&b, f.attrCells(row))
	return b.String()
}

// expectLogRow renders what a pdata log record should read back as.
func expectLogRow(f *lakeFile, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) string {
	var b strings.Builder
	body := "null"
	switch lr.Body().Type() {
	case pcommon.ValueTypeEmpty:
	case pcommon.ValueTypeStr:
		body = strconv.Quote(lr.Body().Str())
	default:
		body = strconv.Quote(pdataJSON(lr.Body()))
	}
	tid, sid := lr.TraceID(), lr.SpanID()
	var tb, sb []byte
	if !tid.IsEmpty() {
		tb = tid[:]
	}
	if !sid.IsEmpty() {
		sb = sid[:]
	}
	fmt.Fprintf(&b, "timestamp=%d observed_timestamp=%d severity_number=%d severity_text=%q body=%s trace_id=%s span_id=%s flags=%d event_name=%q scope_name=%q scope_version=%q dropped_attributes_count=%d ",
		int64(lr.Timestamp()), int64(lr.ObservedTimestamp()), int32(lr.SeverityNumber()), lr.SeverityText(), body, hexID(tb), hexID(sb),
		int32(lr.Flags()), lr.EventName(), sl.Scope().Name(), sl.Scope().Version(), int32(lr.DroppedAttributesCount()))
	var cells []string
	cells = expectAttrCells(cells, f, "resource", rl.Resource().Attributes())
	cells = expectAttrCells(cells, f, "scope", sl.Scope().Attributes())
	cells = expectAttrCells(cells, f, "record", lr.Attributes())
	slices.Sort(cells)
	fmt.Fprint(&b, cells)
	return b.String()
}

// TestLogsParquetRoundTrip writes randomized requests (every AnyValue
// kind, missing fields, both field orders, colliding and conflicting keys)
// and realistic ones (synth.Logs, synth.SeedLogs) through a Writer and reads every file back: each record of pdata's view
// of the input is a row of exactly one file, field for field.
func TestLogsParquetRoundTrip(t *testing.T) {
	for seed := range uint64(30) {
		for _, order := range []synth.Order{synth.Ascending, synth.Descending} {
			root := t.TempDir()
			w := newTestWriter(t, testConfig(root))
			var reqs [][]byte
			for i := range uint64(3) {
				reqs = append(reqs, synth.Random(rand.New(rand.NewPCG(seed, i)), otlpwire.SignalLogs, order))
			}
			cfg := synth.Config{Seed: int64(seed), Order: order, Resources: 2, ScopesPerResource: 2, TotalRecords: 40}
			reqs = append(reqs, synth.Logs(cfg), synth.SeedLogs(cfg))
			if _, err := w.Append(otlpwire.SignalLogs, "t1", reqs...); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files := readLake(t, root)
			// Which file holds each row is the writer's choice; compare the
			// multiset of rows, each rendered with its own file's types.
			var got, want []string
			for _, f := range files {
				for _, row := range f.rows {
					got = append(got, f.logRowText(t, row))
				}
				checkSorted(t, f, "timestamp")
			}
			for _, body := range reqs {
				req := plogotlp.NewExportRequest()
				if err := req.UnmarshalProto(body); err != nil {
					t.Fatal(err)
				}
				rls := req.Logs().ResourceLogs()
				for i := range rls.Len() {
					for j := range rls.At(i).ScopeLogs().Len() {
						sl := rls.At(i).ScopeLogs().At(j)
						for k := range sl.LogRecords().Len() {
							lr := sl.LogRecords().At(k)
							f := fileFor(t, files, expectHour(int64(lr.Timestamp()), int64(lr.ObservedTimestamp())))
							want = append(want, expectLogRow(f, rls.At(i), sl, lr))
						}
					}
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d order %d: rows differ\n%s", seed, order, diffLines(got, want))
			}
		}
	}
}

// testNow is the writer's clock in tests: the partition of records
// without a usable time.
var testNow = time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)

// expectHour is the documented partition rule: the first of the times that
// is after 1970 and before 2100, else the writer's clock.
func expectHour(times ...int64) time.Time {
	for _, ns := range times {
		if ns > 0 && ns < time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano() {
			return time.Unix(0, ns).UTC().Truncate(time.Hour)
		}
	}
	return testNow.Truncate(time.Hour)
}

// fileFor returns the one file of the hour's partition.
func fileFor(t *testing.T, files []*lakeFile, hour time.Time) *lakeFile {
	t.Helper()
	part := filepath.Join("date="+hour.Format("2006-01-02"), fmt.Sprintf("hour=%02d", hour.Hour()))
	var found *lakeFile
	for _, f := range files {
		if strings.Contains(f.path, string(filepath.Separator)+part+string(filepath.Separator)) {
			if found != nil {
				t.Fatalf("two files in partition %s", part)
			}
			found = f
		}
	}
	if found == nil {
		t.Fatalf("no file in partition %s", part)
	}
	return found
}

// checkSorted checks the rows of a file are in (service name, time) order
// and that the footer says so.
func checkSorted(t *testing.T, f *lakeFile, timeCol string) {
	t.Helper()
	type key struct {
		svc  string
		null bool
		ts   int64
	}
	var prev *key
	for i, row := range f.rows {
		var k key
		if v, ok := f.value(row, serviceColumn); ok && !v.IsNull() {
			k.svc = string(v.ByteArray())
		}
		v, _ := f.value(row, timeCol)
		k.ts = v.Int64()
		if prev != nil && (k.svc < prev.svc || k.svc == prev.svc && k.ts < prev.ts) {
			t.Fatalf("%s: row %d (%q, %d) sorts before row %d (%q, %d)", f.path, i, k.svc, k.ts, i-1, prev.svc, prev.ts)
		}
		prev = &k
	}
	for _, rg := range f.file.RowGroups() {
		sc := rg.SortingColumns()
		if len(sc) == 0 || sc[len(sc)-1].Path()[0] != timeCol {
			t.Fatalf("%s: sorting_columns %v, want ... %s", f.path, sc, timeCol)
		}
	}
}

// diffLines shows the first lines that differ between two sorted lists.
func diffLines(got, want []string) string {
	var b strings.Builder
	n := 0
	for _, g := range got {
		if !slices.Contains(want, g) && n < 3 {
			fmt.Fprintf(&b, "only got:  %s\n", g)
			n++
		}
	}
	n = 0
	for _, w := range want {
		if !slices.Contains(got, w) && n < 3 {
			fmt.Fprintf(&b, "only want: %s\n", w)
			n++
		}
	}
	fmt.Fprintf(&b, "%d rows, want %d", len(got), len(want))
	return b.String()
}

// testConfig is the default config of a lake in root, on testNow's clock,
// writing schema version 1, whose layout (one column per attribute key,
// JSON events and links) the tests of this file read back; schema_v2_test.go
// tests version 2.
func testConfig(root string) WriterConfig {
	cfg := DefaultWriterConfig()
	cfg.Dir, cfg.Clock, cfg.SchemaVersion = root, func() time.Time { return testNow }, 1
	return cfg
}

// newTestWriter is a Writer of cfg that skips fsync.
func newTestWriter(t *testing.T, cfg WriterConfig) *Writer {
	t.Helper()
	w, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.cfg.noSync = true
	return w
}

// TestCollisionsAndConflicts: keys that normalize to one name, or to a
// fixed column's name, keep their values in deterministic columns named in
// the metadata; a key whose values have several types in one file becomes
// a string column.
func TestCollisionsAndConflicts(t *testing.T) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("Service.Name", "upper")
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	rl.Resource().Attributes().PutStr("_x", "resource")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("lib")
	sl.Scope().Attributes().PutStr("name", "scope-attr")
	values := []func(pcommon.Value){
		func(v pcommon.Value) { v.SetInt(-42) },
		func(v pcommon.Value) { v.SetStr("text") },
		func(v pcommon.Value) { v.SetDouble(0.1) },
		func(v pcommon.Value) { v.SetBool(true) },
		func(v pcommon.Value) { v.SetEmptyBytes().FromRaw([]byte{0xff, 0}) },
		func(v pcommon.Value) { v.SetEmptySlice().AppendEmpty().SetInt(1) },
	}
	for i, set := range values {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(testNow.UnixNano() + int64(i)))
		lr.Attributes().PutStr("http_method", "POST")
		lr.Attributes().PutStr("http.method", "GET")
		lr.Attributes().PutInt("_x", int64(i))
		set(lr.Attributes().PutEmpty("v"))
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	w := newTestWriter(t, testConfig(root))
	if _, err := w.Append(otlpwire.SignalLogs, "default", body); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := readLake(t, root)
	if len(files) != 1 {
		t.Fatalf("%d files, want 1", len(files))
	}
	f := files[0]
	wantCols := map[string]columnMeta{
		"resource_service_name":   {"resource", "service.name", "string"},
		"resource_service_name_2": {"resource", "Service.Name", "string"},
		"_x":                      {"resource", "_x", "string"},
		"_x_2":                    {"record", "_x", "int64"},
		"scope_name_2":            {"scope", "name", "string"},
		"attr_http_method":        {"record", "http.method", "string"},
		"attr_http_method_2":      {"record", "http_method", "string"},
		"attr_v":                  {"record", "v", "string"},
	}
	if fmt.Sprint(f.columns) != fmt.Sprint(wantCols) {
		t.Errorf("columns metadata:\n got  %v\n want %v", f.columns, wantCols)
	}
	wantV := []string{`"-42"`, `"text"`, `"0.1"`, `"true"`, `"/wA="`, `"[1]"`}
	for i, row := range f.rows {
		if v, _ := f.value(row, "attr_v"); cellText(v) != wantV[i] {
			t.Errorf("row %d attr_v = %s, want %s", i, cellText(v), wantV[i])
		}
		for name, want := range map[string]string{"scope_name": `"lib"`, "scope_name_2": `"scope-attr"`, "attr_http_method": `"GET"`, "attr_http_method_2": `"POST"`, "_x": `"resource"`, "_x_2": strconv.Itoa(i), "resource_service_name": `"checkout"`} {
			if v, _ := f.value(row, name); cellText(v) != want {
				t.Errorf("row %d %s = %s, want %s", i, name, cellText(v), want)
			}
		}
	}
	checkSorted(t, f, "timestamp")
	checkEncoding(t, f, "timestamp", testNow.UnixNano(), testNow.UnixNano()+int64(len(values)-1))
	sc := f.file.RowGroups()[0].SortingColumns()
	if len(sc) != 2 || sc[0].Path()[0] != serviceColumn || !sc[0].NullsFirst() {
		t.Errorf("sorting columns %v, want %s (nulls first), timestamp", sc, serviceColumn)
	}
}

// TestWriterPartitionsAndRotation: files land in
// <root>/<signal>/tenant=<t>/date=/hour=/ by record time; a batch is
// written when it reaches the file size or the max age; nothing but
// complete .parquet files is left.
func TestWriterPartitionsAndRotation(t *testing.T) {
	root := t.TempDir()
	now := testNow
	cfg := testConfig(root)
	cfg.FileSize, cfg.MaxAge, cfg.Clock = 64<<10, time.Minute, func() time.Time { return now }
	w := newTestWriter(t, cfg)
	total := 0
	for i := range 40 {
		body := synth.SeedLogs(synth.Config{Seed: int64(i), Resources: 2, ScopesPerResource: 1, TotalRecords: 200})
		n, err := w.Append(otlpwire.SignalLogs, "acme", body)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if st := w.Stats(); st.Files < 3 {
		t.Errorf("%d files after %d rows with a 64 KiB file size; want rotation", st.Files, total)
	}
	// Age: a small batch is written at the next Append after the max age,
	// or by FlushOld.
	before := w.Stats().Rows
	tb := synth.Traces(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 10})
	if _, err := w.Append(otlpwire.SignalTraces, "acme", tb); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushOld(); err != nil {
		t.Fatal(err)
	}
	if got := w.Stats().Rows; got != before {
		t.Fatalf("FlushOld wrote a batch younger than the max age: rows %d -> %d", before, got)
	}
	now = now.Add(time.Minute)
	if err := w.FlushOld(); err != nil {
		t.Fatal(err)
	}
	if got := w.Stats().Rows; got < before+10 {
		t.Fatalf("FlushOld did not write the old traces batch: rows %d -> %d", before, got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(otlpwire.SignalLogs, "acme", tb); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	files := readLake(t, root)
	rows := map[string]int{}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f.path)
		parts := strings.Split(rel, string(filepath.Separator))
		if len(parts) != 5 || parts[1] != "tenant=acme" || !strings.HasPrefix(parts[2], "date=") || !strings.HasPrefix(parts[3], "hour=") {
			t.Fatalf("file %s not in <signal>/tenant=/date=/hour=/", rel)
		}
		rows[parts[0]] += len(f.rows)
		// Every row's time is in its file's partition hour.
		col := map[string]string{"logs": "timestamp", "traces": "start_time"}[parts[0]]
		for _, row := range f.rows {
			v, _ := f.value(row, col)
			o, _ := f.value(row, "observed_timestamp") // a Value whose Int64 is 0 for spans
			h := expectHour(v.Int64(), o.Int64())
			if want := filepath.Join("date="+h.Format("2006-01-02"), fmt.Sprintf("hour=%02d", h.Hour())); filepath.Join(parts[2], parts[3]) != want {
				t.Fatalf("%s: row at %v outside its partition", rel, h)
			}
		}
	}
	if rows["logs"] != total || rows["traces"] != 10 {
		t.Fatalf("rows read back %v, want logs %d traces 10", rows, total)
	}
}

// TestWriterAppendAllOrNothing: one malformed request refuses the whole
// call, and the rows of earlier calls are still written.
func TestWriterAppendAllOrNothing(t *testing.T) {
	root := t.TempDir()
	w := newTestWriter(t, testConfig(root))
	good := synth.Logs(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 50})
	if _, err := w.Append(otlpwire.SignalLogs, "t", good); err != nil {
		t.Fatal(err)
	}
	bad := good[:len(good)-3]
	_, err := w.Append(otlpwire.SignalLogs, "t", good, bad)
	var ae *AppendError
	if !errors.As(err, &ae) || ae.Index != 1 {
		t.Fatalf("Append with a truncated second request: %v, want *AppendError at index 1", err)
	}
	var we *otlpwire.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v does not carry an *otlpwire.Error", err)
	}
	for _, tenant := range []string{"", "..", "a/b", "x y", strings.Repeat("a", 129)} {
		if _, err := w.Append(otlpwire.SignalLogs, tenant, good); err == nil {
			t.Errorf("tenant %q accepted", tenant)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range readLake(t, root) {
		n += len(f.rows)
	}
	if n != 50 {
		t.Fatalf("%d rows written, want the 50 of the first call", n)
	}
}

// TestWriterFailedWriteKeepsRows: when a file cannot be written, no
// partial file is visible and the rows stay buffered for the next flush.
func TestWriterFailedWriteKeepsRows(t *testing.T) {
	root := t.TempDir()
	w := newTestWriter(t, testConfig(root))
	body := synth.Logs(synth.Config{Seed: 2, Resources: 1, ScopesPerResource: 1, TotalRecords: 30})
	if _, err := w.Append(otlpwire.SignalLogs, "t", body); err != nil {
		t.Fatal(err)
	}
	// A file where the signal directory should be makes the write fail.
	if err := os.WriteFile(filepath.Join(root, "logs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err == nil {
		t.Fatal("Flush succeeded with the signal directory blocked")
	}
	if err := os.Remove(filepath.Join(root, "logs")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range readLake(t, root) {
		n += len(f.rows)
	}
	if n != 30 {
		t.Fatalf("%d rows after a failed then a good flush, want 30", n)
	}
}

// spanRowText renders one parquet traces row, fixed columns then
// attributes.
func (f *lakeFile) spanRowText(t *testing.T, row parquet.Row) string {
	var b strings.Builder
	for _, name := range []string{"trace_id", "span_id", "parent_span_id", "trace_state", "name", "kind", "start_time", "end_time", "duration", "status_code", "status_message", "events", "links", "flags", "dropped_attributes_count", "dropped_events_count", "dropped_links_count", "scope_name", "scope_version"} {
		v, ok := f.value(row, name)
		if !ok {
			t.Fatalf("%s: no column %s", f.path, name)
		}
		fmt.Fprintf(&b, "%s=%s ", name, cellText(v))
	}
	fmt.Fprint(&b, f.attrCells(row))
	return b.String()
}

func expectSpanRow(f *lakeFile, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) string {
	var b strings.Builder
	id := func(s string) string {
		if s == "" {
			return "null"
		}
		return strconv.Quote(s)
	}
	fmt.Fprintf(&b, "trace_id=%s span_id=%s parent_span_id=%s trace_state=%q name=%q kind=%d start_time=%d end_time=%d duration=%d status_code=%d status_message=%q events=%q links=%q flags=%d dropped_attributes_count=%d dropped_events_count=%d dropped_links_count=%d scope_name=%q scope_version=%q ",
		id(sp.TraceID().String()), id(sp.SpanID().String()), id(sp.ParentSpanID().String()), sp.TraceState().AsRaw(), sp.Name(), int32(sp.Kind()),
		int64(sp.StartTimestamp()), int64(sp.EndTimestamp()), int64(sp.EndTimestamp())-int64(sp.StartTimestamp()),
		int32(sp.Status().Code()), sp.Status().Message(), expectEvents(sp.Events()), expectLinks(sp.Links()),
		int32(sp.Flags()), int32(sp.DroppedAttributesCount()), int32(sp.DroppedEventsCount()), int32(sp.DroppedLinksCount()),
		ss.Scope().Name(), ss.Scope().Version())
	var cells []string
	cells = expectAttrCells(cells, f, "resource", rs.Resource().Attributes())
	cells = expectAttrCells(cells, f, "scope", ss.Scope().Attributes())
	cells = expectAttrCells(cells, f, "record", sp.Attributes())
	slices.Sort(cells)
	fmt.Fprint(&b, cells)
	return b.String()
}

// TestSpansParquetRoundTrip is TestLogsParquetRoundTrip for spans, with a
// realistic synth.Traces request beside the random ones.
func TestSpansParquetRoundTrip(t *testing.T) {
	for seed := range uint64(30) {
		for _, order := range []synth.Order{synth.Ascending, synth.Descending} {
			root := t.TempDir()
			w := newTestWriter(t, testConfig(root))
			var reqs [][]byte
			for i := range uint64(3) {
				reqs = append(reqs, synth.Random(rand.New(rand.NewPCG(seed, i)), otlpwire.SignalTraces, order))
			}
			reqs = append(reqs, synth.Traces(synth.Config{Seed: int64(seed), Order: order, Resources: 2, ScopesPerResource: 2, TotalRecords: 40}))
			if _, err := w.Append(otlpwire.SignalTraces, "t1", reqs...); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files := readLake(t, root)
			var got, want []string
			for _, f := range files {
				for _, row := range f.rows {
					got = append(got, f.spanRowText(t, row))
				}
				checkSorted(t, f, "start_time")
			}
			for _, body := range reqs {
				req := ptraceotlp.NewExportRequest()
				if err := req.UnmarshalProto(body); err != nil {
					t.Fatal(err)
				}
				rss := req.Traces().ResourceSpans()
				for i := range rss.Len() {
					for j := range rss.At(i).ScopeSpans().Len() {
						ss := rss.At(i).ScopeSpans().At(j)
						for k := range ss.Spans().Len() {
							sp := ss.Spans().At(k)
							f := fileFor(t, files, expectHour(int64(sp.StartTimestamp())))
							want = append(want, expectSpanRow(f, rss.At(i), ss, sp))
						}
					}
				}
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d order %d: rows differ\n%s", seed, order, diffLines(got, want))
			}
		}
	}
}

// checkEncoding checks the file's layout: every column chunk zstd
// compressed; the time column's statistics are [minT, maxT]; trace_id has
// a bloom filter; resource_service_name is dictionary encoded, with
// statistics.
func checkEncoding(t *testing.T, f *lakeFile, timeCol string, minT, maxT int64) {
	t.Helper()
	md := f.file.Metadata()
	sawBloom, sawDict := false, false
	for _, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			m := cc.MetaData
			name := m.PathInSchema[0]
			if m.Codec != format.Zstd {
				t.Errorf("%s: codec %v, want ZSTD", name, m.Codec)
			}
			switch name {
			case timeCol:
				lo := int64(binary.LittleEndian.Uint64(m.Statistics.MinValue))
				hi := int64(binary.LittleEndian.Uint64(m.Statistics.MaxValue))
				if lo != minT || hi != maxT {
					t.Errorf("%s statistics [%d, %d], want [%d, %d]", name, lo, hi, minT, maxT)
				}
			case "trace_id":
				sawBloom = m.BloomFilterOffset > 0
			case serviceColumn:
				sawDict = slices.Contains(m.Encoding, format.RLEDictionary)
				if string(m.Statistics.MinValue) == "" || string(m.Statistics.MinValue) > string(m.Statistics.MaxValue) {
					t.Errorf("%s statistics [%q, %q]", name, m.Statistics.MinValue, m.Statistics.MaxValue)
				}
			}
		}
	}
	if !sawBloom {
		t.Error("trace_id has no bloom filter")
	}
	if !sawDict {
		t.Errorf("%s is not dictionary encoded", serviceColumn)
	}
}

// TestWriterManualFlush: with ManualFlush nothing is written until
// FlushAs; writing the same rows again under the same name replaces the
// files instead of adding rows; rows without a time go to the hour they
// were received; Close drops what is buffered.
func TestWriterManualFlush(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush, cfg.FileSize = true, 1<<10
	w := newTestWriter(t, cfg)
	body := synth.SeedLogs(synth.Config{Seed: 5, Resources: 2, ScopesPerResource: 1, TotalRecords: 300})
	// One record without any time, received at a known hour.
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("timeless")
	timeless, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	received := time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	write := func() {
		t.Helper()
		if _, err := w.AppendReceived(otlpwire.SignalLogs, "t", received, timeless, body); err != nil {
			t.Fatal(err)
		}
		if w.Stats().Files != 0 && !w.Due() {
			t.Fatal("Due is false for a batch past its file size")
		}
		if err := w.FlushAs("00000000000000000001-00000000000000000002"); err != nil {
			t.Fatal(err)
		}
	}
	write()
	first := w.Stats()
	if first.Files == 0 {
		t.Fatal("FlushAs wrote nothing")
	}
	write() // a replay of the same range
	if _, err := w.Append(otlpwire.SignalLogs, "t", body); err != nil {
		t.Fatal(err)
	}
	if w.Stats().Files != 2*first.Files {
		t.Fatalf("Append wrote a file in manual mode: %d files, want %d", w.Stats().Files, 2*first.Files)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := readLake(t, root)
	rows := 0
	for _, f := range files {
		rows += len(f.rows)
	}
	if want := logRecordCount(t, body) + 1; rows != want {
		t.Fatalf("%d rows in the lake after a replay and a dropped batch, want %d once", rows, want)
	}
	fileFor(t, files, received.Truncate(time.Hour)) // the timeless record's partition
	if err := w.FlushAs("../x"); err == nil {
		t.Error("FlushAs accepted a name with a slash")
	}
}

func logRecordCount(t *testing.T, b []byte) int {
	t.Helper()
	n, err := otlpwire.LogsRequest(b).LogRecordCount()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAppendDeprecatedScopes: a request with its scope containers in the
// deprecated field 1000 (old exporters' files, for ingest) yields every
// row, as after otlpwire.MigrateDeprecated.
func TestAppendDeprecatedScopes(t *testing.T) {
	w := newTestWriter(t, testConfig(t.TempDir()))
	defer w.Close()
	req := synth.SeedLogs(synth.Config{Seed: 1, Start: testNow, Resources: 2, ScopesPerResource: 2, TotalRecords: 30})
	var old []byte
	for rl, err := range otlpwire.LogsRequest(req).ResourceLogs() {
		if err != nil {
			t.Fatal(err)
		}
		var rc []byte
		if r, err := rl.Resource(); err != nil {
			t.Fatal(err)
		} else {
			rc = protowire.AppendBytes(protowire.AppendTag(rc, 1, protowire.BytesType), r)
		}
		for sl, err := range rl.ScopeLogs() {
			if err != nil {
				t.Fatal(err)
			}
			rc = protowire.AppendBytes(protowire.AppendTag(rc, 1000, protowire.BytesType), sl)
		}
		old = protowire.AppendBytes(protowire.AppendTag(old, 1, protowire.BytesType), rc)
	}
	n, err := w.Append(otlpwire.SignalLogs, "t", old)
	if err != nil || n != 30 {
		t.Fatalf("Append: %d rows, %v; want 30", n, err)
	}
}
