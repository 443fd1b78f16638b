package lakeread_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lakeread"
)

// TestSpanPoints: SpanPoints gives every span a filter selects, with
// the fields asked for, across row groups (one that has none of the
// selected spans, though its statistics admit them, included); a filter
// on an attribute without a typed column is ErrNotColumn.
func TestSpanPoints(t *testing.T) {
	base := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	// Service "a": 3,000 server spans; service "b": 3,000 spans, every
	// third a client with http.response.status_code 500 + i%3. Files are
	// sorted by service, and a row group is cut where the service changes
	// past 2,048 rows: "a"'s row group holds no client.
	want := map[string]int{}
	for si, svc := range []string{"a", "b"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range 3000 {
			sp := spans.AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(si + 1), byte(i >> 8), byte(i)})
			sp.SetSpanID(pcommon.SpanID{byte(i >> 8), byte(i), 1})
			sp.SetName("op")
			sp.SetKind(ptrace.SpanKindServer)
			start := base.Add(time.Duration(i) * time.Second)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Duration(i) * time.Microsecond)))
			if svc == "b" && i%3 == 0 {
				sp.SetKind(ptrace.SpanKindClient)
				sp.Attributes().PutInt("http.response.status_code", int64(500+i%7))
				want["client"]++
				if 500+i%7 >= 503 {
					want["503+"]++
				}
			}
		}
	}
	req := ptraceotlp.NewExportRequestFromTraces(td)
	body, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeLake(t, dir, body)
	r := newReader(t, dir)
	count := func(f lakeread.SpanFilter, check func(p *lakeread.SpanPoint)) (int, error) {
		n := 0
		err := r.SpanPoints(context.Background(), "acme", f, func(pts []lakeread.SpanPoint) error {
			for i := range pts {
				check(&pts[i])
				n++
			}
			return nil
		})
		return n, err
	}
	n, err := count(lakeread.SpanFilter{Kind: 3, Status: -1, Need: lakeread.NeedService | lakeread.NeedKind | lakeread.NeedDuration | lakeread.NeedTraceID},
		func(p *lakeread.SpanPoint) {
			i := int(p.TraceID[1])<<8 | int(p.TraceID[2])
			if string(p.Service) != "b" || p.Kind != 3 || p.TraceID[0] != 2 || p.Duration != int64(i)*1000 || p.Start != base.Add(time.Duration(i)*time.Second).UnixNano() {
				t.Fatalf("point %+v", *p)
			}
		})
	if err != nil || n != want["client"] {
		t.Fatalf("clients: %d points, %v; want %d", n, err, want["client"])
	}
	// A search's points: the end (end_time) and the trace id alone.
	n, err = count(lakeread.SpanFilter{Kind: 3, Status: -1, Need: lakeread.NeedEnd | lakeread.NeedTraceID},
		func(p *lakeread.SpanPoint) {
			i := int(p.TraceID[1])<<8 | int(p.TraceID[2])
			if p.End != base.Add(time.Duration(i)*time.Second+time.Duration(i)*time.Microsecond).UnixNano() || p.Start != 0 || p.Duration != 0 {
				t.Fatalf("end point %+v", *p)
			}
		})
	if err != nil || n != want["client"] {
		t.Fatalf("clients' ends: %d points, %v; want %d", n, err, want["client"])
	}
	n, err = count(lakeread.SpanFilter{Kind: -1, Status: -1, Ints: []lakeread.IntCond{{Key: "http.response.status_code", Op: ">=", Value: 503}}},
		func(*lakeread.SpanPoint) {})
	if err != nil || n != want["503+"] {
		t.Fatalf("status code >= 503: %d points, %v; want %d", n, err, want["503+"])
	}
	n, err = count(lakeread.SpanFilter{Kind: -1, Status: -1, Start: base.Add(100 * time.Second), End: base.Add(200 * time.Second), Service: "a"}, func(*lakeread.SpanPoint) {})
	if err != nil || n != 100 {
		t.Fatalf("a's spans of 100 s: %d points, %v", n, err)
	}
	if _, err := count(lakeread.SpanFilter{Kind: -1, Status: -1, Ints: []lakeread.IntCond{{Key: "retries", Op: "=", Value: 1}}}, func(*lakeread.SpanPoint) {}); !errors.Is(err, lakeread.ErrNotColumn) {
		t.Fatalf("a key without a typed column: %v", err)
	}
}

