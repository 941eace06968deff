package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/leafid/leaf/migrations"
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
