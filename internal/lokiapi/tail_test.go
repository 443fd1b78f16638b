package lokiapi_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wirehouse/wirehouse/internal/lokiapi"
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
