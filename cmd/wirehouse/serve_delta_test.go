package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// promMatrix runs query, a range selector, at the address's
// /api/v1/query at at, and returns each series' samples by its labels,
// written "t=value" for a float and "t=count/sum/[lower,upper]:count ..."
// (non-empty buckets, in order) for a native histogram, so that two
// servers' answers compare as strings whatever their bucket layouts.
func promMatrix(t *testing.T, addr, query string, at time.Time) map[string][]string {
	t.Helper()
	q := url.Values{"query": {query}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1e3, 'f', 3, 64)}}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + addr + "/api/v1/query?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d struct {
		Status, Error string
		Data          struct {
			ResultType string
			Result     []struct {
				Metric     model.Metric
				Values     [][2]any
				Histograms [][2]json.RawMessage
			}
		}
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber() // times as they are written
	if err := dec.Decode(&d); err != nil || d.Status != "success" || d.Data.ResultType != "matrix" {
		t.Fatalf("%s at %s: %v %s (%s)", query, addr, err, d.Error, d.Data.ResultType)
	}
	out := map[string][]string{}
	// Floats, then histograms: each in time order (a series here holds
	// one kind).
	for _, r := range d.Data.Result {
		var ss []string
		for _, v := range r.Values {
			ss = append(ss, fmt.Sprintf("%v=%v", v[0], v[1]))
		}
		for _, h := range r.Histograms {
			var hv struct {
				Count, Sum string
				Buckets    [][4]any
			}
			if err := json.Unmarshal(h[1], &hv); err != nil {
				t.Fatal(err)
			}
			var bs []string
			for _, b := range hv.Buckets {
				if fmt.Sprint(b[3]) != "0" {
					bs = append(bs, fmt.Sprintf("[%v,%v]:%v", b[1], b[2], b[3]))
				}
			}
			ss = append(ss, fmt.Sprintf("%s=%s/%s/%s", h[0], hv.Count, hv.Sum, strings.Join(bs, " ")))
		}
		out[r.Metric.String()] = ss
	}
	return out
}

// matrixDiff lists the series of two promMatrix answers that are in one
// only or whose samples differ.
func matrixDiff(ours, theirs map[string][]string) []string {
	var diff []string
	for k, v := range ours {
		w, ok := theirs[k]
		switch {
		case !ok:
			diff = append(diff, "only ours: "+k+" "+strings.Join(v, " "))
		case !slices.Equal(v, w):
			diff = append(diff, fmt.Sprintf("%s:\n  ours   %v\n  theirs %v", k, v, w))
		}
	}
	for k, w := range theirs {
		if _, ok := ours[k]; !ok {
			diff = append(diff, "only theirs: "+k+" "+strings.Join(w, " "))
		}
	}
	sort.Strings(diff)
	return diff
}

// postMetrics posts md to an OTLP/HTTP address and fails unless it is
// taken whole.
func postMetrics(t *testing.T, addr string, md pmetric.Metrics) {
	t.Helper()
	b, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+addr+"/v1/metrics", "application/x-protobuf", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("OTLP/HTTP metrics to %s: %d", addr, resp.StatusCode)
	}
}

