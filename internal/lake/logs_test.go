package lake

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// pdataJSON renders a pdata value with the rules of appendJSON, written
// independently from pdata's accessors.
func pdataJSON(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return string(appendJSONString(nil, []byte(v.Str())))
	case pcommon.ValueTypeInt:
		return strconv.FormatInt(v.Int(), 10)
	case pcommon.ValueTypeDouble:
		f := v.Double()
		switch {
		case math.IsNaN(f):
			return `"NaN"`
		case math.IsInf(f, 1):
			return `"Infinity"`
		case math.IsInf(f, -1):
			return `"-Infinity"`
		}
		// The documented rule: a double keeps a fraction or an
		// exponent, so that it reads back as a double.
		t := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(t, ".eE") {
			t += ".0"
		}
		return t
	case pcommon.ValueTypeBool:
		return strconv.FormatBool(v.Bool())
	case pcommon.ValueTypeBytes:
		return `"` + base64.StdEncoding.EncodeToString(v.Bytes().AsRaw()) + `"`
	case pcommon.ValueTypeSlice:
		var b bytes.Buffer
		b.WriteByte('[')
		for i := range v.Slice().Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(pdataJSON(v.Slice().At(i)))
		}
		b.WriteByte(']')
		return b.String()
	case pcommon.ValueTypeMap:
		var b bytes.Buffer
		b.WriteByte('{')
		first := true
		v.Map().Range(func(k string, e pcommon.Value) bool {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.Write(appendJSONString(nil, []byte(k)))
			b.WriteByte(':')
			b.WriteString(pdataJSON(e))
			return true
		})
		b.WriteByte('}')
		return b.String()
	}
	return "null"
}

// expectValue is an attribute value as the rows should hold it.
func expectValue(v pcommon.Value) (Kind, string, bool) {
	switch v.Type() {
	case pcommon.ValueTypeEmpty:
		return 0, "", false
	case pcommon.ValueTypeStr:
		return KindString, v.Str(), true
	case pcommon.ValueTypeInt:
		return KindInt, strconv.FormatInt(v.Int(), 10), true
	case pcommon.ValueTypeDouble:
		return KindDouble, strconv.FormatUint(math.Float64bits(v.Double()), 16), true
	case pcommon.ValueTypeBool:
		return KindBool, strconv.FormatBool(v.Bool()), true
	case pcommon.ValueTypeBytes:
		return KindBytes, string(v.Bytes().AsRaw()), true
	}
	return KindJSON, pdataJSON(v), true
}

func gotValue(c *Column, i int) string {
	switch c.Kinds[i] {
	case KindInt:
		return strconv.FormatInt(int64(c.Nums[i]), 10)
	case KindDouble:
		return strconv.FormatUint(c.Nums[i], 16)
	case KindBool:
		return strconv.FormatBool(c.Nums[i] == 1)
	}
	return string(c.Strs.At(i))
}

type cell struct {
	kind Kind
	val  string
}

// expectAttrs is what the dynamic columns should hold for one row from one
// origin: the first occurrence of each key, empty values omitted.
func expectAttrs(dst map[string]cell, o Origin, m pcommon.Map) {
	seen := map[string]bool{}
	m.Range(func(k string, v pcommon.Value) bool {
		if seen[k] {
			return true
		}
		seen[k] = true
		if kind, val, ok := expectValue(v); ok {
			dst[fmt.Sprint(o, "/", k)] = cell{kind, val}
		}
		return true
	})
}

// TestLogRowsMatchPdata appends randomized requests (every AnyValue kind,
// missing fields, both field orders) and checks every row against pdata's
// view of the same bytes.
func TestLogRowsMatchPdata(t *testing.T) {
	var rows LogRows
	for seed := range uint64(300) {
		for _, order := range []synth.Order{synth.Ascending, synth.Descending} {
			body := synth.Random(rand.New(rand.NewPCG(seed, 1)), otlpwire.SignalLogs, order)
			rows.Reset()
			rows.AppendLogs([]byte{}) // empty request: no rows
			if err := rows.AppendLogs(body); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			checkLogRows(t, &rows, body, fmt.Sprintf("seed %d order %d", seed, order))
		}
	}
}

func checkLogRows(t *testing.T, rows *LogRows, body []byte, name string) {
	t.Helper()
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatalf("%s: pdata: %v", name, err)
	}
	c := newRowChecker(t, name, rows.Columns(), rows.Len())
	rls := req.Logs().ResourceLogs()
	for i := range rls.Len() {
		rl := rls.At(i)
		for j := range rl.ScopeLogs().Len() {
			sl := rl.ScopeLogs().At(j)
			for k := range sl.LogRecords().Len() {
				lr := sl.LogRecords().At(k)
				row, eq := c.next()
				eq("time", rows.Time[row], int64(lr.Timestamp()))
				eq("observed", rows.ObservedTime[row], int64(lr.ObservedTimestamp()))
				eq("severity_number", rows.SeverityNumber[row], int32(lr.SeverityNumber()))
				eq("severity_text", string(rows.SeverityText.At(row)), lr.SeverityText())
				eq("flags", rows.Flags[row], uint32(lr.Flags()))
				eq("event_name", string(rows.EventName.At(row)), lr.EventName())
				eq("scope_name", string(rows.ScopeName.At(row)), sl.Scope().Name())
				eq("scope_version", string(rows.ScopeVersion.At(row)), sl.Scope().Version())
				eq("service", string(rows.ServiceName.At(row)), serviceName(rl.Resource()))
				wantTrace, wantSpan := "", ""
				if tid := lr.TraceID(); !tid.IsEmpty() {
					wantTrace = string(tid[:])
				}
				if sid := lr.SpanID(); !sid.IsEmpty() {
					wantSpan = string(sid[:])
				}
				eq("trace_id", fmt.Sprintf("%x", rows.TraceID.At(row)), fmt.Sprintf("%x", wantTrace))
				eq("span_id", fmt.Sprintf("%x", rows.SpanID.At(row)), fmt.Sprintf("%x", wantSpan))
				switch b := lr.Body(); b.Type() {
				case pcommon.ValueTypeEmpty:
					eq("body kind", rows.BodyKind[row], Kind(0))
				case pcommon.ValueTypeStr:
					eq("body kind", rows.BodyKind[row], KindString)
					eq("body", string(rows.Body.At(row)), b.Str())
				default:
					eq("body kind", rows.BodyKind[row], KindJSON)
					eq("body", string(rows.Body.At(row)), pdataJSON(b))
				}
				c.attrs(rl.Resource().Attributes(), sl.Scope().Attributes(), lr.Attributes())
			}
		}
	}
	c.done("records")
}

