package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/stefexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configcompression"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// transport is how a format reaches its receiver.
type transport int

const (
	otlpGRPC  transport = iota // otlpexporter → otlpreceiver gRPC
	otlpHTTP                   // otlphttpexporter → otlpreceiver HTTP
	stef                       // stefexporter → stefreceiver
	relayHTTP                  // the request's own bytes → otlpreceiver HTTP
)

// Format is one way of exporting metrics.
type Format struct {
	Name        string
	transport   transport
	encoding    string // "proto" or "json" for otlpHTTP
	compression string // "", "gzip" or "zstd"
}

// Formats lists every format, the seed's eight first.
var Formats = []Format{
	{"otlp-grpc", otlpGRPC, "", ""},
	{"otlp-grpc+zstd", otlpGRPC, "", "zstd"},
	{"otlp-http-proto", otlpHTTP, "proto", ""},
	{"otlp-http-proto+zstd", otlpHTTP, "proto", "zstd"},
	{"otlp-http-json", otlpHTTP, "json", ""},
	{"otlp-http-json+zstd", otlpHTTP, "json", "zstd"},
	{"stef", stef, "", ""},
	{"stef+zstd", stef, "", "zstd"},
	{"otlp-grpc+gzip", otlpGRPC, "", "gzip"},
	{"otlp-http-proto+gzip", otlpHTTP, "proto", "gzip"},
	{"otlp-http-json+gzip", otlpHTTP, "json", "gzip"},
	{"relay-http", relayHTTP, "", ""},
	{"relay-http+zstd", relayHTTP, "", "zstd"},
}