// handDeltas is a request of delta points made by hand around base, at
// second offsets: the stream a sum, an explicit and an exponential
// histogram take through the cases an SDK makes rarely. step is one of
// the steps below.
func handDeltas(base time.Time, step int) pmetric.Metrics {
	sec := func(s int) pcommon.Timestamp {
		return pcommon.NewTimestampFromTime(base.Add(time.Duration(s) * time.Second))
	}
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "hand")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	sum := ms.AppendEmpty()
	sum.SetName("hand.count")
	ds := sum.SetEmptySum()
	ds.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	ds.SetIsMonotonic(true)
	h := ms.AppendEmpty()
	h.SetName("hand.latency")
	h.SetUnit("s")
	dh := h.SetEmptyHistogram()
	dh.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	e := ms.AppendEmpty()
	e.SetName("hand.size")
	de := e.SetEmptyExponentialHistogram()
	de.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
	point := func(start, at int, v int64, bounds []float64) {
		p := ds.DataPoints().AppendEmpty()
		p.SetStartTimestamp(sec(start))
		p.SetTimestamp(sec(at))
		p.SetIntValue(v)
		hp := dh.DataPoints().AppendEmpty()
		hp.SetStartTimestamp(sec(start))
		hp.SetTimestamp(sec(at))
		hp.ExplicitBounds().FromRaw(bounds)
		counts := make([]uint64, len(bounds)+1)
		for i := range counts {
			counts[i] = uint64(v) * uint64(i+1)
			hp.SetCount(hp.Count() + counts[i])
		}
		hp.BucketCounts().FromRaw(counts)
		hp.SetSum(float64(v) * 0.25)
		ep := de.DataPoints().AppendEmpty()
		ep.SetStartTimestamp(sec(start))
		ep.SetTimestamp(sec(at))
		ep.SetScale(3)
		ep.SetZeroCount(uint64(v))
		// Buckets moving up by 40 per step: their sum soon spans more
		// than 160 and is scaled down.
		ep.Positive().SetOffset(int32(at * 4))
		ep.Positive().BucketCounts().FromRaw([]uint64{uint64(v), 0, 1, uint64(v)})
		ep.Negative().SetOffset(-2)
		ep.Negative().BucketCounts().FromRaw([]uint64{1})
		ep.SetCount(ep.ZeroCount() + 2*uint64(v) + 2)
		ep.SetSum(float64(v))
	}
	b := []float64{0.1, 1, 10}
	switch step {
	case 0: // the first point, then one after it, in one request
		point(0, 10, 1, b)
		point(10, 20, 2, b)
	case 1: // a gap: this point starts after the last one ended
		point(30, 40, 4, b)
	case 2: // an SDK restarted: a later start, and a new start time
		point(45, 50, 8, b)
	case 3: // out of order: before the last point, refused by both
		point(20, 45, 100, b)
	case 4: // then on, and new bounds for the histogram (a reset)
		point(50, 60, 16, []float64{0.5, 5})
	case 5:
		point(60, 70, 32, []float64{0.5, 5})
	}
	return md
}

