package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestUsage: no command, an unknown one and a compare without its
// required flags are usage errors; -h prints the usage and succeeds.
func TestUsage(t *testing.T) {
	var out, errw bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &out, &errw); err != nil || !strings.Contains(errw.String(), "usage: readcompare") {
		t.Errorf("-h: %v, %q", err, errw.String())
	}
	for _, args := range [][]string{nil, {"nope"}, {"logs"}, {"traces", "--wirehouse", "http://x"}, {"tee"},
		{"logs", "--wirehouse", "http://x", "--peer", "http://y", "--start", "2026-01-01T00:00:00Z", "--end", "2025-01-01T00:00:00Z"}} {
		var ue usageError
		if err := run(context.Background(), args, &out, &errw); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

// TestLineNormalizers: Loki's streams and VictoriaLogs' JSON lines of the
// same lines normalize to the same items.
func TestLineNormalizers(t *testing.T) {
	loki := `{"status":"success","data":{"resultType":"streams","result":[
		{"stream":{"service_name":"a"},"values":[["1767225600000000002","two"]]},
		{"stream":{"service_name":"b"},"values":[["1767225600000000001","one"]]}]}}`
	vl := `{"_time":"2026-01-01T00:00:00.000000001Z","_msg":"one","_stream":"{service.name=\"b\"}","x":"y"}
{"_time":"2026-01-01T00:00:00.000000002Z","_msg":"two","_stream":"{service.name=\"a\"}"}
`
	a, err := lokiLines([]byte(loki))
	if err != nil {
		t.Fatal(err)
	}
	b, err := logsqlLines([]byte(vl))
	if err != nil {
		t.Fatal(err)
	}
	if d := diffAnswers(a, b, "loki", "vl"); d != "" || a.size != 2 {
		t.Errorf("%v and %v: %s", a, b, d)
	}
}

// TestMetricNormalizers: a Loki point at t is the LogsQL bucket at
// t-step, in hits and in stats_query_range; empty buckets are left out.
func TestMetricNormalizers(t *testing.T) {
	loki := `{"status":"success","data":{"resultType":"matrix","result":[
		{"metric":{"severity_text":"INFO"},"values":[[1767225660,"3"],[1767225720,"4"]]},
		{"metric":{"severity_text":"WARN"},"values":[[1767225720,"1"]]}]}}`
	hits := `{"hits":[{"fields":{"severity_text":"INFO"},"timestamps":["2026-01-01T00:00:00Z","2026-01-01T00:01:00Z"],"values":[3,4],"total":7},
		{"fields":{"severity_text":"WARN"},"timestamps":["2026-01-01T00:00:00Z","2026-01-01T00:01:00Z"],"values":[0,1],"total":1}]}`
	a, err := lokiMatrix("severity_text", time.Minute)([]byte(loki))
	if err != nil {
		t.Fatal(err)
	}
	b, err := logsqlHits("severity_text")([]byte(hits))
	if err != nil {
		t.Fatal(err)
	}
	if d := diffAnswers(a, b, "loki", "hits"); d != "" {
		t.Errorf("hits: %s", d)
	}
	vl := `{"status":"success","data":{"resultType":"matrix","result":[
		{"metric":{"__name__":"hits","service.name":"INFO"},"values":[[1767225600,"3"],[1767225660,"4"]]},
		{"metric":{"__name__":"hits","service.name":"WARN"},"values":[[1767225660,"1"]]}]}}`
	c, err := promMatrix("service.name")([]byte(vl))
	if err != nil {
		t.Fatal(err)
	}
	if d := diffAnswers(a, c, "loki", "stats_query_range"); d != "" {
		t.Errorf("stats_query_range: %s", d)
	}
	if _, err := lokiMatrix("x", time.Minute)([]byte(`{"data":{"resultType":"vector","result":[]}}`)); err == nil {
		t.Error("a vector read as a matrix")
	}
}

// TestTrimLimitTies: lines tied at the oldest time of two answers cut by
// the limit are left out; answers not both at the limit, or cut at
// different times, are compared whole.
func TestTrimLimitTies(t *testing.T) {
	a := answer{items: []string{"5\tx", "5\ty", "9\tz"}}
	b := answer{items: []string{"5\tw", "5\tx", "9\tz"}}
	x, y := trimLimitTies(a, b, 3)
	if !slices.Equal(x.items, []string{"9\tz"}) || !slices.Equal(y.items, x.items) {
		t.Errorf("tied: %v, %v", x.items, y.items)
	}
	if x, _ := trimLimitTies(a, b, 4); len(x.items) != 3 {
		t.Errorf("under the limit trimmed: %v", x.items)
	}
	c := answer{items: []string{"4\tv", "5\tx", "9\tz"}}
	if x, y := trimLimitTies(a, c, 3); len(x.items) != 3 || len(y.items) != 3 {
		t.Errorf("different cuts trimmed: %v, %v", x.items, y.items)
	}
}

// TestTrimTopkTies: a tie at the smallest count of a topk lets the labels
// there differ, not the counts or the labels above.
func TestTrimTopkTies(t *testing.T) {
	a := sorted(answer{items: []string{"a\t9", "b\t5", "c\t3"}}, 3)
	b := sorted(answer{items: []string{"a\t9", "b\t5", "d\t3"}}, 3)
	if x, y := trimTopkTies(a, b); diffAnswers(x, y, "a", "b") != "" {
		t.Errorf("tie at 3 not forgiven: %v, %v", x.items, y.items)
	}
	c := sorted(answer{items: []string{"e\t9", "b\t5", "c\t3"}}, 3)
	if x, y := trimTopkTies(a, c); diffAnswers(x, y, "a", "c") == "" {
		t.Error("another label above the tie forgiven")
	}
}

// TestJaegerSpans: trace ids are padded to 32 digits and span ids to 16,
// in lower case; traces are counted.
func TestJaegerSpans(t *testing.T) {
	a, err := jaegerSpans([]byte(`{"data":[{"traceID":"AB","spans":[{"traceID":"AB","spanID":"1"},{"traceID":"ab","spanID":"2"}]},
		{"traceID":"c","spans":[{"traceID":"c","spanID":"3"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{strings.Repeat("0", 31) + "c\t0000000000000003", strings.Repeat("0", 30) + "ab\t0000000000000001", strings.Repeat("0", 30) + "ab\t0000000000000002"}
	if !slices.Equal(a.items, want) || a.size != 3 || traceCount(a) != 2 {
		t.Errorf("got %q (%d spans, %d traces)", a.items, a.size, traceCount(a))
	}
	if got := shortDuration(90 * time.Second); got != "1m30s" {
		t.Errorf("shortDuration: %s", got)
	}
	if got := shortDuration(time.Hour); got != "1h" {
		t.Errorf("shortDuration: %s", got)
	}
}

// TestCompare: two servers giving the same answer make a row; a
// different answer makes a row marked NO and an error with the diff.
func TestCompare(t *testing.T) {
	answers := map[string]string{"/a": "x\ny\n", "/b": "x\nz\n"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, answers[r.URL.Path]) //nolint:errcheck
	}))
	defer srv.Close()
	lines := func(b []byte) (answer, error) {
		items := strings.Fields(string(b))
		return sorted(answer{items: items}, len(items)), nil
	}
	ours := &server{name: "ours", base: srv.URL, pid: os.Getpid(), client: srv.Client()}
	peer := &server{name: "peer", base: srv.URL, client: srv.Client()}
	same := query{name: "same", unit: "lines", ours: []call{{path: "/a", norm: lines}}, peer: []call{{path: "/a", norm: lines}}}
	var out, errw bytes.Buffer
	if err := compare(context.Background(), []query{same}, ours, peer, 2, time.Minute, &out, &errw); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| same | 2 lines | 2/2 |") || !strings.Contains(out.String(), "| yes |") {
		t.Errorf("table:\n%s", out.String())
	}
	differ := query{name: "differ", unit: "lines", ours: []call{{path: "/a", norm: lines}}, peer: []call{{path: "/b", norm: lines}}}
	out.Reset()
	err := compare(context.Background(), []query{differ}, ours, peer, 1, time.Minute, &out, &errw)
	if err == nil || !strings.Contains(err.Error(), "only in ours: y") || !strings.Contains(err.Error(), "only in peer: z") {
		t.Errorf("mismatch: %v", err)
	}
	if !strings.Contains(out.String(), "**NO**") {
		t.Errorf("table:\n%s", out.String())
	}
	// A failing query is a row marked error, and the next still runs; a
	// budget of 0 stops the repetitions at minRuns.
	failing := query{name: "failing", unit: "lines", ours: []call{{path: "/missing", norm: func([]byte) (answer, error) { return answer{}, errors.New("no answer") }}},
		peer: []call{{path: "/a", norm: lines}}}
	out.Reset()
	err = compare(context.Background(), []query{failing, same}, ours, peer, 100, 0, &out, &errw)
	if err == nil || !strings.Contains(err.Error(), "failing: ours /missing: no answer") {
		t.Errorf("failing: %v", err)
	}
	if !strings.Contains(out.String(), "| failing | - |") || !strings.Contains(out.String(), "| same | 2 lines | 3/3 |") {
		t.Errorf("table:\n%s", out.String())
	}
}

// TestProcessCPU: the test's own CPU time reads and grows.
func TestProcessCPU(t *testing.T) {
	c0, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for x, t0 := 0, time.Now(); time.Since(t0) < 50*time.Millisecond; x++ {
		_ = fmt.Sprint(x)
	}
	c1, err := processCPU(os.Getpid())
	if err != nil || c1 < c0 {
		t.Errorf("%v then %v, %v", c0, c1, err)
	}
}

// TestTee: every request reaches every target with its body and content
// headers; a failing target fails the request with 502.
func TestTee(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]string{}
	target := func(name string, status int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got[name] = append(got[name], r.URL.String()+" "+r.Header.Get("Content-Type")+" "+string(b))
			mu.Unlock()
			w.WriteHeader(status)
		}))
	}
	a, b, bad := target("a", 200), target("b", 200), target("bad", 503)
	defer a.Close()
	defer b.Close()
	defer bad.Close()
	post := func(tt *tee) int {
		srv := httptest.NewServer(tt)
		defer srv.Close()
		resp, err := http.Post(srv.URL+"/v1/logs", "application/x-protobuf", strings.NewReader("body"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	good := newTee([]string{a.URL + "/v1/logs", b.URL + "/insert?x=1"})
	if s := post(good); s != 200 {
		t.Errorf("status %d", s)
	}
	if !slices.Equal(got["a"], []string{"/v1/logs application/x-protobuf body"}) || !slices.Equal(got["b"], []string{"/insert?x=1 application/x-protobuf body"}) {
		t.Errorf("targets got %q", got)
	}
	failing := newTee([]string{a.URL, bad.URL})
	if s := post(failing); s != http.StatusBadGateway {
		t.Errorf("status %d with a failing target", s)
	}
	if !strings.Contains(failing.summary(), bad.URL+": 1 failed") {
		t.Errorf("summary:\n%s", failing.summary())
	}
}