// TestSpanPointsCounted: a Counted filter over whole minutes is answered
// from the files' span counts (points for many spans) with the totals by
// service, kind, status and minute the columns give; a range that cuts a
// minute reads the columns.
func TestSpanPointsCounted(t *testing.T) {
	base := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	td := ptrace.NewTraces()
	for si, svc := range []string{"a", "b"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", svc)
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range 3000 {
			sp := spans.AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(si + 1), byte(i >> 8), byte(i)})
			sp.SetSpanID(pcommon.SpanID{byte(i >> 8), byte(i), 1})
			if i%4 != 0 {
				sp.SetParentSpanID(pcommon.SpanID{9})
			}
			sp.SetName("op")
			sp.SetKind(ptrace.SpanKind(i % 6))
			sp.Status().SetCode(ptrace.StatusCode(i % 3))
			start := base.Add(time.Duration(i) * 700 * time.Millisecond)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Millisecond)))
		}
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeLake(t, dir, body)
	r := newReader(t, dir)
	totals := func(f lakeread.SpanFilter) (map[string]int64, int) {
		t.Helper()
		out, many := map[string]int64{}, 0
		err := r.SpanPoints(context.Background(), "acme", f, func(pts []lakeread.SpanPoint) error {
			for _, p := range pts {
				if p.N > 1 {
					many++
				}
				out[fmt.Sprintf("%s/%d/%d@%d", p.Service, p.Kind, p.Status, p.Start/int64(time.Minute))] += max(p.N, 1)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out, many
	}
	need := lakeread.NeedService | lakeread.NeedKind | lakeread.NeedStatus
	for _, c := range []struct {
		name       string
		f          lakeread.SpanFilter
		fromCounts bool
	}{
		{"all", lakeread.SpanFilter{Kind: -1, Status: -1}, true},
		{"minutes 2 to 20", lakeread.SpanFilter{Start: base.Add(2 * time.Minute), End: base.Add(20 * time.Minute), Kind: -1, Status: -1}, true},
		{"b's errors", lakeread.SpanFilter{Service: "b", Kind: -1, Status: 2}, true},
		{"servers", lakeread.SpanFilter{Kind: 2, Status: -1}, true},
		{"a range cutting minutes", lakeread.SpanFilter{Start: base.Add(90 * time.Second), End: base.Add(20 * time.Minute), Kind: -1, Status: -1}, false},
		{"durations", lakeread.SpanFilter{Kind: -1, Status: -1, MinDur: 1}, false},
	} {
		f := c.f
		f.Need = need
		want, _ := totals(f) // the columns
		f.Counted = true
		got, many := totals(f)
		if len(want) < 10 {
			t.Fatalf("%s: %d keys: the test compares little", c.name, len(want))
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: counted\n got  %v\n want %v", c.name, got, want)
		}
		if (many > 0) != c.fromCounts {
			t.Errorf("%s: %d points for many spans, want from counts %v", c.name, many, c.fromCounts)
		}
	}
}

// TestNewestSpanPoints: NewestSpanPoints reads files latest end first and
// stops once n points end after every file left: it gives every span
// SpanPoints gives that ends after its cutoff (a long span of an early
// file among them), and reads fewer than all; with n 0 it reads all.
func TestNewestSpanPoints(t *testing.T) {
	base := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for f := range 8 { // a file a minute, 100 spans each
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", "a")
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range 100 {
			sp := spans.AppendEmpty()
			sp.SetTraceID(pcommon.TraceID{byte(f + 1), byte(i)})
			sp.SetSpanID(pcommon.SpanID{byte(f + 1), byte(i)})
			sp.SetName("op")
			start := base.Add(time.Duration(f)*time.Minute + time.Duration(i)*100*time.Millisecond)
			d := time.Duration(i) * time.Millisecond
			if f == 1 && i == 7 {
				d = time.Hour // ends after every other span
			}
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(d)))
		}
		req := ptraceotlp.NewExportRequestFromTraces(td)
		body, err := req.MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, body)
	}
	dir := t.TempDir()
	writeFiles(t, dir, false, reqs)
	r := newReader(t, dir)
	type key struct {
		id  [16]byte
		end int64
	}
	f := lakeread.SpanFilter{Start: base, End: base.Add(time.Hour), Kind: -1, Status: -1, Need: lakeread.NeedEnd | lakeread.NeedTraceID}
	read := func(n int) (map[key]int, int64) {
		got := map[key]int{}
		cutoff, err := r.NewestSpanPoints(context.Background(), "acme", f, n, func(pts []lakeread.SpanPoint) error {
			for _, p := range pts {
				got[key{p.TraceID, p.End}]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, cutoff
	}
	all, cutoff := read(0)
	if len(all) != 800 || cutoff != math.MinInt64 {
		t.Fatalf("n 0: %d points, cutoff %d; want 800 and none", len(all), cutoff)
	}
	newest, cutoff := read(150)
	if cutoff == math.MinInt64 || len(newest) >= len(all) {
		t.Fatalf("n 150: %d points of %d, cutoff %d: every file read", len(newest), len(all), cutoff)
	}
	after := 0
	for k := range all {
		if k.end > cutoff {
			after++
			if newest[k] != 1 {
				t.Errorf("span %x ending %d, after the cutoff %d, given %d times", k.id[:2], k.end, cutoff, newest[k])
			}
		}
	}
	for k := range newest {
		if all[k] != 1 {
			t.Errorf("span %x given that SpanPoints does not give", k.id[:2])
		}
	}
	if long := (key{[16]byte{2, 7}, base.Add(time.Minute + 700*time.Millisecond + time.Hour).UnixNano()}); newest[long] != 1 || after < 150 {
		t.Errorf("the long span given %d times, %d spans after the cutoff (want at least 150)", newest[long], after)
	}
}
