package tempohttp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lakeread/lakereadtest"
	"github.com/wirehouse/wirehouse/internal/tempohttp"
)

// searchTraces: ten traces a minute apart, ending ten minutes ago. Trace
// n: web "GET /n" (server, root, 100+n ms, http.status_code 200) calls db
// "query" (client, 10 ms, db.system postgres), which is an error in the
// odd traces; trace 9 has no root (its web span's parent was never sent).
func searchTraces(t testing.TB) ([]byte, time.Time) {
	t.Helper()
	base := time.Now().Add(-20 * time.Minute).Truncate(5 * time.Minute) // whole steps: metrics ranges are aligned to them
	td := ptrace.NewTraces()
	for n := range 10 {
		tid := pcommon.TraceID{0xaa, byte(n)}
		start := base.Add(time.Duration(n) * time.Minute)
		add := func(svc, name string, id, parent byte, kind ptrace.SpanKind, off, dur time.Duration) ptrace.Span {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", svc)
			sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			sp.SetTraceID(tid)
			sp.SetSpanID(pcommon.SpanID{byte(n), id})
			if parent != 0 {
				sp.SetParentSpanID(pcommon.SpanID{byte(n), parent})
			}
			sp.SetName(name)
			sp.SetKind(kind)
			sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start.Add(off)))
			sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(off + dur)))
			return sp
		}
		var rootParent byte
		if n == 9 {
			rootParent = 99
		}
		web := add("web", fmt.Sprintf("GET /%d", n), 1, rootParent, ptrace.SpanKindServer, 0, time.Duration(100+n)*time.Millisecond)
		web.Attributes().PutInt("http.status_code", 200)
		db := add("db", "query", 2, 1, ptrace.SpanKindClient, 5*time.Millisecond, 10*time.Millisecond)
		db.Attributes().PutStr("db.system", "postgres")
		if n%2 == 1 {
			db.Status().SetCode(ptrace.StatusCodeError)
		}
	}
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return body, base
}

// The JSON of Tempo's search answer, as a client reads it.
type searchJSON struct {
	Traces []struct {
		TraceID           string `json:"traceID"`
		RootServiceName   string `json:"rootServiceName"`
		RootTraceName     string `json:"rootTraceName"`
		StartTimeUnixNano string `json:"startTimeUnixNano"`
		DurationMs        int64  `json:"durationMs"`
		SpanSet           struct {
			Matched int `json:"matched"`
		} `json:"spanSet"`
		SpanSets []struct {
			Matched int `json:"matched"`
			Spans   []struct {
				SpanID            string `json:"spanID"`
				Name              string `json:"name"`
				StartTimeUnixNano string `json:"startTimeUnixNano"`
				DurationNanos     string `json:"durationNanos"`
				Attributes        []struct {
					Key   string         `json:"key"`
					Value map[string]any `json:"value"`
				} `json:"attributes"`
			} `json:"spans"`
			Attributes []struct {
				Key   string         `json:"key"`
				Value map[string]any `json:"value"`
			} `json:"attributes"`
		} `json:"spanSets"`
	} `json:"traces"`
	Metrics struct {
		InspectedTraces int `json:"inspectedTraces"`
	} `json:"metrics"`
}

