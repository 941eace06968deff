package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeTB records how require stopped a test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestRequire(t *testing.T) {
	missing := errors.New("mariadbtest: no mariadbd")
	tests := []struct {
		name          string
		err           error
		ci            bool
		skip, failure bool
	}{
		{name: "available", err: nil, ci: false},
		{name: "available under CI", err: nil, ci: true},
		{name: "missing", err: missing, ci: false, skip: true},
		{name: "missing under CI", err: missing, ci: true, failure: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeTB{}
			done := make(chan struct{})
			go func() {
				defer close(done)
				require(f, tt.err, tt.ci)
			}()
			<-done
			if (f.skipped != "") != tt.skip || (f.failed != "") != tt.failure {
				t.Fatalf("skipped %q, failed %q; want skip %v, failure %v", f.skipped, f.failed, tt.skip, tt.failure)
			}
			if tt.err != nil && !strings.Contains(f.skipped+f.failed, tt.err.Error()) {
				t.Errorf("message does not give the reason %q", tt.err)
			}
		})
	}
}

func TestFreePorts(t *testing.T) {
	ports, err := freePorts(12)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(ports)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(ports) {
		t.Fatalf("freePorts(12) = %v, not distinct", ports)
	}
	if lo := ephemeralLow(); lo-lowestPort >= minPortsBelow {
		for _, p := range ports {
			if p < lowestPort || p >= lo {
				t.Errorf("port %d outside [%d, %d)", p, lowestPort, lo)
			}
		}
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
		want     string
	}{
		{name: "empty", in: "", n: 2, want: ""},
		{name: "short", in: "a\nb\n", n: 3, want: "a\nb"},
		{name: "cut", in: "a\nb\nc\n", n: 2, want: "b\nc"},
		{name: "no newline", in: "a\nb\nc", n: 1, want: "c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tail([]byte(tt.in), tt.n); got != tt.want {
				t.Errorf("tail(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
			}
		})
	}
}

func TestServer(t *testing.T) {
	Require(t)
	begin := time.Now()
	s := StartServer(t)
	t.Logf("started in %v on %s, process %d", time.Since(begin).Round(time.Millisecond), s.Addr(), s.Pid())

	db := openDB(t, s.DSN(""))
	mustExec(t, db, "CREATE DATABASE leaf")
	mustExec(t, db, "CREATE TABLE leaf.t (id INT PRIMARY KEY, v VARCHAR(32))")
	mustExec(t, db, "INSERT INTO leaf.t VALUES (1, 'before kill')")

	pid := s.Pid()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("process %d after Kill: %v, want ESRCH", pid, err)
	}
	if s.Pid() != 0 {
		t.Errorf("Pid() = %d after Kill, want 0", s.Pid())
	}
	if err := s.Kill(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("second Kill: %v, want ErrNotRunning", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("killed server answers")
	}

	begin = time.Now()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("restarted after kill -9 in %v", time.Since(begin).Round(time.Millisecond))
	if err := s.Start(); err == nil {
		t.Error("Start of a running server succeeded")
	}
	if got := mustValue(t, db, "SELECT v FROM leaf.t WHERE id = 1"); got != "before kill" {
		t.Fatalf("after kill and start: %q", got)
	}
	mustExec(t, db, "INSERT INTO leaf.t VALUES (2, 'before stop')")

	begin = time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped and started in %v", time.Since(begin).Round(time.Millisecond))
	if got := mustValue(t, db, "SELECT COUNT(*) FROM leaf.t"); got != "2" {
		t.Fatalf("after stop and start: %s rows, want 2", got)
	}
}

// TestServerCleanup checks that a test's end leaves no process and no
// directory behind, also when the server was killed and restarted.
func TestServerCleanup(t *testing.T) {
	Require(t)
	var pid int
	var dir string
	t.Run("server", func(t *testing.T) {
		s := StartServer(t)
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		pid, dir = s.Pid(), s.dir
	})
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d after cleanup: %v, want ESRCH", pid, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s after cleanup: %v", dir, err)
	}
}

