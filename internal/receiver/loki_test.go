package receiver

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// lokiPush is a push request of one stream of labels (Loki's text) and
// lines at times ts (Unix ns), protobuf as Loki's push.proto numbers it.
func lokiPush(labels string, ts []int64, lines []string) []byte {
	var s []byte
	s = protowire.AppendTag(s, 1, protowire.BytesType)
	s = protowire.AppendString(s, labels)
	for i, line := range lines {
		var t, e []byte
		t = protowire.AppendTag(t, 1, protowire.VarintType)
		t = protowire.AppendVarint(t, uint64(ts[i]/1e9))
		t = protowire.AppendTag(t, 2, protowire.VarintType)
		t = protowire.AppendVarint(t, uint64(ts[i]%1e9))
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendBytes(e, t)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendString(e, line)
		s = protowire.AppendTag(s, 2, protowire.BytesType)
		s = protowire.AppendBytes(s, e)
	}
	return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), s)
}

// lokiRecords are the records the recorder got: resource attributes,
// then body, per line.
func lokiRecords(t *testing.T, rec *recorder) []string {
	t.Helper()
	var out []string
	for _, b := range rec.bodies(otlpwire.SignalLogs) {
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					out = append(out, fmt.Sprint(rl.Resource().Attributes().AsRaw(), " ", lr.Body().Str()))
				}
			}
		}
	}
	return out
}

