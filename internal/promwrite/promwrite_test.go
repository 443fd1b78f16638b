package promwrite_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/prompb"
	writev2 "github.com/prometheus/prometheus/prompb/io/prometheus/write/v2"
	"github.com/prometheus/prometheus/storage/remote"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/metricstore"
	"github.com/wirehouse/wirehouse/internal/promwrite"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// pair is two metric stores side by side: one behind the fast path (with
// Prometheus' handler as its fallback), one behind Prometheus' handler
// alone. Every request goes to both; their answers and what they store
// must be the same.
type pair struct {
	fast, prom       *metricstore.Store
	fastH, promH     http.Handler
	fastHits, totals int
}

// openStore opens a metric store in a temporary directory, closed when
// the test ends.
func openStore(t testing.TB) *metricstore.Store {
	t.Helper()
	c := metricstore.DefaultConfig()
	c.Dir = t.TempDir()
	c.MaxExemplars = 100
	s, err := metricstore.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func newPair(t testing.TB) *pair {
	t.Helper()
	prom := func(s *metricstore.Store) http.Handler {
		return remote.NewWriteHandler(slog.New(slog.DiscardHandler), prometheus.NewRegistry(), s.Appendable(),
			remoteapi.MessageTypes{remoteapi.WriteV1MessageType, remoteapi.WriteV2MessageType}, false, false)
	}
	p := &pair{fast: openStore(t), prom: openStore(t)}
	cfg := promwrite.DefaultConfig()
	cfg.Appendable, cfg.Fallback = p.fast.Appendable(), prom(p.fast)
	h, err := promwrite.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.fastH, p.promH = h, prom(p.prom)
	return p
}

type answer struct {
	code    int
	headers string
}

func serve(h http.Handler, body []byte, header http.Header) answer {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/write", bytes.NewReader(body))
	r.Header = header.Clone()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var hs []string
	for k, v := range w.Header() {
		if strings.HasPrefix(k, "X-Prometheus-") {
			hs = append(hs, k+"="+strings.Join(v, ","))
		}
	}
	slices.Sort(hs)
	return answer{w.Code, strings.Join(hs, ";")}
}

// send posts body to both and fails on different answers.
func (p *pair) send(t testing.TB, what string, body []byte, header http.Header) int {
	t.Helper()
	a, b := serve(p.fastH, body, header), serve(p.promH, body, header)
	if a != b {
		t.Fatalf("%s: fast path answered %+v, Prometheus' handler %+v", what, a, b)
	}
	return a.code
}

// same fails unless both stores hold the same samples.
func (p *pair) same(t testing.TB) int {
	t.Helper()
	a, b := dump(t, p.fast), dump(t, p.prom)
	if a != b {
		t.Fatalf("stores differ:\nfast path:\n%s\nPrometheus' handler:\n%s", a, b)
	}
	return strings.Count(a, "\n")
}

func dump(t testing.TB, s *metricstore.Store) string {
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, "__name__", ".*"))
	var out strings.Builder
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			switch vt {
			case chunkenc.ValFloat:
				ts, v := it.At()
				fmt.Fprintf(&out, "%s %d %v\n", ss.At().Labels(), ts, v)
			case chunkenc.ValHistogram:
				ts, h := it.AtHistogram(nil)
				fmt.Fprintf(&out, "%s %d %v\n", ss.At().Labels(), ts, h)
			default:
				ts, h := it.AtFloatHistogram(nil)
				fmt.Fprintf(&out, "%s %d %v\n", ss.At().Labels(), ts, h)
			}
		}
	}
	if ss.Err() != nil {
		t.Fatal(ss.Err())
	}
	return out.String()
}

func v1Header() http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/x-protobuf")
	h.Set("Content-Encoding", "snappy")
	h.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	return h
}

func encode(t testing.TB, req *prompb.WriteRequest) []byte {
	b, err := req.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return snappy.Encode(nil, b)
}

func series(name string, i int, extra ...prompb.Label) []prompb.Label {
	ls := []prompb.Label{{Name: "__name__", Value: name}, {Name: "instance", Value: fmt.Sprintf("host-%d", i)}, {Name: "job", Value: "node"}}
	ls = append(ls, extra...)
	slices.SortFunc(ls, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) })
	return ls
}

