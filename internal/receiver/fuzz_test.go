package receiver

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// FuzzHTTPBody drives the OTLP/HTTP handler's body path (size limits,
// decompression, JSON transcoding, validation, sinks, response encoding)
// with arbitrary bodies under each content type and encoding. It must
// never panic, must answer with a status from the error table, must hand
// the sink only bodies otlpwire validates (for metrics, after a pipeline.Validating
// first sink), and must give back every in-flight byte.
func FuzzHTTPBody(f *testing.F) {
	small := func(s otlpwire.Signal) []byte {
		return synth.Generate(s, synth.Config{Seed: 3, Resources: 1, ScopesPerResource: 1, TotalRecords: 1})
	}
	for i, s := range []otlpwire.Signal{otlpwire.SignalMetrics, otlpwire.SignalLogs, otlpwire.SignalTraces} {
		b := small(s)
		f.Add(uint8(i), uint8(0), b)
		f.Add(uint8(i), uint8(1), gzipped(f, b))
		f.Add(uint8(i), uint8(2), zstded(f, b))
		f.Add(uint8(i), uint8(8), deflated(f, b))
		f.Add(uint8(i), uint8(0), b[:len(b)/3])
		f.Add(uint8(i), uint8(0), renumberScopes(f, b, 1000)) // OTLP 0.15–0.19 layout
	}
	f.Add(uint8(1), uint8(4), []byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1","body":{"stringValue":"x"},"traceId":"5b8efff798038103d269b633813fc60c"}]}]}]}`))
	f.Add(uint8(2), uint8(4), []byte(`{"resource_spans":[{"scope_spans":[{"spans":[{"name":"a","kind":2,"span_id":"eee19b7ec3c1b174"}]}]}]}`))
	f.Add(uint8(0), uint8(4), []byte(`{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"m","gauge":{"dataPoints":[{"asInt":"5"}]}}]}]}]}`))
	f.Add(uint8(1), uint8(0), []byte{0x0a, 0x02, 0x0a, 0x80})

	cfg := fuzzConfig()
	sink := pipeline.SinkFunc(func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		if err := req.Signal.Validate(req.Body); err != nil {
			panic("sink got an invalid body: " + err.Error())
		}
		if req.Records > 1 {
			return pipeline.Outcome{Rejected: 1, Message: "one rejected"}, nil
		}
		return pipeline.Outcome{}, nil
	})
	// Metrics go first to a pipeline.Validating sink, as in serve: the receiver
	// skips its own Validate, and the sink after it must still see only
	// valid bodies.
	self := pipeline.Validating(pipeline.SinkFunc(func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		return pipeline.Outcome{}, req.Signal.Validate(req.Body)
	}))
	r, err := New(cfg, pipeline.Sinks{Metrics: []pipeline.Sink{self, sink}, Logs: []pipeline.Sink{sink}, Traces: []pipeline.Sink{sink}})
	if err != nil {
		f.Fatal(err)
	}
	h := r.Handler()
	allowed := map[int]bool{200: true, 400: true, 413: true, 415: true, 429: true}
	// mode bits 0-1 and 3 pick the encoding, bit 2 JSON.
	encodings := []string{"", "gzip", "zstd", "identity", "deflate", "GZIP", " zstd ", "x-gzip"}

	f.Fuzz(func(t *testing.T, sig, mode uint8, body []byte) {
		s := otlpwire.Signals[int(sig)%len(otlpwire.Signals)]
		ct := "application/x-protobuf"
		if mode&4 != 0 {
			ct = "application/json"
		}
		req, err := http.NewRequest(http.MethodPost, "http://fuzz"+s.HTTPPath(), bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", ct)
		if enc := encodings[int(mode&3)|int(mode>>3&1)<<2]; enc != "" {
			req.Header.Set("Content-Encoding", enc)
		}
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		if !allowed[w.status] {
			t.Fatalf("status %d not in the error table", w.status)
		}
		if got := w.h.Get("Content-Type"); got != ct {
			t.Fatalf("response Content-Type %q for a %s request", got, ct)
		}
		if used := drained(r); used != 0 {
			t.Fatalf("%d in-flight bytes not released", used)
		}
	})
}

// FuzzLokiPush drives the Loki push handler's body path (size limits,
// decompression, snappy, the push decoders, the sinks) with arbitrary
// bodies, protobuf (snappy-encoded as sent, or not) and JSON: never a
// panic, a status Loki answers (204, 400, 413, 415, 429), only valid OTLP
// bodies to the sink, and every in-flight byte given back.
func FuzzLokiPush(f *testing.F) {
	now := time.Now().UnixNano()
	f.Add(uint8(0), snappy.Encode(nil, lokiPush(`{job="a"}`, []int64{now}, []string{"x"})))
	f.Add(uint8(0), lokiPush(`{job="a", service_name="b"}`, []int64{now, now}, []string{"x", "y"}))
	f.Add(uint8(1), []byte(fmt.Sprintf(`{"streams":[{"stream":{"job":"a"},"values":[["%d","x",{"k":"v"}]]}]}`, now)))
	f.Add(uint8(1), []byte(`{"streams":[{"labels":"{a=\"b\"}","entries":[{"ts":"2026-11-30T01:00:00Z","line":"x"}]}]}`))
	cfg := fuzzConfig()
	sink := pipeline.SinkFunc(func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		if err := req.Signal.Validate(req.Body); err != nil {
			panic("sink got an invalid body: " + err.Error())
		}
		return pipeline.Outcome{}, nil
	})
	r, err := New(cfg, pipeline.Sinks{Logs: []pipeline.Sink{sink}})
	if err != nil {
		f.Fatal(err)
	}
	h := r.LokiPushHandler()
	allowed := map[int]bool{204: true, 400: true, 413: true, 415: true, 429: true}
	f.Fuzz(func(t *testing.T, mode uint8, body []byte) {
		if mode&2 != 0 {
			body = snappy.Encode(nil, body)
		}
		req, err := http.NewRequest(http.MethodPost, "http://fuzz"+LokiPushPath, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if mode&1 != 0 {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/x-protobuf")
		}
		w := &discardWriter{h: http.Header{}}
		h.ServeHTTP(w, req)
		if !allowed[w.status] {
			t.Fatalf("status %d not Loki's", w.status)
		}
		if used := drained(r); used != 0 {
			t.Fatalf("%d in-flight bytes not released", used)
		}
	})
}

// fuzzConfig is the receivers' configuration in the fuzz targets: small
// bounds, so that a fuzzed body meets them.
func fuzzConfig() Config {
	cfg := testConfig()
	cfg.MaxRequestBytes = 64 << 10
	cfg.MaxDecompressedBytes = 256 << 10
	cfg.MaxGRPCMessageBytes = 256 << 10
	cfg.MaxInflightBytes = 1 << 20
	return cfg
}