// TestSearch: /api/search answers TraceQL and tags searches in Tempo's
// JSON, each field checked against the traces as built.
func TestSearch(t *testing.T) {
	body, base := searchTraces(t)
	api := serve(t, body)
	window := fmt.Sprintf("&start=%d&end=%d", base.Add(-time.Minute).Unix(), base.Add(15*time.Minute).Unix())
	search := func(params string) (int, searchJSON, string) {
		t.Helper()
		code, ctype, b := get(t, api+"/api/search?"+params+window, "")
		var s searchJSON
		if code == http.StatusOK {
			if ctype != "application/json" {
				t.Fatalf("%s: Content-Type %q", params, ctype)
			}
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("%s: %v: %s", params, err, b)
			}
		}
		return code, s, string(b)
	}
	q := func(traceql string) string { return "q=" + url.QueryEscape(traceql) }

	// Errors in db called by web: traces 1, 3, 5, 7, 9, the newest first.
	code, s, raw := search(q(`{ resource.service.name = "web" } > { status = error }`))
	if code != http.StatusOK || len(s.Traces) != 5 {
		t.Fatalf("structural: %d %s", code, raw)
	}
	for i, tr := range s.Traces {
		n := 9 - 2*i
		start := base.Add(time.Duration(n) * time.Minute)
		if tr.TraceID != fmt.Sprintf("aa%02x0000000000000000000000000000", n) || tr.StartTimeUnixNano != strconv.FormatInt(start.UnixNano(), 10) ||
			tr.DurationMs != int64(100+n) || tr.SpanSet.Matched != 1 || len(tr.SpanSets) != 1 {
			t.Errorf("trace %d: %+v", n, tr)
		}
		wantRoot, wantName := "web", fmt.Sprintf("GET /%d", n)
		if n == 9 {
			wantRoot, wantName = "<root span not yet received>", ""
		}
		if tr.RootServiceName != wantRoot || tr.RootTraceName != wantName {
			t.Errorf("trace %d: root %q %q, want %q %q", n, tr.RootServiceName, tr.RootTraceName, wantRoot, wantName)
		}
		sp := tr.SpanSets[0].Spans[0]
		if sp.SpanID != fmt.Sprintf("%02x02000000000000", n) || sp.Name != "query" ||
			sp.StartTimeUnixNano != strconv.FormatInt(start.Add(5*time.Millisecond).UnixNano(), 10) || sp.DurationNanos != "10000000" {
			t.Errorf("trace %d span: %+v", n, sp)
		}
	}
	// The attributes the query reads are on its spans, in AnyValue shape.
	_, s, raw = search(q(`{ span.db.system = "postgres" && status = error }`) + "&limit=2")
	if len(s.Traces) != 2 || s.Traces[0].TraceID[:4] != "aa09" || s.Traces[1].TraceID[:4] != "aa07" {
		t.Fatalf("limit 2: %s", raw)
	}
	if a := s.Traces[0].SpanSets[0].Spans[0].Attributes; len(a) != 1 || a[0].Key != "db.system" || a[0].Value["stringValue"] != "postgres" {
		t.Errorf("attributes %+v", a)
	}
	_, s, raw = search(q(`{ span.http.status_code = 200 } | select(resource.service.name)`) + "&limit=1")
	if a := s.Traces[0].SpanSets[0].Spans[0].Attributes; len(s.Traces) != 1 || len(a) != 2 ||
		a[0].Key != "http.status_code" || a[0].Value["intValue"] != "200" || a[1].Key != "service.name" || a[1].Value["stringValue"] != "web" {
		t.Errorf("select: %s", raw)
	}
	// spss bounds the spans shown, not matched; by() names its spansets.
	_, s, raw = search(q(`{ } | by(resource.service.name)`) + "&limit=1&spss=1")
	if len(s.Traces) != 1 || len(s.Traces[0].SpanSets) != 2 {
		t.Fatalf("by: %s", raw)
	}
	for _, ss := range s.Traces[0].SpanSets {
		if ss.Matched != 1 || len(ss.Spans) != 1 || len(ss.Attributes) != 1 || ss.Attributes[0].Key != "resource.service.name" {
			t.Errorf("by spanset %+v", ss)
		}
	}
	_, s, raw = search(q(`{ resource.service.name = "db" }`) + "&limit=3&spss=1")
	if len(s.Traces) != 3 || len(s.Traces[0].SpanSets[0].Spans) != 1 {
		t.Errorf("spss: %s", raw)
	}
	// Tags (logfmt) are equalities; minDuration bounds the trace.
	_, s, raw = search("tags=" + url.QueryEscape(`service.name=db db.system="postgres"`) + "&minDuration=107ms")
	if len(s.Traces) != 3 || s.Traces[2].TraceID[:4] != "aa07" {
		t.Errorf("tags and minDuration: %s", raw)
	}
	// Nothing, everything.
	if _, s, raw = search(q(`{ name = "nope" }`)); len(s.Traces) != 0 || !strings.Contains(raw, `"traces":[]`) {
		t.Errorf("no match: %s", raw)
	}
	if _, s, _ = search(""); len(s.Traces) != 10 {
		t.Errorf("no query: %d traces, want 10", len(s.Traces))
	}
	// Bad requests: Tempo's 400 with the line and column.
	for params, want := range map[string]string{
		q(`{ .a = }`):             "parse error at line 1, col 8",
		q("{ .a = 1 }\n| count("): "parse error at line 2, col 9",
		q(`{ } | rate()`):         "metrics query",
		q(`{ .a =~ "(" }`):        "regular expression",
		"limit=0":                 "invalid limit",
		"spss=x":                  "invalid spss",
		"minDuration=fast":        "invalid minDuration",
		"tags=novalue":            "invalid tags",
		"tags=a%3Db&" + q(`{ }`):  "not both",
	} {
		code, _, raw := search(params)
		if code != http.StatusBadRequest || !strings.Contains(raw, want) {
			t.Errorf("%s: %d %q, want 400 with %q", params, code, raw, want)
		}
	}
}

