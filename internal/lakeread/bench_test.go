package lakeread_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// BenchmarkTrace: a trace by id from a lake of 100,000 spans (10
// requests of synth's realistic traces), over 50 ids in turn, its files
// kept open between lookups as serve keeps them.
func BenchmarkTrace(b *testing.B) {
	dir := b.TempDir()
	var reqs [][]byte
	var ids []pcommon.TraceID
	for i := range 10 {
		body := synth.Traces(synth.Config{Seed: int64(i), Resources: 10, ScopesPerResource: 2, TotalRecords: 10_000})
		reqs = append(reqs, body)
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			b.Fatal(err)
		}
		for k := 0; k < 5; k++ {
			ids = append(ids, req.Traces().ResourceSpans().At(k).ScopeSpans().At(0).Spans().At(k).TraceID())
		}
	}
	writeLake(b, dir, reqs...)
	// chunk cache: the page readers kept between lookups (and their
	// dictionaries), or none.
	for _, cache := range []int64{lakeread.DefaultChunkCacheBytes, 0} {
		name := "chunk_cache"
		if cache == 0 {
			name = "no_chunk_cache"
		}
		b.Run(name, func(b *testing.B) {
			r := newReader(b, dir, func(c *lakeread.Config) { c.ChunkCacheBytes = cache })
			defer r.Close()
			spans := 0
			for i := 0; b.Loop(); i++ {
				res, err := r.Trace(context.Background(), "acme", ids[i%len(ids)], time.Time{}, time.Time{})
				if err != nil || res.Spans.Len() == 0 {
					b.Fatalf("trace %s: %d spans, %v", ids[i%len(ids)], res.Spans.Len(), err)
				}
				spans += res.Spans.Len()
			}
			b.ReportMetric(float64(spans)/float64(b.N), "spans/op")
		})
	}
}
