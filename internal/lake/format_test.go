package lake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/formatdoc"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// The pages of docs/format this package's tests hold to the code.
const (
	parquetPage    = "../../docs/format/lake-parquet.md"
	compactionPage = "../../docs/format/lake-compaction.md"
)

// TestFormatDocMatchesSchema holds docs/format/lake-parquet.md to the
// writer: the files a Writer writes (schema version 2, the default, and
// version 1), and those compaction writes of them, have exactly the
// columns the page's tables list, each with the physical type, logical
// type, repetition, encoding, compression, bloom filter and place in the
// sort the page gives; and the key-value metadata the page lists. A
// column added, renamed or retyped in the code fails here until the page
// says so too.
func TestFormatDocMatchesSchema(t *testing.T) {
	page := readPage(t, parquetPage)
	for _, v := range []int{1, 2, 3} {
		files := writeFormatFiles(t, v)
		for _, sig := range []string{"logs", "traces"} {
			for _, kind := range []string{"written", "merged"} {
				f, ok := files[sig+" "+kind]
				if !ok {
					t.Fatalf("version %d: no %s %s file", v, kind, sig)
				}
				t.Run(fmt.Sprintf("v%d/%s/%s", v, sig, kind), func(t *testing.T) {
					// Version 3 has the columns of version 2 and, in
					// logs files, key columns (which wirehouse.columns
					// names, as version 1's attribute columns).
					table := fmt.Sprintf("%s v%d", sig, min(v, 2))
					checkColumns(t, table, docTable(t, page, table), f)
					if v >= 2 {
						checkMetadata(t, docTable(t, page, fmt.Sprintf("metadata v%d", v)), sig, kind, f)
					} else if _, ok := f.kv[SchemaVersionKey]; ok {
						t.Errorf("a version-1 file has %s", SchemaVersionKey)
					}
				})
			}
		}
	}
}

// TestFormatDocNames holds the page's example object names to the
// layout's parser (ParseDataFile): each is data or not as the page says,
// of the signal, tenant, hour, node and spool records it gives.
func TestFormatDocNames(t *testing.T) {
	rows := docTable(t, readPage(t, parquetPage), "names")
	if len(rows) == 0 {
		t.Fatal("no example names")
	}
	for _, row := range rows {
		name := row["object"]
		f, ok := ParseDataFile(bucket.Attrs{Name: name})
		if want := row["data"] == "yes"; ok != want {
			t.Errorf("%s: ParseDataFile says data %v, the page %q", name, ok, row["data"])
			continue
		}
		if !ok {
			continue
		}
		got := map[string]string{
			"signal": f.Signal,
			"tenant": f.Tenant,
			"hour":   f.Hour.Format("2006-01-02T15"),
			"node":   f.Node,
			"first":  strconv.FormatUint(f.First, 10),
			"last":   strconv.FormatUint(f.Last, 10),
		}
		for k, v := range got {
			if row[k] != v {
				t.Errorf("%s: %s is %q, the page says %q", name, k, v, row[k])
			}
		}
	}
	// The writers' own names take those shapes.
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC).Unix() / 3600
	for _, name := range []string{
		partitionOf(otlpwire.SignalLogs, "acme", hour).object(parquetFile(RangeName(1, 42))),
		partitionOf(otlpwire.SignalTraces, "acme", hour).object(mergeName("node-a", 1, 42, 1)),
	} {
		found := false
		for _, row := range rows {
			found = found || row["object"] == name
		}
		if !found {
			t.Errorf("the page has no example %s", name)
		}
	}
}

