package lokiapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// shapeOf checks that v has the shape of want, field by field: a string
// of want names the JSON type a value must have ("string", "number",
// "object", "array", "null or array"); an object, the fields it must
// have, each of its shape; an array of one element, that every element
// has that shape (and that there is one at least).
func shapeOf(path string, v, want any) error {
	switch w := want.(type) {
	case string:
		ok := false
		switch w {
		case "string":
			_, ok = v.(string)
		case "number":
			_, ok = v.(float64)
		case "object":
			_, ok = v.(map[string]any)
		case "array":
			_, ok = v.([]any)
		case "null or array":
			_, ok = v.([]any)
			ok = ok || v == nil
		default: // a literal value
			ok = v == w
		}
		if !ok {
			return fmt.Errorf("%s: %v (%T), want %s", path, v, v, w)
		}
	case map[string]any:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an object", path, v)
		}
		for k, wk := range w {
			got, ok := m[k]
			if !ok {
				return fmt.Errorf("%s: no field %q", path, k)
			}
			if err := shapeOf(path+"."+k, got, wk); err != nil {
				return err
			}
		}
	case []any:
		a, ok := v.([]any)
		if !ok || len(a) == 0 {
			return fmt.Errorf("%s: %v, want a non-empty array", path, v)
		}
		for i, e := range a {
			if len(w) == 1 {
				if err := shapeOf(fmt.Sprintf("%s[%d]", path, i), e, w[0]); err != nil {
					return err
				}
			} else if i < len(w) {
				if err := shapeOf(fmt.Sprintf("%s[%d]", path, i), e, w[i]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// TestDrilldownShapes: each endpoint Grafana's Loki data source and Logs
// Drilldown call answers the JSON shape Loki's API documentation gives,
// field by field (types of every field named; arrays' elements each).
func TestDrilldownShapes(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	base, _ := lokiServer(t, synth.Logs(synth.Config{Seed: 5, Resources: 2, ScopesPerResource: 1, TotalRecords: 400, Start: start}))
	rng := url.Values{"start": {strconv.FormatInt(start.Add(-time.Minute).UnixNano(), 10)}, "end": {strconv.FormatInt(start.Add(time.Hour).UnixNano(), 10)}}
	with := func(kv ...string) url.Values {
		p := url.Values{}
		for k, v := range rng {
			p[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			p.Set(kv[i], kv[i+1])
		}
		return p
	}
	sel := `{service_name=~".+"}`
	for _, c := range []struct {
		path   string
		params url.Values
		header string
		want   string
	}{
		{"/loki/api/v1/index/volume", with("query", sel), "",
			`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"service_name":"string"},"value":["number","string"]}]}}`},
		{"/loki/api/v1/index/volume_range", with("query", sel, "step", "60s"), "",
			`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"service_name":"string"},"values":[["number","string"]]}]}}`},
		{"/loki/api/v1/index/volume", with("query", sel, "aggregateBy", "labels"), "",
			`{"status":"success","data":{"resultType":"vector","result":[{"metric":"object","value":["number","string"]}]}}`},
		{"/loki/api/v1/detected_labels", with("query", sel), "",
			`{"detectedLabels":[{"label":"string","cardinality":"number"}]}`},
		{"/loki/api/v1/detected_fields", with("query", sel), "",
			`{"fields":[{"label":"string","type":"string","cardinality":"number","parsers":"null or array"}],"limit":"number"}`},
		{"/loki/api/v1/detected_field/detected_level/values", with("query", sel), "",
			`{"values":["string"],"limit":"number"}`},
		{"/loki/api/v1/patterns", with("query", sel, "step", "60s"), "",
			`{"status":"success","data":[{"pattern":"string","samples":[["number","number"]]}]}`},
		{"/loki/api/v1/query_range", with("query", sel, "limit", "10"), "categorize-labels",
			`{"status":"success","data":{"resultType":"streams","encodingFlags":["categorize-labels"],"result":[{"stream":"object","values":[["string","string","object"]]}]}}`},
		{"/loki/api/v1/status/buildinfo", url.Values{}, "",
			`{"version":"3.5.0","revision":"string","branch":"string","buildUser":"string","buildDate":"string","goVersion":"string"}`},
	} {
		req, _ := http.NewRequest(http.MethodGet, base+c.path+"?"+c.params.Encode(), nil)
		if c.header != "" {
			req.Header.Set("X-Loki-Response-Encoding-Flags", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got, want any
		if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %v %.300s", c.path, resp.StatusCode, err, b)
			continue
		}
		if err := json.Unmarshal([]byte(c.want), &want); err != nil {
			t.Fatal(err)
		}
		if err := shapeOf(c.path, got, want); err != nil {
			t.Errorf("%v\n%.400s", err, b)
		}
	}
}

// TestDrilldownTenants: another tenant (X-Scope-OrgID) sees nothing of
// the default tenant's logs through the new endpoints.
func TestDrilldownTenants(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	base, _ := lokiServer(t, synth.Logs(synth.Config{Seed: 5, Resources: 2, ScopesPerResource: 1, TotalRecords: 200, Start: start}))
	p := url.Values{"query": {`{service_name=~".+"}`}, "start": {strconv.FormatInt(start.Add(-time.Minute).UnixNano(), 10)},
		"end": {strconv.FormatInt(start.Add(time.Hour).UnixNano(), 10)}, "step": {"60s"}}
	for _, path := range []string{"/loki/api/v1/index/volume", "/loki/api/v1/index/volume_range", "/loki/api/v1/detected_labels",
		"/loki/api/v1/detected_fields", "/loki/api/v1/detected_field/detected_level/values", "/loki/api/v1/patterns"} {
		body := map[string]string{}
		for _, tenant := range []string{"default", "other"} {
			req, _ := http.NewRequest(http.MethodGet, base+path+"?"+p.Encode(), nil)
			req.Header.Set("X-Scope-OrgID", tenant)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s as %s: %d %s", path, tenant, resp.StatusCode, b)
			}
			body[tenant] = string(b)
		}
		for _, name := range []string{"service_name", "detected_level", "pattern"} {
			if strings.Contains(body["default"], name) && strings.Contains(body["other"], name) {
				t.Errorf("%s: the other tenant's answer names %s: %.300s", path, name, body["other"])
			}
		}
		if len(body["other"]) >= len(body["default"]) {
			t.Errorf("%s: the other tenant's answer is as long as the owner's:\n%.300s", path, body["other"])
		}
	}
}
