package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// mysqlDSNForm is the shape of a DSN, for error messages.
const mysqlDSNForm = "user:pass@tcp(host:3306)/db"

// ParseMySQLDSN reads a go-sql-driver DSN as leaf takes one from a person
// (user:pass@tcp(host:3306)/db) and checks that it names a database: leaf
// creates its tables, never the database. Its errors quote no part of the
// DSN, so never the password.
func ParseMySQLDSN(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w (want %s)", err, mysqlDSNForm)
	}
	if cfg.DBName == "" {
		return nil, fmt.Errorf("the DSN names no database (want %s)", mysqlDSNForm)
	}
	return cfg, nil
}

// OpenMySQL connects to MySQL with a go-sql-driver DSN
// (user:pass@tcp(host:3306)/db; see ParseMySQLDSN) and pings it. It always sets
// parseTime=true, clientFoundRows=true and interpolateParams=true, and,
// unless the DSN chooses a time_zone or loc itself, runs the session in
// UTC so that TIMESTAMP columns read back as the right instant. The
// driver's own logging is discarded. Errors never contain the password.
// With opts.AllowDown, a database that does not answer within the call
// timeout opens as a store that is down (see Options.AllowDown).
func OpenMySQL(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("open mysql: parse dsn: %w", err)
	}
	tuneConfig(cfg)
	if opts.TLS != nil && cfg.TLSConfig == "false" {
		return nil, errors.New("open mysql: the DSN says tls=false, and a CA for the link to MySQL is given: drop one of the two")
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ns, err := newNodes(cfg, opts.Addrs, timeout, opts.TLS)
	if err != nil {
		return nil, fmt.Errorf("open mysql: %w", err)
	}
	db := sql.OpenDB(ns)
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(8)
	db.SetConnMaxLifetime(3 * time.Minute)
	db.SetConnMaxIdleTime(time.Minute)
	s := newStore(sqlx.NewDb(db, "mysql"), MySQL, opts)
	s.nodes = ns
	if s.starts.jump > 0 {
		ns.verify = s.verifyConn
	}
	pctx, cancel := ctx, context.CancelFunc(func() {})
	if opts.AllowDown {
		pctx, cancel = context.WithTimeout(ctx, timeout)
	}
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		s.warm(pctx, warmConns)
	}()
	err = s.Ping(pctx)
	<-warmed
	silent := pctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err != nil {
		err = fmt.Errorf("open mysql %s/%s: %w", strings.Join(nodeAddrs(ns), ","), cfg.DBName, err)
		if opts.AllowDown && (silent || classify(err) == unreachable) {
			s.health.down(err)
			s.openedDurability(ctx, opts)
			return s, nil
		}
		s.Close()
		return nil, err
	}
	s.openedDurability(ctx, opts)
	return s, nil
}

// warmConns is how many connections OpenMySQL opens beside its ping.
const warmConns = 3

// warm opens n connections at the same time and leaves them idle in the
// pool, so that the first statements run side by side (a round of the
// sequences reads and writes two at a time) do not each wait for a
// connection's set-up: the handshake and the reads of the node's identity
// (startread.go) are five round trips, half a second with the database
// 100 ms away.
func (s *Store) warm(ctx context.Context, n int) {
	conns := make([]*sql.Conn, n)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Go(func() {
			c, err := s.db.Conn(ctx)
			if err != nil {
				return
			}
			if c.PingContext(ctx) != nil {
				c.Close()
				return
			}
			conns[i] = c
		})
	}
	wg.Wait()
	for _, c := range conns {
		if c != nil {
			c.Close() // back to the pool, idle
		}
	}
}

// tuneConfig sets what every connection of a Store needs on a parsed DSN:
// times parsed, rows counted as matched, parameters interpolated, the
// session in UTC unless the DSN chooses a zone, a short lock wait, a dial
// timeout, and the driver's logging discarded.
func tuneConfig(cfg *mysql.Config) {
	cfg.ParseTime = true
	// RowsAffected counts matched rows, not changed ones: a renewal that
	// writes the same values still proves the row is ours.
	cfg.ClientFoundRows = true
	// One round trip per statement instead of prepare, execute and close.
	cfg.InterpolateParams = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, ok := cfg.Params["time_zone"]; !ok && (cfg.Loc == nil || cfg.Loc == time.UTC) {
		cfg.Params["time_zone"] = "'+00:00'"
	}
	// A row lock held by someone else comes back as error 1205 after a
	// second, which is retried, instead of outlasting the call's deadline.
	if _, ok := cfg.Params["innodb_lock_wait_timeout"]; !ok {
		cfg.Params["innodb_lock_wait_timeout"] = "1"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	// The driver would print connection trouble to stderr; a library does
	// not log, and the errors reach the caller anyway.
	cfg.Logger = discardLogger{}
}

type discardLogger struct{}

func (discardLogger) Print(...any) {}
