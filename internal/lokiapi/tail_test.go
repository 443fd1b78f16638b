package lokiapi_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirehouse/wirehouse/internal/lokiapi"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestTail: the tail WebSocket sends the newest lines first, then the
// lines that reach the lake afterwards, oldest first, each once.
func TestTail(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC()
	write := func(seed int64, start time.Time) int {
		w := newLakeWriter(t, dir)
		body := synth.Logs(synth.Config{Seed: seed, Resources: 1, ScopesPerResource: 1, TotalRecords: 30, Start: start})
		if _, err := w.Append(otlpwire.SignalLogs, "default", body); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return 30
	}
	write(1, now.Add(-10*time.Minute))
	cfg := lokiapi.DefaultConfig()
	cfg.Reader, cfg.Tenant = newReader(t, dir, nil), "default"
	srvURL := serveAPI(t, cfg)
	u := "ws" + strings.TrimPrefix(srvURL, "http") + "/loki/api/v1/tail?" + url.Values{
		"query": {`{service_name=~".+"}`}, "limit": {"10"}, "start": {strconv.FormatInt(now.Add(-time.Hour).UnixNano(), 10)},
	}.Encode()
	conn, resp, err := websocket.DefaultDialer.Dial(u, nil)
	if err != nil {
		t.Fatalf("dial: %v (%v)", err, resp)
	}
	defer conn.Close()
	read := func() []int64 {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var msg struct {
			Streams []struct {
				Stream map[string]string `json:"stream"`
				Values [][2]string       `json:"values"`
			} `json:"streams"`
		}
		if err := conn.ReadJSON(&msg); err != nil {
			t.Fatalf("read: %v", err)
		}
		var ts []int64
		for _, s := range msg.Streams {
			for _, v := range s.Values {
				n, _ := strconv.ParseInt(v[0], 10, 64)
				ts = append(ts, n)
			}
		}
		return ts
	}
	first := read()
	if len(first) != 10 {
		t.Fatalf("first message: %d lines, want the newest 10", len(first))
	}
	newest := int64(0)
	for _, ts := range first {
		newest = max(newest, ts)
	}
	// New lines reach the lake: they come next, each once, all newer.
	want := write(2, now.Add(-time.Minute))
	var got []int64
	for len(got) < want {
		got = append(got, read()...)
	}
	if len(got) != want {
		t.Errorf("%d new lines, want %d", len(got), want)
	}
	seen := map[int64]bool{}
	for _, ts := range got {
		if ts <= newest || seen[ts] {
			t.Errorf("line at %d sent again or older than the newest sent", ts)
		}
		seen[ts] = true
	}
}

// TestTailsBoundedAndShared: past the gate's tails a tail is refused
// with 429 and a Retry-After before the upgrade; the tails of one query
// share one scan a second (the gate admits one query per second for
// all of them, not one each), and each still gets every new line.
func TestTailsBoundedAndShared(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC()
	write := func(seed int64, start time.Time) {
		w := newLakeWriter(t, dir)
		body := synth.Logs(synth.Config{Seed: seed, Resources: 1, ScopesPerResource: 1, TotalRecords: 20, Start: start})
		if _, err := w.Append(otlpwire.SignalLogs, "default", body); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(1, now.Add(-10*time.Minute))
	reg := prometheus.NewRegistry()
	gc := querybudget.DefaultConfig()
	gc.MaxTails, gc.MaxTailsPerTenant, gc.Registerer = 5, 5, reg
	gate, err := querybudget.New(gc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := lokiapi.DefaultConfig()
	cfg.Reader, cfg.Tenant, cfg.Gate = newReader(t, dir, nil), "default", gate
	srvURL := serveAPI(t, cfg)
	u := "ws" + strings.TrimPrefix(srvURL, "http") + "/loki/api/v1/tail?" + url.Values{
		"query": {`{service_name=~".+"}`}, "limit": {"5"}, "start": {strconv.FormatInt(now.Add(-time.Hour).UnixNano(), 10)},
	}.Encode()
	var conns []*websocket.Conn
	for range 5 {
		conn, resp, err := websocket.DefaultDialer.Dial(u, nil)
		if err != nil {
			t.Fatalf("dial: %v (%v)", err, resp)
		}
		defer conn.Close()
		conns = append(conns, conn)
	}
	_, resp, err := websocket.DefaultDialer.Dial(u, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "5" {
		t.Fatalf("a sixth tail: %v, %+v; want 429 with Retry-After 5", err, resp)
	}
	admitted := func() float64 {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "wirehouse_queries_admitted_total" {
				return mf.GetMetric()[0].GetCounter().GetValue()
			}
		}
		t.Fatal("no wirehouse_queries_admitted_total")
		return 0
	}
	// Each tail's own first query, then one shared scan a second.
	lines := func(conn *websocket.Conn) int {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var msg struct {
			Streams []struct {
				Values [][2]string `json:"values"`
			} `json:"streams"`
		}
		if err := conn.ReadJSON(&msg); err != nil {
			t.Fatalf("read: %v", err)
		}
		n := 0
		for _, s := range msg.Streams {
			n += len(s.Values)
		}
		return n
	}
	for _, c := range conns {
		if n := lines(c); n != 5 {
			t.Fatalf("first message: %d lines, want 5", n)
		}
	}
	before := admitted()
	time.Sleep(3500 * time.Millisecond)
	scans := admitted() - before
	if scans < 2 || scans > 5 {
		t.Fatalf("%v queries in 3.5 s for 5 tails of one query; want one shared scan a second", scans)
	}
	write(2, time.Now().Add(-30*time.Second)) // within the minute a tail looks back
	for i, c := range conns {
		got := 0
		for got < 20 {
			got += lines(c)
		}
		if got != 20 {
			t.Fatalf("tail %d: %d new lines, want 20", i, got)
		}
	}
}