// TestSameAsPrometheus sends the same requests, plain and unusual, to the
// fast path and to Prometheus' handler: the answers (status and
// X-Prometheus-* headers) and the stored samples must be the same, and
// the plain ones must have gone the fast way.
func TestSameAsPrometheus(t *testing.T) {
	p := newPair(t)
	now := time.Now().Add(-time.Hour).UnixMilli()
	plain := func(round int, n int) *prompb.WriteRequest {
		req := &prompb.WriteRequest{}
		for i := range n {
			req.Timeseries = append(req.Timeseries, prompb.TimeSeries{
				Labels:  series("node_cpu_seconds_total", i, prompb.Label{Name: "cpu", Value: fmt.Sprint(i % 4)}),
				Samples: []prompb.Sample{{Value: float64(round*10 + i), Timestamp: now + int64(round)*15000}, {Value: float64(round*10 + i + 1), Timestamp: now + int64(round)*15000 + 5000}},
			})
		}
		return req
	}
	h := v1Header()
	for round := range 3 {
		if code := p.send(t, fmt.Sprint("plain round ", round), encode(t, plain(round, 50)), h); code != http.StatusNoContent {
			t.Fatalf("plain round %d: %d", round, code)
		}
	}
	// The same series again, older than stored: out of order, 400, and
	// nothing of the request kept.
	if code := p.send(t, "out of order", encode(t, plain(1, 50)), h); code != http.StatusBadRequest {
		t.Fatalf("out of order: %d", code)
	}
	future := plain(3, 3)
	future.Timeseries[2].Samples[1].Timestamp = time.Now().Add(time.Hour).UnixMilli()
	unnamed := plain(4, 3)
	unnamed.Timeseries[1].Labels = []prompb.Label{{Name: "job", Value: "x"}}
	dup := plain(5, 3)
	dup.Timeseries[0].Labels = append(dup.Timeseries[0].Labels, prompb.Label{Name: "job", Value: "again"})
	badUTF8 := plain(6, 3)
	badUTF8.Timeseries[2].Labels[1].Value = "\xff\xfe"
	exemplars := plain(7, 3)
	exemplars.Timeseries[0].Exemplars = []prompb.Exemplar{{Labels: []prompb.Label{{Name: "trace_id", Value: "ab"}}, Value: 1, Timestamp: now + 7*15000}}
	hist := plain(8, 2)
	hist.Timeseries = append(hist.Timeseries, prompb.TimeSeries{Labels: series("req_seconds", 0),
		Histograms: []prompb.Histogram{prompb.FromIntHistogram(now+8*15000, tsdbHistogram())}})
	metadata := &prompb.WriteRequest{Metadata: []prompb.MetricMetadata{{MetricFamilyName: "node_cpu_seconds_total", Type: prompb.MetricMetadata_COUNTER, Help: "CPU."}}}
	for _, c := range []struct {
		name string
		req  *prompb.WriteRequest
	}{
		{"a sample an hour ahead", future}, {"a series without a name", unnamed}, {"a duplicate label", dup},
		{"a label value not UTF-8", badUTF8}, {"exemplars", exemplars}, {"a native histogram", hist}, {"metadata only", metadata},
	} {
		p.send(t, c.name, encode(t, c.req), h)
	}
	// Bodies that are not what they claim, and other headers.
	raw, _ := plain(9, 2).Marshal()
	p.send(t, "not snappy", raw, h)
	p.send(t, "garbage", snappy.Encode(nil, []byte("\x0a\xff\xff\xff")), h)
	p.send(t, "a truncated sample", snappy.Encode(nil, raw[:len(raw)-3]), h)
	named := v1Header()
	named.Set("Content-Type", "application/x-protobuf;proto=prometheus.WriteRequest")
	p.send(t, "proto=prometheus.WriteRequest", encode(t, plain(10, 5)), named)
	gz := v1Header()
	gz.Set("Content-Encoding", "gzip")
	p.send(t, "gzip", encode(t, plain(11, 5)), gz)
	// Fields the fast path must skip or refuse as Prometheus' decoding
	// does: an unknown field in a sample and in a series, labels split by
	// a sample, a sample's value with the wrong wire type.
	odd := func(build func(ts []byte) []byte) []byte {
		ts := build(nil)
		req := protowire.AppendTag(nil, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, ts)
		return snappy.Encode(nil, req)
	}
	lbl := func(b []byte, name, value string) []byte {
		var l []byte
		l = protowire.AppendTag(l, 1, protowire.BytesType)
		l = protowire.AppendString(l, name)
		l = protowire.AppendTag(l, 2, protowire.BytesType)
		l = protowire.AppendString(l, value)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		return protowire.AppendBytes(b, l)
	}
	smp := func(b []byte, v float64, ts int64, extra bool) []byte {
		var s []byte
		s = protowire.AppendTag(s, 1, protowire.Fixed64Type)
		s = protowire.AppendFixed64(s, math.Float64bits(v))
		if extra {
			s = protowire.AppendTag(s, 9, protowire.VarintType)
			s = protowire.AppendVarint(s, 7)
		}
		s = protowire.AppendTag(s, 2, protowire.VarintType)
		s = protowire.AppendVarint(s, uint64(ts))
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		return protowire.AppendBytes(b, s)
	}
	t12 := now + 12*15000
	p.send(t, "unknown fields", odd(func(b []byte) []byte {
		b = lbl(b, "__name__", "odd_total")
		b = lbl(b, "job", "a")
		b = protowire.AppendTag(b, 15, protowire.BytesType)
		b = protowire.AppendString(b, "unknown")
		return smp(b, 1, t12, true)
	}), h)
	p.send(t, "labels split by a sample", odd(func(b []byte) []byte {
		b = lbl(b, "__name__", "split_total")
		b = smp(b, 1, t12, false)
		return lbl(b, "job", "b")
	}), h)
	// A label of 128 bytes or more has a length of two bytes: the labels'
	// run goes on through it, and a sample after it still splits them.
	long := strings.Repeat("x", 300)
	p.send(t, "a long label among short ones", odd(func(b []byte) []byte {
		b = lbl(b, "__name__", "long_total")
		b = lbl(b, "image", long)
		b = lbl(b, "job", "c")
		return smp(b, 1, t12, false)
	}), h)
	p.send(t, "a long label, then a sample, then a short one", odd(func(b []byte) []byte {
		b = lbl(b, "__name__", "longsplit_total")
		b = lbl(b, "image", long)
		b = smp(b, 1, t12, false)
		return lbl(b, "job", "d")
	}), h)
	p.send(t, "labels split by an unknown field that reads as a label", odd(func(b []byte) []byte {
		b = lbl(b, "__name__", "unknownsplit_total")
		inner := lbl(nil, "evil", "x")
		b = protowire.AppendTag(b, 15, protowire.BytesType)
		b = protowire.AppendBytes(b, inner[2:]) // a Label's own fields
		b = lbl(b, "job", "e")
		return smp(b, 1, t12, false)
	}), h)
	p.send(t, "a value of the wrong wire type", odd(func(b []byte) []byte {
		b = lbl(b, "__name__", "wrong_total")
		var s []byte
		s = protowire.AppendTag(s, 1, protowire.VarintType)
		s = protowire.AppendVarint(s, 3)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		return protowire.AppendBytes(b, s)
	}), h)
	// Remote write 2.0 goes to Prometheus' handler on both sides.
	v2 := writev2.Request{Symbols: []string{"", "__name__", "rw2_total", "job", "api"},
		Timeseries: []writev2.TimeSeries{{LabelsRefs: []uint32{1, 2, 3, 4}, Samples: []writev2.Sample{{Value: 3, Timestamp: now + 13*15000}}}}}
	v2b, err := v2.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	v2h := v1Header()
	v2h.Set("Content-Type", "application/x-protobuf;proto=io.prometheus.write.v2.Request")
	v2h.Set("X-Prometheus-Remote-Write-Version", "2.0.0")
	if code := p.send(t, "remote write 2.0", snappy.Encode(nil, v2b), v2h); code != http.StatusNoContent {
		t.Fatalf("remote write 2.0: %d", code)
	}
	n := p.same(t)
	if n < 300 {
		t.Fatalf("only %d samples stored", n)
	}
	t.Logf("%d samples stored alike", n)
}

