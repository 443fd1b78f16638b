package lokiapi_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestVolume: /index/volume and /index/volume_range answer the bytes of
// the lines of the selected streams, summed from the records sent: by the
// selector's labels (or targetLabels), by label name with
// aggregateBy=labels, the largest series first up to the limit, per step
// for the range; bad parameters are 400.
func TestVolume(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	var bodies [][]byte
	for i := range 3 {
		bodies = append(bodies, synth.Logs(synth.Config{Seed: int64(i), Resources: 3, ScopesPerResource: 1, TotalRecords: 300, Start: start.Add(time.Duration(i) * 20 * time.Minute)}))
	}
	base, sent := lokiServer(t, bodies...)
	from, to := start, start.Add(2*time.Hour)
	bytesOf := map[string]int64{} // by service, over (from, to]
	for _, s := range sent {
		if s.t > from.UnixNano() && s.t <= to.UnixNano() {
			bytesOf[s.service] += int64(len(s.line))
		}
	}
	// inStep is the bytes of service's lines in (t-step, t], t Unix
	// seconds.
	stepSec := int64(30 * 60)
	inStep := func(service string, t int64) int64 {
		var n int64
		for _, s := range sent {
			if s.service == service && s.t > (t-stepSec)*1e9 && s.t <= t*1e9 {
				n += int64(len(s.line))
			}
		}
		return n
	}
	if len(bytesOf) < 2 {
		t.Fatalf("%d services: the test compares little", len(bytesOf))
	}
	type vector struct {
		Data struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
				Values [][2]any          `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	params := window(from, to)
	params.Set("query", `{service_name=~".+"}`)
	var v vector
	if code, body := get(t, base, "/loki/api/v1/index/volume", params, &v); code != http.StatusOK || v.Data.ResultType != "vector" || len(v.Data.Result) != len(bytesOf) {
		t.Fatalf("volume: %d %s", code, body)
	}
	var prev int64 = 1 << 62
	for _, r := range v.Data.Result {
		svc := r.Metric["service_name"]
		got, _ := strconv.ParseInt(r.Value[1].(string), 10, 64)
		if len(r.Metric) != 1 || got != bytesOf[svc] || got > prev {
			t.Errorf("volume of %v: %d, want %d (largest first)", r.Metric, got, bytesOf[svc])
		}
		prev = got
	}
	// limit 1: the largest alone; by label name: one series of all.
	params.Set("limit", "1")
	get(t, base, "/loki/api/v1/index/volume", params, &v)
	largest := int64(0)
	var total int64
	for _, b := range bytesOf {
		largest, total = max(largest, b), total+b
	}
	if len(v.Data.Result) != 1 || v.Data.Result[0].Value[1] != strconv.FormatInt(largest, 10) {
		t.Errorf("limit 1: %+v, want the largest, %d", v.Data.Result, largest)
	}
	params.Del("limit")
	params.Set("aggregateBy", "labels")
	params.Set("targetLabels", "service_name")
	get(t, base, "/loki/api/v1/index/volume", params, &v)
	if len(v.Data.Result) != 1 || fmt.Sprint(v.Data.Result[0].Metric) != "map[service_name:]" || v.Data.Result[0].Value[1] != strconv.FormatInt(total, 10) {
		t.Errorf("by label name: %+v, want service_name of %d", v.Data.Result, total)
	}
	// The range, 30 min steps.
	params.Del("aggregateBy")
	params.Del("targetLabels")
	params.Set("step", "30m")
	if code, body := get(t, base, "/loki/api/v1/index/volume_range", params, &v); code != http.StatusOK || v.Data.ResultType != "matrix" {
		t.Fatalf("volume_range: %d %s", code, body)
	}
	check := func(what string) {
		n := 0
		for _, r := range v.Data.Result {
			for _, p := range r.Values {
				got, _ := strconv.ParseInt(p[1].(string), 10, 64)
				if want := inStep(r.Metric["service_name"], int64(p[0].(float64))); got != want {
					t.Errorf("%s: %v at %v: %d, want %d", what, r.Metric, p[0], got, want)
				}
				n++
			}
		}
		if n < 4 {
			t.Errorf("%s: %d points in the range", what, n)
		}
	}
	check("whole minutes (the files' counts)")
	// Steps that cut minutes: the lines are read instead.
	params.Set("start", strconv.FormatInt(from.Add(7*time.Second).UnixNano(), 10))
	params.Set("step", "90s")
	stepSec = 90
	if code, body := get(t, base, "/loki/api/v1/index/volume_range", params, &v); code != http.StatusOK {
		t.Fatalf("volume_range: %d %s", code, body)
	}
	check("steps cutting minutes (the lines)")
	for _, bad := range []string{"query=%7Bservice_name%3D%22x%22%7D+%7C%3D+%22a%22", "query=%7Ba%3D%22b%22%7D&aggregateBy=streams", "query=%7Ba%3D%22b%22%7D&targetLabels=a.b", "query=%7Ba%3D%22b%22%7D&limit=0", ""} {
		resp, err := http.Get(base + "/loki/api/v1/index/volume?" + bad)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("volume?%s: %d, want 400", bad, resp.StatusCode)
		}
	}
}
