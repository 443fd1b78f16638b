package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// wideLogsRequest is a logs request of one record per id; record i has
// test.id and keys[i] more attributes with keys distinct across the whole
// test ("w<id>.<j>").
func wideLogsRequest(t *testing.T, ids []int64, keys []int) []byte {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "wide")
	sl := rl.ScopeLogs().AppendEmpty()
	for i, id := range ids {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		lr.Body().SetStr(fmt.Sprint("wide ", id))
		lr.Attributes().PutInt("test.id", id)
		for j := range keys[i] {
			lr.Attributes().PutStr(fmt.Sprintf("w%d.%d", id, j), "v")
		}
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordAttrCounts reads every logs file under root and returns, per
// test.id, how many record attributes its row holds (its attributes map).
func recordAttrCounts(t *testing.T, root string) map[int64]int {
	t.Helper()
	out := map[int64]int{}
	for _, p := range parquetFiles(t, root) {
		for _, attrs := range lakeAttributes(t, p) {
			id := int64(-1)
			if v := attrs["test.id"]; v != nil {
				var err error
				if id, err = strconv.ParseInt(*v, 10, 64); err != nil {
					t.Fatalf("%s: test.id %q: %v", p, *v, err)
				}
			}
			if _, dup := out[id]; dup {
				t.Errorf("test.id %d stored twice", id)
			}
			out[id] = len(attrs)
		}
	}
	return out
}

// TestServeWideAttributes sends the requests that used to crash the lake
// writer for good: one record with 70,000 distinct attribute keys, then
// ten requests of 7,000 keys each. Each is acknowledged, the server stays
// up, every record reaches the lake once with every attribute in its
// attributes map, and a restart finds nothing to replay and nothing wrong.
func TestServeWideAttributes(t *testing.T) {
	dir := t.TempDir()
	p := startServeProc(t, dir, "--lake-max-delay", "1s")
	want := map[int64]int{} // test.id -> record attributes
	send := func(ids []int64, keys []int) {
		body := wideLogsRequest(t, ids, keys)
		resp, err := http.Post("http://"+p.addrs["OTLP/HTTP"]+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("ids %v: status %d", ids, resp.StatusCode)
		}
		for i, id := range ids {
			want[id] = keys[i] + 1
		}
	}
	send([]int64{1, 2}, []int{70000, 3})
	for i := range int64(10) {
		send([]int64{10 + i}, []int{7000})
	}
	send([]int64{100}, []int{2})
	lake := dir + "/lake/logs"
	deadline := time.Now().Add(60 * time.Second)
	for len(recordAttrCounts(t, lake)) < len(want) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	check := func(when string) {
		got := recordAttrCounts(t, lake)
		if len(got) != len(want) {
			t.Errorf("%s: %d records in the lake, want %d", when, len(got), len(want))
		}
		for id, n := range want {
			if got[id] != n {
				t.Errorf("%s: record %d has %d attributes in the lake, want %d", when, id, got[id], n)
			}
		}
	}
	check("after sending")
	resp, err := http.Get("http://" + p.addrs["admin HTTP"] + "/readyz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz: %v %v", resp, err)
	}
	resp.Body.Close()
	p.stop(t)
	if strings.Contains(p.stderr.String(), "panic") {
		t.Errorf("serve logged a panic:\n%s", p.stderr)
	}
	p = startServeProc(t, dir, "--lake-max-delay", "1s")
	time.Sleep(1500 * time.Millisecond) // a replay would write within the max delay
	p.stop(t)
	if strings.Contains(p.stderr.String(), "replaying") || strings.Contains(p.stderr.String(), "quarantine") {
		t.Errorf("restart replayed or quarantined:\n%s", p.stderr)
	}
	check("after restart")
}
