package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// server is one side of the comparison.
type server struct {
	name   string // as the table names it
	base   string // base URL of its query API, no trailing slash
	pid    int    // its process, for its CPU time; 0: not measured
	client *http.Client
}

// call is one HTTP GET of a query on one server and the normalizer of its
// answer.
type call struct {
	path   string     // under the server's base URL
	params url.Values // the query string
	norm   func(body []byte) (answer, error)
}

// answer is a normalized answer, compared item by item with the other
// server's.
type answer struct {
	items []string // sorted
	size  int      // lines, points or spans, for the table
}

// query is one row of the table: the same question asked of both
// servers as one or more calls each (the calls of the two sides pair up
// by index), and how to compare the answers.
type query struct {
	name       string
	unit       string // what answer.size counts: "lines", "spans", ...
	ours, peer []call
	// trim, if set, drops from both answers what their semantics leave
	// undecided (lines tied at a limit's cut, topk ties) before they are
	// compared.
	trim func(a, b answer) (answer, answer)
}

// sideResult is what one server did for one query.
type sideResult struct {
	answers []answer        // of the warm-up, by call
	lat     []time.Duration // every measured call
	cpu     time.Duration   // server CPU over the measured calls
	calls   int             // measured calls
	runs    int             // measured repetitions of all the calls
}

// minRuns are the repetitions a query gets whatever its time.
const minRuns = 3

// measure runs calls on s: each once to warm up (its answers kept), then
// all of them runs times, the server's CPU read before and after; after
// minRuns repetitions it stops early once they have taken budget.
func measure(ctx context.Context, s *server, calls []call, runs int, budget time.Duration) (sideResult, error) {
	var r sideResult
	for _, c := range calls {
		body, _, err := s.get(ctx, c)
		if err != nil {
			return r, err
		}
		a, err := c.norm(body)
		if err != nil {
			return r, fmt.Errorf("%s %s: %w", s.name, c.path, err)
		}
		r.answers = append(r.answers, a)
	}
	cpu0, err := processCPU(s.pid)
	if err != nil {
		return r, err
	}
	began := time.Now()
	for r.runs < runs && (r.runs < minRuns || time.Since(began) < budget) {
		r.runs++
		for _, c := range calls {
			_, d, err := s.get(ctx, c)
			if err != nil {
				return r, err
			}
			r.lat = append(r.lat, d)
			r.calls++
		}
	}
	cpu1, err := processCPU(s.pid)
	if err != nil {
		return r, err
	}
	r.cpu = cpu1 - cpu0
	return r, nil
}

// get runs c on s and returns the body and the time from sending the
// request to reading the whole answer. A status other than 200 is an
// error that quotes the answer.
func (s *server) get(ctx context.Context, c call) ([]byte, time.Duration, error) {
	u := s.base + c.path
	if len(c.params) > 0 {
		u += "?" + c.params.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	t := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", s.name, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t)
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", s.name, c.path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("%s GET %s: %s: %s", s.name, u, resp.Status, clip(string(body), 300))
	}
	return body, d, nil
}

// settle waits until every process of pids (0s skipped) uses less than
// 5% of a CPU over two seconds, so that work left from the load (Parquet
// writing, merges) does not land on the first queries, or until limit has
// passed.
func settle(ctx context.Context, pids []int, limit time.Duration, stderr io.Writer) error {
	const every = 2 * time.Second
	deadline := time.Now().Add(limit)
	last := make([]time.Duration, len(pids))
	for i, p := range pids {
		c, err := processCPU(p)
		if err != nil {
			return err
		}
		last[i] = c
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(every):
		}
		busy := false
		for i, p := range pids {
			c, err := processCPU(p)
			if err != nil {
				return err
			}
			if c-last[i] >= every/20 {
				busy = true
			}
			last[i] = c
		}
		if !busy {
			return nil
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(stderr, "readcompare: the servers are still busy after %s; querying anyway\n", limit)
			return nil
		}
	}
}

// clockTick is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// 100 on every Linux ABI Go runs on.
const clockTick = 10 * time.Millisecond

// processCPU is the user+system CPU time of process pid so far, from
// /proc/PID/stat; 0 for pid 0.
func processCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: state is field 3, utime 14 and stime 15.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// clip is s cut to n bytes, marked if cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// sorted is a with its items sorted and its size set.
func sorted(a answer, size int) answer {
	slices.Sort(a.items)
	a.size = size
	return a
}
