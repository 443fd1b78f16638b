package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/stefreceiver"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// The receiver runs in a child process of its own (the same executable,
// started with receiverEnv set), so that the allocations of each side are
// counted apart: the sender's process holds only the exporters, the
// receiver's the Collector receivers, the counting sink and the proxies.
//
// The child prints one line of JSON, its endpoints, and then answers
// commands on stdin, one per line, each with one line of JSON:
//
//	reset <verify 0|1>    zero the sink and the proxies' counters; digest
//	                      every point from now on if verify is 1
//	wait <points> <ms>    answer when the sink holds at least points data
//	                      points, or after ms milliseconds
const receiverEnv = "EXPORTBENCH_RECEIVER"

// endpoints are the proxy addresses in front of the child's receivers.
type endpoints struct {
	OTLPGRPC string `json:"otlp_grpc"`
	OTLPHTTP string `json:"otlp_http"`
	STEF     string `json:"stef"`
}

// snapshot is the child's answer to a command.
type snapshot struct {
	Digest
	Requests int64  `json:"requests"`
	Up       int64  `json:"up"`    // bytes client to server, all proxies
	Down     int64  `json:"down"`  // bytes server to client
	Conns    int64  `json:"conns"` // connections accepted
	Mallocs  uint64 `json:"mallocs"`
	Alloc    uint64 `json:"alloc"` // cumulative bytes allocated
	Err      string `json:"err,omitempty"`
}

// sink is the consumer behind every receiver: it counts data points and,
// when verifying, digests them.
type sink struct {
	mu     sync.Mutex
	cond   *sync.Cond
	verify bool
	d      Digest
	reqs   int64
	h      digester
}

func newSink() *sink {
	s := &sink{}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *sink) consume(_ context.Context, md pmetric.Metrics) error {
	s.mu.Lock()
	if s.verify {
		s.d.Add(s.h.Metrics(md))
	} else {
		s.d.Points += int64(md.DataPointCount())
	}
	s.reqs++
	s.mu.Unlock()
	s.cond.Broadcast()
	return nil
}

// runReceiver is the child's main: it serves until in ends.
func runReceiver(ctx context.Context, in io.Reader, out io.Writer) error {
	s := newSink()
	next, err := consumer.NewMetrics(s.consume)
	if err != nil {
		return err
	}
	host := componenttest.NewNopHost()

	grpcAddr, httpAddr, stefAddr := freeAddr(), freeAddr(), freeAddr()
	var started []component.Component
	defer func() {
		for _, c := range started {
			c.Shutdown(context.Background())
		}
	}()

	of := otlpreceiver.NewFactory()
	ocfg := of.CreateDefaultConfig().(*otlpreceiver.Config)
	ocfg.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	ocfg.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	or, err := of.CreateMetrics(ctx, receivertest.NewNopSettings(of.Type()), ocfg, next)
	if err != nil {
		return fmt.Errorf("create otlpreceiver: %w", err)
	}
	if err := or.Start(ctx, host); err != nil {
		return fmt.Errorf("start otlpreceiver: %w", err)
	}
	started = append(started, or)

	sf := stefreceiver.NewFactory()
	scfg := sf.CreateDefaultConfig().(*stefreceiver.Config)
	scfg.NetAddr.Endpoint = stefAddr
	sr, err := sf.CreateMetrics(ctx, receivertest.NewNopSettings(sf.Type()), scfg, next)
	if err != nil {
		return fmt.Errorf("create stefreceiver: %w", err)
	}
	if err := sr.Start(ctx, host); err != nil {
		return fmt.Errorf("start stefreceiver: %w", err)
	}
	started = append(started, sr)

	var proxies []*proxy
	defer func() {
		for _, p := range proxies {
			p.Close()
		}
	}()
	var ep endpoints
	for _, x := range []struct {
		target string
		addr   *string
	}{{grpcAddr, &ep.OTLPGRPC}, {httpAddr, &ep.OTLPHTTP}, {stefAddr, &ep.STEF}} {
		if err := waitListening(x.target); err != nil {
			return err
		}
		p, err := newProxy(x.target)
		if err != nil {
			return err
		}
		proxies = append(proxies, p)
		*x.addr = p.Addr()
	}

	enc := json.NewEncoder(out)
	if err := enc.Encode(ep); err != nil {
		return err
	}
	snap := func(errText string) snapshot {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s.mu.Lock()
		sn := snapshot{Digest: s.d, Requests: s.reqs, Mallocs: ms.Mallocs, Alloc: ms.TotalAlloc, Err: errText}
		s.mu.Unlock()
		for _, p := range proxies {
			sn.Up += p.up.Load()
			sn.Down += p.down.Load()
			sn.Conns += p.conns.Load()
		}
		return sn
	}

	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var reply snapshot
		switch {
		case len(f) == 2 && f[0] == "reset":
			s.mu.Lock()
			s.d, s.reqs, s.verify = Digest{}, 0, f[1] == "1"
			s.mu.Unlock()
			for _, p := range proxies {
				p.Reset()
			}
			reply = snap("")
		case len(f) == 3 && f[0] == "wait":
			n, err1 := strconv.ParseInt(f[1], 10, 64)
			ms, err2 := strconv.ParseInt(f[2], 10, 64)
			if err := errors.Join(err1, err2); err != nil {
				reply = snap(err.Error())
				break
			}
			reply = snap(s.wait(n, time.Duration(ms)*time.Millisecond))
		default:
			reply = snap(fmt.Sprintf("unknown command %q", sc.Text()))
		}
		if err := enc.Encode(reply); err != nil {
			return err
		}
	}
	return sc.Err()
}

// wait blocks until the sink holds at least n points or timeout passes,
// and returns "" or what timed out.
func (s *sink) wait(n int64, timeout time.Duration) string {
	expired := false
	t := time.AfterFunc(timeout, func() {
		s.mu.Lock()
		expired = true
		s.mu.Unlock()
		s.cond.Broadcast()
	})
	defer t.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.d.Points < n && !expired {
		s.cond.Wait()
	}
	if s.d.Points < n {
		return fmt.Sprintf("timed out after %v: the sink holds %d of %d data points", timeout, s.d.Points, n)
	}
	return ""
}

// freeAddr returns a loopback address with a port the OS just chose. The
// Collector receivers take an address, not a listener, so the port is
// released and taken again at once.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitListening waits up to 5 s until addr accepts connections.
func waitListening(addr string) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("receiver at %s: %w", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
