package migrations_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/leafid/leaf/migrations"
)

func TestFiles(t *testing.T) {
	for _, d := range []string{migrations.MySQL, migrations.SQLite} {
		t.Run(d, func(t *testing.T) {
			fsys, err := migrations.FS(d)
			if err != nil {
				t.Fatal(err)
			}
			names, err := fs.Glob(fsys, "*.sql")
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"00001_leaf_alloc.sql", "00002_leaf_worker_lease.sql", "00003_leaf_worker_lease_instance.sql", "00004_leaf_store.sql",
				"00005_leaf_worker_lease_16_bit_ids.sql", "00006_leaf_sequence.sql", "00007_leaf_tag_format.sql",
				"00008_leaf_db_start.sql", "00009_leaf_db_run.sql", "00010_leaf_tag_bound.sql"}
			if !slices.Equal(names, want) {
				t.Fatalf("files %q, want %q", names, want)
			}
			if v, err := migrations.Latest(d); err != nil || v != 10 {
				t.Fatalf("Latest = %d, %v", v, err)
			}
		})
	}
	if _, err := migrations.FS("postgres"); err == nil {
		t.Fatal("FS(postgres): no error")
	}
	if _, err := migrations.Up(context.Background(), &sql.DB{}, "postgres"); err == nil {
		t.Fatal("Up(postgres): no error")
	}
}

func TestUpSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	applied, err := migrations.Up(ctx, db, migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	var versions []int64
	for _, a := range applied {
		versions = append(versions, a.Version)
	}
	if !slices.Equal(versions, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}) || applied[0].Name != "00001_leaf_alloc.sql" {
		t.Fatalf("applied %+v", applied)
	}
	again, err := migrations.Up(ctx, db, migrations.SQLite)
	if err != nil || len(again) != 0 {
		t.Fatalf("second Up = %+v, %v", again, err)
	}
	for _, table := range []string{"leaf_alloc", "leaf_worker_lease", "leaf_tag_format", "leaf_db_start", migrations.VersionTable} {
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
			t.Fatalf("table %s: %v", table, err)
		}
	}
	// update_time is kept by the trigger.
	if _, err := db.ExecContext(ctx, "INSERT INTO leaf_alloc (biz_tag, step, update_time) VALUES ('t', 10, '2000-01-01 00:00:00')"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = 't'"); err != nil {
		t.Fatal(err)
	}
	var maxID int64
	var updated string
	if err := db.QueryRowContext(ctx, "SELECT max_id, CAST(update_time AS TEXT) FROM leaf_alloc WHERE biz_tag = 't'").Scan(&maxID, &updated); err != nil {
		t.Fatal(err)
	}
	if maxID != 11 || updated <= "2000-01-01 00:00:00" {
		t.Fatalf("max_id %d, update_time %s", maxID, updated)
	}
}

// A migration that fails leaves those before it applied, and Up says which:
// a database where leaf_worker_lease already has the column migration 3
// adds makes migration 3 fail after 1 and 2 went through.
func TestUpReportsWhatItAppliedBeforeAFailure(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, `CREATE TABLE leaf_worker_lease (
  worker_id INTEGER NOT NULL PRIMARY KEY, holder VARCHAR(191) NOT NULL, expires_ms BIGINT NOT NULL,
  last_timestamp_ms BIGINT NOT NULL DEFAULT 0, update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  instance VARCHAR(64) NOT NULL DEFAULT '')`); err != nil {
		t.Fatal(err)
	}
	applied, err := migrations.Up(ctx, db, migrations.SQLite)
	if err == nil {
		t.Fatal("Up succeeded adding a column that exists")
	}
	var versions []int64
	for _, a := range applied {
		versions = append(versions, a.Version)
	}
	if !slices.Equal(versions, []int64{1, 2}) || applied[1].Name != "00002_leaf_worker_lease.sql" {
		t.Fatalf("applied %+v, want versions 1 and 2", applied)
	}
}
