package receiver

import (
	"context"
	"fmt"
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otellog "go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/metric"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The OpenTelemetry Go SDK's own exporters, over real loopback
// connections, with gzip: what they send must arrive intact, checked with
// pdata as the oracle.

const e2eRecords = 250

func sdkResource(name string) *resource.Resource {
	return resource.NewSchemaless(attribute.String("service.name", name))
}

func TestSDKLogs(t *testing.T) {
	for _, transport := range []string{"grpc", "http"} {
		t.Run(transport, func(t *testing.T) {
			r, rec := start(t, testConfig())
			ctx := context.Background()
			var exp sdklog.Exporter
			var err error
			if transport == "grpc" {
				exp, err = otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(r.GRPCAddr().String()),
					otlploggrpc.WithInsecure(), otlploggrpc.WithCompressor("gzip"))
			} else {
				exp, err = otlploghttp.New(ctx, otlploghttp.WithEndpoint(r.HTTPAddr().String()),
					otlploghttp.WithInsecure(), otlploghttp.WithCompression(otlploghttp.GzipCompression))
			}
			if err != nil {
				t.Fatal(err)
			}
			lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
				sdklog.WithResource(sdkResource("e2e-logs")))
			logger := lp.Logger("e2e")
			for i := range e2eRecords {
				var lr otellog.Record
				lr.SetBody(attribute.StringValue(fmt.Sprintf("hello %d", i)))
				lr.SetSeverity(otellog.SeverityWarn)
				lr.AddAttributes(attribute.Int("i", i))
				logger.Emit(ctx, lr)
			}
			if err := lp.Shutdown(ctx); err != nil {
				t.Fatalf("exporter shutdown (flush): %v", err)
			}
			if n := rec.waitRecords(t, otlpwire.SignalLogs, e2eRecords); n != e2eRecords {
				t.Fatalf("received %d log records, want %d", n, e2eRecords)
			}
			seen := map[string]bool{}
			for _, b := range rec.bodies(otlpwire.SignalLogs) {
				req := plogotlp.NewExportRequest()
				if err := req.UnmarshalProto(b); err != nil {
					t.Fatalf("pdata cannot read the stored request: %v", err)
				}
				rls := req.Logs().ResourceLogs()
				for i := range rls.Len() {
					if v, _ := rls.At(i).Resource().Attributes().Get("service.name"); v.Str() != "e2e-logs" {
						t.Errorf("service.name = %q", v.Str())
					}
					sls := rls.At(i).ScopeLogs()
					for j := range sls.Len() {
						lrs := sls.At(j).LogRecords()
						for k := range lrs.Len() {
							lr := lrs.At(k)
							seen[lr.Body().Str()] = true
							if lr.SeverityText() != "" && lr.SeverityNumber() != 13 {
								t.Errorf("severity %d, want 13 (WARN)", lr.SeverityNumber())
							}
						}
					}
				}
			}
			for i := range e2eRecords {
				if !seen[fmt.Sprintf("hello %d", i)] {
					t.Fatalf("log body %q missing", fmt.Sprintf("hello %d", i))
				}
			}
		})
	}
}

func TestSDKTraces(t *testing.T) {
	for _, transport := range []string{"grpc", "http"} {
		t.Run(transport, func(t *testing.T) {
			r, rec := start(t, testConfig())
			ctx := context.Background()
			var exp sdktrace.SpanExporter
			var err error
			if transport == "grpc" {
				exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpoint(r.GRPCAddr().String()),
					otlptracegrpc.WithInsecure(), otlptracegrpc.WithCompressor("gzip"))
			} else {
				exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(r.HTTPAddr().String()),
					otlptracehttp.WithInsecure(), otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
			}
			if err != nil {
				t.Fatal(err)
			}
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(sdkResource("e2e-traces")))
			tracer := tp.Tracer("e2e")
			ids := map[string]bool{}
			for i := range e2eRecords {
				_, span := tracer.Start(ctx, fmt.Sprintf("op-%d", i))
				ids[span.SpanContext().SpanID().String()] = true
				span.End()
			}
			if err := tp.Shutdown(ctx); err != nil {
				t.Fatalf("exporter shutdown (flush): %v", err)
			}
			if n := rec.waitRecords(t, otlpwire.SignalTraces, e2eRecords); n != e2eRecords {
				t.Fatalf("received %d spans, want %d", n, e2eRecords)
			}
			for _, b := range rec.bodies(otlpwire.SignalTraces) {
				req := ptraceotlp.NewExportRequest()
				if err := req.UnmarshalProto(b); err != nil {
					t.Fatalf("pdata cannot read the stored request: %v", err)
				}
				rss := req.Traces().ResourceSpans()
				for i := range rss.Len() {
					sss := rss.At(i).ScopeSpans()
					for j := range sss.Len() {
						spans := sss.At(j).Spans()
						for k := range spans.Len() {
							delete(ids, spans.At(k).SpanID().String())
						}
					}
				}
			}
			if len(ids) != 0 {
				t.Fatalf("%d span ids sent but not received", len(ids))
			}
		})
	}
}

func TestSDKMetrics(t *testing.T) {
	for _, transport := range []string{"grpc", "http"} {
		t.Run(transport, func(t *testing.T) {
			r, rec := start(t, testConfig())
			ctx := context.Background()
			var exp sdkmetric.Exporter
			var err error
			if transport == "grpc" {
				exp, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(r.GRPCAddr().String()),
					otlpmetricgrpc.WithInsecure(), otlpmetricgrpc.WithCompressor("gzip"))
			} else {
				exp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(r.HTTPAddr().String()),
					otlpmetrichttp.WithInsecure(), otlpmetrichttp.WithCompression(otlpmetrichttp.GzipCompression))
			}
			if err != nil {
				t.Fatal(err)
			}
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)),
				sdkmetric.WithResource(sdkResource("e2e-metrics")))
			counter, err := mp.Meter("e2e").Int64Counter("e2e.requests")
			if err != nil {
				t.Fatal(err)
			}
			for i := range e2eRecords { // one series per attribute value
				counter.Add(ctx, int64(i+1), metric.WithAttributes(attribute.Int("i", i)))
			}
			if err := mp.Shutdown(ctx); err != nil {
				t.Fatalf("exporter shutdown (flush): %v", err)
			}
			if n := rec.waitRecords(t, otlpwire.SignalMetrics, e2eRecords); n != e2eRecords {
				t.Fatalf("received %d data points, want %d", n, e2eRecords)
			}
			var sum int64
			for _, b := range rec.bodies(otlpwire.SignalMetrics) {
				req := pmetricotlp.NewExportRequest()
				if err := req.UnmarshalProto(b); err != nil {
					t.Fatalf("pdata cannot read the stored request: %v", err)
				}
				rms := req.Metrics().ResourceMetrics()
				for i := range rms.Len() {
					sms := rms.At(i).ScopeMetrics()
					for j := range sms.Len() {
						ms := sms.At(j).Metrics()
						for k := range ms.Len() {
							if ms.At(k).Name() != "e2e.requests" {
								t.Errorf("metric %q", ms.At(k).Name())
							}
							dps := ms.At(k).Sum().DataPoints()
							for p := range dps.Len() {
								sum += dps.At(p).IntValue()
							}
						}
					}
				}
			}
			if want := int64(e2eRecords * (e2eRecords + 1) / 2); sum != want {
				t.Fatalf("sum of counter values = %d, want %d", sum, want)
			}
		})
	}
}
