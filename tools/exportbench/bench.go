package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"time"
)

// receiverProc is the receiver child process and its command pipe.
type receiverProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
	ep  endpoints
	mu  sync.Mutex
}

// startReceiver starts this executable as the receiver child; stderr gets
// the child's stderr.
func startReceiver(stderr io.Writer) (*receiverProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start receiver: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), receiverEnv+"=1")
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start receiver: %w", err)
	}
	r := &receiverProc{cmd: cmd, in: in, out: json.NewDecoder(bufio.NewReader(out))}
	if err := r.out.Decode(&r.ep); err != nil {
		r.Close()
		return nil, fmt.Errorf("start receiver: read endpoints: %w", err)
	}
	return r, nil
}

// call sends a command and returns the child's answer.
func (r *receiverProc) call(format string, args ...any) (snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var s snapshot
	if _, err := fmt.Fprintf(r.in, format+"\n", args...); err != nil {
		return s, fmt.Errorf("receiver: %w", err)
	}
	if err := r.out.Decode(&s); err != nil {
		return s, fmt.Errorf("receiver: %w", err)
	}
	if s.Err != "" {
		return s, errors.New(s.Err)
	}
	return s, nil
}

// Close ends the child and waits for it.
func (r *receiverProc) Close() error {
	r.in.Close()
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		return <-done
	}
}

// passOptions are the settings every pass uses.
type passOptions struct {
	Consumers int
	Timeout   time.Duration // for the sink to hold every point
}

// pass is the measurement of one export of a whole dataset through a new
// exporter, connection and stream. The first batch is sent alone and
// waited for ("cold"); the rest ("steady") are then queued at once and the
// clock stops when the sink holds every point.
type pass struct {
	ColdUp, ColdDown     int64         // bytes of the first batch, on a new connection
	Up, Down             int64         // bytes of the whole pass
	ColdTime, SteadyTime time.Duration // first batch; the rest
	SendMallocs, SendB   uint64        // sender process, steady phase
	RecvMallocs, RecvB   uint64        // receiver process, steady phase
	Conns                int64
	Digest               Digest // when verifying
}

// runPass exports ds once in format f. With verify the sink digests every
// point (slower; not for timing).
func runPass(ctx context.Context, rp *receiverProc, f Format, ds *dataset, o passOptions, verify bool) (pass, error) {
	var p pass
	v := 0
	if verify {
		v = 1
	}
	if _, err := rp.call("reset %d", v); err != nil {
		return p, err
	}
	s, err := newSender(ctx, f, rp.ep, o.Consumers, len(ds.batches))
	if err != nil {
		return p, err
	}
	defer s.Shutdown(context.Background())
	ms := o.Timeout.Milliseconds()

	t0 := time.Now()
	if err := s.Send(ctx, ds.batches[0]); err != nil {
		return p, fmt.Errorf("send: %w", err)
	}
	cold, err := rp.call("wait %d %d", ds.batches[0].points, ms)
	if err != nil {
		return p, fmt.Errorf("first batch: %w", withSendErr(err, s))
	}
	p.ColdTime = time.Since(t0)
	p.ColdUp, p.ColdDown = cold.Up, cold.Down

	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t1 := time.Now()
	for _, b := range ds.batches[1:] {
		if err := s.Send(ctx, b); err != nil {
			return p, fmt.Errorf("send: %w", err)
		}
	}
	end, err := rp.call("wait %d %d", ds.points, ms)
	if err != nil {
		return p, withSendErr(err, s)
	}
	p.SteadyTime = time.Since(t1)
	runtime.ReadMemStats(&m1)
	p.SendMallocs, p.SendB = m1.Mallocs-m0.Mallocs, m1.TotalAlloc-m0.TotalAlloc
	p.RecvMallocs, p.RecvB = end.Mallocs-cold.Mallocs, end.Alloc-cold.Alloc
	p.Up, p.Down, p.Conns = end.Up, end.Down, end.Conns
	p.Digest = end.Digest
	if err := s.Shutdown(ctx); err != nil {
		return p, fmt.Errorf("shut down %s: %w", f.Name, err)
	}
	return p, nil
}

// withSendErr adds to a wait that failed the sender's own last error,
// which says why the points did not arrive.
func withSendErr(err error, s sender) error {
	if serr := s.Err(); serr != nil {
		return fmt.Errorf("%w (%w)", err, serr)
	}
	return err
}