// TestTags: the tag names and values endpoints over searchTraces, each
// answer written out from how the traces were built.
func TestTags(t *testing.T) {
	body, base := searchTraces(t)
	api := serve(t, body)
	window := fmt.Sprintf("start=%d&end=%d", base.Add(-time.Minute).Unix(), base.Add(15*time.Minute).Unix())
	check := func(path, want string) {
		t.Helper()
		code, _, b := get(t, api+path, "")
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, b)
		}
		var got, w any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("%s:\n got  %s\n want %s", path, gb, wb)
		}
	}
	check("/api/search/tags", `{"tagNames":["db.system","http.status_code","service.name"]}`)
	check("/api/status/buildinfo", `{"version":"2.6.0","revision":"wirehouse","branch":"","buildUser":"","buildDate":"","goVersion":""}`)
	code, _, b := get(t, api+"/api/v2/search/tags", "")
	var v2 struct {
		Scopes []struct {
			Name string   `json:"name"`
			Tags []string `json:"tags"`
		} `json:"scopes"`
	}
	if err := json.Unmarshal(b, &v2); code != http.StatusOK || err != nil {
		t.Fatalf("v2 tags: %d %v %s", code, err, b)
	}
	got := map[string]string{}
	for _, s := range v2.Scopes {
		got[s.Name] = strings.Join(s.Tags, ",")
	}
	if got["resource"] != "service.name" || got["span"] != "db.system,http.status_code" || got["event"] != "" || got["link"] != "" ||
		got["instrumentation"] != "" || !strings.Contains(got["intrinsic"], "duration,") || !strings.Contains(got["intrinsic"], ",status,") || len(got) != 6 {
		t.Errorf("v2 tags: %v", got)
	}
	check("/api/v2/search/tags?scope=span", `{"scopes":[{"name":"span","tags":["db.system","http.status_code"]}]}`)
	check("/api/v2/search/tag/resource.service.name/values", `{"tagValues":[{"type":"string","value":"db"},{"type":"string","value":"web"}]}`)
	check("/api/v2/search/tag/rootServiceName/values", `{"tagValues":[{"type":"string","value":"db"},{"type":"string","value":"web"}]}`)
	check("/api/v2/search/tag/span.http.status_code/values", `{"tagValues":[{"type":"int","value":"200"}]}`)
	check("/api/v2/search/tag/.db.system/values", `{"tagValues":[{"type":"string","value":"postgres"}]}`)
	check("/api/v2/search/tag/db.system/values", `{"tagValues":[{"type":"string","value":"postgres"}]}`)
	check("/api/v2/search/tag/status/values", `{"tagValues":[{"type":"keyword","value":"error"},{"type":"keyword","value":"ok"},{"type":"keyword","value":"unset"}]}`)
	names := `{"type":"string","value":"GET /0"}`
	for n := 1; n < 10; n++ {
		names += fmt.Sprintf(`,{"type":"string","value":"GET /%d"}`, n)
	}
	check("/api/v2/search/tag/name/values", `{"tagValues":[`+names+`,{"type":"string","value":"query"}]}`)
	check("/api/search/tag/service.name/values", `{"tagValues":["db","web"]}`)
	check("/api/search/tag/http.status_code/values", `{"tagValues":["200"]}`)
	// q keeps the values of the spans it matches.
	check("/api/v2/search/tag/name/values?q="+url.QueryEscape(`{ resource.service.name = "db" }`)+"&"+window,
		`{"tagValues":[{"type":"string","value":"query"}]}`)
	check("/api/v2/search/tag/resource.service.name/values?q="+url.QueryEscape(`{ span.http.status_code = 200 }`)+"&"+window,
		`{"tagValues":[{"type":"string","value":"web"}]}`)
	check("/api/v2/search/tag/span.db.system/values?q="+url.QueryEscape(`{ status = error && name = "GET /1" }`)+"&"+window,
		`{"tagValues":[]}`)
	for path, want := range map[string]string{
		"/api/v2/search/tags?scope=nope":                                  "invalid scope",
		"/api/v2/search/tag/name/values?q=" + url.QueryEscape(`{ .a = }`): "parse error at line 1",
		"/api/v2/search/tag/" + url.PathEscape("a b") + "/values":         "invalid tag",
		"/api/search/tags?start=yesterday":                                "invalid start",
	} {
		code, _, b := get(t, api+path, "")
		if code != http.StatusBadRequest || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d %s, want 400 with %q", path, code, b, want)
		}
	}
}

