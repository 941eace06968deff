// Package netns gives a test a small network of its own: Linux network
// namespaces, each with one address on a bridge, whose links the test cuts
// and heals. The fault suite puts Galera nodes, independent stores and leaf
// instances in them, so that a node can be partitioned from some peers and
// not from others, which loopback cannot do.
//
// Layout of a Net: a bridge in a namespace of its own, the hub; the test's
// own namespace is linked to it by a veth pair whose host end holds the
// address .1 of a private /24 (10.213.X.0/24, X chosen free on this host);
// each namespace gets a veth pair, one end on the bridge and the other,
// eth0 inside the namespace, with the next address. The test process
// reaches every namespace over the bridge; traffic never leaves the host.
// No packet between two namespaces crosses the host's own forwarding, so
// the host's firewall (a FORWARD policy of DROP, as a Docker engine sets)
// does not see them.
//
// A cut is a pair of nftables drop rules in each namespace on either side
// (input from the peer, output to it): packets vanish as on a partitioned
// network, without a reset or an error to the sender. The host's own
// firewall is never touched: a cut between a namespace and the host is
// written in the namespace alone.
//
// Every name carries the test process's id: New removes what a run that
// died before its cleanup left behind (a namespace whose process is gone,
// and with a hub its bridge and links), and tb.Cleanup removes everything
// a Net made, also after a failure. It needs root, `ip` (iproute2) and
// `nft` (Debian's nftables).
package netns

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Prefix begins the name of every namespace, and the alias of every
// host link, that this package makes: leaf-PID-RUN-NAME.
const Prefix = "leaf-"

// subnetBase is the /16 the test networks are taken from: 10.213.X.0/24.
const subnetBase = "10.213."

// cmdTimeout bounds one ip or nft command.
const cmdTimeout = 20 * time.Second

// Available says why namespaces cannot be made here, or nil: not root, ip
// or nft missing, or no right to make a namespace.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("netns: network namespaces need root")
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := lookPath(tool); err != nil {
			return fmt.Errorf("netns: %s not found (Debian's iproute2 and nftables)", tool)
		}
	}
	// Root in a container may still lack CAP_NET_ADMIN: make and remove
	// a namespace to know.
	probe := Prefix + strconv.Itoa(os.Getpid()) + "-probe-" + randomHex(3)
	if err := runTool(nil, "ip", "netns", "add", probe); err != nil {
		return fmt.Errorf("netns: cannot make a network namespace here: %w", err)
	}
	if err := runTool(nil, "ip", "netns", "delete", probe); err != nil {
		return fmt.Errorf("netns: cannot remove a network namespace here: %w", err)
	}
	return nil
}

// Require skips tb with the reason when namespaces cannot be made here.
func Require(tb testing.TB) {
	tb.Helper()
	if err := Available(); err != nil {
		tb.Skipf("%v: these scenarios run in network namespaces of their own", err)
	}
}

