package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
	"github.com/leafid/leaf/storeset"
)

// TestStoreNames: every way a store is named for a person (String, Where,
// Describe, Kind, SetKind) names its kind and where it is, the one store
// without a name and a store of a set by its name, and never shows a
// password; a DSN that does not parse is named by its kind alone.
func TestStoreNames(t *testing.T) {
	const dsn = "leaf:s3cret@tcp(db:3306)/ids"
	lone := StoreConfig{MySQLDSN: dsn}
	e := lone.Entries()[0]
	if got := e.Where(nil); got != "mysql leaf@tcp(db:3306)/ids" {
		t.Errorf("Where = %q", got)
	}
	if got := fmt.Sprint(e.Describe()...); !strings.Contains(got, "database") || !strings.Contains(got, "ids") {
		t.Errorf("Describe = %q", got)
	}
	if lone.Kind() != "mysql" || lone.Several() {
		t.Errorf("Kind = %q, Several = %v", lone.Kind(), lone.Several())
	}
	cluster := StoreConfig{MySQLDSN: dsn, MySQLAddrs: []string{"db1:3306", "db2:3306"}, MySQLAddrsGiven: "db1:3306,db2:3306"}
	if got := fmt.Sprint(cluster.Entries()[0].Describe()...); !strings.Contains(got, "db1:3306,db2:3306") {
		t.Errorf("Describe of a cluster = %q, want the nodes as given", got)
	}
	broken := StoreConfig{MySQLDSN: "leaf:s3cret@db:3306/ids"}.Entries()[0]
	if got := broken.Where(nil); got != "mysql" {
		t.Errorf("Where of a DSN that does not parse = %q", got)
	}
	if got := fmt.Sprint(broken.Describe()...); got != fmt.Sprint("store", "mysql") {
		t.Errorf("Describe of a DSN that does not parse = %q", got)
	}

	cfg, err := store.ParseMySQLDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	set := StoreConfig{Set: []StoreEntry{{Name: "a", DSN: dsn, Cfg: cfg}, {Name: "b", Path: "/var/lib/leaf/b.db"}}}
	if got := set.SetKind(); got != "2 stores: a (mysql), b (sqlite)" {
		t.Errorf("SetKind = %q", got)
	}
	if got := (StoreConfig{Set: set.Set[1:]}).SetKind(); got != "1 store: b (sqlite)" {
		t.Errorf("SetKind of one = %q", got)
	}
	for i, want := range []string{`store "a" (mysql leaf@tcp(db:3306)/ids)`, `store "b" (sqlite /var/lib/leaf/b.db)`} {
		if got := set.Entries()[i].Where(nil); got != want {
			t.Errorf("Where = %q, want %q", got, want)
		}
	}
	for i, want := range []string{"a=leaf@tcp(db:3306)/ids", "b=sqlite:/var/lib/leaf/b.db"} {
		if got := set.Entries()[i].String(); got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
	}
	for _, e := range append(set.Entries(), lone.Entries()[0], cluster.Entries()[0]) {
		for _, text := range []string{e.Where(nil), fmt.Sprint(e.Describe()...)} {
			if strings.Contains(text, "s3cret") {
				t.Errorf("%q shows the password", text)
			}
		}
	}
}

