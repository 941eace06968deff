// Package faults is leaf's fault suite: scenarios that run real `leaf serve`
// processes against real MariaDB servers, break something on purpose and
// check that no id is ever issued twice and that the service fails fast and
// recovers within stated bounds.
//
// The scenarios are tests of this package, and they run only when
// LEAF_FAULTS is set:
//
//	LEAF_FAULTS=short go test -count=1 -v ./faults/   # make faults-short, what CI runs
//	LEAF_FAULTS=full  go test -count=1 -v ./faults/   # make faults
//
// Without it every test skips, so `go test ./...` stays fast. TestMain
// builds the leaf binary once, without the race detector, so that timings
// are those of a normal build.
//
//   - TestChurn: three instances on one database, one of them killed with
//     SIGKILL and restarted every 2 s, under load.
//   - TestDenseChurn: the owner of an ordered tag and of a capped tag
//     killed with SIGKILL and restarted every 3 s, under load: the numbers
//     skipped stay within two steps a kill.
//   - TestDatabaseCut, TestDatabaseBlackhole: the database behind a proxy
//     that closes every connection, or holds them and forwards nothing.
//   - TestStaleFailover: a failover to a copy of the database that missed
//     the last writes, as an asynchronous replica would.
//   - TestGalera: a 3-node MariaDB Galera cluster, one instance per node,
//     a node killed with SIGKILL mid-run; also three migrations racing on
//     three nodes. Runs only with LEAF_TEST_GALERA=1; LEAF_GALERA_RUNS
//     repeats it.
//   - TestCrashGalera: a 3-node MariaDB Galera cluster crashed whole
//     under load: every node killed with SIGKILL at once just after a
//     range was taken, the cluster started again from its most advanced
//     node, three instances kept running through it; with
//     innodb_flush_log_at_trx_commit=1 and with =0 on every node, where
//     the crash loses the last commits and leaf's check of the database's
//     start must move every row past them. LEAF_GALERA_CRASHES crashes of
//     each (default 3; 1 at the short size). Runs only with
//     LEAF_TEST_GALERA=1.
//   - TestAlerts: the alert rules of deploy/prometheus, unchanged, in a
//     real Prometheus server (Debian's prometheus package) that scrapes
//     two instances every second: no alert while all is well,
//     LeafStoreDown when the database is killed and gone once it is back,
//     LeafSegmentRegression after a stale failover. It takes the rule's
//     for (1 minute) and about 40 s more.
//   - TestStores: one number space on three independent MariaDB servers
//     (leaf store init), three instances each preferring another: a server
//     killed with SIGKILL, one restored from a dump ten seconds old, a
//     fresh instance started while a store is cut, a fourth store added
//     and one retired while serving, every instance restarted; no id twice,
//     no segment 503, one instance's ids of a tag in time order.
//     TestStoresGalera (full size only) is the same with one store a 3-node
//     Galera cluster whose node is killed.
//   - TestSequences: per-key sequences served by three instances on one
//     database, each through a proxy of its own, 100,000 keys (short:
//     10,000): the owner of a busy section killed with SIGKILL and started
//     again, cut off the database alone, every instance cut off, every few
//     seconds. Every number is checked as it arrives: none twice for a key,
//     and none not above one given for the key by a request that ended
//     before the request began.
//   - TestSequencesGalera: the same checks, and an ordered tag's, with
//     three instances on a 3-node MariaDB Galera cluster, one per node,
//     the node of the ordered tag's owner killed with SIGKILL and
//     rejoined under load. Runs only with LEAF_TEST_GALERA=1.
//   - TestMatrix: every kind of id at once (plain, ordered, formatted
//     that starts again daily, capped, formatted ordered, opaque, per-key
//     sequences, snowflake), each from client goroutines that retry the
//     next instance as a load balancer would, on each shape of
//     deployment: three instances on one MariaDB server, on three
//     independent servers (leaf store init), on a 3-node Galera cluster
//     (LEAF_TEST_GALERA=1), on one server of Oracle's MySQL 9.7, and on a
//     3-member MySQL Group Replication group (internal/mysqltest, from the
//     root make mysql-root builds), whose faults are its own: the primary
//     killed and started again outside the group, writable, before it
//     joins again; the primary paused past its expulsion; every member
//     killed, started outside the group and the group bootstrapped anew
//     (group_test.go: nothing may be written to a member outside its
//     group, every member must join again). On the others, in turn: the owner killed with
//     SIGKILL and started again, stopped with SIGTERM and started again,
//     its store killed and started again (on Galera its node lost and
//     rejoined), paused with SIGSTOP past two leases and continued, and
//     paused as its store is taken away, for the pause or the outage,
//     whichever is longer. Each kind is held to its own promise: none twice, its
//     order, the numbers it skipped and the calls that failed, per fault.
//     matrixToday lists the kinds each shape runs; LEAF_MATRIX=all runs
//     them all.
//   - TestNetFaults: the same load and checks on deployments whose
//     databases and instances each sit in a network namespace of their own
//     (internal/netns), with links cut by nftables drop rules: a Galera
//     node partitioned from the two others, every instance cut from the
//     node it prefers, a node paused with SIGSTOP (LEAF_TEST_GALERA=1);
//     one region's store cut from that region's instance only. Each fault
//     lasts 30 s (short: 15 s, or 5 s for the cuts only
//     the instances notice); each instance writes a probe row through
//     its admin API every 100 ms, which bounds how long the instances of
//     a lost node take to write elsewhere. Needs root, ip and nft; skips
//     without them.
//
// Each scenario collects every id the instances return, prints one line
// starting with RESULT to stdout (and a BOUND line per bound checked), and
// fails on any duplicate id or any missed bound. Every history of calls is
// also checked by Porcupine, a linearizability checker: the ids of every
// scenario against a set that fails on any id seen twice; the ordered
// kinds (ordered, capped and formatted ordered tags, per-key sequences and
// their current reads) against a counter per tag or key that only grows.
// A history the checker refuses is cut down to a part that fails on its
// own and drawn by Porcupine into an HTML file under LEAF_HISTORIES
// (default: leaf-histories in the system's temporary directory), whose
// path the test logs. RELIABILITY.md at the root of the repository holds
// the figures measured.
package faults
