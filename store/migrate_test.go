package store_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/leafid/leaf/migrations"
	"github.com/leafid/leaf/snowflake"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// javaLeafDDL is the table as Meituan Leaf's README creates it.
const javaLeafDDL = "CREATE TABLE `leaf_alloc` (\n" +
	"  `biz_tag` varchar(128)  NOT NULL DEFAULT '',\n" +
	"  `max_id` bigint(20) NOT NULL DEFAULT '1',\n" +
	"  `step` int(11) NOT NULL,\n" +
	"  `description` varchar(256)  DEFAULT NULL,\n" +
	"  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
	"  PRIMARY KEY (`biz_tag`)\n" +
	") ENGINE=InnoDB"

type allocRow struct {
	Tag         string  `db:"biz_tag"`
	MaxID       int64   `db:"max_id"`
	Step        int64   `db:"step"`
	Description *string `db:"description"`
	UpdateTime  string  `db:"update_time"`
}

// TestExistingLeafDatabase: leaf pointed at a database where the Java Leaf
// ran keeps its rows and continues its numbering.
func TestExistingLeafDatabase(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	s, err := store.OpenMySQL(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	db := s.DB()
	if _, err := db.ExecContext(ctx, javaLeafDDL); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, max_id, step, description, update_time) VALUES "+
		"('leaf-segment-test', 5000000, 2000, 'Test leaf Segment Mode Get Id', '2019-05-01 10:00:00'), ('no-desc', 42, 10, NULL, '2020-01-01 00:00:00')"); err != nil {
		t.Fatal(err)
	}
	read := func() []allocRow {
		var rows []allocRow
		if err := db.SelectContext(ctx, &rows, "SELECT biz_tag, max_id, step, description, CAST(update_time AS CHAR) AS update_time FROM leaf_alloc ORDER BY biz_tag"); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	var ddlBefore struct {
		Table string `db:"Table"`
		DDL   string `db:"Create Table"`
	}
	if err := db.GetContext(ctx, &ddlBefore, "SHOW CREATE TABLE leaf_alloc"); err != nil {
		t.Fatal(err)
	}
	before := read()

	for i := range 2 {
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatalf("migration %d: %v", i+1, err)
		}
	}
	after := read()
	if len(after) != len(before) {
		t.Fatalf("rows %v became %v", before, after)
	}
	for i := range before {
		b, a := before[i], after[i]
		if b.Tag != a.Tag || b.MaxID != a.MaxID || b.Step != a.Step || b.UpdateTime != a.UpdateTime ||
			(b.Description == nil) != (a.Description == nil) || (b.Description != nil && *b.Description != *a.Description) {
			t.Fatalf("row %+v became %+v", b, a)
		}
	}
	var ddlAfter struct {
		Table string `db:"Table"`
		DDL   string `db:"Create Table"`
	}
	if err := db.GetContext(ctx, &ddlAfter, "SHOW CREATE TABLE leaf_alloc"); err != nil {
		t.Fatal(err)
	}
	if ddlAfter.DDL != ddlBefore.DDL {
		t.Fatalf("migrations altered leaf_alloc:\n%s\nbecame\n%s", ddlBefore.DDL, ddlAfter.DDL)
	}

	a, err := s.Allocate(ctx, "leaf-segment-test", 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Start() < 5_000_000 || a.MaxID != 5_002_000 || a.DBStep != 2000 {
		t.Fatalf("Allocate = %+v (start %d), want a range from 5000000", a, a.Start())
	}
	tag, err := s.Tag(ctx, "no-desc")
	if err != nil || tag.Description != "" || tag.MaxID != 42 ||
		!tag.UpdateTime.Equal(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("Tag(no-desc) = %+v, %v", tag, err)
	}
	// And snowflake leases work on it too.
	if _, err := s.Acquire(ctx, "h", 4, time.Minute); err != nil {
		t.Fatal(err)
	}
}

func TestMigrateIdempotent(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.fresh(t)
		s := storetest.Open(t, b.dialect, dsn) // migrated once
		createTag(t, s, "orders", 10, 5)
		for i := range 3 {
			applied, err := migrations.Up(ctx, s.DB().DB, b.dialect)
			if err != nil {
				t.Fatalf("Up #%d: %v", i+2, err)
			}
			if len(applied) != 0 {
				t.Fatalf("Up #%d applied %+v on a current schema", i+2, applied)
			}
		}
		// A second store migrating the same database changes nothing either.
		s2 := storetest.Open(t, b.dialect, dsn)
		statuses, err := migrations.Statuses(ctx, s2.DB().DB, b.dialect)
		if err != nil {
			t.Fatal(err)
		}
		latest, err := migrations.Latest(b.dialect)
		if err != nil {
			t.Fatal(err)
		}
		if len(statuses) != int(latest) {
			t.Fatalf("%d statuses, want %d", len(statuses), latest)
		}
		for _, st := range statuses {
			if !st.Applied || st.AppliedAt.IsZero() {
				t.Fatalf("migration %+v not applied", st)
			}
		}
		tag, err := s2.Tag(ctx, "orders")
		if err != nil || tag.MaxID != 10 || tag.Step != 5 {
			t.Fatalf("Tag = %+v, %v", tag, err)
		}
	})
}

