package mariadbtest

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// KillAll kills every running node of the cluster with SIGKILL at the same
// moment, each from a goroutine of its own, and returns once all are gone
// with how long the kills took from the first signal to the last exit.
func (c *Cluster) KillAll() (time.Duration, error) {
	start := time.Now()
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, s := range c.nodes {
		wg.Go(func() {
			if err := s.Kill(); err != nil && !errors.Is(err, ErrNotRunning) {
				errs[i] = err
			}
		})
	}
	wg.Wait()
	return time.Since(start), errors.Join(errs...)
}

// Positions recovers the last committed Galera position of every node,
// all of them stopped, as mariadbd --wsrep-recover finds it in InnoDB:
// the sequence number of each, -1 where none was recovered.
func (c *Cluster) Positions() []int64 {
	out := make([]int64, len(c.nodes))
	var wg sync.WaitGroup
	for i, s := range c.nodes {
		wg.Go(func() { out[i] = seqno(s.recoverPosition()) })
	}
	wg.Wait()
	return out
}

// seqno is the sequence number of a position "uuid:seqno", or -1.
func seqno(pos string) int64 {
	i := strings.LastIndexByte(pos, ':')
	if i < 0 {
		return -1
	}
	n, err := strconv.ParseInt(pos[i+1:], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// BootstrapMostAdvanced starts a cluster whose every node is stopped again,
// as an operator does after they all crashed: it recovers each node's
// position, marks the most advanced safe to bootstrap (grastate.dat), starts
// it as a new cluster, then starts the others one after another, each
// joining it (by state transfer), and returns once every node is Synced in
// a cluster of all. It returns the positions recovered and the index of the
// node bootstrapped.
func (c *Cluster) BootstrapMostAdvanced() (positions []int64, first int, err error) {
	positions = c.Positions()
	for i, p := range positions {
		if p > positions[first] {
			first = i
		}
	}
	if err := c.nodes[first].markSafeToBootstrap(); err != nil {
		return positions, first, err
	}
	if err := c.nodes[first].start("--wsrep-new-cluster"); err != nil {
		return positions, first, err
	}
	if err := c.waitSynced(first, syncTimeout); err != nil {
		return positions, first, err
	}
	for i := range c.nodes {
		if i == first {
			continue
		}
		if err := c.Restart(i); err != nil {
			return positions, first, err
		}
	}
	return positions, first, nil
}

// safeToBootstrap is the line of grastate.dat that lets a node start a new
// cluster; a node killed with the others has it at 0.
var safeToBootstrap = regexp.MustCompile(`(?m)^safe_to_bootstrap:\s*\d+`)

// markSafeToBootstrap sets safe_to_bootstrap to 1 in the node's
// grastate.dat, as the operator of a cluster that crashed whole does for
// its most advanced node.
func (s *Server) markSafeToBootstrap() error {
	path := s.path(dataName + "/grastate.dat")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("mariadbtest: %s: %w", s.name, err)
	}
	if !safeToBootstrap.Match(b) {
		b = append(b, []byte("safe_to_bootstrap: 1\n")...)
	} else {
		b = safeToBootstrap.ReplaceAll(b, []byte("safe_to_bootstrap: 1"))
	}
	return os.WriteFile(path, b, 0o644) // an existing file keeps its owner, mysql
}
