package forward

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/otlpgrpc"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// result is what one export attempt came to.
type result struct {
	err       error         // nil: delivered (maybe in part)
	retryable bool          // err may go away by sending again
	after     time.Duration // the server's Retry-After or RetryInfo delay, if any
	rejected  int64         // partial success: records the server refused
	msg       string        // partial success error_message
}

// exporter sends export requests to one endpoint.
type exporter interface {
	export(ctx context.Context, sig otlpwire.Signal, tenant string, body []byte) result
	// probe sends an empty export request of sig, connecting at once if
	// the transport waits between connection attempts (gRPC does), and
	// waiting for the connection until ctx ends.
	probe(ctx context.Context, sig otlpwire.Signal) result
	close() error
}

// newExporter returns the exporter of endpoint for cfg's protocol.
func newExporter(cfg *Config, endpoint string) (exporter, error) {
	if cfg.Protocol == ProtocolHTTP {
		return newHTTPExporter(cfg, endpoint)
	}
	return newGRPCExporter(cfg, endpoint)
}

// partialSuccess reads partial_success (field 1) of an
// Export*ServiceResponse: rejected_* (1) and error_message (2). A
// malformed response counts as full success: the server took the request.
func partialSuccess(b []byte) (rejected int64, msg string) {
	n, m, err := otlpwire.ExportResponse(b).PartialSuccess()
	if err != nil {
		return 0, "" // a malformed answer rejects nothing we can count
	}
	if n < 0 {
		n = math.MaxInt64 // a negative count (an int64 sent as a huge varint): all of it
	}
	return n, string(m)
}

// lastBytes returns the last length-delimited field num of b.
func lastBytes(b []byte, num protowire.Number) []byte {
	var out []byte
	for len(b) > 0 {
		n, t, l := protowire.ConsumeTag(b)
		if l < 0 {
			return out
		}
		b = b[l:]
		vl := protowire.ConsumeFieldValue(n, t, b)
		if vl < 0 {
			return out
		}
		if n == num && t == protowire.BytesType {
			out, _ = protowire.ConsumeBytes(b)
		}
		b = b[vl:]
	}
	return out
}

// grpcExporter is an OTLP/gRPC client sending the spooled bytes as they
// are, with otlpgrpc's pass-through codec.
type grpcExporter struct {
	conn *grpc.ClientConn
	md   metadata.MD
	opts []grpc.CallOption
	cfg  *Config
}

func newGRPCExporter(cfg *Config, endpoint string) (*grpcExporter, error) {
	creds := insecure.NewCredentials()
	if cfg.TLS != nil {
		creds = credentials.NewTLS(cfg.TLS)
	}
	conn, err := grpc.NewClient(endpoint,
		grpc.WithTransportCredentials(creds),
		otlpgrpc.DialOption(),
		grpc.WithInitialWindowSize(4<<20),
		grpc.WithInitialConnWindowSize(16<<20),
		// grpc-go waits up to 2 minutes between reconnection attempts
		// by default: an endpoint back up would wait that long. Its
		// waits are kept within the destination's own retry bounds.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: cfg.RetryInitial, Multiplier: 1.6, Jitter: 0.2, MaxDelay: cfg.RetryMax},
			MinConnectTimeout: 5 * time.Second,
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", endpoint, err)
	}
	e := &grpcExporter{conn: conn, md: metadata.MD{}, cfg: cfg}
	for k, v := range cfg.Headers {
		e.md.Set(strings.ToLower(k), v)
	}
	if cfg.Compression != "" && cfg.Compression != "none" {
		e.opts = append(e.opts, grpc.UseCompressor(cfg.Compression))
	}
	return e, nil
}

// retryableCodes are the gRPC codes OTLP says to retry
// (RESOURCE_EXHAUSTED only when the server sends RetryInfo).
var retryableCodes = map[codes.Code]bool{
	codes.Canceled: true, codes.DeadlineExceeded: true, codes.Aborted: true,
	codes.OutOfRange: true, codes.Unavailable: true, codes.DataLoss: true,
}

func (e *grpcExporter) export(ctx context.Context, sig otlpwire.Signal, tenant string, body []byte) result {
	return e.exportWith(ctx, sig, tenant, body, e.opts)
}

func (e *grpcExporter) probe(ctx context.Context, sig otlpwire.Signal) result {
	e.conn.ResetConnectBackoff()
	return e.exportWith(ctx, sig, "", nil, append(e.opts[:len(e.opts):len(e.opts)], grpc.WaitForReady(true)))
}

