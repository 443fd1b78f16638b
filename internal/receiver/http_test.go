package receiver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func logsBody(records int) []byte {
	return synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 7, Resources: 2, ScopesPerResource: 2, TotalRecords: records})
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// deflated is b in HTTP's deflate coding, the zlib format.
func deflated(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstded(t testing.TB, b []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(b, nil)
}

func TestHTTPProtobuf(t *testing.T) {
	r, rec := start(t, testConfig())
	body := logsBody(100)
	for _, tc := range []struct {
		name, encoding string
		send           []byte
	}{
		{"none", "", body},
		{"identity", "identity", body},
		{"gzip", "gzip", gzipped(t, body)},
		{"zstd", "zstd", zstded(t, body)},
		{"deflate", "deflate", deflated(t, body)},
		{"zlib", "zlib", deflated(t, body)},
		{"GZIP", "GZIP", gzipped(t, body)}, // codings are case-insensitive
		{"padded", " zstd ", zstded(t, body)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.bodies(otlpwire.SignalLogs))
			status, h, resp := post(t, httpURL(r, otlpwire.SignalLogs), tc.send,
				"Content-Type", "application/x-protobuf", "Content-Encoding", tc.encoding)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, resp)
			}
			if ct := h.Get("Content-Type"); ct != "application/x-protobuf" {
				t.Errorf("response Content-Type %q", ct)
			}
			if len(resp) != 0 {
				t.Errorf("full success should be the empty response, got %x", resp)
			}
			got := rec.bodies(otlpwire.SignalLogs)
			if len(got) != before+1 || !bytes.Equal(got[before], body) {
				t.Fatalf("sink did not receive the request bytes unchanged")
			}
		})
	}
}

// TestHTTPJSON sends OTLP/JSON written the ways the spec allows: hex ids,
// int64 as string and as number, enums as integers, lowerCamelCase and
// snake_case keys. The stored protobuf is read back with pdata.
func TestHTTPJSON(t *testing.T) {
	r, rec := start(t, testConfig())
	const camel = `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"json-svc"}}]},
	 "scopeLogs":[{"scope":{"name":"s"},"logRecords":[
	  {"timeUnixNano":"1700000000000000001","severityNumber":9,"body":{"stringValue":"a"},
	   "traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174",
	   "attributes":[{"key":"n","value":{"intValue":"42"}}]},
	  {"timeUnixNano":1700000000000000002,"severityNumber":17,"body":{"stringValue":"b"},
	   "attributes":[{"key":"n","value":{"intValue":43}}]}]}]}]}`
	const snake = `{"resource_logs":[{"resource":{"attributes":[{"key":"service.name","value":{"string_value":"json-svc"}}]},
	 "scope_logs":[{"scope":{"name":"s"},"log_records":[
	  {"time_unix_nano":"1700000000000000001","severity_number":9,"body":{"string_value":"a"},
	   "trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174",
	   "attributes":[{"key":"n","value":{"int_value":"42"}}]},
	  {"time_unix_nano":1700000000000000002,"severity_number":17,"body":{"string_value":"b"},
	   "attributes":[{"key":"n","value":{"int_value":43}}]}]}]}]}`
	for name, doc := range map[string]string{"camelCase": camel, "snake_case": snake} {
		t.Run(name, func(t *testing.T) {
			before := len(rec.bodies(otlpwire.SignalLogs))
			status, h, resp := post(t, httpURL(r, otlpwire.SignalLogs), []byte(doc), "Content-Type", "application/json")
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, resp)
			}
			if ct := h.Get("Content-Type"); ct != "application/json" || string(resp) != "{}" {
				t.Errorf("response %q with Content-Type %q, want {} as application/json", resp, ct)
			}
			got := rec.bodies(otlpwire.SignalLogs)
			if len(got) != before+1 {
				t.Fatal("nothing stored")
			}
			req := plogotlp.NewExportRequest()
			if err := req.UnmarshalProto(got[before]); err != nil {
				t.Fatal(err)
			}
			rl := req.Logs().ResourceLogs().At(0)
			if v, _ := rl.Resource().Attributes().Get("service.name"); v.Str() != "json-svc" {
				t.Errorf("service.name %q", v.Str())
			}
			lrs := rl.ScopeLogs().At(0).LogRecords()
			if lrs.Len() != 2 {
				t.Fatalf("%d records", lrs.Len())
			}
			a, b := lrs.At(0), lrs.At(1)
			if a.TraceID().String() != "5b8efff798038103d269b633813fc60c" || a.SpanID().String() != "eee19b7ec3c1b174" {
				t.Errorf("ids %s %s", a.TraceID(), a.SpanID())
			}
			if a.Timestamp() != 1700000000000000001 || b.Timestamp() != 1700000000000000002 {
				t.Errorf("timestamps %d %d", a.Timestamp(), b.Timestamp())
			}
			if a.SeverityNumber() != 9 || b.SeverityNumber() != 17 {
				t.Errorf("severities %d %d", a.SeverityNumber(), b.SeverityNumber())
			}
			an, _ := a.Attributes().Get("n")
			bn, _ := b.Attributes().Get("n")
			if an.Int() != 42 || bn.Int() != 43 || a.Body().Str() != "a" {
				t.Errorf("values %d %d %q", an.Int(), bn.Int(), a.Body().Str())
			}
		})
	}
}