// TestFastPathTaken: plain requests never reach the fallback.
func TestFastPathTaken(t *testing.T) {
	s := openStore(t)
	fallbacks := 0
	cfg := promwrite.DefaultConfig()
	cfg.Appendable = s.Appendable()
	cfg.Fallback = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fallbacks++
		io.Copy(io.Discard, r.Body) //nolint:errcheck
		w.WriteHeader(http.StatusTeapot)
	})
	h, err := promwrite.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Add(-time.Minute).UnixMilli()
	for round := range 5 {
		req := &prompb.WriteRequest{}
		for i := range 20 {
			ls := series("up", i)
			if i%4 == 0 { // a label of two-byte length among them
				ls = series("up", i, prompb.Label{Name: "image", Value: strings.Repeat("y", 200+i)})
			}
			req.Timeseries = append(req.Timeseries, prompb.TimeSeries{Labels: ls, Samples: []prompb.Sample{{Value: 1, Timestamp: now + int64(round)*1000}}})
		}
		if a := serve(h, encode(t, req), v1Header()); a.code != http.StatusNoContent {
			t.Fatalf("round %d: %d", round, a.code)
		}
	}
	if fallbacks != 0 {
		t.Fatalf("%d plain requests went to the fallback", fallbacks)
	}
	if got := strings.Count(dump(t, s), "\n"); got != 100 {
		t.Fatalf("%d samples stored, want 100", got)
	}
}

