package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/syncbuf"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// freeAddr is a loopback address no one listens on now, and one no other
// call in this test binary has returned: the OS may hand a port it just
// freed out again, and two servers of one test given the same port fail
// to start.
func freeAddr(t *testing.T) string {
	t.Helper()
	handedMu.Lock()
	defer handedMu.Unlock()
	for {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if !handed[addr] {
			handed[addr] = true
			return addr
		}
	}
}

var (
	handedMu sync.Mutex
	handed   = map[string]bool{}
)

// startJaeger runs the Jaeger query service (the jaeger binary, v1.76.0)
// with deploy/jaeger-query.yaml, its grpc storage backend on storage, and
// returns its HTTP address.
func startJaeger(t *testing.T, bin, storage string) string {
	t.Helper()
	return startJaegerConfig(t, bin, filepath.Join("..", "..", "deploy", "jaeger-query.yaml"), storage)
}

// startJaegerConfig is startJaeger with the configuration file config,
// which takes its endpoints from the environment variables
// deploy/jaeger-query.yaml reads; env adds variables (KEY=value).
func startJaegerConfig(t *testing.T, bin, config, storage string, env ...string) string {
	t.Helper()
	httpAddr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", config)
	cmd.Env = append(os.Environ(), "JAEGER_QUERY_HTTP="+httpAddr, "JAEGER_QUERY_GRPC="+freeAddr(t), "WIREHOUSE_JAEGER_STORAGE="+storage)
	cmd.Env = append(cmd.Env, env...)
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("jaeger output:\n%s", out.String())
		}
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + httpAddr + "/api/services"); err == nil {
			resp.Body.Close()
			return httpAddr
		}
	}
	t.Fatalf("jaeger did not answer on %s:\n%s", httpAddr, out.String())
	return ""
}

// jaegerGet GETs path from Jaeger's HTTP API and decodes its envelope's
// data into v; it returns the status.
func jaegerGet(t *testing.T, addr, path string, v any) int {
	t.Helper()
	code, _ := jaegerAs(t, addr, path, "", "", v)
	return code
}

