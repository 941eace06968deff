// Package storetest gives tests real databases: a fresh MySQL database or
// SQLite file per test, dropped or deleted when the test ends.
//
// MySQL is found in this order (README.md, "Tests"):
//
//  1. LEAF_TEST_MYSQL_DSN, a go-sql-driver DSN of a server whose user may
//     create and drop databases (the database part of the DSN is ignored);
//  2. a container started with testcontainers-go, when a Docker engine
//     answers: one per test process, shared by its tests. Its image is
//     LEAF_TEST_MYSQL_IMAGE, by default MySQLImage (mysql:8.4); any image
//     that honours the official images' variables and answers SQL on 3306
//     will do, such as the MariaDB image that make images builds from
//     Debian's packages. When LEAF_TEST_MYSQL_IMAGE is set, the container
//     is required: no engine is a failure, not a step to the next place;
//  3. a server on 127.0.0.1:3306 as root with no password, when it answers;
//  4. otherwise the test is skipped, or fails when CI=true.
//
// The container's port is published on 127.0.0.1 only, and the container
// carries the label ContainerLabel. A test binary that uses the container
// terminates it when done:
//
//	func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }
//
// (Without it testcontainers' reaper removes the container after the
// process exits; where the reaper is off, TESTCONTAINERS_RYUK_DISABLED=true,
// a process killed before Main's end leaves it, and make containers removes
// what carries the label.)
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/testcontainers/testcontainers-go"
	tcmysql "github.com/testcontainers/testcontainers-go/modules/mysql"

	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
)

// Environment read by this package.
const (
	// EnvMySQLDSN names a MySQL server for the tests.
	EnvMySQLDSN = "LEAF_TEST_MYSQL_DSN"
	// EnvMySQLImage names the image of the container, and requires it.
	EnvMySQLImage = "LEAF_TEST_MYSQL_IMAGE"
	// EnvCI, when true, turns "no MySQL" from a skip into a failure.
	EnvCI = "CI"
)

// Where MySQL is looked for after EnvMySQLDSN.
const (
	// MySQLImage is the image of the container when EnvMySQLImage is unset.
	MySQLImage = "mysql:8.4"
	// ContainerLabel marks every container this package starts (value
	// "storetest").
	ContainerLabel = "org.leafid.test"
	// LocalMySQLDSN is the last resort: a local server, root, no password.
	LocalMySQLDSN = "root@tcp(127.0.0.1:3306)/"
)

const (
	dockerProbeTimeout = 5 * time.Second
	containerTimeout   = 5 * time.Minute
	localProbeTimeout  = 2 * time.Second
	cleanupTimeout     = 30 * time.Second
	containerPassword  = "leaf"
)

// server is the MySQL that this test process uses, found once.
type server struct {
	source string        // where it came from, for messages
	cfg    *mysql.Config // DBName empty
	admin  *sql.DB       // creates and drops the per-test databases
	ctr    *tcmysql.MySQLContainer
	err    error  // a server was configured or found but does not work
	skip   string // no server anywhere: why, and how to provide one
}

var (
	serverOnce sync.Once
	shared     server
)

// MySQL returns the DSN of a fresh, empty MySQL database (no migrations
// applied) that is dropped when tb ends. It skips tb when no MySQL can be
// found, except under CI=true, where it fails.
func MySQL(tb testing.TB) string {
	tb.Helper()
	serverOnce.Do(func() {
		shared = findServer(os.Getenv(EnvMySQLDSN), os.Getenv(EnvMySQLImage), dockerAnswers, LocalMySQLDSN)
	})
	ci, _ := strconv.ParseBool(os.Getenv(EnvCI))
	shared.require(tb, ci)

	name := "leaf_test_" + randomHex(8)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if _, err := shared.admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4"); err != nil {
		tb.Fatalf("storetest: create database %s on %s: %v", name, shared.source, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		if _, err := shared.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			tb.Errorf("storetest: drop database %s: %v", name, err)
		}
	})
	cfg := shared.cfg.Clone()
	cfg.DBName = name
	return cfg.FormatDSN()
}

// SQLite returns the path of a new SQLite database file in a temporary
// directory removed when tb ends. The file does not exist yet.
func SQLite(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(tb.TempDir(), "leaf.db")
}