// FuzzSameAsPrometheus: any body, snappy-encoded as remote write 1.0, gets
// the same answer from the fast path and from Prometheus' handler, and
// leaves the same samples. Seeds are real requests (the load tool's shape:
// labels, one sample each) and their mutations.
func FuzzSameAsPrometheus(f *testing.F) {
	now := time.Now().Add(-time.Hour).UnixMilli()
	for k := range 3 {
		req := &prompb.WriteRequest{}
		for i := range 4 {
			req.Timeseries = append(req.Timeseries, prompb.TimeSeries{Labels: series("fz_total", i+k),
				Samples: []prompb.Sample{{Value: float64(i), Timestamp: now + int64(k)*1000}}})
		}
		b, _ := req.Marshal()
		f.Add(b)
	}
	f.Add([]byte{})
	p := newPair(f) // one pair for the whole run: both see every input
	f.Fuzz(func(t *testing.T, body []byte) {
		p.send(t, "fuzz input", snappy.Encode(nil, body), v1Header())
		p.same(t)
	})
}

// tsdbHistogram is a small native histogram: a zero bucket and two
// positive buckets.
func tsdbHistogram() *histogram.Histogram {
	return &histogram.Histogram{Count: 3, Sum: 2.5, ZeroThreshold: 0.001, ZeroCount: 1,
		PositiveSpans: []histogram.Span{{Offset: 0, Length: 2}}, PositiveBuckets: []int64{1, 0}}
}

