package metricstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Wire builders for requests that pdata would not produce.

func msg(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func lenField(num protowire.Number, b []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), b)
}

func fixedField(num protowire.Number, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(protowire.AppendTag(nil, num, protowire.Fixed64Type), v)
}

func varintField(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func strAttr(num protowire.Number, k, v string) []byte {
	return lenField(num, msg(lenField(1, []byte(k)), lenField(2, lenField(1, []byte(v)))))
}

// badAttr is a KeyValue whose AnyValue holds string_value as a varint.
func badAttr(num protowire.Number) []byte {
	return lenField(num, msg(lenField(1, []byte("k")), lenField(2, varintField(1, 1))))
}

// testRequests builds small requests for one resource ("svc") and scope
// ("lib"), the same bytes every time, so that a second request hits the
// caches the first one filled.
type testRequests struct {
	ts                       uint64
	resource, scope, ptAttrs []byte
}

func newTestRequests() *testRequests {
	return &testRequests{
		ts:       uint64(t0.UnixNano()),
		resource: msg(strAttr(1, "service.name", "svc")),
		scope:    msg(lenField(1, []byte("lib"))),
		ptAttrs:  msg(strAttr(7, "host", "a")),
	}
}

// numberPoint is a point at ts with value 1, the shared attributes and
// extra fields.
func (r *testRequests) numberPoint(extra ...[]byte) []byte {
	return msg(fixedField(3, r.ts), fixedField(4, math.Float64bits(1)), r.ptAttrs, msg(extra...))
}

func (r *testRequests) gauge(name string, extra ...[]byte) []byte {
	return msg(lenField(1, []byte(name)), lenField(5, lenField(1, r.numberPoint(extra...))))
}

// counter is a monotonic cumulative sum.
func (r *testRequests) counter(name string, extra ...[]byte) []byte {
	return msg(lenField(1, []byte(name)), lenField(7, msg(lenField(1, r.numberPoint(extra...)), varintField(2, 2), varintField(3, 1))))
}

func (r *testRequests) exemplar(attr []byte) []byte {
	return lenField(5, msg(fixedField(2, r.ts), fixedField(3, math.Float64bits(1)), attr))
}

// container is a ResourceMetrics of res with one ScopeMetrics of scope.
func (r *testRequests) container(res, scope []byte, metrics ...[]byte) []byte {
	sm := lenField(1, scope)
	for _, m := range metrics {
		sm = append(sm, lenField(2, m)...)
	}
	return msg(lenField(1, res), lenField(2, sm))
}

// request is an ExportMetricsServiceRequest of resource containers.
func (r *testRequests) request(rm ...[]byte) []byte {
	var b []byte
	for _, c := range rm {
		b = append(b, lenField(1, c)...)
	}
	return b
}

// of is a request of the metrics under the shared resource and scope.
func (r *testRequests) of(metrics ...[]byte) []byte {
	return r.request(r.container(r.resource, r.scope, metrics...))
}

// deepValue is an AnyValue of arrays nested depth times around a string:
// AnyValue{array_value: ArrayValue{values: [AnyValue{...}]}}. Written
// outside in, from the sizes of the levels, in linear time.
func deepValue(depth int) []byte {
	leaf := lenField(1, []byte("x"))
	anySize := make([]int, depth+1) // anySize[i]: the AnyValue i levels above the leaf
	arrSize := make([]int, depth+1) // arrSize[i]: its ArrayValue
	anySize[0] = len(leaf)
	for i := 1; i <= depth; i++ {
		arrSize[i] = 1 + protowire.SizeVarint(uint64(anySize[i-1])) + anySize[i-1]
		anySize[i] = 1 + protowire.SizeVarint(uint64(arrSize[i])) + arrSize[i]
	}
	out := make([]byte, 0, anySize[depth])
	for i := depth; i >= 1; i-- {
		out = protowire.AppendVarint(append(out, 5<<3|2), uint64(arrSize[i]))   // array_value
		out = protowire.AppendVarint(append(out, 1<<3|2), uint64(anySize[i-1])) // values
	}
	return append(out, leaf...)
}

// TestAppendValidates checks the parts of a request that AppendOTLP's walk
// does not read for its samples, each after a valid request has filled the
// caches with the same resource, scope and attribute bytes, with exemplar
// storage off and on: the request is refused with Validate's error
// (AppendOTLP returns it in place of its own), and nothing of it is
// stored, neither samples nor series.
func TestAppendValidates(t *testing.T) {
	r := newTestRequests()
	ts := r.ts
	deltaSum := msg(lenField(1, []byte("d")), lenField(7, msg(
		lenField(1, msg(fixedField(3, ts), fixedField(4, math.Float64bits(1)), badAttr(7))),
		varintField(2, 1)))) // AGGREGATION_TEMPORALITY_DELTA
	summary := func(q []byte) []byte { // one point with quantile value q
		return msg(lenField(1, []byte("s")), lenField(11, lenField(1, msg(fixedField(3, ts), fixedField(4, 1), r.ptAttrs, lenField(6, q)))))
	}
	expHistogram := func(positive []byte) []byte {
		p := msg(lenField(1, msg(lenField(1, []byte("host")), lenField(2, lenField(1, []byte("a"))))), fixedField(3, ts), fixedField(4, 1), lenField(8, positive))
		return msg(lenField(1, []byte("e")), lenField(10, msg(lenField(1, p), varintField(2, 2))))
	}
	histogram := func(extra ...[]byte) []byte { // one bucket count for one bound: refused, mismatched
		p := msg(fixedField(3, ts), fixedField(4, 1), lenField(6, binary.LittleEndian.AppendUint64(nil, 1)),
			lenField(7, binary.LittleEndian.AppendUint64(nil, math.Float64bits(1))), lenField(9, msg(lenField(1, []byte("host")), lenField(2, lenField(1, []byte("a"))))), msg(extra...))
		return msg(lenField(1, []byte("h")), lenField(9, msg(lenField(1, p), varintField(2, 2))))
	}
	valid := r.of(r.gauge("m"), r.counter("c_total"), summary(msg(fixedField(1, math.Float64bits(0.5)), fixedField(2, 1))),
		expHistogram(msg(varintField(1, 0), lenField(2, []byte{1}))))
	cases := []struct {
		name string
		req  []byte
	}{
		{"metric metadata", r.of(msg(r.gauge("m"), badAttr(12)))},
		{"exemplar of a gauge", r.of(r.gauge("m", r.exemplar(badAttr(7))))},
		{"exemplar of a counter", r.of(r.counter("c_total", r.exemplar(badAttr(7))))},
		{"exemplar of a counter nested too deep", r.of(r.counter("c_total", r.exemplar(lenField(7, msg(lenField(1, []byte("k")), lenField(2, deepValue(otlpwire.MaxAnyValueDepth+1)))))))},
		{"exemplar of a refused histogram point", r.of(histogram(lenField(8, msg(fixedField(2, ts), badAttr(7)))))},
		{"attributes of a point of a refused delta sum", r.of(deltaSum)},
		{"summary quantile", r.of(summary(varintField(1, 1)))},
		{"exponential histogram bucket counts", r.of(expHistogram(lenField(2, []byte{0x80})))},
		{"resource container schema_url", r.request(msg(r.container(r.resource, r.scope, r.gauge("m")), varintField(3, 1)))},
		{"an earlier resource of a repeated field", r.request(msg(lenField(1, badAttr(1)), r.container(r.resource, r.scope, r.gauge("m"))))},
		{"scope attributes", r.request(r.container(r.resource, msg(r.scope, badAttr(3)), r.gauge("m")))},
		{"a new series before a malformed metric", r.of(r.gauge("new_series"), msg(r.gauge("m"), badAttr(12)))},
		{"a new resource before a malformed one", r.request(r.container(msg(strAttr(1, "service.name", "other")), r.scope, r.gauge("m")),
			r.container(r.resource, r.scope, msg(r.gauge("m"), badAttr(12))))},
	}
	for _, exemplars := range []int64{0, 100} {
		t.Run(fmt.Sprintf("exemplars=%d", exemplars), func(t *testing.T) {
			s := open(t, t.TempDir(), func(c *Config) { c.MaxExemplars = exemplars })
			defer s.Close()
			if err := otlpwire.MetricsRequest(valid).Validate(); err != nil {
				t.Fatalf("valid request: %v", err)
			}
			res, err := s.AppendOTLP(context.Background(), "", valid)
			if err != nil || res.Accepted != 4 {
				t.Fatalf("valid request: %+v, %v", res, err)
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					verr := otlpwire.MetricsRequest(tc.req).Validate()
					if verr == nil {
						t.Fatal("the test request is valid")
					}
					series, samples := seriesAndSamples(t, s)
					meta := len(s.Metadata(context.Background(), "", -1, -1))
					_, err := s.AppendOTLP(context.Background(), "", tc.req)
					var we *otlpwire.Error
					if !errors.As(err, &we) || we.Error() != verr.Error() {
						t.Fatalf("AppendOTLP: %v; want Validate's %v", err, verr)
					}
					if series2, samples2 := seriesAndSamples(t, s); series2 != series || samples2 != samples {
						t.Fatalf("refused request stored %d series, %d samples", series2-series, samples2-samples)
					}
					if n := int(s.db.Head().NumSeries()); n != series {
						t.Fatalf("refused request left %d series in the head", n-series)
					}
					if m := len(s.Metadata(context.Background(), "", -1, -1)); m != meta {
						t.Fatalf("refused request added metadata of %d families", m-meta)
					}
				})
			}
		})
	}
}

