package main

import (
	"context"
	"testing"
)

// BenchmarkExport exports the dataset once per op in each format through
// a new exporter, connection and stream, and reports, beside the sender
// process's own ns/op, B/op and allocs/op:
//   - wire-B/op: bytes client to server through the counting proxy;
//   - compress-ratio: protobuf bytes / wire bytes;
//   - ns/point: steady-state time per data point (batches 2..n), clock
//     stopped when the receiver's sink holds every point;
//   - recv-allocs/op: allocations in the receiver process, steady phase.
//
// The dataset is $EXPORTBENCH_INPUT_DIR's .pb files if set, otherwise the
// small generated one the tests use.
func BenchmarkExport(b *testing.B) {
	ds, rp := setup(b)
	for _, f := range Formats {
		b.Run("format="+f.Name, func(b *testing.B) {
			if f.transport == stef && ds.emptyNumbers > 0 {
				b.Skipf("the dataset has %d number data points with neither a value nor the no-recorded-value flag, on which stef v0.0.9 panics (splunk/stef#370)", ds.emptyNumbers)
			}
			o := passOptions{Consumers: 10, Timeout: defaultTimeout}
			var up, recvAllocs, nsPerPoint float64
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				p, err := runPass(context.Background(), rp, f, ds, o, false)
				if err != nil {
					b.Fatal(err)
				}
				up += float64(p.Up)
				recvAllocs += float64(p.RecvMallocs)
				nsPerPoint += float64(p.SteadyTime) / float64(ds.points-ds.batches[0].points)
				n++
			}
			b.ReportMetric(up/float64(n), "wire-B/op")
			b.ReportMetric(float64(ds.raw)/(up/float64(n)), "compress-ratio")
			b.ReportMetric(nsPerPoint/float64(n), "ns/point")
			b.ReportMetric(recvAllocs/float64(n), "recv-allocs/op")
		})
	}
}