// TestMetricsQuery: /api/metrics/query_range and /api/metrics/query in
// Tempo's series JSON over searchTraces (one trace a minute, db's span an
// error in the odd ones).
func TestMetricsQuery(t *testing.T) {
	body, base := searchTraces(t)
	api := serve(t, body)
	rng := fmt.Sprintf("&start=%d&end=%d", base.Unix(), base.Add(10*time.Minute).Unix())
	var res struct {
		Series []struct {
			Labels []struct {
				Key   string         `json:"key"`
				Value map[string]any `json:"value"`
			} `json:"labels"`
			Samples []struct {
				TimestampMs string  `json:"timestampMs"`
				Value       float64 `json:"value"`
			} `json:"samples"`
			Value      *float64 `json:"value"`
			PromLabels string   `json:"promLabels"`
		} `json:"series"`
	}
	fetch := func(path string) {
		t.Helper()
		code, _, b := get(t, api+path, "")
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, code, b)
		}
		res.Series = nil
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
	}
	// Errors by service, steps of 5 minutes: traces 1 and 3 in the
	// first, 5, 7 and 9 in the second.
	fetch("/api/metrics/query_range?q=" + url.QueryEscape(`{ status = error } | count_over_time() by (resource.service.name)`) + rng + "&step=5m")
	if len(res.Series) != 1 || len(res.Series[0].Labels) != 1 || res.Series[0].Labels[0].Key != "resource.service.name" ||
		res.Series[0].Labels[0].Value["stringValue"] != "db" || res.Series[0].PromLabels != `{resource.service.name="db"}` {
		t.Fatalf("series %+v", res.Series)
	}
	s := res.Series[0].Samples
	if len(s) != 2 || s[0].TimestampMs != strconv.FormatInt(base.UnixMilli(), 10) || s[0].Value != 2 ||
		s[1].TimestampMs != strconv.FormatInt(base.Add(5*time.Minute).UnixMilli(), 10) || s[1].Value != 3 {
		t.Errorf("samples %+v", s)
	}
	// rate per second over steps given in seconds.
	fetch("/api/metrics/query_range?q=" + url.QueryEscape(`{ resource.service.name = "web" } | rate()`) + rng + "&step=300")
	if len(res.Series) != 1 || len(res.Series[0].Labels) != 0 || len(res.Series[0].Samples) != 2 || res.Series[0].Samples[0].Value != 5.0/300 {
		t.Errorf("rate %+v", res.Series)
	}
	// Instant: one value over the range.
	fetch("/api/metrics/query?q=" + url.QueryEscape(`{ } | count_over_time() by (resource.service.name)`) + rng)
	if len(res.Series) != 2 || res.Series[0].Value == nil || *res.Series[0].Value != 10 || *res.Series[1].Value != 10 {
		t.Errorf("instant %+v", res.Series)
	}
	// compare(): the five error spans (db's) are the selection, a series
	// a value of each attribute, labelled __meta_type first; counts over
	// the range.
	fetch("/api/metrics/query_range?q=" + url.QueryEscape(`{ } | compare({ status = error })`) + rng + "&step=10m")
	found := map[string]float64{}
	for _, sr := range res.Series {
		if len(sr.Labels) != 2 {
			t.Fatalf("compare series %+v", sr)
		}
		k := fmt.Sprint(sr.Labels[0].Key, "=", sr.Labels[0].Value["stringValue"], " ", sr.Labels[1].Key, "=", sr.Labels[1].Value["stringValue"])
		for _, p := range sr.Samples { // the range's steps from the epoch: one or two
			found[k] += p.Value
		}
	}
	for k, want := range map[string]float64{"__meta_type=selection status=error": 5, "__meta_type=selection resource.service.name=db": 5,
		"__meta_type=baseline resource.service.name=web": 10, "__meta_type=baseline resource.service.name=db": 5, "__meta_type=selection_total status=nil": 5} {
		if found[k] != want {
			t.Errorf("compare: %s = %v, want %v (series %v)", k, found[k], want, found)
		}
	}
	for path, want := range map[string]string{
		"/api/metrics/query_range?q=" + url.QueryEscape(`{ }`) + rng:                         "metrics function",
		"/api/metrics/query_range?q=" + url.QueryEscape(`{ } | rate(`) + rng:                 "parse error at line 1",
		"/api/metrics/query_range?q=" + url.QueryEscape(`{ } | rate()`) + rng + "&step=1ms":  "steps",
		"/api/metrics/query_range?q=" + url.QueryEscape(`{ } | rate()`) + rng + "&step=soon": "invalid step",
		"/api/metrics/query_range?q=" + url.QueryEscape(`{ } | rate()`) + "&start=10&end=5":  "invalid range",
		"/api/metrics/query_range": "q is required",
	} {
		code, _, b := get(t, api+path, "")
		if code != http.StatusBadRequest || !strings.Contains(string(b), want) {
			t.Errorf("%s: %d %s, want 400 with %q", path, code, b, want)
		}
	}
}