// TestDeepExemplar: an exemplar attribute nested far past
// MaxAnyValueDepth, on a series the caches know, with exemplar storage on,
// is refused before anything walks the nesting; a recursive walk of it
// would overflow the 16 MiB stack this test allows.
func TestDeepExemplar(t *testing.T) {
	r := newTestRequests()
	s := open(t, t.TempDir(), func(c *Config) { c.MaxExemplars = 100 })
	defer s.Close()
	if _, err := s.AppendOTLP(context.Background(), "", r.of(r.counter("c_total"))); err != nil {
		t.Fatal(err)
	}
	req := r.of(r.counter("c_total", r.exemplar(lenField(7, msg(lenField(1, []byte("k")), lenField(2, deepValue(300_000)))))))
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
	if _, err := s.AppendOTLP(context.Background(), "", req); !errors.Is(err, otlpwire.ErrTooDeep) {
		t.Fatalf("AppendOTLP: %v, want ErrTooDeep", err)
	}
}

// TestUnbornSeries: a series whose first points were all refused (here:
// too far in the future) is cached without a reference, so the next
// sample creates it. A request that would do so and is malformed further
// on must still leave no series and no metadata; a valid one creates the
// series and records its family.
func TestUnbornSeries(t *testing.T) {
	r := newTestRequests()
	s := open(t, t.TempDir())
	defer s.Close()
	future := *r
	future.ts = uint64(time.Now().Add(time.Hour).UnixNano())
	res, err := s.AppendOTLP(context.Background(), "", future.of(future.gauge("g")))
	if err != nil || res.Rejected != 1 || res.Reasons[ReasonTooFarAhead] != 1 {
		t.Fatalf("future point: %+v, %v", res, err)
	}
	check := func(series, families int) {
		t.Helper()
		if n := int(s.db.Head().NumSeries()); n != series {
			t.Errorf("head has %d series, want %d", n, series)
		}
		if m := s.Metadata(context.Background(), "", -1, -1); len(m) != families {
			t.Errorf("metadata %v, want %d families", m, families)
		}
	}
	check(0, 0)
	if _, err := s.AppendOTLP(context.Background(), "", r.of(r.gauge("g"), msg(r.gauge("m"), badAttr(12)))); !errors.Is(err, otlpwire.ErrWireType) {
		t.Fatalf("malformed request: %v", err)
	}
	check(0, 0)
	if res, err := s.AppendOTLP(context.Background(), "", r.of(r.gauge("g"))); err != nil || res.Accepted != 1 {
		t.Fatalf("valid request: %+v, %v", res, err)
	}
	check(1, 1) // g (the resource has no attribute for target_info)
}

