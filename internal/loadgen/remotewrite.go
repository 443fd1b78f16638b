package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Remote write (Prometheus remote write 1.0) load.
//
// The series come from synth's Kubernetes metric set: one synth.Metrics
// request of Variants×Batch data points is decoded, and every data point
// becomes a series named by its metric name with its 40 attributes as
// labels. Series slice v (v < Variants) holds series [v×Batch, (v+1)×Batch).
// Request n carries one sample of every series of slice n mod Variants at
// timestamp base + n/Variants milliseconds: each round over the slices
// moves every series one millisecond forward.
//
// Requests of the same slice must reach the server in order (the TSDB
// rejects out-of-order samples), so a worker waits for the previous request
// of its slice to finish before it starts the clock on its own; with
// --concurrency above --variants some workers wait.

// maxPrebuilt bounds the memory of pre-built remote-write bodies; requests
// past it are built while sending (and their build time counts as latency).
const maxPrebuilt = 512 << 20

// DefaultRemoteWriteEndpoint is where remote write load goes by default.
const DefaultRemoteWriteEndpoint = "http://localhost:9090/api/v1/write"

// Series is one series sent by remote write: its labels, sorted by name,
// __name__ included.
type Series []prompb.Label

// Name returns the value of the __name__ label.
func (s Series) Name() string {
	for _, l := range s {
		if l.Name == "__name__" {
			return l.Value
		}
	}
	return ""
}

// Written is what a remote write run got acknowledged: per series, the
// number of samples, all with timestamps in [First, Last] (Unix ms).
type Written struct {
	Series  []Series
	Samples []int64 // acknowledged samples of Series[i]
	First   int64
	Last    int64
}

