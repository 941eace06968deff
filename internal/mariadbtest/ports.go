package mariadbtest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Ports are taken below the kernel's ephemeral range when there is room:
// a server that was killed keeps its port across the restart, and a port
// of the ephemeral range could meanwhile become the local end of some
// outgoing connection (or of a listener on port 0), which the restart could
// then not bind.
const (
	lowestPort    = 20000
	minPortsBelow = 2000 // fewer free numbers than this: use port 0
	portAttempts  = 200
)

// FreePorts returns n distinct ports that were free on 127.0.0.1, below the
// kernel's ephemeral range when there is room, for other servers of a test
// that must keep their port across a restart. Each is checked by listening
// on it; all are released before returning.
func FreePorts(n int) ([]int, error) { return freePorts(n) }

// freePorts returns n distinct ports that were free on 127.0.0.1. Each is
// checked by listening on it; all are released before returning.
func freePorts(n int) ([]int, error) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	add := func(addr string) bool {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		return true
	}
	if top := ephemeralLow(); top-lowestPort >= minPortsBelow {
		for try := 0; len(ports) < n && try < portAttempts; try++ {
			add("127.0.0.1:" + strconv.Itoa(lowestPort+rand.IntN(top-lowestPort)))
		}
	}
	for len(ports) < n {
		if !add("127.0.0.1:0") {
			return nil, fmt.Errorf("no free port on 127.0.0.1")
		}
	}
	return ports, nil
}

// ephemeralLow is the first port the kernel hands out for port 0 and
// outgoing connections.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return lo
}
