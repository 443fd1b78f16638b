package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestServeLokiPushClients: two Python Loki handlers from PyPI
// (python-logging-loki in both its JSON shapes, loki-logger-handler with
// gzip and structured metadata) push to serve's OTLP/HTTP port and to its
// admin port; every line they pushed reads back through Loki's
// query_range once, with the labels and metadata it was pushed with, and
// the pushed labels are listed as stream labels.
func TestServeLokiPushClients(t *testing.T) {
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs python-logging-loki and loki-logger-handler in a venv")
	addrs := startServe(t, "--lake-max-delay", "1h")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n = 25
	for job, addr := range map[string]string{"pyloki-otlp": addrs["OTLP/HTTP"], "pyloki-admin": addrs["admin HTTP"]} {
		out, err := exec.CommandContext(ctx, python, filepath.Join("testdata", "loki_push.py"), "http://"+addr+"/loki/api/v1/push", strconv.Itoa(n), job).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "pushed") {
			t.Fatalf("loki_push.py to %s: %v\n%s", addr, err, out)
		}
	}
	now := time.Now()
	// The pushed labels are stream (index) labels: listed by /labels,
	// their hint not.
	var names []string
	lokiGet(t, addrs["admin HTTP"], "/loki/api/v1/labels", url.Values{"start": {strconv.FormatInt(now.Add(-time.Hour).UnixNano(), 10)}}, &names)
	if !slices.Contains(names, "job") || !slices.Contains(names, "handler") || slices.Contains(names, "loki_resource_labels") {
		t.Errorf("labels %v: want job and handler, not the hint", names)
	}
	for _, job := range []string{"pyloki-otlp", "pyloki-admin"} {
		var lines []string
		for _, s := range jobStreams(t, addrs["admin HTTP"], job, now) {
			h := s.Stream["handler"]
			// Each handler's labels as pushed (python-logging-loki adds
			// severity and logger; loki-logger-handler sends metadata),
			// and the service name Loki derives from job.
			want := map[string]string{"job": job, "service_name": job}
			switch h {
			case "pll-v1", "pll-v0":
				want["severity"], want["logger"] = "info", h
			case "llh":
				want["tenant_tag"] = "blue"
			default:
				t.Errorf("%s: a stream of handler %q: %v", job, h, s.Stream)
			}
			for k, v := range want {
				if s.Stream[k] != v {
					t.Errorf("%s: stream %v: %s=%q, want %q", job, s.Stream, k, s.Stream[k], v)
				}
			}
			for _, v := range s.Values {
				line := v[1]
				if h == "llh" { // a JSON object of the record, its default
					var rec struct{ Message string }
					if err := json.Unmarshal([]byte(line), &rec); err != nil {
						t.Errorf("%s: llh's line %q: %v", job, line, err)
					}
					line = rec.Message
				}
				if !strings.HasPrefix(line, h+" line ") {
					t.Errorf("%s: handler %s's stream holds %q", job, h, v[1])
				}
				lines = append(lines, line)
			}
		}
		var want []string
		for _, h := range []string{"pll-v1", "pll-v0", "llh"} {
			for i := range n {
				want = append(want, fmt.Sprintf("%s line %d", h, i))
			}
		}
		slices.Sort(lines)
		slices.Sort(want)
		if !slices.Equal(lines, want) {
			t.Errorf("%s: %d lines read back, want the %d pushed, each once:\n%v", job, len(lines), len(want), lines)
		}
	}
}

// lokiStream is a stream of a query_range answer.
type lokiStream struct {
	Stream map[string]string `json:"stream"`
	Values [][2]string       `json:"values"`
}

// jobStreams reads the streams of {job="job"} over the hour before now
// (and the minute after) through Loki's query_range on admin.
func jobStreams(t *testing.T, admin, job string, now time.Time) []lokiStream {
	t.Helper()
	var d struct {
		Result []lokiStream `json:"result"`
	}
	lokiGet(t, admin, "/loki/api/v1/query_range", url.Values{"query": {`{job="` + job + `"}`}, "limit": {"1000"},
		"start": {strconv.FormatInt(now.Add(-time.Hour).UnixNano(), 10)}, "end": {strconv.FormatInt(now.Add(time.Minute).UnixNano(), 10)}}, &d)
	return d.Result
}

