package lakeread_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// logText renders a log record as Logs should give it back: time, line,
// service, severity, ids, scope, and its attributes as text.
func logText(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) (int64, string) {
	t := int64(lr.Timestamp())
	if t == 0 {
		t = int64(lr.ObservedTimestamp())
	}
	svc := "unknown_service"
	if v, ok := rl.Resource().Attributes().Get("service.name"); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		svc = v.Str()
	}
	line := lr.Body().AsString()
	if lr.Body().Type() == pcommon.ValueTypeEmpty {
		line = ""
	}
	var attrs []string
	seen := map[string]bool{}
	for k, v := range lr.Attributes().All() {
		if seen[k] {
			continue
		}
		seen[k] = true
		attrs = append(attrs, k+"="+attrText(v))
	}
	slices.Sort(attrs) // a set: version-3 files keep no order across their columns
	tid := ""
	if !lr.TraceID().IsEmpty() {
		tid = lr.TraceID().String()
	}
	return t, fmt.Sprintf("%d %q svc=%s sev=%q/%d trace=%s scope=%s/%s attrs=%v", t, line, svc, lr.SeverityText(), lr.SeverityNumber(),
		tid, sl.Scope().Name(), sl.Scope().Version(), attrs)
}

// attrText is a value as the lake's attribute map holds it.
func attrText(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeEmpty:
		return ""
	case pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
		return "<json>" // compared by kind only: JSON spellings differ in doubles
	}
	return v.AsString()
}

func recText(r *lakeread.LogRecord) string {
	var attrs []string
	for _, kv := range r.Attrs {
		v := kv.Value
		if strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
			v = "<json>"
		}
		attrs = append(attrs, kv.Key+"="+v)
	}
	slices.Sort(attrs)
	return fmt.Sprintf("%d %q svc=%s sev=%q/%d trace=%s scope=%s/%s attrs=%v", r.Time, r.Line, r.Service, r.SeverityText, r.SeverityNumber,
		r.TraceID, r.ScopeName, r.ScopeVersion, attrs)
}

// eachSentLog calls fn with each log record of the OTLP requests reqs,
// read with pdata (the tests' oracle), and its resource's service.name
// ("unknown_service" without one, as the lake names it).
func eachSentLog(t testing.TB, reqs [][]byte, fn func(svc string, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord)) {
	t.Helper()
	for _, b := range reqs {
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		for _, rl := range req.Logs().ResourceLogs().All() {
			svc := "unknown_service"
			if v, ok := rl.Resource().Attributes().Get("service.name"); ok {
				svc = v.AsString()
			}
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					fn(svc, rl, sl, lr)
				}
			}
		}
	}
}