// TestHeadDroppedSeries: once the head has dropped a series (after a
// truncation, as a head compaction does), a malformed request whose valid
// part names it must not create it again: the series cache must not serve
// the dropped series' reference as a known one.
func TestHeadDroppedSeries(t *testing.T) {
	r := newTestRequests()
	s := open(t, t.TempDir())
	defer s.Close()
	series := func() int { return int(s.db.Head().NumSeries()) }
	// Two requests: the first sample moves the head's minimum time from
	// "empty", which starts a cache epoch by itself; the second caches g
	// under that minimum time.
	next := *r
	next.ts = uint64(t0.Add(time.Second).UnixNano())
	for _, req := range [][]byte{r.of(r.gauge("g")), next.of(next.gauge("g"))} {
		if res, err := s.AppendOTLP(context.Background(), "", req); err != nil || res.Accepted != 1 || series() != 1 {
			t.Fatalf("valid request: %+v, %v, %d series", res, err, series())
		}
	}
	if err := s.db.Head().Truncate(t0.Add(time.Second).UnixMilli() + 1); err != nil {
		t.Fatal(err)
	}
	if n := series(); n != 0 {
		t.Fatalf("head keeps %d series after truncation, want 0", n)
	}
	later := *r
	later.ts = uint64(t0.Add(time.Minute).UnixNano())
	if _, err := s.AppendOTLP(context.Background(), "", later.of(later.gauge("g"), msg(later.gauge("m"), badAttr(12)))); !errors.Is(err, otlpwire.ErrWireType) {
		t.Fatalf("malformed request: %v", err)
	}
	if n := series(); n != 0 {
		t.Errorf("malformed request left %d series in the head, want 0", n)
	}
	if res, err := s.AppendOTLP(context.Background(), "", later.of(later.gauge("g"))); err != nil || res.Accepted != 1 || series() != 1 {
		t.Fatalf("valid request after: %+v, %v, %d series", res, err, series())
	}
}

