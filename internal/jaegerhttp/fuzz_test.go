package jaegerhttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/internal/tracemetrics"
)

// FuzzTraceJSON: any bytes as the OTLP TracesData a trace read gives are
// turned into Jaeger's JSON or refused with an error, never a panic, and
// what is turned encodes as JSON.
func FuzzTraceJSON(f *testing.F) {
	for seed := range int64(4) {
		f.Add(synth.Traces(synth.Config{Seed: seed, Resources: 2, ScopesPerResource: 2, TotalRecords: 20}))
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutInt("ip", 1)
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID{1})
	sp.SetSpanID(pcommon.SpanID{2})
	sp.SetParentSpanID(pcommon.SpanID{3})
	sp.Attributes().PutDouble("nan", 0)
	sp.Attributes().PutEmptyMap("m").PutEmptySlice("s").AppendEmpty().SetEmptyBytes().FromRaw([]byte{1})
	sp.Attributes().PutEmptySlice("@jaeger@warnings").AppendEmpty().SetStr("w")
	sp.Links().AppendEmpty().SetSpanID(pcommon.SpanID{4})
	sp.Events().AppendEmpty().SetName("e")
	b, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var bld builder
		if err := bld.add(data); err != nil {
			return
		}
		for _, tr := range bld.result() {
			if _, err := json.Marshal(tr); err != nil {
				t.Fatalf("trace of %x does not encode: %v", data, err)
			}
		}
	})
}

// FuzzSearchParams: any query string of /api/traces is parsed or refused
// with an error, never a panic.
func FuzzSearchParams(f *testing.F) {
	for _, q := range []string{
		"service=a&operation=b&tags=%7B%22error%22%3A%22true%22%7D&minDuration=1ms&maxDuration=2s&start=1&end=2&limit=20",
		"traceID=0f&traceID=" + "0123456789abcdef0123456789abcdef", "service=a&tag=k:v:w", "lookback=1h&service=x",
		"endTs=1795428000000&lookback=86400000&service=frontend", "endTs=-1", "lookback=9223372036854775807",
	} {
		f.Add(q)
	}
	h := &Handler{cfg: Config{MaxTraces: 10, Now: func() time.Time { return time.Unix(1e9, 0) },
		Dependencies: func(_ context.Context, _ string, start, end time.Time) ([]tracemetrics.Dependency, error) {
			if end.Before(start) {
				return nil, errors.New("a window ending before it starts")
			}
			return []tracemetrics.Dependency{{Parent: "a", Child: "b", CallCount: 1}}, nil
		}}}
	f.Fuzz(func(t *testing.T, q string) {
		r := httptest.NewRequest("GET", "/api/traces", nil)
		r.URL.RawQuery = q
		h.parseSearch(r) //nolint:errcheck // any error is fine; a panic is not
		// The dependencies' parameters: a window that ends at or after
		// its start, or a bad-request error.
		if _, err := h.dependencies(r); err != nil && readapi.Classify(err) != readapi.KindBadRequest {
			t.Fatalf("dependencies?%s: %v", q, err)
		}
	})
}
