package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// fakeProm answers the two queries verify makes from a table of names:
// each name's series and samples, spread over distinct label sets.
func fakeProm(t *testing.T, counts map[string][2]int64) *httptest.Server {
	t.Helper()
	sel := regexp.MustCompile(`__name__="([^"]+)"`)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var data any
		switch {
		case r.URL.Path == "/api/v1/label/__name__/values":
			var names []string
			for n := range counts {
				names = append(names, n)
			}
			data = names
		case r.URL.Path == "/api/v1/query":
			m := sel.FindStringSubmatch(r.URL.Query().Get("query"))
			type sample struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			}
			res := []sample{}
			if m != nil {
				c := counts[m[1]]
				for i := range c[0] {
					n := int64(1)
					if i == 0 {
						n = c[1] - (c[0] - 1)
					}
					res = append(res, sample{map[string]string{"i": fmt.Sprint(i)}, [2]any{1.0, fmt.Sprint(n)}})
				}
			}
			data = map[string]any{"resultType": "vector", "result": res}
		default:
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
	}))
}

// TestVerifyPerName: verify finds every family the expectation derives,
// names the one a server lost part of, and falls back to totals against a
// server that names metrics otherwise.
func TestVerifyPerName(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Signal, cfg.Batch, cfg.Resources, cfg.Count, cfg.Repeat = otlpwire.SignalMetrics, 600, 6, 4, true
	res := Result{Start: time.Now().Add(-time.Hour), AckedByVariant: []int64{1, 1, 1, 1}}
	x := newExpectation()
	for _, b := range generate(cfg, res.Start) {
		if err := x.add(otlpwire.MetricsRequest(b)); err != nil {
			t.Fatal(err)
		}
	}
	counts := map[string][2]int64{}
	kinds := map[string]bool{}
	for name, f := range x.families {
		counts[name] = [2]int64{int64(len(f.series)), int64(len(f.samples))}
		for _, suffix := range []string{"_bucket", "_sum", "_count", "_total"} {
			if strings.HasSuffix(name, suffix) {
				kinds[suffix] = true
			}
		}
	}
	if len(kinds) != 4 {
		t.Fatalf("families %v: want buckets, sums, counts and counters among them", kinds)
	}

	srv := fakeProm(t, counts)
	v, err := Verify(context.Background(), srv.URL, cfg, res)
	srv.Close()
	if err != nil || !v.OK() || v.Rule != "per-name" || v.SeriesFound != v.SeriesExpected || v.SamplesExpected < 4*600 {
		t.Fatalf("complete server: %+v, %v", v, err)
	}

	// One bucket family short of a series and a sample.
	var lost string
	for name, c := range counts {
		if strings.HasSuffix(name, "_bucket") && c[0] > 1 {
			lost = name
			counts[name] = [2]int64{c[0] - 1, c[1] - 1}
			break
		}
	}
	srv = fakeProm(t, counts)
	v, err = Verify(context.Background(), srv.URL, cfg, res)
	srv.Close()
	if err != nil || v.MissingSeries != 1 || v.MissingSamples != 1 || len(v.Missing) != 1 || !strings.HasPrefix(v.Missing[0], lost+":") {
		t.Fatalf("server missing one %s series: %+v, %v", lost, v, err)
	}

	// Other names entirely: totals.
	srv = fakeProm(t, map[string][2]int64{"something_else": {1, 1}})
	v, err = Verify(context.Background(), srv.URL, cfg, res)
	srv.Close()
	if err != nil || v.Rule != "at-least" || v.OK() {
		t.Fatalf("differently named server: %+v, %v", v, err)
	}
}
