// Package mariadbtest starts real, throw-away MariaDB servers for tests: a
// standalone server beside the machine's own, or a Galera cluster of several
// nodes, all on 127.0.0.1.
//
// It needs Linux, root (to hand the files to the mysql user and start the
// servers as that user) and the Debian packages mariadb-server (mariadbd,
// mariadb-install-db), and for Galera galera-4 (libgalera_smm.so) and rsync
// (state transfer). Available and GaleraAvailable say what is missing;
// Require and RequireGalera skip a test then, or fail it when CI=true.
// Galera tests are slow and run only when LEAF_TEST_GALERA=1.
//
// Each server lives in its own directory under os.TempDir (mode 0755, owned
// by mysql, because the server and its state transfer scripts run as mysql):
//
//	my.cnf        the only option file the server reads (--defaults-file)
//	data/         the data directory
//	mariadbd.log  the server's error log, kept across restarts
//	mariadbd.sock, mariadbd.pid, tmp/
//
// A server listens on 127.0.0.1 only, on a free port, and lets root in
// over TCP with no password. It is small: a 32 MiB buffer pool, 16 MiB redo
// log, no performance schema. It runs as its own process group, so it is
// stopped by its process id and never by name; the machine's own server is
// not touched. When the test ends, tb.Cleanup stops every process (SIGTERM,
// then SIGKILL) and removes the directory, also after a failure halfway.
// Should the test process die without its cleanups, the kernel kills the
// servers (parent-death signal) and only the directory remains.
package mariadbtest

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"testing"
)

// Environment read by this package.
const (
	// EnvGalera, set to 1, lets Galera tests run; without it they are skipped.
	EnvGalera = "LEAF_TEST_GALERA"
	// EnvCI, when true, turns "cannot start servers here" into a failure.
	EnvCI = "CI"
)

// Programs and files used, at their Debian paths.
const (
	mariadbdPath   = "/usr/sbin/mariadbd"
	installDBPath  = "/usr/bin/mariadb-install-db"
	galeraPath     = "/usr/lib/galera/libgalera_smm.so"
	sstScriptPath  = "/usr/bin/wsrep_sst_rsync"
	serverUserName = "mysql"
)

// Available reports why servers cannot be started here, or nil.
func Available() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("mariadbtest: needs Linux, not %s", runtime.GOOS)
	}
	if os.Geteuid() != 0 {
		return errors.New("mariadbtest: needs root, to start servers as the mysql user")
	}
	for _, p := range []string{mariadbdPath, installDBPath} {
		if err := executable(p); err != nil {
			return fmt.Errorf("mariadbtest: %w (apt-get install mariadb-server)", err)
		}
	}
	if _, _, err := serverUser(); err != nil {
		return fmt.Errorf("mariadbtest: %w (apt-get install mariadb-server)", err)
	}
	return nil
}

// GaleraAvailable reports why a Galera cluster cannot be started here, or
// nil. It does not look at EnvGalera.
func GaleraAvailable() error {
	if err := Available(); err != nil {
		return err
	}
	if _, err := os.Stat(galeraPath); err != nil {
		return fmt.Errorf("mariadbtest: no Galera provider: %w (apt-get install galera-4)", err)
	}
	if err := executable(sstScriptPath); err != nil {
		return fmt.Errorf("mariadbtest: %w (apt-get install mariadb-server)", err)
	}
	if _, err := exec.LookPath("rsync"); err != nil {
		return fmt.Errorf("mariadbtest: rsync state transfer: %w (apt-get install rsync)", err)
	}
	// The rsync state transfer script checks its daemon's port with one of these.
	if _, err := exec.LookPath("ss"); err != nil {
		if _, err := exec.LookPath("lsof"); err != nil {
			return errors.New("mariadbtest: rsync state transfer needs ss or lsof (apt-get install iproute2)")
		}
	}
	return nil
}

// Require stops tb unless Available: it skips tb, or fails it when CI=true.
func Require(tb testing.TB) {
	tb.Helper()
	require(tb, Available(), ci())
}

// RequireGalera skips tb unless LEAF_TEST_GALERA=1, then acts as Require
// for GaleraAvailable.
func RequireGalera(tb testing.TB) {
	tb.Helper()
	if os.Getenv(EnvGalera) != "1" {
		tb.Skipf("mariadbtest: Galera tests are slow and run only with %s=1", EnvGalera)
	}
	require(tb, GaleraAvailable(), ci())
}

func ci() bool {
	v, _ := strconv.ParseBool(os.Getenv(EnvCI))
	return v
}

// require skips tb when err is not nil, or fails it under ci.
func require(tb testing.TB, err error, ci bool) {
	tb.Helper()
	switch {
	case err != nil && ci:
		tb.Fatalf("%v (%s is true, so this is a failure, not a skip)", err, EnvCI)
	case err != nil:
		tb.Skip(err)
	}
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// serverUser returns the uid and gid of the user the servers run as.
func serverUser() (uid, gid int, err error) {
	u, err := user.Lookup(serverUserName)
	if err != nil {
		return 0, 0, err
	}
	if uid, err = strconv.Atoi(u.Uid); err != nil {
		return 0, 0, fmt.Errorf("uid of %s: %w", serverUserName, err)
	}
	if gid, err = strconv.Atoi(u.Gid); err != nil {
		return 0, 0, fmt.Errorf("gid of %s: %w", serverUserName, err)
	}
	return uid, gid, nil
}

// Database creates the database db on the server and returns its DSN.
func (s *Server) Database(tb testing.TB, db string) string {
	tb.Helper()
	root, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		tb.Fatal(err)
	}
	defer root.Close()
	if _, err := root.Exec("CREATE DATABASE `" + db + "`"); err != nil {
		tb.Fatalf("mariadbtest: %v", err)
	}
	return s.DSN(db)
}