// TestLokiPush: pushes in every shape a Loki client sends (snappy
// protobuf, with and without Content-Encoding: snappy; JSON, gzipped or
// not) are stored as OTLP log records of the stream's labels (a stream
// without service_name takes its job's, as Loki discovers it); the tenant
// comes from X-Scope-OrgID; malformed, mistyped and oversized pushes get
// Loki's status codes and store nothing; a push of some entries Loki
// refuses stores the others and answers 400 with the reason.
func TestLokiPush(t *testing.T) {
	var mu sync.Mutex
	var tenants []string
	rec := &recorder{hook: func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		mu.Lock()
		tenants = append(tenants, req.Tenant)
		mu.Unlock()
		return pipeline.Outcome{}, nil
	}}
	r := startWith(t, testConfig(), pipeline.Sinks{Logs: []pipeline.Sink{rec}})
	url := "http://" + r.HTTPAddr().String() + LokiPushPath
	now := time.Now().UnixNano()
	pb := snappy.Encode(nil, lokiPush(`{service_name="api", job="x"}`, []int64{now, now + 1}, []string{"one", "two"}))
	js := fmt.Sprintf(`{"streams":[{"stream":{"job":"y"},"values":[["%d","three",{"user":"ann"}]]}]}`, now)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.ReplaceAll(js, "three", "four"))) //nolint:errcheck
	zw.Close()
	for _, c := range []struct {
		name    string
		body    []byte
		headers []string
		status  int
	}{
		{"protobuf", pb, []string{"Content-Type", "application/x-protobuf", "X-Scope-OrgID", "team-a"}, http.StatusNoContent},
		{"protobuf, snappy named", pb, []string{"Content-Type", "application/x-protobuf", "Content-Encoding", "snappy"}, http.StatusNoContent},
		{"JSON", []byte(js), []string{"Content-Type", "application/json; charset=utf-8"}, http.StatusNoContent},
		{"gzipped JSON", gz.Bytes(), []string{"Content-Type", "application/json", "Content-Encoding", "gzip"}, http.StatusNoContent},
		{"bad snappy", []byte("not snappy at all"), []string{"Content-Type", "application/x-protobuf"}, http.StatusBadRequest},
		{"bad JSON", []byte(`{"streams": [`), []string{"Content-Type", "application/json"}, http.StatusBadRequest},
		{"unsupported type", []byte("x"), []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
		{"bad tenant", pb, []string{"Content-Type", "application/x-protobuf", "X-Scope-OrgID", "a/b"}, http.StatusBadRequest},
	} {
		status, _, body := post(t, url, c.body, c.headers...)
		if status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, status, body, c.status)
		}
	}
	want := "map[job:x loki.resource.labels:job,service.name service.name:api] one,map[job:x loki.resource.labels:job,service.name service.name:api] two,map[job:x loki.resource.labels:job,service.name service.name:api] one,map[job:x loki.resource.labels:job,service.name service.name:api] two,map[job:y loki.resource.labels:job,service.name service.name:y] three,map[job:y loki.resource.labels:job,service.name service.name:y] four"
	if got := strings.Join(lokiRecords(t, rec), ","); got != want {
		t.Errorf("records\n got  %s\n want %s", got, want)
	}
	mu.Lock()
	if got := strings.Join(tenants, ","); got != "team-a,,," {
		t.Errorf("tenants %q, want team-a then the default", got)
	}
	mu.Unlock()

	// Entries Loki refuses: the others are stored, 400 says why.
	before := len(lokiRecords(t, rec))
	old := now - int64(8*24*time.Hour)
	status, _, body := post(t, url, snappy.Encode(nil, lokiPush(`{job="z"}`, []int64{old, now}, []string{"old", "new"})), "Content-Type", "application/x-protobuf")
	if status != http.StatusBadRequest || !strings.Contains(string(body), "greater_than_max_sample_age") || !strings.Contains(string(body), "1 of 2 entries refused") {
		t.Errorf("a push with an old entry: %d %s", status, body)
	}
	if got := lokiRecords(t, rec)[before:]; len(got) != 1 || got[0] != "map[job:z loki.resource.labels:job,service.name service.name:z] new" {
		t.Errorf("stored of it: %v", got)
	}
	// 100k labels, a 50 MB line: refused, nothing stored.
	var many strings.Builder
	many.WriteString("{")
	for i := range 100_000 {
		fmt.Fprintf(&many, `l%d="v",`, i)
	}
	many.WriteString(`job="w"}`)
	before = len(lokiRecords(t, rec))
	status, _, body = post(t, url, snappy.Encode(nil, lokiPush(many.String(), []int64{now}, []string{"x"})), "Content-Type", "application/x-protobuf")
	if status != http.StatusBadRequest || !strings.Contains(string(body), "max_label_names_per_series") {
		t.Errorf("100k labels: %d %.200s", status, body)
	}
	status, _, body = post(t, url, snappy.Encode(nil, lokiPush(`{job="w"}`, []int64{now}, []string{strings.Repeat("x", 50<<20)})), "Content-Type", "application/x-protobuf")
	if status != http.StatusBadRequest || !strings.Contains(string(body), "line_too_long") {
		t.Errorf("a 50 MB line: %d %.200s", status, body)
	}
	if got := len(lokiRecords(t, rec)); got != before {
		t.Errorf("%d records stored of the refused pushes", got-before)
	}
}

// TestLokiPushTokens: with bearer tokens, a push needs one (401 without,
// Loki's realm) and goes to the token's tenant; X-Scope-OrgID does not
// choose it.
func TestLokiPushTokens(t *testing.T) {
	r, _, tenants := startAuth(t)
	url := "http://" + r.HTTPAddr().String() + LokiPushPath
	pb := snappy.Encode(nil, lokiPush(`{job="x"}`, []int64{time.Now().UnixNano()}, []string{"one"}))
	status, h, _ := post(t, url, pb, "Content-Type", "application/x-protobuf", "X-Scope-OrgID", "a")
	if status != http.StatusUnauthorized || !strings.Contains(h.Get("WWW-Authenticate"), "Loki") {
		t.Errorf("no token: %d %v", status, h)
	}
	status, _, body := post(t, url, pb, "Content-Type", "application/x-protobuf", "Authorization", "Bearer "+tokenA, "X-Scope-OrgID", "b")
	if status != http.StatusNoContent || strings.Join(tenants(), ",") != "a" {
		t.Errorf("token of a: %d %s, tenants %v", status, body, tenants())
	}
}
