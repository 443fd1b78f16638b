package main

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// proxy is a loopback TCP proxy that counts the bytes it relays, so wire
// sizes include everything a format puts on the wire: TCP payload of
// handshakes, HTTP/1.1 and HTTP/2 headers, gRPC framing, STEF stream
// headers and acknowledgements.
type proxy struct {
	ln     net.Listener
	target string

	up    atomic.Int64 // client to server
	down  atomic.Int64 // server to client
	conns atomic.Int64 // connections accepted

	wg     sync.WaitGroup
	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
}

// newProxy listens on a loopback port chosen by the OS and relays every
// connection to target.
func newProxy(target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, open: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Addr returns the address clients connect to.
func (p *proxy) Addr() string { return p.ln.Addr().String() }

// Reset zeroes the counters.
func (p *proxy) Reset() {
	p.up.Store(0)
	p.down.Store(0)
	p.conns.Store(0)
}

// Close stops accepting, closes every relayed connection and waits for
// the relays to end.
func (p *proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.conns.Add(1)
		p.wg.Add(1)
		go p.relay(c)
	}
}

// track adds the connections of a relay to those Close closes, and
// reports false if the proxy is already closed.
func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range cs {
		p.open[c] = struct{}{}
	}
	return true
}

// untrack removes the connections of a finished relay.
func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	for _, c := range cs {
		delete(p.open, c)
	}
	p.mu.Unlock()
}

func (p *proxy) relay(client net.Conn) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	defer client.Close()
	defer server.Close()
	if !p.track(client, server) {
		return
	}
	defer p.untrack(client, server)
	done := make(chan struct{})
	go func() {
		copyCounting(server, client, &p.up)
		close(done)
	}()
	copyCounting(client, server, &p.down)
	<-done
}

// copyCounting copies src to dst, adding each chunk to n as soon as it is
// written, then half-closes dst so the peer sees the end of the stream.
func copyCounting(dst, src net.Conn, n *atomic.Int64) {
	buf := make([]byte, 64<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				break
			}
			n.Add(int64(k))
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				dst.Close()
				return
			}
			break
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
		return
	}
	dst.Close()
}