// TestLogs: log records over three hours come back from the lake with
// every field, newest first or oldest first, within the time range, of
// the services and with the lines asked for.
func TestLogs(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for h := range 3 {
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(h), Resources: 3, ScopesPerResource: 2, TotalRecords: 300,
			Start: base.Add(time.Duration(h)*time.Hour + 20*time.Minute)}))
	}
	writeLogsLake(t, dir, reqs...)
	type rec struct {
		t    int64
		text string
		svc  string
		line string
	}
	var all []rec
	eachSentLog(t, reqs, func(svc string, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) {
		tm, text := logText(rl, sl, lr)
		all = append(all, rec{tm, text, svc, lr.Body().AsString()})
	})
	r := newReader(t, dir)
	svc := all[0].svc
	word := strings.Fields(all[0].line)[0]
	for name, c := range map[string]struct {
		q    lakeread.LogQuery
		keep func(rec) bool
	}{
		"everything, newest first": {lakeread.LogQuery{Start: base, End: base.Add(4 * time.Hour), Newest: true}, func(rec) bool { return true }},
		"one hour, oldest first": {lakeread.LogQuery{Start: base.Add(time.Hour), End: base.Add(2 * time.Hour), Oldest: true},
			func(x rec) bool {
				return x.t >= base.Add(time.Hour).UnixNano() && x.t < base.Add(2*time.Hour).UnixNano()
			}},
		"a service": {lakeread.LogQuery{Start: base, End: base.Add(4 * time.Hour), Newest: true, Service: func(s string) bool { return s == svc }},
			func(x rec) bool { return x.svc == svc }},
		"a word in the line": {lakeread.LogQuery{Start: base, End: base.Add(4 * time.Hour), Newest: true, Contains: [][]byte{[]byte(word)}},
			func(x rec) bool { return strings.Contains(x.line, word) }},
	} {
		var want []rec
		for _, x := range all {
			if c.keep(x) {
				want = append(want, x)
			}
		}
		slices.SortStableFunc(want, func(a, b rec) int {
			if c.q.Oldest {
				return int(a.t - b.t)
			}
			return int(b.t - a.t)
		})
		var got []*lakeread.LogRecord
		if err := r.Logs(context.Background(), "acme", c.q, func(lr *lakeread.LogRecord) bool { got = append(got, lr); return true }); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("%s: %d records, want %d", name, len(got), len(want))
		}
		// In order by time; the same records (as sets: equal times may
		// come in either order).
		var gotText, wantText []string
		for i := range got {
			if i > 0 && (c.q.Oldest && got[i].Time < got[i-1].Time || !c.q.Oldest && got[i].Time > got[i-1].Time) {
				t.Fatalf("%s: record %d out of order", name, i)
			}
			gotText = append(gotText, recText(got[i]))
			wantText = append(wantText, want[i].text)
		}
		slices.Sort(gotText)
		slices.Sort(wantText)
		for i := range gotText {
			if gotText[i] != wantText[i] {
				t.Fatalf("%s: record differs:\n got  %s\n want %s", name, gotText[i], wantText[i])
			}
		}
	}
	// A caller that stops after 5 reads no further.
	n := 0
	r.Logs(context.Background(), "acme", lakeread.LogQuery{Start: base, End: base.Add(4 * time.Hour), Newest: true}, func(*lakeread.LogRecord) bool {
		n++
		return n < 5
	})
	if n != 5 {
		t.Errorf("stopped after %d records, want 5", n)
	}
	// Limit is when to wait for the caller, not a cap: a caller that
	// takes more (its pipeline dropped some) gets every record, in order.
	var whole, limited []int64
	for _, c := range []struct {
		limit int
		got   *[]int64
	}{{0, &whole}, {3, &limited}, {1, &limited}} {
		*c.got = (*c.got)[:0]
		err := r.Logs(context.Background(), "acme", lakeread.LogQuery{Start: base, End: base.Add(4 * time.Hour), Newest: true, Limit: c.limit},
			func(lr *lakeread.LogRecord) bool { *c.got = append(*c.got, lr.Time); return true })
		if err != nil {
			t.Fatal(err)
		}
		if c.limit > 0 && (!slices.Equal(limited, whole) || len(whole) == 0) {
			t.Fatalf("limit %d: %d records, want %d as without", c.limit, len(limited), len(whole))
		}
	}
	// A caller that panics gets an error, not a crash of the reader's
	// goroutine that calls it, and is not called again.
	n = 0
	err := r.Logs(context.Background(), "acme", lakeread.LogQuery{Start: base, End: base.Add(4 * time.Hour), Newest: true}, func(*lakeread.LogRecord) bool {
		n++
		if n == 3 {
			panic("the caller's bug")
		}
		return true
	})
	if err == nil || !strings.Contains(err.Error(), "the caller's bug") || n != 3 {
		t.Errorf("a panicking caller: %d calls, error %v", n, err)
	}
}

// TestLogsInOrderAcrossFiles: an hour of many files whose times overlap,
// some without counts (so without time bounds), read newest first and
// oldest first, with and without a service, whole and stopped after a
// limit: the records come in order and are the ones the sent requests
// hold (by time: the first n times of the sent records, in order). The
// reader gives candidates out file group by file group (fileBounds):
// this holds it to never give one before a file that may precede it is
// read.
func TestLogsInOrderAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for k := range 10 {
		// File k: a record every 3 s for 3 min from k*50 s on, of two
		// services, so each file overlaps the next three across
		// minute boundaries.
		ld := plog.NewLogs()
		for sv := range 2 {
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%d", sv))
			sl := rl.ScopeLogs().AppendEmpty()
			for i := range 60 {
				lr := sl.LogRecords().AppendEmpty()
				at := base.Add(time.Duration(k)*50*time.Second + time.Duration(i)*3*time.Second + time.Duration(sv*7+k)*time.Millisecond)
				lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
				lr.Body().SetStr(fmt.Sprintf("file %d record %d", k, i))
			}
		}
		req, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, req)
		cfg := lake.DefaultWriterConfig()
		cfg.Dir, cfg.NoIndexes = dir, k%4 == 3 // some files without counts
		w, err := lake.NewWriter(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(otlpwire.SignalLogs, "acme", req); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	type sent struct {
		t   int64
		svc string
	}
	var all []sent
	eachSentLog(t, reqs, func(svc string, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) {
		tm, _ := logText(rl, sl, lr)
		all = append(all, sent{tm, svc})
	})
	r := newReader(t, dir)
	svc := all[len(all)/2].svc
	for _, oldest := range []bool{false, true} {
		for _, one := range []bool{false, true} {
			for _, limit := range []int{0, 7, 150} {
				q := lakeread.LogQuery{Start: base, End: base.Add(time.Hour), Newest: !oldest, Oldest: oldest}
				var want []int64
				for _, s := range all {
					if s.t >= base.UnixNano() && s.t < base.Add(time.Hour).UnixNano() && (!one || s.svc == svc) {
						want = append(want, s.t)
					}
				}
				if one {
					q.Service = func(s string) bool { return s == svc }
				}
				slices.Sort(want)
				if !oldest {
					slices.Reverse(want)
				}
				if limit > 0 {
					want = want[:min(limit, len(want))]
				}
				// Limit (a hint of when the caller may stop) as the
				// caller's, below it, or none: the same records.
				for _, hint := range []int{0, limit, 3} {
					q.Limit = hint
					var got []int64
					err := r.Logs(context.Background(), "acme", q, func(lr *lakeread.LogRecord) bool {
						got = append(got, lr.Time)
						return limit == 0 || len(got) < limit
					})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Errorf("oldest %v, one service %v, limit %d, hint %d: %d times, want %d; first difference at %d", oldest, one, limit, hint, len(got), len(want),
							func() int {
								for i := range min(len(got), len(want)) {
									if got[i] != want[i] {
										return i
									}
								}
								return min(len(got), len(want))
							}())
					}
				}
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "*", "*", "*", "*.parquet"))
	if len(files) != 10 {
		t.Fatalf("%d files, want 10", len(files))
	}
}