// lookPath finds a system tool, also where PATH lacks the sbin directories.
func lookPath(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := dir + "/" + tool
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// Net is one test's network: a bridge and the namespaces on it. Its
// methods may be called from several goroutines.
type Net struct {
	id     string // PID-RUN, in every name
	short  string // RUN alone, for interface names (15 bytes at most)
	hub    string // the namespace of the bridge
	bridge string // in hub
	link   string // the host's end of its pair to the bridge
	subnet string // 10.213.X.
	ip     string // link's, the host's address on the network

	mu  sync.Mutex // protects following fields
	all []*NS
	// cuts are the peers each namespace drops, by namespace name.
	cuts map[string]map[string]bool
}

// NS is a namespace of a Net, with its one address.
type NS struct {
	Name string // as ip netns knows it
	IP   string
	veth string // its pair's end on the bridge, in the hub
}

// New makes a network: a hub namespace with a bridge, linked to the
// host's namespace by a pair whose host end has the first address of a
// free /24. tb.Cleanup removes it and every namespace added to it.
func New(tb testing.TB) *Net {
	tb.Helper()
	if err := Available(); err != nil {
		tb.Fatal(err)
	}
	sweep(tb)
	run := randomHex(3)
	n := &Net{
		id:    strconv.Itoa(os.Getpid()) + "-" + run,
		short: run,
		cuts:  map[string]map[string]bool{},
	}
	n.hub = Prefix + n.id + "-hub"
	n.bridge = "lfb" + run
	n.link = "lf" + run + "h"
	subnet, err := freeSubnet()
	if err != nil {
		tb.Fatal(err)
	}
	n.subnet = subnet
	n.ip = subnet + "1"
	tb.Cleanup(func() {
		if err := n.remove(); err != nil {
			tb.Errorf("netns: %v", err)
		}
	})
	for _, args := range [][]string{
		{"ip", "netns", "add", n.hub},
		{"ip", "-n", n.hub, "link", "add", n.bridge, "type", "bridge"},
		{"ip", "-n", n.hub, "link", "set", "dev", n.bridge, "up"},
		{"ip", "link", "add", n.link, "type", "veth", "peer", "name", n.link + "p", "netns", n.hub},
		{"ip", "link", "set", "dev", n.link, "alias", Prefix + n.id},
		{"ip", "-n", n.hub, "link", "set", "dev", n.link + "p", "master", n.bridge},
		{"ip", "-n", n.hub, "link", "set", "dev", n.link + "p", "up"},
		{"ip", "addr", "add", n.ip + "/24", "dev", n.link},
		{"ip", "link", "set", "dev", n.link, "up"},
	} {
		if err := n.run(nil, args...); err != nil {
			tb.Fatal(err)
		}
	}
	return n
}

// HostIP is the test process's address on the network.
func (n *Net) HostIP() string { return n.ip }

// Add makes a namespace named after name with the next address, linked to
// the bridge; its loopback is up.
func (n *Net) Add(tb testing.TB, name string) *NS {
	tb.Helper()
	n.mu.Lock()
	k := len(n.all)
	ns := &NS{
		Name: Prefix + n.id + "-" + name,
		IP:   n.subnet + strconv.Itoa(10+k),
		veth: fmt.Sprintf("lf%s%02d", n.short, k),
	}
	n.all = append(n.all, ns)
	n.mu.Unlock()
	if k >= 240 {
		tb.Fatalf("netns: %d namespaces on one network", k+1)
	}
	steps := [][]string{
		{"ip", "netns", "add", ns.Name},
		{"ip", "-n", n.hub, "link", "add", ns.veth, "type", "veth", "peer", "name", "eth0", "netns", ns.Name},
		{"ip", "-n", n.hub, "link", "set", "dev", ns.veth, "master", n.bridge},
		{"ip", "-n", n.hub, "link", "set", "dev", ns.veth, "up"},
		{"ip", "-n", ns.Name, "addr", "add", ns.IP + "/24", "dev", "eth0"},
		{"ip", "-n", ns.Name, "link", "set", "dev", "eth0", "up"},
		{"ip", "-n", ns.Name, "link", "set", "dev", "lo", "up"},
	}
	for _, args := range steps {
		if err := n.run(nil, args...); err != nil {
			tb.Fatalf("netns: namespace %s: %v", name, err)
		}
	}
	return ns
}

// Exec is the command line that runs argv inside the namespace: ip netns
// exec, which execs argv in place, so that the process's id is argv's own
// and signals reach it.
func (ns *NS) Exec(argv ...string) []string {
	ip, err := lookPath("ip")
	if err != nil {
		ip = "ip"
	}
	return append([]string{ip, "netns", "exec", ns.Name}, argv...)
}

// Cut drops every packet between a and b, both ways; b nil means the host
// (its address on the network). It returns once the rules are in place.
func (n *Net) Cut(a, b *NS) error { return n.setCut(a, b, true) }

// Heal removes the cut between a and b (b nil: the host).
func (n *Net) Heal(a, b *NS) error { return n.setCut(a, b, false) }

// HealAll removes every cut.
func (n *Net) HealAll() error {
	n.mu.Lock()
	names := make([]string, 0, len(n.cuts))
	for name, peers := range n.cuts {
		if len(peers) > 0 {
			names = append(names, name)
		}
		n.cuts[name] = map[string]bool{}
	}
	n.mu.Unlock()
	var errs []error
	for _, name := range names {
		errs = append(errs, n.apply(name, nil))
	}
	return errors.Join(errs...)
}

func (n *Net) setCut(a, b *NS, on bool) error {
	if a == nil {
		return errors.New("netns: a cut needs a namespace on one side")
	}
	peerA, peerB := n.ip, a.IP
	if b != nil {
		peerA = b.IP
	}
	errs := []error{n.mark(a.Name, peerA, on)}
	if b != nil {
		errs = append(errs, n.mark(b.Name, peerB, on))
	}
	return errors.Join(errs...)
}

// mark adds or removes peer from the addresses namespace name drops, and
// writes its rules anew.
func (n *Net) mark(name, peer string, on bool) error {
	n.mu.Lock()
	set := n.cuts[name]
	if set == nil {
		set = map[string]bool{}
		n.cuts[name] = set
	}
	if on {
		set[peer] = true
	} else {
		delete(set, peer)
	}
	var peers []string
	for p := range set {
		peers = append(peers, p)
	}
	n.mu.Unlock()
	slices.Sort(peers)
	return n.apply(name, peers)
}

// table is the nftables table of the cuts in each namespace.
const table = "leaf_cut"

// apply replaces namespace name's table by one that drops peers, in one
// nft transaction; no peers removes the table.
func (n *Net) apply(name string, peers []string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "table inet %s\ndelete table inet %s\n", table, table)
	if len(peers) > 0 {
		set := strings.Join(peers, ", ")
		fmt.Fprintf(&b, "table inet %s {\n", table)
		fmt.Fprintf(&b, "  chain input { type filter hook input priority filter; policy accept; ip saddr { %s } drop; }\n", set)
		fmt.Fprintf(&b, "  chain output { type filter hook output priority filter; policy accept; ip daddr { %s } drop; }\n", set)
		b.WriteString("}\n")
	}
	return n.run([]byte(b.String()), "ip", "netns", "exec", name, "nft", "-f", "-")
}

