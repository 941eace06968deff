package tcpproxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/testkit"
)

// waitFor bounds every wait for something that should happen.
const waitFor = 5 * time.Second

// silence is how long a connection must stay silent to count as held.
const silence = 300 * time.Millisecond

// echoServer answers each line it reads with its name, ": " and the line.
type echoServer struct {
	ln   net.Listener
	name string
	wg   sync.WaitGroup

	mu       sync.Mutex // protects following fields
	conns    map[net.Conn]struct{}
	accepted int
	received int // bytes
}

func startEcho(tb testing.TB, name string) *echoServer {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	e := &echoServer{ln: ln, name: name, conns: make(map[net.Conn]struct{})}
	e.wg.Add(1)
	go e.serve()
	tb.Cleanup(e.close)
	return e
}

func (e *echoServer) serve() {
	defer e.wg.Done()
	for {
		c, err := e.ln.Accept()
		if err != nil {
			return
		}
		e.mu.Lock()
		e.conns[c] = struct{}{}
		e.accepted++
		e.mu.Unlock()
		e.wg.Add(1)
		go e.echo(c)
	}
}

func (e *echoServer) echo(c net.Conn) {
	defer e.wg.Done()
	defer func() {
		e.mu.Lock()
		delete(e.conns, c)
		e.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		e.mu.Lock()
		e.received += len(line)
		e.mu.Unlock()
		if err != nil {
			return
		}
		if _, err := io.WriteString(c, e.name+": "+line); err != nil {
			return
		}
	}
}

func (e *echoServer) close() {
	e.ln.Close()
	e.mu.Lock()
	for c := range e.conns {
		c.Close()
	}
	e.mu.Unlock()
	e.wg.Wait()
}

func (e *echoServer) Addr() string { return e.ln.Addr().String() }

// stats returns the open connections, connections accepted and bytes read.
func (e *echoServer) stats() (open, accepted, received int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.conns), e.accepted, e.received
}

func dial(tb testing.TB, addr string) net.Conn {
	tb.Helper()
	c, err := net.DialTimeout("tcp", addr, waitFor)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends msg as a line and returns the answer without its newline.
func roundTrip(c net.Conn, msg string) (string, error) {
	if err := c.SetDeadline(time.Now().Add(waitFor)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(line, "\n"), err
}

func wantAnswer(tb testing.TB, c net.Conn, msg, want string) {
	tb.Helper()
	got, err := roundTrip(c, msg)
	if err != nil || got != want {
		tb.Fatalf("round trip %q: %q, %v; want %q", msg, got, err, want)
	}
}

// wantClosed checks that c was closed by the proxy: a read ends with EOF or
// a reset, not a timeout.
func wantClosed(tb testing.TB, c net.Conn) {
	tb.Helper()
	c.SetReadDeadline(time.Now().Add(waitFor))
	n, err := c.Read(make([]byte, 64))
	if n != 0 || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		tb.Fatalf("read from a closed connection: %d bytes, %v; want EOF or reset", n, err)
	}
}

// wantSilent checks that c stays open and nothing answers msg.
func wantSilent(tb testing.TB, c net.Conn, msg string) {
	tb.Helper()
	c.SetDeadline(time.Now().Add(silence))
	if _, err := io.WriteString(c, msg+"\n"); err != nil {
		tb.Fatalf("write into the black hole: %v", err)
	}
	n, err := c.Read(make([]byte, 64))
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		tb.Fatalf("read in the black hole: %d bytes, %v; want a timeout", n, err)
	}
}

func TestPass(t *testing.T) {
	echo := startEcho(t, "a")
	p := Start(t, echo.Addr())
	c := dial(t, p.Addr())
	wantAnswer(t, c, "hello", "a: hello")
	wantAnswer(t, c, "again", "a: again")
	if n := p.Conns(); n != 1 {
		t.Errorf("Conns() = %d, want 1", n)
	}
	c.Close()
	testkit.WaitFor(t, waitFor, "the proxy closes both sides when the client hangs up", func() bool {
		open, _, _ := echo.stats()
		return p.Conns() == 0 && open == 0
	})
}

func TestCut(t *testing.T) {
	echo := startEcho(t, "a")
	p := Start(t, echo.Addr())
	old := dial(t, p.Addr())
	wantAnswer(t, old, "hello", "a: hello")

	p.Cut()
	wantClosed(t, old)
	testkit.WaitFor(t, waitFor, "the server side is closed too", func() bool {
		open, _, _ := echo.stats()
		return open == 0
	})
	_, accepted, _ := echo.stats()
	refused := dial(t, p.Addr())
	wantClosed(t, refused)
	if _, a, _ := echo.stats(); a != accepted {
		t.Errorf("the target was dialled while cut")
	}
	if n := p.Conns(); n != 0 {
		t.Errorf("Conns() = %d while cut, want 0", n)
	}

	p.Pass()
	wantAnswer(t, dial(t, p.Addr()), "back", "a: back")
}

