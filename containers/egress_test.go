package containers

import (
	"context"
	"net"
	"os"
	"testing"
	"time"
)

// TestNoEgress: where the engine keeps containers in (LEAF_TEST_NO_EGRESS=1,
// which .ci/run sets once it has added its rules), a container reaches
// another on its network, and nothing beyond this machine, on the default
// bridge or on a network of its own.
func TestNoEgress(t *testing.T) {
	require(t)
	if os.Getenv("LEAF_TEST_NO_EGRESS") != "1" {
		t.Skip("LEAF_TEST_NO_EGRESS is not 1: this engine's containers may reach beyond the machine")
	}
	if !chosen().local {
		t.Skip("the check runs in the MariaDB image of make images, which has bash")
	}
	network := name("net")
	docker(t, "network", "create", "--label", label, network)
	t.Cleanup(func() { _, _ = run(context.Background(), nil, "docker", "network", "rm", network) })
	db := startMariaDBOn(t, network)

	// dial runs bash's /dev/tcp in a container on net: whether host:port
	// took the connection within 5 s.
	dial := func(network, host, port string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := run(ctx, nil, "docker", "run", "--rm", "--label", label, "--network", network,
			"--entrypoint", "timeout", mariadbImage, "5", "bash", "-c", "exec 3<>/dev/tcp/"+host+"/"+port)
		return err == nil
	}
	if !dial(network, db, "3306") {
		t.Errorf("a container does not reach %s on its own network", db)
	}
	// An address this machine reaches (Debian's mirror, where apt goes),
	// dialled by address: a refused lookup would pass for a refused
	// connection.
	outside := reachableOutside(t)
	for _, nw := range []string{"bridge", network} {
		if dial(nw, outside, "80") {
			t.Errorf("a container on %s reaches %s:80, beyond this machine", nw, outside)
		}
	}
}

// reachableOutside is an IPv4 address of deb.debian.org that this machine
// reaches on port 80.
func reachableOutside(t *testing.T) string {
	t.Helper()
	addrs, err := net.LookupHost("deb.debian.org")
	if err != nil {
		t.Fatalf("deb.debian.org: %v", err)
	}
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip == nil || ip.To4() == nil {
			continue
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(a, "80"), 5*time.Second)
		if err == nil {
			c.Close()
			return a
		}
	}
	t.Fatalf("this machine reaches no address of deb.debian.org (%v) on port 80: nothing to hold the containers to", addrs)
	return ""
}

// startMariaDBOn runs the MariaDB image on network and returns its name
// once it is healthy.
func startMariaDBOn(t *testing.T, network string) string {
	t.Helper()
	c := name("db")
	docker(t, "run", "-d", "--name", c, "--label", label, "--network", network,
		"-e", "MYSQL_ALLOW_EMPTY_PASSWORD=yes", mariadbImage)
	t.Cleanup(func() { _, _ = run(context.Background(), nil, "docker", "rm", "-f", "-v", c) })
	waitHealthy(t, c, 2*time.Minute)
	return c
}