// TestMetricsSpanLocalUnbounded: a span-local metrics query (read from
// span columns) answers over more traces than MaxMetricsTraces, with the
// counts the traces give; one that needs whole traces is 413 past it.
func TestMetricsSpanLocalUnbounded(t *testing.T) {
	body, base := searchTraces(t)
	r := lakereadtest.Reader(t, map[string][]byte{"default": body})
	h, err := tempohttp.New(tempohttp.Config{Reader: r, Tenant: "default", MaxMetricsTraces: 3})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux, "/tempo")
	srv := httptest.NewServer(mux)
	defer srv.Close()
	rng := fmt.Sprintf("&start=%d&end=%d", base.Unix(), base.Add(10*time.Minute).Unix())
	code, _, b := get(t, srv.URL+"/tempo/api/metrics/query?q="+url.QueryEscape(`{ } | count_over_time() by (resource.service.name)`)+rng, "")
	var res struct {
		Series []struct {
			Value *float64 `json:"value"`
		} `json:"series"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &res) != nil || len(res.Series) != 2 || res.Series[0].Value == nil || *res.Series[0].Value != 10 || *res.Series[1].Value != 10 {
		t.Fatalf("span-local over 10 traces with a limit of 3: %d %s", code, b)
	}
	code, _, b = get(t, srv.URL+"/tempo/api/metrics/query?q="+url.QueryEscape(`{ resource.service.name = "web" } > { } | count_over_time()`)+rng, "")
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("structural over 10 traces with a limit of 3: %d %s, want 413", code, b)
	}
}