// TestMetadataAfterTruncation: a description changed while the series is
// known is picked up once the head is truncated, even though the series
// keeps its samples (the cached series lose their references then).
func TestMetadataAfterTruncation(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	send := func(min int, help string) {
		t.Helper()
		r := newTestRequests()
		r.ts = uint64(t0.Add(time.Duration(min) * time.Minute).UnixNano())
		g := msg(lenField(1, []byte("g")), lenField(2, []byte(help)), lenField(5, lenField(1, r.numberPoint())))
		if res, err := s.AppendOTLP(context.Background(), "", r.of(g)); err != nil || res.Accepted != 1 {
			t.Fatalf("minute %d: %+v, %v", min, res, err)
		}
	}
	helps := func() (h []string) {
		for _, md := range s.Metadata(context.Background(), "g", -1, -1)["g"] {
			h = append(h, md.Help)
		}
		return h
	}
	// The first sample moves the head's minimum time from "empty" too,
	// which starts a cache epoch once more: send two before the change.
	send(0, "a")
	send(1, "a")
	send(2, "b") // a known series: not picked up yet
	if h := helps(); !slices.Equal(h, []string{"a"}) {
		t.Fatalf("help %q before truncation, want [a]", h)
	}
	if err := s.db.Head().Truncate(t0.UnixMilli() + 1); err != nil {
		t.Fatal(err)
	}
	send(3, "b")
	if n := s.db.Head().NumSeries(); n != 1 {
		t.Errorf("head has %d series, want 1 (g kept its later samples)", n)
	}
	if h := helps(); !slices.Equal(h, []string{"a", "b"}) {
		t.Errorf("help %q after truncation, want [a b]", h)
	}
}