// TestOracleDelta: the same delta streams go through the Collector to
// its deltatocumulative processor, which remote-writes the cumulative
// sums it makes into the Debian Prometheus, and, as they are, to
// wirehouse over OTLP/HTTP: every series has the same samples in both
// (names, labels, times, values; native histograms bucket by bucket).
// The streams: the Go SDK (counter, histogram, exponential histogram,
// delta temporality, over OTLP/gRPC to the Collector), the Python SDK
// (testdata/pysdk_delta.py: gaps in a series, an exponential histogram
// scaling down, negative values) and points made by hand (a gap, an SDK
// restart, a point out of order, histogram bounds that change, an
// exponential histogram spreading past 160 buckets).
func TestOracleDelta(t *testing.T) {
	prom := peerFromEnv(t, "WIREHOUSE_PROMETHEUS", "extracts Debian's prometheus server")
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs the Python venv")
	ours := startServe(t)
	promAddr, promLog := startPrometheus(t, prom, "global: {scrape_interval: 1h}\n",
		"--web.enable-remote-write-receiver", "--enable-feature=native-histograms")
	grpcAddr, httpAddr := startOtelcol(t, `
receivers:
  otlp:
    protocols:
      grpc: {endpoint: "%[1]s"}
      http: {endpoint: "%[2]s"}
processors:
  deltatocumulative: {}
exporters:
  otlphttp:
    endpoint: http://`+ours["OTLP/HTTP"]+`
    compression: none
    sending_queue: {enabled: false}
    retry_on_failure: {enabled: false}
  prometheusremotewrite:
    endpoint: http://`+promAddr+`/api/v1/write
    remote_write_queue: {enabled: false}
    retry_on_failure: {enabled: false}
    target_info: {enabled: false}
service:
  telemetry:
    metrics: {level: none}
  pipelines:
    metrics/raw: {receivers: [otlp], exporters: [otlphttp]}
    metrics/cumulative: {receivers: [otlp], processors: [deltatocumulative], exporters: [prometheusremotewrite]}
`)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + promAddr + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready:\n%s", promLog)
		}
	}
	start := time.Now()

	// The Go SDK, delta temporality, over OTLP/gRPC.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	exp, err := otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(grpcAddr), otlpmetricgrpc.WithInsecure(),
		otlpmetricgrpc.WithTemporalitySelector(func(sdkmetric.InstrumentKind) metricdata.Temporality { return metricdata.DeltaTemporality }))
	if err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(time.Hour))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "go-delta"))),
		sdkmetric.WithView(sdkmetric.NewView(sdkmetric.Instrument{Name: "go.size"},
			sdkmetric.Stream{Aggregation: sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}})))
	meter := mp.Meter("go-delta")
	reqs, _ := meter.Int64Counter("go.requests")
	lat, _ := meter.Float64Histogram("go.latency", metric.WithUnit("ms"))
	size, _ := meter.Float64Histogram("go.size", metric.WithUnit("By"))
	for r := range 12 {
		reqs.Add(ctx, int64(r+1), metric.WithAttributes(attribute.String("route", "/a")))
		if r%3 == 0 {
			reqs.Add(ctx, 5, metric.WithAttributes(attribute.String("route", "/c")))
		}
		lat.Record(ctx, float64(r*13%400), metric.WithAttributes(attribute.String("route", "/a")))
		for k := range r + 1 {
			size.Record(ctx, math.Pow(1.7, float64(k)))
		}
		if err := mp.ForceFlush(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := mp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	// The Python SDK, over OTLP/HTTP.
	if out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "pysdk_delta.py"), "http://"+httpAddr, "10").CombinedOutput(); err != nil {
		t.Fatalf("pysdk_delta.py: %v\n%s", err, out)
	}

	// By hand, over OTLP/HTTP.
	base := time.Now().Add(-5 * time.Minute).Truncate(time.Second)
	for step := range 6 {
		postMetrics(t, httpAddr, handDeltas(base, step))
	}

	at := time.Now().Add(time.Second)
	const all = `{__name__=~".+", __name__!="target_info"}[1h]`
	theirs := promMatrix(t, promAddr, all, at)
	mine := promMatrix(t, ours["admin HTTP"], all, at)
	if diff := matrixDiff(mine, theirs); len(diff) > 0 {
		t.Errorf("%d of %d series differ:\n%s", len(diff), len(theirs), strings.Join(diff, "\n"))
	}
	// What the inputs make, by value: the oracle could be wrong too.
	hand := mine[`hand_count_total{job="hand"}`]
	sec := func(s int) string {
		return strconv.FormatFloat(float64(base.Add(time.Duration(s)*time.Second).UnixMilli())/1e3, 'f', -1, 64)
	}
	want := []string{sec(10) + "=1", sec(20) + "=3", sec(40) + "=7", sec(50) + "=15", sec(60) + "=31", sec(70) + "=63"}
	if !slices.Equal(hand, want) {
		t.Errorf("hand_count_total %v, want %v", hand, want)
	}
	var goA, pyB []string
	for k, v := range mine {
		switch {
		case strings.Contains(k, `go_requests_total`) && strings.Contains(k, `route="/a"`):
			goA = v
		case strings.Contains(k, `py_requests_total`) && strings.Contains(k, `route="/b"`):
			pyB = v
		}
	}
	if len(goA) != 12 || !strings.HasSuffix(goA[11], "=78") { // 1+2+...+12
		t.Errorf("go_requests_total{route=/a}: %v, want 12 samples ending at 78", goA)
	}
	if len(pyB) != 5 || !strings.HasSuffix(pyB[4], "=10") { // 2 on rounds 0, 2, 4, 6, 8
		t.Errorf("py_requests_total{route=/b}: %v, want 5 samples ending at 10", pyB)
	}
	t.Logf("%d series equal (Go SDK, Python SDK, by hand), in %v", len(theirs), time.Since(start).Round(time.Millisecond))
	if os.Getenv("DUMP") != "" {
		for k, v := range theirs {
			t.Logf("%s %v", k, v)
		}
	}
}