// remove deletes every namespace and the hub, and with them every link
// and the bridge. Processes still inside a namespace keep it alive until
// they exit; their owners kill them first.
func (n *Net) remove() error {
	n.mu.Lock()
	all := slices.Clone(n.all)
	n.mu.Unlock()
	var errs []error
	for _, name := range append(names(all), n.hub) {
		if err := n.run(nil, "ip", "netns", "delete", name); err != nil && exists("/run/netns/"+name) {
			errs = append(errs, err)
		}
	}
	// The hub took the host's end with it (a pair goes with either end);
	// this is for a pair made before its other end was moved.
	if linkExists(n.link) {
		if err := n.run(nil, "ip", "link", "delete", n.link); err != nil && linkExists(n.link) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func names(all []*NS) []string {
	out := make([]string, len(all))
	for i, ns := range all {
		out[i] = ns.Name
	}
	return out
}

// run runs a tool with stdin, and returns its output in the error.
func (n *Net) run(stdin []byte, argv ...string) error { return runTool(stdin, argv...) }

func runTool(stdin []byte, argv ...string) error {
	path, err := lookPath(argv[0])
	if err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	timer := time.AfterFunc(cmdTimeout, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err = cmd.Wait()
	timer.Stop()
	if err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func linkExists(name string) bool { return exists("/sys/class/net/" + name) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
