package lokipush_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grafana/loki/pkg/push"
	lokitranslator "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/loki"
	promparser "github.com/prometheus/prometheus/promql/parser"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/wirehouse/wirehouse/internal/lokipush"
)

// randomPush is a push request of random streams (labels of a few names,
// service_name and __ names among them, values with quotes and
// backslashes) and entries (times within the last hour, lines of any
// text, structured metadata, one sometimes named as a label).
func randomPush(rnd *rand.Rand, now time.Time) push.PushRequest {
	// No label Loki discovers a service from (app, job, ...): the
	// translator adds no service (TestProto checks the discovery).
	names := []string{"service_name", "env", "__meta", "level", "k8s_pod", "x"}
	text := func() string {
		const chars = `abc xyz "\/{}=,é日本` + "\n\t"
		r := []rune(chars)
		b := make([]rune, rnd.IntN(12))
		for i := range b {
			b[i] = r[rnd.IntN(len(r))]
		}
		return string(b)
	}
	var req push.PushRequest
	for range 1 + rnd.IntN(5) {
		ls := map[string]string{"level": "info"} // a stream without labels is Loki's missing_labels
		for range rnd.IntN(4) {
			ls[names[rnd.IntN(len(names))]] = text() + "v" // not empty: Loki drops empty labels
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(ls)) {
			parts = append(parts, k+"="+strconv.Quote(ls[k]))
		}
		s := push.Stream{Labels: "{" + strings.Join(parts, ", ") + "}"}
		for range rnd.IntN(6) {
			e := push.Entry{Timestamp: now.Add(-time.Duration(rnd.Int64N(int64(time.Hour)))), Line: text()}
			for range rnd.IntN(3) {
				e.StructuredMetadata = append(e.StructuredMetadata, push.LabelAdapter{Name: names[rnd.IntN(len(names))], Value: text()})
			}
			s.Entries = append(s.Entries, e)
		}
		req.Streams = append(req.Streams, s)
	}
	return req
}

// pushAsJSON is req in Loki's JSON shape, encoded by encoding/json.
func pushAsJSON(t *testing.T, req *push.PushRequest) []byte {
	t.Helper()
	type stream struct {
		Stream map[string]string `json:"stream"`
		Values [][]any           `json:"values"`
	}
	var streams []stream
	for _, s := range req.Streams {
		ls, err := promparser.NewParser(promparser.Options{}).ParseMetric(s.Labels)
		if err != nil {
			t.Fatal(err)
		}
		st := stream{Stream: ls.Map()}
		for _, e := range s.Entries {
			v := []any{strconv.FormatInt(e.Timestamp.UnixNano(), 10), e.Line}
			if len(e.StructuredMetadata) > 0 {
				md := map[string]string{}
				for _, m := range e.StructuredMetadata {
					md[m.Name] = m.Value // the last of a name, as the decoders keep it
				}
				v = append(v, md)
			}
			st.Values = append(st.Values, v)
		}
		streams = append(streams, st)
	}
	b, err := json.Marshal(map[string]any{"streams": streams})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// flatRecords are a logs request's records, each as its time, body and
// attributes: for wirehouse's, the resource's (service.name as the label
// service_name it stands for) under the record's, as the Collector's
// lokireceiver puts a stream's labels and then its metadata on each record.
func flatRecords(t *testing.T, ld plog.Logs, ours bool) []string {
	t.Helper()
	var out []string
	for _, rl := range ld.ResourceLogs().All() {
		res := rl.Resource().Attributes().AsRaw()
		delete(res, lokipush.LabelsHintKey)
		if svc, ok := res["service.name"]; ok {
			delete(res, "service.name")
			res["service_name"] = svc
		}
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				attrs := maps.Clone(res)
				if !ours {
					attrs = map[string]any{}
				}
				maps.Copy(attrs, lr.Attributes().AsRaw())
				b, _ := json.Marshal(attrs) // sorted keys
				out = append(out, fmt.Sprintf("%d %q %s", lr.Timestamp(), lr.Body().Str(), b))
			}
		}
	}
	return out
}

// TestOracleLokiReceiver: random push requests, encoded by Loki's own
// push package (Apache-2.0; and as JSON by encoding/json, which must give
// the same records), read by wirehouse's decoder and by the
// Collector's lokireceiver translation (pkg/translator/loki v0.158.0's
// PushRequestToLogs, use_incoming_timestamp on) give the same records,
// field by field: time, body, and attributes, wirehouse's resource
// (labels) and record (metadata) taken together, as the translator puts
// both on the record, wirehouse's hint loki.resource.labels left out.
// Two differences are documented and kept out of the requests: a stream
// with no label (Loki refuses it, missing_labels; the
// translator takes it) and one without service_name but with a label Loki
// discovers a service from (wirehouse adds that service).
func TestOracleLokiReceiver(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	d := &lokipush.Decoder{Limits: lokipush.DefaultLimits(), Now: func() time.Time { return now }}
	records := 0
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 43))
		req := randomPush(rnd, now)
		body, err := req.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		out, st, err := d.Proto(nil, body)
		if err != nil || st.Refused != 0 {
			t.Fatalf("seed %d: %v, %+v", seed, err, st)
		}
		ours, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(out)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := lokitranslator.PushRequestToLogs(&req, true)
		if err != nil {
			t.Fatalf("seed %d: the translator: %v", seed, err)
		}
		g, w := flatRecords(t, ours, true), flatRecords(t, theirs, false)
		// The same request as JSON gives the same records.
		js, _, err := d.JSON(nil, pushAsJSON(t, &req))
		if err != nil {
			t.Fatal(err)
		}
		ourJSON, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(js)
		if err != nil {
			t.Fatal(err)
		}
		if j := flatRecords(t, ourJSON, true); !slices.Equal(j, g) {
			t.Fatalf("seed %d: the JSON push gives\n %q\nthe protobuf's\n %q", seed, j, g)
		}
		if !slices.Equal(g, w) {
			t.Fatalf("seed %d: %d records, the translator's %d:\n ours   %q\n theirs %q", seed, len(g), len(w), g, w)
		}
		records += len(g)
	}
	if records < 500 {
		t.Errorf("only %d records compared", records)
	}
}
