package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeFourPointsOneRequest is the request, as a new user
// would send it: one OTLP/JSON request with four points of one gauge
// series, at T, 100 ns later (the same millisecond, another value), a
// millisecond before T and one after. Three are stored, in time order; the
// fourth is answered in the partial success, naming the reason and the
// series, and counted on /metrics.
func TestServeFourPointsOneRequest(t *testing.T) {
	addrs := startServe(t)
	T := time.Now().Add(-time.Minute).Truncate(time.Millisecond).Add(500 * time.Microsecond)
	ns := T.UnixNano()
	body := fmt.Sprintf(`{"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"fourpoints"}}]},
"scopeMetrics":[{"metrics":[{"name":"four","gauge":{"dataPoints":[
{"timeUnixNano":"%d","asDouble":1},{"timeUnixNano":"%d","asDouble":2},
{"timeUnixNano":"%d","asDouble":3},{"timeUnixNano":"%d","asDouble":4}]}}]}]}]}`,
		ns, ns+100, ns-1_000_000, ns+1_000_000)
	resp, err := http.Post("http://"+addrs["OTLP/HTTP"]+"/v1/metrics", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out struct {
		PartialSuccess struct {
			RejectedDataPoints string `json:"rejectedDataPoints"`
			ErrorMessage       string `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d %s: %v", resp.StatusCode, b, err)
	}
	want := `1 points rejected: duplicate_timestamp 1 (e.g. {__name__="four", job="fourpoints"})`
	if out.PartialSuccess.RejectedDataPoints != "1" || out.PartialSuccess.ErrorMessage != want {
		t.Errorf("response %s, want 1 rejected: %s", b, want)
	}
	// The stored samples, through the query API: T-1ms, T, T+1ms.
	got := queryRaw(t, addrs["admin HTTP"], `four[10m]`)
	ms := T.UnixMilli()
	wantSamples := fmt.Sprintf("[[%s 3] [%s 1] [%s 4]]", secs(ms-1), secs(ms), secs(ms+1))
	if fmt.Sprint(got) != wantSamples {
		t.Errorf("stored %v, want %s", got, wantSamples)
	}
	m := scrape(t, addrs["admin HTTP"])
	for k, want := range map[string]float64{
		`wirehouse_metricstore_rejected_points_total{reason="duplicate_timestamp"}`:                    1,
		`wirehouse_receiver_refused_records_total{reason="partial",signal="metrics",transport="http"}`: 1,
		`wirehouse_receiver_accepted_records_total{signal="metrics",transport="http"}`:                 3,
		`wirehouse_metricstore_duplicate_points_total`:                                                 0,
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
}

// secs formats a time in ms as the query API gives it.
func secs(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) }

// queryRaw returns the samples of the one series a range query selects,
// as [time value] pairs.
func queryRaw(t *testing.T, admin, query string) [][2]any {
	t.Helper()
	resp, err := http.Get("http://" + admin + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Result []struct {
				Values [][2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Data.Result) != 1 {
		t.Fatalf("%s: %d series, want 1", query, len(out.Data.Result))
	}
	vals := out.Data.Result[0].Values
	for i := range vals {
		vals[i][0] = strconv.FormatFloat(vals[i][0].(float64), 'f', -1, 64)
	}
	return vals
}

// scrape returns the samples of serve's /metrics by their series
// (name{labels} as exposed).
func scrape(t *testing.T, admin string) map[string]float64 {
	t.Helper()
	return scrapeAs(t, admin, "")
}

// scrapeAs is scrape with an admin bearer token, if not "".
func scrapeAs(t *testing.T, admin, token string) map[string]float64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+admin+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			out[line[:i]] = v
		}
	}
	http.DefaultClient.CloseIdleConnections()
	return out
}

// pointsAccounted is what serve says of the OTLP metric points it got:
// points received (acknowledged or rejected), rejected by the metric store
// by reason, and accepted as duplicates.
type pointsAccounted struct {
	received, rejected, duplicates float64
	reasons                        map[string]float64
}

func accounted(t *testing.T, admin string) pointsAccounted {
	t.Helper()
	m := scrape(t, admin)
	var a pointsAccounted
	a.reasons = map[string]float64{}
	for k, v := range m {
		switch {
		case strings.HasPrefix(k, `wirehouse_receiver_accepted_records_total{signal="metrics"`),
			strings.HasPrefix(k, `wirehouse_receiver_refused_records_total{reason="partial",signal="metrics"`):
			a.received += v
		case strings.HasPrefix(k, `wirehouse_metricstore_rejected_points_total{reason="`):
			a.rejected += v
			if v > 0 {
				a.reasons[strings.TrimSuffix(strings.TrimPrefix(k, `wirehouse_metricstore_rejected_points_total{reason="`), `"}`)] = v
			}
		case k == "wirehouse_metricstore_duplicate_points_total":
			a.duplicates = v
		}
	}
	return a
}

// TestServeTelemetrygenMetricsAccounted sends the Collector project's
// telemetrygen metrics of each type to serve, as the issue did
// (telemetrygen batches 100 points of one series a request, and at a
// high rate two of them can fall in one millisecond), and checks that
// every point telemetrygen sent is accounted for: stored (counted through
// the query API), rejected (partial success, by reason) or accepted as a
// duplicate. Needs WIREHOUSE_TELEMETRYGEN.
func TestServeTelemetrygenMetricsAccounted(t *testing.T) {
	bin := peerFromEnv(t, "WIREHOUSE_TELEMETRYGEN", "installs telemetrygen")
	for _, tc := range []struct {
		typ    string
		n      int
		stored string // the query of the points stored: one sample each
	}{
		// The runs, at its rate: 400 gauge points, 100 of each
		// other type.
		{"Gauge", 400, `sum(count_over_time(tg_gauge[1h]))`},
		{"Sum", 100, `sum(count_over_time(tg_sum_total[1h]))`},
		{"Histogram", 100, `sum(count_over_time(tg_histogram_count[1h]))`},
		{"ExponentialHistogram", 100, `sum(count_over_time(tg_exponentialhistogram[1h]))`},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			addrs := startServe(t)
			admin := addrs["admin HTTP"]
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			args := []string{"metrics", "--otlp-insecure", "--otlp-endpoint", addrs["OTLP/gRPC"], "--metric-type", tc.typ,
				"--otlp-metric-name", "tg_" + strings.ToLower(tc.typ), "--metrics", strconv.Itoa(tc.n), "--rate", "200",
				"--allow-export-failures"} // a partial success is an export error to it
			out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("telemetrygen %v: %v\n%s", args, err, out)
			}
			a := accounted(t, admin)
			stored := promQuery(t, admin, tc.stored)[""]
			t.Logf("telemetrygen %s: %d sent, %v received, %v stored, %v rejected %v, %v duplicates",
				tc.typ, tc.n, a.received, stored, a.rejected, a.reasons, a.duplicates)
			if a.received != float64(tc.n) {
				t.Errorf("serve received %v points, telemetrygen sent %d", a.received, tc.n)
			}
			if stored+a.rejected+a.duplicates != a.received {
				t.Errorf("%v received, but %v stored + %v rejected + %v duplicates", a.received, stored, a.rejected, a.duplicates)
			}
		})
	}
}
