package readiness_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/leafid/leaf/internal/tcpproxy"
	"github.com/leafid/leaf/readiness"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

// check runs the check named name of s.
func check(t *testing.T, s *readiness.Stores, name string) error {
	t.Helper()
	for _, ch := range s.Checks() {
		if ch.Name == name {
			return readiness.Run(context.Background(), []readiness.Check{ch})[0]
		}
	}
	t.Fatalf("no check %q", name)
	return nil
}

// eventually waits up to 15 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 15s: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSchemaWatched: with Migrate false a store that lacks migrations fails
// the schema check, naming the remedy, until a `leaf migrate` run
// elsewhere migrates it; then the instance is ready without a restart.
func TestSchemaWatched(t *testing.T) {
	ctx := context.Background()
	st, err := store.OpenSQLite(ctx, storetest.SQLite(t), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := readiness.NewStores(readiness.StoresOptions{})
	s.Add("", st)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s.Watch(ctx)
	t.Cleanup(s.Close)
	if err := check(t, s, "schema"); err == nil || errors.Is(err, readiness.ErrDegraded) || !strings.Contains(err.Error(), "leaf migrate") {
		t.Fatalf("schema check of a store not migrated = %v, want a failure naming leaf migrate", err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the schema check passes once migrated", func() bool { return check(t, s, "schema") == nil })
	if err := check(t, s, "store"); err != nil {
		t.Fatalf("store check = %v", err)
	}
}

// TestLateStoreMigrated: a store of a set whose database does not answer
// when it is opened is late: not usable, its check degraded; once it
// answers it is migrated and used.
func TestLateStoreMigrated(t *testing.T) {
	ctx := context.Background()
	_, st, p, s, w := lateStore(t, true)
	if err := check(t, s, "store:a"); w.Usable() || !errors.Is(err, readiness.ErrDegraded) || !strings.Contains(err.Error(), "has not answered since") {
		t.Fatalf("a store down: usable %v, check %v", w.Usable(), err)
	}
	if err := check(t, s, "schema"); err != nil {
		t.Fatalf("schema check while the store is down = %v, want the store check's to report", err)
	}
	p.Pass()
	eventually(t, "the store is migrated once it answers", w.Usable)
	if err := check(t, s, "store:a"); err != nil {
		t.Fatalf("store check once migrated = %v", err)
	}
	if err := st.CheckSchema(ctx); err != nil {
		t.Fatalf("the late store's schema: %v", err)
	}
}

// TestDurabilityRequired: with RequireDurable a store whose settings were
// never read degrades readiness, saying no range is taken from it;
// without, it does not.
func TestDurabilityRequired(t *testing.T) {
	st := storetest.SQLiteStore(t)
	for _, require := range []bool{false, true} {
		s := readiness.NewStores(readiness.StoresOptions{Migrate: true, RequireDurable: require})
		s.Add("", st)
		err := check(t, s, "durability")
		if require != (err != nil) || (err != nil && (!errors.Is(err, readiness.ErrDegraded) || !strings.Contains(err.Error(), "--require-durable"))) {
			t.Errorf("RequireDurable %v: durability check = %v", require, err)
		}
	}
}

// TestLateStoreChecked: with Migrate false, a store of a set that did not
// answer when it was opened is checked once it answers: found without its
// migrations it fails the schema check, naming the remedy, until a
// `leaf migrate` run elsewhere migrates it; then it is used.
func TestLateStoreChecked(t *testing.T) {
	dsn, _, p, s, w := lateStore(t, false)
	if len(s.All()) != 1 || s.All()[0] != w {
		t.Fatalf("All = %v, want the one store added", s.All())
	}
	p.Pass()
	eventually(t, "the schema check fails once the store answers without its migrations", func() bool {
		err := check(t, s, "schema")
		return err != nil && strings.Contains(err.Error(), "leaf migrate") && strings.Contains(err.Error(), `"a"`)
	})
	if w.Usable() {
		t.Fatal("a store without its migrations is usable")
	}
	storetest.Open(t, store.MySQL, dsn) // migrates, as `leaf migrate` would
	eventually(t, "the store is used once migrated elsewhere", func() bool { return w.Usable() && check(t, s, "schema") == nil })
}

// lateStore is store "a" of a set on a fresh MySQL database that did not
// answer when it was opened, behind p, cut, in s, whose watch runs until
// t ends; with migrate, s migrates it once it answers.
func lateStore(t *testing.T, migrate bool) (dsn string, st *store.Store, p *tcpproxy.Proxy, s *readiness.Stores, w *readiness.Store) {
	t.Helper()
	ctx := context.Background()
	dsn = storetest.MySQL(t)
	cfg, err := store.ParseMySQLDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p = tcpproxy.Start(t, cfg.Addr)
	p.Cut()
	cfg.Addr = p.Addr()
	st, err = store.OpenMySQL(ctx, cfg.FormatDSN(), store.Options{Timeout: time.Second, AllowDown: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s = readiness.NewStores(readiness.StoresOptions{Migrate: migrate})
	w = s.Add("a", st)
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate with a late store = %v, want it left for later", err)
	}
	s.Watch(ctx)
	t.Cleanup(s.Close)
	return dsn, st, p, s, w
}
