package tracemetrics

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// Dependency is the calls from one service to another over a window:
// Jaeger's DependencyLink.
type Dependency struct {
	Parent, Child string
	CallCount     uint64
}

// lookBefore is how far before a window's start Dependencies looks for
// each series' value then: many flush intervals.
const lookBefore = 15 * time.Minute

// Dependencies reads the service graph's calls between start and end
// from q (the metric store, read for the tenant of ctx): for each client
// and server, the increase of traces_service_graph_request_total over
// (start, end] summed over its series (failed or not, every connection
// type), a counter reset counted as Prometheus counts it (the value after
// it is new calls), without extrapolation. Virtual nodes (user, a
// database, an uninstrumented peer) are services here too. Sorted by
// parent, then child; the caller owns the slice.
func Dependencies(ctx context.Context, q storage.Queryable, start, end time.Time) ([]Dependency, error) {
	if end.Before(start) {
		return nil, nil
	}
	qr, err := q.Querier(start.Add(-lookBefore).UnixMilli(), end.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("read the service graph: %w", err)
	}
	defer qr.Close()
	set := qr.Select(ctx, false, nil, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "traces_service_graph_request_total"))
	type pair struct{ parent, child string }
	calls := map[pair]float64{}
	var it chunkenc.Iterator
	from, to := start.UnixMilli(), end.UnixMilli()
	for set.Next() {
		s := set.At()
		p := pair{s.Labels().Get("client"), s.Labels().Get("server")}
		it = s.Iterator(it)
		var prev float64 // the value at start: 0 for a series that began after it
		n := 0.0
		for it.Next() == chunkenc.ValFloat {
			t, v := it.At()
			switch {
			case t <= from:
				prev = v
			case t <= to:
				if v >= prev {
					n += v - prev
				} else {
					n += v // a reset: counting from zero again
				}
				prev = v
			}
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("read the service graph: %w", err)
		}
		if n > 0 {
			calls[p] += n
		}
	}
	if err := set.Err(); err != nil {
		return nil, fmt.Errorf("read the service graph: %w", err)
	}
	out := make([]Dependency, 0, len(calls))
	for p, n := range calls {
		out = append(out, Dependency{Parent: p.parent, Child: p.child, CallCount: uint64(n + 0.5)})
	}
	slices.SortFunc(out, func(a, b Dependency) int {
		return cmp.Or(cmp.Compare(a.Parent, b.Parent), cmp.Compare(a.Child, b.Child))
	})
	return out, nil
}