func TestPartialSuccess(t *testing.T) {
	r, rec := start(t, testConfig())
	rec.hook = func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		return pipeline.Outcome{Rejected: 3, Message: "3 spans too old"}, nil
	}
	body := synth.Generate(otlpwire.SignalTraces, synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 10})

	status, _, resp := post(t, httpURL(r, otlpwire.SignalTraces), body, "Content-Type", "application/x-protobuf")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	pr := ptraceotlp.NewExportResponse()
	if err := pr.UnmarshalProto(resp); err != nil {
		t.Fatal(err)
	}
	if ps := pr.PartialSuccess(); ps.RejectedSpans() != 3 || ps.ErrorMessage() != "3 spans too old" {
		t.Errorf("protobuf partial success %d %q", ps.RejectedSpans(), ps.ErrorMessage())
	}

	doc, err := func() ([]byte, error) {
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			return nil, err
		}
		return req.MarshalJSON()
	}()
	if err != nil {
		t.Fatal(err)
	}
	status, _, resp = post(t, httpURL(r, otlpwire.SignalTraces), doc, "Content-Type", "application/json")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	pr = ptraceotlp.NewExportResponse()
	if err := pr.UnmarshalJSON(resp); err != nil {
		t.Fatalf("%v: %s", err, resp)
	}
	if ps := pr.PartialSuccess(); ps.RejectedSpans() != 3 || ps.ErrorMessage() != "3 spans too old" {
		t.Errorf("JSON partial success %d %q from %s", ps.RejectedSpans(), ps.ErrorMessage(), resp)
	}
}

// TestSinkErrors checks the sink error → status table on HTTP.
func TestSinkErrors(t *testing.T) {
	r, rec := start(t, testConfig())
	body := logsBody(5)
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		retryAfter bool
	}{
		{"unavailable", fmt.Errorf("disk full: %w", pipeline.ErrUnavailable), http.StatusServiceUnavailable, true},
		{"unclassified", errors.New("something broke"), http.StatusServiceUnavailable, true},
		{"overloaded", fmt.Errorf("queue full: %w", pipeline.ErrOverloaded), http.StatusTooManyRequests, true},
		{"invalid", fmt.Errorf("delta sums: %w", pipeline.ErrInvalid), http.StatusBadRequest, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.hook = func(context.Context, *pipeline.Request) (pipeline.Outcome, error) { return pipeline.Outcome{}, tc.err }
			status, h, resp := post(t, httpURL(r, otlpwire.SignalLogs), body, "Content-Type", "application/x-protobuf")
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			if got := h.Get("Retry-After") != ""; got != tc.retryAfter {
				t.Errorf("Retry-After %q", h.Get("Retry-After"))
			}
			if msg := statusMessage(t, resp); !strings.Contains(msg, tc.err.Error()) {
				t.Errorf("message %q", msg)
			}
		})
	}
}

// statusMessage decodes a google.rpc.Status body.
func statusMessage(t *testing.T, b []byte) string {
	t.Helper()
	var msg string
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			t.Fatalf("error body is not a google.rpc.Status: %x", b)
		}
		b = b[n:]
		v, m := consumeValue(num, typ, b)
		if m < 0 {
			t.Fatalf("error body is not a google.rpc.Status: %x", b)
		}
		if num == 2 {
			msg = string(v)
		}
		b = b[m:]
	}
	return msg
}