func (e *grpcExporter) exportWith(ctx context.Context, sig otlpwire.Signal, tenant string, body []byte, opts []grpc.CallOption) result {
	md := e.md
	if e.cfg.TenantHeader != "" && tenant != "" {
		md = md.Copy()
		md.Set(strings.ToLower(e.cfg.TenantHeader), tenant)
	}
	ctx = metadata.NewOutgoingContext(ctx, md)
	resp, err := otlpgrpc.Export(ctx, e.conn, sig, body, opts...)
	if err == nil {
		r, m := partialSuccess(resp)
		return result{rejected: r, msg: m}
	}
	st := status.Convert(err)
	res := result{err: fmt.Errorf("export %v: %s: %s", sig, st.Code(), st.Message()), retryable: retryableCodes[st.Code()]}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			res.after = ri.GetRetryDelay().AsDuration()
			if st.Code() == codes.ResourceExhausted {
				res.retryable = true
			}
		}
	}
	return res
}

func (e *grpcExporter) close() error { return e.conn.Close() }

// httpExporter is an OTLP/HTTP client posting protobuf.
type httpExporter struct {
	client *http.Client
	base   string // scheme://host:port[/prefix], without the signal's path
	cfg    *Config
}

func newHTTPExporter(cfg *Config, endpoint string) (*httpExporter, error) {
	base := strings.TrimSuffix(endpoint, "/")
	if !strings.Contains(base, "://") {
		scheme := "http://"
		if cfg.TLS != nil {
			scheme = "https://"
		}
		base = scheme + base
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	if cfg.TLS == nil {
		tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	tr.MaxIdleConnsPerHost = 16
	return &httpExporter{client: &http.Client{Transport: tr}, base: base, cfg: cfg}, nil
}

var (
	gzipPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed); return w }}
	zstdEnc  = sync.OnceValue(func() *zstd.Encoder {
		e, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
		return e
	})
)

func compress(kind string, body []byte) ([]byte, error) {
	switch kind {
	case "gzip":
		var buf bytes.Buffer
		buf.Grow(len(body) / 4)
		w := gzipPool.Get().(*gzip.Writer)
		defer gzipPool.Put(w)
		w.Reset(&buf)
		if _, err := w.Write(body); err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case "zstd":
		return zstdEnc().EncodeAll(body, make([]byte, 0, len(body)/4)), nil
	}
	return body, nil
}

func (e *httpExporter) export(ctx context.Context, sig otlpwire.Signal, tenant string, body []byte) result {
	payload, err := compress(e.cfg.Compression, body)
	if err != nil {
		return result{err: fmt.Errorf("compress: %w", err)}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+sig.HTTPPath(), bytes.NewReader(payload))
	if err != nil {
		return result{err: fmt.Errorf("export %v: %w", sig, err)}
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.cfg.Compression == "gzip" || e.cfg.Compression == "zstd" {
		req.Header.Set("Content-Encoding", e.cfg.Compression)
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	if e.cfg.TenantHeader != "" && tenant != "" {
		req.Header.Set(e.cfg.TenantHeader, tenant)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return result{err: fmt.Errorf("export %v: %w", sig, err), retryable: true}
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 == 2 { // 200, as OTLP/HTTP says; any 2xx took the request
		r, m := partialSuccess(b)
		return result{rejected: r, msg: m}
	}
	msg := statusMessage(b, resp.Header.Get("Content-Type"))
	if rerr != nil && msg == "" {
		msg = rerr.Error()
	}
	res := result{err: fmt.Errorf("export %v: HTTP %d: %s", sig, resp.StatusCode, msg)}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		res.retryable = true
		res.after = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return res
}

// probe sends an empty request; each request dials if it has no
// connection.
func (e *httpExporter) probe(ctx context.Context, sig otlpwire.Signal) result {
	return e.export(ctx, sig, "", nil)
}

func (e *httpExporter) close() error {
	e.client.CloseIdleConnections()
	return nil
}

// statusMessage reads the message of a google.rpc.Status error body
// (protobuf: field 2), or returns the start of any other body.
func statusMessage(b []byte, contentType string) string {
	if strings.HasPrefix(contentType, "application/x-protobuf") {
		if m := lastBytes(b, 2); len(m) > 0 {
			return string(m)
		}
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return strings.TrimSpace(string(b))
}

// retryAfter parses a Retry-After header, delay seconds or an HTTP date,
// up to maxServerDelay.
func retryAfter(h string, now time.Time) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return time.Duration(min(s, int(maxServerDelay/time.Second))) * time.Second // no overflow
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return min(t.Sub(now), maxServerDelay)
	}
	return 0
}

// checkCompression reports a compression gRPC has no compressor for.
func checkCompression(protocol, name string) error {
	switch name {
	case "", "none":
		return nil
	case "gzip", "zstd":
		if protocol == ProtocolGRPC && encoding.GetCompressor(name) == nil {
			return fmt.Errorf("compression %q: no gRPC compressor registered (import internal/receiver)", name)
		}
		return nil
	}
	return errors.New("compression " + strconv.Quote(name) + ": want none, gzip or zstd")
}