// TestFormatDocCompactionIntent holds docs/format/lake-compaction.md to
// the intent compaction writes: its example decodes into intent with no
// field left over and encodes back to the same bytes, and the page names
// the file as intentFile does.
func TestFormatDocCompactionIntent(t *testing.T) {
	page := readPage(t, compactionPage)
	start := strings.Index(page, "```json\n")
	if start < 0 {
		t.Fatal("no ```json block in the page")
	}
	block, _, ok := strings.Cut(page[start+len("```json\n"):], "```")
	if !ok {
		t.Fatal("the ```json block does not end")
	}
	d := json.NewDecoder(strings.NewReader(block))
	d.DisallowUnknownFields()
	var in intent
	if err := d.Decode(&in); err != nil {
		t.Fatalf("the page's intent: %v", err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(block); string(b) != got {
		t.Errorf("the page's intent is\n%s\nthe code writes\n%s", got, b)
	}
	if !isRange(in.Output) || len(in.Inputs) == 0 {
		t.Errorf("the page's intent names output %q, inputs %q: not a merge's", in.Output, in.Inputs)
	}
	if !strings.Contains(page, "`"+intentFile+"`") {
		t.Errorf("the page does not name the intent file %s", intentFile)
	}
}

// readPage reads a page of docs/format.
func readPage(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docTable returns the rows of page's table name (formatdoc.Table).
func docTable(t *testing.T, page, name string) []map[string]string {
	t.Helper()
	rows, err := formatdoc.Table(page, name)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// parquetFacts is what a Parquet file says of its columns (each group
// and leaf, by dotted path, described as the page's tables do) and its
// key-value metadata.
type parquetFacts struct {
	name  string
	cols  map[string]map[string]string
	order []string // the paths, in the file's order
	kv    map[string]string
	dyn   map[string]bool // version 1: the attribute columns (wirehouse.columns)
}

// describeParquet reads a Parquet file's footer.
func describeParquet(t *testing.T, path string) parquetFacts {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	md := pf.Metadata()
	f := parquetFacts{name: filepath.Base(path), cols: map[string]map[string]string{}, kv: map[string]string{}, dyn: map[string]bool{}}
	for _, kv := range md.KeyValueMetadata {
		f.kv[kv.Key] = kv.Value
	}
	if v, ok := f.kv["wirehouse.columns"]; ok {
		var meta map[string]columnMeta
		if err := json.Unmarshal([]byte(v), &meta); err != nil {
			t.Fatalf("%s: wirehouse.columns: %v", path, err)
		}
		for name := range meta {
			f.dyn[name] = true
		}
	}
	if len(md.RowGroups) == 0 {
		t.Fatalf("%s: no row group", path)
	}
	rg := md.RowGroups[0]
	sortOf := map[int]int{} // leaf index → place in the sort, from 1
	for i, s := range rg.SortingColumns {
		if s.Descending || s.NullsFirst {
			sortOf[int(s.ColumnIdx)] = -(i + 1) // described below
		} else {
			sortOf[int(s.ColumnIdx)] = i + 1
		}
	}
	leaf := 0
	var walk func(i int, prefix string) int
	walk = func(i int, prefix string) int {
		e := md.Schema[i]
		path := prefix + e.Name
		c := map[string]string{"column": path, "repetition": repetition(e)}
		c["logical"] = logicalType(e.LogicalType)
		f.cols[path], f.order = c, append(f.order, path)
		if n, ok := e.NumChildren.Get(); ok && n > 0 {
			c["physical"], c["encoding"], c["compression"], c["bloom"], c["sort"] = "group", "—", "—", "", ""
			next := i + 1
			for range n {
				next = walk(next, path+".")
			}
			return next
		}
		typ, _ := e.Type.Get()
		c["physical"] = typ.String()
		cc := rg.Columns[leaf].MetaData
		if got := strings.Join(cc.PathInSchema, "."); got != path {
			t.Fatalf("%s: leaf %d is %s in the schema, %s in the row group", f.name, leaf, path, got)
		}
		c["encoding"] = dataEncoding(cc.Encoding)
		c["compression"] = cc.Codec.String()
		if cc.BloomFilterOffset > 0 {
			c["bloom"] = "yes"
		}
		if s, ok := sortOf[leaf]; ok {
			c["sort"] = strconv.Itoa(s)
			if s < 0 {
				c["sort"] = fmt.Sprintf("%d (%+v)", -s, rg.SortingColumns[-s-1])
			}
		}
		leaf++
		return i + 1
	}
	root := md.Schema[0]
	n, _ := root.NumChildren.Get()
	for next, k := 1, int32(0); k < n; k++ {
		next = walk(next, "")
	}
	if leaf != len(rg.Columns) {
		t.Fatalf("%s: %d leaves in the schema, %d column chunks", f.name, leaf, len(rg.Columns))
	}
	return f
}

func repetition(e format.SchemaElement) string {
	r, ok := e.RepetitionType.Get()
	switch {
	case !ok:
		return "—"
	case r == format.Required:
		return "required"
	case r == format.Optional:
		return "optional"
	case r == format.Repeated:
		return "repeated"
	}
	return r.String()
}

// logicalType writes a logical type as the page does: STRING, JSON, MAP,
// LIST, TIMESTAMP(NANOS, UTC), INT(32, unsigned), … or — for none.
func logicalType(lt format.LogicalType) string {
	switch v := lt.Value.(type) {
	case nil:
		return "—"
	case *format.StringType:
		return "STRING"
	case *format.JsonType:
		return "JSON"
	case *format.MapType:
		return "MAP"
	case *format.ListType:
		return "LIST"
	case *format.TimestampType:
		tz := "local"
		if v.IsAdjustedToUTC {
			tz = "UTC"
		}
		return fmt.Sprintf("TIMESTAMP(%s, %s)", v.Unit.String(), tz)
	case *format.IntType:
		sign := "unsigned"
		if v.IsSigned {
			sign = "signed"
		}
		return fmt.Sprintf("INT(%d, %s)", v.BitWidth, sign)
	}
	return lt.String()
}

// dataEncoding is the encoding of a column chunk's values: RLE_DICTIONARY
// when it has a dictionary (whose own page is PLAIN), else its one
// encoding that is not RLE (that of the repetition and definition
// levels).
func dataEncoding(encs []format.Encoding) string {
	if slices.Contains(encs, format.RLEDictionary) || slices.Contains(encs, format.PlainDictionary) {
		return "RLE_DICTIONARY"
	}
	var out []string
	for _, e := range encs {
		if e != format.RLE {
			out = append(out, e.String())
		}
	}
	if len(out) == 0 {
		return "RLE"
	}
	return strings.Join(out, ", ")
}

// checkColumns compares a file's columns with the page's table: every
// column of the table, and no other (but a version-1 file's attribute
// columns), with every property the table's header names.
func checkColumns(t *testing.T, table string, rows []map[string]string, f parquetFacts) {
	t.Helper()
	documented := map[string]bool{}
	for _, row := range rows {
		path := row["column"]
		if documented[path] {
			t.Errorf("table %s lists %s twice", table, path)
		}
		documented[path] = true
		got, ok := f.cols[path]
		if !ok {
			t.Errorf("%s: table %s lists %s; the file has no such column", f.name, table, path)
			continue
		}
		for _, prop := range []string{"physical", "logical", "repetition", "encoding", "compression", "bloom", "sort"} {
			want, inTable := row[prop]
			if inTable && got[prop] != want {
				t.Errorf("%s: column %s: %s is %q in the file, %q in table %s", f.name, path, prop, got[prop], want, table)
			}
		}
	}
	for _, path := range f.order {
		top, _, _ := strings.Cut(path, ".")
		if !documented[path] && !f.dyn[top] {
			c := f.cols[path]
			t.Errorf("%s: column %s is not in table %s; add:\n| `%s` | %s | %s | %s | %s | %s | %s | %s | … |",
				f.name, path, table, path, c["physical"], c["logical"], c["repetition"], c["encoding"], c["compression"], c["bloom"], c["sort"])
		}
	}
}

// checkMetadata compares a file's key-value metadata with the page's
// table: the keys of the rows for every file ("all") and, in a merged
// file, those for merged files too, with the signal's value where the
// table gives it literally.
func checkMetadata(t *testing.T, rows []map[string]string, sig, kind string, f parquetFacts) {
	t.Helper()
	// A key's last row that speaks for the file decides (a "merged" row
	// after an "all" row of one key tells what merged files hold).
	want := map[string]bool{}
	apply := map[string]map[string]string{}
	var keys []string
	for _, row := range rows {
		key := row["key"]
		if row["files"] != "all" && !(kind == "merged" && row["files"] == "merged") {
			continue
		}
		if !want[key] {
			keys = append(keys, key)
		}
		want[key] = true
		apply[key] = row
	}
	for _, key := range keys {
		row := apply[key]
		got, ok := f.kv[key]
		switch v := row[sig]; {
		case v == "none":
			if ok {
				t.Errorf("%s: key-value metadata %s, the page says none", f.name, key)
			}
		case !ok:
			t.Errorf("%s: no key-value metadata %s", f.name, key)
		case v == "any":
			if got == "" {
				t.Errorf("%s: %s is empty, the page says a value", f.name, key)
			}
		case got != v:
			t.Errorf("%s: %s is %q, the page says %q", f.name, key, got, v)
		}
	}
	for key := range f.kv {
		if !want[key] {
			t.Errorf("%s: key-value metadata %s is not in the page's table (for %s files)", f.name, key, kind)
		}
	}
}

// writeFormatFiles writes, with schema version v, a logs file and a
// traces file with a value in every column, twice each under the lake
// loader's names, and merges each pair with Compact; it returns the facts
// of one written and the merged file of each signal ("logs written",
// "traces merged", …).
func writeFormatFiles(t *testing.T, v int) map[string]parquetFacts {
	t.Helper()
	root := t.TempDir()
	cfg := DefaultWriterConfig()
	cfg.Dir, cfg.SchemaVersion, cfg.ManualFlush = root, v, true
	w, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.cfg.noSync = true
	defer w.Close()
	logs, spans := fullLogs(t), fullSpans(t)
	out := map[string]parquetFacts{}
	for seq := uint64(1); seq <= 2; seq++ {
		if _, err := w.Append(otlpwire.SignalLogs, "acme", logs); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(otlpwire.SignalTraces, "acme", spans); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(seq, seq)); err != nil {
			t.Fatal(err)
		}
		for _, p := range w.Flushed() {
			sig, _, _ := strings.Cut(strings.TrimPrefix(p, root+string(filepath.Separator)), string(filepath.Separator))
			out[sig+" written"] = describeParquet(t, p)
		}
	}
	now := formatTime.Add(3 * time.Hour)
	c, err := Compact(context.Background(), root, 2, now, CompactOptions{MinFiles: 2})
	if err != nil || c.Merges != 2 || len(c.Skipped) > 0 {
		t.Fatalf("compact: %+v, %v", c, err)
	}
	for _, sig := range []string{"logs", "traces"} {
		merged, err := filepath.Glob(filepath.Join(root, sig, "*", "*", "*", "*-c.parquet"))
		if err != nil || len(merged) != 1 {
			t.Fatalf("merged %s files: %q, %v", sig, merged, err)
		}
		out[sig+" merged"] = describeParquet(t, merged[0])
	}
	return out
}

// formatTime is the time of the records of fullLogs and fullSpans.
var formatTime = time.Date(2030, 5, 1, 10, 15, 0, 0, time.UTC)

// fillResource gives a resource every hot key and a schema URL, and a
// scope a name, a version, an attribute and a schema URL.
func fillResource(res pcommon.Resource, resURL func(string), scope pcommon.InstrumentationScope, scopeURL func(string)) {
	a := res.Attributes()
	a.PutStr("service.name", "checkout")
	a.PutStr("service.version", "1.4.2")
	a.PutStr("deployment.environment.name", "prod")
	a.PutStr("k8s.namespace.name", "shop")
	a.PutStr("k8s.pod.name", "checkout-7d9f")
	a.PutStr("host.name", "node-1")
	resURL("https://opentelemetry.io/schemas/1.30.0")
	scope.SetName("io.opentelemetry.http")
	scope.SetVersion("0.9.0")
	scope.Attributes().PutStr("s.key", "s.value")
	scopeURL("https://opentelemetry.io/schemas/1.30.0")
}

// fillAttrs gives a record every hot key of its own and an attribute of
// another kind.
func fillAttrs(a pcommon.Map) {
	a.PutStr("http.request.method", "POST")
	a.PutInt("http.response.status_code", 503)
	a.PutStr("http.route", "/cart/{id}")
	a.PutStr("rpc.method", "Checkout")
	a.PutStr("db.system.name", "postgresql")
	a.PutStr("error.type", "timeout")
	a.PutDouble("t.double", 2.5)
}

// fullLogs is one log with a value in every column.
func fullLogs(t *testing.T) []byte {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	sl := rl.ScopeLogs().AppendEmpty()
	fillResource(rl.Resource(), rl.SetSchemaUrl, sl.Scope(), sl.SetSchemaUrl)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(formatTime))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(formatTime.Add(time.Millisecond)))
	lr.SetSeverityNumber(plog.SeverityNumberError)
	lr.SetSeverityText("ERROR")
	lr.Body().SetStr("payment failed")
	lr.SetTraceID([16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	lr.SetSpanID([8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
	lr.SetEventName("payment.failed")
	lr.SetDroppedAttributesCount(1)
	fillAttrs(lr.Attributes())
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fullSpans is one span with a value in every column, and an event and
// a link with a value in every field.
func fullSpans(t *testing.T) []byte {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	ss := rs.ScopeSpans().AppendEmpty()
	fillResource(rs.Resource(), rs.SetSchemaUrl, ss.Scope(), ss.SetSchemaUrl)
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID([16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	sp.SetSpanID([8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	sp.SetParentSpanID([8]byte{8, 7, 6, 5, 4, 3, 2, 1})
	sp.TraceState().FromRaw("vendor=1")
	sp.SetName("POST /cart/{id}")
	sp.SetKind(ptrace.SpanKindServer)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(formatTime))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(formatTime.Add(time.Millisecond)))
	sp.Status().SetCode(ptrace.StatusCodeError)
	sp.Status().SetMessage("upstream timeout")
	sp.SetFlags(1)
	sp.SetDroppedAttributesCount(1)
	sp.SetDroppedEventsCount(2)
	sp.SetDroppedLinksCount(3)
	fillAttrs(sp.Attributes())
	ev := sp.Events().AppendEmpty()
	ev.SetName("retry")
	ev.SetTimestamp(pcommon.NewTimestampFromTime(formatTime.Add(time.Microsecond)))
	ev.Attributes().PutInt("attempt", 2)
	ev.SetDroppedAttributesCount(1)
	l := sp.Links().AppendEmpty()
	l.SetTraceID([16]byte{16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1})
	l.SetSpanID([8]byte{9, 9, 9, 9, 9, 9, 9, 9})
	l.TraceState().FromRaw("vendor=2")
	l.SetFlags(1)
	l.Attributes().PutBool("follows", true)
	l.SetDroppedAttributesCount(1)
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
