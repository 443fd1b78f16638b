package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const teeUsage = `usage: readcompare tee --listen ADDR --to URL [--to URL ...]

Tee takes OTLP/HTTP requests (any path, POST) and sends each, with its
Content-Type and Content-Encoding, to every --to URL at once (the URL as
given, path and query included: http://127.0.0.1:4318/v1/logs,
http://127.0.0.1:9428/insert/opentelemetry/v1/logs?_stream_fields=service.name).
It answers 200 with the first target's body when every target answered
2xx, else 502 naming the target that did not: a request the load counts
as accepted is in every target. It runs until interrupted and then
prints the requests and bytes sent and the failures of each target.

flags:
`

// teeTargets are the repeated --to flags.
type teeTargets []string

func (t *teeTargets) String() string     { return strings.Join(*t, ",") }
func (t *teeTargets) Set(s string) error { *t = append(*t, s); return nil }

// runTee serves the fan-out until ctx is done.
func runTee(ctx context.Context, args []string, stderr io.Writer) error {
	var listen string
	var to teeTargets
	fs := flag.NewFlagSet("tee", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), teeUsage)
		fs.PrintDefaults()
	}
	fs.StringVar(&listen, "listen", "127.0.0.1:0", "address to take OTLP/HTTP requests on")
	fs.Var(&to, "to", "URL to send every request to (repeat for each target; at least one)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err: err, printed: true}
	}
	if len(to) == 0 || fs.NArg() > 0 {
		return usageError{err: errors.New("tee: --to is required at least once, and no arguments")}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	t := newTee(to)
	srv := &http.Server{Handler: t, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "readcompare tee: listening on %s, sending to %s\n", ln.Addr(), to.String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(sctx) //nolint:errcheck // the summary below says what was sent
	fmt.Fprint(stderr, t.summary())
	return nil
}

// tee sends every request it serves to all its targets.
type tee struct {
	targets  []string
	client   *http.Client
	requests atomic.Int64
	bytes    atomic.Int64
	failed   []atomic.Int64 // by target
}

func newTee(targets []string) *tee {
	return &tee{
		targets: targets,
		client:  &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		failed:  make([]atomic.Int64, len(targets)),
	}
}

// teeResult is one target's answer to a request.
type teeResult struct {
	status int
	body   []byte
	err    error
}

func (t *tee) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	t.requests.Add(1)
	t.bytes.Add(int64(len(body)))
	res := make([]teeResult, len(t.targets))
	var wg sync.WaitGroup
	for i, u := range t.targets {
		wg.Go(func() { res[i] = t.send(r, u, body) })
	}
	wg.Wait()
	for i, rs := range res {
		if rs.err != nil || rs.status/100 != 2 {
			t.failed[i].Add(1)
			msg := fmt.Sprintf("tee: %s answered %d: %s", t.targets[i], rs.status, bytes.TrimSpace(rs.body))
			if rs.err != nil {
				msg = fmt.Sprintf("tee: %s: %v", t.targets[i], rs.err)
			}
			http.Error(w, msg, http.StatusBadGateway)
			return
		}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		w.Header().Set("Content-Type", ct)
	}
	w.Write(res[0].body) //nolint:errcheck // the client's loss
}

// send posts body to u with r's content headers.
func (t *tee) send(r *http.Request, u string, body []byte) teeResult {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return teeResult{err: err}
	}
	for _, h := range []string{"Content-Type", "Content-Encoding"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return teeResult{err: err}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return teeResult{status: resp.StatusCode, body: b, err: err}
}

// summary is what the tee sent, a line per target.
func (t *tee) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "readcompare tee: %d requests, %d bytes, to each of %d targets\n", t.requests.Load(), t.bytes.Load(), len(t.targets))
	for i, u := range t.targets {
		fmt.Fprintf(&b, "readcompare tee: %s: %d failed\n", u, t.failed[i].Load())
	}
	return b.String()
}