// parseFormats returns the formats named in a comma-separated list, or
// all of them for "" or "all".
func parseFormats(list string) ([]Format, error) {
	if list == "" || list == "all" {
		return Formats, nil
	}
	var out []Format
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, f := range Formats {
			if f.Name == name {
				out = append(out, f)
				found = true
				break
			}
		}
		if !found {
			var names []string
			for _, f := range Formats {
				names = append(names, f.Name)
			}
			return nil, fmt.Errorf("unknown format %q (want one of %s)", name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// sender exports one batch at a time; Send returns once the batch is
// queued (or, for a synchronous sender, sent). Err reports an export that
// failed after Send returned.
type sender interface {
	Send(ctx context.Context, b *batch) error
	Shutdown(ctx context.Context) error
	Err() error
}

// queueConfig is the sending queue every exporter gets: consumers
// concurrent exports, room for every batch so Send never drops, no
// re-batching (each batch is exported as it came), no retries.
func queueConfig(consumers, batches int) exporterhelper.QueueBatchConfig {
	q := exporterhelper.NewDefaultQueueConfig()
	q.NumConsumers = consumers
	q.QueueSize = int64(batches + 1)
	q.BlockOnOverflow = true
	q.WaitForResult = false
	q.Batch = configoptional.None[exporterhelper.BatchConfig]()
	return q
}

// newSender starts the sender of format f against the receivers at ep.
func newSender(ctx context.Context, f Format, ep endpoints, consumers, batches int) (sender, error) {
	if f.transport == relayHTTP {
		return newRelay(f, ep.OTLPHTTP, consumers, batches)
	}
	q := configoptional.Some(queueConfig(consumers, batches))
	var (
		fac exporter.Factory
		cfg component.Config
	)
	switch f.transport {
	case otlpGRPC:
		fac = otlpexporter.NewFactory()
		c := fac.CreateDefaultConfig().(*otlpexporter.Config)
		c.ClientConfig.Endpoint = ep.OTLPGRPC
		c.ClientConfig.TLS.Insecure = true
		c.ClientConfig.Compression = configcompression.Type(f.compression)
		c.QueueConfig = q
		c.RetryConfig.Enabled = false
		cfg = c
	case otlpHTTP:
		fac = otlphttpexporter.NewFactory()
		c := fac.CreateDefaultConfig().(*otlphttpexporter.Config)
		c.ClientConfig.Endpoint = "http://" + ep.OTLPHTTP
		c.ClientConfig.Compression = configcompression.Type(f.compression)
		c.ClientConfig.MaxIdleConnsPerHost = consumers
		c.Encoding = otlphttpexporter.EncodingType(f.encoding)
		c.QueueConfig = q
		c.RetryConfig.Enabled = false
		cfg = c
	case stef:
		fac = stefexporter.NewFactory()
		c := fac.CreateDefaultConfig().(*stefexporter.Config)
		c.Endpoint = ep.STEF
		c.TLS.Insecure = true
		c.Compression = configcompression.Type(f.compression)
		c.QueueConfig = q
		c.RetryConfig.Enabled = false
		cfg = c
	}
	if v, ok := cfg.(interface{ Validate() error }); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("configure %s: %w", f.Name, err)
		}
	}
	// The exporter's error log is kept: with the queue in front, a failed
	// export shows up only there.
	core, logs := observer.New(zapcore.ErrorLevel)
	set := exportertest.NewNopSettings(fac.Type())
	set.Logger = zap.New(core)
	exp, err := fac.CreateMetrics(ctx, set, cfg)
	if err != nil {
		return nil, fmt.Errorf("create %s exporter: %w", f.Name, err)
	}
	if err := exp.Start(ctx, componenttest.NewNopHost()); err != nil {
		return nil, fmt.Errorf("start %s exporter: %w", f.Name, err)
	}
	return collectorSender{exp, logs}, nil
}

// collectorSender sends through a Collector exporter.
type collectorSender struct {
	exp  exporter.Metrics
	logs *observer.ObservedLogs
}

func (s collectorSender) Send(ctx context.Context, b *batch) error {
	return s.exp.ConsumeMetrics(ctx, b.md)
}

func (s collectorSender) Shutdown(ctx context.Context) error { return s.exp.Shutdown(ctx) }

// Err returns the last error the exporter logged, if any.
func (s collectorSender) Err() error {
	all := s.logs.All()
	if len(all) == 0 {
		return nil
	}
	last := all[len(all)-1]
	msg := last.Message
	for k, v := range last.ContextMap() {
		if k == "error" {
			msg += ": " + fmt.Sprint(v)
		}
	}
	return fmt.Errorf("%d exporter errors logged, the last: %s", len(all), msg)
}

// relay is what wirehouse does when it forwards: the request's original
// bytes, never unmarshalled or marshalled again, POSTed over OTLP/HTTP by
// consumers workers from a queue, optionally zstd-compressed.
type relay struct {
	url         string
	compression string
	client      *http.Client
	queue       chan *batch
	wg          sync.WaitGroup
	mu          sync.Mutex
	err         error
	closeOnce   sync.Once
}

func newRelay(f Format, addr string, consumers, batches int) (*relay, error) {
	r := &relay{
		url:         "http://" + addr + "/v1/metrics",
		compression: f.compression,
		client: &http.Client{
			Timeout:   30 * time.Second,
			Transport: &http.Transport{MaxIdleConnsPerHost: consumers, MaxIdleConns: consumers},
		},
		queue: make(chan *batch, batches+1),
	}
	var zw *zstd.Encoder
	if r.compression == "zstd" {
		zw = relayZstd()
	}
	for range consumers {
		r.wg.Add(1)
		go r.consume(zw)
	}
	return r, nil
}

// relayZstd is the process's zstd encoder for the relay, made once as a
// long-lived forwarder makes it (the Collector's HTTP client keeps its
// encoders in a process-wide pool likewise). EncodeAll is safe for
// concurrent use. Its level is SpeedFastest, the level otlphttpexporter's
// default compression level maps to, so the two compress alike.
var relayZstd = sync.OnceValue(func() *zstd.Encoder {
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		panic(err) // only for invalid options
	}
	return zw
})

func (r *relay) Send(ctx context.Context, b *batch) error {
	select {
	case r.queue <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *relay) consume(zw *zstd.Encoder) {
	defer r.wg.Done()
	var zbuf []byte
	for b := range r.queue {
		payload := b.raw
		if zw != nil {
			zbuf = zw.EncodeAll(b.raw, zbuf[:0])
			payload = zbuf
		}
		if err := r.post(payload); err != nil {
			r.mu.Lock()
			r.err = err
			r.mu.Unlock()
		}
	}
}

func (r *relay) post(payload []byte) error {
	req, err := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(payload))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if r.compression != "" {
		req.Header.Set("Content-Encoding", r.compression)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("relay post: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("relay post: %s", resp.Status)
	}
	return nil
}

// Err returns the last failed post, if any.
func (r *relay) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *relay) Shutdown(context.Context) error {
	r.closeOnce.Do(func() { close(r.queue) })
	r.wg.Wait()
	r.client.CloseIdleConnections()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}
