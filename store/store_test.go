package store_test

import (
	"context"
	"os"
	"strings"
	"testing"

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