func TestBlackhole(t *testing.T) {
	echo := startEcho(t, "a")
	p := Start(t, echo.Addr())
	old := dial(t, p.Addr())
	wantAnswer(t, old, "hello", "a: hello")

	p.Blackhole()
	open, accepted, received := echo.stats()
	wantSilent(t, old, "lost")
	held := dial(t, p.Addr())
	wantSilent(t, held, "lost too")
	if o, a, r := echo.stats(); o != open || a != accepted || r != received {
		t.Errorf("target during the black hole: %d open, %d accepted, %d bytes; want %d, %d, %d",
			o, a, r, open, accepted, received)
	}
	if n := p.Conns(); n != 2 {
		t.Errorf("Conns() = %d in the black hole, want 2", n)
	}

	p.Pass()
	wantClosed(t, old)
	wantClosed(t, held)
	testkit.WaitFor(t, waitFor, "the server side of the held connection is closed", func() bool {
		open, _, _ := echo.stats()
		return open == 0
	})
	wantAnswer(t, dial(t, p.Addr()), "back", "a: back")
	if n := p.Conns(); n != 1 {
		t.Errorf("Conns() = %d, want 1", n)
	}
}

func TestPassLeavesForwardedConnections(t *testing.T) {
	p := Start(t, startEcho(t, "a").Addr())
	c := dial(t, p.Addr())
	wantAnswer(t, c, "hello", "a: hello")
	p.Pass()
	p.Cut()
	p.Pass()
	c2 := dial(t, p.Addr())
	p.Pass()
	wantAnswer(t, c2, "still there", "a: still there")
}

func TestRetarget(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	p := Start(t, a.Addr())
	old := dial(t, p.Addr())
	wantAnswer(t, old, "hello", "a: hello")

	p.Retarget(b.Addr())
	wantClosed(t, old)
	wantAnswer(t, dial(t, p.Addr()), "hello", "b: hello")

	for _, broken := range []func(){p.Cut, p.Blackhole} {
		broken()
		p.Retarget(a.Addr())
		wantAnswer(t, dial(t, p.Addr()), "after retarget", "a: after retarget")
	}
}

func TestTargetDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	p := Start(t, down)
	wantClosed(t, dial(t, p.Addr()))
	testkit.WaitFor(t, waitFor, "the connection is forgotten", func() bool { return p.Conns() == 0 })
}

// TestCloseEndsEverything closes a proxy with connections in every state and
// checks that every goroutine of the proxy and of its echo server ends.
func TestCloseEndsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	var addr string
	t.Run("proxy", func(t *testing.T) {
		echo := startEcho(t, "a")
		p := Start(t, echo.Addr())
		addr = p.Addr()
		forwarded := dial(t, p.Addr())
		wantAnswer(t, forwarded, "hello", "a: hello")
		p.Blackhole()
		heldOld := dial(t, p.Addr())
		wantSilent(t, heldOld, "lost")
		heldNew := dial(t, p.Addr())
		testkit.WaitFor(t, waitFor, "the new connection is held", func() bool { return p.Conns() == 3 })

		p.Close()
		for _, c := range []net.Conn{forwarded, heldOld, heldNew} {
			wantClosed(t, c)
		}
		if n := p.Conns(); n != 0 {
			t.Errorf("Conns() = %d after Close", n)
		}
		p.Close() // again: nothing happens
	})
	if c, err := net.DialTimeout("tcp", addr, waitFor); err == nil {
		c.Close()
		t.Errorf("a closed proxy accepts connections")
	}
	testkit.WaitFor(t, waitFor, fmt.Sprintf("back to %d goroutines", before), func() bool {
		return runtime.NumGoroutine() <= before
	})
}

// TestModesUnderLoad switches modes while clients talk through the proxy;
// run under -race.
func TestModesUnderLoad(t *testing.T) {
	a, b := startEcho(t, "a"), startEcho(t, "b")
	p := Start(t, a.Addr())
	stop := make(chan struct{})
	var ops atomic.Int64 // round trips tried
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				c, err := net.DialTimeout("tcp", p.Addr(), waitFor)
				if err != nil {
					t.Errorf("dial: %v", err)
					return
				}
				c.SetDeadline(time.Now().Add(20 * time.Millisecond))
				// Any outcome is fine here: an answer, a close or a timeout.
				_, _ = io.WriteString(c, fmt.Sprintf("client %d message %d\n", i, n))
				_, _ = bufio.NewReader(c).ReadString('\n')
				c.Close()
				ops.Add(1)
			}
		}()
	}
	for i := range 200 {
		// Let the clients try something in every mode.
		for seen := ops.Load(); ops.Load() < seen+2; {
			runtime.Gosched()
		}
		switch i % 5 {
		case 0:
			p.Blackhole()
		case 1:
			p.Pass()
		case 2:
			p.Cut()
		case 3:
			p.Retarget(b.Addr())
		case 4:
			p.Retarget(a.Addr())
		}
	}
	close(stop)
	wg.Wait()
	p.Pass()
	wantAnswer(t, dial(t, p.Addr()), "calm", "a: calm")
}
