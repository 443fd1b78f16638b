package lake

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// wideLogs is a logs request whose records carry keys[i] distinct
// attribute keys each (record i's keys are "r<i>.k<j>", half strings, half
// ints), and a resource with service.name and a few more.
func wideLogs(t *testing.T, keys ...int) []byte {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "wide")
	rl.Resource().Attributes().PutStr("host.name", "h1")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().Attributes().PutInt("scope.n", 7)
	ts := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	for i, n := range keys {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(ts.Add(time.Duration(i) * time.Second)))
		lr.Body().SetStr(fmt.Sprintf("record %d", i))
		lr.Attributes().PutStr("common", "c")
		for j := range n {
			k := fmt.Sprintf("r%d.k%d", i, j)
			if j%2 == 0 {
				lr.Attributes().PutStr(k, "v"+strconv.Itoa(j))
			} else {
				lr.Attributes().PutInt(k, int64(j))
			}
		}
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rowAttrs reads every attribute of one row back, from the typed columns
// and the overflow columns alike, as "origin/key" → value text (strings
// quoted, numbers as written).
func rowAttrs(t *testing.T, f *lakeFile, row int) map[string]string {
	t.Helper()
	out := map[string]string{}
	add := func(k, v string) {
		if _, dup := out[k]; dup {
			t.Fatalf("%s: row %d: attribute %s twice", f.path, row, k)
		}
		out[k] = v
	}
	for _, v := range f.rows[row] {
		name := f.names[v.Column()]
		m, ok := f.columns[name]
		if !ok || v.IsNull() {
			continue
		}
		if m.Type != overflowType {
			add(m.Origin+"/"+m.Key, cellText(v))
			continue
		}
		d := json.NewDecoder(bytes.NewReader(v.ByteArray()))
		d.UseNumber()
		var obj map[string]any
		if err := d.Decode(&obj); err != nil {
			t.Fatalf("%s: %s: %v", f.path, name, err)
		}
		for k, x := range obj {
			switch x := x.(type) {
			case string:
				add(m.Origin+"/"+k, strconv.Quote(x))
			case json.Number:
				add(m.Origin+"/"+k, x.String())
			default:
				t.Fatalf("%s: %s: %s is %T", f.path, name, k, x)
			}
		}
	}
	return out
}

// TestWideAttributes writes records with more distinct attribute keys
// than a file may have columns: the file is written, has at most the
// limit of attribute columns, and every attribute of every row reads back
// once, from its column or from the overflow column of its origin.
func TestWideAttributes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int // 0: the default
		keys  []int
	}{
		{"70000-keys-one-record", 0, []int{70000, 3}},
		{"ten-records-of-7000", 0, []int{7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000, 7000}},
		{"limit-5", 5, []int{4, 10, 0}},
		{"under-limit", 50, []int{10, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cfg := testConfig(root)
			if tc.limit > 0 {
				cfg.MaxAttributeColumns = tc.limit
			}
			w := newTestWriter(t, cfg)
			req := wideLogs(t, tc.keys...)
			if _, err := w.Append(otlpwire.SignalLogs, "default", req); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			files := readLake(t, root)
			if len(files) != 1 || len(files[0].rows) != len(tc.keys) {
				t.Fatalf("want one file of %d rows, got %d files", len(tc.keys), len(files))
			}
			f := files[0]
			limit := tc.limit
			if limit == 0 {
				limit = DefaultMaxAttributeColumns
			}
			attrCols, overflowCols := 0, 0
			for _, m := range f.columns {
				if m.Type == overflowType {
					overflowCols++
				} else {
					attrCols++
				}
			}
			if attrCols > limit {
				t.Errorf("%d attribute columns, limit %d", attrCols, limit)
			}
			total := 3 // service.name, host.name, scope.n
			for _, n := range tc.keys {
				total += n + 1
			}
			if total <= limit && overflowCols != 0 {
				t.Errorf("%d overflow columns under the limit", overflowCols)
			}
			if _, ok := f.columns[serviceColumn]; !ok {
				t.Errorf("no %s column", serviceColumn)
			}
			// The expectation, from pdata's view of the request.
			var lr plogotlp.ExportRequest = plogotlp.NewExportRequest()
			if err := lr.UnmarshalProto(req); err != nil {
				t.Fatal(err)
			}
			res := lr.Logs().ResourceLogs().At(0)
			sl := res.ScopeLogs().At(0)
			for i := range sl.LogRecords().Len() {
				rec := sl.LogRecords().At(i)
				want := map[string]string{}
				put := func(origin string, m pcommon.Map) {
					m.Range(func(k string, v pcommon.Value) bool {
						if v.Type() == pcommon.ValueTypeInt {
							want[origin+"/"+k] = strconv.FormatInt(v.Int(), 10)
						} else {
							want[origin+"/"+k] = strconv.Quote(v.AsString())
						}
						return true
					})
				}
				put("resource", res.Resource().Attributes())
				put("scope", sl.Scope().Attributes())
				put("record", rec.Attributes())
				row := -1
				for r := range f.rows {
					if v, _ := f.value(f.rows[r], "body"); string(v.ByteArray()) == rec.Body().Str() {
						row = r
					}
				}
				if row < 0 {
					t.Fatalf("record %d not found", i)
				}
				got := rowAttrs(t, f, row)
				if len(got) != len(want) {
					t.Errorf("record %d: %d attributes read back, want %d", i, len(got), len(want))
				}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("record %d: %s = %s, want %s", i, k, got[k], v)
						break
					}
				}
			}
		})
	}
}

// TestFlushEncodeError: a flush whose rows cannot be encoded returns
// ErrEncode and leaves no file of its own in the lake, even of the
// batches it had written before the failing one, so the caller can write
// the same rows again under other names without duplicating any.
func TestFlushEncodeError(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush, cfg.EncodeFault = true, "poison"
	w := newTestWriter(t, cfg)
	good, bad := wideLogs(t, 1, 2), wideLogs(t, 3)
	var req plogotlp.ExportRequest = plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(bad); err != nil {
		t.Fatal(err)
	}
	req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr("poison")
	bad, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(otlpwire.SignalLogs, "a", good); err != nil { // written first (tenants in order)
		t.Fatal(err)
	}
	if _, err := w.Append(otlpwire.SignalLogs, "b", bad); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushAs("x"); !errors.Is(err, ErrEncode) {
		t.Fatalf("flush: %v, want ErrEncode", err)
	}
	if files := readLake(t, root); len(files) != 0 {
		t.Fatalf("%d files left after a failed flush", len(files))
	}
	w.Discard()
	if _, err := w.Append(otlpwire.SignalLogs, "a", good); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushAs("y"); err != nil {
		t.Fatal(err)
	}
	if files := readLake(t, root); len(files) != 1 || len(files[0].rows) != 2 {
		t.Fatalf("after a good flush: %d files", len(files))
	}
}
