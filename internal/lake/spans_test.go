package lake

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestSpanRowsMatchPdata appends randomized requests (every AnyValue kind,
// missing fields, events and links, both field orders) and checks every
// row against pdata's view of the same bytes.
func TestSpanRowsMatchPdata(t *testing.T) {
	var rows SpanRows
	for seed := range uint64(300) {
		for _, order := range []synth.Order{synth.Ascending, synth.Descending} {
			body := synth.Random(rand.New(rand.NewPCG(seed, 1)), otlpwire.SignalTraces, order)
			rows.Reset()
			rows.AppendTraces([]byte{}) // empty request: no rows
			if err := rows.AppendTraces(body); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			checkSpanRows(t, &rows, body, fmt.Sprintf("seed %d order %d", seed, order))
		}
	}
}

// TestSpanRowsRealistic checks a generated request with realistic traces:
// parents, statuses, exception events and links.
func TestSpanRowsRealistic(t *testing.T) {
	for _, order := range []synth.Order{synth.Ascending, synth.Descending} {
		body := synth.Traces(synth.Config{Seed: 7, Order: order, Resources: 3, ScopesPerResource: 2, TotalRecords: 200})
		var rows SpanRows
		if err := rows.AppendTraces(body); err != nil {
			t.Fatal(err)
		}
		if rows.Len() != 200 {
			t.Fatalf("order %d: %d rows, want 200", order, rows.Len())
		}
		checkSpanRows(t, &rows, body, fmt.Sprintf("realistic order %d", order))
	}
}

func checkSpanRows(t *testing.T, rows *SpanRows, body []byte, name string) {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatalf("%s: pdata: %v", name, err)
	}
	c := newRowChecker(t, name, rows.Columns(), rows.Len())
	rss := req.Traces().ResourceSpans()
	for i := range rss.Len() {
		rs := rss.At(i)
		for j := range rs.ScopeSpans().Len() {
			ss := rs.ScopeSpans().At(j)
			for k := range ss.Spans().Len() {
				sp := ss.Spans().At(k)
				row, eq := c.next()
				eq("trace_id", rowID(rows.TraceID.At(row)), sp.TraceID())
				eq("span_id", rowID(rows.SpanID.At(row)), sp.SpanID())
				eq("parent_span_id", rowID(rows.ParentSpanID.At(row)), sp.ParentSpanID())
				eq("trace_state", string(rows.TraceState.At(row)), sp.TraceState().AsRaw())
				eq("name", string(rows.Name.At(row)), sp.Name())
				eq("kind", rows.Kind[row], int32(sp.Kind()))
				eq("start", rows.StartTime[row], int64(sp.StartTimestamp()))
				eq("end", rows.EndTime[row], int64(sp.EndTimestamp()))
				eq("status_code", rows.StatusCode[row], int32(sp.Status().Code()))
				eq("status_message", string(rows.StatusMessage.At(row)), sp.Status().Message())
				eq("flags", rows.Flags[row], sp.Flags())
				eq("dropped_attributes", rows.DroppedAttributes[row], sp.DroppedAttributesCount())
				eq("dropped_events", rows.DroppedEvents[row], sp.DroppedEventsCount())
				eq("dropped_links", rows.DroppedLinks[row], sp.DroppedLinksCount())
				eq("events", string(rows.Events.At(row)), expectEvents(sp.Events()))
				eq("links", string(rows.Links.At(row)), expectLinks(sp.Links()))
				eq("scope_name", string(rows.ScopeName.At(row)), ss.Scope().Name())
				eq("scope_version", string(rows.ScopeVersion.At(row)), ss.Scope().Version())
				eq("service", string(rows.ServiceName.At(row)), serviceName(rs.Resource()))
				c.attrs(rs.Resource().Attributes(), ss.Scope().Attributes(), sp.Attributes())
			}
		}
	}
	c.done("spans")
	// Every fixed column has one value a row, none left over from a
	// rolled-back append.
	for i, n := range []int{
		rows.TraceID.Len(), rows.SpanID.Len(), rows.ParentSpanID.Len(), rows.TraceState.Len(), rows.Name.Len(),
		len(rows.Kind), len(rows.StartTime), len(rows.EndTime), len(rows.StatusCode), rows.StatusMessage.Len(),
		len(rows.Flags), len(rows.DroppedAttributes), len(rows.DroppedEvents), len(rows.DroppedLinks),
		rows.Events.Len(), rows.Links.Len(), rows.ScopeName.Len(), rows.ScopeVersion.Len(), rows.ServiceName.Len(),
	} {
		if n != rows.Len() {
			t.Errorf("%s: fixed column %d has %d values, want %d", name, i, n, rows.Len())
		}
	}
}

