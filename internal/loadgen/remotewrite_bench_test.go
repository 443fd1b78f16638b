package loadgen

import (
	"testing"

	"github.com/klauspost/compress/snappy"
)

// BenchmarkRemoteWriteDecode decompresses the bodies `wirehouse load
// --transport remote-write` sends with its defaults (--batch 1000,
// --variants 16: series of synth's Kubernetes set, 40 attributes each as
// labels) as a receiver must before it reads a label: snappy.Decode into a
// reused buffer, the decoder internal/promwrite uses. ns/sample is the
// floor this step sets for any receiver of that load; raw-B/sample is the
// decompressed request size per sample.
//
//	go test -run '^$' -bench BenchmarkRemoteWriteDecode ./internal/loadgen
func BenchmarkRemoteWriteDecode(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Signal, cfg.Transport, cfg.Endpoint = 0, "remote-write", "http://127.0.0.1:1/api/v1/write"
	s, err := newRemoteWriteSender(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	var dst []byte
	var raw int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := s.body(int64(i % cfg.Variants))
		n, err := snappy.DecodedLen(body)
		if err != nil {
			b.Fatal(err)
		}
		if cap(dst) < n {
			dst = make([]byte, n)
		}
		if _, err := snappy.Decode(dst[:n], body); err != nil {
			b.Fatal(err)
		}
		raw += int64(n)
	}
	samples := float64(b.N) * float64(cfg.Batch)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/samples, "ns/sample")
	b.ReportMetric(float64(raw)/samples, "raw-B/sample")
}