// TestMigrateConcurrent: several instances starting at once on one
// database all succeed.
func TestMigrateConcurrent(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		dsn := b.fresh(t)
		const n = 4
		stores := make([]*store.Store, n)
		for i := range stores {
			var err error
			if b.dialect == store.MySQL {
				stores[i], err = store.OpenMySQL(context.Background(), dsn, store.Options{})
			} else {
				stores[i], err = store.OpenSQLite(context.Background(), dsn, store.Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { stores[i].Close() })
		}
		errs := make(chan error, n)
		for _, s := range stores {
			go func() { _, err := s.Migrate(context.Background()); errs <- err }()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		createTag(t, stores[0], "x", 1, 1)
	})
}

// TestMigrateWidensWorkerIDs: a database at migration 4 that holds leases
// comes out of migration 5 with the same rows, its update_time still kept
// up, and worker ids from 0 to 65535 (no further) allowed.
func TestMigrateWidensWorkerIDs(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		dsn := b.fresh(t)
		var (
			s   *store.Store
			err error
		)
		gd := goose.DialectSQLite3
		if b.dialect == store.MySQL {
			s, err = store.OpenMySQL(ctx, dsn, store.Options{})
			gd = goose.DialectMySQL
		} else {
			s, err = store.OpenSQLite(ctx, dsn, store.Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		db := s.DB()

		// The schema of migration 4, as a leaf before migration 5 left it.
		p, err := goose.NewProvider(gd, db.DB, os.DirFS(filepath.Join("..", "migrations", b.dialect)),
			goose.WithTableName(migrations.VersionTable), goose.WithDisableGlobalRegistry(true),
			goose.WithSlog(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpTo(ctx, 4); err != nil {
			t.Fatal(err)
		}
		live := time.Now().Add(time.Hour).UnixMilli()
		if _, err := db.ExecContext(ctx, `INSERT INTO leaf_worker_lease
(worker_id, holder, instance, expires_ms, last_timestamp_ms, update_time) VALUES
(0, 'host-a:8080', 'inst-a', ?, 1750000000123, '2001-02-03 04:05:06'),
(1023, 'host-b:8080', 'inst-b', 5, 1750000000456, '2001-02-03 04:05:06')`, live); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO leaf_worker_lease (worker_id, holder, expires_ms) VALUES (1024, 'h', 0)"); err == nil {
			t.Fatal("migration 4 took worker id 1024")
		}
		type row struct {
			WorkerID   int64  `db:"worker_id"`
			Holder     string `db:"holder"`
			Instance   string `db:"instance"`
			Expires    int64  `db:"expires_ms"`
			Last       int64  `db:"last_timestamp_ms"`
			UpdateTime string `db:"update_time"`
		}
		read := func() []row {
			var rows []row
			if err := db.SelectContext(ctx, &rows, `SELECT worker_id, holder, instance, expires_ms, last_timestamp_ms,
CAST(update_time AS CHAR) AS update_time FROM leaf_worker_lease ORDER BY worker_id`); err != nil {
				t.Fatal(err)
			}
			return rows
		}
		before := read()

		applied, err := s.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var versions []int64
		for _, a := range applied {
			versions = append(versions, a.Version)
		}
		if !slices.Equal(versions, []int64{5, 6, 7, 8, 9, 10}) {
			t.Fatalf("applied %+v, want migrations 5 to 10", applied)
		}
		if after := read(); !slices.Equal(after, before) {
			t.Fatalf("rows %+v became %+v", before, after)
		}
		if err := s.CheckSchema(ctx); err != nil {
			t.Fatal(err)
		}

		// The holder of worker id 0 renews it as before, and update_time
		// moves with the row.
		l := snowflake.Lease{WorkerID: 0, Holder: "host-a:8080", Instance: "inst-a", LastTimestamp: 1750000000123,
			Expires: time.UnixMilli(live)}
		if _, err := s.Renew(ctx, l, 1750000000789, time.Minute); err != nil {
			t.Fatal(err)
		}
		if r := read()[0]; r.Last != 1750000000789 || r.UpdateTime <= "2001-02-03 04:05:06" {
			t.Fatalf("renewed row %+v", r)
		}
		// Ids above 1023 are leased; 65536 is refused by the table itself.
		storetest.HoldLeases(t, s, 1, 1023)
		if l, err := s.Acquire(ctx, "h", 1<<snowflake.MaxWorkerBits, time.Minute); err != nil || l.WorkerID != 1023 ||
			l.LastTimestamp != 1750000000456 {
			t.Fatalf("Acquire = %+v, %v; want the expired worker id 1023 and its last timestamp", l, err)
		}
		if l, err := s.Acquire(ctx, "h2", 1<<snowflake.MaxWorkerBits, time.Minute); err != nil || l.WorkerID != 1024 {
			t.Fatalf("Acquire = %+v, %v; want worker id 1024", l, err)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO leaf_worker_lease (worker_id, holder, expires_ms) VALUES (65535, 'h', 0)"); err != nil {
			t.Fatalf("worker id 65535: %v", err)
		}
		for _, id := range []int64{65536, -1} {
			if _, err := db.ExecContext(ctx, "INSERT INTO leaf_worker_lease (worker_id, holder, expires_ms) VALUES (?, 'h', 0)", id); err == nil {
				t.Fatalf("the table took worker id %d", id)
			}
		}
	})
}