// TestServeDeltaKill9: a delta counter sent without pause, each point
// adding 1, alternately over OTLP/HTTP and OTLP/gRPC, each request
// retried until acknowledged; serve killed with SIGKILL twice in the
// middle and restarted on its data: the cumulative series goes up by
// exactly 1 at every sample (no point added twice, none lost, no reset:
// rate() never sees a doubled or negative step), and ends at the number
// of points sent.
func TestServeDeltaKill9(t *testing.T) {
	dir := t.TempDir()
	p := startServeProc(t, dir)
	base := time.Now().Add(-time.Minute)
	const points = 600
	req := func(i int) pmetricotlp.ExportRequest {
		md := pmetric.NewMetrics()
		rm := md.ResourceMetrics().AppendEmpty()
		rm.Resource().Attributes().PutStr("service.name", "kill")
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("kill.count")
		s := m.SetEmptySum()
		s.SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
		s.SetIsMonotonic(true)
		dp := s.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Duration(i) * 10 * time.Millisecond)))
		dp.SetTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Duration(i+1) * 10 * time.Millisecond)))
		dp.SetIntValue(1)
		return pmetricotlp.NewExportRequestFromMetrics(md)
	}
	stored := 0
	// send sends point i once; true when it was acknowledged: stored,
	// or refused as out of order, which only a point already stored is
	// here (its request committed, the answer lost to the kill).
	send := func(i int) bool {
		r := req(i)
		var partial pmetricotlp.ExportPartialSuccess
		if i%2 == 0 {
			b, _ := r.MarshalProto()
			resp, err := (&http.Client{Timeout: 5 * time.Second}).Post("http://"+p.addrs["OTLP/HTTP"]+"/v1/metrics", "application/x-protobuf", bytes.NewReader(b))
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			var body bytes.Buffer
			body.ReadFrom(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return false
			}
			er := pmetricotlp.NewExportResponse()
			if err := er.UnmarshalProto(body.Bytes()); err != nil {
				t.Fatal(err)
			}
			partial = er.PartialSuccess()
		} else {
			conn, err := grpc.NewClient(p.addrs["OTLP/gRPC"], grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			er, err := pmetricotlp.NewGRPCClient(conn).Export(ctx, r)
			if err != nil {
				return false
			}
			partial = er.PartialSuccess()
		}
		if partial.RejectedDataPoints() != 0 {
			if !strings.Contains(partial.ErrorMessage(), "out_of_order") {
				t.Fatalf("point %d: %s", i, partial.ErrorMessage())
			}
			stored++
		}
		return true
	}
	t.Cleanup(func() { p.cmd.Process.Kill() }) // the one running, if the test fails
	kill := map[int]time.Duration{points / 3: 0, 2 * points / 3: time.Millisecond}
	for i := 0; i < points; {
		if pause, ok := kill[i]; ok {
			delete(kill, i)
			// Killed while point i is under way (its commit made or
			// not, its answer lost); sent again after the restart.
			done := make(chan bool, 1)
			go func() { done <- send(i) }()
			time.Sleep(pause)
			if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			p.cmd.Wait()
			<-done
			p = startServeProc(t, dir)
		}
		if send(i) {
			i++
		}
	}
	defer p.stop(t)
	t.Logf("%d points found stored when sent again after a kill", stored)
	got := promMatrix(t, p.addrs["admin HTTP"], `kill_count_total[1h]`, time.Now())
	ss := got[`kill_count_total{job="kill"}`]
	if len(ss) != points {
		t.Fatalf("%d samples, want %d: %v", len(ss), points, got)
	}
	for i, s := range ss {
		_, v, _ := strings.Cut(s, "=")
		if v != strconv.Itoa(i+1) {
			t.Fatalf("sample %d is %s, want %d (from %d: %v)", i, s, i+1, max(0, i-2), ss[max(0, i-2):min(len(ss), i+3)])
		}
	}
	if r := promQuery(t, p.addrs["admin HTTP"], `sum(resets(kill_count_total[1h]))`)[""]; r != 0 {
		t.Errorf("%v counter resets, want none", r)
	}
}
