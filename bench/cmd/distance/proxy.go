package main

import (
	"io"
	"net"
	"sync"
	"time"
)

// delayProxy forwards TCP connections on 127.0.0.1 to a database and holds
// each piece of the database's answers for delay before passing it on, in
// order: a database one round trip of delay away. What the client sends
// goes through at once.
type delayProxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	wg     sync.WaitGroup
}

func newDelayProxy(target string, delay time.Duration) (*delayProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &delayProxy{ln: ln, target: target, delay: delay}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

func (p *delayProxy) addr() string { return p.ln.Addr().String() }

// close stops accepting; open connections end when leaf closes them.
func (p *delayProxy) close() {
	p.ln.Close()
	p.wg.Wait()
}

func (p *delayProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

type chunk struct {
	due time.Time
	b   []byte
}

func (p *delayProxy) handle(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	go func() {
		_, _ = io.Copy(server, client)
		server.Close()
	}()
	// The answers: read as they come, each written delay after it came.
	ch := make(chan chunk, 4096)
	go func() {
		defer close(ch)
		for {
			buf := make([]byte, 32<<10)
			n, err := server.Read(buf)
			if n > 0 {
				ch <- chunk{due: time.Now().Add(p.delay), b: buf[:n]}
			}
			if err != nil {
				return
			}
		}
	}()
	defer client.Close()
	for c := range ch {
		time.Sleep(time.Until(c.due))
		if _, err := client.Write(c.b); err != nil {
			server.Close()
			for range ch { // let the reader end
			}
			return
		}
	}
}
