package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startJaeger runs the Jaeger query service (the jaeger binary, v1.76.0)
// with deploy/jaeger-query.yaml, its grpc storage backend on storage, and
// returns its HTTP address.
func startJaeger(t *testing.T, bin, storage string) string {
	t.Helper()
	httpAddr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config", filepath.Join("..", "..", "deploy", "jaeger-query.yaml"))
	cmd.Env = append(os.Environ(), "JAEGER_QUERY_HTTP="+httpAddr, "JAEGER_QUERY_GRPC="+freeAddr(t), "WIREHOUSE_JAEGER_STORAGE="+storage)
	var out syncBuffer
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
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Msg string `json:"msg"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("GET %s: %d, body not a Jaeger envelope: %v", path, resp.StatusCode, err)
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(env.Data, v); err != nil {
			t.Fatalf("GET %s: data: %v", path, err)
		}
	}
	return resp.StatusCode
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