// TestServerOnMySQL: a server on a MySQL database migrates it, reports
// it ready, serves every kind of id from it and names its durability on
// the status page; a database that does not exist is named, with the
// statement that creates it, and nothing is created.
func TestServerOnMySQL(t *testing.T) {
	dsn := storetest.MySQL(t)
	ctx := context.Background()
	cfg := testConfig(t)
	cfg.StoreConfig = StoreConfig{MySQLDSN: dsn}
	srv := serving(t, cfg)
	base := "http://" + srv.Addr()
	if code, body := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz = %d %s", code, body)
	}
	admin := func(path, body string) {
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer admin")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s %s = %d", path, body, resp.StatusCode)
		}
	}
	admin("/api/admin/tags", `{"tag":"orders"}`)
	admin("/api/admin/sequences", `{"space":"inbox","sections":2}`)
	for path, want := range map[string]struct {
		code int
		part string
	}{
		"/api/segment/get/orders":        {http.StatusOK, "1"},
		"/api/segment/get/nope":          {http.StatusNotFound, "unknown_tag"},
		"/api/sequence/next/inbox/u42":   {http.StatusOK, "1"},
		"/api/sequence/current/inbox/u1": {http.StatusOK, "0"},
		"/api/snowflake/get":             {http.StatusOK, ""},
		"/api/uuid/get":                  {http.StatusOK, "-7"},
		"/status.json":                   {http.StatusOK, "durab"},
		"/metrics":                       {http.StatusOK, "leaf_store_up 1"},
	} {
		code, body := get(t, base+path)
		if code != want.code || !strings.Contains(body, want.part) {
			t.Errorf("GET %s = %d %s, want %d with %q", path, code, body, want.code, want.part)
		}
	}
	_, body := get(t, base+"/metrics")
	for _, series := range []string{"leaf_store_durable", `leaf_store_restart_jumps_total{store=""} 0`} {
		if !strings.Contains(body, series) {
			t.Errorf("/metrics has no %s", series)
		}
	}
	if len(srv.OpenedStores()) != 1 {
		t.Errorf("OpenedStores = %d, want the one", len(srv.OpenedStores()))
	}

	missing, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	missing.DBName += "_missing"
	cfg = testConfig(t)
	cfg.StoreConfig = StoreConfig{MySQLDSN: missing.FormatDSN()}
	none := New(cfg, slog.New(slog.DiscardHandler))
	err = none.Open(ctx)
	if err == nil || !strings.Contains(err.Error(), "CREATE DATABASE `"+missing.DBName+"` CHARACTER SET utf8mb4") {
		t.Errorf("Open on a database that does not exist = %v, want the statement that creates it", err)
	}
	if err := none.Close(); err != nil {
		t.Errorf("Close after a failed Open = %v", err)
	}
}

// TestServerOnASet: a server on a set of two stores serves a plain tag
// from both, reports every store on /status and /metrics by its name, and
// refuses a store of the set given alone.
func TestServerOnASet(t *testing.T) {
	ctx := context.Background()
	paths := []string{storetest.SQLite(t), storetest.SQLite(t)}
	var named []storeset.Named
	for i, p := range paths {
		named = append(named, storeset.Named{Name: string(rune('a' + i)), Store: storetest.Open(t, store.SQLite, p)})
	}
	if _, err := storeset.Init(ctx, named); err != nil {
		t.Fatal(err)
	}
	for _, n := range named {
		if _, err := n.Store.CreateTag(ctx, segment.Tag{Name: "orders", MaxID: 1, Step: 100}); err != nil {
			t.Fatal(err)
		}
	}

	cfg := testConfig(t)
	cfg.StoreConfig = StoreConfig{Set: []StoreEntry{{Name: "a", Path: paths[0]}, {Name: "b", Path: paths[1]}}}
	srv := serving(t, cfg)
	base := "http://" + srv.Addr()
	seen := map[string]bool{}
	for range 5 {
		code, body := get(t, base+"/api/segment/get/orders")
		if code != http.StatusOK || seen[body] {
			t.Fatalf("GET orders = %d %s (seen before: %v)", code, body, seen[body])
		}
		seen[body] = true
	}
	for path, parts := range map[string][]string{
		"/status.json": {`"a"`, `"b"`},
		"/metrics":     {`leaf_store_up 1`, `store="a"`, `store="b"`},
	} {
		_, body := get(t, base+path)
		for _, p := range parts {
			if !strings.Contains(body, p) {
				t.Errorf("GET %s has no %s", path, p)
			}
		}
	}
	if len(srv.OpenedStores()) != 2 {
		t.Errorf("OpenedStores = %d, want 2", len(srv.OpenedStores()))
	}
	cfg = testConfig(t)
	cfg.StoreConfig = StoreConfig{SQLitePath: paths[1]}
	alone := New(cfg, slog.New(slog.DiscardHandler))
	if err := alone.Open(ctx); !errors.Is(err, storeset.ErrSetMember) {
		t.Errorf("Open on a store of the set alone = %v, want storeset.ErrSetMember", err)
	}
	if err := alone.Close(); err != nil {
		t.Errorf("Close after a refused Open = %v", err)
	}
}

// serving is a server of cfg, open and running until t ends, when it
// stops and closes.
func serving(t *testing.T, cfg Config) *Server {
	t.Helper()
	return servingWith(t, cfg, slog.New(slog.DiscardHandler))
}

// servingWith is serving, logging to log.
func servingWith(t *testing.T, cfg Config, log *slog.Logger) *Server {
	t.Helper()
	srv := New(cfg, log)
	if err := srv.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- srv.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; err != nil {
			t.Errorf("Run = %v", err)
		}
		if err := srv.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
	})
	return srv
}
