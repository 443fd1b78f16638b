package receiver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/grpc/mem"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// BenchmarkReceive measures the server side of one 1,000-log export, from
// the request bytes as the transport hands them over to the sink call and
// the encoded response.
//
//   - impl=wirehouse: this package's handlers; the sink gets validated
//     bytes and the record count.
//   - impl=pdata: the standard path of the Collector's OTLP receiver: the
//     request is unmarshalled into pdata and the sink gets plog.Logs (and
//     counts its records, so both sinks learn the same thing).
//
// transport=grpc starts from the message as gRPC's transport delivers it,
// a mem.BufferSlice of 16 KiB frames, and runs the codec and the method
// handler; pdata's side does what pdata's registered gRPC codec and
// plogotlp's server do (materialize into a pooled buffer, UnmarshalProto,
// call Export, MarshalProto the response). transport=http runs the
// http.Handler on a request whose body is the protobuf bytes; pdata's side
// reads the body and unmarshals it as the Collector's handler does.
func BenchmarkReceive(b *testing.B) {
	body := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 5, ScopesPerResource: 2, TotalRecords: 1000})
	frames := frameSlices(body, 16<<10)
	ctx := context.Background()
	var sunk int

	b.Run("transport=grpc/signal=logs/impl=wirehouse", func(b *testing.B) {
		r := benchReceiver(b, &sunk)
		handler := r.grpcHandler(otlpwire.SignalLogs)
		dec := func(v any) error { return otlpgrpc.Codec{}.Unmarshal(frames, v) }
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			resp, err := handler(nil, ctx, dec, nil)
			if err != nil {
				b.Fatal(err)
			}
			out, err := otlpgrpc.Codec{}.Marshal(resp)
			if err != nil {
				b.Fatal(err)
			}
			out.Free()
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("transport=grpc/signal=logs/impl=pdata", func(b *testing.B) {
		pool := mem.DefaultBufferPool()
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			buf := frames.MaterializeToBuffer(pool)
			req := plogotlp.NewExportRequest()
			err := req.UnmarshalProto(buf.ReadOnlyData())
			buf.Free()
			if err != nil {
				b.Fatal(err)
			}
			sunk += pdataSink(req.Logs())
			resp := plogotlp.NewExportResponse()
			if _, err := resp.MarshalProto(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
	})
	b.Run("transport=http/signal=logs/impl=wirehouse", func(b *testing.B) {
		benchHTTP(b, benchReceiver(b, &sunk).Handler(), body)
	})
	b.Run("transport=http/signal=logs/impl=pdata", func(b *testing.B) {
		benchHTTP(b, pdataHTTPHandler(&sunk), body)
	})
	if sunk < 0 {
		b.Log(sunk)
	}
}

// benchHTTP posts body to h once per iteration, reusing the request.
func benchHTTP(b *testing.B, h http.Handler, body []byte) {
	req, rb, w := benchRequest(b, body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rb.Reset(body)
		w.reset()
		h.ServeHTTP(w, req)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
	b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "records/s")
}

// frameSlices splits b into n-byte buffers, as gRPC's transport delivers a
// message from HTTP/2 DATA frames.
func frameSlices(b []byte, n int) mem.BufferSlice {
	var s mem.BufferSlice
	for len(b) > 0 {
		k := min(n, len(b))
		s = append(s, mem.SliceBuffer(b[:k]))
		b = b[k:]
	}
	return s
}

func benchReceiver(b *testing.B, sunk *int) *Receiver {
	b.Helper()
	sink := pipeline.SinkFunc(func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		*sunk += req.Records
		return pipeline.Outcome{}, nil
	})
	r, err := New(testConfig(), pipeline.Sinks{Logs: []pipeline.Sink{sink}})
	if err != nil {
		b.Fatal(err)
	}
	return r
}

func pdataSink(ld plog.Logs) int { return ld.LogRecordCount() }

// pdataHTTPHandler is the protobuf path of the Collector's OTLP/HTTP logs
// handler: check the content type, read the body, unmarshal into pdata,
// call the consumer, marshal the response.
func pdataHTTPHandler(sunk *int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Content-Type") != "application/x-protobuf" {
			w.WriteHeader(http.StatusUnsupportedMediaType)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		ereq := plogotlp.NewExportRequest()
		if err := ereq.UnmarshalProto(body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		*sunk += pdataSink(ereq.Logs())
		resp, err := plogotlp.NewExportResponse().MarshalProto()
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
		w.Write(resp) //nolint:errcheck
	})
}

// rewindBody is a request body that can be refilled without allocating.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

func benchRequest(b *testing.B, body []byte) (*http.Request, *rewindBody, *discardWriter) {
	b.Helper()
	rb := &rewindBody{}
	req, err := http.NewRequest(http.MethodPost, "http://bench/v1/logs", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Body = rb
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	return req, rb, &discardWriter{h: http.Header{}}
}

// discardWriter is a ResponseWriter that keeps only the status.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }
func (w *discardWriter) reset()                      { clear(w.h); w.status = 0 }
