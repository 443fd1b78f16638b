package lake

import (
	"bytes"
	"context"
	"fmt"
	"io"
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

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// v3Row is what the tests read of a version-3 logs row besides its key
// columns.
type v3Row struct {
	Time       int64              `parquet:"timestamp"`
	Observed   int64              `parquet:"observed_timestamp"`
	Body       *string            `parquet:"body,optional"`
	Attributes map[string]*string `parquet:"attributes"`
	AttrTypes  string             `parquet:"attribute_types"`
}

// v3Attrs reads the logs file at path: per row, its identity (times and
// body) and its record attributes as sorted "key=type:text" (type a
// typeChars character), the map's typed by attribute_types, the key and
// hot columns' by their kind; the file's key columns; and, per row, the
// keys its map holds. A map whose signature does not match fails t.
func v3Attrs(t *testing.T, path string) (rows []string, keys []KeyColumn, inMap [][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := pf.Lookup(SchemaVersionKey); v != "3" {
		t.Fatalf("%s: schema version %q, want 3", path, v)
	}
	if keys, err = KeyColumns(pf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	got := make([]v3Row, pf.NumRows())
	if n, err := parquet.NewGenericReader[v3Row](pf).Read(got); int64(n) != pf.NumRows() {
		t.Fatalf("%s: read %d of %d rows: %v", path, n, pf.NumRows(), err)
	}
	// The map's order: the leaf's values in order, to pair with
	// attribute_types (a Go map has none).
	order := mapKeyOrder(t, pf)
	attrs := make([][]string, len(got))
	inMap = make([][]string, len(got))
	for i, r := range got {
		if len(order[i]) != len(r.AttrTypes) || len(order[i]) != len(r.Attributes) {
			t.Fatalf("%s: row %d: map of %d keys (%d in order), signature %q", path, i, len(r.Attributes), len(order[i]), r.AttrTypes)
		}
		for j, k := range order[i] {
			attrs[i] = append(attrs[i], k+"="+string(r.AttrTypes[j])+":"+optText(r.Attributes[k]))
		}
		inMap[i] = order[i]
	}
	kindChar := map[Kind]string{KindString: "s", KindInt: "i", KindDouble: "d", KindBool: "b"}
	for _, kc := range keys {
		lc, _ := pf.Schema().Lookup(kc.Name)
		row := 0
		eachLeafValue(t, pf, lc.ColumnIndex, func(v parquet.Value) {
			if !v.IsNull() {
				text := v.String()
				if kc.Kind == KindDouble {
					text = strconv.FormatFloat(v.Double(), 'g', -1, 64)
				}
				attrs[row] = append(attrs[row], kc.Key+"="+kindChar[kc.Kind]+":"+text)
			}
			row++
		})
	}
	for i, r := range got {
		slices.Sort(attrs[i])
		rows = append(rows, fmt.Sprintf("t=%d/%d body=%s %v", r.Time, r.Observed, optText(r.Body), attrs[i]))
	}
	return rows, keys, inMap
}

// mapKeyOrder returns each row's map keys in the file's order.
func mapKeyOrder(t *testing.T, pf *parquet.File) [][]string {
	t.Helper()
	lc, ok := pf.Schema().Lookup("attributes", "key_value", "key")
	if !ok {
		t.Fatal("no attributes.key_value.key")
	}
	var out [][]string
	eachLeafValue(t, pf, lc.ColumnIndex, func(v parquet.Value) {
		if v.RepetitionLevel() == 0 {
			out = append(out, nil)
		}
		if !v.IsNull() {
			out[len(out)-1] = append(out[len(out)-1], v.String())
		}
	})
	return out
}

// eachLeafValue calls fn with every value of leaf column col of pf, row
// group after row group.
func eachLeafValue(t *testing.T, pf *parquet.File, col int, fn func(parquet.Value)) {
	t.Helper()
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[col].Pages()
		for {
			pg, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			vals := make([]parquet.Value, pg.NumValues())
			if n, err := pg.Values().ReadValues(vals); n != len(vals) && err != io.EOF {
				t.Fatalf("column %d: %d of %d values: %v", col, n, len(vals), err)
			}
			for _, v := range vals {
				fn(v)
			}
		}
		pages.Close()
	}
}

// expectV3 is a sent log record as v3Attrs renders a row.
func expectV3(lr plog.LogRecord) string {
	m, types := expectMap(lr.Attributes()), expectTypes(lr.Attributes())
	var attrs []string
	j := 0
	seen := map[string]bool{}
	for k := range lr.Attributes().All() {
		if seen[k] {
			continue
		}
		seen[k] = true
		attrs = append(attrs, k+"="+string(types[j])+":"+optText(m[k]))
		j++
	}
	slices.Sort(attrs)
	var body *string
	switch lr.Body().Type() {
	case pcommon.ValueTypeEmpty:
	case pcommon.ValueTypeStr:
		s := lr.Body().Str()
		body = &s
	default:
		s := pdataJSON(lr.Body())
		body = &s
	}
	return fmt.Sprintf("t=%d/%d body=%s %v", int64(lr.Timestamp()), int64(lr.ObservedTimestamp()), optText(body), attrs)
}

// TestLogsV3RoundTrip: every attribute of random requests (every value
// type, repeated keys, empty values) and of realistic logs reads back
// from the version-3 files, in the map or a column, with its type and
// text as the pdata oracle has it; and the files do put frequent keys in
// columns.
func TestLogsV3RoundTrip(t *testing.T) {
	columns := 0
	for seed := range uint64(20) {
		root := t.TempDir()
		cfg := testConfig(root)
		cfg.SchemaVersion = 3
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
		paths, _ := filepath.Glob(filepath.Join(root, "logs", "*", "*", "*", "*.parquet"))
		if len(paths) == 0 {
			t.Fatalf("seed %d: no files", seed)
		}
		var got, want []string
		for _, p := range paths {
			rows, keys, _ := v3Attrs(t, p)
			got = append(got, rows...)
			columns += len(keys)
		}
		for _, body := range reqs {
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(body); err != nil {
				t.Fatal(err)
			}
			for _, rl := range req.Logs().ResourceLogs().All() {
				for _, sl := range rl.ScopeLogs().All() {
					for _, lr := range sl.LogRecords().All() {
						want = append(want, expectV3(lr))
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
	if columns == 0 {
		t.Fatal("no file had a key column: the test tests the map alone")
	}
}

// keyedLogs is a request of n records: k.str a string, k.int an int
// (record 0 a string), k.dbl a double and k.bool a bool in every record;
// k.rare a string in record 5 only; k.empty empty and k.bytes bytes in
// every record; http.response.status_code 200 (record 3 "OK"). intKind
// false makes k.int a string everywhere but in every 16th record (an
// int): strings the most, ints in more than 1/32 of the records.
func keyedLogs(t *testing.T, n int, intKind bool) []byte {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "svc")
	sl := rl.ScopeLogs().AppendEmpty()
	for i := range n {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(testNow.Add(time.Duration(i) * time.Millisecond)))
		lr.Body().SetStr("line " + strconv.Itoa(i))
		a := lr.Attributes()
		a.PutStr("k.str", "v"+strconv.Itoa(i%3))
		if intKind && i != 0 || !intKind && i%16 == 0 {
			a.PutInt("k.int", int64(i))
		} else {
			a.PutStr("k.int", "x"+strconv.Itoa(i))
		}
		a.PutDouble("k.dbl", float64(i)/4)
		a.PutBool("k.bool", i%2 == 0)
		if i == 5 {
			a.PutStr("k.rare", "r")
		}
		a.PutEmpty("k.empty")
		a.PutEmptyBytes("k.bytes").FromRaw([]byte{byte(i)})
		if i == 3 {
			a.PutStr("http.response.status_code", "OK")
		} else {
			a.PutInt("http.response.status_code", 200)
		}
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLogsV3KeyColumns: which keys get columns and which values stay in
// the map: frequent keys of one kind get a typed column and leave the
// map; a rare key, empty values, bytes and a value of another kind than
// its column's (a key column's or a hot column's) stay in the map. A key
// keeps its column's kind in the writer's next file though most of its
// values there are of another kind, and compaction merges the two files
// with every value kept.
func TestLogsV3KeyColumns(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.SchemaVersion, cfg.ManualFlush = 3, true
	w := newTestWriter(t, cfg)
	defer w.Close()
	const n = 64
	reqs := [][]byte{keyedLogs(t, n, true), keyedLogs(t, n, false)}
	var paths []string
	for i, req := range reqs {
		if _, err := w.Append(otlpwire.SignalLogs, "t1", req); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(uint64(i+1), uint64(i+1))); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, w.Flushed()...)
	}
	if len(paths) != 2 {
		t.Fatalf("files %q, want 2", paths)
	}
	wantKeys := []KeyColumn{
		{"attr_db_system_name", "db.system.name", KindString}, {"attr_error_type", "error.type", KindString},
		{"attr_http_request_method", "http.request.method", KindString}, {"attr_http_response_status_code", "http.response.status_code", KindInt},
		{"attr_http_route", "http.route", KindString}, {"attr_k_bool", "k.bool", KindBool}, {"attr_k_dbl", "k.dbl", KindDouble},
		{"attr_k_int", "k.int", KindInt}, {"attr_k_str", "k.str", KindString}, {"attr_rpc_method", "rpc.method", KindString},
	}
	for fi, p := range paths {
		rows, keys, inMap := v3Attrs(t, p)
		if !slices.Equal(keys, wantKeys) {
			t.Errorf("file %d: key columns %v, want %v", fi, keys, wantKeys)
		}
		if len(rows) != n {
			t.Fatalf("file %d: %d rows", fi, len(rows))
		}
		for i, keys := range inMap {
			want := []string{"k.empty", "k.bytes"}
			if fi == 0 && i == 0 || fi == 1 && i%16 != 0 {
				want = append(want, "k.int") // a string, the column an int
			}
			if i == 3 {
				want = append(want, "http.response.status_code") // "OK"
			}
			if i == 5 {
				want = append(want, "k.rare")
			}
			slices.Sort(keys)
			slices.Sort(want)
			if !slices.Equal(keys, want) {
				t.Errorf("file %d, row %d: the map holds %v, want %v", fi, i, keys, want)
			}
		}
	}
	var want []string
	for _, body := range reqs {
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		for _, lr := range req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().All() {
			want = append(want, expectV3(lr))
		}
	}
	c, err := Compact(context.Background(), root, 2, testNow.Add(3*time.Hour), CompactOptions{MinFiles: 2})
	if err != nil || c.Merges != 1 || len(c.Skipped) > 0 {
		t.Fatalf("compact: %+v, %v", c, err)
	}
	merged, _ := filepath.Glob(filepath.Join(root, "logs", "*", "*", "*", "*-c.parquet"))
	if len(merged) != 1 {
		t.Fatalf("merged files %q", merged)
	}
	got, _, _ := v3Attrs(t, merged[0])
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("merged rows differ\n%s", diffLines(got, want))
	}
	if !strings.Contains(strings.Join(got, "\n"), "k.int=s:x0") {
		t.Fatal("the test's string k.int is not read back")
	}
}