func TestGalera(t *testing.T) {
	RequireGalera(t)
	begin := time.Now()
	c := StartGalera(t, 3)
	t.Logf("3-node cluster Synced in %v", time.Since(begin).Round(time.Millisecond))
	nodes := c.Nodes()

	// Causal reads: a read waits until the node has applied every write
	// the cluster committed before it.
	dbs := make([]*sql.DB, len(nodes))
	for i, s := range nodes {
		dbs[i] = openDB(t, s.DSN("")+"&wsrep_sync_wait=1")
	}
	mustExec(t, dbs[0], "CREATE DATABASE leaf")
	mustExec(t, dbs[0], "CREATE TABLE leaf.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(64) NOT NULL)")
	mustExec(t, dbs[0], "INSERT INTO leaf.t (v) VALUES ('written on node 0')")
	if got := mustValue(t, dbs[2], "SELECT v FROM leaf.t"); got != "written on node 0" {
		t.Fatalf("node 2 reads %q", got)
	}

	want := 1
	// Node 1 first, then the others, the bootstrap node too: a killed node
	// rejoins however it started. Last a clean stop.
	rounds := []struct {
		victim int
		stop   bool // SIGTERM instead of SIGKILL
	}{{victim: 1}, {victim: 2}, {victim: 0}, {victim: 1}, {victim: 2, stop: true}}
	for round, r := range rounds {
		victim := r.victim
		pid := nodes[victim].Pid()
		var err error
		if r.stop {
			err = nodes[victim].Stop()
		} else {
			err = c.Kill(victim)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("node %d process %d is still there: %v", victim, pid, err)
		}
		var missed []string
		for i := range nodes {
			if i == victim {
				continue
			}
			v := fmt.Sprintf("round %d: written on node %d while node %d was down", round, i, victim)
			w := time.Now()
			mustExec(t, dbs[i], "INSERT INTO leaf.t (v) VALUES (?)", v)
			t.Logf("round %d: node %d down; write on node %d took %v", round, victim, i, time.Since(w).Round(time.Millisecond))
			missed = append(missed, v)
			want++
		}
		restart := time.Now()
		if err := c.Restart(victim); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: node %d rejoined and Synced in %v", round, victim, time.Since(restart).Round(time.Millisecond))
		if got := lastTransfer(t, nodes[victim]); got != "IST" {
			t.Errorf("round %d: node %d rejoined by %s, want IST", round, victim, got)
		}
		for _, v := range missed {
			if got := mustValue(t, dbs[victim], "SELECT COUNT(*) FROM leaf.t WHERE v = ?", v); got != "1" {
				t.Fatalf("restarted node %d has %s rows %q, want 1", victim, got, v)
			}
		}
		if got := mustValue(t, dbs[victim], "SELECT COUNT(*) FROM leaf.t"); got != fmt.Sprint(want) {
			t.Fatalf("restarted node %d has %s rows, want %d", victim, got, want)
		}
		mustExec(t, dbs[victim], "INSERT INTO leaf.t (v) VALUES (?)", fmt.Sprintf("round %d: written on node %d after its restart", round, victim))
		want++
	}
	for i := range nodes {
		if got := mustValue(t, dbs[i], "SELECT COUNT(*) FROM leaf.t"); got != fmt.Sprint(want) {
			t.Errorf("node %d has %s rows, want %d", i, got, want)
		}
	}
	t.Logf("whole test before cleanup: %v", time.Since(begin).Round(time.Millisecond))
}

// lastTransfer tells how a Galera node received its state in its last run,
// "IST" or "SST", from the messages of the rsync state transfer script.
func lastTransfer(tb testing.TB, s *Server) string {
	tb.Helper()
	b, err := os.ReadFile(s.path(logName))
	if err != nil {
		tb.Fatal(err)
	}
	log := string(b)
	log = log[strings.LastIndex(log, "\n==== "):]
	for _, kind := range []string{"IST", "SST"} {
		if strings.Contains(log, "rsync "+kind+" completed on joiner") {
			return kind
		}
	}
	return "no state transfer"
}

func openDB(tb testing.TB, dsn string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func mustExec(tb testing.TB, db *sql.DB, query string, args ...any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, query, args...); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
}

func mustValue(tb testing.TB, db *sql.DB, query string, args ...any) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var v string
	if err := db.QueryRowContext(ctx, query, args...).Scan(&v); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return v
}