// remoteSeries returns n distinct series from synth's metric set: each
// data point's metric name and attributes (values as text), read with
// otlpwire.
func remoteSeries(seed int64, n int) ([]Series, error) {
	body := synth.Metrics(synth.Config{Seed: seed, Resources: 1, ScopesPerResource: 1, TotalRecords: n})
	out := make([]Series, 0, n)
	seen := make(map[string]bool, n)
	var key strings.Builder
	add := func(name []byte, attrs otlpwire.Attributes) error {
		s := Series{{Name: "__name__", Value: string(name)}}
		for kv, err := range attrs.All() {
			if err != nil {
				return err
			}
			s = append(s, prompb.Label{Name: string(kv.Key), Value: valueText(kv.Value)})
		}
		slices.SortFunc(s, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
		key.Reset()
		for _, l := range s {
			key.WriteString(l.Name)
			key.WriteByte(0)
			key.WriteString(l.Value)
			key.WriteByte(0)
		}
		if k := key.String(); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
		return nil
	}
	var (
		mf otlpwire.MetricFields
		nf otlpwire.NumberDataPointFields
		hf otlpwire.HistogramDataPointFields
		ef otlpwire.ExponentialHistogramDataPointFields
		sf otlpwire.SummaryDataPointFields
	)
	err := walkMetrics(otlpwire.MetricsRequest(body), &mf, func(string) error {
		switch mf.Type {
		case otlpwire.MetricTypeGauge, otlpwire.MetricTypeSum:
			return mf.NumberDataPoints().Each(func(p otlpwire.NumberDataPoint) error {
				if err := p.Read(&nf); err != nil {
					return err
				}
				return add(mf.Name, nf.Attributes)
			})
		case otlpwire.MetricTypeHistogram:
			return mf.HistogramDataPoints().Each(func(p otlpwire.HistogramDataPoint) error {
				if err := p.Read(&hf); err != nil {
					return err
				}
				return add(mf.Name, hf.Attributes)
			})
		case otlpwire.MetricTypeExponentialHistogram:
			return mf.ExponentialHistogramDataPoints().Each(func(p otlpwire.ExponentialHistogramDataPoint) error {
				if err := p.Read(&ef); err != nil {
					return err
				}
				return add(mf.Name, ef.Attributes)
			})
		case otlpwire.MetricTypeSummary:
			return mf.SummaryDataPoints().Each(func(p otlpwire.SummaryDataPoint) error {
				if err := p.Read(&sf); err != nil {
					return err
				}
				return add(mf.Name, sf.Attributes)
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("remote write: read synth metrics: %w", err)
	}
	if len(out) < n {
		return nil, fmt.Errorf("remote write: synth gave %d distinct series, want %d (lower --batch or --variants)", len(out), n)
	}
	return out[:n], nil
}

// remoteWriteSender posts snappy-compressed prompb.WriteRequests.
type remoteWriteSender struct {
	client        *http.Client
	url           string
	authorization string
	batch         int
	variants      int
	series        []Series
	base          int64    // timestamp of round 0, Unix ms
	bodies        [][]byte // pre-built requests 0..len-1

	mu    sync.Mutex
	cond  *sync.Cond
	next  []int64 // per slice, the round whose request may go next
	acked []int64 // per slice, acknowledged requests
	first int64   // lowest acknowledged round, -1 if none
	last  int64   // highest acknowledged round
}

func newRemoteWriteSender(cfg Config) (*remoteWriteSender, error) {
	series, err := remoteSeries(cfg.Seed, cfg.Variants*cfg.Batch)
	if err != nil {
		return nil, err
	}
	s := &remoteWriteSender{
		client: newHTTPClient(cfg.Concurrency, cfg.TLS),
		url:    cfg.Endpoint, batch: cfg.Batch, variants: cfg.Variants, series: series,
		next: make([]int64, cfg.Variants), acked: make([]int64, cfg.Variants), first: -1, last: -1,
	}
	if cfg.AdminBearerToken != "" {
		s.authorization = "Bearer " + cfg.AdminBearerToken
	}
	if !strings.Contains(s.url, "://") {
		s.url = "http://" + s.url
	}
	s.cond = sync.NewCond(&s.mu)
	// Pre-build every request of a --count run, or one round of a
	// --duration run, within maxPrebuilt bytes.
	n := cfg.Variants
	if cfg.Count > 0 {
		n = cfg.Count
	}
	rounds := int64((n + cfg.Variants - 1) / cfg.Variants)
	// The last pre-built round is now, so a run never writes ahead of the
	// clock unless it outruns a round per millisecond.
	s.base = time.Now().UnixMilli() - rounds + 1
	for i := range n {
		b := s.build(int64(i))
		if i == 0 && int64(len(b))*int64(n) > maxPrebuilt {
			n = max(cfg.Variants, maxPrebuilt/len(b))
		}
		if i >= n {
			break
		}
		s.bodies = append(s.bodies, b)
	}
	return s, nil
}

// build returns request n, snappy-compressed, as a new slice.
func (s *remoteWriteSender) build(n int64) []byte {
	v, round := int(n%int64(s.variants)), n/int64(s.variants)
	ts := s.base + round
	req := prompb.WriteRequest{Timeseries: make([]prompb.TimeSeries, s.batch)}
	samples := make([]prompb.Sample, s.batch)
	for k := range s.batch {
		// A stable, round-dependent value: cumulative-looking counters.
		samples[k] = prompb.Sample{Value: float64((round+1)*int64(1+k%7)) + float64(v)/16, Timestamp: ts}
		req.Timeseries[k] = prompb.TimeSeries{Labels: s.series[v*s.batch+k], Samples: samples[k : k+1]}
	}
	raw, err := req.Marshal()
	if err != nil {
		panic(err) // prompb marshalling of plain values cannot fail
	}
	return snappy.Encode(nil, raw)
}

func (s *remoteWriteSender) body(n int64) []byte {
	if n < int64(len(s.bodies)) {
		return s.bodies[n]
	}
	return s.build(n)
}

// acquire waits until every earlier request of n's slice finished; it
// returns false if ctx ended first.
func (s *remoteWriteSender) acquire(ctx context.Context, n int64) bool {
	v, round := n%int64(s.variants), n/int64(s.variants)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next[v] == round {
		return true
	}
	stop := context.AfterFunc(ctx, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer stop()
	for s.next[v] != round {
		if ctx.Err() != nil {
			return false
		}
		s.cond.Wait()
	}
	return true
}

// release lets the next request of n's slice go and records whether n was
// acknowledged.
func (s *remoteWriteSender) release(n int64, ok bool) {
	v, round := n%int64(s.variants), n/int64(s.variants)
	s.mu.Lock()
	s.next[v] = round + 1
	if ok {
		s.acked[v]++
		if s.first < 0 || round < s.first {
			s.first = round
		}
		s.last = max(s.last, round)
	}
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *remoteWriteSender) send(ctx context.Context, n int64) (int64, int64, string, bool) {
	body := s.body(n)
	size := int64(len(body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, size, "client", false
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	if s.authorization != "" {
		req.Header.Set("Authorization", s.authorization)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, size, "timeout", false
		}
		return 0, size, "connection", false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) //nolint:errcheck // only the status matters
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return 0, size, "http_" + strconv.Itoa(resp.StatusCode), true
	}
	return 0, size, "", true
}

// written returns what the server acknowledged.
func (s *remoteWriteSender) written() *Written {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &Written{Series: s.series, Samples: make([]int64, len(s.series)), First: s.base + s.first, Last: s.base + s.last}
	for v, a := range s.acked {
		for k := range s.batch {
			w.Samples[v*s.batch+k] = a
		}
	}
	return w
}

func (s *remoteWriteSender) close() error {
	s.client.CloseIdleConnections()
	return nil
}
