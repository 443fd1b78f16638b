package otlpwire_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Routing is checked against pdata: every span (or resource) of the
// request is found, decoded by pdata, in exactly the shard its key names,
// in its original order there, with its resource and scope.

// spanLines is flatRecords of a traces request (each span with its
// resource and scope, as pdata reads them), and the trace id of each
// span, nil for an empty one.
func spanLines(t *testing.T, b []byte) (lines []string, ids [][]byte) {
	td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		t.Fatalf("pdata: %v", err)
	}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		ss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < ss.Len(); j++ {
			spans := ss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				var id []byte
				if tid := spans.At(k).TraceID(); !tid.IsEmpty() {
					id = tid[:]
				}
				ids = append(ids, id)
			}
		}
	}
	return flatRecords(t, otlpwire.SignalTraces, b), ids
}

func modShard(n int) func(uint64) int { return func(k uint64) int { return int(k % uint64(n)) } }

func TestRouteTracesByTraceID(t *testing.T) {
	r, err := otlpwire.NewRouter(otlpwire.RouteByTraceID)
	if err != nil {
		t.Fatal(err)
	}
	inputs := [][]byte{synth.Fixture(otlpwire.SignalTraces, synth.Ascending), synth.RealisticFixture(otlpwire.SignalTraces, synth.Descending)}
	for seed := range uint64(equivSeeds(t)) {
		inputs = append(inputs, randomRequest(seed, otlpwire.SignalTraces, synth.Order(seed%2)))
	}
	for i, in := range inputs {
		for _, n := range []int{1, 3, 7} {
			dst := make([][]byte, n)
			// Start one shard with an earlier request: parts concatenate.
			prefix := synth.Fixture(otlpwire.SignalTraces, synth.Ascending)
			dst[0] = append(dst[0], prefix...)
			if err := r.Route(otlpwire.SignalTraces, dst, in, modShard(n)); err != nil {
				t.Fatalf("input %d, %d shards: %v", i, n, err)
			}
			want, ids := spanLines(t, in)
			prefixLines, _ := spanLines(t, prefix)
			total := 0
			for s := range n {
				if err := otlpwire.SignalTraces.Validate(dst[s]); err != nil {
					t.Fatalf("input %d shard %d: Validate: %v", i, s, err)
				}
				got, _ := spanLines(t, dst[s])
				if s == 0 {
					if !slices.Equal(got[:len(prefixLines)], prefixLines) {
						t.Fatalf("input %d: shard 0 lost its earlier request", i)
					}
					got = got[len(prefixLines):]
				}
				var mine []string
				for k, line := range want {
					if int(otlpwire.TraceIDKey(ids[k])%uint64(n)) == s {
						mine = append(mine, line)
					}
				}
				if !slices.Equal(got, mine) {
					t.Fatalf("input %d, %d shards: shard %d has %d spans, want %d (or their order, resource or scope differ)", i, n, s, len(got), len(mine))
				}
				total += len(got)
			}
			if total != len(want) {
				t.Fatalf("input %d: %d spans routed, want %d", i, total, len(want))
			}
		}
	}
}