// Open opens a store of dialect (store.MySQL or store.SQLite) on dsn (a
// MySQL DSN or a SQLite path), applies the migrations and closes it when
// tb ends. Several stores may be opened on one database.
func Open(tb testing.TB, dialect, dsn string) *store.Store {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	var (
		s   *store.Store
		err error
	)
	switch dialect {
	case store.MySQL:
		s, err = store.OpenMySQL(ctx, dsn, store.Options{})
	case store.SQLite:
		s, err = store.OpenSQLite(ctx, dsn, store.Options{})
	default:
		tb.Fatalf("storetest: unknown dialect %q", dialect)
	}
	if err != nil {
		tb.Fatalf("storetest: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("storetest: close %s store: %v", dialect, err)
		}
	})
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatalf("storetest: %v", err)
	}
	return s
}

// MySQLStore is a migrated store on a fresh MySQL database (see MySQL).
func MySQLStore(tb testing.TB) *store.Store {
	tb.Helper()
	return Open(tb, store.MySQL, MySQL(tb))
}

// SQLiteStore is a migrated store on a fresh SQLite file.
func SQLiteStore(tb testing.TB) *store.Store {
	tb.Helper()
	return Open(tb, store.SQLite, SQLite(tb))
}

// expireLease dates a lease's expiry at the Unix epoch. Args: worker_id.
const expireLease = `UPDATE leaf_worker_lease SET expires_ms = 0 WHERE worker_id = ?`