// TestDeprecatedScopes: a request whose resource containers carry their
// scope containers only in the deprecated field 1000 (exporters built on
// OTLP 0.15–0.19) is migrated as the Collector's receiver migrates it:
// every record is counted and reaches the sink under field 2.
func TestDeprecatedScopes(t *testing.T) {
	r, rec := start(t, testConfig())
	body := logsBody(40)
	old := renumberScopes(t, body, 1000)
	status, _, resp := post(t, httpURL(r, otlpwire.SignalLogs), old, "Content-Type", "application/x-protobuf")
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, resp)
	}
	got := rec.bodies(otlpwire.SignalLogs)
	if len(got) != 1 || !bytes.Equal(got[0], body) {
		t.Fatalf("the sink got %d bodies, not the request with field 2", len(got))
	}
	if n := rec.records(t, otlpwire.SignalLogs); n != 40 {
		t.Errorf("%d records, want 40", n)
	}
}

// TestDeprecatedScopesBudget checks that the copy of a request migrated
// from the deprecated layout counts against the in-flight budget: a request
// that fits the budget once but not twice is refused as too large on both
// transports, and nothing reaches the sink, while the same records in the
// current layout are accepted.
func TestDeprecatedScopesBudget(t *testing.T) {
	body := logsBody(40)
	old := renumberScopes(t, body, 1000)
	cfg := testConfig()
	cfg.MaxRequestBytes = int64(len(old)) * 3 / 2
	cfg.MaxDecompressedBytes = cfg.MaxRequestBytes
	cfg.MaxGRPCMessageBytes = cfg.MaxRequestBytes
	cfg.MaxInflightBytes = cfg.MaxRequestBytes
	r, rec := start(t, cfg)

	status, _, resp := post(t, httpURL(r, otlpwire.SignalLogs), old, "Content-Type", "application/x-protobuf")
	if msg := statusMessage(t, resp); status != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "in-flight limit") {
		t.Errorf("HTTP, deprecated layout: status %d %q, want 413 naming the in-flight limit", status, msg)
	}
	err := exportGRPC(context.Background(), dialGRPC(t, r), otlpwire.SignalLogs, old, nil)
	if st := grpcstatus.Convert(err); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "in-flight limit") {
		t.Errorf("gRPC, deprecated layout: %s %q, want ResourceExhausted naming the in-flight limit", st.Code(), st.Message())
	}
	if got := rec.bodies(otlpwire.SignalLogs); len(got) != 0 {
		t.Fatalf("the sink got %d refused bodies", len(got))
	}

	if status, _, resp := post(t, httpURL(r, otlpwire.SignalLogs), body, "Content-Type", "application/x-protobuf"); status != http.StatusOK {
		t.Fatalf("HTTP, current layout: status %d: %s", status, resp)
	}
	if err := exportGRPC(context.Background(), dialGRPC(t, r), otlpwire.SignalLogs, body, nil); err != nil {
		t.Fatalf("gRPC, current layout: %v", err)
	}
	if n := rec.records(t, otlpwire.SignalLogs); n != 80 {
		t.Errorf("%d records stored, want 80", n)
	}
}

// renumberScopes rewrites the scope containers (field 2) of every resource
// container of req as field num.
func renumberScopes(t testing.TB, req []byte, num protowire.Number) []byte {
	t.Helper()
	var out []byte
	for len(req) > 0 {
		n, typ, l := protowire.ConsumeTag(req)
		if l < 0 || typ != protowire.BytesType || n != 1 {
			t.Fatal("unexpected request field")
		}
		rc, m := protowire.ConsumeBytes(req[l:])
		req = req[l+m:]
		var nrc []byte
		for len(rc) > 0 {
			f, ft, k := protowire.ConsumeTag(rc)
			v := protowire.ConsumeFieldValue(f, ft, rc[k:])
			if k < 0 || v < 0 {
				t.Fatal("malformed resource container")
			}
			if f == 2 {
				b, _ := protowire.ConsumeBytes(rc[k:])
				nrc = protowire.AppendBytes(protowire.AppendTag(nrc, num, protowire.BytesType), b)
			} else {
				nrc = append(nrc, rc[:k+v]...)
			}
			rc = rc[k+v:]
		}
		out = protowire.AppendBytes(protowire.AppendTag(out, 1, protowire.BytesType), nrc)
	}
	return out
}