// TestCacheAcrossTruncation: a truncation that keeps a series costs its
// cache entry the reference, not the labels: the next sample finds the
// series by its labels, builds none, and stores no second series.
func TestCacheAcrossTruncation(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	send := func(min int) {
		t.Helper()
		r := newTestRequests()
		r.ts = uint64(t0.Add(time.Duration(min) * time.Minute).UnixNano())
		if res, err := s.AppendOTLP(context.Background(), "", r.of(r.gauge("g"), r.gauge("h"))); err != nil || res.Accepted != 2 {
			t.Fatalf("minute %d: %+v, %v", min, res, err)
		}
	}
	send(0)
	send(1)
	built := s.builds.Load()
	if built == 0 {
		t.Fatal("no label set built")
	}
	if err := s.db.Head().Truncate(t0.UnixMilli() + 1); err != nil {
		t.Fatal(err)
	}
	epoch := s.cacheEpoch.Load()
	send(2)
	if s.cacheEpoch.Load() != epoch+1 {
		t.Fatalf("epoch %d after the truncation, want %d", s.cacheEpoch.Load(), epoch+1)
	}
	send(3)
	if n := s.builds.Load(); n != built {
		t.Errorf("%d label sets built after the truncation, want none", n-built)
	}
	if n := s.db.Head().NumSeries(); n != 2 {
		t.Errorf("head has %d series, want 2", n)
	}
	q, err := s.Queryable().Querier(0, t0.Add(time.Hour).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	set := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "g"))
	for set.Next() {
		var got []int64
		it := set.At().Iterator(nil)
		for it.Next() != chunkenc.ValNone {
			ts, _ := it.At()
			got = append(got, (ts-t0.UnixMilli())/60_000)
		}
		// Minute 0 may stay: the head drops whole chunks.
		if got = slices.DeleteFunc(got, func(m int64) bool { return m == 0 }); !slices.Equal(got, []int64{1, 2, 3}) {
			t.Errorf("%s: samples at minutes %v, want [1 2 3]", set.At().Labels(), got)
		}
	}
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestCacheSweep: entries not used for a whole epoch are dropped at the
// next one, with the interned resources only they named; entries in use
// stay.
func TestCacheSweep(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	resA := msg(strAttr(1, "service.name", "a"))
	resB := msg(strAttr(1, "service.name", "b"))
	send := func(min int, res ...[]byte) {
		t.Helper()
		r := newTestRequests()
		r.ts = uint64(t0.Add(time.Duration(min) * time.Minute).UnixNano())
		var rms [][]byte
		for _, rs := range res {
			rms = append(rms, r.container(rs, r.scope, r.gauge("g")))
		}
		if res, err := s.AppendOTLP(context.Background(), "", r.request(rms...)); err != nil || res.Accepted != int64(len(rms)) {
			t.Fatalf("minute %d: %+v, %v", min, res, err)
		}
	}
	interned := func(res []byte) bool {
		s.cache.mu.RLock()
		defer s.cache.mu.RUnlock()
		_, ok := s.cache.resources[string(res)]
		return ok
	}
	truncate := func(min int) {
		t.Helper()
		if err := s.db.Head().Truncate(t0.Add(time.Duration(min)*time.Minute).UnixMilli() + 1); err != nil {
			t.Fatal(err)
		}
	}
	send(0, resA, resB)
	send(1, resA, resB)
	both := s.cache.len()
	truncate(0)
	send(2, resB) // a new epoch: a's entries were used in the last one, they stay
	if s.cache.len() != both || !interned(resA) {
		t.Fatalf("after one epoch without a: %d entries (want %d), a interned %v", s.cache.len(), both, interned(resA))
	}
	truncate(1)
	send(3, resB) // a's entries are two epochs old: dropped
	if got := s.cache.len(); got != both/2 {
		t.Errorf("after two epochs without a: %d entries, want %d", got, both/2)
	}
	if interned(resA) || !interned(resB) {
		t.Errorf("interned after the sweep: a %v (want false), b %v (want true)", interned(resA), interned(resB))
	}
	send(4, resA, resB) // a comes back: built again, stored
	if got := s.cache.len(); got != both {
		t.Errorf("a back: %d entries, want %d", got, both)
	}
}

// TestMetadataBounds: help text is cut to maxHelpBytes, and the metadata
// kept stops growing at maxMetaBytes.
func TestMetadataBounds(t *testing.T) {
	r := newTestRequests()
	s := open(t, t.TempDir())
	defer s.Close()
	long := strings.Repeat("ü", maxHelpBytes) // 2 bytes a rune: cut mid-text
	gauge := msg(lenField(1, []byte("g")), lenField(2, []byte(long)), lenField(5, lenField(1, r.numberPoint())))
	if _, err := s.AppendOTLP(context.Background(), "", r.of(gauge)); err != nil {
		t.Fatal(err)
	}
	help := s.Metadata(context.Background(), "g", -1, -1)["g"][0].Help
	if len(help) != maxHelpBytes || help != long[:maxHelpBytes] {
		t.Errorf("help of %d bytes kept, want the first %d", len(help), maxHelpBytes)
	}
	for i := range 2 * maxMetaBytes / maxHelpBytes {
		s.meta.record("", fmt.Sprint("f", i), metadata.Metadata{Help: long[:maxHelpBytes]})
	}
	if s.meta.bytes > maxMetaBytes || s.meta.families >= 2*maxMetaBytes/maxHelpBytes {
		t.Errorf("%d bytes, %d families kept; bound %d bytes", s.meta.bytes, s.meta.families, maxMetaBytes)
	}
}
