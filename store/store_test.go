package store_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/leafid/leaf/internal/tcpproxy"
	"github.com/leafid/leaf/segment"
	"github.com/leafid/leaf/store"
	"github.com/leafid/leaf/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// backend is one database the conformance suite runs against.
type backend struct {
	dialect string
	// fresh returns a new, empty database (DSN or path) for storetest.Open.
	fresh func(testing.TB) string
}

var backends = []backend{
	{store.SQLite, storetest.SQLite},
	{store.MySQL, storetest.MySQL},
}

// each runs fn once per backend, as a subtest named after the dialect.
func each(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.dialect, func(t *testing.T) { fn(t, b) })
	}
}

// open returns n migrated stores on one fresh database of b.
func (b backend) open(t testing.TB, n int) []*store.Store {
	t.Helper()
	dsn := b.fresh(t)
	stores := make([]*store.Store, n)
	for i := range stores {
		stores[i] = storetest.Open(t, b.dialect, dsn)
	}
	return stores
}

func (b backend) store(t testing.TB) *store.Store {
	t.Helper()
	return b.open(t, 1)[0]
}

func createTag(t testing.TB, s *store.Store, name string, maxID, step int64) segment.Tag {
	t.Helper()
	tag, err := s.CreateTag(context.Background(), segment.Tag{Name: name, MaxID: maxID, Step: step})
	if err != nil {
		t.Fatalf("CreateTag(%q): %v", name, err)
	}
	return tag
}

func ptr[T any](v T) *T { return &v }

func TestParseMySQLDSN(t *testing.T) {
	tests := []struct {
		name, dsn string
		wantErr   string // "" for a DSN that parses
	}{
		{"full", "leaf:s3cr3t-pw@tcp(db:3306)/ids?parseTime=true", ""},
		{"no database", "leaf:s3cr3t-pw@tcp(db:3306)/", "names no database"},
		{"no slash", "leaf:s3cr3t-pw@db/ids", "want user:pass@tcp(host:3306)/db"},
		{"bad parameter", "leaf:s3cr3t-pw@tcp(db:3306)/ids?timeout=soon", "want user:pass@tcp(host:3306)/db"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := store.ParseMySQLDSN(tc.dsn)
			if tc.wantErr == "" {
				if err != nil || cfg.User != "leaf" || cfg.Addr != "db:3306" || cfg.DBName != "ids" {
					t.Fatalf("ParseMySQLDSN = %+v, %v", cfg, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseMySQLDSN error = %v, want one saying %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "s3cr3t-pw") {
				t.Fatalf("error reveals the password: %v", err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("mysql dsn password not in errors", func(t *testing.T) {
		_, err := store.OpenMySQL(ctx, "leafuser:s3cr3t-pw@tcp(127.0.0.1:1)/leaf?timeout=1s", store.Options{})
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Fatalf("error reveals the password: %v", err)
		}
	})
	t.Run("mysql bad dsn", func(t *testing.T) {
		if _, err := store.OpenMySQL(ctx, "not a dsn", store.Options{}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("sqlite empty path", func(t *testing.T) {
		if _, err := store.OpenSQLite(ctx, "", store.Options{}); err == nil {
			t.Fatal("no error")
		}
	})
	t.Run("sqlite in memory", func(t *testing.T) {
		s, err := store.OpenSQLite(ctx, ":memory:", store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		createTag(t, s, "m", 1, 5)
		if a, err := s.Allocate(ctx, "m", 0); err != nil || a.MaxID != 6 {
			t.Fatalf("Allocate = %+v, %v", a, err)
		}
	})
}

// TestOpenAllowDown: with AllowDown, a database that does not answer opens
// as a store that is down (its calls fail at once, OnHealth says so), and
// the probe brings it up once the database answers; a database that
// answers with a refusal still fails the open.
func TestOpenAllowDown(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.MySQL(t)
	storetest.Open(t, store.MySQL, dsn) // migrated
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	via := func(addr string) string {
		c := cfg.Clone()
		c.Addr = addr
		return c.FormatDSN()
	}
	t.Run("refused", func(t *testing.T) {
		s, err := store.OpenMySQL(ctx, via("127.0.0.1:1"), store.Options{AllowDown: true})
		if err != nil {
			t.Fatalf("open with AllowDown of a port that refuses = %v", err)
		}
		defer s.Close()
		if h := s.Health(); h.Up || !strings.Contains(h.Err.Error(), "127.0.0.1:1") {
			t.Fatalf("health = %+v, want down", h)
		}
	})
	for _, mode := range []string{"cut", "blackhole"} {
		t.Run(mode, func(t *testing.T) {
			proxy := tcpproxy.Start(t, cfg.Addr)
			if mode == "cut" {
				proxy.Cut()
			} else {
				proxy.Blackhole()
			}
			opts := store.Options{Timeout: 500 * time.Millisecond}
			if _, err := store.OpenMySQL(ctx, via(proxy.Addr()), opts); err == nil {
				t.Fatal("open without AllowDown of a database that does not answer: no error")
			}

			changes := make(chan store.Health, 4)
			opts.AllowDown = true
			opts.OnHealth = func(h store.Health) { changes <- h }
			start := time.Now()
			s, err := store.OpenMySQL(ctx, via(proxy.Addr()), opts)
			if err != nil {
				t.Fatalf("open with AllowDown = %v", err)
			}
			t.Cleanup(func() { s.Close() })
			if took := time.Since(start); took > 2*opts.Timeout {
				t.Errorf("open took %v, want it bounded by the call timeout %v", took, opts.Timeout)
			}
			if h := <-changes; h.Up || h.Err == nil || !strings.Contains(h.Err.Error(), "open mysql") {
				t.Fatalf("first health change = %+v, want down with the open's error", h)
			}
			if h := s.Health(); h.Up {
				t.Fatalf("health = %+v, want down", h)
			}
			begin := time.Now()
			if _, err := s.Tag(ctx, "x"); !errors.Is(err, segment.ErrStoreUnavailable) || time.Since(begin) > 50*time.Millisecond {
				t.Fatalf("a call while down = %v after %v, want ErrStoreUnavailable at once", err, time.Since(begin))
			}

			proxy.Pass()
			select {
			case h := <-changes:
				if !h.Up {
					t.Fatalf("second health change = %+v, want up", h)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the store did not come up once the database answered")
			}
			if _, err := s.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			createTag(t, s, mode, 1, 10)
			if a, err := s.Allocate(ctx, mode, 0); err != nil || a.MaxID != 11 {
				t.Fatalf("Allocate once up = %+v, %v", a, err)
			}
		})
	}
	t.Run("unknown database", func(t *testing.T) {
		c := cfg.Clone()
		c.DBName = "leaf_no_such_database"
		_, err := store.OpenMySQL(ctx, c.FormatDSN(), store.Options{AllowDown: true})
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1049 {
			t.Fatalf("open of a database that does not exist, with AllowDown = %v, want error 1049", err)
		}
	})
}