// BenchmarkRemoteWrite sends snappy remote write 1.0 requests of 1,000
// series (a Kubernetes-like label set of 12 labels, one sample each, the
// same series every request, 15 s later) through the fast path and
// through Prometheus' handler, each into its own metric store, in
// process: decoding, labels, append and commit.
//
//	go test -run '^$' -bench BenchmarkRemoteWrite -benchmem ./internal/promwrite
func BenchmarkRemoteWrite(b *testing.B) {
	const k, n = 400, 1000
	start := time.Now().Add(-2 * time.Hour).UnixMilli()
	reqs := make([][]byte, k)
	for r := range reqs {
		req := &prompb.WriteRequest{}
		for i := range n {
			req.Timeseries = append(req.Timeseries, prompb.TimeSeries{
				Labels: series("container_cpu_usage_seconds_total", i,
					prompb.Label{Name: "namespace", Value: fmt.Sprintf("ns-%d", i%10)},
					prompb.Label{Name: "pod", Value: fmt.Sprintf("pod-%d", i)},
					prompb.Label{Name: "container", Value: "app"},
					prompb.Label{Name: "node", Value: fmt.Sprintf("node-%d", i%20)},
					prompb.Label{Name: "cluster", Value: "prod-eu-1"},
					prompb.Label{Name: "image", Value: "registry.example.com/app:1.4.2"},
					prompb.Label{Name: "uid", Value: fmt.Sprintf("3f9a%08d", i)},
					prompb.Label{Name: "cpu", Value: "total"},
					prompb.Label{Name: "service", Value: "checkout"}),
				Samples: []prompb.Sample{{Value: float64(r*n + i), Timestamp: start + int64(r)*15000}},
			})
		}
		reqs[r] = encode(b, req)
	}
	for _, impl := range []string{"wire", "prometheus"} {
		b.Run("impl="+impl, func(b *testing.B) {
			p := newPair(b)
			h := p.fastH
			if impl == "prometheus" {
				h = p.promH
			}
			hdr := v1Header()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if i > 0 && i%k == 0 {
					b.StopTimer()
					p = newPair(b)
					if h = p.fastH; impl == "prometheus" {
						h = p.promH
					}
					b.StartTimer()
				}
				if a := serve(h, reqs[i%k], hdr); a.code != http.StatusNoContent {
					b.Fatalf("request %d: %d", i, a.code)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// TestTenantsKeepTheirSeries: the same series written by two tenants in
// turn, through the fast path with its kept series references, land in
// each tenant's own series (a reference is kept per tenant), with every
// sample, and the store's appender does give references to keep.
func TestTenantsKeepTheirSeries(t *testing.T) {
	s := openStore(t)
	app := s.Appendable().AppenderV2(context.Background())
	g, ok := app.(promwrite.Generational)
	if !ok || g.Generation() == 0 {
		t.Fatalf("the metric store's appender keeps no references (%v)", ok)
	}
	if err := app.Rollback(); err != nil {
		t.Fatal(err)
	}
	h := fastOnly(t, s)
	now := time.Now().Add(-time.Minute).UnixMilli()
	tenants := map[string]float64{"": 0, "a": 1000, "b": 2000}
	for round := range 4 {
		for tn, base := range tenants {
			req := &prompb.WriteRequest{}
			for i := range 10 {
				req.Timeseries = append(req.Timeseries, prompb.TimeSeries{Labels: series("shared_total", i),
					Samples: []prompb.Sample{{Value: base + float64(round), Timestamp: now + int64(round)*1000}}})
			}
			r := httptest.NewRequest(http.MethodPost, "/api/v1/write", bytes.NewReader(encode(t, req)))
			r.Header = v1Header()
			r = r.WithContext(tenant.NewContext(r.Context(), tn))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusNoContent {
				t.Fatalf("tenant %q round %d: %d %s", tn, round, w.Code, w.Body)
			}
		}
	}
	for tn, base := range tenants {
		ctx := tenant.NewContext(context.Background(), tn)
		q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
		if err != nil {
			t.Fatal(err)
		}
		ss := q.Select(ctx, true, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "shared_total"))
		n := 0
		for ss.Next() {
			n++
			it := ss.At().Iterator(nil)
			var got []float64
			for it.Next() == chunkenc.ValFloat {
				_, v := it.At()
				got = append(got, v)
			}
			if want := []float64{base, base + 1, base + 2, base + 3}; !slices.Equal(got, want) {
				t.Errorf("tenant %q %s: %v, want %v", tn, ss.At().Labels(), got, want)
			}
		}
		q.Close()
		if n != 10 {
			t.Errorf("tenant %q: %d series, want 10", tn, n)
		}
	}
}

// TestSeriesLimitPartial: with tenant a limited to 4 series, a plain
// request of 6 series, 2 samples each, stores the first 4 and answers 400
// naming the 4 samples of 2 series refused, without the fallback; the
// next request, for the 4 series stored, is acknowledged.
func TestSeriesLimitPartial(t *testing.T) {
	c := metricstore.DefaultConfig()
	c.Dir = t.TempDir()
	c.SeriesLimit = func(tn string) int {
		if tn == "a" {
			return 4
		}
		return 0
	}
	s, err := metricstore.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := fastOnly(t, s)
	now := time.Now().Add(-time.Minute).UnixMilli()
	post := func(n int, at int64) *httptest.ResponseRecorder {
		req := &prompb.WriteRequest{}
		for i := range n {
			req.Timeseries = append(req.Timeseries, prompb.TimeSeries{Labels: series("limited", i),
				Samples: []prompb.Sample{{Value: 1, Timestamp: at}, {Value: 2, Timestamp: at + 1}}})
		}
		r := httptest.NewRequest(http.MethodPost, "/api/v1/write", bytes.NewReader(encode(t, req)))
		r.Header = v1Header()
		r = r.WithContext(tenant.NewContext(r.Context(), "a"))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	w := post(6, now)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "4 samples of 2 series refused") ||
		!strings.Contains(w.Body.String(), "series limit of 4") {
		t.Fatalf("6 series past a limit of 4: %d %q", w.Code, w.Body)
	}
	if w = post(4, now+1000); w.Code != http.StatusNoContent {
		t.Fatalf("the 4 series stored: %d %q", w.Code, w.Body)
	}
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	ss := q.Select(tenant.NewContext(context.Background(), "a"), true, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "limited"))
	n, samples := 0, 0
	for ss.Next() {
		n++
		it := ss.At().Iterator(nil)
		for it.Next() == chunkenc.ValFloat {
			samples++
		}
	}
	if n != 4 || samples != 16 {
		t.Errorf("stored %d series, %d samples; want 4 and 16", n, samples)
	}
}

// fastOnly is a Handler storing into s whose fallback fails the test.
func fastOnly(t *testing.T, s *metricstore.Store) *promwrite.Handler {
	t.Helper()
	cfg := promwrite.DefaultConfig()
	cfg.Appendable = s.Appendable()
	cfg.Fallback = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { t.Errorf("a plain request went to the fallback") })
	h, err := promwrite.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