// TestServeJaegerQuery: the real Jaeger query service, its storage backend
// pointed at wirehouse's Jaeger remote storage API, lists the services and
// operations of spans sent over OTLP, and finds each trace by id with
// every span (id, parent, operation name, service). `make test` builds
// the jaeger binary (tools/jaeger) and sets WIREHOUSE_JAEGER.
func TestServeJaegerQuery(t *testing.T) {
	bin := os.Getenv("WIREHOUSE_JAEGER")
	if bin == "" {
		t.Skip("WIREHOUSE_JAEGER not set; `make test` builds jaeger and sets it")
	}
	addrs := startServe(t, "--lake-max-delay", "200ms")
	body := synth.Traces(synth.Config{Seed: 7, Resources: 3, ScopesPerResource: 2, TotalRecords: 200})
	resp, err := http.Post("http://"+addrs["OTLP/HTTP"]+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %s", resp.Status)
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	type sent struct{ span, parent, op, svc string }
	traces := map[pcommon.TraceID][]sent{}
	services := map[string]bool{}
	for _, rs := range req.Traces().ResourceSpans().All() {
		svc, _ := rs.Resource().Attributes().Get("service.name")
		services[svc.Str()] = true
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				parent := ""
				if !sp.ParentSpanID().IsEmpty() {
					parent = sp.ParentSpanID().String()
				}
				traces[sp.TraceID()] = append(traces[sp.TraceID()], sent{sp.SpanID().String(), parent, sp.Name(), svc.Str()})
			}
		}
	}
	jaeger := startJaeger(t, bin, addrs["Jaeger remote storage gRPC"])

	// The spans reach the lake within --lake-max-delay.
	var gotServices []string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if jaegerGet(t, jaeger, "/api/services", &gotServices) == http.StatusOK && len(gotServices) == len(services) || time.Now().After(deadline) {
			break
		}
	}
	slices.Sort(gotServices)
	wantServices := slices.Sorted(func(yield func(string) bool) {
		for s := range services {
			if !yield(s) {
				return
			}
		}
	})
	if !slices.Equal(gotServices, wantServices) {
		t.Fatalf("Jaeger /api/services: %q, want %q", gotServices, wantServices)
	}
	var ops []struct{ Name, SpanKind string }
	if code := jaegerGet(t, jaeger, "/api/operations?service="+wantServices[0], &ops); code != http.StatusOK || len(ops) == 0 {
		t.Errorf("Jaeger /api/operations?service=%s: %d, %v", wantServices[0], code, ops)
	}

	checked := 0
	for id, spans := range traces {
		if checked == 10 {
			break
		}
		checked++
		var got []struct {
			TraceID string `json:"traceID"`
			Spans   []struct {
				SpanID        string `json:"spanID"`
				OperationName string `json:"operationName"`
				ProcessID     string `json:"processID"`
				References    []struct {
					RefType string `json:"refType"`
					SpanID  string `json:"spanID"`
				} `json:"references"`
			} `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		}
		if code := jaegerGet(t, jaeger, "/api/traces/"+id.String(), &got); code != http.StatusOK || len(got) != 1 {
			t.Fatalf("Jaeger /api/traces/%s: %d, %d traces", id, code, len(got))
		}
		var gotSpans []sent
		for _, s := range got[0].Spans {
			parent := ""
			for _, r := range s.References {
				if r.RefType == "CHILD_OF" {
					parent = r.SpanID
				}
			}
			gotSpans = append(gotSpans, sent{s.SpanID, parent, s.OperationName, got[0].Processes[s.ProcessID].ServiceName})
		}
		cmp := func(a, b sent) int { return strings.Compare(a.span, b.span) }
		slices.SortFunc(gotSpans, cmp)
		slices.SortFunc(spans, cmp)
		if !slices.Equal(gotSpans, spans) {
			t.Errorf("trace %s through Jaeger:\n got  %v\n want %v", id, gotSpans, spans)
		}
	}
	if code := jaegerGet(t, jaeger, "/api/traces/"+strings.Repeat("0f", 16), &[]any{}); code != http.StatusNotFound {
		t.Errorf("an unknown trace: %d, want 404", code)
	}

	// Search, as Jaeger's UI sends it (start and end in µs; tags as
	// JSON; minDuration): every trace with a span that matches.
	var minStart, maxEnd int64
	for _, rs := range req.Traces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if st := int64(sp.StartTimestamp()); minStart == 0 || st < minStart {
					minStart = st
				}
				maxEnd = max(maxEnd, int64(sp.EndTimestamp()))
			}
		}
	}
	window := fmt.Sprintf("&start=%d&end=%d&limit=1000", minStart/1000, maxEnd/1000+1)
	svc := wantServices[0]
	match := func(pred func(svc string, sp ptrace.Span) bool) map[string]bool {
		out := map[string]bool{}
		for _, rs := range req.Traces().ResourceSpans().All() {
			s, _ := rs.Resource().Attributes().Get("service.name")
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if pred(s.Str(), sp) {
						out[sp.TraceID().String()] = true
					}
				}
			}
		}
		return out
	}
	searches := []struct {
		name, params string
		want         map[string]bool
	}{
		{"service", "service=" + url.QueryEscape(svc), match(func(s string, _ ptrace.Span) bool { return s == svc })},
		{"service, min duration 20ms", "service=" + url.QueryEscape(svc) + "&minDuration=20ms", match(func(s string, sp ptrace.Span) bool {
			return s == svc && sp.EndTimestamp()-sp.StartTimestamp() >= pcommon.Timestamp(20*time.Millisecond)
		})},
		{"service, error", "service=" + url.QueryEscape(svc) + "&tags=" + url.QueryEscape(`{"error":"true"}`), match(func(s string, sp ptrace.Span) bool {
			return s == svc && sp.Status().Code() == ptrace.StatusCodeError
		})},
	}
	for _, sr := range searches {
		var got []struct {
			TraceID string `json:"traceID"`
		}
		if code := jaegerGet(t, jaeger, "/api/traces?"+sr.params+window, &got); code != http.StatusOK {
			t.Errorf("search %s: %d", sr.name, code)
			continue
		}
		gotIDs := map[string]bool{}
		for _, g := range got {
			gotIDs[strings.Repeat("0", 32-len(g.TraceID))+g.TraceID] = true // Jaeger drops a zero high half
		}
		if len(sr.want) == 0 || !maps.Equal(gotIDs, sr.want) {
			t.Errorf("search %s: %d traces, want %d (of %d)", sr.name, len(gotIDs), len(sr.want), len(traces))
		}
	}
}

// edgeTraces are spans that exercise the corners of Jaeger's model: every
// attribute type, links (one of them the parent, one of another trace,
// one marked child_of), events with and without names, status messages,
// trace state, a span whose parent is not in the trace, a child that does
// not fit in its parent (Jaeger's clock skew warning), SDK attributes on a
// span, a numeric ip tag, a resource without service.name and one
// without attributes.
func edgeTraces(base time.Time) ptrace.Traces {
	td := ptrace.NewTraces()
	id := pcommon.TraceID{0xed, 0x9e, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	short := pcommon.TraceID{8: 0x5e, 15: 1} // high half zero: 16 hex digits in Jaeger
	ts := func(d time.Duration) pcommon.Timestamp { return pcommon.NewTimestampFromTime(base.Add(d)) }

	rs := td.ResourceSpans().AppendEmpty()
	ra := rs.Resource().Attributes()
	ra.PutStr("service.name", "edge-svc")
	ra.PutStr("host.name", "h1")
	ra.PutInt("ip", 0x0a000001)
	ra.PutStr("telemetry.sdk.language", "go")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("edge-lib")
	ss.Scope().SetVersion("1.2.3")
	root := ss.Spans().AppendEmpty()
	root.SetTraceID(id)
	root.SetSpanID(pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1})
	root.SetName("GET /edge")
	root.SetKind(ptrace.SpanKindServer)
	root.SetStartTimestamp(ts(0))
	root.SetEndTimestamp(ts(100 * time.Millisecond))
	root.TraceState().FromRaw("vendor=1")
	root.Status().SetCode(ptrace.StatusCodeError)
	root.Status().SetMessage("boom")
	a := root.Attributes()
	a.PutStr("str", "x<y")
	a.PutBool("bool", true)
	a.PutInt("int", 42)
	a.PutInt("big", 1<<60)
	a.PutDouble("dbl", 2.5)
	a.PutEmptyBytes("bin").FromRaw([]byte{0, 1, 2, 250})
	m := a.PutEmptyMap("map")
	m.PutStr("k", "v")
	m.PutInt("n", 3)
	sl := a.PutEmptySlice("arr")
	sl.AppendEmpty().SetStr("a")
	sl.AppendEmpty().SetDouble(1.5)
	a.PutInt("peer.ipv4", 0x7f000001)
	a.PutStr("telemetry.sdk.name", "opentelemetry")
	ev := root.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(ts(10 * time.Millisecond))
	ev.Attributes().PutStr("exception.type", "E")
	ev.Attributes().PutStr("a.first", "1")
	ev2 := root.Events().AppendEmpty()
	ev2.SetTimestamp(ts(20 * time.Millisecond))
	ev2.Attributes().PutInt("z", 1)
	ev3 := root.Events().AppendEmpty()
	ev3.SetName("named")
	ev3.SetTimestamp(ts(30 * time.Millisecond))
	ev3.Attributes().PutStr("event", "own")

	child := ss.Spans().AppendEmpty()
	child.SetTraceID(id)
	child.SetSpanID(pcommon.SpanID{2, 2, 2, 2, 2, 2, 2, 2})
	child.SetParentSpanID(root.SpanID())
	child.SetName("SELECT")
	child.SetKind(ptrace.SpanKindClient)
	child.SetStartTimestamp(ts(90 * time.Millisecond)) // ends after its parent
	child.SetEndTimestamp(ts(130 * time.Millisecond))
	child.Status().SetCode(ptrace.StatusCodeOk)
	l := child.Links().AppendEmpty()
	l.SetTraceID(id)
	l.SetSpanID(root.SpanID())
	l.Attributes().PutStr("opentracing.ref_type", "follows_from")
	l2 := child.Links().AppendEmpty()
	l2.SetTraceID(short)
	l2.SetSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
	l3 := child.Links().AppendEmpty()
	l3.SetTraceID(id)
	l3.SetSpanID(pcommon.SpanID{3, 3, 3, 3, 3, 3, 3, 3})
	l3.Attributes().PutStr("opentracing.ref_type", "child_of")

	rs2 := td.ResourceSpans().AppendEmpty()
	rs2.Resource().Attributes().PutStr("deployment.environment", "test")
	ss2 := rs2.ScopeSpans().AppendEmpty()
	late := ss2.Spans().AppendEmpty()
	late.SetTraceID(id)
	late.SetSpanID(pcommon.SpanID{5, 5, 5, 5, 5, 5, 5, 5})
	late.SetParentSpanID(root.SpanID())
	late.SetName("late")
	late.SetStartTimestamp(ts(95 * time.Millisecond)) // ends after its parent, on another host
	late.SetEndTimestamp(ts(105 * time.Millisecond))
	lateChild := ss2.Spans().AppendEmpty()
	lateChild.SetTraceID(id)
	lateChild.SetSpanID(pcommon.SpanID{6, 6, 6, 6, 6, 6, 6, 6})
	lateChild.SetParentSpanID(late.SpanID())
	lateChild.SetName("late-child")
	lateChild.SetStartTimestamp(ts(96 * time.Millisecond))
	lateChild.SetEndTimestamp(ts(97 * time.Millisecond))

	orphan := ss2.Spans().AppendEmpty()
	orphan.SetTraceID(id)
	orphan.SetSpanID(pcommon.SpanID{4, 4, 4, 4, 4, 4, 4, 4})
	orphan.SetParentSpanID(pcommon.SpanID{7, 7, 7, 7, 7, 7, 7, 7})
	orphan.SetName("orphan")
	orphan.SetStartTimestamp(ts(5 * time.Millisecond))
	orphan.SetEndTimestamp(ts(6 * time.Millisecond))

	rs3 := td.ResourceSpans().AppendEmpty()
	bare := rs3.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	bare.SetTraceID(short)
	bare.SetSpanID(pcommon.SpanID{9, 9, 9, 9, 9, 9, 9, 9})
	bare.SetName("bare")
	bare.SetStartTimestamp(ts(0))
	bare.SetEndTimestamp(ts(time.Millisecond))
	return td
}

// jaegerRaw GETs path from a Jaeger HTTP API at base and returns the
// status and the body decoded, normalised for comparison: the order
// Jaeger gives spans and services (a Go map's) and its process ids do
// not count, so spans are sorted by id with their process inlined, and
// lists of strings sorted.
func jaegerRaw(t *testing.T, base, path string) (int, any) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("GET %s%s: %d, body not JSON: %v", base, path, resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil // the messages differ; the status is the contract
	}
	switch data := env["data"].(type) {
	case []any:
		for _, d := range data {
			tr, ok := d.(map[string]any)
			if !ok {
				continue
			}
			procs, _ := tr["processes"].(map[string]any)
			spans, _ := tr["spans"].([]any)
			for _, s := range spans {
				sp := s.(map[string]any)
				sp["process"] = procs[sp["processID"].(string)]
				delete(sp, "processID")
			}
			slices.SortFunc(spans, func(a, b any) int {
				return strings.Compare(a.(map[string]any)["spanID"].(string), b.(map[string]any)["spanID"].(string))
			})
			delete(tr, "processes")
		}
		slices.SortFunc(data, func(a, b any) int {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			return bytes.Compare(ja, jb)
		})
	}
	return resp.StatusCode, env
}

// TestServeJaegerHTTPMatchesJaeger: the same requests to the real Jaeger
// query service running on wirehouse's remote storage API and to
// wirehouse's own Jaeger HTTP API under /jaeger give the same answers,
// field by field, for spans from internal/synth and for edgeTraces.
func TestServeJaegerHTTPMatchesJaeger(t *testing.T) {
	bin := os.Getenv("WIREHOUSE_JAEGER")
	if bin == "" {
		t.Skip("WIREHOUSE_JAEGER not set; `make test` builds jaeger and sets it")
	}
	addrs := startServe(t, "--lake-max-delay", "200ms")
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	edge, err := ptraceotlp.NewExportRequestFromTraces(edgeTraces(base)).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	bodies := [][]byte{synth.Traces(synth.Config{Seed: 11, Resources: 3, ScopesPerResource: 2, TotalRecords: 150}), edge}
	var ids []string
	for _, body := range bodies {
		resp, err := http.Post("http://"+addrs["OTLP/HTTP"]+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("export: %s", resp.Status)
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, rs := range req.Traces().ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					if id := sp.TraceID().String(); !seen[id] && len(seen) < 8 {
						seen[id] = true
						ids = append(ids, id)
					}
				}
			}
		}
	}
	jaeger := "http://" + startJaeger(t, bin, addrs["Jaeger remote storage gRPC"])
	ours := "http://" + addrs["admin HTTP"] + "/jaeger"
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var svcs []string
		if jaegerGet(t, strings.TrimPrefix(jaeger, "http://"), "/api/services", &svcs) == http.StatusOK && slices.Contains(svcs, "edge-svc") || time.Now().After(deadline) {
			break
		}
	}
	window := fmt.Sprintf("&start=%d&end=%d", base.Add(-2*time.Hour).UnixMicro(), time.Now().Add(time.Hour).UnixMicro())
	paths := []string{
		"/api/services",
		"/api/services/edge-svc/operations",
		"/api/operations?service=edge-svc",
		"/api/operations?service=edge-svc&spanKind=server",
		"/api/operations",
		"/api/traces?service=edge-svc" + window,
		"/api/traces?service=edge-svc&tags=" + url.QueryEscape(`{"error":"true"}`) + window,
		"/api/traces?service=edge-svc&tag=str:x%3Cy" + window,
		"/api/traces?service=edge-svc&operation=SELECT&minDuration=30ms" + window,
		"/api/traces?service=edge-svc&maxDuration=1ms" + window,
		"/api/traces?service=edge-svc&minDuration=2ms&maxDuration=1ms",
		"/api/traces?service=edge-svc&minDuration=bogus",
		"/api/traces?service=edge-svc&tag=nocolon",
		"/api/traces" + "?" + window[1:],
		"/api/traces?traceID=" + ids[0] + "&traceID=" + strings.Repeat("ab", 16),
		"/api/traces/" + strings.Repeat("0f", 16),
		"/api/traces/zz",
		"/api/traces/5e00000000000001",
		"/api/traces/ed9e0102030405060708090a0b0c0d0e?raw=false",
	}
	for _, id := range ids {
		paths = append(paths, "/api/traces/"+id)
	}
	found := 0
	for _, p := range paths {
		jc, jv := jaegerRaw(t, jaeger, p)
		oc, ov := jaegerRaw(t, ours, p)
		if strings.HasPrefix(p, "/api/traces/") && jc == http.StatusOK {
			found++
		}
		if jc != oc {
			t.Errorf("GET %s: Jaeger %d, wirehouse %d", p, jc, oc)
			continue
		}
		jb, _ := json.MarshalIndent(jv, "", " ")
		ob, _ := json.MarshalIndent(ov, "", " ")
		if !bytes.Equal(jb, ob) {
			t.Errorf("GET %s differs:\nJaeger:\n%s\nwirehouse:\n%s", p, jb, ob)
		}
	}
	// Not two empty answers: every trace sent, and the edge traces, found.
	if want := len(ids) + 2; found != want {
		t.Errorf("%d traces found by id through Jaeger, want %d", found, want)
	}
}

// TestServeFreshTraces: with the lake loader told to wait an hour, a
// trace is readable the moment its export is acknowledged, through
// Jaeger's HTTP API and Tempo's trace by id, every span once; and still
// once after a restart, when the loader has written it.
func TestServeFreshTraces(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	body := synth.Traces(synth.Config{Seed: 21, Resources: 2, ScopesPerResource: 2, TotalRecords: 80, Start: time.Now().Add(-time.Minute)})
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, rs := range req.Traces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				want[sp.TraceID().String()]++
			}
		}
	}
	check := func(stage, admin string) {
		t.Helper()
		for id, n := range want {
			var traces []struct {
				Spans []json.RawMessage `json:"spans"`
			}
			if code := jaegerGet(t, admin, "/jaeger/api/traces/"+id, &traces); code != http.StatusOK || len(traces) != 1 || len(traces[0].Spans) != n {
				t.Errorf("%s: Jaeger API, trace %s: %d, %v spans, want %d", stage, id, code, traces, n)
			}
			req, _ := http.NewRequest("GET", "http://"+admin+"/tempo/api/traces/"+id, nil)
			req.Header.Set("Accept", "application/protobuf")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
			if resp.StatusCode != http.StatusOK || err != nil || td.SpanCount() != n {
				t.Errorf("%s: Tempo API, trace %s: %d, %v, %d spans, want %d", stage, id, resp.StatusCode, err, td.SpanCount(), n)
			}
		}
	}
	addrs, stop := startServeAt(t, dataDir, "--lake-max-delay", "1h")
	resp, err := http.Post("http://"+addrs["OTLP/HTTP"]+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("export: %s", resp.Status)
	}
	if n := lakeFiles(t, dataDir); n != 0 {
		t.Fatalf("%d files in the lake already", n)
	}
	check("acknowledged", addrs["admin HTTP"])
	stop()
	if lakeFiles(t, dataDir) == 0 {
		t.Fatal("no file in the lake after a clean stop")
	}
	addrs, _ = startServeAt(t, dataDir, "--lake-max-delay", "1h")
	check("written", addrs["admin HTTP"])
}

// lakeFiles counts the Parquet files of traces in the lake of dataDir.
func lakeFiles(t *testing.T, dataDir string) int {
	n := 0
	filepath.WalkDir(filepath.Join(dataDir, "lake", "traces"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.HasPrefix(d.Name(), ".") {
			n++
		}
		return nil
	})
	return n
}

// TestServeTraceClients: traces from real clients — the OpenTelemetry
// Python SDK (two services, links, events, every attribute type, error
// status) and telemetrygen — come back exactly once, every span equal
// field by field to what the SDK encoded and sent (Tempo's trace by id,
// OTLP protobuf, pdata as the oracle); the real Jaeger query service
// running on wirehouse finds their services, operations and traces, and
// its answers equal wirehouse's own Jaeger HTTP API.
func TestServeTraceClients(t *testing.T) {
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs the OpenTelemetry Python SDK in a venv")
	tgen := peerFromEnv(t, "WIREHOUSE_TELEMETRYGEN", "installs telemetrygen")
	jbin := peerFromEnv(t, "WIREHOUSE_JAEGER", "builds jaeger")
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
	sent := ptrace.NewTraces()
	for _, b64 := range res.Sent {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			t.Fatal(err)
		}
		req.Traces().ResourceSpans().MoveAndAppendTo(sent.ResourceSpans())
	}
	if got := sent.SpanCount(); got != 5*n {
		t.Fatalf("the SDK sent %d spans, want %d", got, 5*n)
	}
	tgArgs := []string{"traces", "--otlp-insecure", "--otlp-endpoint", addrs["OTLP/gRPC"], "--traces", "4", "--child-spans", "3",
		"--service", "tg-traces", "--rate", "0"}
	if out, err := exec.CommandContext(ctx, tgen, tgArgs...).CombinedOutput(); err != nil {
		t.Fatalf("telemetrygen %v: %v\n%s", tgArgs, err, out)
	}

	// Every span the SDK sent, exactly once, field by field (Tempo's API
	// gives OTLP back: resource, scope and span as pdata decodes them).
	wantSpans := map[pcommon.TraceID][]string{}
	for _, rs := range sent.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				wantSpans[sp.TraceID()] = append(wantSpans[sp.TraceID()], canonicalSpan(t, rs, ss, sp))
			}
		}
	}
	if len(wantSpans) != n {
		t.Fatalf("%d traces sent, want %d", len(wantSpans), n)
	}
	for id, want := range wantSpans {
		req, _ := http.NewRequest("GET", "http://"+admin+"/tempo/api/traces/"+id.String(), nil)
		req.Header.Set("Accept", "application/protobuf")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if resp.StatusCode != http.StatusOK || err != nil {
			t.Fatalf("trace %s: %d %v", id, resp.StatusCode, err)
		}
		var gotSpans []string
		for _, rs := range got.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					gotSpans = append(gotSpans, canonicalSpan(t, rs, ss, sp))
				}
			}
		}
		slices.Sort(gotSpans)
		slices.Sort(want)
		if !slices.Equal(gotSpans, want) {
			t.Errorf("trace %s differs from what the SDK sent:\n got  %q\n want %q", id, gotSpans, want)
		}
	}

	// The real Jaeger and wirehouse's own API give the same answers.
	jaeger := "http://" + startJaeger(t, jbin, addrs["Jaeger remote storage gRPC"])
	ours := "http://" + admin + "/jaeger"
	window := fmt.Sprintf("&start=%d&end=%d", time.Now().Add(-time.Hour).UnixMicro(), time.Now().Add(time.Minute).UnixMicro())
	paths := []string{"/api/services", "/api/services/py-frontend/operations", "/api/operations?service=tg-traces",
		"/api/traces?service=py-frontend&limit=100" + window, "/api/traces?service=py-backend" + window,
		"/api/traces?service=tg-traces" + window, "/api/traces?service=py-frontend&tags=" + url.QueryEscape(`{"error":"true","test.id":"3"}`) + window}
	for id := range wantSpans {
		paths = append(paths, "/api/traces/"+id.String())
	}
	for _, p := range paths {
		jc, jv := jaegerRaw(t, jaeger, p)
		oc, ov := jaegerRaw(t, ours, p)
		jb, _ := json.MarshalIndent(jv, "", " ")
		ob, _ := json.MarshalIndent(ov, "", " ")
		if jc != http.StatusOK || jc != oc || !bytes.Equal(jb, ob) {
			t.Errorf("GET %s: Jaeger %d, wirehouse %d:\nJaeger:\n%s\nwirehouse:\n%s", p, jc, oc, jb, ob)
		}
	}
	// What Jaeger found: the services, 4 telemetrygen traces of 4 spans,
	// the SDK's traces with 5 spans over two processes.
	var svcs []string
	jaegerGet(t, strings.TrimPrefix(jaeger, "http://"), "/api/services", &svcs)
	for _, s := range []string{"py-frontend", "py-backend", "tg-traces"} {
		if !slices.Contains(svcs, s) {
			t.Errorf("Jaeger's services %q lack %s", svcs, s)
		}
	}
	var tg []struct {
		Spans     []json.RawMessage `json:"spans"`
		Processes map[string]any    `json:"processes"`
	}
	jaegerGet(t, strings.TrimPrefix(jaeger, "http://"), "/api/traces?service=tg-traces"+window, &tg)
	if len(tg) != 4 {
		t.Errorf("Jaeger found %d telemetrygen traces, want 4", len(tg))
	}
	for _, tr := range tg {
		if len(tr.Spans) != 4 {
			t.Errorf("a telemetrygen trace has %d spans, want 4", len(tr.Spans))
		}
	}
	var py []struct {
		Spans     []json.RawMessage `json:"spans"`
		Processes map[string]any    `json:"processes"`
	}
	jaegerGet(t, strings.TrimPrefix(jaeger, "http://"), "/api/traces?service=py-frontend"+window, &py)
	if len(py) != n {
		t.Errorf("Jaeger found %d SDK traces, want %d", len(py), n)
	}
	for _, tr := range py {
		if len(tr.Spans) != 5 || len(tr.Processes) != 2 {
			t.Errorf("an SDK trace has %d spans in %d processes, want 5 in 2", len(tr.Spans), len(tr.Processes))
		}
	}
}

// canonicalSpan is a span with its resource and scope as pdata's JSON, so
// that two spans compare field by field.
func canonicalSpan(t *testing.T, rs ptrace.ResourceSpans, ss ptrace.ScopeSpans, sp ptrace.Span) string {
	td := ptrace.NewTraces()
	r := td.ResourceSpans().AppendEmpty()
	rs.Resource().CopyTo(r.Resource())
	r.SetSchemaUrl(rs.SchemaUrl())
	s := r.ScopeSpans().AppendEmpty()
	ss.Scope().CopyTo(s.Scope())
	s.SetSchemaUrl(ss.SchemaUrl())
	sp.CopyTo(s.Spans().AppendEmpty())
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServeTraceTenants: with OTLP and admin bearer tokens, the traces a
// tenant's exporters sent are read with that tenant's admin token alone:
// through /jaeger and /tempo another tenant's token finds nothing of them,
// and no token is refused.
func TestServeTraceTenants(t *testing.T) {
	const (
		otlpAcme, otlpBeta   = "otlp-acme-7c1e9a3b5d", "otlp-beta-2f8d4b6a0c"
		adminAcme, adminBeta = "admin-acme-5e3c1a9f7b", "admin-beta-9a7f5d3b1e"
	)
	otlpTokens := writeTokens(t, filepath.Join(t.TempDir(), "otlp"), otlpAcme+" acme\n"+otlpBeta+" beta\n")
	adminTokens := writeTokens(t, filepath.Join(t.TempDir(), "admin"), adminAcme+" acme\n"+adminBeta+" beta\n")
	addrs := startServe(t, "--otlp-bearer-tokens-file", otlpTokens, "--admin-bearer-tokens-file", adminTokens)
	ids := map[string]string{}
	for i, tn := range []struct{ name, token string }{{"acme", otlpAcme}, {"beta", otlpBeta}} {
		body := synth.Traces(synth.Config{Seed: int64(40 + i), Resources: 1, ScopesPerResource: 1, TotalRecords: 20, Start: time.Now().Add(-time.Minute)})
		req, _ := http.NewRequest("POST", "http://"+addrs["OTLP/HTTP"]+"/v1/traces", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("Authorization", "Bearer "+tn.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("export as %s: %s", tn.name, resp.Status)
		}
		td := ptraceotlp.NewExportRequest()
		if err := td.UnmarshalProto(body); err != nil {
			t.Fatal(err)
		}
		ids[tn.name] = td.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID().String()
	}
	get := func(path, token string) int {
		req, _ := http.NewRequest("GET", "http://"+addrs["admin HTTP"]+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, token string
		want        int
	}{
		{"/jaeger/api/traces/" + ids["acme"], adminAcme, http.StatusOK},
		{"/jaeger/api/traces/" + ids["acme"], adminBeta, http.StatusNotFound},
		{"/jaeger/api/traces/" + ids["beta"], adminBeta, http.StatusOK},
		{"/jaeger/api/traces/" + ids["beta"], adminAcme, http.StatusNotFound},
		{"/tempo/api/traces/" + ids["acme"], adminAcme, http.StatusOK},
		{"/tempo/api/traces/" + ids["acme"], adminBeta, http.StatusNotFound},
		{"/jaeger/api/services", "", http.StatusUnauthorized},
		{"/tempo/api/traces/" + ids["acme"], "", http.StatusUnauthorized},
	} {
		if got := get(c.path, c.token); got != c.want {
			t.Errorf("GET %s with %q: %d, want %d", c.path, c.token, got, c.want)
		}
	}
}
