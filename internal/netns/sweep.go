package netns

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// sweep removes the namespaces (hubs among them, with their bridges) and
// host links of earlier runs whose test process is gone (killed before its
// cleanup ran). Those of live processes, other runs going on now, are left
// alone.
func sweep(tb testing.TB) {
	tb.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err == nil {
		for _, e := range entries {
			if deadOwner(e.Name()) {
				if err := runTool(nil, "ip", "netns", "delete", e.Name()); err != nil {
					tb.Logf("netns: a namespace left by an earlier run: %v", err)
				}
			}
		}
	}
	links, err := os.ReadDir("/sys/class/net")
	if err != nil {
		return
	}
	for _, l := range links {
		if !strings.HasPrefix(l.Name(), "lf") {
			continue
		}
		alias, err := os.ReadFile("/sys/class/net/" + l.Name() + "/ifalias")
		if err == nil && deadOwner(strings.TrimSpace(string(alias))) {
			if err := runTool(nil, "ip", "link", "delete", l.Name()); err != nil {
				tb.Logf("netns: a link left by an earlier run: %v", err)
			}
		}
	}
}

// deadOwner reports whether name is one of this package's (leaf-PID-…)
// and process PID no longer exists.
func deadOwner(name string) bool {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return false
	}
	pidText, _, ok := strings.Cut(rest, "-")
	if !ok {
		return false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// freeSubnet picks a /24 of 10.213.0.0/16 that no address or route of
// this host's namespace uses, and returns its first three bytes with a
// dot: "10.213.57.".
func freeSubnet() (string, error) {
	used, err := usedThirdBytes()
	if err != nil {
		return "", fmt.Errorf("netns: the addresses in use: %w", err)
	}
	start := rand.IntN(254) + 1
	for i := range 254 {
		x := (start+i-1)%254 + 1
		if !used[x] {
			return subnetBase + strconv.Itoa(x) + ".", nil
		}
	}
	return "", errors.New("netns: every /24 of 10.213.0.0/16 is in use")
}

// usedThirdBytes are the X of the 10.213.X.0/24 that an address or a
// route of the host touches.
func usedThirdBytes() (map[int]bool, error) {
	used := map[int]bool{}
	note := func(ip net.IP, mask net.IPMask) {
		ip4 := ip.To4()
		if ip4 == nil {
			return
		}
		ones, _ := mask.Size()
		if ones < 16 && (&net.IPNet{IP: ip4.Mask(mask), Mask: mask}).Contains(net.IPv4(10, 213, 0, 0)) {
			for x := range 256 {
				used[x] = true // a route wider than the /16 covers it all
			}
			return
		}
		if ip4[0] == 10 && ip4[1] == 213 {
			used[int(ip4[2])] = true
		}
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			note(n.IP, n.Mask)
		}
	}
	f, err := os.Open("/proc/net/route")
	if err != nil {
		return used, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 || fs[0] == "Iface" {
			continue
		}
		dst, err1 := hexIP(fs[1])
		mask, err2 := hexIP(fs[7])
		if err1 != nil || err2 != nil || net.IP(mask).Equal(net.IPv4zero.To4()) {
			continue // the default route is not a use
		}
		note(dst, net.IPMask(mask))
	}
	return used, sc.Err()
}

// hexIP reads an address of /proc/net/route: 8 hex digits, little-endian.
func hexIP(s string) (net.IP, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return nil, fmt.Errorf("address %q", s)
	}
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, binary.LittleEndian.Uint32(b))
	return ip, nil
}
