package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// handBackStores are the two stores a clean stop hands ids back to.
func handBackStores(t *testing.T) map[string]func(t *testing.T) (env, *store.Store) {
	return map[string]func(t *testing.T) (env, *store.Store){
		"sqlite": func(t *testing.T) (env, *store.Store) {
			path := filepath.Join(t.TempDir(), "leaf.db")
			return env{"LEAF_SQLITE_PATH": path}, storetest.Open(t, store.SQLite, path)
		},
		"mysql": func(t *testing.T) (env, *store.Store) {
			dsn := storetest.MySQL(t)
			return env{"LEAF_MYSQL_DSN": dsn}, storetest.Open(t, store.MySQL, dsn)
		},
	}
}

func takeIDs(t *testing.T, a *testApp, tag string, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		code, body := testkit.MustGet(t, a.base+"/api/segment/get/"+tag)
		id, err := strconv.ParseInt(body, 10, 64)
		if code != 200 || err != nil {
			t.Fatalf("id %d: %d %q", i, code, body)
		}
		ids[i] = id
	}
	return ids
}

// TestCleanStopHandsBackTheTail: an instance stopped cleanly returns the
// ids it never handed out to the row, so the next one continues from
// them; where another instance took a range after its last one, nothing
// is returned and no id repeats.
func TestCleanStopHandsBackTheTail(t *testing.T) {
	for name, open := range handBackStores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e, st := open(t)
			if _, err := st.CreateTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 1000}); err != nil {
				t.Fatal(err)
			}

			a := startApp(t, e, "--snowflake=false")
			if got := takeIDs(t, a, "orders", 5); got[4] != 5 {
				t.Fatalf("first ids %v", got)
			}
			if err := a.stop(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(a.logs.String(), "handed back the unused ids") {
				t.Fatalf("no hand-back logged:\n%s", a.logs.String())
			}
			if row, err := st.Tag(ctx, "orders"); err != nil || row.MaxID != 6 {
				t.Fatalf("row after a clean stop: %+v, %v; want max_id 6", row, err)
			}
			b := startApp(t, e, "--snowflake=false")
			if got := takeIDs(t, b, "orders", 1); got[0] != 6 {
				t.Fatalf("first id after the restart = %d, want 6", got[0])
			}

			// Another instance takes a range after b's last one: b's tail
			// is not the row's any more.
			c := startApp(t, e, "--snowflake=false")
			issued := map[int64]string{}
			record := func(by string, ids []int64) {
				for _, id := range ids {
					if other, dup := issued[id]; dup {
						t.Fatalf("id %d issued by %s and %s", id, other, by)
					}
					issued[id] = by
				}
			}
			record("c", takeIDs(t, c, "orders", 3))
			before, err := st.Tag(ctx, "orders")
			if err != nil {
				t.Fatal(err)
			}
			if err := b.stop(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.logs.String(), "not handed back") {
				t.Fatalf("b did not say it left its ids:\n%s", b.logs.String())
			}
			if after, err := st.Tag(ctx, "orders"); err != nil || after.MaxID != before.MaxID {
				t.Fatalf("row moved by a stop that must not hand back: %d -> %+v, %v", before.MaxID, after, err)
			}
			record("c", takeIDs(t, c, "orders", 3))
			if err := c.stop(); err != nil {
				t.Fatal(err)
			}
			d := startApp(t, e, "--snowflake=false")
			record("d", takeIDs(t, d, "orders", 5))
		})
	}
}

// TestCleanStopHandsBackInASet: with several stores, a clean stop hands the
// unused tail back to the store that gave it, and the next instance
// continues right after the last id issued, from the same store, without
// taking that store for one gone back in time.
func TestCleanStopHandsBackInASet(t *testing.T) {
	inEmptyDir(t)
	s := testStores(t, []string{store.MySQL, store.SQLite, store.SQLite}, 3)
	leafOK(t, storesEnv(s...), "store", "init")
	leafOK(t, storesEnv(s...), "tag", "add", "orders", "--step", "1000")
	for range 2 { // the second time, the marks of the first hand back are in b and c
		a := startApp(t, storesEnv(s...), "--snowflake=false")
		ids := takeIDs(t, a, "orders", 5)
		if err := a.stop(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(a.logs.String(), "handed back the unused ids") {
			t.Fatalf("no hand-back logged:\n%s", a.logs.String())
		}
		b := startApp(t, storesEnv(s...), "--snowflake=false")
		if got := takeIDs(t, b, "orders", 1); got[0] != ids[4]+1 {
			t.Fatalf("first id after the restart = %d, want %d\n%s", got[0], ids[4]+1, b.logs.String())
		}
		if err := b.stop(); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.logs.String(), "went back in time") {
			t.Fatalf("the store was taken for one gone back in time:\n%s", b.logs.String())
		}
	}
}