// rowID is an id column value as pdata's String writes the id: hex, empty
// when absent. pdata reads an all-zero id as absent, and so must the rows
// (synth.Traces sends one as every root span's parent).
func rowID(b []byte) string { return hex.EncodeToString(b) }

// attrsJSON is an attribute list as a JSON object, every pair in the order
// sent (duplicates included), rendered by pdataJSON.
func attrsJSON(m pcommon.Map) string {
	v := pcommon.NewValueMap()
	m.CopyTo(v.Map())
	return pdataJSON(v)
}

// expectEvents is the Events value of a span, written from pdata's
// accessors to the format documented on appendEvents.
func expectEvents(es ptrace.SpanEventSlice) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range es.Len() {
		e := es.At(i)
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"time":%d,"name":%s,"attributes":%s`,
			uint64(e.Timestamp()), appendJSONString(nil, []byte(e.Name())), attrsJSON(e.Attributes()))
		if n := e.DroppedAttributesCount(); n != 0 {
			fmt.Fprintf(&b, `,"dropped_attributes_count":%d`, n)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// expectLinks is the Links value of a span, written from pdata's accessors
// to the format documented on appendLinks; an all-zero id is "", as pdata
// writes it.
func expectLinks(ls ptrace.SpanLinkSlice) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range ls.Len() {
		l := ls.At(i)
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"trace_id":"%s","span_id":"%s","trace_state":%s,"flags":%d,"attributes":%s`,
			l.TraceID(), l.SpanID(), appendJSONString(nil, []byte(l.TraceState().AsRaw())), l.Flags(), attrsJSON(l.Attributes()))
		if n := l.DroppedAttributesCount(); n != 0 {
			fmt.Fprintf(&b, `,"dropped_attributes_count":%d`, n)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// TestSpanRowsRollback: a malformed request leaves the batch as it was.
func TestSpanRowsRollback(t *testing.T) {
	var rows SpanRows
	good := synth.Generate(otlpwire.SignalTraces, synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 2, TotalRecords: 40})
	if err := rows.AppendTraces(good); err != nil {
		t.Fatal(err)
	}
	n, ncols := rows.Len(), len(rows.Columns())
	other := synth.Random(rand.New(rand.NewPCG(9, 9)), otlpwire.SignalTraces, synth.Ascending)
	failed := 0
	for cut := 1; cut < len(other); cut += 97 {
		if err := rows.AppendTraces(other[:cut]); err == nil {
			continue // a prefix that happens to be well formed
		}
		failed++
		if rows.Len() != n || len(rows.Columns()) != ncols {
			t.Fatalf("cut %d: %d rows, %d columns after a failed append; want %d, %d", cut, rows.Len(), len(rows.Columns()), n, ncols)
		}
		for _, c := range rows.Columns() {
			if len(c.Rows) > 0 && int(c.Rows[len(c.Rows)-1]) >= n {
				t.Fatalf("cut %d: column %s keeps a value of a rolled-back row", cut, c.Key)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no prefix was refused; the test checks nothing")
	}
	checkSpanRows(t, &rows, good, "after rollbacks")
}
