package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// refSpan is a span the test sent, for the reference answers.
type refSpan struct {
	svc string
	sp  ptrace.Span
}

// TestServeTraceQLClients: traces from the OpenTelemetry Python SDK
// (every attribute type, events, links, errors, two services) and
// telemetrygen, searched with TraceQL through Tempo's API; each answer's
// traces equal those a reference written here over what the SDK encoded
// (pdata) selects, and telemetrygen's are the four it sent.
func TestServeTraceQLClients(t *testing.T) {
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs the OpenTelemetry Python SDK in a venv")
	tgen := peerFromEnv(t, "WIREHOUSE_TELEMETRYGEN", "installs telemetrygen")
	addrs := startServe(t)
	admin := addrs["admin HTTP"]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 5
	out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "pysdk_traces.py"), addrs["OTLP/gRPC"], strconv.Itoa(n)).Output()
	var res struct {
		Sent   []string
		Failed int
	}
	if err == nil {
		err = json.Unmarshal(out, &res)
	}
	if err != nil || res.Failed > 0 {
		t.Fatalf("pysdk_traces.py: %v, %d exports failed\n%s", err, res.Failed, out)
	}
	traces := map[string][]refSpan{} // trace id (hex) -> its spans as sent
	for _, b64 := range res.Sent {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		for _, rs := range req.Traces().ResourceSpans().All() {
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					traces[sp.TraceID().String()] = append(traces[sp.TraceID().String()], refSpan{svc.Str(), sp})
				}
			}
		}
	}
	if len(traces) != n {
		t.Fatalf("the SDK sent %d traces, want %d", len(traces), n)
	}
	tgArgs := []string{"traces", "--otlp-insecure", "--otlp-endpoint", addrs["OTLP/gRPC"], "--traces", "4", "--child-spans", "3",
		"--service", "tg-traces", "--rate", "0"}
	if out, err := exec.CommandContext(ctx, tgen, tgArgs...).CombinedOutput(); err != nil {
		t.Fatalf("telemetrygen %v: %v\n%s", tgArgs, err, out)
	}

	intAttr := func(sp ptrace.Span, k string) (int64, bool) {
		v, ok := sp.Attributes().Get(k)
		return v.Int(), ok && v.Type() == pcommon.ValueTypeInt
	}
	// any is the traces with a span for which f holds.
	any := func(f func(refSpan) bool) []string {
		var ids []string
		for id, spans := range traces {
			if slices.ContainsFunc(spans, f) {
				ids = append(ids, id)
			}
		}
		return ids
	}
	// parentOf finds a span's parent among its trace's spans.
	parentOf := func(spans []refSpan, s refSpan) (refSpan, bool) {
		for _, p := range spans {
			if !s.sp.ParentSpanID().IsEmpty() && p.sp.SpanID() == s.sp.ParentSpanID() {
				return p, true
			}
		}
		return refSpan{}, false
	}
	// structural is the traces with a span b for which right holds whose
	// parent (or, deep, any ancestor) is a span for which left holds.
	structural := func(deep bool, left, right func(refSpan) bool) []string {
		var ids []string
		for id, spans := range traces {
			found := false
			for _, b := range spans {
				if !right(b) {
					continue
				}
				for p, ok := parentOf(spans, b); ok && !found; p, ok = parentOf(spans, p) {
					found = left(p)
					if !deep {
						break
					}
				}
			}
			if found {
				ids = append(ids, id)
			}
		}
		return ids
	}
	svc := func(name string) func(refSpan) bool { return func(s refSpan) bool { return s.svc == name } }
	for _, c := range []struct {
		q    string
		want []string
	}{
		{`{ resource.service.name = "py-backend" }`, any(svc("py-backend"))},
		{`{ span.test.id = 3 }`, any(func(s refSpan) bool { v, ok := intAttr(s.sp, "test.id"); return ok && v == 3 })},
		{`{ span.test.id >= 2 && span.test.ratio > 0.2 && span.test.flag = true }`, any(func(s refSpan) bool {
			v, ok := intAttr(s.sp, "test.id")
			r, _ := s.sp.Attributes().Get("test.ratio")
			f, _ := s.sp.Attributes().Get("test.flag")
			return ok && v >= 2 && r.Double() > 0.2 && f.Bool()
		})},
		{`{ status = error && kind = server && statusMessage = "payment declined" }`, any(func(s refSpan) bool {
			return s.sp.Status().Code() == ptrace.StatusCodeError && s.sp.Kind() == ptrace.SpanKindServer && s.sp.Status().Message() == "payment declined"
		})},
		{`{ event:name = "cart loaded" && event.items = 3 }`, any(func(s refSpan) bool {
			for _, e := range s.sp.Events().All() {
				if v, ok := e.Attributes().Get("items"); e.Name() == "cart loaded" && ok && v.Int() == 3 {
					return true
				}
			}
			return false
		})},
		{`{ link.link.reason = "retry-of" }`, any(func(s refSpan) bool {
			for _, l := range s.sp.Links().All() {
				if v, ok := l.Attributes().Get("link.reason"); ok && v.Str() == "retry-of" {
					return true
				}
			}
			return false
		})},
		{`{ resource.service.name = "py-frontend" && kind = client } > { resource.service.name = "py-backend" }`,
			structural(false, func(s refSpan) bool { return s.svc == "py-frontend" && s.sp.Kind() == ptrace.SpanKindClient }, svc("py-backend"))},
		{`{ kind = server } >> { name = "decode rows" }`,
			structural(true, func(s refSpan) bool { return s.sp.Kind() == ptrace.SpanKindServer }, func(s refSpan) bool { return s.sp.Name() == "decode rows" })},
		{`{ name = "decode rows" } > { }`, nil}, // a leaf: no children
	} {
		got := searchIDs(t, admin, c.q)
		slices.Sort(got)
		slices.Sort(c.want)
		if len(c.want) == 0 && c.q != `{ name = "decode rows" } > { }` {
			t.Fatalf("%s: the reference selects nothing: the test's traces do not exercise it", c.q)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got  %v\n want %v", c.q, got, c.want)
		}
	}
	// telemetrygen's four traces of a root and three children.
	if got := searchIDs(t, admin, `{ resource.service.name = "tg-traces" } | count() = 4`); len(got) != 4 {
		t.Errorf("telemetrygen traces of 4 spans: %v, want 4", got)
	}
	if got := searchIDs(t, admin, `{ resource.service.name = "tg-traces" && nestedSetParent < 0 } >> { resource.service.name = "tg-traces" } | count() = 3`); len(got) != 4 {
		t.Errorf("telemetrygen roots with three descendants: %v, want 4", got)
	}
	// Tag values name every service.
	var tv struct {
		TagValues []struct{ Type, Value string } `json:"tagValues"`
	}
	getJSON(t, "http://"+admin+"/tempo/api/v2/search/tag/resource.service.name/values", &tv)
	var svcs []string
	for _, v := range tv.TagValues {
		svcs = append(svcs, v.Type+":"+v.Value)
	}
	if want := []string{"string:py-backend", "string:py-frontend", "string:tg-traces"}; !slices.Equal(svcs, want) {
		t.Errorf("service values %v, want %v", svcs, want)
	}
}

// searchIDs runs a TraceQL search over the last hour and returns the
// traces found.
func searchIDs(t *testing.T, admin, q string) []string {
	t.Helper()
	var res struct {
		Traces []struct {
			TraceID string `json:"traceID"`
		} `json:"traces"`
	}
	u := fmt.Sprintf("http://%s/tempo/api/search?limit=100&start=%d&end=%d&q=%s", admin,
		time.Now().Add(-time.Hour).Unix(), time.Now().Add(time.Minute).Unix(), url.QueryEscape(q))
	getJSON(t, u, &res)
	var ids []string
	for _, tr := range res.Traces {
		ids = append(ids, tr.TraceID)
	}
	return ids
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v: %s", u, err, b)
	}
}