// lokiPushBody is a snappy protobuf push of one stream {job="kill"} of a
// line a id, each with structured metadata test.id=<id>, at now.
func lokiPushBody(ids []int64) []byte {
	var s []byte
	s = protowire.AppendTag(s, 1, protowire.BytesType)
	s = protowire.AppendString(s, `{job="kill"}`)
	now := time.Now()
	for _, id := range ids {
		var ts, e, md []byte
		ts = protowire.AppendTag(ts, 1, protowire.VarintType)
		ts = protowire.AppendVarint(ts, uint64(now.Unix()))
		ts = protowire.AppendTag(ts, 2, protowire.VarintType)
		ts = protowire.AppendVarint(ts, uint64(now.Nanosecond()))
		md = protowire.AppendTag(md, 1, protowire.BytesType)
		md = protowire.AppendString(md, "test.id")
		md = protowire.AppendTag(md, 2, protowire.BytesType)
		md = protowire.AppendString(md, strconv.FormatInt(id, 10))
		e = protowire.AppendTag(e, 1, protowire.BytesType)
		e = protowire.AppendBytes(e, ts)
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendString(e, fmt.Sprintf("kill test line %d", id))
		e = protowire.AppendTag(e, 3, protowire.BytesType)
		e = protowire.AppendBytes(e, md)
		s = protowire.AppendTag(s, 2, protowire.BytesType)
		s = protowire.AppendBytes(s, e)
	}
	return snappy.Encode(nil, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), s))
}

// TestServeLokiPushKill9: serve is killed with SIGKILL while pushes of 20
// lines go to its Loki push API, again and again; after a last clean run
// every line whose push was answered 204 is in the lake exactly once, and
// no line is there twice.
func TestServeLokiPushKill9(t *testing.T) {
	data := t.TempDir()
	var (
		mu    sync.Mutex
		acked []int64
		next  int64
	)
	const cycles = 10
	client := &http.Client{Timeout: 5 * time.Second}
	for cycle := range cycles {
		p := startServeProc(t, data, "--lake-max-delay", "300ms")
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for ctx.Err() == nil {
					mu.Lock()
					ids := idRange(next, 20)
					next += 20
					mu.Unlock()
					resp, err := client.Post("http://"+p.addrs["OTLP/HTTP"]+"/loki/api/v1/push", "application/x-protobuf", bytes.NewReader(lokiPushBody(ids)))
					if err != nil {
						continue // killed: not acknowledged
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == http.StatusNoContent {
						mu.Lock()
						acked = append(acked, ids...)
						mu.Unlock()
					}
				}
			})
		}
		time.Sleep(time.Duration(100+rand.IntN(300)) * time.Millisecond)
		if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.cmd.Wait()
		cancel()
		wg.Wait()
		if cycle == 0 && len(acked) == 0 {
			t.Fatalf("nothing acknowledged in the first cycle:\n%s", p.stderr)
		}
	}
	p := startServeProc(t, data, "--lake-max-delay", "300ms")
	time.Sleep(time.Second)
	p.stop(t)
	got := lakeIDs(t, filepath.Join(data, "lake"), "logs")
	missing, dup := 0, 0
	for _, id := range acked {
		if got[id] == 0 {
			missing++
		}
	}
	for _, c := range got {
		if c > 1 {
			dup++
		}
	}
	t.Logf("%d lines acknowledged over %d kill -9 cycles, %d in the lake, %d acknowledged missing, %d duplicated", len(acked), cycles, len(got), missing, dup)
	if missing > 0 || dup > 0 {
		t.Errorf("%d acknowledged lines missing, %d lines duplicated", missing, dup)
	}
}

// TestServeLokiPushWinston: winston-loki, a Node.js Loki client from npm,
// pushes protobuf + snappy (its default) to serve's OTLP/HTTP port; every
// line reads back through query_range once, in the stream of the labels it
// was pushed with (its transport's labels, the level and the per-line
// parity label).
func TestServeLokiPushWinston(t *testing.T) {
	dir := peerFromEnv(t, "WIREHOUSE_NODE_LOKIPUSH", "installs winston-loki with npm in tools/lokipush-node")
	addrs := startServe(t, "--lake-max-delay", "1h")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n, job = 40, "winston-node"
	out, err := exec.CommandContext(ctx, "node", filepath.Join(dir, "push.js"), "http://"+addrs["OTLP/HTTP"], strconv.Itoa(n), job).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "pushed") {
		t.Fatalf("push.js: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "content-type application/x-protobuf") {
		t.Fatalf("winston-loki did not push protobuf (its snappy binding missing?):\n%s", out)
	}
	var lines []string
	for _, s := range jobStreams(t, addrs["admin HTTP"], job, time.Now()) {
		for _, v := range s.Values {
			var i int
			if _, err := fmt.Sscanf(v[1], "winston line %d", &i); err != nil {
				t.Errorf("a line %q", v[1])
				continue
			}
			want := map[string]string{"job": job, "service_name": job, "handler": "winston", "level": "info", "parity": []string{"even", "odd"}[i%2]}
			for k, w := range want {
				if s.Stream[k] != w {
					t.Errorf("line %q in stream %v: %s=%q, want %q", v[1], s.Stream, k, s.Stream[k], w)
				}
			}
			lines = append(lines, v[1])
		}
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("winston line %d", i)
	}
	slices.Sort(lines)
	slices.Sort(want)
	if !slices.Equal(lines, want) {
		t.Errorf("%d lines read back, want the %d pushed, each once:\n%v", len(lines), len(want), lines)
	}
}
