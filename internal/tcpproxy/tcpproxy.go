// Package tcpproxy is a TCP proxy on 127.0.0.1 that a test puts between a
// client and a server to break the network between them at will.
//
// A Proxy is always in one of three modes, switched at any time:
//
//   - pass (the start): each new connection is forwarded to the target;
//   - cut: every open connection is closed on both sides and each new one
//     is closed as soon as it is accepted, like a host that went away;
//   - blackhole: connections stay open, old and new, but nothing is
//     forwarded in either direction and nothing is answered, like a network
//     that drops every packet. Data sent after Blackhole returns is dropped;
//     data already read may still arrive. When the proxy passes again, the
//     connections held in the black hole are closed (a real network would
//     have timed them out) and new ones are forwarded.
//
// Retarget closes every connection and forwards new ones to another
// address, like a failover behind a virtual IP, and passes again.
//
// A connection to the proxy is accepted before the target is dialled: when
// the target refuses, the client sees its connection closed at once. When
// either side closes, both are closed. Close (also run by tb.Cleanup) closes
// everything and returns once every goroutine of the proxy has ended.
package tcpproxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// dialTimeout bounds the dial of the target of one connection.
const dialTimeout = 10 * time.Second

type mode int

const (
	pass mode = iota
	cut
	blackhole
)

// Proxy forwards connections from its address to a target. Its methods may
// be called from any goroutine.
type Proxy struct {
	ln     net.Listener
	ctx    context.Context // ends at Close, stopping dials
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine of the proxy

	mu     sync.Mutex // protects following fields
	mode   mode
	target string
	conns  map[*conn]struct{}
	closed bool
}

// conn is one accepted connection and, once dialled, its peer.
type conn struct {
	client net.Conn
	server net.Conn // nil until dialled; guarded by Proxy.mu
	held   bool     // in a black hole: forward nothing; guarded by Proxy.mu
	closed bool     // guarded by Proxy.mu
}

// Start starts a proxy on 127.0.0.1:0 that forwards to target, in mode
// pass. tb.Cleanup closes it.
func Start(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p, err := New(target)
	if err != nil {
		tb.Fatalf("tcpproxy: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}

// New starts a proxy on 127.0.0.1:0 that forwards to target, in mode pass.
// The caller must Close it.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{ln: ln, ctx: ctx, cancel: cancel, target: target, conns: make(map[*conn]struct{})}
	p.mu.Lock()
	p.spawnLocked(p.accept)
	p.mu.Unlock()
	return p, nil
}

// Addr is the proxy's address, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Pass forwards new connections again. Connections held in a black hole are
// closed; others are left alone.
func (p *Proxy) Pass() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		if c.held {
			p.closeLocked(c)
		}
	}
	p.mode = pass
}

// Cut closes every open connection, on both sides, and closes new ones as
// soon as they are accepted, until Pass or Retarget.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeAllLocked()
	p.mode = cut
}

// Blackhole stops forwarding on every open connection and holds new ones
// without forwarding or answering, until Pass or Retarget closes them.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.held = true
	}
	p.mode = blackhole
}

// Retarget closes every open connection and forwards new ones to addr.
// The proxy passes again, whatever its mode was.
func (p *Proxy) Retarget(addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeAllLocked()
	p.target = addr
	p.mode = pass
}

// Conns is the number of open connections, forwarded or held.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops the proxy: it closes the listener and every connection and
// returns once all its goroutines have ended. Calling it again does nothing.
func (p *Proxy) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		p.ln.Close()
		p.cancel()
		p.closeAllLocked()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// spawnLocked runs f on a goroutine that Close waits for, unless the proxy
// is closed.
func (p *Proxy) spawnLocked(f func()) bool {
	if p.closed {
		return false
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		f()
	}()
	return true
}

// accept takes connections until the listener is closed.
func (p *Proxy) accept() {
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors or similar: wait, as net/http does.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		p.mu.Lock()
		c := &conn{client: nc}
		switch {
		case p.closed || p.mode == cut:
			nc.Close()
		case p.mode == blackhole:
			c.held = true
			p.conns[c] = struct{}{}
			// Read and drop what the client sends, to notice when it
			// hangs up.
			if !p.spawnLocked(func() { p.pump(c, nc, nil) }) {
				p.closeLocked(c)
			}
		default:
			p.conns[c] = struct{}{}
			target := p.target
			if !p.spawnLocked(func() { p.connect(c, target) }) {
				p.closeLocked(c)
			}
		}
		p.mu.Unlock()
	}
}

// connect dials target for c and forwards in both directions.
func (p *Proxy) connect(c *conn, target string) {
	d := net.Dialer{Timeout: dialTimeout}
	server, err := d.DialContext(p.ctx, "tcp", target)
	p.mu.Lock()
	switch {
	case err != nil:
		p.closeLocked(c)
	case c.closed:
		server.Close()
	default:
		c.server = server
		if p.spawnLocked(func() { p.pump(c, server, c.client) }) {
			p.mu.Unlock()
			p.pump(c, c.client, server)
			return
		}
		p.closeLocked(c)
	}
	p.mu.Unlock()
}

// pump copies from src to dst (drops, when dst is nil) until either fails,
// then closes c. Nothing read while c is held is written.
func (p *Proxy) pump(c *conn, src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && dst != nil && !p.held(c) {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	p.mu.Lock()
	p.closeLocked(c)
	p.mu.Unlock()
}

func (p *Proxy) held(c *conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return c.held
}

// closeLocked closes both sides of c and forgets it.
func (p *Proxy) closeLocked(c *conn) {
	if c.closed {
		return
	}
	c.closed = true
	c.client.Close()
	if c.server != nil {
		c.server.Close()
	}
	delete(p.conns, c)
}

func (p *Proxy) closeAllLocked() {
	for c := range p.conns {
		p.closeLocked(c)
	}
}