// rowChecker walks the rows of a batch alongside pdata's records.
type rowChecker struct {
	t    *testing.T
	name string
	n    int
	row  int               // the current row; -1 before the first
	got  []map[string]cell // the dynamic columns, by row
}

func newRowChecker(t *testing.T, name string, cols []*Column, n int) *rowChecker {
	c := &rowChecker{t: t, name: name, n: n, row: -1, got: make([]map[string]cell, n)}
	for i := range c.got {
		c.got[i] = map[string]cell{}
	}
	for _, col := range cols {
		for i, r := range col.Rows {
			c.got[r][fmt.Sprint(col.Origin, "/", col.Key)] = cell{col.Kinds[i], gotValue(col, i)}
		}
	}
	return c
}

// next moves to the next row and returns it with a comparison of one of its
// fields (by their printed form).
func (c *rowChecker) next() (int, func(field string, got, want any)) {
	c.t.Helper()
	if c.row++; c.row >= c.n {
		c.t.Fatalf("%s: only %d rows", c.name, c.n)
	}
	where := fmt.Sprintf("%s row %d", c.name, c.row)
	return c.row, func(field string, got, want any) {
		c.t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			c.t.Errorf("%s %s: got %v, want %v", where, field, got, want)
		}
	}
}

// attrs compares the current row's dynamic columns with the record's
// resource, scope and own attributes.
func (c *rowChecker) attrs(resource, scope, record pcommon.Map) {
	c.t.Helper()
	want := map[string]cell{}
	expectAttrs(want, OriginResource, resource)
	expectAttrs(want, OriginScope, scope)
	expectAttrs(want, OriginRecord, record)
	if fmt.Sprint(c.got[c.row]) != fmt.Sprint(want) {
		c.t.Errorf("%s row %d attributes:\n got  %v\n want %v", c.name, c.row, c.got[c.row], want)
	}
}

// done checks that every row was matched by one of pdata's records.
func (c *rowChecker) done(what string) {
	c.t.Helper()
	if c.row+1 != c.n {
		c.t.Errorf("%s: %d rows, pdata has %d %s", c.name, c.n, c.row+1, what)
	}
}

// serviceName is the resource's service.name string, or "".
func serviceName(r pcommon.Resource) string {
	if v, ok := r.Attributes().Get("service.name"); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// TestLogRowsRollback: a malformed request leaves the batch as it was.
func TestLogRowsRollback(t *testing.T) {
	var rows LogRows
	good := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 2, TotalRecords: 40})
	if err := rows.AppendLogs(good); err != nil {
		t.Fatal(err)
	}
	n, ncols := rows.Len(), len(rows.Columns())
	other := synth.Random(rand.New(rand.NewPCG(9, 9)), otlpwire.SignalLogs, synth.Ascending)
	for cut := 1; cut < len(other); cut += 97 {
		if err := rows.AppendLogs(other[:cut]); err == nil {
			continue // a prefix that happens to be well formed
		}
		if rows.Len() != n || len(rows.Columns()) != ncols {
			t.Fatalf("cut %d: %d rows, %d columns after a failed append; want %d, %d", cut, rows.Len(), len(rows.Columns()), n, ncols)
		}
		for _, c := range rows.Columns() {
			if len(c.Rows) > 0 && int(c.Rows[len(c.Rows)-1]) >= n {
				t.Fatalf("cut %d: column %s keeps a value of a rolled-back row", cut, c.Key)
			}
		}
	}
	checkLogRows(t, &rows, good, "after rollbacks")
}

func TestColumnName(t *testing.T) {
	for _, tc := range []struct {
		o    Origin
		key  string
		want string
	}{
		{OriginResource, "service.name", "resource_service_name"},
		{OriginScope, "Otel.Library", "scope_otel_library"},
		{OriginRecord, "http.response.status_code", "attr_http_response_status_code"},
		{OriginRecord, "_internal", "_internal"},
		{OriginRecord, "ünï", "attr___n__"},
		{OriginResource, "-x", "resource__x"},
		{OriginRecord, "", "attr_"},
	} {
		if got := ColumnName(tc.o, []byte(tc.key)); got != tc.want {
			t.Errorf("ColumnName(%d, %q) = %q, want %q", tc.o, tc.key, got, tc.want)
		}
	}
}
