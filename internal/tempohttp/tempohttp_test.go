package tempohttp_test

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/lakeread/lakereadtest"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/internal/tempohttp"
)

func serve(t testing.TB, body []byte) string {
	t.Helper()
	r := lakereadtest.Reader(t, map[string][]byte{"default": body})
	h, err := tempohttp.New(tempohttp.Config{Reader: r, Tenant: "default"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux, "/tempo")
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/tempo"
}

func get(t testing.TB, url, accept string) (int, string, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return doReq(t, req)
}

func doReq(t testing.TB, req *http.Request) (int, string, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// spanIDs are the span ids of td's spans of trace id, sorted, each with
// its name and attribute keys (each once: the lake keeps one value of a
// repeated key, as OTLP says a key is one).
func spanIDs(td ptrace.Traces, id string) []string {
	var out []string
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				if sp.TraceID().String() == id {
					keys := map[string]bool{}
					for k := range sp.Attributes().All() {
						keys[k] = true
					}
					out = append(out, fmt.Sprint(sp.SpanID(), " ", sp.Name(), " ", slices.Sorted(maps.Keys(keys)), " ", sp.Events().Len(), " ", sp.Links().Len()))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestTraceByID: each trace comes back by id from /api/traces and
// /api/v2/traces, as OTLP protobuf for Accept: application/protobuf and
// as OTLP/JSON otherwise (Tempo's "batches", and v2's "trace" wrapper),
// with every span sent (pdata decodes and is the oracle).
func TestTraceByID(t *testing.T) {
	body := synth.Traces(synth.Config{Seed: 9, Resources: 3, ScopesPerResource: 2, TotalRecords: 120})
	base := serve(t, body)
	sent := ptraceotlp.NewExportRequest()
	if err := sent.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, rs := range sent.Traces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				ids[sp.TraceID().String()] = true
			}
		}
	}
	n := 0
	for id := range ids {
		if n++; n > 8 {
			break
		}
		want := spanIDs(sent.Traces(), id)
		for _, c := range []struct{ path, accept string }{
			{"/api/traces/", "application/protobuf"}, {"/api/v2/traces/", "application/protobuf"},
			{"/api/traces/", ""}, {"/api/v2/traces/", "application/json"},
		} {
			code, ctype, b := get(t, base+c.path+id, c.accept)
			if code != http.StatusOK {
				t.Fatalf("GET %s%s: %d %s", c.path, id, code, b)
			}
			var got ptrace.Traces
			var err error
			switch {
			case ctype == "application/protobuf" && strings.Contains(c.path, "v2"):
				// TraceByIDResponse{Trace trace = 1}
				num, typ, l := protowire.ConsumeTag(b)
				if num != 1 || typ != protowire.BytesType {
					t.Fatalf("v2 protobuf: field %d type %d", num, typ)
				}
				inner, m := protowire.ConsumeBytes(b[l:])
				if m < 0 || l+m != len(b) {
					t.Fatalf("v2 protobuf: bad length")
				}
				got, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(inner)
			case ctype == "application/protobuf":
				got, err = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
			case strings.Contains(c.path, "v2"):
				if !bytes.HasPrefix(b, []byte(`{"trace":{"resourceSpans":`)) {
					t.Fatalf("v2 JSON starts %.40s", b)
				}
				got, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b[len(`{"trace":`) : len(b)-1])
			default:
				if !bytes.HasPrefix(b, []byte(`{"batches":`)) {
					t.Fatalf("v1 JSON starts %.40s", b)
				}
				got, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(append([]byte(`{"resourceSpans":`), b[len(`{"batches":`):]...))
			}
			if err != nil {
				t.Fatalf("GET %s%s (%s): %v", c.path, id, ctype, err)
			}
			if g := spanIDs(got, id); !slices.Equal(g, want) {
				t.Errorf("GET %s%s (%s):\n got  %v\n want %v", c.path, id, ctype, g, want)
			}
		}
	}
	// Short ids are left-padded, as Tempo pads them.
	if code, _, _ := get(t, base+"/api/traces/1", ""); code != http.StatusNotFound {
		t.Errorf("unknown short id: %d, want 404", code)
	}
	for _, p := range []string{"/api/traces/xyz", "/api/traces/" + strings.Repeat("a", 33), "/api/v2/traces/ab?start=x"} {
		if code, _, _ := get(t, base+p, ""); code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", p, code)
		}
	}
	if code, _, b := get(t, base+"/api/echo", ""); code != http.StatusOK || string(b) != "echo" {
		t.Errorf("echo: %d %q", code, b)
	}
}
