// Package migrations holds the database schema of leaf as SQL files embedded
// in the binary, one folder per dialect (mysql/, sqlite/), and applies them
// with goose.
//
// Migration 1 creates Meituan Leaf's leaf_alloc table only when it is
// missing, so pointing leaf at a database the Java Leaf already uses keeps
// its rows untouched. Migration 2 creates leaf_worker_lease for snowflake
// worker ids; migration 3 adds its instance column; migration 4 creates
// leaf_store and leaf_marks for several independent stores; migration 5
// widens the worker ids of leaf_worker_lease from 0..1023 to 0..65535,
// keeping its rows; migration 6 creates leaf_seq_space, leaf_seq_section
// and leaf_seq_member for per-key sequences; migration 7 creates
// leaf_tag_format, the settings of formatted and opaque tags; migration 8
// creates leaf_db_start, what leaf last saw of each database node's start
// (store/restart.go); migration 9 adds the identity of each run of a node
// (leaf_db_run, a MEMORY table emptied by every start, and the run column
// of leaf_db_start). The applied
// versions are recorded in VersionTable.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3"
)

// Dialects, as accepted by Up and Statuses.
const (
	MySQL  = "mysql"
	SQLite = "sqlite"
)

// VersionTable is where goose records the applied migrations. It has a
// name of its own so that it cannot clash with a goose table the user's
// application may keep in the same database. It is exported for the fault
// suite, which reads it after instances on several cluster nodes migrated
// one database at once: no version may be recorded twice.
const VersionTable = "leaf_schema_version"

//go:embed mysql/*.sql sqlite/*.sql
var files embed.FS

// Applied is one migration run by Up.
type Applied struct {
	Version  int64
	Name     string // file name, e.g. "00001_leaf_alloc.sql"
	Duration time.Duration
}

// Status is the state of one known migration.
type Status struct {
	Version   int64
	Name      string
	Applied   bool
	AppliedAt time.Time // zero when not applied
}

// dialectFS returns the migration files of dialect.
func dialectFS(dialect string) (fs.FS, error) {
	if dialect != MySQL && dialect != SQLite {
		return nil, fmt.Errorf("unknown dialect %q (want %q or %q)", dialect, MySQL, SQLite)
	}
	return fs.Sub(files, dialect)
}

// Up applies the pending migrations of dialect ("mysql" or "sqlite") to db
// and returns those it applied, oldest first; none when the schema is
// current. When a migration fails it returns the error and those applied
// before it, which stay applied. On MySQL concurrent callers (several
// instances starting at once) are serialised with a lock row in the
// database (see mysqlLocker).
func Up(ctx context.Context, db *sql.DB, dialect string) ([]Applied, error) {
	p, err := provider(db, dialect)
	if err != nil {
		return nil, fmt.Errorf("migrate %s: %w", dialect, err)
	}
	var applied []Applied
	// goose returns no results with a failure, only inside its
	// PartialError; and a retry below reports only what it applied itself.
	up := func() error {
		results, err := p.Up(ctx)
		var pe *goose.PartialError
		if errors.As(err, &pe) {
			results = pe.Applied
		}
		for _, r := range results {
			if r == nil || r.Error != nil || r.Source == nil {
				continue
			}
			applied = append(applied, Applied{
				Version:  r.Source.Version,
				Name:     path.Base(r.Source.Path),
				Duration: r.Duration,
			})
		}
		return err
	}
	err = up()
	// goose creates its version table and that table's first row in two
	// steps, before the lock: an instance starting at the same moment as
	// another can read in between. SQLite has no lock: two instances can
	// run one migration at once, and the second's fails (a column added
	// twice) and is rolled back. And on Galera the DDL of an instance
	// starting on another node aborts what runs here (error 1213). Each
	// time, try again.
	for try := 0; err != nil && try < 10 && (strings.Contains(err.Error(), "missing zero version") ||
		isConflict(err) || appliedMeanwhile(ctx, p, err)); try++ {
		select {
		case <-ctx.Done():
			return applied, fmt.Errorf("migrate %s: %w", dialect, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		err = up()
	}
	if err != nil {
		return applied, fmt.Errorf("migrate %s: %w", dialect, err)
	}
	return applied, nil
}

// MySQL error numbers.
const (
	mysqlDuplicate       = 1062
	mysqlLockWaitTimeout = 1205
	mysqlConflict        = 1213
)

// isConflict reports whether err is a deadlock or a conflict between
// cluster nodes (1213) or a lock wait timeout (1205).
func isConflict(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == mysqlConflict || me.Number == mysqlLockWaitTimeout)
}

// appliedMeanwhile reports whether the migration that failed with err has
// been applied since, by another instance.
func appliedMeanwhile(ctx context.Context, p *goose.Provider, err error) bool {
	var pe *goose.PartialError
	if !errors.As(err, &pe) || pe.Failed == nil || pe.Failed.Source == nil {
		return false
	}
	v, verr := p.GetDBVersion(ctx)
	return verr == nil && v >= pe.Failed.Source.Version
}

// Statuses reports every known migration of dialect and whether db has it.
// The store's tests use it to check that a second store found the schema
// complete.
func Statuses(ctx context.Context, db *sql.DB, dialect string) ([]Status, error) {
	p, err := provider(db, dialect)
	if err != nil {
		return nil, fmt.Errorf("migration status %s: %w", dialect, err)
	}
	ss, err := p.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("migration status %s: %w", dialect, err)
	}
	out := make([]Status, 0, len(ss))
	for _, s := range ss {
		out = append(out, Status{
			Version:   s.Source.Version,
			Name:      path.Base(s.Source.Path),
			Applied:   s.State == goose.StateApplied,
			AppliedAt: s.AppliedAt,
		})
	}
	return out, nil
}

// Latest is the version of the newest migration of dialect. The tests of
// the store and the fault suite compare a database's schema with it.
func Latest(dialect string) (int64, error) {
	fsys, err := dialectFS(dialect)
	if err != nil {
		return 0, err
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return 0, err
	}
	var latest int64
	for _, n := range names {
		var v int64
		if _, err := fmt.Sscanf(n, "%d_", &v); err != nil {
			return 0, fmt.Errorf("migration file %q: no version prefix", n)
		}
		latest = max(latest, v)
	}
	return latest, nil
}

func provider(db *sql.DB, dialect string) (*goose.Provider, error) {
	if db == nil {
		return nil, errors.New("nil database")
	}
	fsys, err := dialectFS(dialect)
	if err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{
		goose.WithTableName(VersionTable),
		goose.WithDisableGlobalRegistry(true),
		// A library does not log; Up returns what it did.
		goose.WithSlog(slog.New(slog.DiscardHandler)),
	}
	gd := goose.DialectSQLite3
	if dialect == MySQL {
		gd = goose.DialectMySQL
		opts = append(opts, goose.WithSessionLocker(&mysqlLocker{}))
	}
	return goose.NewProvider(gd, db, fsys, opts...)
}
