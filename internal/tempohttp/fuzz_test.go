package tempohttp_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// FuzzSearchParams: any parameters of the search, tag and metrics
// endpoints get 200 with JSON or a 400, never another status or a panic.
func FuzzSearchParams(f *testing.F) {
	for _, s := range [][5]string{
		{`{ resource.service.name = "web" } > { status = error }`, "", "5", "1", "db.system"},
		{"", `service.name=db db.system="postgres"`, "", "", "resource.service.name"},
		{`{ } | by(resource.service.name) | count() > 1`, "", "0", "x", "name"},
		{`{ .a =~ "(" }`, "a=", "-1", "3", ".a b"},
		{`{ span.x = 1 } | select(.y)`, `k="unterminated`, "20", "3", "status"},
		{`{ } | quantile_over_time(duration, .9) by (resource.service.name)`, "", "", "1m", "name"},
		{`{ status = error } | rate() by (span.x) | topk(2)`, "", "", "30", ".x"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	body, base := searchTraces(f)
	api := serve(f, body)
	window := fmt.Sprintf("&start=%d&end=%d", base.Add(-time.Minute).Unix(), base.Add(15*time.Minute).Unix())
	f.Fuzz(func(t *testing.T, q, tags, limit, spss, tag string) {
		v := url.Values{}
		for k, x := range map[string]string{"q": q, "tags": tags, "limit": limit, "spss": spss} {
			if x != "" {
				v.Set(k, x)
			}
		}
		for _, path := range []string{
			"/api/search?" + v.Encode() + window,
			"/api/v2/search/tag/" + url.PathEscape(tag) + "/values?q=" + url.QueryEscape(q) + window,
			"/api/search/tag/" + url.PathEscape(tag) + "/values",
			"/api/metrics/query_range?q=" + url.QueryEscape(q) + "&step=" + url.QueryEscape(spss) + window,
			"/api/metrics/query?q=" + url.QueryEscape(q) + window,
		} {
			code, _, b := get(t, api+path, "")
			switch code {
			case http.StatusOK:
				if !json.Valid(b) {
					t.Fatalf("%s: 200 with %q", path, b)
				}
			case http.StatusBadRequest, http.StatusNotFound, http.StatusMovedPermanently:
			default:
				t.Fatalf("%s: %d %s", path, code, b)
			}
		}
	})
}