// TestLogsAttrValues: a query for attribute values (AttrValues), with
// and without their labels (AttrNames, AttrLabel), gets every record
// that holds them, the resource's attributes and the record's, each
// value under its label's key; and only records holding each value
// somewhere. With labels, the reader looks in the resources' JSON only
// for values under a label one of the file's resource keys has.
func TestLogsAttrValues(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for h := range 2 {
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(h), Resources: 4, ScopesPerResource: 2, TotalRecords: 400,
			Start: base.Add(time.Duration(h)*time.Hour + 20*time.Minute)}))
	}
	writeLogsLake(t, dir, reqs...)
	label := func(k string) string { return strings.NewReplacer(".", "_", "-", "_").Replace(k) }
	type rec struct {
		text string
		res  map[string]string // label -> value
		attr map[string]string
	}
	var all []rec
	eachSentLog(t, reqs, func(svc string, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) {
		_, text := logText(rl, sl, lr)
		x := rec{text, map[string]string{}, map[string]string{}}
		for k, v := range rl.Resource().Attributes().All() {
			if v.Type() == pcommon.ValueTypeStr {
				x.res[label(k)] = v.Str()
			}
		}
		for k, v := range lr.Attributes().All() {
			if v.Type() == pcommon.ValueTypeStr {
				x.attr[label(k)] = v.Str()
			}
		}
		all = append(all, x)
	})
	// A resource attribute whose value differs between resources, and a
	// record attribute whose value some records have.
	pick := func(of func(rec) map[string]string) (string, string) {
		count := map[[2]string]int{}
		for _, x := range all {
			for k, v := range of(x) {
				if k != "service_name" && v != "" {
					count[[2]string{k, v}]++
				}
			}
		}
		var best [2]string
		for kv, n := range count {
			if n < len(all)/2 && n > count[best] || n == count[best] && n < len(all)/2 && (kv[0] < best[0] || kv[0] == best[0] && kv[1] < best[1]) {
				best = kv
			}
		}
		if count[best] == 0 {
			t.Fatal("no attribute value held by some records")
		}
		return best[0], best[1]
	}
	resKey, resVal := pick(func(x rec) map[string]string { return x.res })
	attrKey, attrVal := pick(func(x rec) map[string]string { return x.attr })
	r := newReader(t, dir)
	for _, c := range []struct {
		name          string
		labels, vals  []string
		labelsOnQuery bool
	}{
		{"resource value", []string{resKey}, []string{resVal}, false},
		{"resource value under its label", []string{resKey}, []string{resVal}, true},
		{"record value under its label", []string{attrKey}, []string{attrVal}, true},
		{"both under their labels", []string{resKey, attrKey}, []string{resVal, attrVal}, true},
	} {
		q := lakeread.LogQuery{Start: base, End: base.Add(3 * time.Hour), AttrValues: c.vals}
		if c.labelsOnQuery {
			q.AttrNames, q.AttrLabel = c.labels, label
		}
		got := map[string]bool{}
		if err := r.Logs(context.Background(), "acme", q, func(lr *lakeread.LogRecord) bool { got[recText(lr)] = true; return true }); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := 0
		for _, x := range all {
			holds, somewhere := true, true
			for i, l := range c.labels {
				holds = holds && (x.res[l] == c.vals[i] || x.attr[l] == c.vals[i])
				in := strings.Contains(x.text, c.vals[i])
				for _, v := range x.res {
					in = in || strings.Contains(v, c.vals[i])
				}
				somewhere = somewhere && in
			}
			if holds {
				want++
				if !got[x.text] {
					t.Fatalf("%s: record missing: %s", c.name, x.text)
				}
			}
			if got[x.text] && !somewhere {
				t.Fatalf("%s: record without the values kept: %s", c.name, x.text)
			}
		}
		if want == 0 || want == len(all) {
			t.Fatalf("%s: %d of %d records hold the values: the test needs some", c.name, want, len(all))
		}
	}
}
