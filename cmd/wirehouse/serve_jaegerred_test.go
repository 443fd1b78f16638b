package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/tracemetrics/graphtest"
)

// TestServeJaegerRED: the real Jaeger query service (v1.76.0) with
// deploy/jaeger-query.yaml, its trace storage wirehouse's remote storage
// API and its metrics backend wirehouse's PromQL API: its
// /api/dependencies equals wirehouse's own, and its Monitor tab's
// metrics API (calls, latencies, errors of a service) answers what the
// same PromQL gives over wirehouse's store at each of its points.
func TestServeJaegerRED(t *testing.T) {
	bin := os.Getenv("WIREHOUSE_JAEGER")
	if bin == "" {
		t.Skip("WIREHOUSE_JAEGER not set; `make test` builds jaeger and sets it")
	}
	addrs := startServe(t, "--trace-metrics-flush-interval", "1s")
	admin := addrs["admin HTTP"]
	for i := range 6 {
		resp, err := http.Post("http://"+addrs["OTLP/HTTP"]+"/v1/traces", "application/x-protobuf", bytes.NewReader(graphtest.Trace(byte(i+1), time.Now())))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("export: %s", resp.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
	jaeger := startJaegerConfig(t, bin, filepath.Join("..", "..", "deploy", "jaeger-query.yaml"), addrs["Jaeger remote storage gRPC"], "WIREHOUSE_PROMQL=http://"+admin)

	type link struct {
		Parent, Child string
		CallCount     uint64
	}
	var ours, theirs []link
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ours = nil
		jaegerGet(t, admin, "/jaeger/api/dependencies", &ours)
		all := len(ours) == len(graphtest.Edges)
		for _, l := range ours {
			all = all && l.CallCount == 6
		}
		if all || time.Now().After(deadline) {
			break
		}
	}
	var edges [][2]string
	for _, l := range ours {
		edges = append(edges, [2]string{l.Parent, l.Child})
		if l.CallCount != 6 {
			t.Errorf("ours: %s -> %s: %d calls, want 6", l.Parent, l.Child, l.CallCount)
		}
	}
	if !slices.Equal(edges, graphtest.Edges) {
		t.Fatalf("our dependencies: %v, want %v", ours, graphtest.Edges)
	}
	end := strconv.FormatInt(time.Now().UnixMilli(), 10)
	if code := jaegerGet(t, jaeger, "/api/dependencies?endTs="+end+"&lookback=3600000", &theirs); code != http.StatusOK {
		t.Fatalf("Jaeger's /api/dependencies: %d", code)
	}
	slices.SortFunc(theirs, func(a, b link) int {
		if a.Parent != b.Parent {
			return map[bool]int{true: -1, false: 1}[a.Parent < b.Parent]
		}
		return map[bool]int{true: -1, false: 1}[a.Child < b.Child]
	})
	if !slices.Equal(theirs, ours) {
		t.Errorf("Jaeger's /api/dependencies %v, ours %v", theirs, ours)
	}

	// The Monitor tab: each point Jaeger answers is what its PromQL gives
	// over our store at that time.
	sel := `service_name =~ "frontend", span_kind =~ "SPAN_KIND_SERVER"`
	for _, c := range []struct{ path, query string }{
		{"calls", `sum(rate(traces_span_metrics_calls_total{` + sel + `}[1m])) by (service_name)`},
		{"latencies", `histogram_quantile(0.95, sum(rate(traces_span_metrics_duration_milliseconds_bucket{` + sel + `}[1m])) by (service_name,le))`},
		{"errors", `sum(rate(traces_span_metrics_calls_total{service_name =~ "frontend", status_code = "STATUS_CODE_ERROR", span_kind =~ "SPAN_KIND_SERVER"}[1m])) by (service_name) / sum(rate(traces_span_metrics_calls_total{` + sel + `}[1m])) by (service_name)`},
	} {
		q := url.Values{"service": {"frontend"}, "spanKind": {"server"}, "endTs": {end}, "lookback": {"60000"}, "step": {"5000"}, "ratePer": {"60000"}, "quantile": {"0.95"}}
		resp, err := http.Get("http://" + jaeger + "/api/metrics/" + c.path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		var mf struct {
			Metrics []struct {
				Labels       []struct{ Name, Value string }
				MetricPoints []struct {
					GaugeValue struct{ DoubleValue float64 }
					Timestamp  time.Time
				}
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&mf)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(mf.Metrics) != 1 || len(mf.Metrics[0].MetricPoints) == 0 {
			t.Errorf("Jaeger's /api/metrics/%s: %d %v %+v", c.path, resp.StatusCode, err, mf)
			continue
		}
		nonzero := 0
		for _, p := range mf.Metrics[0].MetricPoints {
			want := promInstant(t, admin, c.query, p.Timestamp)
			got := p.GaugeValue.DoubleValue
			if math.IsNaN(want) {
				want = 0 // Jaeger answers an empty or NaN point as 0
			}
			if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s at %v: Jaeger %v, PromQL %v", c.path, p.Timestamp, got, want)
			}
			if got != 0 {
				nonzero++
			}
		}
		if c.path != "errors" && nonzero == 0 {
			t.Errorf("%s: every point 0", c.path)
		}
	}
}

// promInstant runs query at at through our PromQL API and returns the
// value of its one series (NaN for none).
func promInstant(t *testing.T, admin, query string, at time.Time) float64 {
	t.Helper()
	v := promVector(t, admin, query, at)
	if len(v) > 1 {
		t.Fatalf("%s: %d series", query, len(v))
	}
	for _, x := range v {
		return x
	}
	return math.NaN()
}

// TestServeTraceMetricsKill9: serve is killed with SIGKILL again and
// again while traces go in; after a last clean run, each span-metric
// counter's increases over its whole history (a drop counted as a reset,
// as Prometheus' rate() counts it) add up to no less than the spans whose
// request was acknowledged and no more than were sent: no span is lost
// from the metrics, and none is counted twice.
func TestServeTraceMetricsKill9(t *testing.T) {
	data := t.TempDir()
	var acked, sent int
	id := byte(0)
	client := &http.Client{Timeout: 5 * time.Second}
	flags := []string{"--trace-metrics-flush-interval", "1s"}
	for cycle := range 4 {
		p := startServeProc(t, data, flags...)
		stopAt := time.Now().Add(time.Duration(1500+cycle*700) * time.Millisecond)
		for time.Now().Before(stopAt) {
			id++
			sent++
			resp, err := client.Post("http://"+p.addrs["OTLP/HTTP"]+"/v1/traces", "application/x-protobuf", bytes.NewReader(graphtest.Trace(id, time.Now())))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					acked++
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.cmd.Wait()
	}
	p := startServeProc(t, data, flags...)
	time.Sleep(2500 * time.Millisecond) // the records since the last commit are read again, and flushed
	admin := p.addrs["admin HTTP"]
	q := url.Values{"query": {`traces_span_metrics_calls_total{span_name="GET /"}[1h]`}, "time": {strconv.FormatInt(time.Now().Unix(), 10)}}
	resp, err := http.Get("http://" + admin + "/api/v1/query?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Data struct {
			Result []struct{ Values [][2]any }
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	p.stop(t)
	if err != nil || len(d.Data.Result) != 1 {
		t.Fatalf("the counter of GET /: %v %+v", err, d)
	}
	total, prev, resets := 0.0, 0.0, 0
	for _, v := range d.Data.Result[0].Values {
		f, _ := strconv.ParseFloat(fmt.Sprint(v[1]), 64)
		if f < prev {
			resets++
			total += f
		} else {
			total += f - prev
		}
		prev = f
	}
	t.Logf("%d traces sent, %d acknowledged; the counter's increases add up to %v over %d resets", sent, acked, total, resets)
	if int(total) < acked || int(total) > sent {
		t.Errorf("the counter counted %v spans of GET /: want between the %d acknowledged and the %d sent", total, acked, sent)
	}
	if resets < 1 {
		t.Errorf("no reset seen across %d kills", 4)
	}
}
