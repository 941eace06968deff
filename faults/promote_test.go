package faults

import (
	"context"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/mysqltest"
	"github.com/leafid/leaf/internal/tcpproxy"
)

// TestReplicaPromoted: the stale failover (TestStaleFailover) on Oracle's
// MySQL with real replication. Two instances write to a source through a
// proxy (the address a failover tool moves); the source is killed and its
// replica promoted (applied what it received, replication reset,
// read_only off), and the proxy sends the instances to it.
//
//   - async: the replica stopped replicating under load and lacks the
//     lost window's commits; every instance must fence, no id twice.
//   - semisync: the source waited at each commit for the replica to hold
//     it (AFTER_SYNC) and is killed under load: the promoted replica lacks
//     no commit the instances were answered, so no row is found gone back
//     and no id repeats.
func TestReplicaPromoted(t *testing.T) {
	requireSuite(t)
	mysqltest.Require(t)
	for _, semisync := range []bool{false, true} {
		name := map[bool]string{false: "async", true: "semisync"}[semisync]
		t.Run(name, func(t *testing.T) {
			p := mysqltest.StartPair(t, semisync)
			if err := p.Source.Exec(context.Background(), "CREATE DATABASE leaf"); err != nil {
				t.Fatal(err)
			}
			var proxy *tcpproxy.Proxy
			sh := failoverShape{
				name:       "replica_promoted_" + name,
				primary:    p.Source.DSN("leaf"),
				standbyDSN: p.Replica.DSN("leaf"),
				proxied:    func(x *tcpproxy.Proxy) { proxy = x },
				failover: func(t *testing.T) map[string]int64 {
					var at map[string]int64
					if !semisync {
						// The proxy first: the rows the source holds once
						// nothing reaches it any more.
						proxy.Cut()
						at = maxIDs(t, openDB(t, p.Source.DSN("leaf")))
					}
					if err := p.Source.Kill(); err != nil {
						t.Fatal(err)
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if err := p.Promote(ctx); err != nil {
						t.Fatalf("%v\n%s", err, p.Replica.LogTail())
					}
					if semisync {
						at = maxIDs(t, openDB(t, p.Replica.DSN("leaf")))
					}
					proxy.Retarget(p.Replica.Addr())
					return at
				},
			}
			if !semisync {
				sh.lag = func(t *testing.T) {
					if err := p.StopReplication(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
			}
			staleFailover(t, sh)
		})
	}
}
