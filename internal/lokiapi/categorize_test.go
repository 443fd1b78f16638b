package lokiapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// TestCategorizeLabels: with X-Loki-Response-Encoding-Flags:
// categorize-labels, a log query's lines group by their stream labels
// alone, each with its structured metadata and parsed labels apart, and
// data says encodingFlags; without it, every label splits the streams.
func TestCategorizeLabels(t *testing.T) {
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "api")
	rl.Resource().Attributes().PutStr("k8s.pod.name", "p1")
	rl.Resource().Attributes().PutStr("host.name", "h1")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i, user := range []string{"ann", "bob"} {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Duration(i) * time.Second)))
		lr.Body().SetStr(`level=warn msg=slow user_id=` + user)
		lr.Attributes().PutStr("user", user)
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := lokiServer(t, body)
	params := window(at.Add(-time.Minute), at.Add(time.Minute))
	params.Set("query", `{service_name="api"} | logfmt`)
	type stream struct {
		Stream map[string]string   `json:"stream"`
		Values [][]json.RawMessage `json:"values"`
	}
	fetch := func(categorize bool) ([]string, []stream) {
		req, _ := http.NewRequest(http.MethodGet, base+"/loki/api/v1/query_range?"+params.Encode(), nil)
		if categorize {
			req.Header.Set("X-Loki-Response-Encoding-Flags", "categorize-labels")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var r struct {
			Data struct {
				EncodingFlags []string `json:"encodingFlags"`
				Result        []stream `json:"result"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &r); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %v %s", resp.StatusCode, err, b)
		}
		return r.Data.EncodingFlags, r.Data.Result
	}
	flags, res := fetch(true)
	if len(flags) != 1 || flags[0] != "categorize-labels" || len(res) != 1 || len(res[0].Stream) != 2 ||
		res[0].Stream["service_name"] != "api" || res[0].Stream["k8s_pod_name"] != "p1" || len(res[0].Values) != 2 {
		t.Fatalf("categorized: flags %v, result %+v", flags, res)
	}
	for i, v := range res[0].Values { // newest first: bob, then ann
		user := []string{"bob", "ann"}[i]
		var cats struct {
			StructuredMetadata map[string]string `json:"structuredMetadata"`
			Parsed             map[string]string `json:"parsed"`
		}
		if len(v) != 3 || json.Unmarshal(v[2], &cats) != nil {
			t.Fatalf("value %s: want [time, line, categories]", v)
		}
		md, p := cats.StructuredMetadata, cats.Parsed
		if md["user"] != user || md["host_name"] != "h1" || md["service_name"] != "" || p["level"] != "warn" || p["msg"] != "slow" || p["user_id"] != user || p["user"] != "" {
			t.Errorf("line %d: metadata %v, parsed %v", i, md, p)
		}
	}
	if flags, res := fetch(false); len(flags) != 0 || len(res) != 2 || len(res[0].Values[0]) != 2 {
		t.Errorf("not categorized: flags %v, %d streams, values %s", flags, len(res), res[0].Values)
	}
}