// resourceRequests is each resource container of req as a request alone,
// re-marshaled by pdata.
func resourceRequests(t testing.TB, s otlpwire.Signal, b []byte) []string {
	parts, err := pdataResourceRequests(s, b)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

func TestRouteByResourceAndService(t *testing.T) {
	for _, key := range []otlpwire.RouteKey{otlpwire.RouteByResource, otlpwire.RouteByService} {
		r, err := otlpwire.NewRouter(key)
		if err != nil {
			t.Fatal(err)
		}
		for _, sig := range signals {
			for seed := range uint64(equivSeeds(t)) {
				in := randomRequest(seed, sig, synth.Order(seed%2))
				const n = 3
				dst := make([][]byte, n)
				if err := r.Route(sig, dst, in, modShard(n)); err != nil {
					t.Fatalf("%v %v seed %d: %v", key, sig, seed, err)
				}
				// The expected shard of each resource, from its key.
				all := resourceRequests(t, sig, in)
				var keys []uint64
				for res, err := range resources(sig, in) {
					if err != nil {
						t.Fatal(err)
					}
					var k uint64
					if key == otlpwire.RouteByResource {
						k, err = res.Hash()
					} else {
						var name []byte
						name, err = res.ServiceName()
						k = otlpwire.ServiceKey(name)
					}
					if err != nil {
						t.Fatal(err)
					}
					keys = append(keys, k)
				}
				if len(keys) != len(all) {
					t.Fatalf("%d keys for %d resources", len(keys), len(all))
				}
				for s := range n {
					var mine []string
					for i, k := range keys {
						if int(k%n) == s {
							mine = append(mine, all[i])
						}
					}
					if got := resourceRequests(t, sig, dst[s]); !slices.Equal(got, mine) {
						t.Fatalf("%v %v seed %d: shard %d has %d resources, want %d (or they differ)", key, sig, seed, s, len(got), len(mine))
					}
				}
			}
		}
	}
}

// resources yields the resource of each resource container of req.
func resources(sig otlpwire.Signal, req []byte) func(func(otlpwire.Resource, error) bool) {
	return func(yield func(otlpwire.Resource, error) bool) {
		switch sig {
		case otlpwire.SignalLogs:
			for rl, err := range otlpwire.LogsRequest(req).ResourceLogs() {
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(rl.Resource()) {
					return
				}
			}
		case otlpwire.SignalTraces:
			for rs, err := range otlpwire.TracesRequest(req).ResourceSpans() {
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(rs.Resource()) {
					return
				}
			}
		default:
			for rm, err := range otlpwire.MetricsRequest(req).ResourceMetrics() {
				if err != nil {
					yield(nil, err)
					return
				}
				if !yield(rm.Resource()) {
					return
				}
			}
		}
	}
}

func TestRouteErrors(t *testing.T) {
	r, err := otlpwire.NewRouter(otlpwire.RouteByTraceID)
	if err != nil {
		t.Fatal(err)
	}
	dst := [][]byte{[]byte("kept"), nil}
	if err := r.Route(otlpwire.SignalLogs, dst, nil, modShard(2)); !errors.Is(err, otlpwire.ErrRouteKey) {
		t.Fatalf("traceID for logs: %v, want ErrRouteKey", err)
	}
	in := synth.Fixture(otlpwire.SignalTraces, synth.Ascending)
	// Cut short at every length: either an error with dst as it was, or a
	// prefix that happens to be well-formed, routed whole.
	for cut := range len(in) {
		err := r.Route(otlpwire.SignalTraces, dst, in[:cut], modShard(2))
		verr := otlpwire.SignalTraces.Validate(in[:cut])
		if (err == nil) != (verr == nil) {
			t.Fatalf("cut at %d: Route %v, Validate %v", cut, err, verr)
		}
		if err != nil && (string(dst[0]) != "kept" || len(dst[1]) != 0) {
			t.Fatalf("cut at %d: %v, and dst changed", cut, err)
		}
		dst[0], dst[1] = dst[0][:4], dst[1][:0]
	}
	if err := r.Route(otlpwire.SignalTraces, dst, in, func(uint64) int { return 2 }); !errors.Is(err, otlpwire.ErrRouteKey) {
		t.Fatalf("shard out of range: %v", err)
	}
	if _, err := otlpwire.NewRouter(0); !errors.Is(err, otlpwire.ErrRouteKey) {
		t.Fatalf("NewRouter(0): %v", err)
	}
	for _, k := range []otlpwire.RouteKey{otlpwire.RouteByResource, otlpwire.RouteByService, otlpwire.RouteByTraceID} {
		if got, err := otlpwire.ParseRouteKey(k.String()); err != nil || got != k {
			t.Fatalf("ParseRouteKey(%q) = %v, %v", k.String(), got, err)
		}
	}
}

// FuzzRoute holds Route to its promises on any input: no panic; it
// accepts what Validate accepts; an error leaves dst as it was; and
// what it routes is every record once.
func FuzzRoute(f *testing.F) {
	for _, s := range signals {
		f.Add(uint8(s), uint8(otlpwire.RouteByResource), synth.Fixture(s, synth.Ascending))
		f.Add(uint8(s), uint8(otlpwire.RouteByService), randomRequest(1, s, synth.Descending))
	}
	f.Add(uint8(otlpwire.SignalTraces), uint8(otlpwire.RouteByTraceID), randomRequest(2, otlpwire.SignalTraces, synth.Ascending))
	f.Add(uint8(otlpwire.SignalTraces), uint8(otlpwire.RouteByTraceID), randomRequest(3, otlpwire.SignalTraces, synth.Descending))
	f.Fuzz(func(t *testing.T, sig, key uint8, in []byte) {
		if len(in) > 64<<10 {
			return // larger inputs add time, not paths: the fuzzer minimizes each new one at length
		}
		s := otlpwire.Signal(sig%3 + 1)
		k := otlpwire.RouteKey(key%3 + 1)
		if k == otlpwire.RouteByTraceID {
			s = otlpwire.SignalTraces
		}
		r, err := otlpwire.NewRouter(k)
		if err != nil {
			t.Fatal(err)
		}
		dst := [][]byte{[]byte("x"), nil, nil}
		err = r.Route(s, dst, in, modShard(3))
		verr := s.Validate(in)
		if verr == nil && err != nil {
			t.Fatalf("Validate accepts, Route refuses: %v", err)
		}
		if err != nil {
			if !bytes.Equal(dst[0], []byte("x")) || len(dst[1]) != 0 || len(dst[2]) != 0 {
				t.Fatalf("error %v, and dst changed", err)
			}
			return
		}
		if verr != nil {
			return // Route reads less than Validate checks
		}
		want, err := s.Count(in)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for i, d := range dst {
			if i == 0 {
				d = d[1:]
			}
			if err := s.Validate(d); err != nil {
				t.Fatalf("shard %d: %v", i, err)
			}
			n, err := s.Count(d)
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
		if got != want {
			t.Fatalf("%d records routed, want %d", got, want)
		}
	})
}

// BenchmarkRoute routes the realistic fixture to 3 shards, against
// pdata's way (unmarshal, regroup, marshal one request per shard) in the
// same run.
func BenchmarkRoute(b *testing.B) {
	cases := []struct {
		sig otlpwire.Signal
		key otlpwire.RouteKey
	}{
		{otlpwire.SignalLogs, otlpwire.RouteByResource},
		{otlpwire.SignalMetrics, otlpwire.RouteByResource},
		{otlpwire.SignalTraces, otlpwire.RouteByTraceID},
	}
	for _, c := range cases {
		in := synth.RealisticFixture(c.sig, synth.Ascending)
		n, _ := c.sig.Count(in)
		b.Run(fmt.Sprintf("signal=%s/key=%s/impl=otlpwire", c.sig, c.key), func(b *testing.B) {
			r, err := otlpwire.NewRouter(c.key)
			if err != nil {
				b.Fatal(err)
			}
			dst := make([][]byte, 3)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				for i := range dst {
					dst[i] = dst[i][:0]
				}
				if err := r.Route(c.sig, dst, in, modShard(3)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
		b.Run(fmt.Sprintf("signal=%s/key=%s/impl=pdata", c.sig, c.key), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				pdataRoute(b, c.sig, in, 3)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// pdataRoute does what the Collector's loadbalancing exporter does with a
// request: unmarshal it, build one pdata request per shard (resources
// whole, or spans by trace id) and marshal each.
func pdataRoute(b *testing.B, sig otlpwire.Signal, in []byte, n int) {
	switch sig {
	case otlpwire.SignalLogs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(in)
		if err != nil {
			b.Fatal(err)
		}
		out := make([]plog.Logs, n)
		for i := range out {
			out[i] = plog.NewLogs()
		}
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			k := pdataResourceKey(rl.Resource().Attributes().AsRaw())
			rl.CopyTo(out[k%uint64(n)].ResourceLogs().AppendEmpty())
		}
		for _, o := range out {
			if _, err := (&plog.ProtoMarshaler{}).MarshalLogs(o); err != nil {
				b.Fatal(err)
			}
		}
	case otlpwire.SignalMetrics:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(in)
		if err != nil {
			b.Fatal(err)
		}
		out := make([]pmetric.Metrics, n)
		for i := range out {
			out[i] = pmetric.NewMetrics()
		}
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			k := pdataResourceKey(rm.Resource().Attributes().AsRaw())
			rm.CopyTo(out[k%uint64(n)].ResourceMetrics().AppendEmpty())
		}
		for _, o := range out {
			if _, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(o); err != nil {
				b.Fatal(err)
			}
		}
	case otlpwire.SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(in)
		if err != nil {
			b.Fatal(err)
		}
		out := make([]ptrace.Traces, n)
		for i := range out {
			out[i] = ptrace.NewTraces()
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j)
				for k := 0; k < ss.Spans().Len(); k++ {
					sp := ss.Spans().At(k)
					id := sp.TraceID()
					o := out[otlpwire.TraceIDKey(id[:])%uint64(n)]
					ors := o.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(ors.Resource())
					oss := ors.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(oss.Scope())
					sp.CopyTo(oss.Spans().AppendEmpty())
				}
			}
		}
		for _, o := range out {
			if _, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(o); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// pdataResourceKey stands in for the exporter's resource key: a hash of
// the attributes' printed form.
func pdataResourceKey(m map[string]any) uint64 {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&buf, "%s=%v;", k, m[k])
	}
	return otlpwire.ServiceKey(buf.Bytes())
}

func TestRouteZeroAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	for _, key := range []otlpwire.RouteKey{otlpwire.RouteByResource, otlpwire.RouteByService, otlpwire.RouteByTraceID} {
		sig := otlpwire.SignalLogs
		if key == otlpwire.RouteByTraceID {
			sig = otlpwire.SignalTraces
		}
		in := synth.RealisticFixture(sig, synth.Ascending)
		r, err := otlpwire.NewRouter(key)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([][]byte, 3)
		shard := modShard(3)
		run := func() {
			for i := range dst {
				dst[i] = dst[i][:0]
			}
			if err := r.Route(sig, dst, in, shard); err != nil {
				t.Fatal(err)
			}
		}
		run() // grow the buffers
		if n := testing.AllocsPerRun(20, run); n != 0 {
			t.Errorf("%v: %v allocations per Route, want 0", key, n)
		}
	}
}