// ExpireLease makes the lease of workerID expired, as if its holder had
// stopped renewing long ago; holder and last timestamp stay.
func ExpireLease(tb testing.TB, s *store.Store, workerID int64) {
	tb.Helper()
	res, err := s.DB().ExecContext(context.Background(), expireLease, workerID)
	if err != nil {
		tb.Fatalf("storetest: expire worker id %d: %v", workerID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		tb.Fatalf("storetest: expire worker id %d: %d rows (%v)", workerID, n, err)
	}
}

// Leases reads every row of leaf_worker_lease behind the store's back,
// ordered by worker id.
func Leases(tb testing.TB, s *store.Store) []snowflake.Lease {
	tb.Helper()
	var rows []struct {
		WorkerID  int64  `db:"worker_id"`
		Holder    string `db:"holder"`
		Instance  string `db:"instance"`
		ExpiresMS int64  `db:"expires_ms"`
		Last      int64  `db:"last_timestamp_ms"`
	}
	err := s.DB().SelectContext(context.Background(), &rows,
		`SELECT worker_id, holder, instance, expires_ms, last_timestamp_ms FROM leaf_worker_lease ORDER BY worker_id`)
	if err != nil {
		tb.Fatalf("storetest: read leaf_worker_lease: %v", err)
	}
	out := make([]snowflake.Lease, len(rows))
	for i, r := range rows {
		out[i] = snowflake.Lease{WorkerID: r.WorkerID, Holder: r.Holder, Instance: r.Instance,
			LastTimestamp: r.Last, Expires: time.UnixMilli(r.ExpiresMS).UTC()}
	}
	return out
}

// HoldLeases gives each worker id in [lo, hi) a live lease, for a day by
// this machine's clock, under a holder name of its own ("held-ID"), as
// that many running instances would; ids that have a row already are an
// error. It fills the table in statements of a few hundred rows, so that
// a test can take a pool of 2^16 to its last id.
func HoldLeases(tb testing.TB, s *store.Store, lo, hi int64) {
	tb.Helper()
	const perStatement = 500
	expires := time.Now().Add(24 * time.Hour).UnixMilli()
	for from := lo; from < hi; from += perStatement {
		var q strings.Builder
		q.WriteString("INSERT INTO leaf_worker_lease (worker_id, holder, instance, expires_ms, last_timestamp_ms) VALUES ")
		for id := from; id < min(from+perStatement, hi); id++ {
			if id > from {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "(%d, 'held-%d', 'held', %d, 0)", id, id, expires)
		}
		if _, err := s.DB().ExecContext(context.Background(), q.String()); err != nil {
			tb.Fatalf("storetest: hold worker ids %d..%d: %v", from, min(from+perStatement, hi)-1, err)
		}
	}
}

// RewindLease sets the last timestamp recorded for workerID, as a database
// that went back in time to before the holder's last renewals would.
func RewindLease(tb testing.TB, s *store.Store, workerID, lastTimestamp int64) {
	tb.Helper()
	exec(tb, s, `UPDATE leaf_worker_lease SET last_timestamp_ms = ? WHERE worker_id = ?`, lastTimestamp, workerID)
}

// SetLease overwrites the row of l.WorkerID with l, as a database that went
// back in time would show it.
func SetLease(tb testing.TB, s *store.Store, l snowflake.Lease) {
	tb.Helper()
	exec(tb, s, `UPDATE leaf_worker_lease SET holder = ?, instance = ?, expires_ms = ?, last_timestamp_ms = ?
WHERE worker_id = ?`, l.Holder, l.Instance, l.Expires.UnixMilli(), l.LastTimestamp, l.WorkerID)
}

// RewindTag sets the max_id of a row of leaf_alloc, lower or higher, as a
// database that went back in time would.
func RewindTag(tb testing.TB, s *store.Store, tag string, maxID int64) {
	tb.Helper()
	exec(tb, s, `UPDATE leaf_alloc SET max_id = ? WHERE biz_tag = ?`, maxID, tag)
}

// exec runs a statement that must change exactly one row.
func exec(tb testing.TB, s *store.Store, query string, args ...any) {
	tb.Helper()
	res, err := s.DB().ExecContext(context.Background(), query, args...)
	if err != nil {
		tb.Fatalf("storetest: %s: %v", query, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		tb.Fatalf("storetest: %s: %d rows (%v)", query, n, err)
	}
}

// Main runs the tests of m and then terminates the MySQL container if one
// was started. Use it from TestMain; it returns the exit code.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.admin != nil {
		_ = shared.admin.Close()
	}
	if shared.ctr != nil {
		if err := testcontainers.TerminateContainer(shared.ctr); err != nil {
			fmt.Fprintf(os.Stderr, "storetest: terminate MySQL container: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// require stops tb unless s is usable: a failure when s is broken or,
// under CI, missing; a skip when it is missing otherwise.
func (s server) require(tb testing.TB, ci bool) {
	tb.Helper()
	switch {
	case s.err != nil:
		tb.Fatalf("storetest: MySQL from %s: %v", s.source, s.err)
	case s.skip != "" && ci:
		tb.Fatalf("storetest: %s (%s is true, so this is a failure, not a skip)", s.skip, EnvCI)
	case s.skip != "":
		tb.Skipf("storetest: %s", s.skip)
	}
}

// findServer looks for MySQL in the documented order: envDSN when set,
// a container of image (MySQLImage if empty) when docker answers, then
// localDSN; an image named is required.
func findServer(envDSN, image string, docker func() error, localDSN string) server {
	if envDSN != "" {
		return connect("$"+EnvMySQLDSN, envDSN)
	}
	dockerErr := docker()
	switch {
	case dockerErr == nil && image == "":
		return startContainer(MySQLImage)
	case dockerErr == nil:
		return startContainer(image)
	case image != "":
		return server{source: "$" + EnvMySQLImage, err: fmt.Errorf("%s is %s, but no Docker engine answers: %w", EnvMySQLImage, image, dockerErr)}
	}
	local := connect("local server "+localDSN, localDSN+"?timeout="+localProbeTimeout.String())
	if local.err == nil {
		return local
	}
	return server{skip: fmt.Sprintf("no MySQL to test against (Docker: %v; %s: %v): "+
		"set %s to a DSN such as user:pass@tcp(host:3306)/ whose user may create databases, "+
		"start a Docker engine, or run MySQL on 127.0.0.1:3306 with user root and no password",
		dockerErr, localDSN, local.err, EnvMySQLDSN)}
}

// connect opens the admin pool of a server given by dsn.
func connect(source, dsn string) server {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return server{source: source, err: fmt.Errorf("parse dsn: %w", err)}
	}
	cfg.DBName = ""
	cfg.ParseTime = true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return server{source: source, err: err}
	}
	admin := sql.OpenDB(connector)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		return server{source: source, err: err}
	}
	return server{source: source, cfg: cfg, admin: admin}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// ExpireMember makes a sequence member and every section lease it holds
// run out now, as if the process had died a lease ago: the rows stay, so
// the sections' next owners still wait for nothing but the expiry.
func ExpireMember(tb testing.TB, s *store.Store, member string) {
	tb.Helper()
	for _, q := range []string{
		`UPDATE leaf_seq_member SET expires_ms = 0 WHERE member = ?`,
		`UPDATE leaf_seq_section SET expires_ms = 0 WHERE holder = ?`,
	} {
		if _, err := s.DB().ExecContext(context.Background(), q, member); err != nil {
			tb.Fatalf("storetest: expire member %q: %v", member, err)
		}
	}
}