// Result is what exportbench reports for a format: byte counts are means
// over the timed passes, times medians; "steady" covers batches 2..n of a
// pass, "cold" its first batch on a new connection or stream.
type Result struct {
	Format              string  `json:"format"`
	Batches             int     `json:"batches"`
	Points              int64   `json:"points"`
	RawBytes            int64   `json:"raw_bytes"`
	WireBytes           int64   `json:"wire_bytes"`     // client to server, whole pass
	ResponseBytes       int64   `json:"response_bytes"` // server to client, whole pass
	Ratio               float64 `json:"ratio_vs_raw"`   // RawBytes / WireBytes
	NsPerPoint          float64 `json:"ns_per_point"`   // steady
	WireBytesPerPoint   float64 `json:"wire_bytes_per_point"`
	SendAllocsPerPoint  float64 `json:"sender_allocs_per_point"`
	SendBytesPerPoint   float64 `json:"sender_bytes_per_point"`
	RecvAllocsPerPoint  float64 `json:"receiver_allocs_per_point"`
	RecvBytesPerPoint   float64 `json:"receiver_bytes_per_point"`
	ColdBytes           int64   `json:"cold_bytes"`
	SteadyBytesPerBatch float64 `json:"steady_bytes_per_batch"`
	ColdMillis          float64 `json:"cold_ms"`
	Connections         float64 `json:"connections"`
	Passes              int     `json:"passes"`
	Intact              bool    `json:"intact"`
	Lost                string  `json:"lost,omitempty"` // digest parts that differ
	Err                 string  `json:"error,omitempty"`
}

// measure runs one verifying pass of f, then iterations timed passes, and
// summarizes them. A failure is reported in Result.Err.
func measure(ctx context.Context, rp *receiverProc, f Format, ds *dataset, o passOptions, iterations int, progress io.Writer) Result {
	r := Result{Format: f.Name, Batches: len(ds.batches), Points: ds.points, RawBytes: ds.raw}
	if f.transport == stef && ds.emptyNumbers > 0 {
		r.Err = fmt.Sprintf("not run: the dataset has %d number data points with neither a value nor the no-recorded-value flag, on which stef v0.0.9 panics (splunk/stef#370)", ds.emptyNumbers)
		return r
	}
	vp, err := runPass(ctx, rp, f, ds, o, true)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	r.Lost = ds.digest.Diff(vp.Digest)
	r.Intact = r.Lost == ""
	var passes []pass
	for i := range iterations {
		p, err := runPass(ctx, rp, f, ds, o, false)
		if err != nil {
			r.Err = err.Error()
			return r
		}
		passes = append(passes, p)
		fmt.Fprintf(progress, "exportbench: %-22s pass %d/%d: %d bytes, steady %v\n", f.Name, i+1, iterations, p.Up, p.SteadyTime.Round(time.Microsecond))
	}
	summarize(&r, passes, ds)
	return r
}

// summarize fills r from the passes.
func summarize(r *Result, passes []pass, ds *dataset) {
	n := float64(len(passes))
	r.Passes = len(passes)
	if n == 0 {
		return
	}
	steadyPoints := float64(ds.points - ds.batches[0].points)
	var up, down, coldUp float64
	var sendM, sendB, recvM, recvB, conns float64
	var nsPer, cold []float64
	for _, p := range passes {
		up += float64(p.Up)
		down += float64(p.Down)
		coldUp += float64(p.ColdUp)
		sendM += float64(p.SendMallocs)
		sendB += float64(p.SendB)
		recvM += float64(p.RecvMallocs)
		recvB += float64(p.RecvB)
		conns += float64(p.Conns)
		cold = append(cold, float64(p.ColdTime)/1e6)
		if steadyPoints > 0 {
			nsPer = append(nsPer, float64(p.SteadyTime)/steadyPoints)
		}
	}
	r.WireBytes = int64(up / n)
	r.ResponseBytes = int64(down / n)
	r.ColdBytes = int64(coldUp / n)
	if r.WireBytes > 0 {
		r.Ratio = float64(ds.raw) / float64(r.WireBytes)
	}
	r.WireBytesPerPoint = float64(r.WireBytes) / float64(ds.points)
	r.ColdMillis = median(cold)
	r.Connections = conns / n
	if steadyPoints > 0 {
		r.NsPerPoint = median(nsPer)
		r.SendAllocsPerPoint = sendM / n / steadyPoints
		r.SendBytesPerPoint = sendB / n / steadyPoints
		r.RecvAllocsPerPoint = recvM / n / steadyPoints
		r.RecvBytesPerPoint = recvB / n / steadyPoints
		r.SteadyBytesPerBatch = (up - coldUp) / n / float64(len(ds.batches)-1)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
