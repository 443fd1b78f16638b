package loadgen

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/wirehouse/wirehouse/internal/otlpjson"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// httpSender posts pre-encoded, pre-compressed bodies: the compression
// cost is paid once before the clock starts, so the load generator leaves
// the CPU to the server.
type httpSender struct {
	client        *http.Client
	url           string
	contentType   string
	encoding      string
	authorization string
	bodies        [][]byte
}

// newHTTPClient is the client of the HTTP senders: keep-alive connections
// for every sender, a 5 s dial timeout, bodies sent as they are
// (compressed, if at all, by the sender), and tlsCfg for https.
func newHTTPClient(concurrency int, tlsCfg *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSClientConfig:     tlsCfg,
		MaxIdleConns:        concurrency,
		MaxIdleConnsPerHost: concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
}

func newHTTPSender(cfg Config, bodies [][]byte) (*httpSender, error) {
	s := &httpSender{
		client:      newHTTPClient(cfg.Concurrency, cfg.TLS),
		url:         httpURL(cfg.Endpoint, cfg.Signal, cfg.TLS != nil),
		contentType: "application/x-protobuf",
	}
	if cfg.BearerToken != "" {
		s.authorization = "Bearer " + cfg.BearerToken
	}
	out := make([][]byte, len(bodies))
	for i, b := range bodies {
		if cfg.Encoding == "json" {
			s.contentType = "application/json"
			var err error
			if b, err = otlpjson.FromProto(cfg.Signal, b); err != nil {
				return nil, err
			}
		}
		switch cfg.Compression {
		case "gzip":
			s.encoding = "gzip"
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(b) //nolint:errcheck // bytes.Buffer cannot fail
			zw.Close()  //nolint:errcheck
			b = buf.Bytes()
		case "zstd":
			s.encoding = "zstd"
			zw, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
			if err != nil {
				return nil, err
			}
			b = zw.EncodeAll(b, nil)
			zw.Close() //nolint:errcheck
		}
		out[i] = b
	}
	s.bodies = out
	return s, nil
}

// httpURL turns an endpoint into the signal's URL: "host:port" becomes
// http://host:port/v1/logs; a URL without a path gets /v1/logs appended.
func httpURL(endpoint string, sig otlpwire.Signal, secure bool) string {
	switch {
	case strings.Contains(endpoint, "://"):
	case secure:
		endpoint = "https://" + endpoint
	default:
		endpoint = "http://" + endpoint
	}
	return strings.TrimRight(endpoint, "/") + sig.HTTPPath()
}

func (s *httpSender) send(ctx context.Context, n int64) (int64, int64, string, bool) {
	b := s.bodies[n%int64(len(s.bodies))]
	size := int64(len(b))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(b))
	if err != nil {
		return 0, size, "client", false
	}
	req.Header.Set("Content-Type", s.contentType)
	if s.authorization != "" {
		req.Header.Set("Authorization", s.authorization)
	}
	if s.encoding != "" {
		req.Header.Set("Content-Encoding", s.encoding)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, size, "timeout", false
		}
		return 0, size, "connection", false
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return 0, size, "read_response", true
	}
	if resp.StatusCode != http.StatusOK {
		return 0, size, "http_" + strconv.Itoa(resp.StatusCode), true
	}
	if s.contentType == "application/json" {
		return jsonRejected(body), size, "", true
	}
	return partialRejected(body), size, "", true
}

// jsonRejected reads partialSuccess.rejected* of an OTLP/JSON response.
func jsonRejected(b []byte) int64 {
	var r struct {
		PartialSuccess map[string]json.RawMessage `json:"partialSuccess"`
	}
	if json.Unmarshal(b, &r) != nil {
		return 0
	}
	for k, v := range r.PartialSuccess {
		if strings.HasPrefix(k, "rejected") {
			n, err := strconv.ParseInt(strings.Trim(string(v), `"`), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return 0
}

func (s *httpSender) close() error {
	s.client.CloseIdleConnections()
	return nil
}
